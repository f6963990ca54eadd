// SPDX-License-Identifier: MIT
/*
 * Cost of loading a Go binary's .gopclntab (BENCHMARKS.md "## go"): per
 * binary, the thread's CPU time of
 *   parse    go_runtime__open: header, sub-table bounds, the whole functab
 *            checked (the ELF already open)
 *   names    go_runtime__add_symbols + symtab__finish: every function named
 *   rows     go_runtime__derive_table: SFrame rows from every SP-delta table
 *            (only used when the binary has no .eh_frame/.debug_frame)
 *   lookup   go_runtime__special_row at uniform PCs over the text (ns)
 * medians of `rounds` rounds.
 * usage: go_pclntab BINARY... [-n ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/elfread.h"
#include "runtimes/go/goruntime.h"
#include "unwind/sframe.h"
#include "symbols/symbolize.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

#define MAXR 101

int main(int argc, char **argv)
{
	int rounds = 11, nb = 0;
	const char *bins[16];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (nb < 16)
			bins[nb++] = argv[i];
	}
	if (rounds < 1 || rounds > MAXR || !nb) {
		fprintf(stderr, "usage: go_pclntab BINARY... [-n ROUNDS<=%d]\n", MAXR);
		return 2;
	}
	printf("%-28s %7s %8s %9s %9s %9s %10s\n", "binary", "funcs", "pclntab", "parse_ms",
	       "names_ms", "rows_ms", "lookup_ns");
	for (int b = 0; b < nb; b++) {
		double tp[MAXR], tn[MAXR], tr[MAXR], tl[MAXR];
		struct elfread *e = elfread__open(bins[b]);
		struct elfread_section sec;
		struct gopclntab t;
		uint64_t nrows = 0;
		volatile uint64_t sink = 0;

		if (!e || go_runtime__open(e, &t)) {
			fprintf(stderr, "%s: not a Go 1.18+ binary\n", bins[b]);
			return 1;
		}
		elfread__section(e, ".gopclntab", &sec);
		for (int r = 0; r < rounds; r++) {
			struct sframe_encode_opts o = { .version = 3,
							.abi = SFRAME_ABI_AMD64_LE,
							.fixed_ra_offset = -8 };
			struct sframe_table *st = NULL;
			struct symtab *s = symtab__new(1);
			struct sframe_row row;
			struct sframe_func fn;
			double t0 = now();
			uint64_t span = t.text_end - t.text, x = 88172645463325252ull;

			go_runtime__open(e, &t);
			tp[r] = now() - t0;
			t0 = now();
			go_runtime__add_symbols(s, e);
			symtab__finish(s);
			tn[r] = now() - t0;
			symtab__free(s);
			t0 = now();
			if (go_runtime__derive_table(&t, &o, &st)) {
				fprintf(stderr, "%s: derive failed\n", bins[b]);
				return 1;
			}
			tr[r] = now() - t0;
			sframe_table__free(st);
			t0 = now();
			for (int i = 0; i < 1000000; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				sink += (uint64_t)go_runtime__special_row(&t, t.text + x % span,
									  &row, &fn);
			}
			tl[r] = (now() - t0) / 1e6;
		}
		(void)sink;
		(void)nrows;
		printf("%-28s %7llu %7zuK %9.3f %9.3f %9.3f %10.1f\n", bins[b],
		       (unsigned long long)t.nfunc, (size_t)(sec.size >> 10), 1e3 * median(tp, rounds),
		       1e3 * median(tn, rounds), 1e3 * median(tr, rounds), 1e9 * median(tl, rounds));
		elfread__free(e);
	}
	return 0;
}
