// SPDX-License-Identifier: MIT
/*
 * Address reuse and short-lived libraries, for the mapping tests:
 *   dlswap swap LIBA LIBB ROUNDS SECS
 *       ROUNDS times: dlopen LIBA, run swap_a_work for SECS of CPU time, dlclose it;
 *       the same with LIBB (which then lands where LIBA was). Prints
 *       "a ADDR" / "b ADDR", the text address of each load.
 *   dlswap brief LIB ROUNDS MS
 *       ROUNDS times: dlopen LIB, run its work for MS ms of CPU time, dlclose it.
 *   dlswap leader SECS
 *       the main thread starts a worker that burns SECS seconds in
 *       leader_worker, then exits with pthread_exit (the process lives
 *       on with an empty /proc/PID/maps).
 * Each mode prints "pid PID" first and waits for a line on stdin.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

typedef void (*work_fn)(double, double (*)(void));

/* The libraries' work is timed in this thread's CPU time, not wall time:
 * their sample counts are then equal however the machine is loaded (CI
 * saw 23 against 12 when the second library's 1.2 s got half a core). */
static double clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_lib(const char *path, const char *fn, double secs, char tag)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	work_fn w;

	if (!h) {
		fprintf(stderr, "dlswap: %s\n", dlerror());
		return -1;
	}
	w = (work_fn)dlsym(h, fn);
	if (!w) {
		dlclose(h);
		return -1;
	}
	if (tag)
		printf("%c %p\n", tag, (void *)w);
	fflush(stdout);
	w(secs, clock_s);
	dlclose(h);
	return 0;
}

static double worker_secs;

__attribute__((noinline, noipa)) static unsigned long leader_worker_burn(double secs)
{
	double end = now_s() + secs;
	unsigned long x = 7;

	while (now_s() < end)
		x = burn(x);
	return x;
}

static void *leader_worker(void *arg)
{
	static volatile unsigned long sink;

	(void)arg;
	sink = leader_worker_burn(worker_secs);
	return NULL;
}

int main(int argc, char **argv)
{
	char line[16];

	if (argc < 3)
		return 2;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (!strcmp(argv[1], "swap") && argc >= 6) {
		for (int i = 0; i < atoi(argv[4]); i++)
			if (run_lib(argv[2], "swap_a_work", atof(argv[5]), 'a') ||
			    run_lib(argv[3], "swap_b_work", atof(argv[5]), 'b'))
				return 1;
		return 0;
	}
	if (!strcmp(argv[1], "brief") && argc >= 5) {
		for (int i = 0; i < atoi(argv[3]); i++)
			if (run_lib(argv[2], "swap_a_work", atof(argv[4]) / 1000.0, 0))
				return 1;
		return 0;
	}
	if (!strcmp(argv[1], "leader")) {
		pthread_t t;

		worker_secs = atof(argv[2]);
		if (pthread_create(&t, NULL, leader_worker, NULL))
			return 1;
		pthread_exit(NULL);
	}
	return 2;
}
