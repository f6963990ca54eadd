// SPDX-License-Identifier: MIT
/*
 * A futex storm with a few long waits in it:
 *   futexstorm [SECONDS [STORM_THREADS]]     (defaults 3, 2)
 * STORM_THREADS threads call FUTEX_WAIT on a word whose value never
 * matches, so each call returns at once (EAGAIN): hundreds of thousands
 * of very short waits a second. Meanwhile a holder thread keeps a mutex
 * for 2-4 ms every ~15 ms while a waiter thread blocks on it; the waiter
 * logs each of its own waits. At the end it prints
 *   "futex_calls N", "futex_rate PER_SECOND", "waiter_tid TID" and one
 *   "wait TID START_NS END_NS" line (CLOCK_MONOTONIC) per long wait.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_WAITS 4096

static atomic_int stop;
static atomic_long calls;
static atomic_int held_round = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long wait_start[MAX_WAITS], wait_end[MAX_WAITS];
static int nr_waits;
static long waiter_tid;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void *storm(void *arg)
{
	unsigned int word = 1;
	long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		/* value 0 never matches word: returns EAGAIN at once */
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		n++;
	}
	atomic_fetch_add(&calls, n);
	return NULL;
}

__attribute__((noinline)) static void *holder(void *arg)
{
	unsigned int seed = 1;

	(void)arg;
	for (int r = 0; !atomic_load(&stop); r++) {
		pthread_mutex_lock(&lock);
		atomic_store(&held_round, r);
		nap_us(2000 + rand_r(&seed) % 2000);
		pthread_mutex_unlock(&lock);
		nap_us(12000);
	}
	atomic_store(&held_round, 1 << 30);
	return NULL;
}

__attribute__((noinline)) static void *waiter(void *arg)
{
	(void)arg;
	waiter_tid = syscall(SYS_gettid);
	for (int r = 0; !atomic_load(&stop); r++) {
		long long t0, t1;

		while (atomic_load(&held_round) < r && !atomic_load(&stop))
			nap_us(100);
		t0 = now_ns();
		pthread_mutex_lock(&lock);
		t1 = now_ns();
		pthread_mutex_unlock(&lock);
		if (nr_waits < MAX_WAITS) {
			wait_start[nr_waits] = t0;
			wait_end[nr_waits] = t1;
			nr_waits++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int nstorm = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t h, w, *s = calloc(nstorm, sizeof(*s));
	long long t0, t1;

	if (!s)
		return 1;
	t0 = now_ns();
	for (int i = 0; i < nstorm; i++)
		pthread_create(&s[i], NULL, storm, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&h, NULL, holder, NULL);
	nap_us((long)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < nstorm; i++)
		pthread_join(s[i], NULL);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	t1 = now_ns();
	printf("futex_calls %ld\n", atomic_load(&calls));
	printf("futex_rate %.0f\n", atomic_load(&calls) / ((t1 - t0) / 1e9));
	printf("waiter_tid %ld\n", waiter_tid);
	for (int i = 0; i < nr_waits; i++)
		printf("wait %ld %lld %lld\n", waiter_tid, wait_start[i], wait_end[i]);
	return 0;
}
