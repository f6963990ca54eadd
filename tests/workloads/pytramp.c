// SPDX-License-Identifier: MIT
/*
 * A JIT in the manner of Python 3.12 `-X perf`, with frame pointers:
 * every "Python function" gets its own copy of a trampoline in anonymous
 * executable memory
 *     endbr64; push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret
 * (shaped like CPython's _Py_trampoline_func_start(ts, frame, throw,
 * eval), which calls eval(ts, frame, throw)), named in /tmp/perf-PID.map
 * as "py::NAME:FILE". This is the frame-pointer fallback's test: the
 * trampolines CPython 3.12 and 3.13 build on x86-64 keep no frame pointer
 * (sub $8,%rsp; call *%rcx; add $8,%rsp; ret), and those are unwound by
 * their template's rows instead (pytrampoline.h; tests/e2e/names_pyperf.py
 * runs the real interpreters). The evaluator, py_eval(), is C
 * built without frame pointers (unwound by its SFrame/.eh_frame rows);
 * it calls the next level through the next trampoline, LEVELS deep, and
 * burns CPU at the bottom. The trampolines have no unwind rows: an
 * unwinder gets through them only by their frame pointers.
 *
 * Usage: pytramp SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#define LEVELS 4

typedef uint64_t (*eval_fn)(uint64_t level, uint64_t x, uint64_t throwflag);
typedef uint64_t (*tramp_fn)(uint64_t level, uint64_t x, uint64_t throwflag, eval_fn eval);

static const uint8_t tramp_code[] = {
	0xf3, 0x0f, 0x1e, 0xfa, /* endbr64 (CPython built with CET has it) */
	0x55,		  /* push %rbp */
	0x48, 0x89, 0xe5, /* mov %rsp,%rbp */
	0xff, 0xd1,	  /* call *%rcx */
	0x5d,		  /* pop %rbp */
	0xc3,		  /* ret */
};

static tramp_fn tramps[LEVELS + 1];

__attribute__((noinline)) static uint64_t py_eval(uint64_t level, uint64_t x, uint64_t throwflag)
{
	uint64_t r;

	if (level == LEVELS)
		return burn(x ^ throwflag) * 3 + level; /* (no tail call) */
	/* (work on both sides of the call: the frame is not a tail call) */
	x = x * 6364136223846793005ull + level;
	r = tramps[level + 1](level + 1, x, throwflag, py_eval);
	return r ^ (x >> 7);
}

__attribute__((noinline)) static uint64_t run(double until)
{
	uint64_t acc = 0;

	while (now_s() < until)
		acc += tramps[0](0, acc, 0, py_eval);
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	char path[64];
	uint8_t *code;
	FILE *map;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("pytramp: mmap");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	for (int i = 0; i <= LEVELS; i++) {
		uint8_t *t = code + 0x7b0 + 0x20 * i; /* one after another, as CPython places them */

		memcpy(t, tramp_code, sizeof(tramp_code));
		tramps[i] = (tramp_fn)(uintptr_t)t;
		fprintf(map, "%lx %zx py::level%d:/srv/app.py\n", (unsigned long)(uintptr_t)t,
			sizeof(tramp_code), i);
	}
	fclose(map);
	/* W^X, as CPython does once the trampolines are written */
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("pytramp: mprotect");
		return 1;
	}
	printf("%llu\n", (unsigned long long)(run(now_s() + secs) & 0xff));
	unlink(path);
	return 0;
}
