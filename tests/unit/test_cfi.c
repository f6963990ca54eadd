// SPDX-License-Identifier: MIT
/*
 * CFI interpreter and SFrame conversion on hand-written .eh_frame and
 * .debug_frame bytes: every instruction, every pointer encoding, PLT,
 * signal frames, remember/restore state, gas's row rules, malformed input.
 *
 * Rows are compared as text: "@START CFA RA FP" per row, "; " between
 * rows, where CFA is sp+N / fp+N / rN+M / *(reg+N), RA and FP are c+N
 * (saved at CFA+N), *(reg+N), undef, or - (none), and a NO_RULE row is
 * "@START norule".
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

TEST(cfi_push_rbp_frame_gives_sp_then_fp_rows)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* push %rbp; mov %rsp,%rbp; ...; leave; ret */
	DERIVE(&t, &st, 32, 0x41, 0x0e, 16, 0x86, 2, /* @1 cfa+16, rbp at c-16 */
	       0x43, 0x0d, 6,			       /* @4 cfa = rbp+16 */
	       0x4a, 0x0c, 7, 8);		       /* @14 cfa = rsp+8 */
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x1000);
	CHECK_INT(t.funcs[0].size, 32);
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @4 fp+16 c-8 c-16; @14 sp+8 c-8 c-16");
	CHECK_INT(st.fdes, 1);
	CHECK_INT(st.fdes_converted, 1);
	CHECK_INT(st.cies, 1);
	CHECK_INT(st.rows, 4);
	cfi_table__release(&t);
}

TEST(cfi_changes_to_other_registers_do_not_start_rows)
{
	struct cfi_table t;
	/* push %rbx at 1 (rows), then only rbx/r12 rules change: no new row;
	 * the pending row is still written at the end, as gas does. */
	DERIVE(&t, NULL, 32, 0x41, 0x0e, 16, 0x83, 2, 0x42, 0x8c, 3, 0x42, 0xc3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @5 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_every_advance_form_moves_the_location)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 0x20000,
	       0x02, 3, 0x0e, 16,		/* advance_loc1 3 */
	       0x03, 0x00, 0x01, 0x0e, 24,	/* advance_loc2 256 -> 259 */
	       0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 32, /* advance_loc4 65536 */
	       0x1d, 1, 0, 0, 0, 0, 0, 0, 0, 0x0e, 40); /* MIPS_advance_loc8 1 */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @3 sp+16 c-8 -; @259 sp+24 c-8 -; @65795 sp+32 c-8 -; "
		  "@65796 sp+40 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_code_alignment_factor_scales_advances)
{
	static struct sec s;
	struct cfi_table t;
	static const uint8_t enc = 0x1b, ins[] = { 0x42, 0x0e, 16 };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 4);
	eh_fde(&s, c, 0x1000, 64, ins, sizeof(ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, NULL), 0);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @8 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_reads_every_pointer_encoding)
{
	static const uint8_t encs[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a,
					0x0b, 0x0c, 0x10, 0x12, 0x13, 0x1b, 0x1c,
					0x19, 0x20, 0x23, 0x30, 0x3b, 0x50 };
	for (size_t k = 0; k < sizeof(encs); k++) {
		static struct sec s;
		struct cfi_table t;
		struct cfi_stats st;
		uint8_t enc = encs[k];
		memset(&s, 0, sizeof(s));
		s.vaddr = 0x400000;
		size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
		size_t at = begin(&s, 0);
		uN(&s, s.n - c, 4);
		uint64_t pc = (enc & 0x0f) == 0x02 || (enc & 0x0f) == 0x0a ? 0x401000 : 0x401000;
		if ((enc & 0x70) == 0 && ((enc & 0x0f) == 0x02 || (enc & 0x0f) == 0x0a))
			pc = 0x7000; /* must fit 16 bits absolute */
		put_enc(&s, enc, pc, 0x400800, 0x600000, 0);
		put_enc(&s, enc & 0x0f, 0x40, 0, 0, 0); /* range: format only */
		uleb(&s, 0);
		/* set_loc in the same encoding, to pc+0x10 */
		u8(&s, 0x01);
		put_enc(&s, enc, pc + 0x10, 0x400800, 0x600000, pc);
		u8(&s, 0x0e);
		u8(&s, 16);
		end(&s, at, 0);
		struct cfi_input in = eh_input(&s);
		in.text_vaddr = 0x400800;
		in.got_vaddr = 0x600000;
		CHECK_INT(cfi_derive(&in, &t, &st), 0);
		CHECK_MSG(t.nr_funcs == 1 && t.funcs[0].start == pc && t.funcs[0].size == 0x40,
			  "encoding 0x%02x: %zu funcs, start 0x%llx (want 0x%llx), rejects %llu",
			  enc, t.nr_funcs, t.nr_funcs ? (unsigned long long)t.funcs[0].start : 0ull,
			  (unsigned long long)pc, (unsigned long long)st.fdes_rejected);
		CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @16 sp+16 c-8 -");
		cfi_table__release(&t);
	}
}

TEST(cfi_funcrel_set_loc_is_relative_to_the_fde_start)
{
	struct cfi_table t;
	/* set_loc with the CIE's encoding (pcrel|sdata4) is covered above;
	 * here DW_EH_PE_funcrel|udata4 through a CIE that uses it. */
	static struct sec s;
	static const uint8_t enc = 0x43;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
	size_t at = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x5000, 4); /* funcrel base is 0 for the start itself */
	uN(&s, 0x40, 4);
	uleb(&s, 0);
	u8(&s, 0x01);
	uN(&s, 0x20, 4); /* set_loc funcrel: start + 0x20 */
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, at, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, NULL), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x5000);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @32 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_rejects_indirect_and_baseless_pointers)
{
	static const uint8_t encs[] = { 0x9b, 0x23, 0x33 };
	for (size_t k = 0; k < sizeof(encs); k++) {
		static struct sec s;
		struct cfi_table t;
		struct cfi_stats st;
		uint8_t enc = encs[k];
		memset(&s, 0, sizeof(s));
		size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
		eh_fde(&s, c, 0x1000, 16, NULL, 0);
		struct cfi_input in = eh_input(&s); /* text/got bases unknown */
		CHECK_INT(cfi_derive(&in, &t, &st), 0);
		CHECK_INT(t.nr_funcs, 0);
		CHECK_INT(st.reject[CFI_REJ_POINTER], 1);
		cfi_table__release(&t);
	}
}

TEST(cfi_reads_64bit_lengths_and_stops_at_a_zero_terminator)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	static const uint8_t enc = 0x1b;
	memset(&s, 0, sizeof(s));
	/* 64-bit CIE and FDE: CIE pointer is 8 bytes */
	size_t c = begin(&s, 1);
	uN(&s, 0, 8);
	u8(&s, 1);
	put(&s, "zR", 3);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	uleb(&s, 1);
	u8(&s, enc);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 1);
	size_t f = begin(&s, 1);
	uN(&s, s.n - c, 8);
	put_enc(&s, 0x1b, 0x3000, 0, 0, 0);
	uN(&s, 0x10, 4);
	uleb(&s, 0);
	end(&s, f, 1);
	uN(&s, 0, 4); /* terminator */
	eh_fde(&s, c, 0x4000, 0x10, NULL, 0); /* never read */
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.fdes, 1);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x3000);
	cfi_table__release(&t);
}

TEST(cfi_skips_personality_and_lsda_and_flags_signal_frames)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	/* zPLRS: personality indirect|pcrel|sdata4, LSDA pcrel|sdata4 */
	static const uint8_t aug[] = { 0x9b, 1, 2, 3, 4, 0x1b, 0x1b };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zPLRS", aug, sizeof(aug), cie_init, sizeof(cie_init), 1);
	size_t at = begin(&s, 0);
	uN(&s, s.n - c, 4);
	put_enc(&s, 0x1b, 0x1000, 0, 0, 0);
	uN(&s, 0x20, 4);
	uleb(&s, 4);
	uN(&s, 0x12345678, 4); /* LSDA */
	u8(&s, 0x41);
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, at, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK(t.funcs[0].flags & SFRAME_FUNC_SIGNAL);
	CHECK_INT(st.signal_funcs, 1);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_reads_old_eh_augmentation_and_rejects_unknown_ones)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	/* "eh": an 8-byte pointer follows; FDE pointers are absptr */
	size_t c = begin(&s, 0);
	uN(&s, 0, 4);
	u8(&s, 1);
	put(&s, "eh", 3);
	uN(&s, 0xdead, 8);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	size_t c2 = eh_cie_full(&s, "xyz", NULL, 0, cie_init, sizeof(cie_init), 1);
	f = begin(&s, 0);
	uN(&s, s.n - c2, 4);
	uN(&s, 0x2000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x1000);
	CHECK_INT(st.reject[CFI_REJ_AUGMENTATION], 1);
	cfi_table__release(&t);
}

TEST(cfi_reads_debug_frame_versions_1_3_4_and_64bit)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	/* v4 CIE with address_size 8, segment size 0, uleb RA column */
	size_t c = begin(&s, 0);
	uN(&s, 0xffffffffu, 4);
	u8(&s, 4);
	u8(&s, 0);
	u8(&s, 8);
	u8(&s, 0);
	uleb(&s, 1);
	sleb(&s, -8);
	uleb(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, c, 4); /* section offset of the CIE */
	uN(&s, 0x7000, 8);
	uN(&s, 0x20, 8);
	u8(&s, 0x44);
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, f, 0);
	/* 64-bit v3 CIE and FDE */
	size_t c3 = begin(&s, 1);
	uN(&s, ~0ull, 8);
	u8(&s, 3);
	u8(&s, 0);
	uleb(&s, 1);
	sleb(&s, -8);
	uleb(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c3, 1);
	f = begin(&s, 1);
	uN(&s, c3, 8);
	uN(&s, 0x8000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 1);
	struct cfi_input in = { 0 };
	in.debug_frame = s.b;
	in.debug_frame_len = s.n;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.cies, 2);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[0].start, 0x7000);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @4 sp+16 c-8 -");
	CHECK_U64(t.funcs[1].start, 0x8000);
	CHECK_INT(st.debug_frame_bytes, s.n);
	cfi_table__release(&t);
}

TEST(cfi_remember_and_restore_state_bring_back_the_rows)
{
	struct cfi_table t;
	/* push rbx; ... remember; pop rbx (cfa 8); ret; restore (cfa 16); pop; ret */
	DERIVE(&t, NULL, 40, 0x41, 0x0e, 16, 0x83, 2,
	       0x49, 0x0a, 0x0e, 8,   /* @10 remember, cfa 8 */
	       0x41, 0x0b,	      /* @11 restore_state */
	       0x45, 0x0e, 8);	      /* @16 cfa 8 */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @10 sp+8 c-8 -; @11 sp+16 c-8 -; @16 sp+8 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_restore_brings_rbp_back_to_the_first_row_rule_like_gas)
{
	struct cfi_table t;
	/* restore rbp in an FDE whose first row has no rbp rule: none */
	DERIVE(&t, NULL, 16, 0x41, 0x0e, 16, 0x86, 2, 0x42, 0x0e, 8, 0xc6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @3 sp+8 c-8 -");
	cfi_table__release(&t);
	/* a .cold part: rbp saved from the first row on; restore_extended
	 * keeps gas's view (the first row's rule) */
	DERIVE(&t, NULL, 16, 0x0e, 16, 0x86, 2, 0x42, 0x0e, 8, 0x06, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 c-16; @2 sp+8 c-8 c-16");
	cfi_table__release(&t);
}

/*
 * Where gas 2.40's gen-sframe.c is wrong, DWARF wins: it remembers the last
 * *finished* row (not the current state) and def_cfa_register takes the
 * last finished row's offset. gcc never emits these shapes (the oracle
 * matches gas on 100% of its functions); hand-written assembly can.
 */
TEST(cfi_remember_state_keeps_changes_made_at_the_same_address)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 8, 0x41, 0x0e, 16, 0x0a, 0x41, 0x0e, 8, 0x41, 0x0b);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @2 sp+8 c-8 -; @3 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_def_cfa_register_keeps_an_offset_set_at_the_same_address)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 8, 0x41, 0x0e, 16, 0x41, 0x0e, 32, 0x0d, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @2 fp+32 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_sf_and_extended_forms_use_the_data_alignment_factor)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 32,
	       0x41, 0x13, 0x7e,	/* def_cfa_offset_sf -2 * -8 = 16 */
	       0x11, 6, 0x02,		/* offset_extended_sf rbp 2 * -8 = -16 */
	       0x41, 0x12, 7, 0x7d,	/* def_cfa_sf rsp, -3 * -8 = 24 */
	       0x05, 6, 4,		/* offset_extended rbp 4 * -8 = -32 */
	       0x41, 0x2f, 6, 3,	/* GNU_negative_offset_extended rbp: +24 */
	       0x2e, 16, 0x00);		/* GNU_args_size, nop */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @2 sp+24 c-8 c-32; @3 sp+24 c-8 c+24");
	cfi_table__release(&t);
}

TEST(cfi_ra_rules_map_to_sframe_or_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* RA undefined (outermost frame): the SFrame "RA undefined" row */
	DERIVE(&t, &st, 16, 0x07, 16);
	CHECK_STR(rows_of(&t, 0), "@0 - undef -");
	CHECK_INT(st.rows_ra_undefined, 1);
	cfi_table__release(&t);
	/* RA saved at CFA-16: not SFrame's fixed CFA-8, a flexible rule */
	DERIVE(&t, &st, 16, 0x41, 0x90, 2);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+8 c-16 -");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_flex, 1);
	cfi_table__release(&t);
	/* RA in a register: a flexible REG rule; a register past r15: none */
	DERIVE(&t, &st, 16, 0x41, 0x09, 16, 1, 0x41, 0x09, 16, 40);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+8 =r1+0 -; @2 norule");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.no_rule[CFI_NR_RA_RULE], 1);
	CHECK_INT(st.rows_no_rule, 1);
	cfi_table__release(&t);
	/* RA by val_offset, same_value */
	DERIVE(&t, &st, 16, 0x41, 0x14, 16, 1, 0x41, 0x08, 16);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 norule");
	cfi_table__release(&t);
}

TEST(cfi_fp_rules_map_to_sframe_or_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* same_value / undefined rbp: nothing to restore */
	DERIVE(&t, &st, 16, 0x86, 2, 0x41, 0x08, 6, 0x41, 0x07, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 c-16; @1 sp+8 c-8 -; @2 sp+8 c-8 -");
	cfi_table__release(&t);
	/* rbp by val_offset: none; in a register: a flexible REG rule */
	DERIVE(&t, &st, 16, 0x41, 0x14, 6, 2, 0x41, 0x09, 6, 3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 sp+8 c-8 =r3+0");
	CHECK_INT(st.no_rule[CFI_NR_FP_RULE], 1);
	cfi_table__release(&t);
}

TEST(cfi_drap_expressions_become_flexible_rules)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* gcc's DRAP prologue: cfa = r10+0; rbp saved at *(rbp+0);
	 * cfa = *(rbp-8) */
	DERIVE(&t, &st, 64,
	       0x45, 0x0c, 10, 0,			  /* @5 def_cfa r10, 0 */
	       0x4b, 0x10, 6, 2, 0x76, 0x00,		  /* @16 expression rbp: breg6 0 */
	       0x42, 0x0f, 3, 0x76, 0x78, 0x06);	  /* @18 def_cfa_expression breg6 -8; deref */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @5 r10+0 c-8 -; @16 r10+0 c-8 *(fp+0); @18 *(fp-8) c-8 *(fp+0)");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_flex, 3);
	cfi_table__release(&t);
}

TEST(cfi_signal_frame_expressions_become_flexible_rules)
{
	struct cfi_table t;
	/* glibc __restore_rt: cfa = *(rsp+160); rbp, rip saved at rsp+120, rsp+168 */
	DERIVE(&t, NULL, 16,
	       0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06,
	       0x10, 6, 3, 0x77, 0xf8, 0x00,
	       0x10, 16, 3, 0x77, 0xa8, 0x01);
	CHECK_STR(rows_of(&t, 0), "@0 *(sp+160) *(sp+168) *(sp+120)");
	cfi_table__release(&t);
}

TEST(cfi_unknown_expressions_and_cfa_registers_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* def_cfa_expression: DW_OP_call_frame_cfa, which CFI may not use */
	DERIVE(&t, &st, 16, 0x41, 0x0f, 1, 0x9c, 0x41, 0x0c, 40, 8, 0x41, 0x0c, 7, 8);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 norule; @3 sp+8 c-8 -");
	CHECK_INT(st.no_rule[CFI_NR_CFA_EXPRESSION], 1);
	CHECK_INT(st.no_rule[CFI_NR_CFA_REGISTER], 1);
	cfi_table__release(&t);
}

TEST(cfi_other_dwarf_expressions_become_expression_rules)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* OpenSSL's bignum assembly: cfa = *(rsp+40)+8; then
	 * cfa = *(rsp+8+8*r9)+8; then rbp saved at CFA-8 by an expression
	 * (DW_CFA_expression), then rbp's value CFA-8 (DW_CFA_val_expression) */
	DERIVE(&t, &st, 16,
	       0x41, 0x0f, 5, 0x77, 0x28, 0x06, 0x23, 0x08,
	       0x41, 0x0f, 10, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08,
	       0x41, 0x10, 6, 3, 0x12, 0x38, 0x1c,
	       0x41, 0x16, 6, 2, 0x38, 0x1c);
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 x[breg7 +40; deref; plus_uconst 8] c-8 -; "
		  "@2 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 -; "
		  "@3 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 "
		  "*x[dup; lit8; minus]; "
		  "@4 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 x[lit8; minus]");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_expr, 4);
	CHECK_INT(st.rows_no_rule, 0);
	cfi_table__release(&t);
}

TEST(cfi_reg_rule_should_give_a_callee_saved_registers_rule_at_each_address)
{
	static struct sec s;
	struct cfi_reg_rule r;
	/* push %rbx (@1: cfa+16, rbx at c-16); push %r12 (@2: cfa+24, r12 at
	 * c-24); @8 rbx restored; @9 r12 by an expression */
	static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x83, 2, 0x41, 0x0e, 24, 0x8c, 3,
				       0x46, 0xc3, 0x41, 0x10, 12, 2, 0x38, 0x1c };
	static const uint8_t other[] = { 0x41, 0x0e, 16, 0x83, 2 };

	memset(&s, 0, sizeof(s));
	s.vaddr = 0x2000;
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 16, ins, sizeof(ins));
	eh_fde(&s, c, 0x1100, 8, other, sizeof(other));
	struct cfi_input in = eh_input(&s);

	CHECK_INT(cfi__reg_rule(&in, 0x1000, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_SAME);
	CHECK_INT(cfi__reg_rule(&in, 0x1001, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(r.off, -16);
	CHECK_INT(cfi__reg_rule(&in, 0x1005, 12, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(r.off, -24);
	CHECK_INT(cfi__reg_rule(&in, 0x1008, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_SAME);
	CHECK_INT(cfi__reg_rule(&in, 0x1009, 12, &r), 0);
	CHECK_INT(r.kind, CFI_REG_OTHER);
	CHECK_INT(cfi__reg_rule(&in, 0x1102, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(cfi__reg_rule(&in, 0x1010, 3, &r), -ENOENT);
	CHECK_INT(cfi__reg_rule(&in, 0x0fff, 3, &r), -ENOENT);
}

/* ld's .plt CFI: sp+16 at 0, sp+24 at 6, the PLT expression from 16. */
