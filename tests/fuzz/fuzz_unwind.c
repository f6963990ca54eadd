// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the unwinder over hostile input. The bytes give the
 * registers, a table of up to 8 row ranges (any rule kind, register and
 * offset, signal flag, lookup errors) and the stack snapshot; the walk
 * must stay inside the snapshot and end within max_depth frames, with the
 * frames and stop the plain state iterator gives. Walked again through a
 * memo of rows (struct unwind_cache), cold and warm, it must give the same
 * frames and stop. Walked again with is_exec (ranges flagged 0x80 are not
 * executable): the frame-pointer fallback may then only stop earlier,
 * never make another frame, every frame it found lands in executable
 * memory, and the fast loops still match the iterator. Expression rules
 * (SFRAME_RULE_VAL_EXPR, SFRAME_RULE_EXPR) name one of a few fixed DWARF
 * expressions (OpenSSL's CFA shapes, register and memory chains, a loop)
 * or the one the input's first bytes after the regions spell. A range's
 * flags bits 1-2 say how it keeps rbx and r12-r15 (unchanged, saved at
 * CFA-16, value CFA+8, not known): the replay that finds them must keep
 * the walk within the snapshot and the depth, and match the iterator.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/dwexpr.h"
#include "unwind/unwind.h"

#define NR_RANGES 8
#define RANGE_BYTES 32

struct fz_range {
	uint64_t lo;
	uint32_t len;
	uint8_t rc, flags, cfa_kind, cfa_reg, ra_kind, ra_reg, fp_kind, fp_reg;
	int32_t cfa_off, ra_off, fp_off;
};

static struct fz_range ranges[NR_RANGES];

#define NR_EXPRS 8
static uint32_t exprs[NR_EXPRS]; /* interned ids (0: none) */

static void exprs_init(const uint8_t *extra, size_t len)
{
	static const uint8_t fixed[][12] = {
		{ 5, 0x77, 0x28, 0x06, 0x23, 0x08 },		/* *(rsp+40)+8 */
		{ 10, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08 },
		{ 2, 0x38, 0x1c },				/* (CFA) - 8 */
		{ 3, 0x76, 0x00, 0x06 },			/* *rbp */
		{ 3, 0x73, 0x10, 0x06 },			/* *(rbx+16) */
		{ 3, 0x2f, 0xfd, 0xff },			/* a loop */
		{ 6, 0x77, 0x00, 0x06, 0x06, 0x06, 0x06 },	/* a deref chain */
	};

	for (int i = 0; i < 7; i++)
		exprs[i] = dwexpr__intern(fixed[i] + 1, fixed[i][0]);
	exprs[7] = len ? dwexpr__intern(extra, len) : 0;
}

static void expr_rule(struct sframe_rule *r)
{
	if (r->kind == SFRAME_RULE_VAL_EXPR || r->kind == SFRAME_RULE_EXPR)
		r->off = (int32_t)exprs[(uint32_t)r->off % NR_EXPRS];
}

static int fz_find(void *ctx, uint64_t pc, struct sframe_row *row,
		   struct sframe_func *fn)
{
	(void)ctx;
	for (int i = 0; i < NR_RANGES; i++) {
		const struct fz_range *x = &ranges[i];
		if (pc < x->lo || pc - x->lo >= x->len)
			continue;
		if (x->rc % 4 == 1)
			return -ENOENT;
		if (x->rc % 4 == 2)
			return -ESRCH;
		memset(row, 0, sizeof(*row));
		row->cfa.kind = x->cfa_kind % 9;
		row->cfa.reg = x->cfa_reg;
		row->cfa.off = x->cfa_off;
		row->ra.kind = x->ra_kind % 9;
		row->ra.reg = x->ra_reg;
		row->ra.off = x->ra_off;
		row->fp.kind = x->fp_kind % 9;
		row->fp.reg = x->fp_reg;
		row->fp.off = x->fp_off;
		expr_rule(&row->cfa);
		expr_rule(&row->ra);
		expr_rule(&row->fp);
		fn->start = x->lo;
		fn->size = x->len;
		fn->flags = x->flags & SFRAME_FUNC_SIGNAL;
		return 0;
	}
	return -ENOENT;
}

static bool fz_is_exec(void *ctx, uint64_t ra)
{
	(void)ctx;
	for (int i = 0; i < NR_RANGES; i++)
		if ((ranges[i].flags & 0x80) && ra - 1 >= ranges[i].lo &&
		    ra - 1 - ranges[i].lo < ranges[i].len)
			return false;
	return true;
}

static int fz_reg_rule(void *ctx, uint64_t lookup, unsigned reg, struct unwind_reg_rule *out)
{
	(void)ctx;
	(void)reg;
	for (int i = 0; i < NR_RANGES; i++) {
		const struct fz_range *x = &ranges[i];

		if (lookup < x->lo || lookup - x->lo >= x->len)
			continue;
		switch ((x->flags >> 1) & 3) {
		case 0:
			*out = (struct unwind_reg_rule){ UNWIND_REG_SAME, 0 };
			return 0;
		case 1:
			*out = (struct unwind_reg_rule){ UNWIND_REG_AT_CFA, -16 };
			return 0;
		case 2:
			*out = (struct unwind_reg_rule){ UNWIND_REG_CFA_PLUS, 8 };
			return 0;
		default:
			return -1;
		}
	}
	return -1;
}

static bool fz_sigtramp(void *ctx, uint64_t pc)
{
	(void)ctx;
	return (pc & 0xfff) == 0x123;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct unwind_ops ops = { fz_find, fz_sigtramp, NULL, NULL, NULL,
					       fz_reg_rule };
	struct sfprof_regs regs;
	struct unwind_frame frames[256];
	size_t need = sizeof(regs) + NR_RANGES * RANGE_BYTES;
	int stop;

	if (size < need)
		return 0;
	memcpy(&regs, data, sizeof(regs));
	for (int i = 0; i < NR_RANGES; i++) {
		const uint8_t *b = data + sizeof(regs) + i * RANGE_BYTES;
		memcpy(&ranges[i].lo, b, 8);
		memcpy(&ranges[i].len, b + 8, 4);
		memcpy(&ranges[i].rc, b + 12, 8);
		memcpy(&ranges[i].cfa_off, b + 20, 12);
	}
	/* the snapshot is a separate heap copy, so ASan sees any read past it */
	size_t len = size - need;
	exprs_init(data + need, len < 16 ? len : 16);
	uint8_t *stack = malloc(len ? len : 1);
	if (!stack)
		return 0;
	memcpy(stack, data + need, len);
	size_t n = unwind_stack(&regs, stack, len, &ops, frames, 256, &stop, NULL, NULL);
	if (n > 256 || stop <= UNWIND_STOP_NONE || stop >= UNWIND_STOP__NR)
		abort();

	/* the state iterator, which unwind_stack()'s fast loops must match */
	struct unwind_state st;
	size_t r = 0;

	unwind_for_each_frame(&st, &regs, stack, len, &ops, 256) {
		if (st.pc != frames[r].pc || st.frame_flags != frames[r].flags)
			abort();
		r++;
	}
	if (r != n || st.stop != stop)
		abort();

	static struct unwind_cache_entry ents[16];
	struct unwind_cache memo = { .e = ents, .bits = 4, .tag = 1 };
	struct unwind_ops mops = ops;
	struct unwind_frame again[256];

	memset(ents, 0, sizeof(ents));
	mops.cache = &memo;
	for (int pass = 0; pass < 2; pass++) {
		int stop2;
		size_t m = unwind_stack(&regs, stack, len, &mops, again, 256, &stop2,
					NULL, NULL);

		if (m != n || stop2 != stop || memcmp(again, frames, n * sizeof(*frames)))
			abort();
	}

	/* the executable-memory check of the frame-pointer fallback */
	struct unwind_ops xops = ops;
	struct unwind_stats xs = { 0 };
	int xstop;
	size_t x;

	xops.is_exec = fz_is_exec;
	x = unwind_stack(&regs, stack, len, &xops, again, 256, &xstop, &xs, NULL);
	if (x > n || memcmp(again, frames, x * sizeof(*frames)))
		abort(); /* only ever a prefix of the walk without it */
	if (x < n && (!xs.fp_rejected || !(frames[x].flags & UNWIND_FRAME_FP)))
		abort(); /* and only shorter where it refused an FP frame */
	if (x == n && xstop != stop && !(xs.fp_rejected && stop == UNWIND_STOP_MAX_DEPTH))
		abort(); /* (a refusal where the other walk hit max_depth) */
	for (size_t i = 0; i < x; i++)
		if ((again[i].flags & UNWIND_FRAME_FP) && !fz_is_exec(NULL, again[i].pc))
			abort();
	r = 0;
	unwind_for_each_frame(&st, &regs, stack, len, &xops, 256) {
		if (st.pc != again[r].pc || st.frame_flags != again[r].flags)
			abort();
		r++;
	}
	if (r != x || st.stop != xstop)
		abort();

	/* a second snapshot (a signal handler on an alternate stack): the
	 * stack's second half as its own heap copy, at the address r15 says;
	 * the fast loops and the iterator agree there too, and ASan sees any
	 * read past it */
	struct unwind_ops aops = ops;
	size_t alen = len / 2;
	uint8_t *alt = malloc(alen ? alen : 1);

	if (alt) {
		memcpy(alt, stack + (len - alen), alen);
		aops.alt = alt;
		aops.alt_lo = regs.r15;
		aops.alt_len = alen;
		x = unwind_stack(&regs, stack, len, &aops, again, 256, &xstop, NULL, NULL);
		if (x > 256 || xstop <= UNWIND_STOP_NONE || xstop >= UNWIND_STOP__NR)
			abort();
		r = 0;
		unwind_for_each_frame(&st, &regs, stack, len, &aops, 256) {
			if (r >= x || st.pc != again[r].pc || st.frame_flags != again[r].flags)
				abort();
			r++;
		}
		if (r != x || st.stop != xstop)
			abort();
		free(alt);
	}
	free(stack);
	return 0;
}
