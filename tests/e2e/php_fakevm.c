// SPDX-License-Identifier: MIT
/*
 * A process that only looks like PHP, for php_fakevm.py: named php, it
 * exports executor_globals and execute_ex and carries the build id
 * "API20220829,NTS" of PHP 8.2, so sfprof takes it for an NTS 8.2
 * engine; its current_execute_data (executor_globals + 0x1e8) points at
 * garbage, as argv[2] says, while it spins in spin_leaf for argv[1]
 * seconds of CPU time:
 *   garbage  frames of random words
 *   loop     a frame whose prev_execute_data is itself, func random
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((used)) const char build_id[] = "API20220829,NTS";
__attribute__((used, aligned(64))) unsigned char executor_globals[4096];

__attribute__((noinline)) void execute_ex(void *ex)
{
	(void)ex;
}

__attribute__((noinline)) static unsigned long spin_leaf(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x ^= x * 0x9e3779b97f4a7c15ul + (x >> 17);
	return x;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	const char *mode = argc > 2 ? argv[2] : "garbage";
	static uint64_t frames[8192];
	volatile unsigned long x = 1;
	double end = cpu_s() + secs; /* CPU seconds: as many samples under load */
	uint64_t ex = (uint64_t)(uintptr_t)frames;

	srand(7);
	for (size_t i = 0; i < 8192; i++)
		frames[i] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 2) ^ (uint64_t)rand();
	if (!strcmp(mode, "loop")) {
		frames[6] = ex;				 /* prev_execute_data: itself */
		frames[3] = (uint64_t)(uintptr_t)&frames[64]; /* func: random bytes */
	}
	memcpy(executor_globals + 0x1e8, &ex, sizeof(ex));
	execute_ex(NULL);
	while (cpu_s() < end)
		x = spin_leaf(x);
	return (int)(x & 0);
}
