// SPDX-License-Identifier: MIT
/*
 * The SFrame unit tests' shared fixtures: rule and row builders and a
 * small AMD64 table (test_sframe.c, test_sframe_encode.c).
 */
#ifndef SFPROF_TEST_SFRAME_TABLES_H
#define SFPROF_TEST_SFRAME_TABLES_H

#include <string.h>

#include "unwind/sframe.h"

#define SP SFRAME_REG_AMD64_SP
#define BP SFRAME_REG_AMD64_BP
static inline struct sframe_rule rule(unsigned kind, unsigned reg, int32_t off)
{
	struct sframe_rule r = { .kind = kind, .reg = reg, .off = off };
	return r;
}

/* A default AMD64 row: CFA = reg + off, RA at CFA-8, FP at CFA+fp or not. */
static inline struct sframe_row amd64_row(uint32_t start, unsigned reg, int32_t off,
				   int has_fp, int32_t fp_off)
{
	struct sframe_row r = { .start = start };

	r.cfa = rule(SFRAME_RULE_REG, reg, off);
	r.ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	r.fp = has_fp ? rule(SFRAME_RULE_CFA_DEREF, 0, fp_off)
		      : rule(SFRAME_RULE_NONE, 0, 0);
	return r;
}

static const struct sframe_encode_opts amd64_v2 __attribute__((unused)) = {
	.version = 2, .abi = SFRAME_ABI_AMD64_LE, .fixed_ra_offset = -8,
	.section_vaddr = 0x2000,
};
static const struct sframe_encode_opts amd64_v3 __attribute__((unused)) = {
	.version = 3, .abi = SFRAME_ABI_AMD64_LE, .fixed_ra_offset = -8,
	.section_vaddr = 0x2000,
};

/*
 * A small AMD64 table: f1 at 0x1000 (size 0x20, 4 rows, the classic
 * push rbp; mov rbp,rsp; ... ; pop rbp), f2 at 0x1040 (size 0x10, first
 * row at +4), and a PLT at 0x1100 (PCMASK, 3 entries of 16 bytes).
 */
static struct sframe_func small_funcs[3] __attribute__((unused));
static struct sframe_row small_rows[8] __attribute__((unused));

static inline void small_table_init(void)
{
	struct sframe_row *r = small_rows;

	small_funcs[0] = (struct sframe_func){ .start = 0x1000, .size = 0x20,
					       .num_rows = 4 };
	r[0] = amd64_row(0, SP, 8, 0, 0);
	r[1] = amd64_row(1, SP, 16, 1, -16);
	r[2] = amd64_row(4, BP, 16, 1, -16);
	r[3] = amd64_row(0x1f, SP, 8, 1, -16);
	small_funcs[1] = (struct sframe_func){ .start = 0x1040, .size = 0x10,
					       .num_rows = 1 };
	r[4] = amd64_row(4, SP, 8, 0, 0);
	small_funcs[2] = (struct sframe_func){ .start = 0x1100, .size = 0x30,
					       .num_rows = 2,
					       .pc_type = SFRAME_PC_MASK,
					       .rep_size = 16 };
	r[5] = amd64_row(0, SP, 8, 0, 0);
	r[6] = amd64_row(11, SP, 16, 0, 0);
}

static inline int small_table(const struct sframe_encode_opts *o, void **buf,
		       size_t *len, struct sframe_table **t)
{
	int err;

	small_table_init();
	err = sframe_encode(o, small_funcs, 3, small_rows, 7, buf, len);
	if (err)
		return err;
	return sframe_table__new(*buf, *len, o->section_vaddr, t);
}

static inline int rows_equal(const struct sframe_row *a, const struct sframe_row *b)
{
	return !memcmp(a, b, sizeof(*a));
}


#endif
