// SPDX-License-Identifier: MIT
/*
 * CFI: PLT synthesis, malformed and rejected entries, the SFrame encoding
 * of a derived table and the input from a real ELF (the instruction and
 * rule tests: test_cfi.c, whose header says how rows are printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "cfi_builder.h"
#include "unwind/dwexpr.h"
#include "testlib.h"

TEST_MAIN()

static const uint8_t plt_ins[] = { 0x0e, 16, 0x46, 0x0e, 24, 0x4a, 0x0f, 11,
				   0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
				   0x33, 0x24, 0x22 };

TEST(cfi_plt_expression_becomes_a_pcmask_function)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1020, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[0].start, 0x1020);
	CHECK_INT(t.funcs[0].size, 16);
	CHECK_INT(t.funcs[0].pc_type, SFRAME_PC_INC);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -");
	CHECK_U64(t.funcs[1].start, 0x1030);
	CHECK_INT(t.funcs[1].size, 0x30);
	CHECK_INT(t.funcs[1].pc_type, SFRAME_PC_MASK);
	CHECK_INT(t.funcs[1].rep_size, 16);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @11 sp+16 c-8 -");
	CHECK_INT(st.pcmask_funcs, 1);
	cfi_table__release(&t);
}

TEST(cfi_misaligned_plt_expression_falls_back)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1024, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -; @16 norule");
	CHECK_INT(st.no_rule[CFI_NR_PLT_ALIGN], 1);
	cfi_table__release(&t);
}

TEST(cfi_plt_sections_without_cfi_get_known_rows)
{
	struct cfi_input in = { 0 };
	struct cfi_table t;
	struct cfi_stats st;
	in.plt[0] = (struct cfi_plt){ 0x1000, 0x40, 16, CFI_PLT_LAZY };
	in.plt[1] = (struct cfi_plt){ 0x1040, 0x20, 16, CFI_PLT_DIRECT };
	in.plt[2] = (struct cfi_plt){ 0x1060, 0x20, 8, CFI_PLT_UNKNOWN };
	in.nr_plt = 3;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -");
	CHECK_INT(t.funcs[1].pc_type, SFRAME_PC_MASK);
	CHECK_U64(t.funcs[1].start, 0x1010);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @11 sp+16 c-8 -");
	CHECK_U64(t.funcs[2].start, 0x1040);
	CHECK_STR(rows_of(&t, 2), "@0 sp+8 c-8 -");
	CHECK_INT(st.plt_synthesized, 2);
	cfi_table__release(&t);
	/* IBT layout: endbr64 first, the push ends at 9 */
	in.plt[0].kind = CFI_PLT_LAZY_IBT;
	in.nr_plt = 1;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @9 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_plt_with_cfi_is_not_synthesized_again)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	in.plt[0] = (struct cfi_plt){ 0x1000, 0x40, 16, CFI_PLT_LAZY };
	in.nr_plt = 1;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_INT(st.plt_synthesized, 0);
	cfi_table__release(&t);
}

/* One malformed FDE between two good ones: rejected with its reason. */
static void check_rejected(const uint8_t *ins, size_t ilen, int reason,
			   uint64_t range)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 16, NULL, 0);
	no_pad = 1;
	eh_fde(&s, c, 0x2000, range, ins, ilen);
	no_pad = 0;
	eh_fde(&s, c, 0x3000, 16, NULL, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_MSG(st.reject[reason] == 1, "reason %s: count %llu", cfi_reject__name(reason),
		  (unsigned long long)st.reject[reason]);
	CHECK_INT(st.fdes_rejected, 1);
	CHECK_INT(st.fdes_converted, 2);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[1].start, 0x3000);
	cfi_table__release(&t);
}

#define REJECTED(reason, range, ...)                                            \
	do {                                                                    \
		static const uint8_t b_[] = { __VA_ARGS__ };                    \
		check_rejected(b_, sizeof(b_), reason, range);                  \
		if (test__failed)                                               \
			return;                                                 \
	} while (0)

TEST(cfi_rejects_malformed_fdes_and_keeps_the_others)
{
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0e);			/* operand missing */
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0f, 9, 0x77);		/* block past the end */
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0e, 0x80);		/* LEB128 runs off */
	REJECTED(CFI_REJ_OPCODE, 16, 0x3f);			/* unknown opcode */
	REJECTED(CFI_REJ_OPCODE, 16, 0x2d);			/* GNU_window_save (SPARC) */
	REJECTED(CFI_REJ_STATE_STACK, 16, 0x0b);		/* restore_state, empty */
	REJECTED(CFI_REJ_LOCATION, 16, 0x51);			/* advance past the end */
	REJECTED(CFI_REJ_LOCATION, 16, 0x44, 0x01, 0xd8, 0xff, 0xff, 0xff); /* set_loc backwards */
	REJECTED(CFI_REJ_CFA, 16, 0x0f, 1, 0x31, 0x0e, 8);	/* offset on an expression */
	REJECTED(CFI_REJ_CFA, 16, 0x0f, 1, 0x31, 0x0d, 6);
}

TEST(cfi_rejects_ranges_over_4gib)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	static const uint8_t enc = 0x00; /* absptr: 8-byte start and range */
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x100000000ull, 8);
	uleb(&s, 0);
	end(&s, f, 0);
	f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, ~0ull - 8, 8); /* wraps */
	uN(&s, 0x100, 8);
	uleb(&s, 0);
	end(&s, f, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.reject[CFI_REJ_RANGE], 2);
	CHECK_INT(t.nr_funcs, 0);
	cfi_table__release(&t);
}

TEST(cfi_rejects_deep_remember_state)
{
	uint8_t ins[40];
	memset(ins, 0x0a, sizeof(ins));
	check_rejected(ins, sizeof(ins), CFI_REJ_STATE_STACK, 16);
}

TEST(cfi_rejects_bad_entries_and_cies)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;

	/* CIE version 2, then an FDE using it: both counted on the FDE */
	memset(&s, 0, sizeof(s));
	size_t c = begin(&s, 0);
	uN(&s, 0, 4);
	u8(&s, 2);
	put(&s, "", 1);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	/* FDE whose CIE pointer points before the section */
	f = begin(&s, 0);
	uN(&s, 0x10000, 4);
	end(&s, f, 0);
	/* FDE whose CIE pointer lands on an FDE */
	f = begin(&s, 0);
	uN(&s, s.n - (f - 8), 4);
	end(&s, f, 0);
	/* a length past the end of the section stops the walk */
	uN(&s, 0x1000, 4);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 0);
	CHECK_INT(st.reject[CFI_REJ_CIE_VERSION], 1);
	CHECK_INT(st.reject[CFI_REJ_CIE_POINTER], 2);
	CHECK_INT(st.reject[CFI_REJ_LENGTH], 1);
	CHECK_INT(st.fdes_rejected, 4);
	cfi_table__release(&t);
}

TEST(cfi_empty_fdes_and_overlaps_are_counted)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0, NULL, 0);
	eh_fde(&s, c, 0x2000, 0x20, NULL, 0);
	eh_fde(&s, c, 0x2010, 0x20, NULL, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.fdes_empty, 1);
	CHECK_INT(st.funcs_overlap, 1);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x2000);
	cfi_table__release(&t);
}

TEST(cfi_to_sframe_encodes_a_table_the_decoder_reads_back)
{
	static struct sec s;
	struct cfi_stats st;
	static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
	memset(&s, 0, sizeof(s));
	s.vaddr = 0x9000;
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x20, ins, sizeof(ins));
	eh_fde(&s, c, 0x1020, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0, 0x8000 };
	void *buf;
	size_t len;
	struct sframe_table *tab;
	struct sframe_row row;
	struct sframe_func fn;

	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__nr_funcs(tab), 3);
	CHECK_INT(sframe_table__find(tab, 0x1005, &row, &fn), 0);
	CHECK_INT(row.cfa.reg, 6);
	CHECK_INT(row.cfa.off, 16);
	CHECK_INT(row.fp.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(row.fp.off, -16);
	CHECK_INT(sframe_table__find(tab, 0x1030 + 16 * 2 + 12, &row, &fn), 0);
	CHECK_INT(fn.pc_type, SFRAME_PC_MASK);
	CHECK_INT(row.cfa.off, 16);
	sframe_table__free(tab);

	/* a section too far from the code for 32-bit starts: dropped, counted */
	o.section_vaddr = 0x100000000ull;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), -ENOENT);
	CHECK_INT(st.funcs_far, 3);
	o.section_vaddr = 0x8000;

	o.abi = SFRAME_ABI_AARCH64_LE;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, NULL), -EOPNOTSUPP);
	struct cfi_input none = { 0 };
	o.abi = SFRAME_ABI_AMD64_LE;
	CHECK_INT(cfi_to_sframe(&none, &o, &buf, &len, NULL), -ENOENT);
	CHECK_INT(cfi_to_sframe(NULL, &o, &buf, &len, NULL), -EINVAL);
}

TEST(cfi_to_sframe_v2_leaves_flexible_rows_to_the_fallback)
{
	static struct sec s;
	struct cfi_stats st;
	/* DRAP: cfa = r10+0 from 5 on, back to rsp+8 at 16 */
	static const uint8_t ins[] = { 0x45, 0x0c, 10, 0, 0x4b, 0x0c, 7, 8 };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x20, ins, sizeof(ins));
	struct cfi_input in = eh_input(&s);
	struct sframe_encode_opts o = { 2, SFRAME_ABI_AMD64_LE, -8, 0, 0x8000 };
	void *buf;
	size_t len;
	struct sframe_table *tab;
	struct sframe_row row;

	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(st.no_rule[CFI_NR_NEEDS_V3], 1);
	CHECK_INT(st.rows_flex, 0);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__version(tab), 2);
	CHECK_INT(sframe_table__find(tab, 0x1002, &row, NULL), 0);
	CHECK_INT(sframe_table__find(tab, 0x1008, &row, NULL), -ENOENT);
	CHECK_INT(sframe_table__find(tab, 0x1012, &row, NULL), 0);
	CHECK_INT(row.cfa.off, 8);
	sframe_table__free(tab);

	o.version = 3;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(st.rows_flex, 1);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__find(tab, 0x1008, &row, NULL), 0);
	CHECK_INT(row.cfa.kind, SFRAME_RULE_REG);
	CHECK_INT(row.cfa.reg, 10);
	sframe_table__free(tab);
}

TEST(cfi_stats_print_names_every_counter)
{
	struct cfi_stats st = { 0 };
	char *text = NULL;
	size_t len = 0;
	st.fdes = 7;
	st.reject[CFI_REJ_OPCODE] = 2;
	st.no_rule[CFI_NR_RA_RULE] = 3;
	FILE *f = open_memstream(&text, &len);
	cfi_stats__print(&st, f);
	fclose(f);
	CHECK(strstr(text, "fdes: 7\n"));
	CHECK(strstr(text, "reject_opcode: 2\n"));
	CHECK(strstr(text, "no_rule_ra_rule: 3\n"));
	CHECK(!strstr(text, "reject_truncated"));
	free(text);
}

TEST(cfi_input_from_elf_finds_this_test_binarys_cfi)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct cfi_input in;
	struct cfi_table t;
	struct cfi_stats st;
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e);
	CHECK_INT(cfi_input_from_elf(e, &in), 0);
	CHECK(in.eh_frame && in.eh_frame_len > 0);
	CHECK(in.text_vaddr != 0);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK(st.fdes > 10);
	CHECK_INT(st.fdes_rejected, 0);
	cfi_table__release(&t);
	elf_end(e);
	close(fd);
}

#include "unwind/cfi_int.h"

TEST(leb128_should_decode_edges_and_reject_bits_past_64)
{
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0x03 };
	/* rbp (6) with a 65th bit set: must not alias register 6 */
	static const uint8_t alias[] = { 0x86, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t neg[] = { 0x7f }, cut[] = { 0x80, 0x80 };
	const uint8_t *p;
	uint64_t u;
	int64_t s;

	p = max;
	CHECK(cfi__uleb(&p, max + sizeof(max), &u));
	CHECK_U64(u, UINT64_MAX);
	CHECK(p == max + sizeof(max));
	p = over;
	CHECK(!cfi__uleb(&p, over + sizeof(over), &u));
	p = alias;
	CHECK(!cfi__uleb(&p, alias + sizeof(alias), &u));
	p = cut;
	CHECK(!cfi__uleb(&p, cut + sizeof(cut), &u));
	p = neg;
	CHECK(cfi__sleb(&p, neg + 1, &s));
	CHECK_INT(s, -1);
	p = cut;
	CHECK(!cfi__sleb(&p, cut + sizeof(cut), &s));
}
