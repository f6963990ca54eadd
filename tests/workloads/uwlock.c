// SPDX-License-Identifier: MIT
/*
 * Lock waits through glibc: THREADS workers (default 2) take turns on one
 * mutex, each holding it HOLD_MS (default 20) per round, for SECONDS.
 *   uwlock SECONDS [THREADS [HOLD_MS]]
 * Stacks: start_thread -> worker -> uw_locked_step -> pthread_mutex_lock.
 * Each worker measures the time it spends inside pthread_mutex_lock;
 * at the end prints "lock_wait_ns N" (the sum over workers).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NI __attribute__((noipa))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_llong wait_ns;
static double secs;
static int hold_ms = 20;
static long long t_end;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

NI void uw_hold(void)
{
	struct timespec ts = { 0, hold_ms * 1000000L };
	nanosleep(&ts, NULL);
}

NI void uw_locked_step(void)
{
	long long t0 = now_ns();
	pthread_mutex_lock(&lock);
	atomic_fetch_add(&wait_ns, now_ns() - t0);
	uw_hold();
	pthread_mutex_unlock(&lock);
}

NI void *worker(void *arg)
{
	(void)arg;
	while (now_ns() < t_end) {
		uw_locked_step();
		/* let another worker in: a short pause outside the lock */
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = 2;
	pthread_t th[64];

	if (argc < 2) {
		fprintf(stderr, "usage: uwlock SECONDS [THREADS [HOLD_MS]]\n");
		return 2;
	}
	secs = atof(argv[1]);
	if (argc > 2)
		n = atoi(argv[2]);
	if (argc > 3)
		hold_ms = atoi(argv[3]);
	if (n < 1 || n > 64)
		n = 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	t_end = now_ns() + (long long)(secs * 1e9);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("lock_wait_ns %lld\n", (long long)atomic_load(&wait_ns));
	return 0;
}
