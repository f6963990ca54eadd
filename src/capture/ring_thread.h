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

struct ring_buffer;

struct ring_thread {
	struct ring_buffer *rb;
	pthread_t thread;
	int stop_fd;
	bool on;
};

/* Start draining rb (its callbacks run on the thread). 0 or -errno. */
int ring_thread__start(struct ring_thread *t, struct ring_buffer *rb);
/* Stop and join the thread (a no-op if not started); rb stays the caller's. */
void ring_thread__stop(struct ring_thread *t);

#endif
