// SPDX-License-Identifier: MIT
/* .gopclntab parsing (gopclntab.h) and what the Go room derives from it
 * (goruntime.h), on the tables tests/fuzz/gen_gopclntab.py writes to
 * tests/fuzz/corpus/gopclntab/ (functions listed there), and on damaged
 * copies of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/elfread.h"
#include "runtimes/go/goruntime.h"
#include "sfprof_event.h"
#include "unwind/sframe.h"
#include "testlib.h"
#include "unwind/unwind.h"

TEST_MAIN();

#define TEXT 0x401000u

static uint8_t *load(const char *name, size_t *len)
{
	char path[256];
	uint8_t *buf = malloc(1 << 16);
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/gopclntab/%s", name);
	f = fopen(path, "rb");
	if (!f || !buf) {
		fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
		exit(1);
	}
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void check_table(const char *file, uint32_t magic)
{
	struct gopclntab t;
	struct gopclntab_func f;
	size_t len;
	uint8_t *b = load(file, &len);
	int32_t d;

	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_U64(t.magic, magic);
	CHECK_U64(t.nfunc, 5);
	CHECK_U64(t.text, TEXT);
	CHECK_U64(t.text_end, TEXT + 0x2c0);
	CHECK_INT(gopclntab__func(&t, 0, &f), 0);
	CHECK_STR(f.name, "main.leaf");
	CHECK_U64(f.start, TEXT);
	CHECK_U64(f.end, TEXT + 0x40);
	CHECK_INT(gopclntab__func(&t, 5, &f), -ENOENT);
	/* lookups at the edges of every function */
	CHECK_INT(gopclntab__find(&t, TEXT - 1, &f), -ENOENT);
	CHECK_INT(gopclntab__find(&t, TEXT + 0x2c0, &f), -ENOENT);
	CHECK_INT(gopclntab__find(&t, TEXT + 0x3f, &f), 0);
	CHECK_STR(f.name, "main.leaf");
	CHECK_INT(gopclntab__find(&t, TEXT + 0x40, &f), 0);
	CHECK_STR(f.name, "runtime.systemstack");
	CHECK_U64(f.flag, GOPCLNTAB_FLAG_SPWRITE);
	CHECK_INT(gopclntab__find(&t, TEXT + 0x80, &f), 0);
	CHECK_STR(f.name, "runtime.goexit");
	CHECK_U64(f.flag, GOPCLNTAB_FLAG_TOPFRAME);
	CHECK_INT(gopclntab__find(&t, TEXT + 0x2bf, &f), 0);
	CHECK_STR(f.name, "main.big");
	/* SP deltas, with a two-byte varint in main.big */
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 0xc0, &d), 0);
	CHECK_INT(d, 0);
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 0x1ef + 0xc0, &d), 0);
	CHECK_INT(d, 4104);
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 0x1f0 + 0xc0, &d), -ENOENT);
	CHECK_INT(gopclntab__find(&t, TEXT, &f), 0);
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 3, &d), 0);
	CHECK_INT(d, 0);
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 4, &d), 0);
	CHECK_INT(d, 24);
	CHECK_INT(gopclntab__spdelta(&t, &f, TEXT + 0x3b, &d), 0);
	CHECK_INT(d, 0);
	free(b);
}

TEST(gopclntab_should_read_go118_functions_names_flags_and_sp_deltas)
{
	check_table("go118.bin", GOPCLNTAB_MAGIC_118);
}

TEST(gopclntab_should_read_go120_layout_with_start_line)
{
	check_table("go120.bin", GOPCLNTAB_MAGIC_120);
}

TEST(gopclntab_should_refuse_bad_magic_old_versions_and_bad_headers)
{
	struct gopclntab t;
	size_t len;
	uint8_t *b = load("go118.bin", &len);

	b[0] = 0xfa; /* Go 1.16 */
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_VERSION);
	b[0] = 0x12;
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_MAGIC);
	b[0] = 0xf0;
	b[7] = 5; /* pointer size */
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_HEADER);
	b[7] = 8;
	b[6] = 3; /* quantum */
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_HEADER);
	b[6] = 1;
	CHECK_INT(gopclntab__parse(b, 7, 0, &t), -GOPCLNTAB_E_TRUNCATED);
	CHECK_INT(gopclntab__parse(NULL, 0, 0, &t), -GOPCLNTAB_E_TRUNCATED);
	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	free(b);
}

TEST(gopclntab_should_refuse_every_truncation_without_reading_past_it)
{
	struct gopclntab t;
	size_t len;
	uint8_t *b = load("go118.bin", &len);

	/* a copy of exactly n bytes each time, so ASan sees any overread */
	for (size_t n = 0; n < len; n++) {
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, b, n);
		CHECK_MSG(gopclntab__parse(c, n, 0, &t) < 0, "prefix of %zu bytes parsed", n);
		free(c);
	}
	free(b);
}

/* offsets in the generated table (gen_gopclntab.py) */
static size_t ftab_off(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b + 8 + 7 * 8, 8);
	return v;
}

TEST(gopclntab_should_refuse_an_unsorted_functab_and_bad_records)
{
	struct gopclntab t;
	struct gopclntab_func f;
	size_t len;
	uint8_t *b = load("go118.bin", &len);
	size_t ft = ftab_off(b);
	uint32_t v, keep;

	/* entry 2 before entry 1 */
	memcpy(&keep, b + ft + 2 * 8, 4);
	v = 0x10;
	memcpy(b + ft + 2 * 8, &v, 4);
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_ORDER);
	memcpy(b + ft + 2 * 8, &keep, 4);
	/* a _func offset past the end */
	memcpy(&keep, b + ft + 8 + 4, 4);
	v = (uint32_t)len;
	memcpy(b + ft + 8 + 4, &v, 4);
	CHECK_INT(gopclntab__parse(b, len, 0, &t), -GOPCLNTAB_E_TRUNCATED);
	/* a _func whose entry is not its functab entry's */
	v = keep - 40; /* function 0's record */
	memcpy(b + ft + 8 + 4, &v, 4);
	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(gopclntab__func(&t, 1, &f), -GOPCLNTAB_E_FUNC);
	memcpy(b + ft + 8 + 4, &keep, 4);
	/* a name offset past funcnametab, and one whose name runs off it */
	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	{
		uint8_t *rec = b + ft + keep;
		int32_t no, old;

		memcpy(&old, rec + 4, 4);
		no = (int32_t)(t.names_end - t.names_off);
		memcpy(rec + 4, &no, 4);
		CHECK_INT(gopclntab__func(&t, 1, &f), -GOPCLNTAB_E_NAME);
		no = -1;
		memcpy(rec + 4, &no, 4);
		CHECK_INT(gopclntab__func(&t, 1, &f), -GOPCLNTAB_E_NAME);
		memcpy(rec + 4, &old, 4);
		b[t.names_end - 1] = 'x'; /* the last name's NUL */
		CHECK_INT(gopclntab__func(&t, 4, &f), -GOPCLNTAB_E_NAME);
		CHECK_INT(gopclntab__func(&t, 1, &f), 0);
	}
	free(b);
}

TEST(gopclntab_should_stop_a_pcvalue_table_at_its_end_or_the_functions)
{
	struct gopclntab t;
	struct gopclntab_func f;
	struct gopclntab_pcvalue it;
	uint64_t lo, hi;
	int32_t v;
	size_t len;
	uint8_t *b = load("go118.bin", &len);
	int n = 0, rc;

	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(gopclntab__func(&t, 4, &f), 0);
	/* a table offset past pctab */
	CHECK_INT(gopclntab__pcvalue_start(&t, &f, (uint32_t)(t.pctab_end - t.pctab_off), &it),
		  -GOPCLNTAB_E_PCVALUE);
	CHECK_INT(gopclntab__pcvalue_start(&t, &f, 0, &it), -ENOENT);
	/* main.big's table: varints running into the end of pctab */
	CHECK_INT(gopclntab__pcvalue_start(&t, &f, f.pcsp, &it), 0);
	while ((rc = gopclntab__pcvalue_next(&it, &lo, &hi, &v)) == 1)
		n++;
	CHECK_INT(rc, 0);
	CHECK_INT(n, 2);
	for (size_t i = t.pctab_off + f.pcsp; i < t.pctab_end; i++)
		b[i] = 0xff;
	CHECK_INT(gopclntab__pcvalue_start(&t, &f, f.pcsp, &it), 0);
	CHECK_INT(gopclntab__pcvalue_next(&it, &lo, &hi, &v), -GOPCLNTAB_E_PCVALUE);
	/* a run longer than the function */
	free(b);
	b = load("go118.bin", &len);
	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(gopclntab__func(&t, 2, &f), 0); /* goexit: (0, +0x10) */
	b[t.pctab_off + f.pcsp + 1] = 0x7f;
	CHECK_INT(gopclntab__pcvalue_start(&t, &f, f.pcsp, &it), 0);
	CHECK_INT(gopclntab__pcvalue_next(&it, &lo, &hi, &v), -GOPCLNTAB_E_PCVALUE);
	free(b);
}

TEST(goruntime_should_stop_at_stack_switches_and_continue_at_sigreturn)
{
	struct gopclntab t;
	struct sframe_row row;
	struct sframe_func fn;
	size_t len;
	uint8_t *b = load("go120.bin", &len);

	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 5, &row, &fn), 0);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0x45, &row, &fn), 1);
	CHECK_U64(row.flags, SFRAME_ROW_STACK_SWITCH);
	CHECK_U64(fn.start, TEXT + 0x40);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0x85, &row, NULL), 1);
	CHECK_INT(row.ra.kind, SFRAME_RULE_UNDEFINED);
	/* returned to at sigreturn's first byte: looked up one byte before */
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0x9f, &row, &fn), 1);
	CHECK_U64(fn.flags, SFRAME_FUNC_SIGNAL);
	CHECK_U64(fn.start, TEXT + 0xa0);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0xa7, &row, &fn), 1);
	CHECK_U64(fn.flags, SFRAME_FUNC_SIGNAL);
	/* two bytes before: still goexit's (outermost), not a signal frame */
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0x9e, &row, &fn), 1);
	CHECK_U64(fn.flags, 0);
	CHECK_INT(row.ra.kind, SFRAME_RULE_UNDEFINED);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0xc5, &row, &fn), 0);
	CHECK_INT(go_runtime__special_row(&t, TEXT + 0x2c0, &row, &fn), 0);
	free(b);
}

TEST(goruntime_should_derive_rows_from_sp_deltas)
{
	struct sframe_encode_opts o = { .version = 3, .abi = SFRAME_ABI_AMD64_LE,
					.fixed_ra_offset = -8 };
	struct sframe_table *st = NULL;
	struct gopclntab t;
	struct sframe_row row;
	struct sframe_func fn;
	size_t len;
	uint8_t *b = load("go118.bin", &len);

	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(go_runtime__derive_table(&t, &o, &st), 0);
	CHECK(st);
	CHECK_INT(sframe_table__find(st, TEXT + 2, &row, &fn), 0);
	CHECK_INT(row.cfa.kind, SFRAME_RULE_REG);
	CHECK_INT(row.cfa.reg, SFRAME_REG_AMD64_SP);
	CHECK_INT(row.cfa.off, 8);
	CHECK_INT(sframe_table__find(st, TEXT + 0x20, &row, &fn), 0);
	CHECK_INT(row.cfa.off, 32);
	CHECK_INT(row.ra.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(row.ra.off, -8);
	CHECK_INT(sframe_table__find(st, TEXT + 0x3b, &row, &fn), 0);
	CHECK_INT(row.cfa.off, 8);
	/* the padding after the table has no row */
	CHECK_INT(sframe_table__find(st, TEXT + 0x3c, &row, &fn), -ENOENT);
	CHECK_INT(sframe_table__find(st, TEXT + 0x88, &row, &fn), 0);
	CHECK_INT(row.ra.kind, SFRAME_RULE_UNDEFINED);
	CHECK_INT(sframe_table__find(st, TEXT + 0xc0 + 0x100, &row, &fn), 0);
	CHECK_INT(row.cfa.off, 4112);
	sframe_table__free(st);
	free(b);
}

TEST(goruntime_should_find_no_pclntab_in_a_c_binary)
{
	struct elfread *e = elfread__open("/proc/self/exe");
	struct gopclntab t;

	CHECK(e);
	CHECK_INT(go_runtime__open(e, &t), -ENOENT);
	CHECK(!t.data);
	elfread__free(e);
}

/* The walk over the synthetic table, as dso__find_row answers it: the
 * special rows first, then the rows from the SP deltas. */
struct walk_ctx {
	const struct gopclntab *t;
	const struct sframe_table *st;
};

static int walk_find_row(void *ctx, uint64_t pc, struct sframe_row *row,
			 struct sframe_func *fn)
{
	struct walk_ctx *w = ctx;

	if (go_runtime__special_row(w->t, pc, row, fn))
		return 0;
	return sframe_table__find(w->st, pc, row, fn) ? -ESRCH : 0;
}

static size_t walk(struct walk_ctx *w, uint64_t pc, const uint64_t *stack, size_t words,
		   struct unwind_frame *frames, int *stop)
{
	const struct unwind_ops ops = { walk_find_row, NULL, w, NULL };
	struct sfprof_regs regs;

	memset(&regs, 0, sizeof(regs));
	regs.ip = pc;
	regs.sp = 0x7ffc0000;
	regs.bp = 0x1234; /* not a frame pointer into the stack */
	return unwind_stack(&regs, stack, words * 8, &ops, frames, 8, stop, NULL, NULL);
}

TEST(goruntime_walk_should_end_truncated_at_systemstack_and_complete_at_goexit)
{
	struct sframe_encode_opts o = { .version = 3, .abi = SFRAME_ABI_AMD64_LE,
					.fixed_ra_offset = -8 };
	struct sframe_table *st = NULL;
	struct unwind_frame f[8];
	struct gopclntab t;
	struct walk_ctx w;
	size_t len, n;
	uint8_t *b = load("go118.bin", &len);
	int stop;
	/* main.leaf at +0x20 (CFA = SP + 32), called from systemstack (on
	 * g0: above it, a word of .bss, as the user saw) */
	uint64_t s1[8] = { 0, 0, 0, TEXT + 0x50, 0x538bbf, TEXT + 0x1000, 0, 0 };
	/* main.leaf called from goexit+5 (its frame: CFA = SP + 8) */
	uint64_t s2[8] = { 0, 0, 0, TEXT + 0x85, 0x538bbf, 0, 0, 0 };
	/* main.leaf called from main.big+0x10 (CFA = SP + 4112): the walk
	 * needs 4 KiB more than the snapshot has */
	uint64_t s3[8] = { 0, 0, 0, TEXT + 0xd0, 0, 0, 0, 0 };

	CHECK_INT(gopclntab__parse(b, len, 0, &t), 0);
	CHECK_INT(go_runtime__derive_table(&t, &o, &st), 0);
	w.t = &t;
	w.st = st;
	n = walk(&w, TEXT + 0x20, s1, 8, f, &stop);
	CHECK_INT(n, 2);
	CHECK_U64(f[1].pc, TEXT + 0x50);
	CHECK_INT(stop, UNWIND_STOP_STACK_SWITCH);
	n = walk(&w, TEXT + 0x20, s2, 8, f, &stop);
	CHECK_INT(n, 2);
	CHECK_U64(f[1].pc, TEXT + 0x85);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	n = walk(&w, TEXT + 0x20, s3, 8, f, &stop);
	CHECK_INT(n, 2);
	CHECK_INT(stop, UNWIND_STOP_SNAPSHOT);
	sframe_table__free(st);
	free(b);
}
