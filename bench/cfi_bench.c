// SPDX-License-Identifier: MIT
/*
 * Conversion time of cfi_to_sframe (interpret .eh_frame + encode SFrame v3)
 * per binary: median thread CPU time of RUNS runs, MB of CFI per second, and the derived
 * table's size against the .eh_frame (+ .eh_frame_hdr) it replaces.
 * The file is read and libelf-indexed once, outside the timing.
 *
 *   cfi_bench [-n RUNS] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/cfi.h"

/*
 * CPU time of this thread: the machine is shared (2 cores, parallel
 * builds), and wall time mostly measured the other tenants.
 */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench(const char *path, int runs)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	char *img = malloc((size_t)st.st_size);
	if (!img || read(fd, img, (size_t)st.st_size) != st.st_size) {
		fprintf(stderr, "%s: short read\n", path);
		return 1;
	}
	close(fd);
	Elf *e = elf_memory(img, (size_t)st.st_size);
	struct cfi_input in;
	if (!e || cfi_input_from_elf(e, &in)) {
		fprintf(stderr, "%s: no CFI\n", path);
		return 1;
	}
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0, in.eh_frame_vaddr };
	struct cfi_stats cs;
	double *conv = calloc((size_t)runs, sizeof(double));
	double *derive = calloc((size_t)runs, sizeof(double));
	size_t len = 0;
	for (int i = 0; i < runs; i++) {
		void *buf;
		struct cfi_table t;
		double t0 = now_ms();
		if (cfi_derive(&in, &t, &cs)) {
			fprintf(stderr, "%s: derive failed\n", path);
			return 1;
		}
		double t1 = now_ms();
		cfi_table__release(&t);
		double t2 = now_ms();
		if (cfi_to_sframe(&in, &o, &buf, &len, &cs)) {
			fprintf(stderr, "%s: conversion failed\n", path);
			return 1;
		}
		double t3 = now_ms();
		free(buf);
		derive[i] = t1 - t0;
		conv[i] = t3 - t2;
	}
	double mc = median(conv, runs), md = median(derive, runs);
	double mb = (double)(in.eh_frame_len + in.debug_frame_len) / 1e6;
	const char *b = strrchr(path, '/');
	printf("%-28s %8zu %8zu %6llu %8.2f %8.2f %8.1f %8zu %6.2f\n", b ? b + 1 : path,
	       in.eh_frame_len, in.eh_frame_hdr_len, (unsigned long long)cs.fdes, md, mc,
	       mb / (mc / 1e3), len,
	       (double)len / (double)(in.eh_frame_len + in.eh_frame_hdr_len));
	free(conv);
	free(derive);
	elf_end(e);
	free(img);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 21, i = 1, bad = 0;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (runs < 1 || i >= argc) {
		fprintf(stderr, "usage: %s [-n RUNS] FILE...\n", argv[0]);
		return 2;
	}
	elf_version(EV_CURRENT);
	printf("%-28s %8s %8s %6s %8s %8s %8s %8s %6s\n", "binary", "eh_frame",
	       "eh_hdr", "FDEs", "derive", "convert", "MB/s", "sframe", "ratio");
	printf("%-28s %8s %8s %6s %8s %8s %8s %8s %6s\n", "", "bytes", "bytes", "",
	       "ms", "ms", "", "bytes", "");
	for (; i < argc; i++)
		bad |= bench(argv[i], runs);
	return bad;
}
