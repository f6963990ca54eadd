// SPDX-License-Identifier: MIT
/* Waker stacks waiting for their blocks (src/stacks/wakers.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/wakers.h"

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

/*
 * Whether a waker's kernel stack (innermost first) passes through an
 * interrupt's entry; *nk is then cut there: what lies below is only the
 * context the interrupt came in (idle, another syscall).
 */
static int in_irq(stacks_ksym_fn ksym, void *ctx, const uint64_t *kips, size_t *nk)
{
	static const char *const entries[] = { "asm_sysvec_", "asm_common_interrupt",
					       "handle_softirqs", "__do_softirq" };

	for (size_t i = 0; i < *nk && ksym; i++) {
		const char *name = ksym(ctx, kips[i]);

		for (size_t j = 0; name && j < sizeof(entries) / sizeof(entries[0]); j++) {
			if (!strncmp(name, entries[j], strlen(entries[j]))) {
				*nk = i + 1;
				return 1;
			}
		}
	}
	return 0;
}

static int64_t marker(struct profile *prof, const char *name)
{
	struct profile_frame pf = { .name = name, .kind = PROFILE_FRAME_MARKER };

	return profile__frame_id(prof, &pf);
}

int wakers__add_record(struct wakers *w, struct stacks *s, struct profile *prof,
		       stacks_ksym_fn ksym, void *ksym_ctx, const struct sfprof_event *e,
		       const uint64_t *kips, size_t nk)
{
	uint32_t tail[2 * (STACKS_MAX_DEPTH + 1 + 128) + 4];
	char name[PROFILE_ROOT_MAX], comm[SFPROF_COMM_LEN + 1];
	const uint32_t *ids;
	int64_t dash, who;
	size_t nt = 0;
	int irq, np;

	/* an interrupt borrowed the waker it names: its user context has
	 * nothing to do with the wakeup */
	irq = in_irq(ksym, ksym_ctx, kips, &nk);
	np = stacks__frame_ids(s, e, kips, nk, !irq, &ids);
	if (irq) {
		snprintf(name, sizeof(name), "[interrupt]");
	} else {
		snprintf(comm, sizeof(comm), "%.*s", SFPROF_COMM_LEN, e->comm);
		profile_root__thread(name, sizeof(name), comm, e->pid, e->tid);
	}
	dash = marker(prof, "--");
	who = marker(prof, name);
	if (np < 0 || dash < 0 || who < 0)
		return -ENOMEM;
	tail[nt++] = (uint32_t)dash;
	while (np > 0)
		tail[nt++] = ids[--np];
	tail[nt++] = (uint32_t)who;
	return wakers__put(w, e->waker.woken_tid, e->waker.block_start, tail, nt);
}
