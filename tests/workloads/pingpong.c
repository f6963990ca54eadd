// SPDX-License-Identifier: MIT
/*
 * Futex waits at a steady rate, for the futex event cost benchmark:
 *   pingpong [SECONDS [PERIOD_US [STACK_KB]]]    (defaults 5, 500, 0)
 * A waiter thread blocks in FUTEX_WAIT; a waker thread wakes it every
 * PERIOD_US microseconds. Each wait lasts about PERIOD_US and happens
 * below STACK_KB of extra (touched) stack, so a snapshot has that many
 * bytes to copy (the thread stack is made large enough). Prints
 * "waits N" at the end.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_uint word;
static atomic_int stop;
static long waits;
static size_t pad;

__attribute__((noinline)) static void wait_loop(void)
{
	while (!atomic_load(&stop)) {
		unsigned int v = atomic_load(&word);

		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
		waits++;
	}
}

__attribute__((noinline)) static void *waiter(void *arg)
{
	volatile char *p = __builtin_alloca(pad + 1);

	(void)arg;
	for (size_t i = 0; i < pad; i += 64)
		p[i] = (char)i;
	wait_loop();
	p[0] = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	long period = argc > 2 ? atol(argv[2]) : 500;
	struct timespec d = { period / 1000000, (period % 1000000) * 1000 }, t0, t;
	pthread_attr_t attr;
	pthread_t w;

	pad = argc > 3 ? (size_t)atol(argv[3]) * 1024 : 0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, pad + (1 << 20));
	pthread_create(&w, &attr, waiter, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		nanosleep(&d, NULL);
		atomic_fetch_add(&word, 1);
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	atomic_store(&stop, 1);
	atomic_fetch_add(&word, 1);
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(w, NULL);
	printf("waits %ld\n", waits);
	return 0;
}
