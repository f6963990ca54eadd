// SPDX-License-Identifier: MIT
/*
 * Functions gcc inlines (always_inline, two levels deep) inside functions
 * it does not, for inline frames and source lines:
 *   inlined [SECONDS]   (default 2)
 * Stacks: main -> run -> spin_outer -> (inlined) mix_mid -> (inlined)
 * mix_leaf, and run -> (inlined) step_inline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "workload.h"

static inline __attribute__((always_inline)) unsigned long mix_leaf(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 29);
}

static inline __attribute__((always_inline)) unsigned long mix_mid(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x = mix_leaf(x + i);
	return x;
}

__attribute__((noinline)) static unsigned long spin_outer(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = mix_mid(x, 50) + 1;
	return x;
}

static inline __attribute__((always_inline)) unsigned long step_inline(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long run(double secs)
{
	double t0 = now_s();
	unsigned long x = 1;

	while (now_s() - t0 < secs) {
		x = spin_outer(x);
		x = step_inline(x);
	}
	return x;
}

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* the result only keeps the work from being optimised away: sfprof
	 * exits with COMMAND's status, so this one must be 0 */
	sink = run(secs);
	return 0;
}
