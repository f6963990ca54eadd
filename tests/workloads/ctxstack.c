// SPDX-License-Identifier: MIT
/*
 * Spins on a small stack of its own whose mapping ends where no frame top
 * is known to a profiler (not the main stack, not below a thread
 * descriptor), so a stack copy must stop at the mapping's end:
 *   ctxstack [SECONDS]   (default 2)
 * The stack is 3 pages mmap()ed with a PROT_NONE page above, entered with
 * makecontext(). Prints "stack LO HI" (the readable range) and leaves the
 * 8 bytes below HI holding 0x5346505246544f50 ("POTFRPFS" little-endian).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#include "workload.h"

#define PAGE 4096
#define MAGIC 0x5346505246544f50ull

static ucontext_t main_ctx, spin_ctx;
static double secs = 2;

static void spin(void)
{
	volatile unsigned long sink = 1;
	double end = now_s() + secs;

	while (now_s() < end)
		sink = burn(sink);
}

int main(int argc, char **argv)
{
	uint8_t *m;

	if (argc > 1)
		secs = atof(argv[1]);
	m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + 3 * PAGE, PAGE, PROT_NONE))
		return 1;
	/* touch every page, so none is left non-resident */
	for (int i = 0; i < 3 * PAGE; i += 64)
		m[i] = (uint8_t)i;
	*(volatile uint64_t *)(m + 3 * PAGE - 8) = MAGIC;
	printf("stack %p %p\n", (void *)m, (void *)(m + 3 * PAGE));
	fflush(stdout);
	if (getcontext(&spin_ctx))
		return 1;
	/* the context's stack stops 64 bytes short of the mapping end, so
	 * makecontext() leaves the magic alone */
	spin_ctx.uc_stack.ss_sp = m;
	spin_ctx.uc_stack.ss_size = 3 * PAGE - 64;
	spin_ctx.uc_link = &main_ctx;
	makecontext(&spin_ctx, spin, 0);
	if (swapcontext(&main_ctx, &spin_ctx))
		return 1;
	return 0;
}
