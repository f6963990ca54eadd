// SPDX-License-Identifier: MIT
/* Is an ELF image CPython, which version (src/runtimes/python/pyversion.h). */
#include "runtimes/python/pyversion.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "model/elfread.h"
#include "runtimes/python/pyoffsets.h"

enum want_sym {
	SYM_RUNTIME,
	SYM_PY_VERSION,
	SYM_TSS_TSTATE,
	SYM_CODE_TYPE,
	SYM_UNICODE_TYPE,
	SYM_BYTES_TYPE,
	SYM__COUNT,
};

static const char *const want_names[SYM__COUNT] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_PY_VERSION] = "Py_Version",
	[SYM_TSS_TSTATE] = "_Py_tss_tstate",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_UNICODE_TYPE] = "PyUnicode_Type",
	[SYM_BYTES_TYPE] = "PyBytes_Type",
};

struct sym_search {
	struct elfread_sym found[SYM__COUNT];
	unsigned have; /* bit per enum want_sym */
};

static int collect_sym(void *ctx, const struct elfread_sym *sym)
{
	struct sym_search *s = ctx;

	if (sym->shndx == SHN_UNDEF || !sym->name[0])
		return 0;
	for (unsigned i = 0; i < SYM__COUNT; i++) {
		if (s->have & (1u << i) || strcmp(sym->name, want_names[i]) != 0)
			continue;
		/* _Py_tss_tstate is only useful as TLS; the rest are data */
		if ((i == SYM_TSS_TSTATE) != (sym->type == STT_TLS))
			continue;
		s->found[i] = *sym;
		s->have |= 1u << i;
	}
	return 0;
}

/* Bytes of [vaddr, vaddr + len) from the file, when a PT_LOAD holds them. */
static int read_vaddr(const struct elfread *e, uint64_t vaddr, void *buf,
		      size_t len)
{
	size_t img_len;
	const uint8_t *img = elfread__image(e, &img_len);

	for (size_t i = 0; i < elfread__nr_loads(e); i++) {
		struct elfread_load l;

		if (elfread__load(e, i, &l) < 0)
			continue;
		if (vaddr < l.vaddr || vaddr - l.vaddr >= l.filesz ||
		    len > l.filesz - (vaddr - l.vaddr))
			continue;
		uint64_t off = l.offset + (vaddr - l.vaddr);
		if (off < l.offset || off > img_len || len > img_len - off)
			return -EINVAL;
		memcpy(buf, img + off, len);
		return 0;
	}
	return -ENOENT;
}

int pyversion_name_is_python(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	if (!path)
		return 0;
	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

/* "python3.11", "libpython3.12d.so.1.0": 0 and major/minor, else -ENOENT. */
static int version_from_name(const char *name, uint32_t *major,
			     uint32_t *minor)
{
	const char *base = name ? strrchr(name, '/') : NULL;

	if (!name)
		return -ENOENT;
	base = base ? base + 1 : name;
	for (const char *p = strstr(base, "python"); p; p = strstr(p + 1, "python")) {
		const char *q = p + 6;
		unsigned maj = 0, min = 0, nd = 0;

		while (*q >= '0' && *q <= '9' && nd < 3)
			maj = maj * 10 + (unsigned)(*q++ - '0'), nd++;
		if (nd == 0 || *q != '.')
			continue;
		q++, nd = 0;
		while (*q >= '0' && *q <= '9' && nd < 3)
			min = min * 10 + (unsigned)(*q++ - '0'), nd++;
		if (nd == 0 || (*q >= '0' && *q <= '9'))
			continue;
		*major = maj, *minor = min;
		return 0;
	}
	return -ENOENT;
}

/* DT_SONAME, or NULL. The string lies inside its (checked) section. */
static const char *soname(const struct elfread *e)
{
	struct elfread_section dyn, str;

	if (!elfread__is_64(e))
		return NULL;
	for (size_t i = 0; i < elfread__nr_sections(e); i++) {
		if (elfread__section_header_at(e, i, &dyn) < 0 || dyn.type != SHT_DYNAMIC ||
		    elfread__section_at(e, i, &dyn) < 0 || !dyn.data)
			continue;
		if (elfread__section_at(e, dyn.link, &str) < 0 || !str.data ||
		    str.type != SHT_STRTAB)
			return NULL;
		for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= dyn.size; o += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;

			memcpy(&d, dyn.data + o, sizeof(d));
			if (d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_SONAME || d.d_un.d_val >= str.size)
				continue;
			const char *s = (const char *)str.data + d.d_un.d_val;
			if (!memchr(s, 0, str.size - d.d_un.d_val))
				return NULL;
			return s;
		}
		return NULL;
	}
	return NULL;
}

static int find_tls_segment(const struct elfread *e, uint64_t *memsz,
			    uint64_t *align)
{
	Elf *elf = elfread__libelf(e);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		*memsz = ph.p_memsz;
		*align = ph.p_align ? ph.p_align : 1;
		return 0;
	}
	return -ENOENT;
}

int pyversion_detect(const struct elfread *e, const char *path,
		     struct pyversion_info *out)
{
	struct sym_search s;
	int ret;

	if (!e || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	elfread__for_each_symbol(e, SHT_DYNSYM, collect_sym, &s);
	if ((s.have & ((1u << SYM__COUNT) - 1)) != (1u << SYM__COUNT) - 1)
		elfread__for_each_symbol(e, SHT_SYMTAB, collect_sym, &s);
	if (!(s.have & (1u << SYM_RUNTIME)))
		return -ENOENT;

	out->runtime_addr = s.found[SYM_RUNTIME].value;
	out->runtime_size = s.found[SYM_RUNTIME].size;
	if (elfread__is_executable(e))
		out->flags |= PYVERSION_F_EXECUTABLE;
	if (s.have & (1u << SYM_CODE_TYPE))
		out->code_type_addr = s.found[SYM_CODE_TYPE].value;
	if (s.have & (1u << SYM_UNICODE_TYPE))
		out->unicode_type_addr = s.found[SYM_UNICODE_TYPE].value;
	if (s.have & (1u << SYM_BYTES_TYPE))
		out->bytes_type_addr = s.found[SYM_BYTES_TYPE].value;

	/* Py_Version: an unsigned long holding PY_VERSION_HEX, 3.11+ */
	if (s.have & (1u << SYM_PY_VERSION) && s.found[SYM_PY_VERSION].size >= 4 &&
	    s.found[SYM_PY_VERSION].size <= 8 && elfread__is_64(e)) {
		uint8_t b[8] = { 0 };
		uint64_t v = 0;

		if (read_vaddr(e, s.found[SYM_PY_VERSION].value, b,
			       s.found[SYM_PY_VERSION].size) == 0) {
			for (int i = 7; i >= 0; i--) /* little-endian (x86_64) */
				v = v << 8 | b[i];
			/* PY_VERSION_HEX: major 3, a sane minor, level a..f */
			if (v >> 24 == 3 && ((v >> 16) & 0xff) < 100 &&
			    ((v >> 4) & 0xf) >= 0xa && ((v >> 4) & 0xf) <= 0xf) {
				out->hexversion = (uint32_t)v;
				out->major = 3;
				out->minor = (v >> 16) & 0xff;
				out->micro = (v >> 8) & 0xff;
				out->flags |= PYVERSION_F_PY_VERSION;
			}
		}
	}
	if (!(out->flags & PYVERSION_F_PY_VERSION)) {
		uint32_t maj, min;

		if (version_from_name(soname(e), &maj, &min) == 0 ||
		    version_from_name(path, &maj, &min) == 0) {
			out->major = maj, out->minor = min;
			out->flags |= PYVERSION_F_NAME;
		}
	}

	if (s.have & (1u << SYM_TSS_TSTATE) &&
	    find_tls_segment(e, &out->tls_memsz, &out->tls_align) == 0 &&
	    s.found[SYM_TSS_TSTATE].value < out->tls_memsz &&
	    out->tls_memsz - s.found[SYM_TSS_TSTATE].value >= 8 &&
	    out->tls_memsz < (1ull << 32) && out->tls_align < (1ull << 32) &&
	    !(out->tls_align & (out->tls_align - 1))) {
		out->tss_tstate_tls = s.found[SYM_TSS_TSTATE].value;
		out->flags |= PYVERSION_F_TLS;
		if (out->flags & PYVERSION_F_EXECUTABLE) {
			/* x86_64 TLS variant II: the executable's block ends
			 * at the thread pointer, its start aligned */
			uint64_t blk = (out->tls_memsz + out->tls_align - 1) &
				       ~(out->tls_align - 1);
			out->tls_tp_offset = -(int64_t)blk + (int64_t)out->tss_tstate_tls;
			out->flags |= PYVERSION_F_TLS_STATIC;
		}
	}

	if (!(out->flags & (PYVERSION_F_PY_VERSION | PYVERSION_F_NAME)))
		return -EPROTONOSUPPORT; /* CPython, version unknown */
	ret = pyoffsets_for_version((int)out->major, (int)out->minor, &out->offsets);
	return ret;
}

char *pyversion_describe(const struct pyversion_info *v, int ret, char *buf,
			 unsigned len)
{
	if (!len)
		return buf;
	if (ret == -ENOENT || ret == -EINVAL || !v)
		snprintf(buf, len, "not CPython");
	else if (!(v->flags & (PYVERSION_F_PY_VERSION | PYVERSION_F_NAME)))
		snprintf(buf, len, "CPython of an unknown version");
	else if (v->flags & PYVERSION_F_PY_VERSION)
		snprintf(buf, len, "CPython %u.%u.%u", v->major, v->minor, v->micro);
	else
		snprintf(buf, len, "CPython %u.%u", v->major, v->minor);
	return buf;
}
