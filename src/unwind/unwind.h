/* SPDX-License-Identifier: MIT */
/*
 * The user-stack unwinder (x86-64): captured registers + a snapshot of the
 * stack bytes at [sp, sp + len) + a row lookup callback -> a list of PCs
 * and the reason the walk stopped.
 *
 * Pure code: no I/O, no allocation. The caller supplies the row lookup
 * (proc__find_row in the live and report paths, a table of hand-made rows
 * in the unit tests). Modelled on the kernel's kernel/unwind/user.c: a
 * small state iterator, one rule evaluation shared by every method, and
 * hard checks at every step: the CFA grows, stays 8-aligned, and every
 * word read lies inside the snapshot.
 *
 * Rules (DESIGN.md "Unwinding rules"):
 *  - the first frame (and the frame interrupted by a signal) looks up PC,
 *    every other frame PC - 1 (a return address points past its call);
 *  - CFA = rule register (SP, FP, or in frames where every register is
 *    known, any DWARF register; REG_DEREF reads through it) + offset;
 *  - RA = *(CFA - 8) (AMD64 fixed) or as the row says; FP = *(CFA + off)
 *    when the row tracks it, else unchanged; the caller's SP = CFA;
 *  - signal frames (SFRAME_FUNC_SIGNAL, or is_sigtramp() says PC is
 *    __restore_rt): every register comes from the rt_sigframe's ucontext;
 *  - where no row exists (JIT code, trampolines in anonymous memory, a
 *    binary without tables): frame-pointer fallback (CFA = FP + 16, RA =
 *    *(CFA - 8), caller FP = *(CFA - 16)), only while FP lies in the
 *    snapshot above SP, and (with is_exec) only to a return address in
 *    executable memory: otherwise the walk stops as it would without it;
 *  - outermost: RA rule UNDEFINED, or RA == 0.
 */
#ifndef SFPROF_UNWIND_H
#define SFPROF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "unwind/sframe.h"
#include "sfprof_event.h"

/* Why a walk ended. Every stop is counted (unwind_stats). */
enum unwind_stop {
	UNWIND_STOP_NONE = 0,	  /* still walking */
	UNWIND_STOP_COMPLETE,	  /* reached the outermost frame */
	UNWIND_STOP_SNAPSHOT,	  /* a read fell past the end of the snapshot */
	UNWIND_STOP_NO_MAPPING,	  /* PC in no mapping, FP fallback impossible */
	UNWIND_STOP_NO_ROW,	  /* PC has no row, FP fallback impossible */
	UNWIND_STOP_BAD_CFA,	  /* CFA did not grow, misaligned, below SP */
	UNWIND_STOP_BAD_RULE,	  /* rule names a register not known here */
	UNWIND_STOP_MAX_DEPTH,	  /* frame limit reached */
	UNWIND_STOP_NO_REGS,	  /* the event carried no user registers */
	UNWIND_STOP_STACK_SWITCH, /* at a function that switched stacks (Go) */
	UNWIND_STOP_USER_GONE,	  /* in the kernel, no user stack left (exit,
				     exec): the kernel part only, complete */
	UNWIND_STOP__NR,
};

/* DWARF register numbers on x86-64 (SysV psABI, figure 3.36). */
enum {
	UNWIND_REG_RAX = 0,
	UNWIND_REG_RDX = 1,
	UNWIND_REG_RCX = 2,
	UNWIND_REG_RBX = 3,
	UNWIND_REG_RSI = 4,
	UNWIND_REG_RDI = 5,
	UNWIND_REG_RBP = 6,
	UNWIND_REG_RSP = 7,
	UNWIND_REG_R8 = 8, /* .. r15 = 15 */
	UNWIND_REG_RIP = 16,
	UNWIND_NR_REGS = 17,
};

/* unwind_frame.flags */
enum {
	/* pc is a return address: symbolize/look up pc - 1 */
	UNWIND_FRAME_CALLER = 1u << 0,
	/* found through the frame-pointer fallback (no row for the callee) */
	UNWIND_FRAME_FP = 1u << 1,
	/* this frame is a signal trampoline (__restore_rt) */
	UNWIND_FRAME_SIGNAL = 1u << 2,
};

struct unwind_frame {
	uint64_t pc;
	uint32_t flags;
	uint32_t pad;
};

/*
 * Row lookup at `pc` (already PC - 1 where that applies). Returns 0 with
 * *row and *func (func->flags: SFRAME_FUNC_SIGNAL), -ENOENT when pc is in
 * no mapping (or in a mapping with no table), -ESRCH when the table has no
 * row for pc. Any other negative value counts as -ESRCH.
 */
/*
 * A func->flags bit find_row() may set (beside SFRAME_FUNC_*): the row is
 * good for this lookup only, the memo (struct unwind_cache) must not keep
 * it (a row made from a JIT's map, which changes under the same tag).
 */
#define UNWIND_FUNC_NO_MEMO (1u << 7)

typedef int (*unwind_find_row_fn)(void *ctx, uint64_t pc,
				  struct sframe_row *row,
				  struct sframe_func *func);
/*
 * Optional: is `pc` (the exact address, as a return address points at it)
 * the first instruction of a signal return trampoline? Asked only when the
 * lookup found nothing usable, so it may be slow-ish (symbolization).
 */
typedef bool (*unwind_is_sigtramp_fn)(void *ctx, uint64_t pc);
/*
 * Optional: does return address `ra` (its call, ra - 1) lie in executable
 * memory? Asked only by the frame-pointer fallback, for the return
 * address it found: a frame pointer that -fomit-frame-pointer code used
 * for data must not make up a frame.
 */
typedef bool (*unwind_is_exec_fn)(void *ctx, uint64_t ra);

/*
 * Optional: how the frame at `lookup` (as find_row() got it) keeps
 * callee-saved register `reg` (rbx, r12-r15): rows describe only SP, FP
 * and RA, so where a row needs another register below the top frame (its
 * CFA from rbx: ld.so's lazy-binding resolver), the walk is replayed from
 * the top frame, where every register is known, through each frame's
 * rule for it. 0 with *out, or nonzero (not known: the walk stops there,
 * as a bad rule). Asked on that slow path only.
 */
enum {
	UNWIND_REG_SAME,     /* unchanged by the frame */
	UNWIND_REG_AT_CFA,   /* saved at CFA + off */
	UNWIND_REG_CFA_PLUS, /* value CFA + off */
};
struct unwind_reg_rule {
	int kind;
	int64_t off;
};
typedef int (*unwind_reg_rule_fn)(void *ctx, uint64_t lookup, unsigned reg,
				  struct unwind_reg_rule *out);

/*
 * A memo of find_row()'s found rows, owned by the caller and shared by its
 * walks (optional): a hit costs a hash and two compares instead of the
 * call. An entry holds the row's rules and the function's flags in 32
 * bytes, under the lookup address and the caller's `tag`. Before each walk
 * the caller sets `tag` to a nonzero value that names the address space in
 * its current version: a tag must never again name other mappings. The
 * caller supplies 1 << bits zeroed entries (tag 0 is never stored, so
 * zeroed entries are empty) and may zero or replace them between walks.
 * Rows with an offset wider than an entry holds, and lookups that fail,
 * are not kept.
 */
struct unwind_cache_entry {
	uint64_t lookup;
	uint64_t tag;
	int32_t cfa_off;
	int16_t ra_off, fp_off;
	uint8_t cfa_kind, cfa_reg, ra_kind, ra_reg;
	uint8_t fp_kind, fp_reg, row_flags, func_flags;
};

struct unwind_cache {
	struct unwind_cache_entry *e;
	unsigned bits;	/* 1 <= bits <= 32 */
	uint64_t tag;	/* 0: the cache is not used */
	uint64_t hits, misses;
};

struct unwind_ops {
	unwind_find_row_fn find_row;
	unwind_is_sigtramp_fn is_sigtramp; /* may be NULL */
	void *ctx;
	struct unwind_cache *cache; /* may be NULL */
	unwind_is_exec_fn is_exec; /* may be NULL: every return address goes */
	unwind_reg_rule_fn reg_rule; /* may be NULL: rows' registers only */
	/* may be NULL: a second snapshot, user memory at [alt_lo, alt_lo +
	 * alt_len), where the walk goes on past a signal frame whose
	 * interrupted SP lies in it and not above the signal frame on the
	 * first (a handler on an alternate stack: Go's gsignal) */
	const uint8_t *alt;
	uint64_t alt_lo, alt_len;
};

/* How the caller of the current frame will be found (private). */
enum unwind_method {
	UNWIND_METHOD_ROW,
	UNWIND_METHOD_SIGNAL,
	UNWIND_METHOD_FP,
};

struct unwind_plan {
	int method;
	int lookup_rc;
	struct sframe_row row;
	struct sframe_func func;
	/* row and func hold find_row's answer for this address (recursion:
	 * the next frame often looks up the same return address) */
	bool have_lookup;
	uint64_t lookup;
	/* The row in the shape nearly every row has, checked once per
	 * lookup: CFA = register + offset, RA and FP saved at CFA + offset
	 * (or FP kept/undefined). Such a row steps without decoding it. */
	bool fast;
	uint8_t fast_cfa_reg;
	uint8_t fast_fp_kind; /* SFRAME_RULE_NONE, _UNDEFINED or _CFA_DEREF */
	int32_t fast_cfa_off, fast_ra_off, fast_fp_off;
};

/*
 * The walk state. Fields above the line are the current frame, readable
 * inside unwind_for_each_frame(); the rest is private.
 */
struct unwind_state {
	uint64_t pc;
	uint32_t frame_flags; /* UNWIND_FRAME_* of the current frame */
	unsigned depth;	      /* frames produced so far, current included */
	int stop;	      /* enum unwind_stop once done */
	bool done;
	/* SP of the outermost frame when its row says the return address is
	 * undefined (a thread's or process's entry), else 0: no frame of this
	 * stack lies above it but that entry frame's own CFA */
	uint64_t outer_sp;
	/* ---- private ---- */
	uint64_t regs[UNWIND_NR_REGS];
	uint32_t reg_known; /* bit per DWARF register */
	const uint8_t *stack;
	uint64_t stack_lo, stack_hi; /* snapshot covers [lo, hi) */
	const struct unwind_ops *ops;
	unsigned max_depth;
	uint32_t fp_frames, sig_frames;
	uint32_t fp_rejected; /* FP fallbacks refused: RA not executable */
	uint32_t reg_replays; /* registers found by replaying the walk */
	const struct sfprof_regs *start; /* the top frame's registers */
	bool replay; /* a replay (reg_recover): none within it */
	bool on_alt; /* past a signal frame, on ops->alt */
	struct unwind_plan plan; /* of the current frame */
};

/*
 * Begin a walk. `stack` holds the bytes of user memory at [regs->sp,
 * regs->sp + len); it must outlive the walk. max_depth bounds the frames.
 * The first frame is the captured PC; st->done may already be set.
 */
void unwind_start(struct unwind_state *st, const struct sfprof_regs *regs,
		  const void *stack, size_t len, const struct unwind_ops *ops,
		  unsigned max_depth);
/* Step to the caller. Sets st->done and st->stop when the walk ends. */
void unwind_next(struct unwind_state *st);

#define unwind_for_each_frame(st, regs, stack, len, ops, max)              \
	for (unwind_start((st), (regs), (stack), (len), (ops), (max));      \
	     !(st)->done; unwind_next(st))

/*
 * The whole walk into frames[0..max) (innermost first). Returns the
 * number of frames; *stop gets the reason (UNWIND_STOP_MAX_DEPTH when
 * `max` frames were produced and more remained). `stats` (may be NULL)
 * gets the walk counted; `outer_sp` (may be NULL) gets st->outer_sp.
 */
struct unwind_stats;
size_t unwind_stack(const struct sfprof_regs *regs, const void *stack,
		    size_t len, const struct unwind_ops *ops,
		    struct unwind_frame *frames, size_t max, int *stop,
		    struct unwind_stats *stats, uint64_t *outer_sp);

/* Stop-reason counters: the unwinder's health metrics (--stats). */
struct unwind_stats {
	uint64_t stacks;
	uint64_t frames;
	uint64_t fp_frames;	/* frames found by the FP fallback */
	uint64_t fp_rejected;	/* FP fallbacks refused (RA not executable) */
	uint64_t signal_frames; /* signal trampolines crossed */
	uint64_t reg_replays;	/* registers found by replaying the walk */
	uint64_t stop[UNWIND_STOP__NR];
};

/* "complete", "snapshot_exhausted", ... (stable names used in --stats). */
const char *unwind_stop__name(int stop);
void unwind_stats__add(struct unwind_stats *s, const struct unwind_state *st);
void unwind_stats__merge(struct unwind_stats *dst,
			 const struct unwind_stats *src);
/* "unwind_<name>: value" lines. */
void unwind_stats__print(const struct unwind_stats *s, FILE *f);

#endif
