// SPDX-License-Identifier: MIT
/*
 * What srcline's DWARF lookups cost, in CPU time (CLOCK_PROCESS_CPUTIME_ID):
 *   open   the first lookup of a binary: its debug file found and opened,
 *          the DWARF image inflated or mapped from the cache, the Dwarf
 *          made, and that one address resolved
 *   cold   each further new address: CU lookup (aranges), line, and the
 *          inline chain (the scope walk)
 *   warm   an address looked up again (srcline's per-PC cache)
 * over N addresses spread evenly over BINARY's executable segments (most
 * in a CU of their own: each reads its CU's line table), and "near": N
 * more, 61 bytes apart from the middle of the text (a few CUs, as a
 * profile's addresses cluster in its hot functions).
 *   srcline_bench BINARY [N] [ROUNDS] [libdw]
 *            medians of ROUNDS rounds, each a new srcline; "libdw": the
 *            scopes by dwarf_getscopes + dwarf_getscopes_die (the walk
 *            srcline replaced) instead of srcline's own walk
 * The DWARF cache is whatever SFPROF_DWARF_CACHE says (dwarfimage.h).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/elfread.h"
#include "symbols/srcline.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 200, rounds = argc > 3 ? atoi(argv[3]) : 5;
	double open_v[64], cold_v[64], warm_v[64], near_v[64];
	uint64_t lo = UINT64_MAX, hi = 0, *pcs;
	struct elfread *e;
	struct elfread_load ld;
	struct srcline_opts o = { .libdw_scopes = argc > 4 && !strcmp(argv[4], "libdw") };
	int found = 0;

	if (argc < 2 || n < 2 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: srcline_bench BINARY [N >= 2] [ROUNDS <= 64]\n");
		return 2;
	}
	e = elfread__open(argv[1]);
	if (!e) {
		fprintf(stderr, "srcline_bench: %s: not an ELF file\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < elfread__nr_loads(e); i++)
		if (!elfread__load(e, i, &ld) && (ld.flags & PF_X)) {
			lo = ld.vaddr < lo ? ld.vaddr : lo;
			hi = ld.vaddr + ld.filesz > hi ? ld.vaddr + ld.filesz : hi;
		}
	if (lo >= hi) {
		fprintf(stderr, "srcline_bench: %s: no executable segment\n", argv[1]);
		return 1;
	}
	pcs = malloc((size_t)n * sizeof(*pcs));
	for (int i = 0; i < n; i++)
		pcs[i] = lo + (hi - lo) / (uint64_t)n * (uint64_t)i + 17;
	for (int r = 0; r < rounds; r++) {
		struct srcline *s = srcline__new(e, argv[1], &o);
		const struct srcline_level *lv;
		size_t k;
		double t0, t1, t2, t3;

		t0 = now_ns();
		srcline__lookup(s, pcs[0], &lv, &k);
		t1 = now_ns();
		found = 0;
		for (int i = 1; i < n; i++)
			found += !srcline__lookup(s, pcs[i], &lv, &k);
		t2 = now_ns();
		for (int w = 0; w < 10; w++)
			for (int i = 0; i < n; i++)
				srcline__lookup(s, pcs[i], &lv, &k);
		t3 = now_ns();
		for (int i = 0; i < n; i++)
			srcline__lookup(s, lo + (hi - lo) / 2 + 61 * (uint64_t)i, &lv, &k);
		near_v[r] = (now_ns() - t3) / n;
		open_v[r] = t1 - t0;
		cold_v[r] = (t2 - t1) / (n - 1);
		warm_v[r] = (t3 - t2) / (10.0 * n);
		srcline__free(s);
	}
	printf("%s: %d addresses (%d with DWARF levels), median of %d rounds%s\n", argv[1], n,
	       found, rounds, o.libdw_scopes ? ", libdw's scope calls" : "");
	printf("  open (first lookup)  %9.3f ms\n", median(open_v, rounds) / 1e6);
	printf("  cold, a new address  %9.2f us\n", median(cold_v, rounds) / 1e3);
	printf("  cold, a near address %9.2f us\n", median(near_v, rounds) / 1e3);
	printf("  warm, cached address %9.3f us\n", median(warm_v, rounds) / 1e3);
	free(pcs);
	elfread__free(e);
	return 0;
}
