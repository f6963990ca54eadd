/* SPDX-License-Identifier: MIT */
/*
 * For tests that sample this very process: the end of the mapping that
 * holds an address (the stack's top), and a raw copy of stack memory as
 * a profiler takes it. Static: include it once per test.
 */
#ifndef SFPROF_TEST_SELFSTACK_H
#define SFPROF_TEST_SELFSTACK_H

#include <stdint.h>
#include <stdio.h>

static uint64_t mapping_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t lo, hi, end = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/* Copies raw stack memory, redzones included, as a profiler does: not
 * instrumented by ASan, and without the memcpy interceptor. */
__attribute__((noinline, no_sanitize("address"))) static void
copy_stack(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		dst[i] = ((const volatile uint8_t *)src)[i];
}

#endif
