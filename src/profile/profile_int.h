/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the profile (profile.c, folded.c) and the writers
 * above it (src/output/: svg.c, pprof.c, diff.c). Not a public interface.
 */
#ifndef SFPROF_PROFILE_INT_H
#define SFPROF_PROFILE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/* Interned string ids: 0 is the empty string (a NULL input). */

/* One distinct frame: all seven profile_frame fields, plus its display
 * name (what folded and SVG print) as another string id. */
struct prof_frame {
	uint64_t hash;
	uint64_t rel_addr;
	uint32_t name, dso, build_id, kind;
	uint32_t disp;
	uint32_t line;
	uint32_t file;
	uint32_t pid;
	uint64_t addr, map_start, map_end, map_offset;
	uint32_t map_exec;
	uint32_t start_line;
	uint32_t sys_name; /* 0: name's (profile_frame.sys_name) */
	uint32_t vm_shared; /* profile_frame.vm_shared */
};

/* One distinct stack: root display id, then n frame ids at ids[off..],
 * and its labels (string ids for thread and lock). */
struct prof_stack {
	uint64_t hash;
	uint64_t weight;
	uint64_t count; /* events */
	size_t off;
	uint32_t root;
	uint32_t n;
	uint32_t has_labels;
	uint32_t pid, tid, thread, lock;
	uint32_t process, exe, cgroup, container, unit;
	uint32_t pad;
	uint64_t lock_addr;
};

/*
 * Stacks merged by display name (root included as element 0 when the
 * stack has one), sorted by names element-wise, so shared prefixes are
 * adjacent: the SVG writer builds its tree in one pass from this order.
 */
struct prof_named_stack {
	uint64_t weight;
	size_t off; /* display string ids at ids[off..off+n) */
	uint32_t n;
	uint32_t pad;
};

struct prof_named {
	struct prof_named_stack *stacks;
	size_t nr;
	uint32_t *ids;
	size_t nr_ids;
	uint32_t max_depth; /* longest n */
};

/* Weights saturate rather than wrap: a wrapped total would scale every
 * SVG frame wrongly. */
static inline uint64_t prof__sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t prof__hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

const char *prof__str(const struct profile *p, uint32_t id);
const struct prof_frame *prof__frames(const struct profile *p, uint32_t *nr);
const struct prof_stack *prof__stacks(const struct profile *p, size_t *nr);
const uint32_t *prof__ids(const struct profile *p);
uint32_t prof__nr_strs(const struct profile *p);

/* The profile's order (order.c), NULL unless profile__keep_order. */
struct prof_order;
struct prof_order **prof__order(struct profile *p);
void prof_order__free(struct prof_order *o);
/* The runs of the order as named stacks, in time order, neighbours of one
 * name path merged (not sorted: the flame chart). 0, -EINVAL (no order
 * kept) or -ENOMEM; release with prof_named__release. */
int prof__named_order(const struct profile *p, int reverse, struct prof_named *out);

/* 0 or -ENOMEM; release with prof_named__release. */
int prof__named(const struct profile *p, struct prof_named *out);
/* The same with reverse: each stack's frames leaf first (the root stays
 * element 0), for the SVG's --reverse. */
int prof__named_rev(const struct profile *p, int reverse, struct prof_named *out);
void prof_named__release(struct prof_named *nm);

/* Weight in the folded unit: samples, or microseconds (>= 1 if ns > 0). */
uint64_t prof__folded_count(const struct profile *p, uint64_t weight);

#endif
