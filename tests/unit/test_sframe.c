// SPDX-License-Identifier: MIT
/*
 * SFrame library: lookups, malformed sections, the encoder and its
 * round trip (random tables -> encode -> decode -> same rows).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe.h"
#include "testlib.h"

TEST_MAIN()

#define SP SFRAME_REG_AMD64_SP
#define BP SFRAME_REG_AMD64_BP

static struct sframe_rule rule(unsigned kind, unsigned reg, int32_t off)
{
	struct sframe_rule r = { .kind = kind, .reg = reg, .off = off };
	return r;
}

/* A default AMD64 row: CFA = reg + off, RA at CFA-8, FP at CFA+fp or not. */
static struct sframe_row amd64_row(uint32_t start, unsigned reg, int32_t off,
				   int has_fp, int32_t fp_off)
{
	struct sframe_row r = { .start = start };

	r.cfa = rule(SFRAME_RULE_REG, reg, off);
	r.ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	r.fp = has_fp ? rule(SFRAME_RULE_CFA_DEREF, 0, fp_off)
		      : rule(SFRAME_RULE_NONE, 0, 0);
	return r;
}

static const struct sframe_encode_opts amd64_v2 = {
	.version = 2, .abi = SFRAME_ABI_AMD64_LE, .fixed_ra_offset = -8,
	.section_vaddr = 0x2000,
};
static const struct sframe_encode_opts amd64_v3 = {
	.version = 3, .abi = SFRAME_ABI_AMD64_LE, .fixed_ra_offset = -8,
	.section_vaddr = 0x2000,
};

/*
 * A small AMD64 table: f1 at 0x1000 (size 0x20, 4 rows, the classic
 * push rbp; mov rbp,rsp; ... ; pop rbp), f2 at 0x1040 (size 0x10, first
 * row at +4), and a PLT at 0x1100 (PCMASK, 3 entries of 16 bytes).
 */
static struct sframe_func small_funcs[3];
static struct sframe_row small_rows[8];

static void small_table_init(void)
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

static int small_table(const struct sframe_encode_opts *o, void **buf,
		       size_t *len, struct sframe_table **t)
{
	int err;

	small_table_init();
	err = sframe_encode(o, small_funcs, 3, small_rows, 7, buf, len);
	if (err)
		return err;
	return sframe_table__new(*buf, *len, o->section_vaddr, t);
}

static int rows_equal(const struct sframe_row *a, const struct sframe_row *b)
{
	return !memcmp(a, b, sizeof(*a));
}

TEST(find_should_return_the_row_at_every_boundary_and_between)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;
	struct sframe_row got;
	struct sframe_func fn;
	/* pc -> index into small_rows */
	static const struct {
		uint64_t pc;
		int row;
	} cases[] = {
		{ 0x1000, 0 }, { 0x1001, 1 }, { 0x1002, 1 }, { 0x1003, 1 },
		{ 0x1004, 2 }, { 0x1010, 2 }, { 0x101e, 2 }, { 0x101f, 3 },
		{ 0x1044, 4 }, { 0x104f, 4 },
	};

	CHECK_INT(small_table(&amd64_v2, &buf, &len, &t), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = sframe_table__find(t, cases[i].pc, &got, &fn);

		CHECK_MSG(err == 0, "find(0x%llx): expected 0, got %d",
			  (unsigned long long)cases[i].pc, err);
		CHECK_MSG(rows_equal(&got, &small_rows[cases[i].row]),
			  "find(0x%llx): expected row %d (start %u), got start %u",
			  (unsigned long long)cases[i].pc, cases[i].row,
			  small_rows[cases[i].row].start, got.start);
	}
	CHECK_INT(sframe_table__find(t, 0x1010, &got, &fn), 0);
	CHECK_U64(fn.start, 0x1000);
	CHECK_INT(fn.size, 0x20);
	CHECK_INT(fn.num_rows, 4);
	CHECK_INT(got.cfa.reg, BP);
	CHECK_INT(got.cfa.off, 16);
	CHECK_INT(got.fp.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(got.fp.off, -16);
	CHECK_INT(got.ra.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(got.ra.off, -8);
	sframe_table__free(t);
	free(buf);
}

TEST(find_should_return_enoent_outside_every_function)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;
	struct sframe_row got;
	static const uint64_t pcs[] = { 0, 0xfff, 0x1020, 0x103f, 0x1050,
					0x10ff, 0x1130, 0x1131, ~0ull };

	CHECK_INT(small_table(&amd64_v3, &buf, &len, &t), 0);
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++)
		CHECK_MSG(sframe_table__find(t, pcs[i], &got, NULL) == -ENOENT,
			  "find(0x%llx): expected -ENOENT",
			  (unsigned long long)pcs[i]);
	sframe_table__free(t);
	free(buf);
}

TEST(find_should_return_esrch_before_the_first_row)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;
	struct sframe_row got;

	CHECK_INT(small_table(&amd64_v2, &buf, &len, &t), 0);
	CHECK_INT(sframe_table__find(t, 0x1040, &got, NULL), -ESRCH);
	CHECK_INT(sframe_table__find(t, 0x1043, &got, NULL), -ESRCH);
	CHECK_INT(sframe_table__find(t, 0x1044, &got, NULL), 0);
	sframe_table__free(t);
	free(buf);
}

TEST(find_in_plt_entries_should_match_pc_modulo_the_block_size)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;
	struct sframe_row got;
	struct sframe_func fn;

	CHECK_INT(small_table(&amd64_v3, &buf, &len, &t), 0);
	for (uint64_t e = 0; e < 3; e++) {
		for (uint64_t o = 0; o < 16; o++) {
			uint64_t pc = 0x1100 + e * 16 + o;

			CHECK_INT(sframe_table__find(t, pc, &got, &fn), 0);
			CHECK_INT(fn.pc_type, SFRAME_PC_MASK);
			CHECK_INT(fn.rep_size, 16);
			CHECK_MSG(got.cfa.off == (o < 11 ? 8 : 16),
				  "plt pc 0x%llx: expected CFA sp+%d, got sp+%d",
				  (unsigned long long)pc, o < 11 ? 8 : 16,
				  got.cfa.off);
		}
	}
	sframe_table__free(t);
	free(buf);
}

TEST(table_accessors_should_report_the_header)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;
	struct sframe_func fn;
	struct sframe_row r;

	CHECK_INT(small_table(&amd64_v2, &buf, &len, &t), 0);
	CHECK_INT(sframe_table__version(t), 2);
	CHECK_INT(sframe_table__abi(t), SFRAME_ABI_AMD64_LE);
	CHECK_INT(sframe_table__flags(t), 5);
	CHECK_INT(sframe_table__fixed_ra_offset(t), -8);
	CHECK_INT(sframe_table__fixed_fp_offset(t), 0);
	CHECK_INT(sframe_table__nr_funcs(t), 3);
	CHECK_INT(sframe_table__nr_rows(t), 7);
	CHECK_INT(sframe_table__func(t, 3, &fn), -ENOENT);
	CHECK_INT(sframe_table__row(t, 0, 4, &r), -ENOENT);
	CHECK_INT(sframe_table__row(t, 0, 3, &r), 0);
	CHECK(rows_equal(&r, &small_rows[3]));
	sframe_table__free(t);
	sframe_table__free(NULL);
	free(buf);
}

/* ---- malformed sections -------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* the tests run little-endian */
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A valid v2 section of the small table, copied for mutation. */
static uint8_t *valid_v2(size_t *len)
{
	void *buf = NULL;

	small_table_init();
	if (sframe_encode(&amd64_v2, small_funcs, 3, small_rows, 7, &buf, len))
		return NULL;
	return buf;
}

static int decode(const uint8_t *b, size_t len)
{
	struct sframe_table *t = NULL;
	int err = sframe_table__new(b, len, 0x2000, &t);

	if (!err && !t)
		return -9999;
	if (err && t)
		return -9998;
	sframe_table__free(t);
	return err;
}

#define EXPECT_ERR(buf, len, e)                                              \
	do {                                                                 \
		int got__ = decode(buf, len);                                \
		CHECK_MSG(got__ == -(e), "expected %s (-%d), got %d (%s)",   \
			  #e, (int)(e), got__, sframe_strerror(got__));      \
	} while (0)

TEST(malformed_empty_and_truncated_headers_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);

	CHECK(b != NULL);
	CHECK_INT(decode(b, len), 0);
	EXPECT_ERR(b, 0, SFRAME_E_EMPTY);
	EXPECT_ERR(NULL, 0, SFRAME_E_EMPTY);
	for (size_t l = 1; l < 4; l++)
		EXPECT_ERR(b, l, SFRAME_E_TRUNCATED);
	for (size_t l = 4; l < 28; l++)
		EXPECT_ERR(b, l, SFRAME_E_TRUNCATED);
	/* auxiliary header longer than what is left */
	b[7] = 255;
	EXPECT_ERR(b, len, SFRAME_E_TRUNCATED);
	free(b);
}

TEST(malformed_magic_version_abi_and_flags_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);

	CHECK(b != NULL);
	b[0] ^= 0xff;
	EXPECT_ERR(b, len, SFRAME_E_MAGIC);
	b[0] ^= 0xff;
	b[2] = 0;
	EXPECT_ERR(b, len, SFRAME_E_VERSION);
	b[2] = 4;
	EXPECT_ERR(b, len, SFRAME_E_VERSION);
	b[2] = 2;
	b[4] = 0;
	EXPECT_ERR(b, len, SFRAME_E_ABI);
	b[4] = 5;
	EXPECT_ERR(b, len, SFRAME_E_ABI);
	b[4] = SFRAME_ABI_AMD64_LE;
	b[3] |= 0x40;
	EXPECT_ERR(b, len, SFRAME_E_HEADER);
	b[3] &= ~0x40;
	CHECK_INT(decode(b, len), 0);
	free(b);
}

TEST(malformed_offsets_past_the_end_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);
	uint32_t fdeoff, freoff, frelen;

	CHECK(b != NULL);
	fdeoff = get32(b + 20);
	freoff = get32(b + 24);
	frelen = get32(b + 16);
	put32(b + 20, (uint32_t)len); /* FDE sub-section past the end */
	EXPECT_ERR(b, len, SFRAME_E_TRUNCATED);
	put32(b + 20, fdeoff);
	put32(b + 24, 0xfffffff0); /* FRE sub-section past the end */
	EXPECT_ERR(b, len, SFRAME_E_TRUNCATED);
	put32(b + 24, freoff);
	put32(b + 16, frelen + 1); /* FRE length runs past the end */
	EXPECT_ERR(b, len, SFRAME_E_TRUNCATED);
	put32(b + 16, frelen);
	/* the last FRE cut short: section shortened, length adjusted */
	put32(b + 16, frelen - 1);
	EXPECT_ERR(b, len - 1, SFRAME_E_FRE);
	put32(b + 16, frelen);
	/* an FDE pointing its rows past the FRE sub-section */
	put32(b + 28 + 8, frelen + 1);
	EXPECT_ERR(b, len, SFRAME_E_FDE);
	free(b);
}

TEST(malformed_absurd_counts_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);

	CHECK(b != NULL);
	put32(b + 8, 0x10000000); /* num_fdes */
	EXPECT_ERR(b, len, SFRAME_E_COUNT);
	put32(b + 8, 3);
	put32(b + 12, 0xffffffff); /* num_fres */
	EXPECT_ERR(b, len, SFRAME_E_COUNT);
	put32(b + 12, 7);
	put32(b + 28 + 12, 0x7fffffff); /* one FDE's num_fres */
	EXPECT_ERR(b, len, SFRAME_E_COUNT);
	put32(b + 28 + 12, 4);
	put32(b + 12, 8); /* header total disagrees with the FDEs */
	EXPECT_ERR(b, len, SFRAME_E_HEADER);
	put32(b + 12, 7);
	CHECK_INT(decode(b, len), 0);
	free(b);
}

TEST(malformed_overlapping_sub_sections_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);

	CHECK(b != NULL);
	put32(b + 24, 20); /* FRE sub-section starts inside the FDE array */
	put32(b + 16, get32(b + 16) - 0); /* unchanged length still fits */
	EXPECT_ERR(b, len, SFRAME_E_OVERLAP);
	free(b);
}

TEST(malformed_unsorted_fdes_should_be_rejected_when_flagged_sorted)
{
	size_t len;
	uint8_t *b = valid_v2(&len);
	uint8_t tmp[20];
	int32_t s0, s1;

	CHECK(b != NULL);
	/* swap FDE 0 and 1, fixing their PC-relative start offsets */
	memcpy(&s0, b + 28, 4);
	memcpy(&s1, b + 48, 4);
	s0 -= 20;
	s1 += 20;
	memcpy(tmp, b + 28, 20);
	memmove(b + 28, b + 48, 20);
	memcpy(b + 48, tmp, 20);
	memcpy(b + 28, &s1, 4);
	memcpy(b + 48, &s0, 4);
	EXPECT_ERR(b, len, SFRAME_E_UNSORTED);

	/* Without the sorted flag the same table gets a sorted index. */
	b[3] &= ~1;
	{
		struct sframe_table *t = NULL;
		struct sframe_row r;
		struct sframe_func fn;

		CHECK_INT(sframe_table__new(b, len, 0x2000, &t), 0);
		CHECK_INT(sframe_table__func(t, 0, &fn), 0);
		CHECK_U64(fn.start, 0x1000);
		CHECK_INT(sframe_table__func(t, 1, &fn), 0);
		CHECK_U64(fn.start, 0x1040);
		CHECK_INT(sframe_table__find(t, 0x1004, &r, NULL), 0);
		CHECK(rows_equal(&r, &small_rows[2]));
		CHECK_INT(sframe_table__find(t, 0x1045, &r, NULL), 0);
		CHECK(rows_equal(&r, &small_rows[4]));
		sframe_table__free(t);
	}
	free(b);
}

TEST(malformed_unsorted_fres_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);
	size_t fre0;

	CHECK(b != NULL);
	/* f1's rows are addr1 FREs: start, info, words. Row 1 starts at 1,
	 * row 2 at 4: make row 2 start at 0. */
	fre0 = 28 + get32(b + 24) + get32(b + 28 + 8);
	CHECK_INT(b[fre0], 0);
	CHECK_INT(b[fre0 + 3], 1);
	CHECK_INT(b[fre0 + 3 + 2 + 2], 4);
	b[fre0 + 3 + 2 + 2] = 0;
	EXPECT_ERR(b, len, SFRAME_E_UNSORTED);
	free(b);
}

TEST(malformed_fde_and_fre_fields_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);
	size_t fre0;

	CHECK(b != NULL);
	b[28 + 16] |= 0x3; /* fre_type 3 does not exist */
	EXPECT_ERR(b, len, SFRAME_E_FDE);
	b[28 + 16] &= ~0x3;
	CHECK_INT(decode(b, len), 0);
	fre0 = 28 + get32(b + 24) + get32(b + 28 + 8);
	b[fre0 + 1] |= 3 << 5; /* data word size code 3 does not exist */
	EXPECT_ERR(b, len, SFRAME_E_FRE);
	b[fre0 + 1] &= ~(3 << 5);
	b[fre0 + 1] |= 15 << 1; /* 15 words: past the end of the FREs */
	EXPECT_ERR(b, len, SFRAME_E_FRE);
	free(b);
}

TEST(malformed_overlapping_functions_should_be_rejected)
{
	size_t len;
	uint8_t *b = valid_v2(&len);

	CHECK(b != NULL);
	put32(b + 28 + 4, 0x41); /* f1 now runs into f2 at 0x1040 */
	EXPECT_ERR(b, len, SFRAME_E_OVERLAP);
	put32(b + 28 + 4, 0x40); /* touching is fine */
	CHECK_INT(decode(b, len), 0);
	free(b);
}

TEST(malformed_v3_fde_type_and_attribute_should_be_rejected)
{
	void *buf = NULL;
	size_t len;
	uint8_t *b;
	size_t attr;

	small_table_init();
	CHECK_INT(sframe_encode(&amd64_v3, small_funcs, 3, small_rows, 7, &buf,
				&len),
		  0);
	b = buf;
	CHECK_INT(decode(b, len), 0);
	attr = 28 + get32(b + 24) + get32(b + 28 + 12);
	b[attr + 3] = 2; /* fde_type 2 is not defined */
	EXPECT_ERR(b, len, SFRAME_E_FDE);
	b[attr + 3] = 0;
	put32(b + 28 + 12, get32(b + 16) - 2); /* attribute record cut off */
	EXPECT_ERR(b, len, SFRAME_E_FDE);
	free(b);
}

TEST(strerror_should_name_every_error)
{
	for (int e = SFRAME_E_TRUNCATED; e <= SFRAME_E_EMPTY; e++) {
		const char *s = sframe_strerror(-e);

		CHECK(s && strstr(s, "sframe") &&
		      strcmp(s, sframe_strerror(-12345)) != 0);
		for (int f = SFRAME_E_TRUNCATED; f < e; f++)
			CHECK(strcmp(s, sframe_strerror(-f)) != 0);
	}
	CHECK(strstr(sframe_strerror(-12345), "unknown error"));
}

/* ---- encoder ------------------------------------------------------- */

TEST(encode_v2_should_reject_what_it_cannot_express)
{
	struct sframe_func f = { .start = 0x1000, .size = 16, .num_rows = 1 };
	struct sframe_row r = amd64_row(0, SP, 8, 0, 0);
	struct sframe_encode_opts o = amd64_v2;
	void *buf = NULL;
	size_t len;

	r.cfa = rule(SFRAME_RULE_REG_DEREF, BP, -8);
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -EINVAL);
	r.cfa = rule(SFRAME_RULE_REG, 10, 0); /* CFA from r10 */
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -EINVAL);
	r = amd64_row(0, SP, 8, 0, 0);
	r.ra = rule(SFRAME_RULE_REG, 2, 0);
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -EINVAL);
	r = amd64_row(0, SP, 8, 0, 0);
	o.version = 1;
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -EINVAL);
	o.version = 2;
	o.abi = SFRAME_ABI_S390X_BE;
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -EINVAL);
	o.abi = SFRAME_ABI_AMD64_LE;
	/* rows and functions disagree on the count */
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 0, &buf, &len), -EINVAL);
	/* overlapping functions */
	{
		struct sframe_func two[2] = { f, f };
		struct sframe_row rr[2] = { r, r };

		two[1].start = 0x1008;
		CHECK_INT(sframe_encode(&o, two, 2, rr, 2, &buf, &len), -EINVAL);
	}
	/* PC-relative start beyond 32 bits */
	f.start = 0x300000000ull;
	CHECK_INT(sframe_encode(&o, &f, 1, &r, 1, &buf, &len), -ERANGE);
	CHECK(buf == NULL);
}

TEST(encode_v3_should_write_flexible_fdes_for_drap_and_register_rules)
{
	/* The gas test "esc-expr-1" shape: CFA = r10, then CFA = *(rbp-8),
	 * FP = *(rbp+0), and RA kept in r2 in a second function. */
	struct sframe_func f[2] = {
		{ .start = 0x401000, .size = 0x20, .num_rows = 3 },
		{ .start = 0x401020, .size = 8, .num_rows = 2 },
	};
	struct sframe_row r[5];
	struct sframe_table *t = NULL;
	struct sframe_func fn;
	struct sframe_row got;
	void *buf = NULL;
	size_t len;
	char *dump = NULL;
	size_t dlen = 0;
	FILE *mf;

	r[0] = amd64_row(0, SP, 8, 0, 0);
	r[1] = amd64_row(9, 10, 0, 0, 0);
	r[2] = amd64_row(0x1a, 0, 0, 0, 0);
	r[2].cfa = rule(SFRAME_RULE_REG_DEREF, BP, -8);
	r[2].fp = rule(SFRAME_RULE_REG_DEREF, BP, 0);
	r[3] = amd64_row(0, SP, 8, 0, 0);
	r[4] = amd64_row(4, SP, 0, 0, 0);
	r[4].ra = rule(SFRAME_RULE_REG, 2, 0);
	CHECK_INT(sframe_encode(&amd64_v3, f, 2, r, 5, &buf, &len), 0);
	CHECK_INT(sframe_table__new(buf, len, amd64_v3.section_vaddr, &t), 0);
	CHECK_INT(sframe_table__find(t, 0x40101b, &got, &fn), 0);
	CHECK(fn.flags & SFRAME_FUNC_FLEX);
	CHECK(rows_equal(&got, &r[2]));
	CHECK_INT(sframe_table__find(t, 0x401025, &got, &fn), 0);
	CHECK(rows_equal(&got, &r[4]));

	mf = open_memstream(&dump, &dlen);
	CHECK(mf != NULL);
	sframe_table__dump(t, NULL, mf);
	fclose(mf);
	CHECK_MSG(strstr(dump, "func idx [0]: pc = 0x401000, size = 32 bytes, "
			       "attr = \"F\"") != NULL,
		  "dump: %s", dump);
	CHECK_MSG(strstr(dump, "000000000040101a  (fp-8)    (fp+0)    U") !=
			  NULL,
		  "dump: %s", dump);
	CHECK_MSG(strstr(dump, "0000000000401024  sp+0      u         r2+0") !=
			  NULL,
		  "dump: %s", dump);
	free(dump);
	sframe_table__free(t);
	free(buf);
}

TEST(encode_should_write_ra_undefined_rows)
{
	struct sframe_func f = { .start = 0x401000, .size = 6, .num_rows = 2 };
	struct sframe_row r[2], got;
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len;

	r[0] = amd64_row(0, SP, 8, 0, 0);
	memset(&r[1], 0, sizeof(r[1]));
	r[1].start = 5;
	r[1].ra = rule(SFRAME_RULE_UNDEFINED, 0, 0);
	for (int v = 2; v <= 3; v++) {
		struct sframe_encode_opts o = amd64_v2;

		o.version = v;
		CHECK_INT(sframe_encode(&o, &f, 1, r, 2, &buf, &len), 0);
		CHECK_INT(sframe_table__new(buf, len, o.section_vaddr, &t), 0);
		CHECK_INT(sframe_table__find(t, 0x401005, &got, NULL), 0);
		CHECK_INT(got.ra.kind, SFRAME_RULE_UNDEFINED);
		CHECK_INT(got.cfa.kind, SFRAME_RULE_NONE);
		CHECK_INT(sframe_table__find(t, 0x401004, &got, NULL), 0);
		CHECK(rows_equal(&got, &r[0]));
		sframe_table__free(t);
		free(buf);
		t = NULL;
		buf = NULL;
	}
}

TEST(encode_should_leave_no_rule_ranges_uncovered)
{
	/* rows: +0 ok, +4 NO_RULE, +8 ok, +12 NO_RULE (to the end). */
	struct sframe_func f = { .start = 0x5000, .size = 16, .num_rows = 4 };
	struct sframe_row r[4], got;
	struct sframe_table *t = NULL;
	struct sframe_func fn;
	void *buf = NULL;
	size_t len;

	r[0] = amd64_row(0, SP, 8, 0, 0);
	r[1] = amd64_row(4, SP, 8, 0, 0);
	r[1].cfa = rule(SFRAME_RULE_NO_RULE, 0, 0);
	r[2] = amd64_row(8, SP, 24, 1, -16);
	r[3] = amd64_row(12, SP, 8, 0, 0);
	r[3].fp = rule(SFRAME_RULE_NO_RULE, 0, 0);
	for (int v = 2; v <= 3; v++) {
		struct sframe_encode_opts o = amd64_v2;

		o.version = v;
		CHECK_INT(sframe_encode(&o, &f, 1, r, 4, &buf, &len), 0);
		CHECK_INT(sframe_table__new(buf, len, o.section_vaddr, &t), 0);
		CHECK_INT(sframe_table__nr_funcs(t), 2);
		for (uint64_t pc = 0x5000; pc < 0x5010; pc++) {
			int err = sframe_table__find(t, pc, &got, &fn);
			int want = (pc >= 0x5004 && pc < 0x5008) || pc >= 0x500c
					   ? -ENOENT
					   : 0;

			CHECK_MSG(err == want, "v%d pc 0x%llx: expected %d got %d",
				  v, (unsigned long long)pc, want, err);
			if (err)
				continue;
			CHECK_INT(got.cfa.off, pc < 0x5004 ? 8 : 24);
			CHECK_U64(fn.start + got.start, pc < 0x5004 ? 0x5000 : 0x5008);
		}
		sframe_table__free(t);
		free(buf);
		t = NULL;
		buf = NULL;
	}
}

TEST(encode_aarch64_big_endian_should_round_trip)
{
	struct sframe_encode_opts o = { .version = 2,
					.abi = SFRAME_ABI_AARCH64_BE,
					.section_vaddr = 0x400100 };
	struct sframe_func f = { .start = 0x4000b0, .size = 20, .num_rows = 3,
				 .flags = SFRAME_FUNC_PAUTH_B };
	struct sframe_row r[3], got;
	struct sframe_table *t = NULL;
	struct sframe_func fn;
	void *buf = NULL;
	size_t len;

	memset(r, 0, sizeof(r));
	r[0].cfa = rule(SFRAME_RULE_REG, 31, 0);
	r[1].start = 4;
	r[1].flags = SFRAME_ROW_MANGLED_RA;
	r[1].cfa = rule(SFRAME_RULE_REG, 31, 0);
	r[2].start = 8;
	r[2].flags = SFRAME_ROW_MANGLED_RA;
	r[2].cfa = rule(SFRAME_RULE_REG, 29, 16);
	r[2].ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	r[2].fp = rule(SFRAME_RULE_CFA_DEREF, 0, -16);
	CHECK_INT(sframe_encode(&o, &f, 1, r, 3, &buf, &len), 0);
	CHECK_INT(((uint8_t *)buf)[0], 0xde); /* big-endian magic */
	CHECK_INT(sframe_table__new(buf, len, o.section_vaddr, &t), 0);
	CHECK_INT(sframe_table__abi(t), SFRAME_ABI_AARCH64_BE);
	for (int j = 0; j < 3; j++) {
		CHECK_INT(sframe_table__find(t, 0x4000b0 + r[j].start, &got, &fn),
			  0);
		CHECK(rows_equal(&got, &r[j]));
	}
	CHECK(fn.flags & SFRAME_FUNC_PAUTH_B);
	sframe_table__free(t);
	free(buf);
}

/* ---- property test: random tables round trip -------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (uint32_t)(rng_state % n) : 0;
}

static int32_t rnd_off(void)
{
	switch (rnd(4)) {
	case 0: return (int32_t)rnd(200) - 100;
	case 1: return (int32_t)rnd(60000) - 30000;
	case 2: return (int32_t)(rnd(0x7fffffff)) - 0x3fffffff;
	default: return (int32_t)rnd(32) * 8;
	}
}

/* A random row the given ABI/version can express (canonical form, as the
 * decoder produces it). no_rule: may return NO_RULE rows. */
static struct sframe_row rnd_row(const struct sframe_encode_opts *o,
				 uint32_t start, int no_rule)
{
	int amd64 = o->abi == SFRAME_ABI_AMD64_LE;
	unsigned sp = amd64 ? SP : 31, fp = amd64 ? BP : 29;
	struct sframe_row r;

	memset(&r, 0, sizeof(r));
	r.start = start;
	if (rnd(12) == 0) {
		r.ra = rule(SFRAME_RULE_UNDEFINED, 0, 0);
		return r;
	}
	r.cfa = rule(SFRAME_RULE_REG, rnd(2) ? sp : fp, rnd_off());
	if (amd64)
		r.ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	else if (rnd(2))
		r.ra = rule(SFRAME_RULE_CFA_DEREF, 0, rnd_off());
	if (rnd(2) && (amd64 || r.ra.kind != SFRAME_RULE_NONE))
		r.fp = rule(SFRAME_RULE_CFA_DEREF, 0, rnd_off());
	if (!amd64 && rnd(3) == 0)
		r.flags = SFRAME_ROW_MANGLED_RA;
	if (o->version == 3 && rnd(4) == 0) {
		/* something only a flexible FDE can say */
		switch (rnd(5)) {
		case 0: r.cfa = rule(SFRAME_RULE_REG, rnd(32), rnd_off()); break;
		case 1: r.cfa = rule(SFRAME_RULE_REG_DEREF, rnd(255), rnd_off()); break;
		case 2: r.ra = rule(SFRAME_RULE_REG, rnd(40), rnd_off()); break;
		case 3: r.fp = rule(SFRAME_RULE_REG_DEREF, rnd(40), rnd_off()); break;
		default:
			r.ra = rule(SFRAME_RULE_REG_DEREF, rnd(40), rnd_off());
			r.fp = rule(SFRAME_RULE_REG, rnd(40), rnd_off());
		}
	}
	if (no_rule && rnd(6) == 0) {
		switch (rnd(3)) {
		case 0: r.cfa = rule(SFRAME_RULE_NO_RULE, 0, 0); break;
		case 1: r.ra = rule(SFRAME_RULE_NO_RULE, 0, 0); break;
		default: r.fp = rule(SFRAME_RULE_NO_RULE, 0, 0); break;
		}
	}
	return r;
}

struct rnd_table {
	struct sframe_func *f;
	struct sframe_row *r;
	size_t nf, nr;
};

static void rnd_table(const struct sframe_encode_opts *o, int no_rule,
		      struct rnd_table *tb)
{
	size_t nf = 1 + rnd(40), cap = 0;
	uint64_t pc = 0x400000 + rnd(0x10000);

	tb->f = calloc(nf, sizeof(*tb->f));
	tb->r = NULL;
	tb->nf = nf;
	tb->nr = 0;
	for (size_t i = 0; i < nf; i++) {
		struct sframe_func *f = &tb->f[i];
		uint32_t nrows = rnd(10) == 0 ? 0 : 1 + rnd(rnd(4) ? 8 : 300);
		uint32_t start = rnd(3) == 0 ? rnd(4) : 0;

		pc += rnd(3) == 0 ? rnd(100) : 0;
		f->start = pc;
		if (!no_rule && rnd(8) == 0) {
			f->pc_type = SFRAME_PC_MASK;
			f->rep_size = 16;
			nrows = 1 + rnd(3);
		}
		if (o->version == 3 && rnd(5) == 0)
			f->flags |= SFRAME_FUNC_SIGNAL;
		if (o->abi != SFRAME_ABI_AMD64_LE && rnd(4) == 0)
			f->flags |= SFRAME_FUNC_PAUTH_B;
		f->num_rows = nrows;
		if (tb->nr + nrows > cap) {
			cap = (tb->nr + nrows) * 2;
			tb->r = realloc(tb->r, cap * sizeof(*tb->r));
		}
		for (uint32_t j = 0; j < nrows; j++) {
			if (f->pc_type == SFRAME_PC_MASK)
				start = j * 5;
			else if (j)
				start += rnd(4) == 0 ? 1 + rnd(70000) : 1 + rnd(20);
			tb->r[tb->nr++] = rnd_row(o, start, no_rule);
		}
		f->size = (f->pc_type == SFRAME_PC_MASK ? 16 * (1 + rnd(4))
							: start + 1 + rnd(30));
		pc += f->size;
	}
	/* shuffle the functions: the encoder must sort them */
	for (size_t i = nf; i > 1; i--) {
		size_t j = rnd((uint32_t)i), r0i = 0, r0j = 0;

		(void)r0i;
		(void)r0j;
		if (j == i - 1)
			continue;
		/* only swap when both have the same row count, so the rows
		 * stay in function order */
		if (tb->f[j].num_rows == tb->f[i - 1].num_rows) {
			size_t a = 0, b = 0;
			struct sframe_func tf;

			for (size_t k = 0; k < j; k++)
				a += tb->f[k].num_rows;
			for (size_t k = 0; k < i - 1; k++)
				b += tb->f[k].num_rows;
			for (uint32_t k = 0; k < tb->f[j].num_rows; k++) {
				struct sframe_row tr = tb->r[a + k];

				tb->r[a + k] = tb->r[b + k];
				tb->r[b + k] = tr;
			}
			tf = tb->f[j];
			tb->f[j] = tb->f[i - 1];
			tb->f[i - 1] = tf;
		}
	}
}

static const struct sframe_func *find_src(const struct rnd_table *tb,
					  uint64_t start, size_t *row0)
{
	size_t r0 = 0;

	for (size_t i = 0; i < tb->nf; i++) {
		if (tb->f[i].start == start) {
			*row0 = r0;
			return &tb->f[i];
		}
		r0 += tb->f[i].num_rows;
	}
	return NULL;
}

static void round_trip(const struct sframe_encode_opts *o, int iters)
{
	for (int it = 0; it < iters; it++) {
		struct rnd_table tb;
		struct sframe_table *t = NULL;
		void *buf = NULL;
		size_t len;
		int err;

		rnd_table(o, 0, &tb);
		err = sframe_encode(o, tb.f, tb.nf, tb.r, tb.nr, &buf, &len);
		CHECK_MSG(err == 0, "v%d iteration %d: encode: %d", o->version,
			  it, err);
		err = sframe_table__new(buf, len, o->section_vaddr, &t);
		CHECK_MSG(err == 0, "v%d iteration %d: decode: %s", o->version,
			  it, sframe_strerror(err));
		CHECK_INT(sframe_table__nr_funcs(t), tb.nf);
		CHECK_INT(sframe_table__nr_rows(t), tb.nr);
		for (size_t i = 0; i < tb.nf; i++) {
			struct sframe_func got;
			const struct sframe_func *src;
			size_t r0;

			CHECK_INT(sframe_table__func(t, i, &got), 0);
			src = find_src(&tb, got.start, &r0);
			CHECK_MSG(src, "v%d: decoded function 0x%llx not in source",
				  o->version, (unsigned long long)got.start);
			CHECK_INT(got.size, src->size);
			CHECK_INT(got.num_rows, src->num_rows);
			CHECK_INT(got.pc_type, src->pc_type);
			CHECK_INT(got.rep_size, src->pc_type ? src->rep_size : 0);
			CHECK_INT(got.flags & ~SFRAME_FUNC_FLEX, src->flags);
			for (uint32_t j = 0; j < got.num_rows; j++) {
				struct sframe_row r;
				const struct sframe_row *s = &tb.r[r0 + j];

				CHECK_INT(sframe_table__row(t, i, j, &r), 0);
				CHECK_MSG(rows_equal(&r, s),
					  "v%d it %d func 0x%llx row %u: start %u/%u "
					  "cfa %d:%d%+d/%d:%d%+d ra %d:%d%+d/%d:%d%+d "
					  "fp %d:%d%+d/%d:%d%+d flags %u/%u",
					  o->version, it,
					  (unsigned long long)got.start, j,
					  r.start, s->start, r.cfa.kind,
					  r.cfa.reg, r.cfa.off, s->cfa.kind,
					  s->cfa.reg, s->cfa.off, r.ra.kind,
					  r.ra.reg, r.ra.off, s->ra.kind,
					  s->ra.reg, s->ra.off, r.fp.kind,
					  r.fp.reg, r.fp.off, s->fp.kind,
					  s->fp.reg, s->fp.off, r.flags,
					  s->flags);
			}
		}
		sframe_table__free(t);
		free(buf);
		free(tb.f);
		free(tb.r);
	}
}

TEST(encode_v2_random_tables_should_decode_to_the_same_rows)
{
	struct sframe_encode_opts aarch = { .version = 2,
					    .abi = SFRAME_ABI_AARCH64_LE,
					    .section_vaddr = 0x8000 };

	round_trip(&amd64_v2, 300);
	if (test__failed)
		return;
	round_trip(&aarch, 100);
}

TEST(encode_v3_random_tables_should_decode_to_the_same_rows)
{
	struct sframe_encode_opts aarch = { .version = 3,
					    .abi = SFRAME_ABI_AARCH64_BE,
					    .section_vaddr = 0x8000 };

	round_trip(&amd64_v3, 300);
	if (test__failed)
		return;
	round_trip(&aarch, 100);
}

/* With NO_RULE rows the functions split: compare lookups at every PC. */
static void round_trip_by_pc(const struct sframe_encode_opts *o, int iters)
{
	for (int it = 0; it < iters; it++) {
		struct rnd_table tb;
		struct sframe_table *t = NULL;
		void *buf = NULL;
		size_t len, r0 = 0;
		int err;

		rnd_table(o, 1, &tb);
		err = sframe_encode(o, tb.f, tb.nf, tb.r, tb.nr, &buf, &len);
		CHECK_MSG(err == 0, "v%d iteration %d: encode: %d", o->version,
			  it, err);
		err = sframe_table__new(buf, len, o->section_vaddr, &t);
		CHECK_MSG(err == 0, "v%d: decode: %s", o->version,
			  sframe_strerror(err));
		for (size_t i = 0; i < tb.nf; r0 += tb.f[i].num_rows, i++) {
			const struct sframe_func *f = &tb.f[i];
			uint32_t step = f->size > 4096 ? f->size / 2048 : 1;

			for (uint32_t off = 0; off < f->size; off += step) {
				const struct sframe_row *want = NULL;
				struct sframe_row got;
				struct sframe_func fn;
				int want_err;

				for (uint32_t j = 0; j < f->num_rows; j++)
					if (tb.r[r0 + j].start <= off)
						want = &tb.r[r0 + j];
				if (!want)
					want_err = f->num_rows &&
							   tb.r[r0].cfa.kind !=
								   SFRAME_RULE_NO_RULE &&
							   tb.r[r0].ra.kind !=
								   SFRAME_RULE_NO_RULE &&
							   tb.r[r0].fp.kind !=
								   SFRAME_RULE_NO_RULE
						   ? -ESRCH
						   : f->num_rows ? -ENOENT : -ESRCH;
				else if (want->ra.kind != SFRAME_RULE_UNDEFINED &&
					 (want->cfa.kind == SFRAME_RULE_NO_RULE ||
					  want->ra.kind == SFRAME_RULE_NO_RULE ||
					  want->fp.kind == SFRAME_RULE_NO_RULE))
					want_err = -ENOENT;
				else
					want_err = 0;
				err = sframe_table__find(t, f->start + off, &got,
							 &fn);
				CHECK_MSG(err == want_err,
					  "v%d it %d pc 0x%llx: expected %d got %d",
					  o->version, it,
					  (unsigned long long)(f->start + off),
					  want_err, err);
				if (err)
					continue;
				CHECK_U64(fn.start + got.start,
					  f->start + want->start);
				got.start = want->start;
				CHECK_MSG(rows_equal(&got, want),
					  "v%d it %d pc 0x%llx: other row",
					  o->version, it,
					  (unsigned long long)(f->start + off));
			}
		}
		sframe_table__free(t);
		free(buf);
		free(tb.f);
		free(tb.r);
	}
}

TEST(encode_random_tables_with_no_rule_rows_should_find_the_same_rows)
{
	round_trip_by_pc(&amd64_v2, 150);
	if (test__failed)
		return;
	round_trip_by_pc(&amd64_v3, 150);
}

/* Large tables go through the bucket index: check it against a scan. */
TEST(find_on_large_sparse_tables_should_match_a_linear_scan)
{
	for (int round = 0; round < 4; round++) {
		size_t nf = round == 0 ? 64 : round == 1 ? 3000 : 20000;
		struct sframe_func *f = calloc(nf, sizeof(*f));
		struct sframe_row *r = calloc(nf * 2, sizeof(*r));
		struct sframe_table *t = NULL;
		uint64_t pc = round == 3 ? 0xffffff0000000000ull : 0x1000;
		void *buf = NULL;
		size_t len;

		CHECK(f && r);
		for (size_t i = 0; i < nf; i++) {
			/* gaps from none to huge, so buckets hold 0 to many */
			uint32_t g = rnd(10);

			pc += g < 5 ? 0 : g < 8 ? rnd(64) : g < 9 ? rnd(1 << 20) : 0;
			if (round == 3 && i == nf / 2)
				pc += 1ull << 38;
			f[i].start = pc;
			f[i].size = 1 + rnd(200);
			f[i].num_rows = 2;
			r[2 * i] = amd64_row(rnd(2), SP, 8, 0, 0);
			r[2 * i + 1] = amd64_row(r[2 * i].start + 1 + rnd(f[i].size),
						 BP, 16, 1, -16);
			if (r[2 * i + 1].start > f[i].size)
				r[2 * i + 1].start = f[i].size;
			pc += f[i].size;
		}
		CHECK_INT(sframe_encode(&amd64_v3, f, nf, r, 2 * nf, &buf, &len), 0);
		CHECK_INT(sframe_table__new(buf, len, amd64_v3.section_vaddr, &t), 0);
		for (int k = 0; k < 200000; k++) {
			size_t i = rnd((uint32_t)nf);
			uint64_t probe;
			int want = -ENOENT, got;
			struct sframe_row row;
			struct sframe_func fn;
			size_t lo = 0, hi = nf;

			switch (k % 4) {
			case 0: probe = f[i].start; break;
			case 1: probe = f[i].start - 1; break;
			case 2: probe = f[i].start + f[i].size; break;
			default: probe = f[i].start + rnd(f[i].size); break;
			}
			/* reference: binary search by hand over the source */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (f[mid].start <= probe)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo && probe - f[lo - 1].start < f[lo - 1].size) {
				const struct sframe_func *s = &f[lo - 1];
				uint64_t off = probe - s->start;

				want = off < r[2 * (lo - 1)].start ? -ESRCH : 0;
				(void)s;
			}
			got = sframe_table__find(t, probe, &row, &fn);
			CHECK_MSG(got == want,
				  "round %d: find(0x%llx): expected %d, got %d",
				  round, (unsigned long long)probe, want, got);
			if (!got)
				CHECK_U64(fn.start, f[lo - 1].start);
		}
		sframe_table__free(t);
		free(buf);
		free(f);
		free(r);
	}
}

TEST(new_owned_should_free_the_buffer_on_success_and_on_error)
{
	struct sframe_table *t = (struct sframe_table *)1;
	void *buf = NULL;
	size_t len;
	uint8_t *junk = malloc(64);

	/* error: the buffer is freed here (LeakSanitizer checks in make check) */
	CHECK(junk != NULL);
	memset(junk, 0x5a, 64);
	CHECK_INT(sframe_table__new_owned(junk, 64, 0, &t), -SFRAME_E_MAGIC);
	CHECK(t == NULL);
	/* success: the table owns it until sframe_table__free() */
	small_table_init();
	CHECK_INT(sframe_encode(&amd64_v3, small_funcs, 3, small_rows, 7, &buf,
				&len),
		  0);
	CHECK_INT(sframe_table__new_owned(buf, len, amd64_v3.section_vaddr, &t),
		  0);
	CHECK_INT(sframe_table__nr_funcs(t), 3);
	sframe_table__free(t);
}

TEST(dump_with_a_name_should_print_objdumps_file_line_and_mask_marker)
{
	struct sframe_table *t = NULL;
	void *buf = NULL;
	size_t len, dlen = 0;
	char *dump = NULL;
	FILE *mf;

	CHECK_INT(small_table(&amd64_v2, &buf, &len, &t), 0);
	mf = open_memstream(&dump, &dlen);
	CHECK(mf != NULL);
	CHECK_INT(sframe_table__dump(t, "a.out", mf), 0);
	fclose(mf);
	CHECK_MSG(!strncmp(dump, "\na.out:     file format elf64-x86-64\n\n"
				 "Contents of the SFrame section .sframe:\n",
			   77),
		  "dump starts: %.80s", dump);
	CHECK_MSG(strstr(dump, "    Flags: SFRAME_F_FDE_SORTED,\n"
			       "           SFRAME_F_FDE_FUNC_START_PCREL\n"
			       "    CFA fixed RA offset: -8\n"
			       "    Num FDEs: 3\n    Num FREs: 7\n") != NULL,
		  "header: %s", dump);
	CHECK_MSG(strstr(dump, "    func idx [2]: pc = 0x1100, size = 48 bytes\n"
			       "    STARTPC[m]      CFA       FP        RA           \n"
			       "    0000000000000000  sp+8      u         f            \n"
			       "    000000000000000b  sp+16     u         f            \n") !=
			  NULL,
		  "plt: %s", dump);
	CHECK_MSG(strstr(dump, "    0000000000001004  fp+16     c-16      f            \n"),
		  "fp row: %s", dump);
	free(dump);
	sframe_table__free(t);
	free(buf);
}

/*
 * binutils 2.40's ld writes the x86-64 .plt entries as one v1 PCMASK FDE.
 * v1 FDEs have no rep_size field: the block is the 16-byte PLT entry, so
 * the row at +11 (after the push) must apply in every entry, not only the
 * first.
 */
TEST(v1_pcmask_fde_should_repeat_every_16_bytes)
{
	uint8_t b[28 + 17 + 6];
	struct sframe_table *t = NULL;
	struct sframe_row r;
	struct sframe_func fn;
	const uint64_t sec = 0x2000, plt = 0x1030;
	static const struct {
		uint64_t pc;
		int32_t cfa_off;
	} want[] = {
		{ plt + 0, 8 },	      { plt + 10, 8 },	    { plt + 11, 16 },
		{ plt + 15, 16 },     { plt + 16 + 5, 8 },  { plt + 16 + 11, 16 },
		{ plt + 32 + 2, 8 },  { plt + 32 + 12, 16 },
	};

	memset(b, 0, sizeof(b));
	b[0] = 0xe2; /* magic 0xdee2, little-endian */
	b[1] = 0xde;
	b[2] = 1;    /* version 1 */
	b[3] = 1;    /* SFRAME_F_FDE_SORTED */
	b[4] = SFRAME_ABI_AMD64_LE;
	b[5] = 0;		 /* fixed FP offset */
	b[6] = (uint8_t)-8;	 /* fixed RA offset */
	b[7] = 0;		 /* aux header */
	put32(b + 8, 1);	 /* FDEs */
	put32(b + 12, 2);	 /* FREs */
	put32(b + 16, 6);	 /* FRE bytes */
	put32(b + 20, 0);	 /* FDE offset */
	put32(b + 24, 17);	 /* FRE offset */
	put32(b + 28, (uint32_t)(int32_t)(plt - sec)); /* start, section-relative */
	put32(b + 32, 48);	 /* three entries */
	put32(b + 36, 0);	 /* first FRE */
	put32(b + 40, 2);	 /* FREs */
	b[44] = 0x10;		 /* PCMASK, 1-byte FRE start addresses */
	/* FREs: start, info (SP base, one 1-byte offset), CFA offset */
	b[45] = 0;
	b[46] = 3;
	b[47] = 8;
	b[48] = 11;
	b[49] = 3;
	b[50] = 16;

	CHECK_INT(sframe_table__new(b, sizeof(b), sec, &t), 0);
	CHECK_INT(sframe_table__version(t), 1);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int err = sframe_table__find(t, want[i].pc, &r, &fn);

		CHECK_MSG(err == 0, "pc 0x%llx: find returned %d",
			  (unsigned long long)want[i].pc, err);
		CHECK_INT(fn.pc_type, SFRAME_PC_MASK);
		CHECK_INT(fn.rep_size, 16);
		CHECK_INT(r.cfa.kind, SFRAME_RULE_REG);
		CHECK_INT(r.cfa.reg, SFRAME_REG_AMD64_SP);
		CHECK_MSG(r.cfa.off == want[i].cfa_off,
			  "pc 0x%llx: expected CFA sp+%d, got sp+%d",
			  (unsigned long long)want[i].pc, want[i].cfa_off,
			  r.cfa.off);
	}
	CHECK_INT(sframe_table__find(t, plt + 48, &r, &fn), -ENOENT);
	sframe_table__free(t);
}
