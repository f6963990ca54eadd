// SPDX-License-Identifier: MIT
/*
 * x86-64 user-stack unwinder over a stack snapshot; see include/unwind.h.
 *
 * Each frame is "resolved" when it becomes current: its row is looked up
 * (PC, or PC - 1 for a return address) and the method that will find its
 * caller is chosen (row, signal frame, frame-pointer fallback). Doing the
 * lookup eagerly lets a signal trampoline be marked as such before the
 * caller reads the frame, so it is symbolized at its exact PC (glibc puts
 * the nop that PC - 1 hits in front of __restore_rt, outside its symbol).
 */
#include <errno.h>
#include <string.h>

#include "unwind.h"

#define WORD 8u
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

#define BIT(r) (1u << (r))
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
};

const char *unwind_stop__name(int stop)
{
	if (stop < 0 || stop >= UNWIND_STOP__NR)
		return "unknown";
	return stop_names[stop];
}

static void finish(struct unwind_state *st, int stop)
{
	st->done = true;
	st->stop = stop;
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

/*
 * Value of `rule` in the current frame; `cfa` for CFA_DEREF. 0 or a stop
 * reason. NONE and UNDEFINED are the caller's business.
 */
static inline __attribute__((always_inline)) int
rule_value(const struct unwind_state *st, const struct sframe_rule *rule,
	   uint64_t cfa, uint64_t *val)
{
	switch (rule->kind) {
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

/* flags and pad of a caller frame, stored as one word */
static const uint64_t caller_flags = UNWIND_FRAME_CALLER;
_Static_assert(offsetof(struct unwind_frame, pad) ==
		       offsetof(struct unwind_frame, flags) + 4 &&
	       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "caller_flags is flags = UNWIND_FRAME_CALLER, pad = 0");

_Static_assert(sizeof(struct unwind_cache_entry) == 32,
	       "two memo entries a cache line");

/*
 * Two ways a set, the two entries of one cache line: a walk's addresses
 * that hash to one set (a few in a hundred walks, with ASLR) both stay,
 * where one way made them evict each other on every walk.
 */
static struct unwind_cache_entry *cache_set(const struct unwind_cache *c, uint64_t lookup)
{
	uint64_t h = (lookup ^ (c->tag << 40)) * 0x9e3779b97f4a7c15ull;

	return &c->e[(h >> (64 - c->bits)) & ~(uint64_t)1];
}

/* The memo's entry for lookup, or NULL. */
static inline const struct unwind_cache_entry *cache_find(const struct unwind_cache *c,
							  uint64_t lookup)
{
	const struct unwind_cache_entry *e = cache_set(c, lookup);

	if (e[0].lookup == lookup && e[0].tag == c->tag)
		return &e[0];
	if (e[1].lookup == lookup && e[1].tag == c->tag)
		return &e[1];
	return NULL;
}

/* unwind_cache_entry.row_flags: the row is one walk_fast() steps by (then
 * ra_off holds the compiled RA offset), or one that ends a walk there (RA
 * undefined: a thread's or process's entry frame) */
#define MEMO_FAST 0x80u
#define MEMO_OUTER 0x40u

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
static __attribute__((noinline)) int plan_lookup(struct unwind_state *st,
						 uint64_t lookup)
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
		if (c && c->tag)
			cache_put(c, lookup, plan);
	}
	return rc;
}

/* Pick how the current frame's caller will be found, given its lookup. */
static void plan_method(struct unwind_state *st, int rc)
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
		rc = plan_lookup(st, lookup);
	plan_method(st, rc);
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
	if (row->cfa.kind != SFRAME_RULE_REG &&
	    row->cfa.kind != SFRAME_RULE_REG_DEREF)
		return finish(st, UNWIND_STOP_BAD_RULE);
	rc = rule_value(st, &row->cfa, 0, &cfa);
	if (rc)
		return finish(st, rc);
	if (!cfa_ok(st, cfa))
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
	frame_enter(st, ra, UNWIND_FRAME_CALLER);
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
	/* The interrupted SP lies above the signal frame (unless the handler
	 * ran on an alternate stack, which this snapshot does not hold). */
	if (regs[UNWIND_REG_RSP] <= sp)
		return finish(st, UNWIND_STOP_BAD_CFA);
	if (regs[UNWIND_REG_RIP] == 0)
		return finish(st, UNWIND_STOP_COMPLETE);
	memcpy(st->regs, regs, sizeof(regs));
	st->reg_known = ALL_REGS;
	st->sig_frames++;
	/* The interrupted PC is not a return address: look it up as is. */
	frame_enter(st, regs[UNWIND_REG_RIP], 0);
}

/*
 * No row: assume a frame-pointer frame (push %rbp; mov %rsp,%rbp), but
 * only while FP points into the snapshot above SP, so garbage in a
 * register that -fomit-frame-pointer code uses freely cannot send the
 * walk anywhere.
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
	st->sig_frames = 0;
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
				rc = plan_lookup(st, ra - 1);
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
		plan_method(st, rc);
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

void unwind_stats__add(struct unwind_stats *s, const struct unwind_state *st)
{
	s->stacks++;
	s->frames += st->depth;
	s->fp_frames += st->fp_frames;
	s->signal_frames += st->sig_frames;
	if (st->stop >= 0 && st->stop < UNWIND_STOP__NR)
		s->stop[st->stop]++;
}

void unwind_stats__merge(struct unwind_stats *dst,
			 const struct unwind_stats *src)
{
	dst->stacks += src->stacks;
	dst->frames += src->frames;
	dst->fp_frames += src->fp_frames;
	dst->signal_frames += src->signal_frames;
	for (int i = 0; i < UNWIND_STOP__NR; i++)
		dst->stop[i] += src->stop[i];
}

void unwind_stats__print(const struct unwind_stats *s, FILE *f)
{
	fprintf(f, "unwind_stacks: %llu\n", (unsigned long long)s->stacks);
	fprintf(f, "unwind_frames: %llu\n", (unsigned long long)s->frames);
	fprintf(f, "unwind_fp_fallback_frames: %llu\n",
		(unsigned long long)s->fp_frames);
	fprintf(f, "unwind_signal_frames: %llu\n",
		(unsigned long long)s->signal_frames);
	for (int i = UNWIND_STOP_COMPLETE; i < UNWIND_STOP__NR; i++)
		fprintf(f, "unwind_stop_%s: %llu\n", stop_names[i],
			(unsigned long long)s->stop[i]);
}
