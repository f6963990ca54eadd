// SPDX-License-Identifier: MIT
/*
 * Processes that only look like Ruby, for ruby_fakevm.py. Built twice:
 * with -DFAKE_LIB as a "libruby-3.1.so.3.1" exporting what sfprof takes
 * for a CRuby 3.1 VM (ruby_version "3.1.2", a TLS ruby_current_ec),
 * whose ruby_current_ec points at an execution context of garbage; and
 * as the "ruby" that links it and spins in spin_leaf for argv[1]
 * seconds of CPU time, with that context as argv[2] says:
 *   garbage   a VM stack of random words (the frames' iseq, pc, ep too)
 *   truncated cfp two frames before the end of a mapping that ends early
 *   loop      every frame's ep and iseq point at the frame itself
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifdef FAKE_LIB
__attribute__((visibility("default"))) const char ruby_version[] = "3.1.2";
__attribute__((visibility("default"))) __thread void *ruby_current_ec;

void fake_set_ec(void *ec)
{
	ruby_current_ec = ec;
}
#else
void fake_set_ec(void *ec);

/* rb_execution_context_t of 3.1: vm_stack, vm_stack_size (words), cfp */
static uint64_t ec[3];

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
	size_t words = 8192, len = words * 8;
	uint64_t *stack = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile unsigned long x = 1;
	double end = cpu_s() + secs; /* CPU seconds: as many samples under load */

	if (stack == MAP_FAILED)
		return 1;
	srand(7);
	for (size_t i = 0; i < words; i++)
		stack[i] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 2) ^ (uint64_t)rand();
	ec[0] = (uint64_t)(uintptr_t)stack;
	ec[1] = words;
	ec[2] = (uint64_t)(uintptr_t)stack;
	if (!strcmp(mode, "truncated")) {
		/* the stack says it is longer than its mapping */
		munmap((char *)stack + len - 4096, 4096 + 4096);
		ec[1] = words + 4096;
		ec[2] = (uint64_t)(uintptr_t)((char *)stack + len - 4096 - 2 * 64);
	} else if (!strcmp(mode, "loop")) {
		for (size_t i = 0; i + 8 <= words; i += 8) {
			stack[i] = (uint64_t)(uintptr_t)&stack[i];	/* pc */
			stack[i + 2] = (uint64_t)(uintptr_t)&stack[i];	/* iseq */
			stack[i + 4] = (uint64_t)(uintptr_t)&stack[i];	/* ep */
		}
	}
	fake_set_ec(ec);
	while (cpu_s() < end)
		x = spin_leaf(x);
	return (int)(x & 0);
}
#endif
