// SPDX-License-Identifier: MIT
/*
 * The order stacks came in, for the flame chart (profile.h,
 * profile__keep_order): runs of one stack index with their weight, and
 * the order turned into named stacks for the SVG writer, which merges
 * neighbours with a common prefix as it does for the sorted flame graph.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/profile_int.h"
#include "util.h"

struct prof_run {
	uint64_t weight;
	uint32_t stack;
	uint32_t pad;
};

struct prof_order {
	struct prof_run *runs;
	size_t nr, cap, max;
	uint64_t cut_weight; /* weight past max runs, not kept */
};

int profile__keep_order(struct profile *p, size_t max_runs)
{
	struct prof_order **o = prof__order(p);

	if (!max_runs)
		return -EINVAL;
	if (!*o && !(*o = calloc(1, sizeof(**o))))
		return -ENOMEM;
	(*o)->max = max_runs;
	return 0;
}

int profile__keeps_order(const struct profile *p)
{
	return *prof__order((struct profile *)p) != NULL;
}

void prof_order__free(struct prof_order *o)
{
	if (o)
		free(o->runs);
	free(o);
}

int profile__order_push(struct profile *p, int64_t stack, uint64_t weight)
{
	struct prof_order *o = *prof__order(p);
	size_t nr;

	if (!o || !weight)
		return 0;
	prof__stacks(p, &nr);
	if (stack < 0 || (size_t)stack >= nr)
		return -EINVAL;
	if (o->nr && o->runs[o->nr - 1].stack == (uint32_t)stack) {
		o->runs[o->nr - 1].weight = prof__sat_add(o->runs[o->nr - 1].weight, weight);
		return 0;
	}
	if (o->nr >= o->max) {
		o->cut_weight = prof__sat_add(o->cut_weight, weight);
		return 0;
	}
	if (util__grow((void **)&o->runs, &o->cap, o->nr + 1, sizeof(*o->runs)))
		return -ENOMEM;
	o->runs[o->nr++] = (struct prof_run){ .weight = weight, .stack = (uint32_t)stack };
	return 0;
}

uint64_t profile__order_cut(const struct profile *p)
{
	const struct prof_order *o = *prof__order((struct profile *)p);

	return o ? o->cut_weight : 0;
}

int prof__named_order(const struct profile *p, int reverse, struct prof_named *out)
{
	const struct prof_order *o = *prof__order((struct profile *)p);
	const struct prof_stack *st;
	const struct prof_frame *fr;
	const uint32_t *ids = prof__ids(p);
	size_t nst, total = 0, *off = NULL;
	uint32_t nfr, *len = NULL;

	memset(out, 0, sizeof(*out));
	if (!o)
		return -EINVAL;
	st = prof__stacks(p, &nst);
	fr = prof__frames(p, &nfr);
	for (size_t i = 0; i < nst; i++)
		total += st[i].n + 1;
	off = malloc((nst ? nst : 1) * sizeof(*off));
	len = malloc((nst ? nst : 1) * sizeof(*len));
	out->ids = malloc((total ? total : 1) * sizeof(*out->ids));
	out->stacks = malloc((o->nr ? o->nr : 1) * sizeof(*out->stacks));
	if (!off || !len || !out->ids || !out->stacks) {
		free(off);
		free(len);
		prof_named__release(out);
		return -ENOMEM;
	}
	/* each stack's display names once (root first), as prof__named */
	for (size_t i = 0; i < nst; i++) {
		uint32_t *dst = out->ids + out->nr_ids, n = 0;

		if (st[i].root)
			dst[n++] = st[i].root;
		for (uint32_t k = 0; k < st[i].n; k++)
			dst[n++] = fr[ids[st[i].off + (reverse ? st[i].n - 1 - k : k)]].disp;
		off[i] = out->nr_ids;
		len[i] = n;
		out->nr_ids += n;
		if (n > out->max_depth)
			out->max_depth = n;
	}
	/* the runs in order; neighbours of one name path are one (two PCs
	 * of one function are two stacks but one frame) */
	for (size_t r = 0; r < o->nr; r++) {
		uint32_t s = o->runs[r].stack;
		struct prof_named_stack *prev = out->nr ? &out->stacks[out->nr - 1] : NULL;

		if (prev && prev->n == len[s] &&
		    !memcmp(out->ids + prev->off, out->ids + off[s], len[s] * sizeof(*out->ids))) {
			prev->weight = prof__sat_add(prev->weight, o->runs[r].weight);
			continue;
		}
		out->stacks[out->nr++] = (struct prof_named_stack){ .weight = o->runs[r].weight,
								    .off = off[s], .n = len[s] };
	}
	free(off);
	free(len);
	return 0;
}
