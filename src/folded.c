// SPDX-License-Identifier: MIT
/*
 * Folded stacks: the folded writer and reader (include/profile.h), and
 * the stacks merged by display name (prof__named, src/profile_int.h)
 * that the folded and SVG writers print, sorted so shared prefixes are
 * adjacent. Split from profile.c, which interns and aggregates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"
#include "util.h"

/* ---- stacks merged by display name ------------------------------------ */

struct named_ctx {
	const uint32_t *rank; /* display string id -> alphabetical rank */
	const uint32_t *ids;
};

static const struct named_ctx *named_sort_ctx;

static int named_cmp(const void *a, const void *b)
{
	const struct prof_named_stack *x = a, *y = b;
	const uint32_t *xi = named_sort_ctx->ids + x->off, *yi = named_sort_ctx->ids + y->off;
	const uint32_t *rank = named_sort_ctx->rank;
	uint32_t n = x->n < y->n ? x->n : y->n;

	for (uint32_t i = 0; i < n; i++) {
		if (xi[i] != yi[i])
			return rank[xi[i]] < rank[yi[i]] ? -1 : 1;
	}
	return x->n < y->n ? -1 : x->n > y->n;
}

static const struct profile *str_sort_profile;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(prof__str(str_sort_profile, *(const uint32_t *)a),
		      prof__str(str_sort_profile, *(const uint32_t *)b));
}

void prof_named__release(struct prof_named *nm)
{
	free(nm->stacks);
	free(nm->ids);
	memset(nm, 0, sizeof(*nm));
}

int prof__named(const struct profile *p, struct prof_named *out)
{
	uint32_t nstr = prof__nr_strs(p), *order = NULL, *rank = NULL, *slots = NULL;
	size_t size = 64, total_ids = 0;
	struct named_ctx ctx;
	int err = -ENOMEM;
	size_t nr_stacks;
	uint32_t nr_frames;
	const struct prof_stack *stacks = prof__stacks(p, &nr_stacks);
	const struct prof_frame *frames = prof__frames(p, &nr_frames);
	const uint32_t *pids = prof__ids(p);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nr_stacks; i++)
		total_ids += stacks[i].n + 1;
	while (size < 2 * (nr_stacks + 1))
		size *= 2;
	order = malloc((size_t)nstr * sizeof(*order));
	rank = malloc((size_t)nstr * sizeof(*rank));
	slots = calloc(size, sizeof(*slots));
	out->stacks = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*out->stacks));
	out->ids = malloc((total_ids ? total_ids : 1) * sizeof(*out->ids));
	if (!order || !rank || !slots || !out->stacks || !out->ids)
		goto err_out;

	/* ranks: one sort of all strings, then stacks compare as integers */
	for (uint32_t i = 0; i < nstr; i++)
		order[i] = i;
	str_sort_profile = p;
	qsort(order, nstr, sizeof(*order), str_cmp);
	for (uint32_t i = 0; i < nstr; i++)
		rank[order[i]] = i;

	for (size_t i = 0; i < nr_stacks; i++) {
		const struct prof_stack *s = &stacks[i];
		uint32_t *dst = out->ids + out->nr_ids, n = 0, j;
		struct prof_named_stack *ns;
		uint64_t h = 0x6e616d6564ull;

		if (s->root)
			dst[n++] = s->root;
		for (uint32_t k = 0; k < s->n; k++)
			dst[n++] = frames[pids[s->off + k]].disp;
		for (uint32_t k = 0; k < n; k++)
			h = prof__hash_mix(h, dst[k]);
		h = prof__hash_mix(h, n);
		for (j = h & (size - 1); slots[j]; j = (j + 1) & (size - 1)) {
			ns = &out->stacks[slots[j] - 1];
			if (ns->n == n && !memcmp(out->ids + ns->off, dst, n * sizeof(*dst)))
				break;
		}
		if (slots[j]) {
			ns = &out->stacks[slots[j] - 1];
			ns->weight = prof__sat_add(ns->weight, s->weight);
			continue;
		}
		ns = &out->stacks[out->nr];
		*ns = (struct prof_named_stack){ .weight = s->weight, .off = out->nr_ids, .n = n };
		slots[j] = (uint32_t)++out->nr;
		out->nr_ids += n;
		if (n > out->max_depth)
			out->max_depth = n;
	}
	ctx = (struct named_ctx){ .rank = rank, .ids = out->ids };
	named_sort_ctx = &ctx;
	qsort(out->stacks, out->nr, sizeof(*out->stacks), named_cmp);
	named_sort_ctx = NULL;
	err = 0;
err_out:
	free(order);
	free(rank);
	free(slots);
	if (err)
		prof_named__release(out);
	return err;
}

/* ---- folded ----------------------------------------------------------- */

int profile__write_folded(const struct profile *p, FILE *f)
{
	struct prof_named nm;
	int err;

	err = prof__named(p, &nm);
	if (err)
		return err;
	for (size_t i = 0; i < nm.nr; i++) {
		const struct prof_named_stack *s = &nm.stacks[i];
		uint64_t count = prof__folded_count(p, s->weight);

		if (!s->n)
			continue; /* no root and no frames: nothing to print */
		for (uint32_t k = 0; k < s->n; k++) {
			if (k)
				putc(';', f);
			fputs(prof__str(p, nm.ids[s->off + k]), f);
		}
		fprintf(f, " %" PRIu64 "\n", count);
	}
	prof_named__release(&nm);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

int profile__read_folded(struct profile *p, FILE *f, size_t *bad_line)
{
	struct profile_frame *frames = NULL;
	size_t cap_frames = 0, lineno = 0, cap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		char *sp, *end, *field, *next;
		size_t n = 0;
		uint64_t count;
		const char *root;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
			       line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = 0;
		if (!len)
			continue;
		if ((size_t)len != strlen(line)) /* embedded NUL */
			goto bad;
		sp = strrchr(line, ' ');
		if (!sp || sp == line || sp[1] < '0' || sp[1] > '9')
			goto bad;
		errno = 0;
		count = strtoull(sp + 1, &end, 10);
		if (errno || *end)
			goto bad;
		*sp = 0;
		/*
		 * Weights saturate when stacks merge, and a saturated futex
		 * total prints as UINT64_MAX/1000 us: reading that back must
		 * saturate the same way, so the writer's output always parses.
		 */
		if (profile__meta(p)->kind == PROFILE_FUTEX && __builtin_mul_overflow(count, 1000, &count))
			count = UINT64_MAX;
		root = line;
		next = strchr(line, ';');
		if (next)
			*next++ = 0;
		for (field = next; field; field = next) {
			next = strchr(field, ';');
			if (next)
				*next++ = 0;
			if (!*field)
				goto bad;
			if ((err = util__grow((void **)&frames, &cap_frames, n + 1, sizeof(*frames))))
				goto out;
			frames[n++] = (struct profile_frame){ .name = field, .kind = PROFILE_FRAME_USER };
		}
		if ((err = profile__add(p, root, frames, n, count)))
			goto out;
	}
	goto out;
bad:
	err = -EINVAL;
	if (bad_line)
		*bad_line = lineno;
out:
	free(line);
	free(frames);
	return err;
}
