// SPDX-License-Identifier: MIT
/*
 * Unwinder on synthetic stacks: a hand-built snapshot, hand-made rows
 * looked up by PC range, and the walk checked frame by frame: rows, stop
 * reasons, the frame-pointer fallback (signal frames, register and
 * expression rules, the state iterator: test_unwind_rules.c).
 */
#include <errno.h>

#include "unwind/dwexpr.h"
#include "testlib.h"
#include "unwind/unwind.h"
#include "unwind_fake.h"

TEST_MAIN()

TEST(walk_should_follow_sp_based_rows_to_the_outermost_frame)
{
	int stop;
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	build_three_frames();
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[0].pc, 0x1010);
	CHECK_U64(FR[1].pc, 0x2050);
	CHECK_U64(FR[2].pc, 0x3020);
	CHECK_INT(FR[0].flags, 0);
	CHECK_INT(FR[1].flags, UNWIND_FRAME_CALLER);
}

TEST(first_frame_should_look_up_pc_and_callers_pc_minus_one)
{
	int stop;
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	build_three_frames();
	walk(&r, &stop);
	CHECK_INT(F.nlookups, 3);
	CHECK_U64(F.lookups[0], 0x1010);
	CHECK_U64(F.lookups[1], 0x204f);
	CHECK_U64(F.lookups[2], 0x301f);
}

TEST(return_address_at_function_end_should_use_the_calling_function_row)
{
	/* a call as the last instruction of 0x2000..0x2100 (noreturn callee):
	 * the return address 0x2100 is the start of the next function, whose
	 * row (CFA = SP+8) would be wrong; PC-1 finds the caller's row. */
	int stop;
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	build_three_frames();
	add_sp_row(0x2100, 0x2200, 8, 0);
	put(BASE + 8, 0x2100);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[2].pc, 0x3020);
}

TEST(fp_based_cfa_should_restore_the_callers_frame_pointer)
{
	int stop;
	fake_reset(4096);
	/* leaf: push %rbp; mov %rsp,%rbp; sub $0x40,%rsp -> CFA = FP+16,
	 * FP saved at CFA-16 */
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RBP, 16);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	x->row.fp = R(SFRAME_RULE_CFA_DEREF, 0, -16);
	/* caller: CFA = FP+16 again, so only a correctly restored FP works */
	x = add_range(0x2000, 0x2100, 0);
	x->row = F.r[0].row;
	add_root(0x3000, 0x3100);
	uint64_t fp0 = BASE + 0x40;
	put(fp0, BASE + 0x100);	  /* saved caller FP */
	put(fp0 + 8, 0x2010);	  /* RA */
	put(BASE + 0x100, 0xdead); /* caller's saved FP (any) */
	put(BASE + 0x108, 0x3010);
	struct sfprof_regs r = regs_at(0x1020, BASE, fp0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[1].pc, 0x2010);
	CHECK_U64(FR[2].pc, 0x3010);
}

TEST(fp_slot_below_sp_in_an_epilogue_should_leave_fp_unchanged)
{
	/* glibc's msort_with_tmp at its tail jmp: CFA = SP+8, and the CFI
	 * still says rbp is saved at CFA-48 although it was popped */
	int stop;
	fake_reset(4096);
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, 8);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	x->row.fp = R(SFRAME_RULE_CFA_DEREF, 0, -48);
	/* the caller's CFA comes from FP: only an unchanged FP gets there */
	x = add_range(0x2000, 0x2100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RBP, 16);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	add_root(0x3000, 0x3100);
	put(BASE, 0x2010);
	put(BASE + 0x48, 0x3010); /* caller: FP = BASE+0x40, RA at FP+8 */
	struct sfprof_regs r = regs_at(0x1063, BASE, BASE + 0x40);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[2].pc, 0x3010);
}

TEST(read_past_the_snapshot_should_stop_as_snapshot_exhausted)
{
	int stop;
	build_three_frames();
	F.len = 32; /* mid's RA at BASE+40 is not in the copy */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_SNAPSHOT);
	CHECK_INT(n, 2);
}

TEST(pc_in_no_mapping_without_usable_fp_should_stop_as_no_mapping)
{
	int stop;
	build_three_frames();
	put(BASE + 40, 0x9000); /* mid returns into nothing */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_NO_MAPPING);
	CHECK_INT(n, 3);
	CHECK_U64(FR[2].pc, 0x9000);
}

TEST(pc_without_row_and_fp_zero_should_stop_as_no_row)
{
	int stop;
	build_three_frames();
	add_range(0x9000, 0x9100, -ESRCH);
	put(BASE + 40, 0x9010);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_NO_ROW);
}

TEST(cfa_that_does_not_grow_should_stop_as_bad_cfa)
{
	int stop;
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 0, 0);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA);
	CHECK_INT(n, 1);
}

TEST(misaligned_cfa_should_stop_as_bad_cfa)
{
	int stop;
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 12, 0);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA);
}

TEST(fp_based_cfa_below_sp_should_stop_as_bad_cfa)
{
	int stop;
	fake_reset(4096);
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RBP, 16);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	struct sfprof_regs r = regs_at(0x1010, BASE, BASE - 0x100);
	walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA);
}

TEST(recursion_deeper_than_the_limit_should_stop_as_max_depth)
{
	int stop;
	fake_reset(16384);
	add_sp_row(0x1000, 0x1100, 32, 0); /* recursive function */
	for (int i = 0; i < 400; i++)
		put(BASE + 32 * i + 24, 0x1050);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = unwind_stack(&r, F.mem, F.len, &OPS, FR, 100, &stop, NULL, NULL);
	CHECK_INT(stop, UNWIND_STOP_MAX_DEPTH);
	CHECK_INT(n, 100);
}

TEST(recursion_300_deep_should_complete_within_a_large_limit)
{
	int stop;
	fake_reset(16384);
	add_sp_row(0x1000, 0x1100, 32, 0);
	add_root(0x3000, 0x3100);
	for (int i = 0; i < 300; i++)
		put(BASE + 32 * i + 24, i == 299 ? 0x3010 : 0x1050);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 301);
	CHECK_U64(FR[300].pc, 0x3010);
}

TEST(undefined_ra_should_end_the_walk_whatever_the_cfa_rule_says)
{
	/* glibc's clone3 child: RA undefined, CFA rule meaningless */
	int stop;
	fake_reset(4096);
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_NONE, 0, 0);
	x->row.ra = R(SFRAME_RULE_UNDEFINED, 0, 0);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	uint64_t outer = 1;
	size_t n = unwind_stack(&r, F.mem, F.len, &OPS, FR, 512, &stop, NULL, &outer);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 1);
	/* the entry frame's SP: the top of the thread's frames */
	CHECK_U64(outer, BASE);
}

TEST(outer_sp_should_be_the_entry_frames_sp_after_a_walk)
{
	/* leaf (CFA = SP+16) called by the entry (RA undefined): the entry
	 * frame's SP is the leaf's CFA */
	int stop;
	uint64_t outer = 1;
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 16, 0);
	add_root(0x2000, 0x2100);
	put(BASE + 8, 0x2010);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = unwind_stack(&r, F.mem, F.len, &OPS, FR, 512, &stop, NULL, &outer);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 2);
	CHECK_U64(outer, BASE + 16);
	/* a walk that ends any other way has none */
	put(BASE + 8, 0);
	n = unwind_stack(&r, F.mem, F.len, &OPS, FR, 512, &stop, NULL, &outer);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_U64(outer, 0);
}

TEST(zero_return_address_should_end_the_walk_as_complete)
{
	int stop;
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 16, 0);
	put(BASE + 8, 0);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 1);
}

TEST(missing_row_should_fall_back_to_the_frame_pointer_chain)
{
	int stop;
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 16, -16); /* leaf saves FP at CFA-16 */
	add_range(0x5000, 0x5100, -ESRCH);    /* FP-built code, no table */
	add_range(0x6000, 0x6100, -ENOENT);   /* JIT code, no mapping */
	add_root(0x3000, 0x3100);
	uint64_t fp1 = BASE + 0x80, fp2 = BASE + 0x100;
	put(BASE + 8, 0x5010);	/* leaf RA */
	put(BASE + 0, fp1);	/* leaf saved FP (CFA-16) */
	put(fp1, fp2);
	put(fp1 + 8, 0x6010);
	put(fp2, 0);
	put(fp2 + 8, 0x3010);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0x1234);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 4);
	CHECK_U64(FR[2].pc, 0x6010);
	CHECK_U64(FR[3].pc, 0x3010);
	CHECK_INT(FR[2].flags, UNWIND_FRAME_CALLER | UNWIND_FRAME_FP);
}

TEST(fp_fallback_should_refuse_a_frame_pointer_outside_the_snapshot)
{
	int stop;
	fake_reset(256);
	add_range(0x5000, 0x5100, -ESRCH);
	struct sfprof_regs r = regs_at(0x5010, BASE, BASE + 4096);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_NO_ROW);
	CHECK_INT(n, 1);
}

TEST(fp_fallback_should_refuse_a_frame_pointer_below_sp)
{
	int stop;
	fake_reset(256);
	add_range(0x5000, 0x5100, -ESRCH);
	struct sfprof_regs r = regs_at(0x5010, BASE + 64, BASE);
	put(BASE, BASE + 128);
	put(BASE + 8, 0x3010);
	size_t n = unwind_stack(&r, F.mem + 64, F.len - 64, &OPS, FR, 16,
				&stop, NULL, NULL);
	CHECK_INT(stop, UNWIND_STOP_NO_ROW);
	CHECK_INT(n, 1);
}

TEST(no_rule_row_should_be_treated_as_no_row)
{
	int stop;
	fake_reset(4096);
	struct range *x = add_range(0x5000, 0x5100, 0);
	x->row.cfa = R(SFRAME_RULE_NO_RULE, 0, 0);
	add_root(0x3000, 0x3100);
	uint64_t fp = BASE + 0x40;
	put(fp, 0);
	put(fp + 8, 0x3010);
	struct sfprof_regs r = regs_at(0x5010, BASE, fp);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 2);
	CHECK(FR[1].flags & UNWIND_FRAME_FP);
}

/*
 * A signal frame as the kernel builds it on x86-64 (struct rt_sigframe):
 * the handler's return address is the restorer, and the ucontext starts
 * at the handler's CFA; uc_mcontext at +40 holds r8..r15, rdi, rsi, rbp,
 * rbx, rdx, rax, rcx, rsp, rip.
 */
