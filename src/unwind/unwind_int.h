/* SPDX-License-Identifier: MIT */
/*
 * What the unwinder's two halves share (not an interface): unwind.c, the
 * general step and the memo; unwind_fast.c, the loop that walks runs of
 * rows of the common shape for unwind_stack().
 */
#ifndef SFPROF_UNWIND_INT_H
#define SFPROF_UNWIND_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/unwind.h"

#define WORD 8u
#define BIT(r) (1u << (r))

static inline void finish(struct unwind_state *st, int stop)
{
	st->done = true;
	st->stop = stop;
}

/*
 * Two ways a set, the two entries of one cache line: a walk's addresses
 * that hash to one set (a few in a hundred walks, with ASLR) both stay,
 * where one way made them evict each other on every walk.
 */
static inline struct unwind_cache_entry *cache_set(const struct unwind_cache *c, uint64_t lookup)
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
 * find_row() at `lookup` (or the memo's copy of its answer) into the plan:
 * 0 (a usable row), -ENOENT or -ESRCH. A found row is kept for the next
 * frame and compiled. (unwind.c)
 */
int unwind_plan_lookup(struct unwind_state *st, uint64_t lookup);
/* Pick how the current frame's caller will be found, given its lookup. */
void unwind_plan_method(struct unwind_state *st, int rc);

#endif
