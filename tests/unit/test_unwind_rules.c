// SPDX-License-Identifier: MIT
/*
 * Unwinder on synthetic stacks (unwind_fake.h): signal frames, flexible,
 * register and DWARF-expression rules, callee-saved registers, stop
 * counters, random walks against the state iterator and the memo, and the
 * frame-pointer fallback's code checks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "unwind/dwexpr.h"
#include "testlib.h"
#include "unwind/unwind.h"
#include "unwind_fake.h"

TEST_MAIN()

static void build_signal(uint64_t *interrupted_sp)
{
	fake_reset(8192);
	add_sp_row(0x1000, 0x1100, 16, 0); /* handler: CFA = SP+16 */
	put(BASE + 8, 0x4000);		   /* RA = __restore_rt */
	uint64_t uc = BASE + 16, mc = uc + 40;
	uint64_t isp = BASE + 0x800;
	*interrupted_sp = isp;
	for (int i = 0; i < 17; i++)
		put(mc + 8 * i, 0x1111 * (i + 1));
	put(mc + 8 * 4, 0xabc);	      /* r12 */
	put(mc + 8 * 10, BASE + 0x900); /* rbp */
	put(mc + 8 * 15, isp);	      /* rsp */
	put(mc + 8 * 16, 0x2000);     /* rip: first insn of a function */
	add_root(0x3000, 0x3100);
}

TEST(signal_frame_flagged_in_the_table_should_restore_ucontext_registers)
{
	int stop;
	uint64_t isp;
	build_signal(&isp);
	/* __restore_rt's FDE starts one byte early (glibc's nop), so the
	 * PC-1 lookup lands in it */
	struct range *x = add_range(0x3fff, 0x4010, 0);
	x->func_flags = SFRAME_FUNC_SIGNAL;
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, 8);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	/* interrupted at the first instruction of 0x2000: CFA = SP+8. A
	 * PC-1 lookup would miss (0x1fff is in no function). */
	add_sp_row(0x2000, 0x2100, 8, 0);
	put(isp, 0x3010);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 4);
	CHECK_U64(FR[1].pc, 0x4000);
	CHECK_INT(FR[1].flags, UNWIND_FRAME_SIGNAL);
	CHECK_U64(FR[2].pc, 0x2000);
	CHECK_INT(FR[2].flags, 0);
	CHECK_U64(FR[3].pc, 0x3010);
}

TEST(signal_trampoline_known_by_address_should_restore_ucontext_registers)
{
	int stop;
	uint64_t isp;
	build_signal(&isp);
	F.sigtramp = 0x4000; /* no row: __restore_rt's CFI is an expression */
	/* interrupted frame: CFA from r12 (flexible rule; every register is
	 * known after a signal frame) */
	struct range *x = add_range(0x2000, 0x2100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, 12, (int)(isp + 0x40 - 0xabc));
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	put(isp + 0x38, 0x3010);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 4);
	CHECK_INT(FR[1].flags, UNWIND_FRAME_SIGNAL);
	CHECK_U64(FR[3].pc, 0x3010);
	CHECK(F.sigtramp_asked >= 1);
}

TEST(signal_frame_with_interrupted_sp_below_it_should_stop_as_bad_cfa)
{
	int stop;
	uint64_t isp;
	build_signal(&isp);
	F.sigtramp = 0x4000;
	put(BASE + 16 + 40 + 8 * 15, BASE); /* rsp below the frame */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA);
	CHECK_INT(n, 2);
}

/* A handler on an alternate stack (Go's gsignal): the interrupted SP is
 * in neither direction of the handler's snapshot but in ops' second one,
 * where the walk goes on; outside both it stops as before. */
TEST(signal_frame_on_an_alternate_stack_should_go_on_in_the_second_snapshot)
{
	static uint8_t alt[256] __attribute__((aligned(8)));
	const uint64_t alt_lo = 0x10000000ull;
	struct unwind_ops ops = OPS;
	int stop;
	uint64_t isp, ra = 0x3010;
	size_t n;

	for (int above = 0; above < 2; above++) {
		uint64_t sp = above ? BASE + 0x100000 : alt_lo + 0x40;

		build_signal(&isp);
		F.sigtramp = 0x4000;
		add_sp_row(0x2000, 0x2100, 8, 0); /* the interrupted frame */
		memset(alt, 0, sizeof(alt));
		put(BASE + 16 + 40 + 8 * 15, sp);
		ops.alt = alt;
		ops.alt_lo = above ? BASE + 0x100000 - 0x40 : alt_lo;
		ops.alt_len = sizeof(alt);
		memcpy(alt + 0x40, &ra, sizeof(ra)); /* its return address */
		struct sfprof_regs r = regs_at(0x1010, BASE, 0);
		n = unwind_stack(&r, F.mem, F.len, &ops, FR, 16, &stop, NULL, NULL);
		CHECK_INT(stop, UNWIND_STOP_COMPLETE);
		CHECK_INT(n, 4);
		CHECK_U64(FR[2].pc, 0x2000);
		CHECK_U64(FR[3].pc, 0x3010);
		/* the second snapshot does not hold it */
		ops.alt_lo = alt_lo + 0x1000;
		n = unwind_stack(&r, F.mem, F.len, &ops, FR, 16, &stop, NULL, NULL);
		CHECK_INT(stop, above ? UNWIND_STOP_SNAPSHOT : UNWIND_STOP_BAD_CFA);
		CHECK(n <= 3);
	}
}

TEST(flexible_rule_in_the_top_frame_should_use_captured_registers)
{
	fake_reset(4096);
	/* CFA = *(rbx + 16) (REG_DEREF, e.g. a DRAP-like prologue), RA at
	 * CFA-8, FP = *(r13 - 8) */
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG_DEREF, UNWIND_REG_RBX, 16);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	x->row.fp = R(SFRAME_RULE_REG_DEREF, 13, -8);
	add_root(0x3000, 0x3100);
	put(BASE + 0x30, BASE + 0x200); /* *(rbx+16) */
	put(BASE + 0x1f8, 0x3010);
	put(BASE + 0x58, 0xf00d); /* *(r13-8) */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	r.bx = BASE + 0x20;
	r.r13 = BASE + 0x60;
	struct unwind_state st;
	unsigned frames = 0;
	unwind_for_each_frame(&st, &r, F.mem, F.len, &OPS, 64) {
		frames++;
		if (frames == 2) {
			CHECK_U64(st.pc, 0x3010);
			CHECK_U64(st.regs[UNWIND_REG_RBP], 0xf00d);
			CHECK_U64(st.regs[UNWIND_REG_RSP], BASE + 0x200);
		}
	}
	CHECK_INT(st.stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(frames, 2);
}

TEST(flexible_rule_naming_an_unknown_register_should_stop_as_bad_rule)
{
	int stop;
	build_three_frames();
	/* mid's CFA from r12: not known once the leaf is unwound */
	F.r[1].row.cfa = R(SFRAME_RULE_REG, 12, 32);
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_RULE);
	CHECK_INT(n, 2);
}

TEST(ra_rule_other_than_cfa_minus_8_should_be_followed)
{
	int stop;
	fake_reset(4096);
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, 32);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -24);
	add_root(0x3000, 0x3100);
	put(BASE + 8, 0x3010);
	put(BASE + 24, 0x1); /* the fixed slot holds junk */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 2);
	CHECK_U64(FR[1].pc, 0x3010);
}

TEST(return_address_in_a_register_at_cfa_equal_sp_should_be_followed)
{
	int stop;
	fake_reset(4096);
	/* glibc's __vfork after `pop %rdi`: CFA = SP + 0, RA in rdi */
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, 0);
	x->row.ra = R(SFRAME_RULE_REG, UNWIND_REG_RDI, 0);
	add_root(0x3000, 0x3100);
	struct sfprof_regs r = regs_at(0x1008, BASE, 0);
	r.di = 0x3010;
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 2);
	CHECK_U64(FR[1].pc, 0x3010);
	/* an RA from memory still needs the CFA above SP */
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA);
}

TEST(dwarf_expression_rules_should_be_evaluated_over_the_snapshot)
{
	/* OpenSSL's CFA = *(rsp+40)+8, the RA at CFA-8; rbp saved at the
	 * address CFA-16 an expression computes */
	static const uint8_t cfa_e[] = { 0x77, 0x28, 0x06, 0x23, 0x08 };
	static const uint8_t fp_e[] = { 0x40, 0x1c }; /* lit16; minus */
	static const uint8_t r12_e[] = { 0x7c, 0x00 }; /* breg12 0 */
	uint32_t cfa_id = dwexpr__intern(cfa_e, sizeof(cfa_e));
	uint32_t fp_id = dwexpr__intern(fp_e, sizeof(fp_e));
	uint32_t r12_id = dwexpr__intern(r12_e, sizeof(r12_e));
	int stop;

	CHECK(cfa_id && fp_id && r12_id);
	fake_reset(4096);
	struct range *x = add_range(0x1000, 0x1100, 0);
	x->row.cfa = R(SFRAME_RULE_VAL_EXPR, 0, (int)cfa_id);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	x->row.fp = R(SFRAME_RULE_EXPR, 0, (int)fp_id);
	add_sp_row(0x2000, 0x2100, 16, 0);
	add_root(0x3000, 0x3100);
	put(BASE + 40, BASE + 0x100);	/* CFA = BASE + 0x108 */
	put(BASE + 0x100, 0x2010);	/* RA */
	put(BASE + 0xf8, 0xfeed);	/* saved rbp */
	put(BASE + 0x110, 0x3010);	/* the caller's RA at its CFA-8 */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	struct unwind_state st;
	unsigned frames = 0;
	unwind_for_each_frame(&st, &r, F.mem, F.len, &OPS, 64) {
		if (++frames == 2) {
			CHECK_U64(st.pc, 0x2010);
			CHECK_U64(st.regs[UNWIND_REG_RSP], BASE + 0x108);
			CHECK_U64(st.regs[UNWIND_REG_RBP], 0xfeed);
		}
	}
	CHECK_INT(st.stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(frames, 3);
	/* a register the frame does not know: a bad rule, not a guess */
	x->row.fp = R(SFRAME_RULE_VAL_EXPR, 0, (int)r12_id);
	F.r[1].row.cfa = R(SFRAME_RULE_VAL_EXPR, 0, (int)r12_id);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_RULE);
	CHECK_INT(n, 2);
	/* a read outside the snapshot: exhausted, as a rule's read is */
	put(BASE + 40, BASE + 0x4000);
	n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_SNAPSHOT);
	CHECK_INT(n, 1);
}

/* reg_rule(): rbx saved at CFA-16 by the ranges marked so, else unchanged */
static uint64_t rbx_saved_lo = 0x1000, rbx_saved_hi = 0x1100;

static int fake_reg_rule(void *ctx, uint64_t lookup, unsigned reg, struct unwind_reg_rule *out)
{
	(void)ctx;
	if (reg != UNWIND_REG_RBX)
		return -1;
	*out = (struct unwind_reg_rule){ UNWIND_REG_SAME, 0 };
	if (lookup >= rbx_saved_lo && lookup < rbx_saved_hi)
		*out = (struct unwind_reg_rule){ UNWIND_REG_AT_CFA, -16 };
	return 0;
}

TEST(a_cfa_from_rbx_below_the_top_frame_should_be_found_by_replaying_rbxs_rules)
{
	static const struct unwind_ops rops = { fake_find, fake_sigtramp, NULL, NULL, NULL,
						fake_reg_rule };
	int stop;

	/* leaf (0x1000: saved rbx at CFA-16, CFA = SP+16) -> resolver
	 * (0x2000: CFA = rbx+16, as ld.so's _dl_runtime_resolve) -> root */
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 16, 0);
	struct range *x = add_range(0x2000, 0x2100, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RBX, 16);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	add_root(0x3000, 0x3100);
	put(BASE + 8, 0x2050);		/* the leaf's RA */
	put(BASE + 0, BASE + 0x100);	/* the leaf saved the resolver's rbx */
	put(BASE + 0x108, 0x3010);	/* the resolver's RA at rbx+16-8 */
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	r.bx = 0xbad; /* the leaf's own rbx: not the resolver's */
	struct unwind_stats us = { 0 };
	size_t n = unwind_stack(&r, F.mem, F.len, &rops, FR, 512, &stop, &us, NULL);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[2].pc, 0x3010);
	CHECK_U64(us.reg_replays, 1);
	/* without the rule: a bad rule, as before */
	n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_BAD_RULE);
	CHECK_INT(n, 2);
	/* frames between that leave rbx unchanged: the top frame's rbx is
	 * the resolver's (here a CFA below SP: refused) */
	rbx_saved_lo = rbx_saved_hi = 0;
	F.r[0].row.cfa.off = 16;
	n = unwind_stack(&r, F.mem, F.len, &rops, FR, 512, &stop, NULL, NULL);
	CHECK_INT(stop, UNWIND_STOP_BAD_CFA); /* rbx = 0xbad, unchanged: CFA below SP */
	rbx_saved_lo = 0x1000;
	rbx_saved_hi = 0x1100;
}

TEST(missing_registers_should_stop_as_no_regs)
{
	int stop;
	fake_reset(64);
	struct sfprof_regs r = regs_at(0, 0, 0);
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_NO_REGS);
	CHECK_INT(n, 0);
}

TEST(stats_should_count_every_stop_reason_by_name)
{
	struct unwind_stats s;
	int stop;
	char buf[2048];
	memset(&s, 0, sizeof(s));
	build_three_frames();
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	unwind_stack(&r, F.mem, F.len, &OPS, FR, 512, &stop, &s, NULL);
	F.len = 32;
	unwind_stack(&r, F.mem, F.len, &OPS, FR, 512, &stop, &s, NULL);
	CHECK_U64(s.stacks, 2);
	CHECK_U64(s.frames, 5);
	CHECK_U64(s.stop[UNWIND_STOP_COMPLETE], 1);
	CHECK_U64(s.stop[UNWIND_STOP_SNAPSHOT], 1);
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	unwind_stats__print(&s, f);
	fclose(f);
	CHECK(strstr(buf, "unwind_stop_complete: 1\n") != NULL);
	CHECK(strstr(buf, "unwind_stop_snapshot_exhausted: 1\n") != NULL);
	CHECK_STR(unwind_stop__name(UNWIND_STOP_NO_MAPPING), "no_mapping");
}

/* ---- unwind_stack() against the reference state iterator ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned pct(void) { return (unsigned)(rnd() % 100); }

static struct sframe_rule random_rule(int is_cfa)
{
	static const int regs[] = { UNWIND_REG_RSP, UNWIND_REG_RBP };
	struct sframe_rule r = { 0 };
	unsigned p = pct();

	if (is_cfa)
		r.kind = p < 80 ? SFRAME_RULE_REG : p < 90 ? SFRAME_RULE_REG_DEREF
							  : (int)(rnd() % 7);
	else
		r.kind = p < 45 ? SFRAME_RULE_NONE : p < 80 ? SFRAME_RULE_CFA_DEREF
							    : (int)(rnd() % 7);
	r.reg = pct() < 90 ? regs[rnd() % 2] : (uint8_t)(rnd() % 20);
	p = pct();
	r.off = p < 40 ? 16 : p < 60 ? -8 : p < 70 ? -16 : p < 90 ? (int)(rnd() % 12) * 8 - 32
								 : (int32_t)rnd();
	return r;
}

/* A random table, snapshot and registers, biased toward walks that go on:
 * rows in the common shape, stack words that are return addresses into
 * the table or addresses inside the snapshot. */
static void random_case(struct sfprof_regs *r, unsigned *max)
{
	int nr = 1 + (int)(rnd() % 8);

	fake_reset((size_t)(rnd() % 4096) & ~(pct() < 90 ? 7ull : 0ull));
	for (int i = 0; i < nr; i++) {
		uint64_t lo = 0x1000ull * (uint64_t)(i + 1);
		unsigned p = pct();
		struct range *x = add_range(lo, lo + 0x100,
					    p < 88 ? 0 : p < 94 ? -ENOENT : -ESRCH);

		x->row.cfa = random_rule(1);
		x->row.ra = pct() < 95 ? random_rule(0)
				       : R(SFRAME_RULE_UNDEFINED, 0, 0);
		x->row.fp = random_rule(0);
		x->func_flags = pct() < 4 ? SFRAME_FUNC_SIGNAL : 0;
	}
	for (size_t off = 0; off + 8 <= F.len; off += 8) {
		unsigned p = pct();
		uint64_t v;

		if (p < 45)
			v = 0x1000ull * (1 + rnd() % (uint64_t)nr) + 1 + rnd() % 0x100;
		else if (p < 80)
			v = BASE + (rnd() % (F.len + 64) & ~7ull);
		else if (p < 85)
			v = 0;
		else
			v = rnd();
		memcpy(F.mem + off, &v, 8);
	}
	if (pct() < 10)
		F.sigtramp = 0x1000ull * (1 + rnd() % (uint64_t)nr) + rnd() % 0x100;
	memset(r, 0, sizeof(*r));
	r->ip = 0x1000ull * (1 + rnd() % (uint64_t)nr) + rnd() % 0x100;
	r->sp = BASE + (pct() < 80 ? 0 : rnd() % 64);
	r->bp = BASE + (rnd() % (F.len + 64) & ~7ull);
	r->bx = BASE + (rnd() % (F.len + 64));
	r->r13 = rnd();
	*max = pct() < 85 ? 512 : (unsigned)(rnd() % 12);
}

/*
 * The reference walk: the loop unwind_stack() had before its fast paths,
 * over unwind_next(). Fills ref[] and returns the count; *st is left as
 * the walk ended (stop, outer SP) and *a gets it counted.
 */
static size_t ref_walk(const struct sfprof_regs *r, unsigned max,
		       struct unwind_frame *ref, struct unwind_state *st,
		       struct unwind_stats *a)
{
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	unwind_for_each_frame(st, r, F.mem, F.len, &OPS, max) {
		if (n == max)
			break;
		ref[n].pc = st->pc;
		ref[n].flags = st->frame_flags;
		n++;
	}
	if (!st->done) {
		st->done = true;
		st->stop = UNWIND_STOP_MAX_DEPTH;
	}
	unwind_stats__add(a, st);
	return n;
}

TEST(unwind_stack_should_walk_exactly_as_the_state_iterator)
{
	static struct unwind_frame ref[512];
	uint64_t ref_lookups[64];
	int ref_nlookups;

	rng_state = 0x9e3779b97f4a7c15ull;
	for (int iter = 0; iter < 30000; iter++) {
		struct unwind_stats a, b;
		struct sfprof_regs r;
		struct unwind_state st;
		unsigned max;
		size_t n, m;
		uint64_t outer;
		int stop;

		random_case(&r, &max);
		n = ref_walk(&r, max, ref, &st, &a);
		ref_nlookups = F.nlookups;
		memcpy(ref_lookups, F.lookups, sizeof(ref_lookups));

		F.nlookups = 0;
		memset(&b, 0, sizeof(b));
		m = unwind_stack(&r, F.mem, F.len, &OPS, FR, max, &stop, &b, &outer);
		if (outer != st.outer_sp)
			TEST__FAIL("case %d: expected outer SP 0x%" PRIx64 ", got 0x%" PRIx64,
				   iter, st.outer_sp, outer);
		if (m != n || stop != st.stop)
			TEST__FAIL("case %d: expected %zu frames, stop %s; got %zu, %s",
				   iter, n, unwind_stop__name(st.stop), m,
				   unwind_stop__name(stop));
		for (size_t i = 0; i < n; i++)
			if (FR[i].pc != ref[i].pc || FR[i].flags != ref[i].flags ||
			    FR[i].pad != 0)
				TEST__FAIL("case %d frame %zu: expected 0x%" PRIx64
					   "/%u, got 0x%" PRIx64 "/%u",
					   iter, i, ref[i].pc, ref[i].flags,
					   FR[i].pc, FR[i].flags);
		if (memcmp(&a, &b, sizeof(a)))
			TEST__FAIL("case %d: the stats differ", iter);
		if (F.nlookups != ref_nlookups ||
		    memcmp(F.lookups, ref_lookups, sizeof(ref_lookups)))
			TEST__FAIL("case %d: expected %d row lookups, got %d",
				   iter, ref_nlookups, F.nlookups);
	}
}

/* The memo (unwind_cache) must not change a walk: the same random cases,
 * each walked twice (cold, then warm) through a small memo that every case
 * shares under its own tag. The cases reuse the same addresses with other
 * rows, so an entry answered under the wrong tag would show. */
TEST(memo_should_leave_every_walk_as_the_state_iterator_makes_it)
{
	static struct unwind_frame ref[512];
	static struct unwind_cache_entry ents[64];
	struct unwind_cache memo = { .e = ents, .bits = 6 };
	struct unwind_ops ops = OPS;

	ops.cache = &memo;
	rng_state = 0x2545f4914f6cdd1dull;
	for (int iter = 0; iter < 30000; iter++) {
		struct unwind_stats a;
		struct sfprof_regs r;
		struct unwind_state st;
		unsigned max;
		size_t n, m;
		int stop;

		random_case(&r, &max);
		n = ref_walk(&r, max, ref, &st, &a);

		memo.tag = (uint64_t)iter + 1;
		for (int pass = 0; pass < 2; pass++) {
			struct unwind_stats b;
			uint64_t outer;

			memset(&b, 0, sizeof(b));
			m = unwind_stack(&r, F.mem, F.len, &ops, FR, max, &stop, &b,
					 &outer);
			if (outer != st.outer_sp || m != n || stop != st.stop)
				TEST__FAIL("case %d pass %d: expected %zu frames, stop %s, outer SP 0x%" PRIx64
					   "; got %zu, %s, 0x%" PRIx64,
					   iter, pass, n, unwind_stop__name(st.stop),
					   st.outer_sp, m, unwind_stop__name(stop), outer);
			for (size_t i = 0; i < n; i++)
				if (FR[i].pc != ref[i].pc || FR[i].flags != ref[i].flags)
					TEST__FAIL("case %d pass %d frame %zu: expected 0x%" PRIx64
						   "/%u, got 0x%" PRIx64 "/%u",
						   iter, pass, i, ref[i].pc, ref[i].flags,
						   FR[i].pc, FR[i].flags);
			if (memcmp(&a, &b, sizeof(a)))
				TEST__FAIL("case %d pass %d: the stats differ", iter, pass);
		}
	}
	/* the memo answered (25865 hits with this seed) */
	printf("# memo: %" PRIu64 " hits, %" PRIu64 " misses\n", memo.hits, memo.misses);
	CHECK(memo.hits > 10000);
}

/* is_exec for the tests: return addresses in [0x1000, 0x7000) are code */
static bool fake_is_exec(void *ctx, uint64_t ra)
{
	(void)ctx;
	return ra - 1 >= 0x1000 && ra - 1 < 0x7000;
}

TEST(fp_fallback_should_refuse_a_return_address_outside_executable_memory)
{
	/* a JIT frame (no row) whose frame pointer holds data, as
	 * -fomit-frame-pointer code leaves it: the word above it is no return
	 * address, and no frame may be made of it */
	struct unwind_ops ops = OPS;
	struct unwind_stats st = { 0 };
	int stop;

	ops.is_exec = fake_is_exec;
	fake_reset(4096);
	add_range(0x6000, 0x6100, -ESRCH);
	put(BASE + 0x40, BASE + 0x80);
	put(BASE + 0x48, 0x7fff12345678); /* a stack or heap address */
	struct sfprof_regs r = regs_at(0x6010, BASE, BASE + 0x40);
	size_t n = unwind_stack(&r, F.mem, F.len, &ops, FR, 16, &stop, &st, NULL);
	CHECK_INT(stop, UNWIND_STOP_NO_ROW);
	CHECK_INT(n, 1);
	CHECK_U64(st.fp_rejected, 1);
	CHECK_U64(st.fp_frames, 0);
	/* without the check, the same bytes made up a frame */
	n = unwind_stack(&r, F.mem, F.len, &OPS, FR, 16, &stop, NULL, NULL);
	CHECK_INT(n, 2);
	CHECK_U64(FR[1].pc, 0x7fff12345678);
}

TEST(fp_fallback_should_walk_jit_frames_whose_return_addresses_are_code)
{
	/* JIT -> JIT -> C, as the trampolines of Python 3.12 -X perf chain */
	struct unwind_ops ops = OPS;
	struct unwind_stats st = { 0 };
	uint64_t fp1 = BASE + 0x40, fp2 = BASE + 0x80;
	int stop;

	ops.is_exec = fake_is_exec;
	fake_reset(4096);
	add_range(0x6000, 0x6100, -ENOENT); /* (a capture: no mapping known) */
	add_root(0x3000, 0x3100);
	put(fp1, fp2);
	put(fp1 + 8, 0x6050);
	put(fp2, 0);
	put(fp2 + 8, 0x3010);
	struct sfprof_regs r = regs_at(0x6010, BASE, fp1);
	size_t n = unwind_stack(&r, F.mem, F.len, &ops, FR, 16, &stop, &st, NULL);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[1].pc, 0x6050);
	CHECK_U64(FR[2].pc, 0x3010);
	CHECK_U64(st.fp_frames, 2);
	CHECK_U64(st.fp_rejected, 0);
}

TEST(a_row_flagged_exact_ra_should_have_its_caller_looked_up_at_the_return_address)
{
	/* Go's asyncPreempt: its return address is the PC a signal
	 * interrupted, the first byte of a function (0x2100) whose row there
	 * (CFA = SP+8) is not the one before it (0x20ff: CFA = SP+32) */
	int stop;
	struct sfprof_regs r = regs_at(0x1010, BASE, 0);
	build_three_frames();
	F.r[0].row.flags = SFRAME_ROW_EXACT_RA; /* the leaf */
	add_sp_row(0x2100, 0x2200, 8, 0);
	put(BASE + 8, 0x2100);
	put(BASE + 16, 0x3020); /* 0x2100's RA at its CFA - 8 */
	size_t n = walk(&r, &stop);
	CHECK_INT(stop, UNWIND_STOP_COMPLETE);
	CHECK_INT(n, 3);
	CHECK_U64(FR[1].pc, 0x2100);
	CHECK_INT(FR[1].flags, 0);
	CHECK_U64(F.lookups[1], 0x2100);
	CHECK_U64(FR[2].pc, 0x3020);
	CHECK_INT(FR[2].flags, UNWIND_FRAME_CALLER);
}
