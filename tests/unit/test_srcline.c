// SPDX-License-Identifier: MIT
/*
 * Inline frames and source lines (srcline.h) against binutils' addr2line
 * -i -f, at every byte address of every function of a binary built -O2
 * -g with functions gcc inlines; the DWARF found in the binary, in a
 * debug file by build-id, or nowhere.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "model/elfread.h"
#include "symbols/srcline.h"
#include "testlib.h"

#define BUILD_ID_HEX "11112233445566778899aabbccddeeff01234567"

/* The fixtures' directory (test_tmpdir), once NEED_FIXTURES() passed. */
static const char *dir = "";

static const char prog_c[] =
	"#include <stdlib.h>\n"
	"#include \"inl.h\"\n"
	"static inline __attribute__((always_inline)) unsigned long leaf(unsigned long x)\n"
	"{\n"
	"  x ^= x >> 13;\n"
	"  x *= 0x9e3779b97f4a7c15ul;\n"
	"  return x ^ (x >> 29);\n"
	"}\n"
	"static inline __attribute__((always_inline)) unsigned long mid(unsigned long x, int n)\n"
	"{\n"
	"  for (int i = 0; i < n; i++)\n"
	"    x = leaf(x + i) + hdr_twist(x);\n"
	"  return x;\n"
	"}\n"
	"__attribute__((noinline)) unsigned long outer(unsigned long x, int n)\n"
	"{\n"
	"  for (int i = 0; i < n; i++)\n"
	"    x = mid(x, n) + 1;\n"
	"  return x;\n"
	"}\n"
	"__attribute__((noinline)) unsigned long other(unsigned long x)\n"
	"{\n"
	"  return leaf(x) * 3 + hdr_twist(x);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"  (void)argv;\n"
	"  return (int)(outer(argc, argc * 10) + other(argc));\n"
	"}\n";

/* inlined from another file: call_file differs from the CU's */
static const char inl_h[] =
	"static inline __attribute__((always_inline)) unsigned long hdr_twist(unsigned long x)\n"
	"{\n"
	"  return (x << 7) | (x >> 57);\n"
	"}\n";

/* The line each function of prog.c / inl.h starts on (its definition):
 * a level's start_line, 0 for a name not in them (crt code). */
static uint32_t start_line_of(const char *fn)
{
	static const struct { const char *fn; uint32_t line; } defs[] = {
		{ "hdr_twist", 1 }, { "leaf", 3 }, { "mid", 9 }, { "outer", 15 },
		{ "other", 21 }, { "main", 25 },
	};

	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (fn && !strcmp(fn, defs[i].fn))
			return defs[i].line;
	return 0;
}

/* Every fixture, once (test_fixtures). 0 when all were built. */
static int build_fixtures(const char *d)
{
	dir = d;
	if (test_write_file(dir, "prog.c", prog_c) || test_write_file(dir, "inl.h", inl_h))
		return -1;
	if (test_sh("cd '%s' && gcc -O2 -g -Wl,--build-id=0x%s -o prog prog.c", dir, BUILD_ID_HEX) ||
	    test_sh("cd '%s' && gcc -O2 -gdwarf-4 -o prog4 prog.c", dir) ||
	    test_sh("cd '%s' && gcc -O2 -o nodwarf prog.c", dir) ||
	    /* a relative source path: the line table's paths are relative */
	    test_sh("cd '%s' && mkdir -p src && cp prog.c inl.h src/ && "
		    "gcc -O2 -g -o progrel src/prog.c", dir) ||
	    test_split_debug_by_build_id(dir, "prog", BUILD_ID_HEX))
		return -1;
	return 0;
}

#define NEED_FIXTURES() NEED_FIXTURES_OF("srcline", build_fixtures)

/* The sized functions of a binary's .symtab. */
struct funcs {
	uint64_t start[64], size[64];
	int n;
};

static int func_cb(void *ctx, const struct elfread_sym *s)
{
	struct funcs *f = ctx;

	if (s->type == STT_FUNC && s->size && s->shndx != SHN_UNDEF && f->n < 64) {
		f->start[f->n] = s->value;
		f->size[f->n] = s->size;
		f->n++;
	}
	return 0;
}

/*
 * Compare srcline with `addr2line -i -f -a` at every byte of every
 * function of `bin` (symbols read from `symfile`). Returns the number of
 * mismatches (details on stderr), counts addresses and inline levels.
 * Each level's start_line is its function's definition line in prog.c.
 * close_each: the DWARF is closed (srcline__close_dwarf) after every
 * lookup, before its levels are compared, and every address is looked up
 * again at the end: the answers must outlive the Dwarf, and come back
 * from the cache without opening it.
 */
static int compare_with_addr2line_closing(const char *bin, const char *symfile, const char *root,
					  int *addrs, int *inlined, int close_each)
{
	char p[512], list[512], cmd[1200], line[4096];
	struct elfread *e, *se;
	struct srcline *s;
	struct funcs fs = { .n = 0 };
	FILE *f, *out;
	int bad = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, bin);
	e = elfread__open(p);
	snprintf(list, sizeof(list), "%s/%s", dir, symfile);
	se = elfread__open(list);
	if (!e || !se) {
		elfread__free(e);
		elfread__free(se);
		return 1000;
	}
	elfread__for_each_symbol(se, SHT_SYMTAB, func_cb, &fs);
	elfread__free(se);
	s = srcline__new(e, p, &(struct srcline_opts){ .debug_root = root });
	snprintf(list, sizeof(list), "%s/addrs", dir);
	f = fopen(list, "w");
	for (int i = 0; f && i < fs.n; i++)
		for (uint64_t a = fs.start[i]; a < fs.start[i] + fs.size[i]; a++)
			fprintf(f, "0x%" PRIx64 "\n", a);
	if (f)
		fclose(f);
	/* addr2line reads the unstripped file: the reference */
	snprintf(cmd, sizeof(cmd), "addr2line -i -f -a -e '%s/%s' < '%s'", dir, symfile, list);
	out = popen(cmd, "r");
	if (!s || !out) {
		if (out)
			pclose(out);
		srcline__free(s);
		elfread__free(e);
		return 1000;
	}
	/* blocks: "0xADDR", then (function, file:line) pairs */
	char *ln = fgets(line, sizeof(line), out);

	*addrs = 0;
	while (ln) {
		const struct srcline_level *lv = NULL;
		char want_fn[SRCLINE_MAX_LEVELS][256], want_fl[SRCLINE_MAX_LEVELS][512];
		size_t n = 0, k = 0;
		uint64_t a = strtoull(line, NULL, 16);
		int rc;

		while ((ln = fgets(line, sizeof(line), out)) && strncmp(line, "0x", 2)) {
			char *nl = strchr(line, '\n'), *disc;

			if (nl)
				*nl = 0;
			if (k < SRCLINE_MAX_LEVELS)
				snprintf(want_fn[k], sizeof(want_fn[k]), "%.255s", line);
			if (!(ln = fgets(line, sizeof(line), out)))
				break;
			nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			disc = strstr(line, " (discriminator");
			if (disc)
				*disc = 0;
			if (k < SRCLINE_MAX_LEVELS)
				snprintf(want_fl[k], sizeof(want_fl[k]), "%.511s", line);
			k++;
		}
		(*addrs)++;
		rc = srcline__lookup(s, a, &lv, &n);
		if (close_each && srcline__close_dwarf(s) != 1) {
			fprintf(stderr, "%#" PRIx64 ": nothing to close after a lookup\n", a);
			bad++;
		}
		/* no DWARF there (crt1's _start: addr2line names it from the
		 * symbol table, with no line) */
		if (k == 1 && (!strcmp(want_fl[0], "??:?") || !strcmp(want_fl[0], "??:0"))) {
			if (rc == 0 && lv[0].line) {
				fprintf(stderr, "%#" PRIx64 ": addr2line %s, srcline line %u\n", a,
					want_fl[0], lv[0].line);
				bad++;
			}
			continue;
		}
		if (rc || n != k) {
			fprintf(stderr, "%#" PRIx64 ": addr2line %zu levels, srcline rc %d, %zu levels\n",
				a, k, rc, n);
			bad++;
			continue;
		}
		*inlined += (int)n - 1;
		for (size_t i = 0; i < n; i++) {
			char got[600];

			snprintf(got, sizeof(got), "%s:%u", lv[i].file ? lv[i].file : "??",
				 lv[i].line);
			if (lv[i].line == 0)
				snprintf(got, sizeof(got), "%s:?", lv[i].file ? lv[i].file : "??");
			if (strcmp(lv[i].func ? lv[i].func : "??", want_fn[i]) ||
			    strcmp(got, want_fl[i])) {
				fprintf(stderr, "%#" PRIx64 " level %zu: addr2line %s %s, srcline %s %s\n",
					a, i, want_fn[i], want_fl[i], lv[i].func ? lv[i].func : "??", got);
				bad++;
				break;
			}
			/* DW_AT_decl_line: of the subprogram, or the inlined origin */
			if (start_line_of(lv[i].func) && lv[i].start_line != start_line_of(lv[i].func)) {
				fprintf(stderr, "%#" PRIx64 " level %zu: %s starts at line %u, not %u\n",
					a, i, lv[i].func, lv[i].start_line, start_line_of(lv[i].func));
				bad++;
				break;
			}
		}
	}
	pclose(out);
	if (close_each && f) {
		struct srcline_stats st0, st1;
		FILE *in = fopen(list, "r");
		size_t again = 0;

		srcline__stats(s, &st0);
		/* every address again: answered from the cache, no open */
		while (in && fgets(line, sizeof(line), in)) {
			const struct srcline_level *lv;
			size_t n;

			if (srcline__lookup(s, strtoull(line, NULL, 16), &lv, &n) == 0 && n &&
			    lv[n - 1].func && lv[n - 1].func[0])
				again++;
		}
		if (in)
			fclose(in);
		srcline__stats(s, &st1);
		if (st1.opens != st0.opens || st0.closes != st0.opens || !again ||
		    st0.opens != st0.resolved) {
			fprintf(stderr, "closing: %" PRIu64 " opens, %" PRIu64 " closes, %" PRIu64
				" resolved, then %" PRIu64 " opens for %zu cached answers\n",
				st0.opens, st0.closes, st0.resolved, st1.opens - st0.opens, again);
			bad++;
		}
	}
	srcline__free(s);
	elfread__free(e);
	return bad;
}

static int compare_with_addr2line(const char *bin, const char *symfile, const char *root,
				  int *addrs, int *inlined)
{
	return compare_with_addr2line_closing(bin, symfile, root, addrs, inlined, 0);
}

TEST(srcline_should_equal_addr2line_at_every_address)
{
	int addrs = 0, inlined = 0;

	NEED_FIXTURES();
	CHECK_INT(compare_with_addr2line("prog", "prog", NULL, &addrs, &inlined), 0);
	printf("# prog: %d addresses, %d inline levels, all equal to addr2line -i -f\n",
	       addrs, inlined);
	CHECK(addrs > 100);
	CHECK(inlined > 50); /* the fixture's inlining did happen */
}

TEST(srcline_should_read_dwarf_4_too)
{
	int addrs = 0, inlined = 0;

	NEED_FIXTURES();
	CHECK_INT(compare_with_addr2line("prog4", "prog4", NULL, &addrs, &inlined), 0);
	CHECK(inlined > 50);
}

TEST(srcline_should_make_relative_paths_absolute_like_addr2line)
{
	int addrs = 0, inlined = 0;

	NEED_FIXTURES();
	CHECK_INT(compare_with_addr2line("progrel", "progrel", NULL, &addrs, &inlined), 0);
	CHECK(inlined > 50);
}

TEST(srcline_should_find_the_debug_file_by_build_id)
{
	char root[512];
	int addrs = 0, inlined = 0;

	NEED_FIXTURES();
	snprintf(root, sizeof(root), "%s/root", dir);
	CHECK_INT(compare_with_addr2line("prog-stripped", "prog", root, &addrs, &inlined), 0);
	CHECK(inlined > 50);
}

TEST(srcline_should_keep_its_answers_when_the_dwarf_is_closed)
{
	static const char *const bins[][2] = {
		{ "prog", "prog" }, { "prog4", "prog4" }, { "progrel", "progrel" },
		{ "prog-stripped", "prog" }, /* the debug file's DWARF */
	};
	char root[512];

	NEED_FIXTURES();
	snprintf(root, sizeof(root), "%s/root", dir);
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		int addrs = 0, inlined = 0;

		CHECK_INT(compare_with_addr2line_closing(bins[i][0], bins[i][1], i == 3 ? root : NULL,
							 &addrs, &inlined, 1), 0);
		CHECK(inlined > 50);
	}
}

TEST(srcline_should_say_enoent_without_dwarf_and_cache_answers)
{
	const struct srcline_level *lv, *lv2;
	struct srcline_stats st;
	struct elfread *e;
	struct srcline *s;
	char p[512];
	size_t n, n2;

	NEED_FIXTURES();
	snprintf(p, sizeof(p), "%s/nodwarf", dir);
	e = elfread__open(p);
	CHECK(e);
	s = srcline__new(e, p, &(struct srcline_opts){ .no_debug_files = 1 });
	CHECK(s);
	CHECK_INT(srcline__lookup(s, 0x1100, &lv, &n), -ENOENT);
	srcline__free(s);
	elfread__free(e);

	/* stripped, with debug files off: no DWARF */
	snprintf(p, sizeof(p), "%s/prog-stripped", dir);
	e = elfread__open(p);
	CHECK(e);
	s = srcline__new(e, p, &(struct srcline_opts){ .no_debug_files = 1 });
	CHECK_INT(srcline__lookup(s, 0x1100, &lv, &n), -ENOENT);
	srcline__free(s);
	elfread__free(e);

	snprintf(p, sizeof(p), "%s/prog", dir);
	e = elfread__open(p);
	s = srcline__new(e, p, NULL);
	CHECK(e && s);
	{
		struct elfread_sym sym;
		uint64_t outer = 0;

		for (uint64_t i = 1; !elfread__symbol(e, SHT_SYMTAB, i, &sym); i++)
			if (!strcmp(sym.name, "outer"))
				outer = sym.value;
		CHECK(outer);
		CHECK_INT(srcline__lookup(s, outer, &lv, &n), 0);
		CHECK_INT(srcline__lookup(s, outer, &lv2, &n2), 0);
		CHECK(lv == lv2 && n == n2);
		CHECK_STR(lv[n - 1].func, "outer");
	}
	srcline__stats(s, &st);
	CHECK_U64(st.lookups, 2);
	CHECK_U64(st.resolved, 1);
	srcline__free(s);
	elfread__free(e);
}

TEST_MAIN()
