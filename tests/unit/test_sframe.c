// SPDX-License-Identifier: MIT
/*
 * SFrame library: lookups, malformed sections, errors, owned buffers,
 * the dump and v1 (the encoder: test_sframe_encode.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/sframe.h"
#include "sframe_tables.h"
#include "testlib.h"

TEST_MAIN()
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
