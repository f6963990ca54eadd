/* SPDX-License-Identifier: MIT */
/*
 * A thread that drains one libbpf ring buffer as soon as its records wake
 * it (the runtimes' prefetch rings: a new code object must be read while
 * its short-lived process still runs), and sleeps, with no timer, while
 * there are none. Asked to stop, it drains the ring once more and exits.
 *
 * It waits in poll(2) on the ring's epoll fd and an eventfd that
 * ring_thread__stop() signals: a timed ring_buffer__poll() in a loop that
 * checks a flag woke it 50 times a second on an idle machine, one
 * context switch each.
 */
#ifndef SFPROF_RING_THREAD_H
#define SFPROF_RING_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct ring_buffer;

struct ring_thread {
	struct ring_buffer *rb;
	pthread_t thread;
	int stop_fd;
	int ring_fd; /* ring_thread__open()'s dup of the map's fd */
	bool on, owned;
};

/* Start draining rb (its callbacks run on the thread). 0 or -errno. */
int ring_thread__start(struct ring_thread *t, struct ring_buffer *rb);
/* Stop and join the thread (a no-op if not started); rb stays the caller's. */
void ring_thread__stop(struct ring_thread *t);

/*
 * Drain the ring of BPF map fd map_fd on a thread of its own, each record
 * to fn(ctx, data, len): the thread keeps a dup of the fd, so the ring
 * stays valid whatever becomes of the map's owner (a runtime's prefetch
 * ring: python's py_new, ruby's rb_new, php's php_new). 0 or -errno;
 * nothing is left open on an error.
 */
int ring_thread__open(struct ring_thread *t, int map_fd,
		      int (*fn)(void *ctx, void *data, size_t len), void *ctx);
/* Stop the thread, free the ring and its fd (a no-op if not open). */
void ring_thread__close(struct ring_thread *t);

#endif
