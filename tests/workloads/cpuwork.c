// SPDX-License-Identifier: MIT
/*
 * A fixed amount of single-threaded CPU work, for slowdown benchmarks:
 *   cpuwork [UNITS [STACK_KB]]   (defaults 300 units of ~5 ms, 0 KiB)
 * STACK_KB: run the work below that much extra (touched) stack, so a
 * profiler's stack snapshot has that many bytes to copy.
 * Prints "elapsed_ns N" and "cpu_ns N" (the process's own CPU time),
 * measured around the work only, so a profiler's start-up is not counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

__attribute__((noinline)) static unsigned long work_leaf(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x ^= x * 0x9e3779b97f4a7c15ul + (x >> 17);
	return x;
}

__attribute__((noinline)) static unsigned long work_mid(unsigned long x, int depth)
{
	if (depth == 0)
		return work_leaf(x, 1000);
	return work_mid(x + depth, depth - 1) ^ (unsigned long)depth;
}

__attribute__((noinline)) static unsigned long work_unit(unsigned long x)
{
	for (int i = 0; i < 3000; i++)
		x = work_mid(x, 8);
	return x;
}

__attribute__((noinline)) static void run(int units, size_t pad)
{
	volatile char *p = __builtin_alloca(pad + 1);
	volatile unsigned long sink = 1;
	long long t0, c0;

	for (size_t i = 0; i < pad; i += 64)
		p[i] = (char)i;
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int u = 0; u < units; u++)
		sink = work_unit(sink);
	printf("elapsed_ns %lld\ncpu_ns %lld\n", clock_ns(CLOCK_MONOTONIC) - t0,
	       clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);
	p[0] = (char)sink;
}

int main(int argc, char **argv)
{
	int units = argc > 1 ? atoi(argv[1]) : 300;
	size_t pad = argc > 2 ? (size_t)atol(argv[2]) * 1024 : 0;

	run(units, pad);
	return 0;
}
