// SPDX-License-Identifier: MIT
/*
 * The demo workload (`make demo`, README): a small "server" with real lock
 * contention on two mutexes of very different cost.
 *
 *   demo [SECONDS [WORKERS]]     (default 30 s, 4 workers)
 *
 * Each worker loops: parse_request() and checksum_payload() on its own
 * (pure CPU), then update_index() under hot_lock, which every request
 * takes, and record_stats() under cold_lock, which is cheap for the
 * workers but held for 2 ms at a time every 40 ms by a flusher thread
 * (flush_stats). So an on-CPU profile shows the parsing, checksumming and
 * index work, and a futex profile grouped by lock (--by-lock) shows
 * lock:hot_lock far ahead of lock:cold_lock, both named by symbol because
 * both mutexes are globals in this binary's data.
 *
 * Prints "demo pid PID" at start and a line of totals at the end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t cold_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t index_table[4096];
static uint64_t stats[64];
static atomic_int stop;
static atomic_ulong requests;

/* Deterministic busy work: about `n` cheap iterations. */
__attribute__((noinline)) static uint64_t burn(uint64_t seed, uint64_t n)
{
	uint64_t x = seed | 1;

	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* "+ 1" after each call: no tail call, so these frames stay on the stack */
__attribute__((noinline)) static uint64_t parse_request(uint64_t id)
{
	return burn(id * 2654435761u, 120000) + 1;
}

__attribute__((noinline)) static uint64_t checksum_payload(uint64_t v)
{
	return burn(v, 80000) + 1;
}

__attribute__((noinline)) static void update_index(uint64_t key)
{
	uint64_t v = burn(key, 150000);

	index_table[key % 4096] += v;
}

__attribute__((noinline)) static void record_stats(uint64_t v)
{
	stats[v % 64]++;
}

__attribute__((noinline)) static void handle_request(uint64_t id)
{
	uint64_t v = checksum_payload(parse_request(id));

	pthread_mutex_lock(&hot_lock);
	update_index(v);
	pthread_mutex_unlock(&hot_lock);

	pthread_mutex_lock(&cold_lock);
	record_stats(v);
	pthread_mutex_unlock(&cold_lock);
	atomic_fetch_add(&requests, 1);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	uint64_t id = (uintptr_t)arg << 32;

	while (!atomic_load(&stop))
		handle_request(id++);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Hold cold_lock ~2 ms (sorting out the stats), every 40 ms. */
__attribute__((noinline)) static void flush_stats(void)
{
	uint64_t end;

	pthread_mutex_lock(&cold_lock);
	end = now_ns() + 2000000;
	while (now_ns() < end)
		stats[0] += burn(stats[1], 2000) & 1;
	pthread_mutex_unlock(&cold_lock);
}

__attribute__((noinline)) static void *flusher(void *arg)
{
	struct timespec ts = { 0, 40000000 };

	(void)arg;
	while (!atomic_load(&stop)) {
		nanosleep(&ts, NULL);
		flush_stats();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30;
	int nworkers = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t th[64], fl;
	struct timespec ts;

	if (secs <= 0 || nworkers < 1 || nworkers > 64) {
		fprintf(stderr, "usage: demo [SECONDS [WORKERS]]\n");
		return 2;
	}
	printf("demo pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < nworkers; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	pthread_create(&fl, NULL, flusher, NULL);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts))
		;
	atomic_store(&stop, 1);
	for (int i = 0; i < nworkers; i++)
		pthread_join(th[i], NULL);
	pthread_join(fl, NULL);
	printf("demo done: %lu requests\n", (unsigned long)atomic_load(&requests));
	return 0;
}
