// SPDX-License-Identifier: MIT
/*
 * Several spinning threads, one of them started late:
 *   threads [NTHREADS [LATE_MS [SECONDS]]]    (defaults 3, 1500, 4)
 * NTHREADS threads spin from the start; one more starts LATE_MS later.
 * All stop SECONDS after the start. Prints "pid PID", then "tid TID FRAME"
 * for every spinning thread and "late_tid TID FRAME" for the late one,
 * FRAME being the address of the thread function's frame.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static double end_s;

static void *spinner(void *arg)
{
	volatile unsigned long sink = 1;

	printf("%s %ld %p\n", arg ? "late_tid" : "tid", (long)syscall(SYS_gettid),
	       __builtin_frame_address(0));
	fflush(stdout);
	while (now_s() < end_s)
		sink = burn(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int late_ms = argc > 2 ? atoi(argv[2]) : 1500;
	double secs = argc > 3 ? atof(argv[3]) : 4;
	pthread_t *t = calloc(n + 1, sizeof(*t));
	struct timespec d = { late_ms / 1000, (late_ms % 1000) * 1000000L };

	if (!t || n < 1)
		return 1;
	end_s = now_s() + secs;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, spinner, NULL);
	nanosleep(&d, NULL);
	pthread_create(&t[n], NULL, spinner, (void *)1);
	for (int i = 0; i <= n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
