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

struct wakers;

struct wakers *wakers__new(void); /* NULL + errno */
void wakers__free(struct wakers *w); /* NULL is a no-op */

/* Keep ids[0..n) for the block of `tid` that began at ts_out. 0 or -ENOMEM. */
int wakers__put(struct wakers *w, uint32_t tid, uint64_t ts_out, const uint32_t *ids,
		size_t n);

/* Move the ids kept for that block into out[0..max): their count, 0 if none. */
size_t wakers__take(struct wakers *w, uint32_t tid, uint64_t ts_out, uint32_t *out,
		    size_t max);

#endif
