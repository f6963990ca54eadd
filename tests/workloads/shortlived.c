// SPDX-License-Identifier: MIT
/*
 * A process that lives a few milliseconds, on CPU the whole time, in
 * known functions:
 *   shortlived MS      burn CPU for MS milliseconds (default 20), exit
 *   shortlived -s N MS start N of them, one after the other, then exit
 * The storm form lets a test start hundreds without a shell between.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

__attribute__((noinline)) static unsigned long short_leaf(unsigned long x)
{
	return burn(x);
}

__attribute__((noinline)) static unsigned long short_work(double ms)
{
	double end = now_s() + ms / 1000.0;
	unsigned long x = 1;

	while (now_s() < end)
		x = short_leaf(x);
	return x;
}

int main(int argc, char **argv)
{
	volatile unsigned long sink;

	if (argc > 3 && !strcmp(argv[1], "-s")) {
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++) {
			pid_t p = fork();

			if (p == 0) {
				execl("/proc/self/exe", argv[0], argv[3], (char *)NULL);
				_exit(127);
			}
			if (p > 0)
				waitpid(p, NULL, 0);
		}
		return 0;
	}
	sink = short_work(argc > 1 ? atof(argv[1]) : 20);
	(void)sink;
	return 0;
}
