// SPDX-License-Identifier: MIT
/* Waker stacks waiting for their blocks (include/wakers.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wakers.h"

/* Blocks between a wakeup and the woken thread's next run: a few per
 * CPU at any time; the slack absorbs the ones that never come. */
#define WAKERS_BITS 12
#define WAKERS_SLOTS (1u << WAKERS_BITS)

struct waker_slot {
	uint64_t ts_out; /* 0: empty */
	uint32_t tid;
	uint32_t n;
	uint32_t *ids;
};

struct wakers {
	struct waker_slot slot[WAKERS_SLOTS];
};

struct wakers *wakers__new(void)
{
	return calloc(1, sizeof(struct wakers));
}

void wakers__free(struct wakers *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < WAKERS_SLOTS; i++)
		free(w->slot[i].ids);
	free(w);
}

static struct waker_slot *slot_of(struct wakers *w, uint32_t tid, uint64_t ts_out)
{
	uint64_t h = (ts_out ^ ((uint64_t)tid << 40)) * 0x9e3779b97f4a7c15ull;

	return &w->slot[h >> (64 - WAKERS_BITS)];
}

int wakers__put(struct wakers *w, uint32_t tid, uint64_t ts_out, const uint32_t *ids,
		size_t n)
{
	struct waker_slot *s = slot_of(w, tid, ts_out);
	uint32_t *copy = malloc((n ? n : 1) * sizeof(*ids));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, ids, n * sizeof(*ids));
	free(s->ids);
	s->ids = copy;
	s->n = (uint32_t)n;
	s->tid = tid;
	s->ts_out = ts_out;
	return 0;
}

size_t wakers__take(struct wakers *w, uint32_t tid, uint64_t ts_out, uint32_t *out,
		    size_t max)
{
	struct waker_slot *s = slot_of(w, tid, ts_out);
	size_t n;

	if (!ts_out || s->ts_out != ts_out || s->tid != tid)
		return 0;
	n = s->n < max ? s->n : max;
	memcpy(out, s->ids, n * sizeof(*out));
	free(s->ids);
	memset(s, 0, sizeof(*s));
	return n;
}
