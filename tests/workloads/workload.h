/* SPDX-License-Identifier: MIT */
/*
 * What several workloads share: a monotonic clock in seconds, and a
 * function that burns CPU in a frame of its own (never inlined, so it is
 * the leaf a profiler sees).
 */
#ifndef SFPROF_WORKLOAD_H
#define SFPROF_WORKLOAD_H

#include <time.h>

__attribute__((unused)) static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, unused)) static unsigned long burn(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

#endif
