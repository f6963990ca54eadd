// SPDX-License-Identifier: MIT
/*
 * The inflated DWARF image (dwarfimage.h) and its cache, and srcline's
 * one-walk scope path against libdw's dwarf_getscopes +
 * dwarf_getscopes_die: a binary built -O2 -g -gz=zlib, and libc through
 * its libc6-dbg debug file (zlib-compressed sections, as Debian ships it).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/dwarfimage.h"
#include "symbols/dwarfimage_int.h"
#include "model/elfread.h"
#include "symbols/srcline.h"
#include "testlib.h"

static char dir[256];
static int fixtures_ok = -1;

static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

static void cleanup(void)
{
	if (dir[0])
		sh("rm -rf '%s'", dir);
}

static const char prog_c[] =
	"#include <stdlib.h>\n"
	"static inline __attribute__((always_inline)) unsigned long leaf(unsigned long x)\n"
	"{ x ^= x >> 13; x *= 0x9e3779b97f4a7c15ul; return x ^ (x >> 29); }\n"
	"static inline __attribute__((always_inline)) unsigned long mid(unsigned long x, int n)\n"
	"{ for (int i = 0; i < n; i++) { unsigned long y = leaf(x + i); x = y + (x << 7); } return x; }\n"
	"__attribute__((noinline)) unsigned long outer(unsigned long x, int n)\n"
	"{ for (int i = 0; i < n; i++) { if (x & 1) x = mid(x, n) + 1; else x = leaf(x); } return x; }\n"
	"int main(int argc, char **argv)\n"
	"{ (void)argv; return (int)outer(argc, argc * 10); }\n";

/*
 * C++: functions of a namespace and a class (defined at the CU's level
 * with DW_AT_specification), one split into a hot and a .cold part
 * (DW_AT_ranges), in a CU with ranges of its own.
 */
static const char prog_cc[] =
	"#include <cstdlib>\n"
	"namespace ns {\n"
	"struct Acc {\n"
	"  unsigned long v;\n"
	"  __attribute__((noinline)) unsigned long step(unsigned long x)\n"
	"  { v ^= x * 0x9e3779b97f4a7c15ul; return v >> 3; }\n"
	"  unsigned long twice(unsigned long x);\n"
	"};\n"
	"unsigned long Acc::twice(unsigned long x) { return step(x) + step(x + 1); }\n"
	"namespace in {\n"
	"__attribute__((noinline)) unsigned long f(unsigned long x, int n)\n"
	"{\n"
	"  Acc a{ x };\n"
	"  for (int i = 0; i < n; i++) {\n"
	"    if (__builtin_expect(x == 12345, 0)) {\n"
	"      a.v += (unsigned long)rand();\n"
	"      if (a.v == 7) abort();\n"
	"    }\n"
	"    x = a.twice(x + i);\n"
	"  }\n"
	"  return x;\n"
	"}\n"
	"}\n"
	"}\n"
	"int main(int argc, char **) { return (int)ns::in::f(argc, argc * 10); }\n";

static int fixtures(void)
{
	char p[512];
	FILE *f;

	if (fixtures_ok >= 0)
		return fixtures_ok;
	fixtures_ok = 0;
	snprintf(dir, sizeof(dir), "/tmp/sfprof-dwarfimage.XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = 0;
		return 0;
	}
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/prog.c", dir);
	f = fopen(p, "w");
	if (!f)
		return 0;
	fputs(prog_c, f);
	if (fclose(f))
		return 0;
	if (sh("cd '%s' && gcc -O2 -g -gz=zlib -o progz prog.c && gcc -O2 -g -o prog prog.c", dir))
		return 0;
	snprintf(p, sizeof(p), "%s/prog.cc", dir);
	f = fopen(p, "w");
	if (!f)
		return 0;
	fputs(prog_cc, f);
	if (fclose(f))
		return 0;
	if (sh("cd '%s' && g++ -O2 -g -o progcc prog.cc && g++ -O2 -gdwarf-4 -o progcc4 prog.cc", dir))
		return 0;
	fixtures_ok = 1;
	return 1;
}

#define NEED_FIXTURES()                                                     \
	do {                                                                \
		if (!fixtures())                                            \
			TEST__FAIL("could not build fixtures in %s", dir);  \
	} while (0)

static struct elfread *open_in_dir(const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return elfread__open(p);
}

/* The section called name in elf: its data (inflated by libelf when
 * inflate and compressed), or NULL. */
static Elf_Data *section_data(Elf *elf, const char *name, int inflate)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			return NULL;
		if (strcmp(n, name))
			continue;
		if (inflate && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

TEST(dwarfimage_should_hold_each_kept_section_as_libelf_inflates_it)
{
	static const char *const kept[] = { ".debug_info", ".debug_abbrev", ".debug_line",
					    ".debug_str", ".debug_aranges" };
	struct dwarf_image *img = NULL;
	char p[512];
	Elf *ref;
	int fd;

	NEED_FIXTURES();
	snprintf(p, sizeof(p), "%s/progz", dir);
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	ref = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(ref != NULL);
	/* the fixture really is compressed, and has location lists */
	CHECK(section_data(ref, ".debug_info", 0) != NULL);
	CHECK(section_data(ref, ".debug_loclists", 0) != NULL);
	CHECK_INT(dwarf_image__open(ref, &img), 0);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		Elf_Data *want = section_data(ref, kept[i], 1);
		Elf_Data *got = section_data(dwarf_image__elf(img), kept[i], 0);

		CHECK_MSG(want && got, "%s: want %p got %p", kept[i], (void *)want, (void *)got);
		CHECK_U64(got->d_size, want->d_size);
		CHECK_MSG(!memcmp(got->d_buf, want->d_buf, want->d_size), "%s differs", kept[i]);
	}
	/* what lines and inline frames never read is left out */
	CHECK(section_data(dwarf_image__elf(img), ".debug_loclists", 0) == NULL);
	dwarf_image__free(img);
	elf_end(ref);
	close(fd);
}

TEST(dwarfimage_should_decline_uncompressed_dwarf)
{
	struct dwarf_image *img = (struct dwarf_image *)1;
	struct elfread *e;

	NEED_FIXTURES();
	e = open_in_dir("prog");
	CHECK(e != NULL);
	CHECK_INT(dwarf_image__open(elfread__libelf(e), &img), -ENOTSUP);
	CHECK(img == NULL);
	elfread__free(e);
}

static size_t written_len; /* of written_rc()'s last *out */

/* dwarf_image__write(src, flags) into a new file, through a buffer of
 * chunk bytes (0: the default): its rc; its bytes into *out (malloc()ed,
 * *len of them) when out is not NULL. */
static int written_rc(Elf *src, unsigned flags, uint8_t **out, size_t chunk)
{
	char p[512];
	size_t saved = dwarf_image_write_chunk;
	struct stat st;
	int fd, rc;

	snprintf(p, sizeof(p), "%s/written.XXXXXX", dir);
	fd = mkstemp(p);
	if (fd < 0)
		return 1002;
	unlink(p);
	if (chunk)
		dwarf_image_write_chunk = chunk;
	rc = dwarf_image__write(src, flags, fd);
	dwarf_image_write_chunk = saved;
	if (!rc && out) {
		*out = NULL;
		if (fstat(fd, &st) || !(*out = malloc((size_t)st.st_size + 1)) ||
		    pread(fd, *out, (size_t)st.st_size, 0) != st.st_size)
			rc = 1003;
		written_len = (size_t)st.st_size;
	}
	close(fd);
	return rc;
}

/* progz's bytes with one change made by edit(), opened from memory. */
static int open_edited(void (*edit)(uint8_t *buf, const struct elfread_section *sec),
		       struct dwarf_image **img)
{
	struct elfread *e = open_in_dir("progz"), *m;
	struct elfread_section sec;
	const uint8_t *image;
	size_t len;
	uint8_t *copy;
	int rc;

	if (!e || elfread__section(e, ".debug_info", &sec))
		return 1000;
	image = elfread__image(e, &len);
	copy = malloc(len);
	memcpy(copy, image, len);
	edit(copy, &sec);
	elfread__free(e);
	m = elfread__open_mem_owned(copy, len);
	if (!m)
		return 1001;
	rc = dwarf_image__open(elfread__libelf(m), img);
	dwarf_image__free(*img);
	/* the image made as a file says the same */
	if (written_rc(elfread__libelf(m), 0, NULL, 0) != rc)
		rc = 2000;
	elfread__free(m);
	return rc;
}

static void flip_stream(uint8_t *buf, const struct elfread_section *sec)
{
	buf[sec->offset + sizeof(Elf64_Chdr) + sec->size / 2] ^= 0x5a;
}

static void huge_size(uint8_t *buf, const struct elfread_section *sec)
{
	Elf64_Chdr ch;

	memcpy(&ch, buf + sec->offset, sizeof(ch));
	ch.ch_size = (uint64_t)1 << 40;
	memcpy(buf + sec->offset, &ch, sizeof(ch));
}

static void off_by_one_size(uint8_t *buf, const struct elfread_section *sec)
{
	Elf64_Chdr ch;

	memcpy(&ch, buf + sec->offset, sizeof(ch));
	ch.ch_size += 1;
	memcpy(buf + sec->offset, &ch, sizeof(ch));
}

static void zstd_type(uint8_t *buf, const struct elfread_section *sec)
{
	Elf64_Chdr ch;

	memcpy(&ch, buf + sec->offset, sizeof(ch));
	ch.ch_type = 2; /* ELFCOMPRESS_ZSTD */
	memcpy(buf + sec->offset, &ch, sizeof(ch));
}

TEST(dwarfimage_should_reject_a_bad_stream_or_size_and_decline_zstd)
{
	struct dwarf_image *img = NULL;

	NEED_FIXTURES();
	CHECK_INT(open_edited(flip_stream, &img), -EINVAL);
	CHECK_INT(open_edited(huge_size, &img), -EINVAL);
	CHECK_INT(open_edited(off_by_one_size, &img), -EINVAL);
	CHECK_INT(open_edited(zstd_type, &img), -ENOTSUP);
}

/* Made straight into a file (as a lean image is, dwarf_image__write), an
 * image is the same bytes the one in memory is: compressed sections
 * inflated through a buffer of 1 MiB, 256, 61 and 7 bytes (many steps
 * for each section), and plain ones copied. */
TEST(dwarfimage_written_should_be_the_bytes_of_the_image_in_memory)
{
	static const size_t chunks[] = { 0, 256, 61, 7 };
	static const char *const bins[] = { "progz", "prog" };
	uint64_t saved = dwarf_image_lean_min;

	NEED_FIXTURES();
	dwarf_image_lean_min = 0;
	for (size_t b = 0; b < 2; b++) {
		struct elfread *e = open_in_dir(bins[b]);
		struct dwarf_image *img = NULL;

		CHECK(e != NULL && elfread__fill_dwarf(e) == 0);
		CHECK_INT(dwarf_image__open_flags(elfread__libelf(e), DWARF_IMAGE_LEAN, &img), 0);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			uint8_t *bytes = NULL;

			CHECK_INT(written_rc(elfread__libelf(e), DWARF_IMAGE_LEAN, &bytes, chunks[c]), 0);
			CHECK_MSG(written_len == img->size && !memcmp(bytes, img->map, img->size),
				  "%s, buffer %zu: %zu bytes written, not the %zu in memory",
				  bins[b], chunks[c], written_len, img->size);
			free(bytes);
		}
		/* as in memory: plain DWARF is declined without the flag */
		CHECK_INT(written_rc(elfread__libelf(e), 0, NULL, 0), b ? -ENOTSUP : 0);
		dwarf_image__free(img);
		elfread__free(e);
	}
	dwarf_image_lean_min = saved;
}

TEST(dwarfimage_cache_should_give_back_the_same_image_and_refuse_a_foreign_file)
{
	uint8_t id[] = { 0xab, 0xcd, 0x01, 0x02, 0x03 };
	struct dwarf_image_key key = { .id = id, .id_len = sizeof(id), .file_len = 1234 };
	struct dwarf_image *a = NULL, *b = NULL, *c = NULL;
	char cache[512], entry[700], target[700];
	struct elfread *e;
	struct stat st;
	Elf_Data *da, *db;

	NEED_FIXTURES();
	snprintf(cache, sizeof(cache), "%s/cache/dwarf", dir);
	snprintf(entry, sizeof(entry), "%s/ab/cd010203/dwarf-1234-v1", cache);
	e = open_in_dir("progz");
	CHECK(e != NULL);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &key, &a), 0);
	CHECK_INT(dwarf_image__from_cache(a), 0);
	CHECK_INT(stat(entry, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &key, &b), 0);
	CHECK_INT(dwarf_image__from_cache(b), 1);
	CHECK_U64(dwarf_image__size(b), dwarf_image__size(a));
	da = section_data(dwarf_image__elf(a), ".debug_info", 0);
	db = section_data(dwarf_image__elf(b), ".debug_info", 0);
	CHECK(da && db && da->d_size == db->d_size && !memcmp(da->d_buf, db->d_buf, da->d_size));
	dwarf_image__free(b);
	b = NULL;

	/* writable by the group: not trusted, made again */
	CHECK_INT(chmod(entry, 0620), 0);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &key, &c), 0);
	CHECK_INT(dwarf_image__from_cache(c), 0);
	dwarf_image__free(c);
	c = NULL;
	/* a symlink where the entry was: not followed, made again */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	CHECK_INT(rename(entry, target), 0);
	CHECK_INT(symlink(target, entry), 0);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &key, &c), 0);
	CHECK_INT(dwarf_image__from_cache(c), 0);
	dwarf_image__free(c);
	/* not an ELF: not used */
	CHECK_INT(unlink(entry), 0);
	CHECK_INT(sh("head -c 4096 /dev/zero > '%s' && chmod 600 '%s'", entry, entry), 0);
	c = NULL;
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &key, &c), 0);
	CHECK_INT(dwarf_image__from_cache(c), 0);
	dwarf_image__free(c);
	dwarf_image__free(a);
	elfread__free(e);
}

TEST(dwarfimage_cache_trim_should_drop_the_least_recently_used_images_first)
{
	uint8_t id1[] = { 0x11, 0x22, 0x01 }, id2[] = { 0x11, 0x33, 0x02 }, id3[] = { 0x44, 0x55, 0x03 };
	struct dwarf_image_key k1 = { .id = id1, .id_len = 3, .file_len = 1 },
			       k2 = { .id = id2, .id_len = 3, .file_len = 2 },
			       k3 = { .id = id3, .id_len = 3, .file_len = 3 };
	struct dwarf_image *a = NULL, *b = NULL, *c = NULL;
	char cache[512], e1[700], e2[700], e3[700];
	struct timespec old[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	struct elfread *e;
	struct stat st;
	unsigned removed = 99;
	uint64_t one;

	NEED_FIXTURES();
	snprintf(cache, sizeof(cache), "%s/trim/dwarf", dir);
	snprintf(e1, sizeof(e1), "%s/11/2201/dwarf-1-v1", cache);
	snprintf(e2, sizeof(e2), "%s/11/3302/dwarf-2-v1", cache);
	snprintf(e3, sizeof(e3), "%s/44/5503/dwarf-3-v1", cache);
	e = open_in_dir("progz");
	CHECK(e != NULL);
	/* a roomy limit (the default) keeps all three */
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &k1, &a), 0);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &k2, &b), 0);
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &k3, &c), 0);
	CHECK_INT(stat(e1, &st), 0);
	one = (uint64_t)st.st_blocks * 512;
	CHECK_INT(stat(e2, &st) | stat(e3, &st), 0);
	dwarf_image__free(a);
	dwarf_image__free(b);
	dwarf_image__free(c);
	/* entry 2 unused for longest, then 1; loading 1 marks it used now */
	CHECK_INT(utimensat(AT_FDCWD, e1, old, 0), 0);
	old[0].tv_sec = old[1].tv_sec = 500;
	CHECK_INT(utimensat(AT_FDCWD, e2, old, 0), 0);
	a = NULL;
	CHECK_INT(dwarf_image__open_cached(elfread__libelf(e), cache, &k1, &a), 0);
	CHECK_INT(dwarf_image__from_cache(a), 1);
	dwarf_image__free(a);
	/* room for two: the least recently used (2) goes, with its directory */
	CHECK_INT(dwarf_image__cache_trim(cache, 2 * one, &removed), 0);
	CHECK_INT(removed, 1);
	CHECK(stat(e2, &st) != 0);
	CHECK_INT(stat(e1, &st) | stat(e3, &st), 0);
	snprintf(e2, sizeof(e2), "%s/11/3302", cache);
	CHECK(stat(e2, &st) != 0);
	/* room for one: 3 (older than 1's use) goes */
	CHECK_INT(dwarf_image__cache_trim(cache, one, &removed), 0);
	CHECK_INT(removed, 1);
	CHECK(stat(e3, &st) != 0);
	CHECK_INT(stat(e1, &st), 0);
	/* a cache directory others can write is left alone */
	CHECK_INT(chmod(cache, 0777), 0);
	CHECK_INT(dwarf_image__cache_trim(cache, 0, &removed), 0);
	CHECK_INT(removed, 0);
	CHECK_INT(stat(e1, &st), 0);
	CHECK_INT(chmod(cache, 0700), 0);
	CHECK_INT(dwarf_image__cache_trim(cache, 0, &removed), 0);
	CHECK_INT(removed, 1);
	CHECK(stat(e1, &st) != 0);
	CHECK_INT(dwarf_image__cache_trim("/nonexistent-sfprof-dir", 0, &removed), -ENOENT);
	elfread__free(e);
}

/* Levels at pc from two srclines agree: 1 = same, 0 = differ (printed). */
/* same_levels(): close x's DWARF after its lookup, before comparing */
static int close_x;

static int same_levels(struct srcline *x, struct srcline *y, uint64_t pc)
{
	const struct srcline_level *a, *b;
	size_t na = 0, nb = 0;
	int ra = srcline__lookup(x, pc, &a, &na), rb;

	if (close_x)
		srcline__close_dwarf(x);
	rb = srcline__lookup(y, pc, &b, &nb);

	if (ra != rb || na != nb) {
		fprintf(stderr, "pc %#llx: rc %d/%d levels %zu/%zu\n", (unsigned long long)pc,
			ra, rb, na, nb);
		return 0;
	}
	for (size_t i = 0; !ra && i < na; i++) {
		int fn = a[i].func == b[i].func || (a[i].func && b[i].func && !strcmp(a[i].func, b[i].func));
		int fl = a[i].file == b[i].file || (a[i].file && b[i].file && !strcmp(a[i].file, b[i].file));

		if (!fn || !fl || a[i].line != b[i].line) {
			fprintf(stderr, "pc %#llx level %zu: %s %s:%u / %s %s:%u\n",
				(unsigned long long)pc, i, a[i].func ? a[i].func : "-",
				a[i].file ? a[i].file : "-", a[i].line, b[i].func ? b[i].func : "-",
				b[i].file ? b[i].file : "-", b[i].line);
			return 0;
		}
	}
	return 1;
}

/* Compare the walk with libdw's scopes at every stride-th byte of the
 * executable PT_LOADs of path; the count of addresses with levels. */
static int compare_walks(const char *path, uint64_t stride, int *bad)
{
	struct srcline_opts ref_o = { .libdw_scopes = 1 };
	struct elfread *e = elfread__open(path);
	struct srcline *fast, *ref;
	struct elfread_load ld;
	const struct srcline_level *lv;
	size_t n;
	int found = 0;

	*bad = 0;
	if (!e)
		return -1;
	fast = srcline__new(e, path, NULL);
	ref = srcline__new(e, path, &ref_o);
	for (size_t i = 0; i < elfread__nr_loads(e); i++) {
		if (elfread__load(e, i, &ld) || !(ld.flags & PF_X))
			continue;
		for (uint64_t pc = ld.vaddr; pc < ld.vaddr + ld.filesz; pc += stride) {
			if (!same_levels(fast, ref, pc) && ++*bad > 10)
				goto out;
			found += !srcline__lookup(fast, pc, &lv, &n);
		}
	}
out:
	srcline__free(fast);
	srcline__free(ref);
	elfread__free(e);
	return found;
}

TEST(srcline_walk_should_find_the_scopes_libdw_finds_in_a_small_binary)
{
	char p[512];
	int bad, found;

	NEED_FIXTURES();
	setenv("SFPROF_DWARF_CACHE", "", 1);
	snprintf(p, sizeof(p), "%s/progz", dir);
	found = compare_walks(p, 1, &bad);
	CHECK_INT(bad, 0);
	CHECK_MSG(found > 100, "only %d addresses with levels", found);
}

/* The CU's children by address (scope_path()'s index) give what libdw's
 * walk does, with the namespace, class and hot/cold ranges of prog.cc,
 * in DWARF 5 (.debug_rnglists) and 4 (.debug_ranges). */
TEST(srcline_walk_should_find_the_scopes_libdw_finds_in_cxx_with_split_functions)
{
	static const char *const bins[] = { "progcc", "progcc4" };
	char p[512];
	int bad, found;

	NEED_FIXTURES();
	setenv("SFPROF_DWARF_CACHE", "", 1);
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		const struct srcline_level *lv;
		struct elfread *e;
		struct srcline *s;
		struct elfread_sym sym;
		uint64_t cold = 0;
		size_t n;

		snprintf(p, sizeof(p), "%s/%s", dir, bins[i]);
		found = compare_walks(p, 1, &bad);
		CHECK_INT(bad, 0);
		CHECK_MSG(found > 100, "%s: only %d addresses with levels", bins[i], found);
		/* the .cold part is f's (its second range) */
		e = elfread__open(p);
		CHECK(e);
		for (uint64_t k = 1; !elfread__symbol(e, SHT_SYMTAB, k, &sym); k++)
			if (strstr(sym.name, "cold") && strstr(sym.name, "2in1f"))
				cold = sym.value;
		CHECK_MSG(cold, "%s: no .cold part of ns::in::f", bins[i]);
		s = srcline__new(e, p, NULL);
		CHECK(s);
		CHECK_INT(srcline__lookup(s, cold, &lv, &n), 0);
		CHECK_STR(lv[n - 1].func, "ns::in::f");
		srcline__free(s);
		elfread__free(e);
	}
}

TEST(srcline_walk_should_find_the_scopes_libdw_finds_in_libc)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	int bad, found;

	if (access("/usr/lib/debug/.build-id", F_OK))
		SKIP("no /usr/lib/debug (libc6-dbg, in tests/install-deps.sh)");
	setenv("SFPROF_DWARF_CACHE", "", 1);
	/* ~3500 addresses over libc's text: 1.5 s of libdw's walks */
	found = compare_walks(libc, 509, &bad);
	CHECK_INT(bad, 0);
	CHECK_MSG(found > 1000, "only %d addresses with levels", found);
}

/* The /proc/self/maps line holding address p: its path into buf, "" for
 * an anonymous mapping; -1 when no mapping holds p. */
static int mapping_of(const void *p, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int rc = -1;

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int at = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2)
			continue;
		if ((uintptr_t)p < lo || (uintptr_t)p >= hi)
			continue;
		snprintf(buf, size, "%s", at ? line + at : "");
		buf[strcspn(buf, "\n")] = 0;
		rc = 0;
		break;
	}
	if (f)
		fclose(f);
	return rc;
}

/* DWARF_IMAGE_LEAN: plain DWARF copied (no location lists) into the
 * cache, and read back as the cache file's mapping, not private memory;
 * nothing without a cache. */
TEST(dwarfimage_lean_should_copy_plain_dwarf_and_read_it_from_the_cache_file)
{
	uint8_t id[] = { 0x5e, 0xa1, 0x07 };
	struct dwarf_image_key key = { .id = id, .id_len = sizeof(id), .file_len = 77 };
	struct dwarf_image *a = (struct dwarf_image *)1, *b = NULL;
	char cache[400], entry[700], where[4096];
	uint64_t saved = dwarf_image_lean_min;
	Elf_Data *src, *da;
	struct elfread *e;
	struct stat st;

	NEED_FIXTURES();
	snprintf(cache, sizeof(cache), "%.300s/cache-lean", dir);
	snprintf(entry, sizeof(entry), "%s/5e/a107/dwarf-77-v1", cache);
	e = open_in_dir("prog");
	CHECK(e != NULL);
	CHECK(elfread__fill_dwarf(e) == 0);
	/* prog's DWARF is far below the bound: declined at the default */
	CHECK_INT(dwarf_image__open_cached_flags(elfread__libelf(e), cache, &key, DWARF_IMAGE_LEAN,
						 &a), -ENOTSUP);
	CHECK(a == NULL);
	dwarf_image_lean_min = 0;
	CHECK_INT(dwarf_image__open_cached_flags(elfread__libelf(e), NULL, NULL, DWARF_IMAGE_LEAN,
						 &a), -ENOTSUP);
	CHECK_INT(dwarf_image__open_cached_flags(elfread__libelf(e), cache, &key, DWARF_IMAGE_LEAN,
						 &a), 0);
	CHECK_INT(dwarf_image__from_cache(a), 0);
	CHECK_INT(stat(entry, &st), 0);
	src = section_data(elfread__libelf(e), ".debug_info", 0);
	da = section_data(dwarf_image__elf(a), ".debug_info", 0);
	CHECK(src && da && src->d_size == da->d_size && !memcmp(src->d_buf, da->d_buf, da->d_size));
	CHECK(section_data(elfread__libelf(e), ".debug_loclists", 0) != NULL);
	CHECK(section_data(dwarf_image__elf(a), ".debug_loclists", 0) == NULL);
	CHECK_INT(mapping_of(da->d_buf, where, sizeof(where)), 0);
	CHECK_MSG(!strcmp(where, entry), "image mapped from '%.200s', not %.200s", where, entry);
	/* the next open reads the same file */
	CHECK_INT(dwarf_image__open_cached_flags(elfread__libelf(e), cache, &key, DWARF_IMAGE_LEAN,
						 &b), 0);
	CHECK_INT(dwarf_image__from_cache(b), 1);
	CHECK_U64(dwarf_image__size(b), dwarf_image__size(a));
	/* without the flag, plain DWARF is still libdw's to read in place */
	dwarf_image__free(b);
	b = NULL;
	CHECK_INT(dwarf_image__open(elfread__libelf(e), &b), -ENOTSUP);
	dwarf_image_lean_min = saved;
	dwarf_image__free(a);
	elfread__free(e);
}

/* The Rss in KiB of the mapping holding p (/proc/self/smaps), -1 if none. */
static long mapping_rss_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	int in = 0;
	long rss = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		long kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1) {
			rss = kb;
			break;
		}
	}
	if (f)
		fclose(f);
	return rss;
}

/* Trimming a lean image gives its mapped pages back and keeps its bytes;
 * a private (inflated in memory) image is not trimmed. */
TEST(dwarfimage_trim_should_unmap_a_cached_images_pages_and_keep_its_bytes)
{
	uint8_t id[] = { 0x7a, 0x11, 0x09 };
	struct dwarf_image_key key = { .id = id, .id_len = sizeof(id), .file_len = 78 };
	struct dwarf_image *a = NULL, *z = NULL;
	uint64_t saved = dwarf_image_lean_min;
	char cache[400];
	Elf_Data *src, *da, *dz;
	struct elfread *e, *ez;
	unsigned sum = 0;

	NEED_FIXTURES();
	snprintf(cache, sizeof(cache), "%.300s/cache-trim", dir);
	e = open_in_dir("prog");
	CHECK(e != NULL);
	CHECK(elfread__fill_dwarf(e) == 0);
	dwarf_image_lean_min = 0;
	CHECK_INT(dwarf_image__open_cached_flags(elfread__libelf(e), cache, &key, DWARF_IMAGE_LEAN,
						 &a), 0);
	dwarf_image_lean_min = saved;
	src = section_data(elfread__libelf(e), ".debug_info", 0);
	da = section_data(dwarf_image__elf(a), ".debug_info", 0);
	CHECK(src && da && da->d_size == src->d_size);
	for (size_t i = 0; i < da->d_size; i++)
		sum += ((const unsigned char *)da->d_buf)[i];
	CHECK_MSG(mapping_rss_kb(da->d_buf) > 0, "read, yet %ld KiB mapped",
		  mapping_rss_kb(da->d_buf));
	CHECK_INT(dwarf_image__trim(a), 1);
	CHECK_INT((int)mapping_rss_kb(da->d_buf), 0);
	CHECK(!memcmp(src->d_buf, da->d_buf, da->d_size));
	CHECK(sum > 0);
	/* progz's image is inflated into private memory: left as it is */
	setenv("SFPROF_DWARF_CACHE", "", 1);
	ez = open_in_dir("progz");
	CHECK(ez != NULL);
	CHECK(elfread__fill_dwarf(ez) == 0);
	CHECK_INT(dwarf_image__open(elfread__libelf(ez), &z), 0);
	dz = section_data(dwarf_image__elf(z), ".debug_info", 0);
	CHECK(dz && dz->d_size > 0);
	sum = 0;
	for (size_t i = 0; i < dz->d_size; i++)
		sum += ((const unsigned char *)dz->d_buf)[i];
	CHECK_INT(dwarf_image__trim(z), 0);
	CHECK(sum > 0 && mapping_rss_kb(dz->d_buf) > 0);
	CHECK_INT(dwarf_image__trim(NULL), 0);
	dwarf_image__free(z);
	dwarf_image__free(a);
	elfread__free(ez);
	elfread__free(e);
}

/* A srcline reading the lean image answers every address as one reading
 * the binary. */
/* A lean srcline of progcc (its image mapped from the cache), against a
 * plain one at every executable byte; closing: its DWARF closed after
 * every lookup, and every answer asked for again at the end. */
static void lean_against_plain(int closing)
{
	struct srcline_opts lean = { .lean_dwarf = 1 };
	uint64_t saved = dwarf_image_lean_min;
	char p[512], cache[512];
	struct elfread_load ld;
	struct srcline *x, *y;
	struct srcline_stats st;
	struct elfread *e;
	int found = 0, bad = 0;

	snprintf(cache, sizeof(cache), "%s/cache-lean2", dir);
	setenv("SFPROF_DWARF_CACHE", cache, 1);
	dwarf_image_lean_min = 0;
	snprintf(p, sizeof(p), "%s/progcc", dir);
	e = elfread__open(p);
	CHECK(e != NULL);
	x = srcline__new(e, p, &lean);
	y = srcline__new(e, p, NULL);
	CHECK(x && y);
	close_x = closing;
	for (size_t i = 0; i < elfread__nr_loads(e); i++) {
		if (elfread__load(e, i, &ld) || !(ld.flags & PF_X))
			continue;
		for (uint64_t pc = ld.vaddr; pc < ld.vaddr + ld.filesz; pc++) {
			const struct srcline_level *lv;
			size_t n;

			bad += !same_levels(x, y, pc);
			found += !srcline__lookup(x, pc, &lv, &n);
		}
	}
	close_x = 0;
	srcline__stats(x, &st);
	if (closing) {
		uint64_t opens = st.opens;

		/* one open per address resolved: each after a close */
		CHECK_U64(st.opens, st.resolved);
		CHECK_U64(st.closes, st.opens);
		CHECK_U64(st.images, st.opens);
		CHECK_U64(st.images_cached, st.opens); /* the cache's file, mapped */
		for (size_t i = 0; i < elfread__nr_loads(e); i++)
			for (uint64_t pc = 0; !elfread__load(e, i, &ld) && (ld.flags & PF_X) &&
					      pc < ld.filesz; pc++)
				bad += !same_levels(x, y, ld.vaddr + pc);
		srcline__stats(x, &st);
		CHECK_U64(st.opens, opens); /* all from the answers kept */
	} else {
		CHECK_U64(st.images, 1);
	}
	CHECK_INT(bad, 0);
	CHECK_MSG(found > 100, "only %d addresses with levels", found);
	srcline__free(x);
	srcline__free(y);
	elfread__free(e);
	dwarf_image_lean_min = saved;
	setenv("SFPROF_DWARF_CACHE", "", 1);
}

TEST(srcline_lean_should_answer_as_the_binary_does)
{
	NEED_FIXTURES();
	lean_against_plain(0);
}

TEST(srcline_lean_should_answer_the_same_with_its_dwarf_closed_between_lookups)
{
	NEED_FIXTURES();
	lean_against_plain(1);
}

TEST_MAIN()
