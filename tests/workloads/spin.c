// SPDX-License-Identifier: MIT
/*
 * One thread burning CPU in a known function for SECONDS (default 10):
 *   spin [SECONDS]
 * Prints "pid PID" once started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) static unsigned long spin_leaf(unsigned long x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long spin_mid(unsigned long x)
{
	return spin_leaf(x, 200000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end;
	volatile unsigned long sink = 1;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	end = now_s() + secs;
	while (now_s() < end)
		sink = spin_mid(sink);
	return 0;
}
