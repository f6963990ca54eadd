// SPDX-License-Identifier: MIT
/*
 * Lock waits with a known total: thread A holds a mutex for HOLD_MS
 * (default 100), ROUNDS times (default 10), while thread B waits for it.
 *   mutex [ROUNDS [HOLD_MS]]
 * The handshakes spin on atomics and sleep with nanosleep, never futex,
 * so B's only futex waits are the mutex ones. Prints "waiter_tid TID",
 * "holder_tid TID" and, at the end, "waited_ns N" (B's own measurement).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int round_held = -1; /* round A holds the lock in */
static atomic_int round_done = -1; /* round B got the lock in */
static int rounds = 10, hold_ms = 100;
static long long waited_ns, delayed_ns;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* This thread's time runnable but not running (schedstat's second
 * field), 0 where the kernel has no schedstat. */
static long long run_delay_ns(void)
{
	unsigned long long run, delay;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	int n = f ? fscanf(f, "%llu %llu", &run, &delay) : 0;

	if (f)
		fclose(f);
	return n == 2 ? (long long)delay : 0;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void *holder(void *arg)
{
	(void)arg;
	printf("holder_tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int r = 0; r < rounds; r++) {
		pthread_mutex_lock(&lock);
		atomic_store(&round_held, r);
		nap_us(hold_ms * 1000L);
		pthread_mutex_unlock(&lock);
		while (atomic_load(&round_done) < r)
			nap_us(200);
	}
	return NULL;
}

__attribute__((noinline)) static void *waiter(void *arg)
{
	(void)arg;
	printf("waiter_tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int r = 0; r < rounds; r++) {
		long long t0, d0;

		while (atomic_load(&round_held) < r)
			nap_us(200);
		d0 = run_delay_ns();
		t0 = now_ns();
		pthread_mutex_lock(&lock);
		waited_ns += now_ns() - t0;
		delayed_ns += run_delay_ns() - d0;
		pthread_mutex_unlock(&lock);
		atomic_store(&round_done, r);
	}
	return NULL;
}

static void print_libc_text(void)
{
	char line[512], path[256], perm[8];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, path) == 4 &&
		    perm[2] == 'x' && strstr(path, "/libc.so"))
			printf("libc %lu %lu\n", lo, hi);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		hold_ms = atoi(argv[2]);
	print_libc_text();
	pthread_create(&b, NULL, waiter, NULL);
	pthread_create(&a, NULL, holder, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("waited_ns %lld\n", waited_ns);
	printf("delayed_ns %lld\n", delayed_ns);
	return 0;
}
