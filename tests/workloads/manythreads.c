// SPDX-License-Identifier: MIT
/*
 * Many runnable threads at once, each spinning in one known function:
 *   manythreads [NTHREADS [SECONDS [stdin]]]    (defaults 2000, 20)
 * The threads are created blocked (so that creating 2000 of them is not
 * itself slowed by the ones already spinning) and released together, at
 * once or, with "stdin", when a line can be read from stdin; then every
 * one of them spins in many_spin_leaf() until SECONDS after the release,
 * and the process exits. Prints "pid PID" at the start, "ready N" once
 * all N threads exist, and "running N" just before they are released
 * (printed after, it could wait seconds for the CPU the spinners take).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go;
static double end_s;

__attribute__((noinline)) static unsigned long many_spin_leaf(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

static void *spinner(void *arg)
{
	volatile unsigned long sink = 1;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&go_cond, &lock);
	pthread_mutex_unlock(&lock);
	while (now_s() < end_s)
		sink = many_spin_leaf(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	double secs = argc > 2 ? atof(argv[2]) : 20;
	int wait_stdin = argc > 3 && !strcmp(argv[3], "stdin");
	char line[16];
	pthread_attr_t attr;
	pthread_t *t;

	if (n < 1 || !(t = calloc((size_t)n, sizeof(*t))))
		return 1;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	/* small stacks: 2000 threads of the default 8 MiB reserve 16 GiB */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, spinner, NULL)) {
			perror("manythreads: pthread_create");
			return 1;
		}
	printf("ready %d\n", n);
	fflush(stdout);
	if (wait_stdin && !fgets(line, sizeof(line), stdin))
		return 1;
	printf("running %d\n", n);
	fflush(stdout);
	pthread_mutex_lock(&lock);
	end_s = now_s() + secs;
	go = 1;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
