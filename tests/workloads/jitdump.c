// SPDX-License-Identifier: MIT
/*
 * A tiny JIT that announces its code in a jitdump, as V8 --perf-prof and
 * the JVM agents do (jitdump.h): it writes jit-PID.dump in the current
 * directory, mmap()s it executable (how perf, and sfprof, find it), copies
 * two hand-written functions into anonymous executable memory and
 * records them: DEBUG_INFO + LOAD for sfjit_inner (a multiply loop),
 * LOAD for sfjit_outer (calls sfjit_inner); halfway through it moves
 * sfjit_outer (a MOVE record; the old copy is overwritten with int3).
 * Both keep frame pointers, as JIT code does; the C code does not.
 *
 * Usage: jitdump SECONDS
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

/* push rbp; mov rbp,rsp; mov rax,rdi;
 * L: imul rax,rax,31; add rax,rdi; dec rdi; jnz L; pop rbp; ret */
static const uint8_t inner_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
	0x48, 0x6b, 0xc0, 0x1f, 0x48, 0x01, 0xf8, 0x48, 0xff, 0xcf, 0x75, 0xf4,
	0x5d, 0xc3,
};
#define INNER_LOOP 7 /* offset of L */
/* push rbp; mov rbp,rsp; movabs rax,INNER; call rax; pop rbp; ret */
static uint8_t outer_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0, 0x5d, 0xc3,
};
#define OUTER_IMM 6

static int dump_fd = -1;
static uint64_t code_index;

static uint64_t ts(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void put(const void *p, size_t n)
{
	if (write(dump_fd, p, n) != (ssize_t)n) {
		perror("jitdump: write");
		exit(1);
	}
}

static void rec_hdr(uint32_t id, uint32_t total)
{
	uint64_t t = ts();

	put(&id, 4);
	put(&total, 4);
	put(&t, 8);
}

static void rec_load(const char *name, uint64_t addr, const void *code, uint64_t size)
{
	uint32_t pid = (uint32_t)getpid(), tid = pid;
	uint64_t idx = code_index++;

	rec_hdr(0, (uint32_t)(16 + 40 + strlen(name) + 1 + size));
	put(&pid, 4);
	put(&tid, 4);
	put(&addr, 8); /* vma */
	put(&addr, 8); /* code_addr */
	put(&size, 8);
	put(&idx, 8);
	put(name, strlen(name) + 1);
	put(code, size);
}

static void rec_move(uint64_t from, uint64_t to, uint64_t size)
{
	uint32_t pid = (uint32_t)getpid(), tid = pid;
	uint64_t idx = 1;

	rec_hdr(1, 16 + 48);
	put(&pid, 4);
	put(&tid, 4);
	put(&to, 8);
	put(&from, 8);
	put(&to, 8);
	put(&size, 8);
	put(&idx, 8);
}

/* Two lines for sfjit_inner: its prologue, its loop. */
static void rec_debug(uint64_t addr)
{
	static const char file[] = "sfjit.js";
	uint64_t nr = 2, a;
	uint32_t line, discrim = 0;

	rec_hdr(2, (uint32_t)(16 + 16 + 2 * (16 + sizeof(file))));
	put(&addr, 8);
	put(&nr, 8);
	a = addr;
	line = 10;
	put(&a, 8);
	put(&line, 4);
	put(&discrim, 4);
	put(file, sizeof(file));
	a = addr + INNER_LOOP;
	line = 11;
	put(&a, 8);
	put(&line, 4);
	put(&discrim, 4);
	put(file, sizeof(file)); /* (written out again: "\xff" is optional) */
}

static void header(void)
{
	uint32_t h32[6] = { 0x4A695444, 1, 40, 62 /* EM_X86_64 */, 0, (uint32_t)getpid() };
	uint64_t t = ts(), flags = 0;

	put(h32, sizeof(h32));
	put(&t, 8);
	put(&flags, 8);
}

typedef uint64_t (*jit_fn)(uint64_t);

__attribute__((noinline)) static uint64_t drive(jit_fn f, double until)
{
	uint64_t acc = 0;

	while (now_s() < until)
		acc += f(2000000);
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now_s();
	char path[64];
	uint8_t *code;
	uint64_t inner, outer, moved, acc;

	snprintf(path, sizeof(path), "jit-%d.dump", (int)getpid());
	dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (dump_fd < 0) {
		perror(path);
		return 1;
	}
	header();
	/* the announcement: an executable mapping of the dump */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0) == MAP_FAILED) {
		perror("jitdump: mmap");
		return 1;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitdump: mmap code");
		return 1;
	}
	inner = (uint64_t)(uintptr_t)(code + 0x40);
	outer = (uint64_t)(uintptr_t)(code + 0x100);
	moved = (uint64_t)(uintptr_t)(code + 0x800);
	memcpy(code + 0x40, inner_code, sizeof(inner_code));
	memcpy(outer_code + OUTER_IMM, &inner, 8);
	memcpy(code + 0x100, outer_code, sizeof(outer_code));
	rec_debug(inner);
	rec_load("sfjit_inner", inner, inner_code, sizeof(inner_code));
	rec_load("sfjit_outer", outer, outer_code, sizeof(outer_code));

	acc = drive((jit_fn)(uintptr_t)outer, t0 + secs / 2);
	/* move sfjit_outer: the code runs from its new place only */
	memcpy(code + 0x800, outer_code, sizeof(outer_code));
	rec_move(outer, moved, sizeof(outer_code));
	memset(code + 0x100, 0xcc, sizeof(outer_code));
	acc += drive((jit_fn)(uintptr_t)moved, t0 + secs);
	rec_hdr(3, 16); /* CLOSE */
	printf("%llu\n", (unsigned long long)(acc & 0xff));
	return 0;
}
