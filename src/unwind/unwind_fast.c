// SPDX-License-Identifier: MIT
/*
 * The unwinder's fast loop (src/unwind/unwind.h): unwind_stack() walks runs
 * of rows of the common shape (CFA = SP or FP + offset, RA and FP saved at
 * CFA + offset) with the walk's state in registers, and hands every other
 * frame to the general step of unwind.c. Both must give the same frames
 * and stop: tests/fuzz/fuzz_unwind.c checks it.
 */
#include <string.h>

#include "unwind/unwind.h"
#include "unwind/unwind_int.h"

/* flags and pad of a caller frame, stored as one word */
static const uint64_t caller_flags = UNWIND_FRAME_CALLER;
_Static_assert(offsetof(struct unwind_frame, pad) ==
		       offsetof(struct unwind_frame, flags) + 4 &&
	       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "caller_flags is flags = UNWIND_FRAME_CALLER, pad = 0");

/* A compiled row of the common shape, as walk_fast() steps by it. */
struct fast_row {
	int64_t cfa_off, ra_off, fp_off;
	uint8_t fp_kind;
	bool cfa_sp; /* CFA from SP, else from FP */
};

static inline struct fast_row fast_row_of_plan(const struct unwind_plan *p)
{
	return (struct fast_row){ p->fast_cfa_off, p->fast_ra_off, p->fast_fp_off,
				  p->fast_fp_kind, p->fast_cfa_reg == UNWIND_REG_RSP };
}

static inline struct fast_row fast_row_of_memo(const struct unwind_cache_entry *e)
{
	return (struct fast_row){ e->cfa_off, e->ra_off, e->fp_off, e->fp_kind,
				  e->cfa_reg == UNWIND_REG_RSP };
}

/* Store caller frame `ra` at f; the next free one. */
static inline struct unwind_frame *put_caller(struct unwind_frame *f, uint64_t ra)
{
	f->pc = ra;
	memcpy(&f->flags, &caller_flags, sizeof(caller_flags));
	return f + 1;
}

/*
 * step_row() + frame_enter() + frame_resolve() while the rows are ones
 * plan_compile() accepted, with the walk's state in registers: the same
 * checks in the same order, the same lookups, and the same state when it
 * returns. Called by unwind_stack() with the current frame stored in
 * frames[n - 1], where n == st->depth and max == st->max_depth, so one
 * count bounds both; the snapshot holds at least a word. Stores the
 * caller frames it enters, and returns the new count when the walk ends,
 * when a frame needs the general code (its row has another shape, it has
 * none, or it is a signal frame: it is then resolved but not stored), or
 * when max frames are stored.
 */
static size_t walk_fast(struct unwind_state *st, struct unwind_frame *frames,
			size_t n, size_t max)
{
	struct unwind_plan *plan = &st->plan;
	struct unwind_frame *f = frames + n, *const end = frames + max;
	const uint8_t *const stack = st->stack;
	const uint64_t lo = st->stack_lo;
	/* an 8-byte read at lo + off lies in the snapshot iff off <= last */
	const uint64_t last = st->stack_hi - st->stack_lo - WORD;
	/* no CFA inside the snapshot can wrap (user addresses are far below) */
	const bool tame = st->stack_hi <= (1ull << 63);
	struct unwind_cache *const memo =
		st->ops->cache && st->ops->cache->tag ? st->ops->cache : NULL;
	const uint64_t sp0 = st->regs[UNWIND_REG_RSP];
	uint64_t sp = sp0, fp = st->regs[UNWIND_REG_RBP];
	uint64_t cfa, ra = 0, addr, nfp, memo_hits = 0;
	bool fp_known = st->reg_known & BIT(UNWIND_REG_RBP), nfp_known;
	bool entered = false;	/* frame ra entered, not stored */
	bool repeat;		/* ra is the address of the frame before */
	int stop = UNWIND_STOP_NONE, rc = 0;
	/* the row of the current frame, compiled */
	struct fast_row r = fast_row_of_plan(plan);
	/* the return address whose lookup repeats this frame's (a zero
	 * return address ends the walk before it is compared) */
	uint64_t same_ra = plan->lookup + 1;

	for (;;) {
		/* SP is always known; FP only while a row saved or kept it */
		if (r.cfa_sp) {
			cfa = sp + r.cfa_off;
		} else if (fp_known) {
			cfa = fp + r.cfa_off;
		} else {
			stop = UNWIND_STOP_BAD_RULE;
			break;
		}
		if (cfa <= sp || (cfa & (WORD - 1))) {
			stop = UNWIND_STOP_BAD_CFA;
			break;
		}
		/* read_word(), inline */
		addr = cfa + r.ra_off;
		if (addr - lo > last) {
			stop = addr < lo ? UNWIND_STOP_BAD_CFA : UNWIND_STOP_SNAPSHOT;
			break;
		}
		memcpy(&ra, stack + (addr - lo), WORD);
		nfp = fp;
		nfp_known = fp_known;
		if (r.fp_kind == SFRAME_RULE_NONE) {
			/* kept */
		} else if (r.fp_kind == SFRAME_RULE_UNDEFINED) {
			nfp_known = false;
		} else if (cfa + r.fp_off >= sp) { /* SFRAME_RULE_CFA_DEREF */
			/* (below SP: an epilogue after `pop %rbp`, see step_row) */
			addr = cfa + r.fp_off;
			if (addr - lo > last) {
				stop = addr < lo ? UNWIND_STOP_BAD_CFA
						 : UNWIND_STOP_SNAPSHOT;
				break;
			}
			memcpy(&nfp, stack + (addr - lo), WORD);
			nfp_known = true;
		}
		if (ra == 0) {
			stop = UNWIND_STOP_COMPLETE;
			break;
		}
		sp = cfa;
		fp = nfp;
		fp_known = nfp_known;
		if (f == end) { /* st->depth >= st->max_depth */
			stop = UNWIND_STOP_MAX_DEPTH;
			break;
		}
		repeat = ra == same_ra;
		if (!repeat) {
			/* frame_resolve(): a new address */
			const struct unwind_cache_entry *me =
				memo ? cache_find(memo, ra - 1) : NULL;

			if (me && (me->row_flags & (MEMO_FAST | MEMO_OUTER))) {
				/* the memo's row, stepped from the entry: this
				 * loop ends only with the walk or right after
				 * plan_lookup(), so the plan need not hold it */
				memo_hits++;
				if (me->row_flags & MEMO_OUTER) {
					/* the entry frame: step_row() would
					 * end the walk at it */
					f = put_caller(f, ra);
					st->outer_sp = sp;
					stop = UNWIND_STOP_COMPLETE;
					break;
				}
				r = fast_row_of_memo(me);
			} else {
				rc = unwind_plan_lookup(st, ra - 1);
				if (rc || !plan->fast ||
				    (plan->func.flags & SFRAME_FUNC_SIGNAL)) {
					entered = true;
					break;
				}
				r = fast_row_of_plan(plan);
			}
			same_ra = ra;
		}
		/* (a repeated address has the same row, accepted before) */
		f = put_caller(f, ra);
		/*
		 * Recursion through a row of the most common shape (CFA = SP
		 * + offset, FP kept): while the return address repeats, step
		 * with no more than the checks. Anything else (a check that
		 * fails, another address) is taken again by the general step
		 * above, which decides.
		 */
		if (repeat && r.cfa_sp && r.fp_kind == SFRAME_RULE_NONE &&
		    r.cfa_off > 0 && !((sp | (uint64_t)r.cfa_off) & (WORD - 1)) &&
		    sp - lo <= last && tame) {
			/* The CFA grows and stays aligned (SP and the offset
			 * both are), and the snapshot bounds the reads. SP
			 * starts inside the snapshot, below 2^63, so neither
			 * the CFA nor the offset can wrap. */
			const uint64_t step = (uint64_t)r.cfa_off;
			/* where the next frame's return address lies */
			const uint64_t at = sp - lo + step + (uint64_t)r.ra_off;

			if (at <= last) {
				/* the frames the snapshot and the array have room for */
				size_t k = (size_t)((last - at) / step + 1);
				const struct unwind_frame *const f0 = f;
				const uint8_t *p = stack + at;

				if (k > (size_t)(end - f))
					k = (size_t)(end - f);
				for (; k; k--, p += step) {
					memcpy(&ra, p, WORD);
					if (ra != same_ra)
						break;
					f = put_caller(f, ra);
				}
				sp += step * (uint64_t)(f - f0);
			}
		}
	}
	if (memo)
		memo->hits += memo_hits;
	n = (size_t)(f - frames);
	if (sp != sp0) { /* a step was taken: the CFA grows */
		st->regs[UNWIND_REG_RSP] = sp;
		st->regs[UNWIND_REG_RBP] = fp;
		st->reg_known = BIT(UNWIND_REG_RSP) | BIT(UNWIND_REG_RIP) |
				(fp_known ? BIT(UNWIND_REG_RBP) : 0);
	}
	if (n > (size_t)st->depth || entered) {
		/* the last frame entered, stored or not, is the current one */
		st->pc = entered ? ra : f[-1].pc;
		st->regs[UNWIND_REG_RIP] = st->pc;
		st->frame_flags = UNWIND_FRAME_CALLER;
		st->depth = (unsigned)(n + entered);
	}
	if (stop != UNWIND_STOP_NONE)
		finish(st, stop);
	else /* entered: its lookup found no row of the common shape */
		unwind_plan_method(st, rc);
	return n;
}

size_t unwind_stack(const struct sfprof_regs *regs, const void *stack,
		    size_t len, const struct unwind_ops *ops,
		    struct unwind_frame *frames, size_t max, int *stop,
		    struct unwind_stats *stats, uint64_t *outer_sp)
{
	struct unwind_state st;
	size_t n = 0;

	if (max > UINT32_MAX)
		max = UINT32_MAX;
	/* unwind_for_each_frame(), with runs of common rows walked by
	 * walk_fast() */
	for (unwind_start(&st, regs, stack, len, ops, (unsigned)max); !st.done;) {
		if (n == max) /* max == 0 */
			break;
		frames[n].pc = st.pc;
		frames[n].flags = st.frame_flags;
		frames[n].pad = 0;
		n++;
		if (st.plan.method == UNWIND_METHOD_ROW && st.plan.fast &&
		    st.stack_hi - st.stack_lo >= WORD && n == st.depth &&
		    max == st.max_depth)
			n = walk_fast(&st, frames, n, max);
		else
			unwind_next(&st);
	}
	if (!st.done)
		finish(&st, UNWIND_STOP_MAX_DEPTH);
	if (stop)
		*stop = st.stop;
	if (outer_sp)
		*outer_sp = st.outer_sp;
	if (stats)
		unwind_stats__add(stats, &st);
	return n;
}

