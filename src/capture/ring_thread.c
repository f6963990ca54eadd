// SPDX-License-Identifier: MIT
/* A ring buffer's drain thread, woken by its records or by a stop
 * (ring_thread.h). */
#include "capture/ring_thread.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void *ring_thread_main(void *arg)
{
	struct ring_thread *t = arg;
	struct pollfd p[2] = {
		{ .fd = ring_buffer__epoll_fd(t->rb), .events = POLLIN },
		{ .fd = t->stop_fd, .events = POLLIN },
	};

	for (;;) {
		int n = poll(p, 2, -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (p[0].revents & POLLIN) && ring_buffer__consume(t->rb) < 0 &&
		    errno != EINTR)
			break;
		if (n > 0 && p[1].revents)
			break;
	}
	/* what came in up to the stop, as a timed poll would have taken */
	ring_buffer__consume(t->rb);
	return NULL;
}

int ring_thread__start(struct ring_thread *t, struct ring_buffer *rb)
{
	int err;

	t->on = false;
	t->rb = rb;
	t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->stop_fd < 0)
		return -errno;
	err = pthread_create(&t->thread, NULL, ring_thread_main, t);
	if (err) {
		close(t->stop_fd);
		t->stop_fd = -1;
		return -err;
	}
	t->on = true;
	return 0;
}

void ring_thread__stop(struct ring_thread *t)
{
	uint64_t one = 1;

	if (!t->on)
		return;
	/* (an eventfd write of 1 cannot block nor fail short of overflow) */
	if (write(t->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* unreachable in practice; a thread never told would hang the
		 * join, so say it the hard way */
		pthread_cancel(t->thread);
	}
	pthread_join(t->thread, NULL);
	close(t->stop_fd);
	t->stop_fd = -1;
	t->on = false;
}

int ring_thread__open(struct ring_thread *t, int map_fd,
		      int (*fn)(void *ctx, void *data, size_t len), void *ctx)
{
	int err;

	t->on = t->owned = false;
	t->rb = NULL;
	t->ring_fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 3);
	if (t->ring_fd < 0)
		return -errno;
	if (!(t->rb = ring_buffer__new(t->ring_fd, fn, ctx, NULL))) {
		err = errno ? -errno : -ENOMEM;
		close(t->ring_fd);
		t->ring_fd = -1;
		return err;
	}
	t->owned = true;
	if ((err = ring_thread__start(t, t->rb)))
		ring_thread__close(t);
	return err;
}

void ring_thread__close(struct ring_thread *t)
{
	ring_thread__stop(t);
	if (!t->owned)
		return;
	ring_buffer__free(t->rb);
	t->rb = NULL;
	close(t->ring_fd);
	t->ring_fd = -1;
	t->owned = false;
}
