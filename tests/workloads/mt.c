// SPDX-License-Identifier: MIT
/*
 * Threads that name themselves, as servers' workers do:
 *   mt [NTHREADS [SECONDS]]    (defaults 3, 2)
 * NTHREADS threads named worker-0, worker-1... spin for SECONDS while the
 * main thread (named after the program) waits for them off-CPU, so every
 * sample comes from a thread whose comm is not the process's. Prints
 * "pid PID".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "workload.h"

static double end_s;

static void *worker(void *arg)
{
	volatile unsigned long sink = 1;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	while (now_s() < end_s)
		sink = burn(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	double secs = argc > 2 ? atof(argv[2]) : 2;
	pthread_t t[64];

	if (n < 1 || n > 64)
		n = 3;
	end_s = now_s() + secs;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
