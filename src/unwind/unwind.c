// SPDX-License-Identifier: MIT
/*
 * x86-64 user-stack unwinder over a stack snapshot; see src/unwind/unwind.h.
 *
 * Each frame is "resolved" when it becomes current: its row is looked up
 * (PC, or PC - 1 for a return address) and the method that will find its
 * caller is chosen (row, signal frame, frame-pointer fallback). Doing the
 * lookup eagerly lets a signal trampoline be marked as such before the
 * caller reads the frame, so it is symbolized at its exact PC (glibc puts
 * the nop that PC - 1 hits in front of __restore_rt, outside its symbol).
 *
 * This file is the general step, one frame at a time (the state iterator
 * of unwind_for_each_frame()), and the memo; unwind_fast.c walks runs of
 * rows of the common shape, with the same checks, for unwind_stack().
 */
#include <errno.h>
#include <string.h>

#include "unwind/unwind.h"
#include "unwind/dwexpr.h"
#include "unwind/unwind_int.h"

/* Byte offset of uc_mcontext in struct ucontext (uc_flags, uc_link,
 * stack_t uc_stack), and of each register in struct sigcontext (x86-64:
 * arch/x86/include/uapi/asm/sigcontext.h, glibc's REG_* order). Checked
 * against a real handler: the ucontext pointer equals the handler's CFA. */
#define UC_MCONTEXT 40u

/* sigcontext gregs index -> DWARF register number */
static const uint8_t sigctx_to_dwarf[17] = {
	8, 9, 10, 11, 12, 13, 14, 15,	    /* r8..r15 */
	UNWIND_REG_RDI, UNWIND_REG_RSI, UNWIND_REG_RBP, UNWIND_REG_RBX,
	UNWIND_REG_RDX, UNWIND_REG_RAX, UNWIND_REG_RCX, UNWIND_REG_RSP,
	UNWIND_REG_RIP,
};

#define ALL_REGS ((1u << UNWIND_NR_REGS) - 1)

static const char *const stop_names[UNWIND_STOP__NR] = {
	[UNWIND_STOP_NONE] = "none",
	[UNWIND_STOP_COMPLETE] = "complete",
	[UNWIND_STOP_SNAPSHOT] = "snapshot_exhausted",
	[UNWIND_STOP_NO_MAPPING] = "no_mapping",
	[UNWIND_STOP_NO_ROW] = "no_row",
	[UNWIND_STOP_BAD_CFA] = "bad_cfa",
	[UNWIND_STOP_BAD_RULE] = "bad_rule",
	[UNWIND_STOP_MAX_DEPTH] = "max_depth",
	[UNWIND_STOP_NO_REGS] = "no_regs",
	[UNWIND_STOP_STACK_SWITCH] = "stack_switch",
	[UNWIND_STOP_USER_GONE] = "user_gone",
};

const char *unwind_stop__name(int stop)
{
	if (stop < 0 || stop >= UNWIND_STOP__NR)
		return "unknown";
	return stop_names[stop];
}

/*
 * Read one word of user memory from the snapshot. 0, or the stop reason:
 * past the end is "snapshot exhausted", below SP (or wrapping) a bad CFA.
 */
static inline __attribute__((always_inline)) int
read_word(const struct unwind_state *st, uint64_t addr, uint64_t *val)
{
	if (addr < st->stack_lo)
		return UNWIND_STOP_BAD_CFA;
	if (addr > UINT64_MAX - WORD || addr + WORD > st->stack_hi)
		return UNWIND_STOP_SNAPSHOT;
	memcpy(val, st->stack + (addr - st->stack_lo), WORD);
	return 0;
}

static bool reg_known(const struct unwind_state *st, unsigned reg)
{
	return reg < UNWIND_NR_REGS && (st->reg_known & BIT(reg));
}

static int expr_read(void *ctx, uint64_t addr, uint64_t *val)
{
	return read_word(ctx, addr, val);
}

/*
 * A DWARF expression rule (dwexpr.h) over the snapshot and the registers
 * known in this frame, the CFA pushed first for RA and FP (cfa_pushed).
 * Not inlined: the common rows never get here.
 */
static __attribute__((noinline)) int
expr_value(const struct unwind_state *st, const struct sframe_rule *rule, const uint64_t *cfa,
	   uint64_t *val)
{
	struct dwexpr_env env = { st->regs, st->reg_known, expr_read, (void *)st };
	const uint8_t *e;
	size_t len;
	uint64_t v;
	int err;

	_Static_assert(UNWIND_NR_REGS == DWEXPR_NR_REGS, "the same registers");
	if (rule->off <= 0 || dwexpr__get((uint32_t)rule->off, &e, &len))
		return UNWIND_STOP_BAD_RULE;
	err = dwexpr__eval(e, len, &env, cfa, &v);
	if (err == -EFAULT)
		return UNWIND_STOP_SNAPSHOT;
	if (err)
		return UNWIND_STOP_BAD_RULE;
	if (rule->kind == SFRAME_RULE_EXPR)
		return read_word(st, v, val);
	*val = v;
	return 0;
}

/*
 * Value of `rule` in the current frame; `cfa` for CFA_DEREF. 0 or a stop
 * reason. NONE and UNDEFINED are the caller's business.
 */
static inline __attribute__((always_inline)) int
rule_value(const struct unwind_state *st, const struct sframe_rule *rule,
	   uint64_t cfa, uint64_t *val)
{
	switch (rule->kind) {
	case SFRAME_RULE_VAL_EXPR:
	case SFRAME_RULE_EXPR:
		return expr_value(st, rule, &cfa, val);
	case SFRAME_RULE_CFA_DEREF:
		return read_word(st, cfa + (int64_t)rule->off, val);
	case SFRAME_RULE_REG:
		if (!reg_known(st, rule->reg))
			return UNWIND_STOP_BAD_RULE;
		*val = st->regs[rule->reg] + (int64_t)rule->off;
		return 0;
	case SFRAME_RULE_REG_DEREF:
		if (!reg_known(st, rule->reg))
			return UNWIND_STOP_BAD_RULE;
		return read_word(st, st->regs[rule->reg] + (int64_t)rule->off,
				 val);
	default:
		return UNWIND_STOP_BAD_RULE;
	}
}

static bool row_usable(const struct sframe_row *row)
{
	return row->cfa.kind != SFRAME_RULE_NO_RULE &&
	       row->ra.kind != SFRAME_RULE_NO_RULE &&
	       row->fp.kind != SFRAME_RULE_NO_RULE;
}

/* Check once per lookup whether the row has the common shape. */
static void plan_compile(struct unwind_plan *plan)
{
	const struct sframe_row *row = &plan->row;

	plan->fast = false;
	if (row->flags & SFRAME_ROW_EXACT_RA)
		return; /* (the fast step makes every caller a call's) */
	if (row->cfa.kind != SFRAME_RULE_REG ||
	    (row->cfa.reg != UNWIND_REG_RSP && row->cfa.reg != UNWIND_REG_RBP))
		return;
	if (row->ra.kind == SFRAME_RULE_NONE)
		plan->fast_ra_off = -(int32_t)WORD;
	else if (row->ra.kind == SFRAME_RULE_CFA_DEREF)
		plan->fast_ra_off = row->ra.off;
	else
		return; /* UNDEFINED (outermost), REG, REG_DEREF */
	if (row->fp.kind != SFRAME_RULE_NONE &&
	    row->fp.kind != SFRAME_RULE_UNDEFINED &&
	    row->fp.kind != SFRAME_RULE_CFA_DEREF)
		return;
	plan->fast_cfa_reg = row->cfa.reg;
	plan->fast_cfa_off = row->cfa.off;
	plan->fast_fp_kind = row->fp.kind;
	plan->fast_fp_off = row->fp.off;
	plan->fast = true;
}

_Static_assert(sizeof(struct unwind_cache_entry) == 32,
	       "two memo entries a cache line");

/*
 * The memo's answer for `lookup` into the plan: true on a hit, with the
 * row, the function's flags and the row compiled (an entry holds a usable
 * row, and a MEMO_FAST one its compiled offsets).
 */
static bool cache_get(struct unwind_cache *c, uint64_t lookup,
		      struct unwind_plan *plan)
{
	const struct unwind_cache_entry *e = cache_find(c, lookup);
	struct sframe_row *row = &plan->row;

	if (!e) {
		c->misses++;
		return false;
	}
	c->hits++;
	if (e->row_flags & MEMO_FAST) {
		plan->fast = true;
		plan->fast_cfa_reg = e->cfa_reg;
		plan->fast_cfa_off = e->cfa_off;
		plan->fast_ra_off = e->ra_off;
		plan->fast_fp_kind = e->fp_kind;
		plan->fast_fp_off = e->fp_off;
	}
	row->start = 0; /* (the unwinder does not read it) */
	row->flags = e->row_flags & ~(MEMO_FAST | MEMO_OUTER);
	row->cfa = sframe_rule__make(e->cfa_kind, e->cfa_reg, e->cfa_off);
	row->ra = sframe_rule__make(e->ra_kind, e->ra_reg,
				    e->ra_kind == SFRAME_RULE_NONE ? 0 : e->ra_off);
	row->fp = sframe_rule__make(e->fp_kind, e->fp_reg, e->fp_off);
	plan->func.flags = e->func_flags;
	if (!(e->row_flags & MEMO_FAST))
		plan_compile(plan);
	return true;
}

/* Keep a found, compiled row. */
static void cache_put(struct unwind_cache *c, uint64_t lookup,
		      const struct unwind_plan *plan)
{
	const struct sframe_row *row = &plan->row;
	bool signal = plan->func.flags & SFRAME_FUNC_SIGNAL;
	bool fast = plan->fast && !signal;
	bool outer = row->ra.kind == SFRAME_RULE_UNDEFINED && !signal;
	int32_t ra_off = fast ? plan->fast_ra_off : row->ra.off;
	struct unwind_cache_entry *e;

	if (ra_off != (int16_t)ra_off || row->fp.off != (int16_t)row->fp.off ||
	    row->flags >= MEMO_OUTER)
		return;
	/* the newest in the first way, the one it displaces in the second */
	e = cache_set(c, lookup);
	if (e[0].tag == c->tag && e[0].lookup != lookup)
		e[1] = e[0];
	e->lookup = lookup;
	e->tag = c->tag;
	e->cfa_off = row->cfa.off;
	e->ra_off = (int16_t)ra_off;
	e->fp_off = (int16_t)row->fp.off;
	e->cfa_kind = row->cfa.kind;
	e->cfa_reg = row->cfa.reg;
	e->ra_kind = row->ra.kind;
	e->ra_reg = row->ra.reg;
	e->fp_kind = row->fp.kind;
	e->fp_reg = row->fp.reg;
	e->row_flags = (uint8_t)(row->flags | (fast ? MEMO_FAST : 0) |
				 (outer ? MEMO_OUTER : 0));
	e->func_flags = plan->func.flags;
}

/*
 * find_row() at `lookup` (or the memo's copy of its answer) into the plan:
 * 0 (a usable row), -ENOENT or -ESRCH. A found row is kept for the next
 * frame and compiled.
 */
__attribute__((noinline)) int unwind_plan_lookup(struct unwind_state *st, uint64_t lookup)
{
	struct unwind_plan *plan = &st->plan;
	struct unwind_cache *c = st->ops->cache;
	int rc;

	if (c && c->tag && cache_get(c, lookup, plan)) {
		plan->have_lookup = true;
		plan->lookup = lookup;
		return 0;
	}
	plan->have_lookup = false;
	plan->func.flags = 0; /* read by plan_method() even when it fails */
	rc = st->ops->find_row(st->ops->ctx, lookup, &plan->row, &plan->func);
	if (rc == 0 && !row_usable(&plan->row))
		rc = -ESRCH;
	if (rc != 0 && rc != -ENOENT)
		rc = -ESRCH;
	/* only a found row is reused: a miss may re-read the maps */
	if (rc == 0) {
		plan->have_lookup = true;
		plan->lookup = lookup;
		plan_compile(plan);
		/* (a miss may have changed the tag: it names the maps the
		 * row came from) */
		if (c && c->tag && !(plan->func.flags & UNWIND_FUNC_NO_MEMO))
			cache_put(c, lookup, plan);
	}
	return rc;
}

/* Pick how the current frame's caller will be found, given its lookup. */
void unwind_plan_method(struct unwind_state *st, int rc)
{
	struct unwind_plan *plan = &st->plan;

	plan->lookup_rc = rc;
	if (rc == 0 && (plan->func.flags & SFRAME_FUNC_SIGNAL))
		plan->method = UNWIND_METHOD_SIGNAL;
	else if (rc == 0)
		plan->method = UNWIND_METHOD_ROW;
	else if (st->ops->is_sigtramp &&
		 st->ops->is_sigtramp(st->ops->ctx, st->pc))
		plan->method = UNWIND_METHOD_SIGNAL;
	else
		plan->method = UNWIND_METHOD_FP;

	if (plan->method == UNWIND_METHOD_SIGNAL) {
		/* The trampoline was "returned to" at its first byte. */
		st->frame_flags &= ~UNWIND_FRAME_CALLER;
		st->frame_flags |= UNWIND_FRAME_SIGNAL;
	}
}

/* Look up the current frame and pick how its caller will be found. */
static void frame_resolve(struct unwind_state *st)
{
	struct unwind_plan *plan = &st->plan;
	uint64_t lookup = st->pc;
	int rc;

	if (st->frame_flags & UNWIND_FRAME_CALLER)
		lookup--;
	if (plan->have_lookup && plan->lookup == lookup)
		rc = 0; /* same address as the frame before (recursion) */
	else
		rc = unwind_plan_lookup(st, lookup);
	unwind_plan_method(st, rc);
}

/* Enter the caller frame found by a step. */
static void frame_enter(struct unwind_state *st, uint64_t pc, uint32_t flags)
{
	if (st->depth >= st->max_depth) {
		finish(st, UNWIND_STOP_MAX_DEPTH);
		return;
	}
	st->pc = pc;
	st->regs[UNWIND_REG_RIP] = pc;
	st->frame_flags = flags;
	st->depth++;
	frame_resolve(st);
}

/* The CFA must lie above SP (the stack grows down, so callers' frames are
 * at higher addresses) and be word aligned. */
static inline bool cfa_ok(const struct unwind_state *st, uint64_t cfa)
{
	return cfa > st->regs[UNWIND_REG_RSP] && (cfa & (WORD - 1)) == 0;
}

/* The callee-saved registers other than rbp, which rows do not track. */
#define REPLAY_REGS (BIT(UNWIND_REG_RBX) | BIT(12) | BIT(13) | BIT(14) | BIT(15))

/*
 * Register reg in the current frame, where rows left it unknown: the walk
 * again from the top frame (every register known there, and after a
 * signal frame), through each frame's rule for reg (ops->reg_rule). True
 * with st->regs[reg] set and known; false when any frame between does not
 * say (the walk then stops as it would have).
 */
static __attribute__((noinline)) bool reg_recover(struct unwind_state *st, unsigned reg)
{
	struct unwind_state sub;
	uint64_t v;

	if (st->replay || st->on_alt || !st->ops->reg_rule || !st->start || reg >= UNWIND_NR_REGS ||
	    !(REPLAY_REGS & BIT(reg)))
		return false;
	unwind_start(&sub, st->start, st->stack, st->stack_hi - st->stack_lo, st->ops,
		     st->max_depth);
	sub.replay = true;
	v = sub.regs[reg];
	while (!sub.done && sub.depth < st->depth) {
		uint64_t lookup = sub.pc - ((sub.frame_flags & UNWIND_FRAME_CALLER) ? 1 : 0);
		uint64_t sp = sub.regs[UNWIND_REG_RSP];
		int method = sub.plan.method;
		struct unwind_reg_rule rr;

		unwind_next(&sub);
		if (sub.done)
			return false;
		if (method == UNWIND_METHOD_SIGNAL) {
			v = sub.regs[reg]; /* (all of them, from the ucontext) */
			continue;
		}
		/* (a frame found by its frame pointer: no rule to follow) */
		if (method != UNWIND_METHOD_ROW ||
		    st->ops->reg_rule(st->ops->ctx, lookup, reg, &rr))
			return false;
		/* the frame's CFA is its caller's SP; a slot below the
		 * frame's SP is an epilogue's after its pop (no .cfi_restore,
		 * as step_row() says for rbp): the register is the caller's */
		if (rr.kind == UNWIND_REG_AT_CFA) {
			uint64_t slot = sub.regs[UNWIND_REG_RSP] + (uint64_t)rr.off;

			if (slot >= sp && read_word(&sub, slot, &v))
				return false;
		} else if (rr.kind == UNWIND_REG_CFA_PLUS) {
			v = sub.regs[UNWIND_REG_RSP] + (uint64_t)rr.off;
		} else if (rr.kind != UNWIND_REG_SAME) {
			return false;
		}
	}
	if (sub.depth != st->depth || sub.pc != st->pc ||
	    sub.regs[UNWIND_REG_RSP] != st->regs[UNWIND_REG_RSP])
		return false;
	st->regs[reg] = v;
	st->reg_known |= BIT(reg);
	st->reg_replays++;
	return true;
}

/* Whether a rule may read a register not known in this frame. */
static inline bool rule_needs(const struct unwind_state *st, const struct sframe_rule *r)
{
	return ((r->kind == SFRAME_RULE_REG || r->kind == SFRAME_RULE_REG_DEREF) &&
		!reg_known(st, r->reg)) ||
	       r->kind == SFRAME_RULE_VAL_EXPR || r->kind == SFRAME_RULE_EXPR;
}

/* Make the registers a rule reads known, where a replay can. */
static void rule_regs(struct unwind_state *st, const struct sframe_rule *r)
{
	const uint8_t *e;
	size_t len;
	uint32_t need = 0;

	if (r->kind == SFRAME_RULE_REG || r->kind == SFRAME_RULE_REG_DEREF)
		need = r->reg < UNWIND_NR_REGS ? BIT(r->reg) : 0;
	else if ((r->kind == SFRAME_RULE_EXPR || r->kind == SFRAME_RULE_VAL_EXPR) && r->off > 0 &&
		 !dwexpr__get((uint32_t)r->off, &e, &len))
		need = dwexpr__regs(e, len);
	need &= ~st->reg_known & REPLAY_REGS;
	for (unsigned reg = 0; need; reg++, need >>= 1)
		if (need & 1)
			reg_recover(st, reg);
}

static void step_row(struct unwind_state *st)
{
	const struct sframe_row *row = &st->plan.row;
	uint64_t cfa, ra, fp = st->regs[UNWIND_REG_RBP];
	bool fp_known = reg_known(st, UNWIND_REG_RBP);
	int rc;

	/* the words above SP are another stack's (goruntime.h) */
	if (row->flags & SFRAME_ROW_STACK_SWITCH)
		return finish(st, UNWIND_STOP_STACK_SWITCH);
	/* outermost frame: nothing else in the row matters */
	if (row->ra.kind == SFRAME_RULE_UNDEFINED) {
		st->outer_sp = st->regs[UNWIND_REG_RSP];
		return finish(st, UNWIND_STOP_COMPLETE);
	}
	/* (the common rows name SP or FP, which are known) */
	if (rule_needs(st, &row->cfa) || rule_needs(st, &row->ra) || rule_needs(st, &row->fp)) {
		rule_regs(st, &row->cfa);
		rule_regs(st, &row->ra);
		rule_regs(st, &row->fp);
	}
	if (row->cfa.kind == SFRAME_RULE_VAL_EXPR)
		rc = expr_value(st, &row->cfa, NULL, &cfa); /* (nothing pushed) */
	else if (row->cfa.kind != SFRAME_RULE_REG &&
		 row->cfa.kind != SFRAME_RULE_REG_DEREF)
		return finish(st, UNWIND_STOP_BAD_RULE);
	else
		rc = rule_value(st, &row->cfa, 0, &cfa);
	if (rc)
		return finish(st, rc);
	/*
	 * A return address a register holds (glibc's __vfork pops it into
	 * rdi around the syscall: CFA = SP there) leaves nothing on the
	 * stack to step over; registers other than SP, FP and IP are known
	 * in the top frame only, so this cannot repeat.
	 */
	if (!cfa_ok(st, cfa) &&
	    !(row->ra.kind == SFRAME_RULE_REG && cfa == st->regs[UNWIND_REG_RSP] &&
	      !(cfa & (WORD - 1))))
		return finish(st, UNWIND_STOP_BAD_CFA);

	if (row->ra.kind == SFRAME_RULE_NONE) {
		/* AMD64: the return address is always at CFA - 8. */
		rc = read_word(st, cfa - WORD, &ra);
	} else {
		rc = rule_value(st, &row->ra, cfa, &ra);
	}
	if (rc)
		return finish(st, rc);

	switch (row->fp.kind) {
	case SFRAME_RULE_NONE:
		break; /* not saved by this function: unchanged */
	case SFRAME_RULE_UNDEFINED:
		fp_known = false;
		break;
	case SFRAME_RULE_CFA_DEREF:
		/*
		 * In an epilogue, after `pop %rbp`, compilers' CFI still says
		 * "saved at CFA-48" (no .cfi_restore) while the slot is below
		 * SP: the register already holds the caller's value.
		 */
		if (cfa + (int64_t)row->fp.off < st->regs[UNWIND_REG_RSP])
			break;
		/* fall through */
	default:
		rc = rule_value(st, &row->fp, cfa, &fp);
		if (rc)
			return finish(st, rc);
		fp_known = true;
	}

	if (ra == 0)
		return finish(st, UNWIND_STOP_COMPLETE);

	/* Only SP, FP and IP are known in the caller: other callee-saved
	 * registers are not described by SFrame rows. */
	st->regs[UNWIND_REG_RSP] = cfa;
	st->regs[UNWIND_REG_RBP] = fp;
	st->reg_known = BIT(UNWIND_REG_RSP) | BIT(UNWIND_REG_RIP) |
			(fp_known ? BIT(UNWIND_REG_RBP) : 0);
	frame_enter(st, ra, (row->flags & SFRAME_ROW_EXACT_RA) ? 0 : UNWIND_FRAME_CALLER);
}

/*
 * At a signal trampoline SP points at the ucontext of the rt_sigframe
 * (the handler's `ret` popped pretcode): every register of the
 * interrupted frame is in uc_mcontext.
 */
static void step_signal(struct unwind_state *st)
{
	uint64_t sp = st->regs[UNWIND_REG_RSP], regs[UNWIND_NR_REGS];
	uint64_t base = sp + UC_MCONTEXT;
	int rc;

	if (!reg_known(st, UNWIND_REG_RSP) || (sp & (WORD - 1)))
		return finish(st, UNWIND_STOP_BAD_CFA);
	for (unsigned i = 0; i < 17; i++) {
		rc = read_word(st, base + i * WORD, &regs[sigctx_to_dwarf[i]]);
		if (rc)
			return finish(st, rc);
	}
	/* The interrupted SP lies above the signal frame, unless the handler
	 * ran on an alternate stack: the walk goes on in the second snapshot
	 * where that holds it (once), else stops. */
	if (regs[UNWIND_REG_RSP] <= sp || regs[UNWIND_REG_RSP] >= st->stack_hi) {
		const struct unwind_ops *o = st->ops;
		uint64_t isp = regs[UNWIND_REG_RSP];

		if (!st->on_alt && o->alt && o->alt_len >= WORD && isp >= o->alt_lo &&
		    isp - o->alt_lo < o->alt_len && o->alt_lo <= UINT64_MAX - o->alt_len) {
			st->stack = o->alt;
			st->stack_lo = o->alt_lo;
			st->stack_hi = o->alt_lo + o->alt_len;
			st->on_alt = true;
		} else if (isp <= sp) {
			return finish(st, UNWIND_STOP_BAD_CFA);
		}
	}
	if (regs[UNWIND_REG_RIP] == 0)
		return finish(st, UNWIND_STOP_COMPLETE);
	memcpy(st->regs, regs, sizeof(regs));
	st->reg_known = ALL_REGS;
	st->sig_frames++;
	/* The interrupted PC is not a return address: look it up as is. */
	frame_enter(st, regs[UNWIND_REG_RIP], 0);
}

/*
 * No row: assume a frame-pointer frame (push %rbp; mov %rsp,%rbp), as JIT
 * code and trampolines keep (node, Python 3.12 -X perf), but only while
 * FP points into the snapshot above SP and the return address is
 * executable, so garbage in a register that -fomit-frame-pointer code
 * uses freely cannot send the walk anywhere. Runs only where no row is
 * found: the fast loop never gets here.
 */
static void step_fp(struct unwind_state *st, int lookup_rc)
{
	int nope = lookup_rc == -ENOENT ? UNWIND_STOP_NO_MAPPING
					: UNWIND_STOP_NO_ROW;
	uint64_t fp = st->regs[UNWIND_REG_RBP], ra, caller_fp;

	if (!reg_known(st, UNWIND_REG_RBP) || fp < st->regs[UNWIND_REG_RSP] ||
	    (fp & (WORD - 1)) || fp > UINT64_MAX - 2 * WORD)
		return finish(st, nope);
	/* read_word() keeps both reads inside the snapshot */
	if (read_word(st, fp, &caller_fp) || read_word(st, fp + WORD, &ra))
		return finish(st, nope);
	if (ra == 0)
		return finish(st, UNWIND_STOP_COMPLETE);
	if (st->ops->is_exec && !st->ops->is_exec(st->ops->ctx, ra)) {
		st->fp_rejected++;
		return finish(st, nope);
	}
	st->regs[UNWIND_REG_RSP] = fp + 2 * WORD;
	st->regs[UNWIND_REG_RBP] = caller_fp;
	st->reg_known = BIT(UNWIND_REG_RSP) | BIT(UNWIND_REG_RBP) |
			BIT(UNWIND_REG_RIP);
	st->fp_frames++;
	frame_enter(st, ra, UNWIND_FRAME_CALLER | UNWIND_FRAME_FP);
}

static void regs_load(struct unwind_state *st, const struct sfprof_regs *r)
{
	uint64_t *g = st->regs;

	g[UNWIND_REG_RAX] = r->ax;
	g[UNWIND_REG_RDX] = r->dx;
	g[UNWIND_REG_RCX] = r->cx;
	g[UNWIND_REG_RBX] = r->bx;
	g[UNWIND_REG_RSI] = r->si;
	g[UNWIND_REG_RDI] = r->di;
	g[UNWIND_REG_RBP] = r->bp;
	g[UNWIND_REG_RSP] = r->sp;
	g[8] = r->r8;
	g[9] = r->r9;
	g[10] = r->r10;
	g[11] = r->r11;
	g[12] = r->r12;
	g[13] = r->r13;
	g[14] = r->r14;
	g[15] = r->r15;
	g[UNWIND_REG_RIP] = r->ip;
	st->reg_known = ALL_REGS;
}

void unwind_start(struct unwind_state *st, const struct sfprof_regs *regs,
		  const void *stack, size_t len, const struct unwind_ops *ops,
		  unsigned max_depth)
{
	/* (every field is set here; the plan's before it is read) */
	st->frame_flags = 0;
	st->stop = UNWIND_STOP_NONE;
	st->done = false;
	st->outer_sp = 0;
	st->fp_frames = 0;
	st->fp_rejected = 0;
	st->sig_frames = 0;
	st->reg_replays = 0;
	st->start = regs;
	st->replay = false;
	st->on_alt = false;
	st->plan.have_lookup = false;
	st->ops = ops;
	st->max_depth = max_depth ? max_depth : 1;
	st->stack = stack;
	if (!stack)
		len = 0;
	regs_load(st, regs);
	st->stack_lo = regs->sp;
	st->stack_hi = regs->sp + len;
	if (st->stack_hi < st->stack_lo) /* wraps: keep what fits */
		st->stack_hi = UINT64_MAX;
	st->pc = regs->ip;
	st->depth = 1;
	if (regs->ip == 0 || regs->sp == 0 || !ops || !ops->find_row) {
		st->depth = 0;
		finish(st, UNWIND_STOP_NO_REGS);
		return;
	}
	frame_resolve(st);
}

void unwind_next(struct unwind_state *st)
{
	if (st->done)
		return;
	switch (st->plan.method) {
	case UNWIND_METHOD_ROW:
		step_row(st);
		break;
	case UNWIND_METHOD_SIGNAL:
		step_signal(st);
		break;
	default:
		step_fp(st, st->plan.lookup_rc);
		break;
	}
}

void unwind_stats__add(struct unwind_stats *s, const struct unwind_state *st)
{
	s->stacks++;
	s->frames += st->depth;
	s->fp_frames += st->fp_frames;
	s->fp_rejected += st->fp_rejected;
	s->signal_frames += st->sig_frames;
	s->reg_replays += st->reg_replays;
	if (st->stop >= 0 && st->stop < UNWIND_STOP__NR)
		s->stop[st->stop]++;
}

void unwind_stats__merge(struct unwind_stats *dst,
			 const struct unwind_stats *src)
{
	dst->stacks += src->stacks;
	dst->frames += src->frames;
	dst->fp_frames += src->fp_frames;
	dst->fp_rejected += src->fp_rejected;
	dst->signal_frames += src->signal_frames;
	dst->reg_replays += src->reg_replays;
	for (int i = 0; i < UNWIND_STOP__NR; i++)
		dst->stop[i] += src->stop[i];
}

void unwind_stats__print(const struct unwind_stats *s, FILE *f)
{
	fprintf(f, "unwind_stacks: %llu\n", (unsigned long long)s->stacks);
	fprintf(f, "unwind_frames: %llu\n", (unsigned long long)s->frames);
	fprintf(f, "unwind_fp_fallback_frames: %llu\n",
		(unsigned long long)s->fp_frames);
	fprintf(f, "unwind_fp_fallback_rejected: %llu\n",
		(unsigned long long)s->fp_rejected);
	fprintf(f, "unwind_signal_frames: %llu\n",
		(unsigned long long)s->signal_frames);
	fprintf(f, "unwind_reg_replays: %llu\n", (unsigned long long)s->reg_replays);
	for (int i = UNWIND_STOP_COMPLETE; i < UNWIND_STOP__NR; i++)
		fprintf(f, "unwind_stop_%s: %llu\n", stop_names[i],
			(unsigned long long)s->stop[i]);
}
