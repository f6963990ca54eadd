// SPDX-License-Identifier: MIT
/*
 * A JIT for reliability_perfmap.sh: copies a small loop into fresh
 * executable memory at a fixed address (JIT_AT, so a map can be written
 * before it runs), prints "ADDR SIZE" of it on a line, and runs it for
 * SECONDS. It writes no perf map itself: the test writes one (or
 * plants one) to see whose sfprof believes.
 *
 * usage: reliability_jit SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define JIT_AT 0x100000000000ul

/* x86-64: loop: sub $1,%rdi; jnz loop; ret */
static const unsigned char code[] = { 0x48, 0x83, 0xef, 0x01, 0x75, 0xfa, 0xc3 };

int main(int argc, char **argv)
{
	struct timespec t0, t;
	long (*fn)(long);
	void *m;

	if (argc != 2)
		return 2;
	m = mmap((void *)JIT_AT, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC))
		return 1;
	fn = (long (*)(long))m;
	printf("%lx %zx\n", (unsigned long)(uintptr_t)m, sizeof(code));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		fn(1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 <
		 atof(argv[1]));
	return 0;
}
