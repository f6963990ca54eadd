/* SPDX-License-Identifier: MIT */
/*
 * --wakers: the stacks of the threads that ended blocks, kept from the
 * WAKER record (sent at the wakeup) until the OFFCPU record of the same
 * block (sent when the woken thread runs again) takes them, by (woken
 * tid, switch-out time). A fixed table: a waker whose block never comes
 * (it ended below --min-block after all, or its record was lost) is
 * dropped when a later one needs its slot.
 *
 * The stacks are profile frame ids (profile__frame_id); the table copies
 * them. Single-threaded.
 */
#ifndef SFPROF_WAKERS_H
#define SFPROF_WAKERS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "sfprof_event.h"
#include "stacks/stacks.h"

struct wakers;

struct wakers *wakers__new(void); /* NULL + errno */
void wakers__free(struct wakers *w); /* NULL is a no-op */

/*
 * A WAKER record (include/sfprof_event.h), its kernel stack kips[0..nk):
 * the waker's frames as they follow a blocked stack, "--", its stack leaf
 * to root (kernel frames, then user frames; none when an interrupt woke
 * the thread, which its kernel stack shows, or when it is not a target),
 * its name ("comm-pid/tid" or "[interrupt]"), kept for the block. Frame
 * ids from prof, through s (stacks__frame_ids). 0 or -ENOMEM.
 */
int wakers__add_record(struct wakers *w, struct stacks *s, struct profile *prof,
		       stacks_ksym_fn ksym, void *ksym_ctx, const struct sfprof_event *e,
		       const uint64_t *kips, size_t nk);

/* Keep ids[0..n) for the block of `tid` that began at ts_out. 0 or -ENOMEM. */
int wakers__put(struct wakers *w, uint32_t tid, uint64_t ts_out, const uint32_t *ids,
		size_t n);

/* Move the ids kept for that block into out[0..max): their count, 0 if none. */
size_t wakers__take(struct wakers *w, uint32_t tid, uint64_t ts_out, uint32_t *out,
		    size_t max);

#endif
