// SPDX-License-Identifier: MIT
/*
 * What memory costs a short process here (BENCHMARKS.md, "Kernel side of
 * a report"), each variant ROUNDS times interleaved; wall-clock time,
 * median, minimum and maximum:
 *   pagecost_bench anon ROUNDS      4 MiB of fresh anonymous memory first
 *                                   touched: faults, MADV_POPULATE_WRITE,
 *                                   a MADV_HUGEPAGE region (THP)
 *   pagecost_bench file FILE ROUNDS FILE read whole with a CRC32C over it:
 *                                   mmap + MAP_POPULATE, mmap alone,
 *                                   read() into one 64 KiB / 256 KiB buffer
 * Build: gcc -O2 -msse4.2 -o build/bench/pagecost_bench bench/pagecost_bench.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAXR 200

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static uint64_t crc(const uint8_t *p, size_t n, uint64_t c)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		c = _mm_crc32_u64(c, w);
	}
	return c;
}

static void print(const char *name, double *t, int n)
{
	qsort(t, n, sizeof(*t), cmp_d);
	printf("%-24s median %7.0f us  min %7.0f us  max %7.0f us\n", name, t[n / 2], t[0], t[n - 1]);
}

/* 0 faults, 1 MADV_POPULATE_WRITE, 2 MADV_HUGEPAGE */
static double anon(int mode)
{
	const size_t sz = 4u << 20, huge = 2u << 20;
	double t0 = now_us();
	char *raw = mmap(NULL, sz + huge, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m;

	if (raw == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	m = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	if (mode == 1 && madvise(m, sz, MADV_POPULATE_WRITE))
		perror("MADV_POPULATE_WRITE");
	if (mode == 2 && madvise(m, sz, MADV_HUGEPAGE))
		perror("MADV_HUGEPAGE");
	for (size_t i = 0; i < sz; i += 4096)
		m[i] = 1;
	munmap(raw, sz + huge);
	return now_us() - t0;
}

/* 0 mmap+populate, 1 mmap, 2 read 64 KiB, 3 read 256 KiB */
static double file(const char *path, int mode, uint64_t *sink)
{
	double t0 = now_us();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(1);
	}
	if (mode < 2) {
		uint8_t *m = mmap(NULL, st.st_size, PROT_READ,
				  MAP_PRIVATE | (mode == 0 ? MAP_POPULATE : 0), fd, 0);

		if (m == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		*sink += crc(m, st.st_size, 0);
		munmap(m, st.st_size);
	} else {
		size_t cap = mode == 2 ? 64u << 10 : 256u << 10;
		uint8_t *b = malloc(cap);
		ssize_t n;

		while (b && (n = read(fd, b, cap)) > 0)
			*sink += crc(b, n, 0);
		free(b);
	}
	close(fd);
	return now_us() - t0;
}

int main(int argc, char **argv)
{
	static double t[4][MAXR];
	uint64_t sink = 0;
	int rounds;

	if (argc == 3 && !strcmp(argv[1], "anon")) {
		const char *names[] = { "anon: faults", "anon: POPULATE_WRITE", "anon: THP" };

		rounds = atoi(argv[2]);
		rounds = rounds < 1 ? 1 : rounds > MAXR ? MAXR : rounds;
		for (int r = 0; r < rounds; r++)
			for (int m = 0; m < 3; m++)
				t[m][r] = anon(m);
		for (int m = 0; m < 3; m++)
			print(names[m], t[m], rounds);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "file")) {
		const char *names[] = { "file: mmap+populate", "file: mmap",
					"file: read 64 KiB", "file: read 256 KiB" };

		rounds = atoi(argv[3]);
		rounds = rounds < 1 ? 1 : rounds > MAXR ? MAXR : rounds;
		for (int r = 0; r < rounds; r++)
			for (int m = 0; m < 4; m++)
				t[m][r] = file(argv[2], m, &sink);
		for (int m = 0; m < 4; m++)
			print(names[m], t[m], rounds);
		return sink == 42; /* keep the CRC */
	}
	fprintf(stderr, "usage: pagecost_bench anon ROUNDS | file FILE ROUNDS\n");
	return 2;
}
