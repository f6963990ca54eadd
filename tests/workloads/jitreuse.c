// SPDX-License-Identifier: MIT
/*
 * A JIT that reuses its code memory, as V8 does after a GC: it writes
 * jit_alpha at address X, names it in /tmp/perf-PID.map and runs it for
 * a quarter of the time (from phase_one), then writes jit_beta at the
 * same X (the same layout: every PC of the one is a PC of the other),
 * appends its line and runs it for the rest (from phase_two). Both keep
 * frame pointers, as JIT code does. A profiler that keeps the first name
 * calls phase_two's samples jit_alpha.
 *
 * Usage: jitreuse SECONDS (the perf map is left behind, as node does)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

/* push rbp; mov rbp,rsp; mov rax,rdi;
 * L: imul rax,rax,K; add rax,rdi; dec rdi; jnz L; pop rbp; ret */
static uint8_t code_tmpl[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
	0x48, 0x6b, 0xc0, 0x1f, 0x48, 0x01, 0xf8, 0x48, 0xff, 0xcf, 0x75, 0xf4,
	0x5d, 0xc3,
};
#define IMUL_K 10 /* offset of K */

typedef uint64_t (*jit_fn)(uint64_t);

static void jit_write(uint8_t *at, uint8_t k, const char *name, FILE *map)
{
	code_tmpl[IMUL_K] = k;
	memcpy(at, code_tmpl, sizeof(code_tmpl));
	__builtin___clear_cache((char *)at, (char *)at + sizeof(code_tmpl));
	/* the line after the code, as a JIT writes it */
	fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)at, sizeof(code_tmpl), name);
	fflush(map);
}

/* (different bodies: identical ones would be folded into one) */
__attribute__((noinline)) static uint64_t phase_one(jit_fn f, double until)
{
	uint64_t acc = 0;

	while (now_s() < until)
		acc += f(2000000);
	return acc;
}

__attribute__((noinline)) static uint64_t phase_two(jit_fn f, double until)
{
	uint64_t acc = 1;

	while (now_s() < until)
		acc ^= f(2000001);
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 4, t0 = now_s();
	char path[64];
	uint8_t *code;
	uint64_t acc;
	FILE *map;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitreuse: mmap");
		return 1;
	}
	jit_write(code + 0x40, 31, "jit_alpha", map);
	acc = phase_one((jit_fn)(uintptr_t)(code + 0x40), t0 + secs / 4);
	jit_write(code + 0x40, 37, "jit_beta", map);
	acc += phase_two((jit_fn)(uintptr_t)(code + 0x40), t0 + secs);
	fclose(map);
	printf("%llu\n", (unsigned long long)(acc & 0xff));
	return 0;
}
