// SPDX-License-Identifier: MIT
/*
 * Every field of the CPython offset tables (pyoffsets.h) against the DWARF
 * of the interpreter it describes, found by struct and member name with
 * libdw: Debian's /usr/bin/python3.11 through python3.11-dbg's debug file
 * (required), the glibc fields through libc6-dbg's (required), and any
 * 3.12 / 3.13 interpreter with DWARF on the machine (checked when found).
 * The version of each binary comes from pyversion_detect(), which is
 * checked here too. No expected number is written in this file.
 */
#include <dirent.h>
#include <elf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stddef.h>
#include <unistd.h>

#include "model/elfread.h"
#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyversion.h"
#include "testlib.h"

#define PY311 "/usr/bin/python3.11"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ---- a few DWARF queries ---------------------------------------------- */

struct dw {
	int fd;
	Dwarf *dbg;
	struct {
		char name[64];
		Dwarf_Die die;
		int found;
	} cache[64];
	int ncache;
};

static int dw_open(struct dw *d, const char *path)
{
	memset(d, 0, sizeof(*d));
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	d->dbg = dwarf_begin(d->fd, DWARF_C_READ);
	if (!d->dbg) {
		close(d->fd);
		return -EINVAL;
	}
	return 0;
}

static void dw_close(struct dw *d)
{
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->fd >= 0)
		close(d->fd);
	d->dbg = NULL;
	d->fd = -1;
}

/* Through typedefs and qualifiers to the type itself. */
static int strip_type(Dwarf_Die *die)
{
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(die);
		Dwarf_Attribute a;

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type)
			return 0;
		if (!dwarf_attr(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
			return -ENOENT;
	}
	return -ELOOP;
}

/* A complete struct (or union) named `name` (its tag or a typedef's). */
static int dw_type(struct dw *d, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	for (int i = 0; i < d->ncache; i++) {
		if (strcmp(d->cache[i].name, name) == 0) {
			*out = d->cache[i].die;
			return d->cache[i].found ? 0 : -ENOENT;
		}
	}
	int found = 0;
	while (!found && dwarf_nextcu(d->dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(d->dbg, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				int tag = dwarf_tag(&child);
				const char *n = dwarf_diename(&child);
				Dwarf_Die t = child;

				if ((tag != DW_TAG_typedef && tag != DW_TAG_structure_type &&
				     tag != DW_TAG_union_type) || !n || strcmp(n, name) != 0)
					continue;
				if (strip_type(&t) < 0 || dwarf_hasattr(&t, DW_AT_declaration) ||
				    !dwarf_haschildren(&t))
					continue;
				*out = t;
				found = 1;
				break;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	if (d->ncache < (int)(sizeof(d->cache) / sizeof(d->cache[0]))) {
		snprintf(d->cache[d->ncache].name, sizeof(d->cache[0].name), "%s", name);
		d->cache[d->ncache].die = *out;
		d->cache[d->ncache++].found = found;
	}
	return found ? 0 : -ENOENT;
}

static int dw_sizeof(struct dw *d, const char *type, uint64_t *out)
{
	Dwarf_Die t;
	Dwarf_Word sz;

	if (dw_type(d, type, &t) < 0 || dwarf_aggregate_size(&t, &sz) != 0)
		return -ENOENT;
	*out = sz;
	return 0;
}

/* The member `name` of struct `s`, searching anonymous members too; its
 * byte offset from the start of s. */
static int member(Dwarf_Die *s, const char *name, Dwarf_Die *out, uint64_t *off)
{
	Dwarf_Die m;

	if (dwarf_child(s, &m) != 0)
		return -ENOENT;
	do {
		Dwarf_Attribute a;
		Dwarf_Word loc = 0;
		const char *n;

		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (dwarf_attr(&m, DW_AT_data_member_location, &a) &&
		    dwarf_formudata(&a, &loc) != 0)
			continue;
		n = dwarf_diename(&m);
		if (n && strcmp(n, name) == 0) {
			*out = m;
			*off = loc;
			return 0;
		}
		if (!n) { /* anonymous struct/union member */
			Dwarf_Die t;
			uint64_t inner;

			if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
			    strip_type(&t) < 0)
				continue;
			if (member(&t, name, out, &inner) == 0) {
				*off = loc + inner;
				return 0;
			}
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return -ENOENT;
}

/* "a.b.c" in `type`: byte offset, and (bits) the bit offset of a
 * bit-field last member from the start of `type`. */
static int dw_path(struct dw *d, const char *type, const char *path,
		   uint64_t *byte_off, uint64_t *bit_off, Dwarf_Die *last)
{
	Dwarf_Die s, m;
	char buf[128], *save = NULL;
	uint64_t total = 0, off = 0;

	if (dw_type(d, type, &s) < 0)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
		Dwarf_Attribute a;

		if (member(&s, p, &m, &off) < 0)
			return -ENOENT;
		total += off;
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &s) ||
		    strip_type(&s) < 0)
			return -ENOENT;
	}
	*byte_off = total;
	if (bit_off) {
		Dwarf_Attribute a;
		Dwarf_Word v;

		/* DWARF 5 bit-fields: DW_AT_data_bit_offset, from the start of
		 * the struct holding the member (the last one's own location, if
		 * any, is not added again) */
		if (!dwarf_attr(&m, DW_AT_data_bit_offset, &a) || dwarf_formudata(&a, &v) != 0)
			return -ENOENT;
		*bit_off = (total - off) * 8 + v;
	}
	if (last)
		*last = s;
	return 0;
}

static int dw_enumerator(struct dw *d, const char *name, int64_t *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(d->dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child, e;

		if (dwarf_offdie(d->dbg, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				if (dwarf_tag(&child) != DW_TAG_enumeration_type ||
				    dwarf_child(&child, &e) != 0)
					continue;
				do {
					const char *n = dwarf_diename(&e);
					Dwarf_Attribute a;
					Dwarf_Sword v;

					if (n && strcmp(n, name) == 0 &&
					    dwarf_attr(&e, DW_AT_const_value, &a) &&
					    dwarf_formsdata(&a, &v) == 0) {
						*out = v;
						return 0;
					}
				} while (dwarf_siblingof(&e, &e) == 0);
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return -ENOENT;
}

static int dw_array_len(struct dw *d, const char *type, const char *path, uint64_t *out)
{
	Dwarf_Die t, sub;
	uint64_t off;
	Dwarf_Attribute a;
	Dwarf_Word n;

	if (dw_path(d, type, path, &off, NULL, &t) < 0 || dwarf_tag(&t) != DW_TAG_array_type ||
	    dwarf_child(&t, &sub) != 0)
		return -ENOENT;
	if (dwarf_attr(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &n) == 0) {
		*out = n;
		return 0;
	}
	if (dwarf_attr(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &n) == 0) {
		*out = n + 1;
		return 0;
	}
	return -ENOENT;
}

/* ---- the checks ------------------------------------------------------- */

enum kind { OFF, SIZE, BIT, ENUM, ALEN };

struct spec {
	unsigned field; /* offsetof(struct pyoffsets, X) */
	enum kind kind;
	const char *type, *path; /* ENUM: path is the enumerator */
	const char *base;	 /* BIT: the member holding the word */
};

#define F(x) offsetof(struct pyoffsets, x)

/* Members whose names change between versions come from small lists. */
static int fill_python_specs(int minor, struct spec *s)
{
	int n = 0;
	const char *rt = minor == 11 ? "gilstate.autoTSSkey" : "autoTSSkey";
	static char tss_init[64], tss_key[64];

	snprintf(tss_init, sizeof(tss_init), "%s._is_initialized", rt);
	snprintf(tss_key, sizeof(tss_key), "%s._key", rt);
	s[n++] = (struct spec){ F(rt_tss_initialized), OFF, "_PyRuntimeState", tss_init, 0 };
	s[n++] = (struct spec){ F(rt_tss_key), OFF, "_PyRuntimeState", tss_key, 0 };
	s[n++] = (struct spec){ F(rt_interp_head), OFF, "_PyRuntimeState", "interpreters.head", 0 };
	s[n++] = (struct spec){ F(interp_threads_head), OFF, "PyInterpreterState", "threads.head", 0 };
	s[n++] = (struct spec){ F(ts_next), OFF, "PyThreadState", "next", 0 };
	s[n++] = (struct spec){ F(ts_native_thread_id), OFF, "PyThreadState", "native_thread_id", 0 };
	s[n++] = (struct spec){ F(ts_frame), OFF, "PyThreadState",
				minor <= 12 ? "cframe" : "current_frame", 0 };
	s[n++] = (struct spec){ F(cframe_current_frame), OFF, "_PyCFrame", "current_frame", 0 };
	s[n++] = (struct spec){ F(frame_code), OFF, "_PyInterpreterFrame",
				minor <= 12 ? "f_code" : "f_executable", 0 };
	s[n++] = (struct spec){ F(frame_previous), OFF, "_PyInterpreterFrame", "previous", 0 };
	s[n++] = (struct spec){ F(frame_instr), OFF, "_PyInterpreterFrame",
				minor <= 12 ? "prev_instr" : "instr_ptr", 0 };
	s[n++] = (struct spec){ F(frame_is_entry), OFF, "_PyInterpreterFrame", "is_entry", 0 };
	s[n++] = (struct spec){ F(frame_owner), OFF, "_PyInterpreterFrame", "owner", 0 };
	s[n++] = (struct spec){ F(frame_owner_cstack), ENUM, NULL, "FRAME_OWNED_BY_CSTACK", 0 };
	s[n++] = (struct spec){ F(code_adaptive), OFF, "PyCodeObject", "co_code_adaptive", 0 };
	s[n++] = (struct spec){ F(code_qualname), OFF, "PyCodeObject", "co_qualname", 0 };
	s[n++] = (struct spec){ F(code_name), OFF, "PyCodeObject", "co_name", 0 };
	s[n++] = (struct spec){ F(code_filename), OFF, "PyCodeObject", "co_filename", 0 };
	s[n++] = (struct spec){ F(code_firstlineno), OFF, "PyCodeObject", "co_firstlineno", 0 };
	s[n++] = (struct spec){ F(code_linetable), OFF, "PyCodeObject", "co_linetable", 0 };
	s[n++] = (struct spec){ F(obj_type), OFF, "PyObject", "ob_type", 0 };
	s[n++] = (struct spec){ F(var_size), OFF, "PyVarObject", "ob_size", 0 };
	s[n++] = (struct spec){ F(unicode_length), OFF, "PyASCIIObject", "length", 0 };
	s[n++] = (struct spec){ F(unicode_state), OFF, "PyASCIIObject", "state", 0 };
	s[n++] = (struct spec){ F(unicode_kind_shift), BIT, "PyASCIIObject", "state.kind", "state" };
	s[n++] = (struct spec){ F(unicode_compact_bit), BIT, "PyASCIIObject", "state.compact", "state" };
	s[n++] = (struct spec){ F(unicode_ascii_bit), BIT, "PyASCIIObject", "state.ascii", "state" };
	s[n++] = (struct spec){ F(unicode_ascii_data), SIZE, "PyASCIIObject", NULL, 0 };
	s[n++] = (struct spec){ F(unicode_compact_data), SIZE, "PyCompactUnicodeObject", NULL, 0 };
	s[n++] = (struct spec){ F(unicode_utf8_length), OFF, "PyCompactUnicodeObject", "utf8_length", 0 };
	s[n++] = (struct spec){ F(unicode_utf8), OFF, "PyCompactUnicodeObject", "utf8", 0 };
	s[n++] = (struct spec){ F(bytes_sval), OFF, "PyBytesObject", "ob_sval", 0 };
	return n;
}

static int fill_glibc_specs(struct spec *s)
{
	int n = 0;

	s[n++] = (struct spec){ F(glibc_specific_1stblock), OFF, "pthread", "specific_1stblock", 0 };
	s[n++] = (struct spec){ F(glibc_specific), OFF, "pthread", "specific", 0 };
	s[n++] = (struct spec){ F(glibc_key_data_size), SIZE, "pthread_key_data", NULL, 0 };
	s[n++] = (struct spec){ F(glibc_key_data_data), OFF, "pthread_key_data", "data", 0 };
	s[n++] = (struct spec){ F(glibc_key_2ndlevel_size), ALEN, "pthread", "specific_1stblock", 0 };
	return n;
}

static uint32_t field_of(const struct pyoffsets *o, unsigned off)
{
	uint32_t v;

	memcpy(&v, (const char *)o + off, sizeof(v));
	return v;
}

/* Checks specs against d; "" or the first mismatch in why. Marks covered. */
static int check_specs(struct dw *d, const struct pyoffsets *o, const struct spec *s,
		       int n, uint8_t *covered, char *why, size_t why_len)
{
	for (int i = 0; i < n; i++) {
		uint32_t have = field_of(o, s[i].field);
		uint64_t want = 0, bo = 0, base = 0;
		int64_t ev = 0;
		int r;

		covered[s[i].field / 4] = 1;
		switch (s[i].kind) {
		case OFF: r = dw_path(d, s[i].type, s[i].path, &want, NULL, NULL); break;
		case SIZE: r = dw_sizeof(d, s[i].type, &want); break;
		case ALEN: r = dw_array_len(d, s[i].type, s[i].path, &want); break;
		case ENUM:
			r = dw_enumerator(d, s[i].path, &ev);
			want = (uint64_t)ev;
			break;
		case BIT:
			r = dw_path(d, s[i].type, s[i].path, &want, &bo, NULL);
			if (r == 0)
				r = dw_path(d, s[i].type, s[i].base, &base, NULL, NULL);
			want = bo - base * 8;
			break;
		default: r = -EINVAL;
		}
		if (r < 0 && have == PYOFF_NONE)
			continue; /* absent in this version, as the table says */
		if (r < 0) {
			snprintf(why, why_len, "%s%s%s: not in the DWARF, table says 0x%x",
				 s[i].type ? s[i].type : "", s[i].type ? "." : "",
				 s[i].path ? s[i].path : "(sizeof)", have);
			return -1;
		}
		if (have != want) {
			snprintf(why, why_len, "%s%s%s: DWARF says 0x%llx, table says 0x%x",
				 s[i].type ? s[i].type : "", s[i].type ? "." : "",
				 s[i].path ? s[i].path : "(sizeof)",
				 (unsigned long long)want, have);
			return -1;
		}
	}
	return 0;
}

/* The debug file of `bin`: itself with .debug_info, or by build-id. */
static int debug_file_of(const char *bin, char *out, size_t len)
{
	struct elfread *e = elfread__open(bin);
	struct elfread_section sec;
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	size_t n = 0;
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	int ret = -ENOENT;

	if (!e)
		return -errno;
	if (elfread__section(e, ".debug_info", &sec) == 0 && sec.size > 0) {
		snprintf(out, len, "%s", bin);
		ret = 0;
	} else if (elfread__build_id(e, id, &n) == 0 && n >= 2) {
		elfread__hex(id, n, hex);
		snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		ret = access(out, R_OK) == 0 ? 0 : -ENOENT;
	}
	elfread__free(e);
	return ret;
}

static int detect(const char *bin, struct pyversion_info *v)
{
	struct elfread *e = elfread__open(bin);
	int r;

	if (!e)
		return -errno;
	r = pyversion_detect(e, bin, v);
	elfread__free(e);
	return r;
}

TEST(python311_offsets_match_python3_11_dbg_dwarf)
{
	struct pyversion_info v;
	struct spec s[64];
	uint8_t covered[sizeof(struct pyoffsets) / 4] = { 0 };
	char dbg[512], why[256];
	struct dw d;
	int n;

	if (access(PY311, X_OK) != 0)
		TEST__FAIL("%s missing: run 'make deps' (python3.11)", PY311);
	CHECK_MSG(debug_file_of(PY311, dbg, sizeof(dbg)) == 0,
		  "no DWARF for %s: run 'make deps' (python3.11-dbg)", PY311);
	CHECK_INT(detect(PY311, &v), 0);
	CHECK_INT(v.major, 3);
	CHECK_INT(v.minor, 11);
	CHECK(v.flags & PYVERSION_F_PY_VERSION);
	CHECK(v.offsets != NULL);
	CHECK(v.runtime_addr != 0);
	CHECK_INT(dw_open(&d, dbg), 0);
	n = fill_python_specs(11, s);
	n += fill_glibc_specs(s + n); /* mark covered; checked on libc below */
	int r = check_specs(&d, v.offsets, s, n - 5, covered, why, sizeof(why));
	/* the flags say which layout: _PyCFrame and is_entry exist in 3.11 */
	uint64_t o;
	int has_cframe = dw_path(&d, "PyThreadState", "cframe", &o, NULL, NULL) == 0;
	int has_entry = dw_path(&d, "_PyInterpreterFrame", "is_entry", &o, NULL, NULL) == 0;
	dw_close(&d);
	CHECK_MSG(r == 0, "%s", why);
	CHECK_INT(!!(v.offsets->flags & PYOFF_F_CFRAME), has_cframe);
	CHECK_INT(!!(v.offsets->flags & PYOFF_F_IS_ENTRY), has_entry);
	for (int i = 0; i < n; i++)
		covered[s[i].field / 4] = 1;
	covered[offsetof(struct pyoffsets, major) / 4] = 1;
	covered[offsetof(struct pyoffsets, minor) / 4] = 1;
	covered[offsetof(struct pyoffsets, flags) / 4] = 1;
	for (unsigned i = 0; i < sizeof(covered); i++)
		CHECK_MSG(covered[i], "struct pyoffsets field at 0x%x has no DWARF check", i * 4);
}

TEST(glibc_pthread_offsets_match_libc6_dbg_dwarf)
{
	const struct pyoffsets *o;
	struct spec s[8];
	uint8_t covered[sizeof(struct pyoffsets) / 4];
	char dbg[512], why[256];
	struct dw d;

	CHECK_MSG(debug_file_of(LIBC, dbg, sizeof(dbg)) == 0,
		  "no DWARF for %s: run 'make deps' (libc6-dbg)", LIBC);
	CHECK_INT(dw_open(&d, dbg), 0);
	int n = fill_glibc_specs(s);
	int bad = 0;
	/* the same glibc fields in every table */
	for (int minor = 11; minor <= 13 && !bad; minor++) {
		CHECK_INT(pyoffsets_for_version(3, minor, &o), 0);
		bad = check_specs(&d, o, s, n, covered, why, sizeof(why));
	}
	dw_close(&d);
	CHECK_MSG(!bad, "%s", why);
}

/* 3.12 and 3.13: any such interpreter with DWARF (pyenv's builds keep it). */
static void check_other_version(int minor)
{
	static const char *const patterns[] = {
		"/usr/lib/x86_64-linux-gnu/libpython3.%d.so.1.0",
		"/usr/bin/python3.%d",
		"/usr/bin/python3.%dd", /* Debian's debug build (python3.X-dbg) */
		"/usr/local/lib/libpython3.%d.so.1.0",
		"/root/.pyenv/versions/3.%d.*/lib/libpython3.%d.so.1.0",
	};
	int checked = 0;

	for (unsigned p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
		char pat[256], dbg[512], why[256];
		glob_t g;

		snprintf(pat, sizeof(pat), patterns[p], minor, minor);
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct pyversion_info v;
			struct spec s[64];
			uint8_t covered[sizeof(struct pyoffsets) / 4];
			struct dw d;

			if (debug_file_of(g.gl_pathv[i], dbg, sizeof(dbg)) < 0)
				continue;
			int r = detect(g.gl_pathv[i], &v);
			if (r != 0 || (int)v.minor != minor) {
				globfree(&g);
				TEST__FAIL("%s: pyversion_detect %d, minor %u", g.gl_pathv[i], r, v.minor);
			}
			if (dw_open(&d, dbg) < 0)
				continue;
			int n = fill_python_specs(minor, s);
			r = check_specs(&d, v.offsets, s, n, covered, why, sizeof(why));
			uint64_t o;
			int has_cframe = dw_path(&d, "PyThreadState", "cframe", &o, NULL, NULL) == 0;
			dw_close(&d);
			if (r < 0) {
				char msg[120];
				snprintf(msg, sizeof(msg), "%.100s", g.gl_pathv[i]);
				globfree(&g);
				TEST__FAIL("%s: %.200s", msg, why);
			}
			if (has_cframe != !!(v.offsets->flags & PYOFF_F_CFRAME)) {
				globfree(&g);
				TEST__FAIL("3.%d: PYOFF_F_CFRAME disagrees with the DWARF", minor);
			}
			checked++;
		}
		globfree(&g);
	}
	if (!checked)
		SKIP("no CPython 3.%d with DWARF on this machine", minor);
}

/* 3.11 again: Debian's debug build python3.11d shares the layouts */
TEST(python311_every_build_with_dwarf_matches) { check_other_version(11); }
TEST(python312_offsets_match_dwarf_when_present) { check_other_version(12); }
TEST(python313_offsets_match_dwarf_when_present) { check_other_version(13); }

TEST(pyversion_says_not_cpython_for_other_binaries)
{
	struct pyversion_info v;

	CHECK_INT(detect(LIBC, &v), -ENOENT);
	CHECK_INT(detect("/bin/sh", &v), -ENOENT);
}

TEST(pyversion_reports_unsupported_versions)
{
	const struct pyoffsets *o = (const void *)1;

	CHECK_INT(pyoffsets_for_version(3, 10, &o), -EPROTONOSUPPORT);
	CHECK(o == NULL);
	CHECK_INT(pyoffsets_for_version(2, 7, &o), -EPROTONOSUPPORT);
	CHECK_INT(pyoffsets_for_version(3, 99, &o), -EPROTONOSUPPORT);

	/* an older CPython (no Py_Version): the version from the file name */
	glob_t g;
	if (glob("/root/.pyenv/versions/3.10.*/lib/libpython3.10.so.1.0", 0, NULL, &g) != 0)
		SKIP("no CPython 3.10 to try");
	struct pyversion_info v;
	int r = detect(g.gl_pathv[0], &v);
	globfree(&g);
	CHECK_INT(r, -EPROTONOSUPPORT);
	CHECK_INT(v.major, 3);
	CHECK_INT(v.minor, 10);
	CHECK(v.flags & PYVERSION_F_NAME);
	CHECK(v.offsets == NULL);
	char buf[64];
	CHECK_STR(pyversion_describe(&v, r, buf, sizeof(buf)), "CPython 3.10");
}

/* A made-up "interpreter": the symbols pyversion looks for, and a
 * _Py_tss_tstate among other TLS with a large alignment. It prints where
 * its thread finds the variable, from the thread pointer (%fs:0). */
static const char fake_py_c[] =
	"#include <stdio.h>\n"
	"__thread int pad1[3] = {1, 2, 3};\n"
	"__thread __attribute__((aligned(64))) char pad2[100];\n"
	"static __thread void *_Py_tss_tstate;\n"
	"char _PyRuntime[64];\n"
	"const unsigned long Py_Version = 0x030c01f0; /* 3.12.1 final */\n"
	"int main(void)\n"
	"{\n"
	"  char *tp;\n"
	"  __asm__(\"mov %%fs:0, %0\" : \"=r\"(tp));\n"
	"  _Py_tss_tstate = pad2;\n"
	"  printf(\"%ld\\n\", (long)((char *)&_Py_tss_tstate - tp));\n"
	"  return pad1[0] - 1;\n"
	"}\n";

static int tls_case(const char *dir, const char *cflags, int64_t *want, struct pyversion_info *v)
{
	char cmd[1024], bin[300];
	FILE *p;
	long off;
	int r;

	snprintf(bin, sizeof(bin), "%s/fake%s", dir, cflags[0] ? "-nopie" : "");
	snprintf(cmd, sizeof(cmd), "gcc -O1 %s -o %s %s/fake_py.c", cflags, bin, dir);
	if (system(cmd) != 0)
		return -EIO;
	p = popen(bin, "r");
	if (!p)
		return -EIO;
	r = fscanf(p, "%ld", &off);
	pclose(p);
	if (r != 1)
		return -EIO;
	*want = off;
	return detect(bin, v);
}

TEST(pyversion_tls_offset_of_an_executable_is_where_its_thread_finds_it)
{
	char dir[] = "/tmp/sfprof-pyver-XXXXXX", path[300], cmd[400];
	struct pyversion_info v;
	int64_t want = 0;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fake_py.c", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(fake_py_c, f);
	fclose(f);
	static const char *const flags[] = { "", "-fno-pie -no-pie" };
	int bad = 0;
	for (unsigned i = 0; i < 2 && !bad; i++) {
		int r = tls_case(dir, flags[i], &want, &v);
		if (r != 0 || v.minor != 12 || v.micro != 1 || !(v.flags & PYVERSION_F_TLS_STATIC) ||
		    v.tls_tp_offset != want || v.tls_align != 64) {
			fprintf(stderr, "%s: detect %d, 3.%u.%u, flags 0x%x, tls_tp_offset %lld, want %lld, align %llu\n",
				flags[i], r, v.minor, v.micro, v.flags, (long long)v.tls_tp_offset,
				(long long)want, (unsigned long long)v.tls_align);
			bad = 1;
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	CHECK_MSG(!bad, "the TLS offset disagrees with the thread's (stderr)");
	CHECK(v.offsets != NULL);
	CHECK_INT(v.hexversion, 0x030c01f0);
}

TEST_MAIN()
