// SPDX-License-Identifier: MIT
/*
 * An idle process of N threads (default 10), all blocked, for the
 * whole-machine benchmarks: idlethreads [N [SECS]]. Prints "pid PID".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int secs = argc > 2 ? atoi(argv[2]) : 60;
	pthread_t t;

	for (int i = 1; i < n; i++)
		if (pthread_create(&t, NULL, idle, NULL))
			return 1;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}
