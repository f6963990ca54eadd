// SPDX-License-Identifier: MIT
/*
 * Address-space model and symbolizer costs, on this process's own libc:
 *
 *   symbolize_bench [LIB_SUBSTRING] [SECONDS]
 *
 *  - dso load, cold cache: a new proc cache each round (the file itself is
 *    in the page cache after the first round): maps read + open/identify
 *    every executable mapping, then the libc symbol table (with its debug
 *    file when one is installed) and its SFrame table (own or derived from
 *    .eh_frame). Median of 11 rounds.
 *  - proc__symbolize() lookups per second, warm: PCs uniform over libc's
 *    executable mapping, and PCs drawn from a fixed set of 512 (as the
 *    frames of real stacks repeat).
 *  - proc__find_row() lookups per second, warm, same two patterns.
 * All times are this thread's CPU time (see now()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "model/proc.h"
#include "model/procmaps.h"
#include "symbols/symbolize.h"

/*
 * Thread CPU time: the machine is shared (load average often 5x the core
 * count), and wall time would measure the neighbours. Cold loads include
 * no disk I/O here (files are in the page cache after the first round).
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Drop a file's unmapped pages from the page cache. */
static void evict(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 11

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "libc.so.6";
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	double t_maps[ROUNDS], t_sym[ROUNDS], t_tab[ROUNDS], t_all[ROUNDS];
	struct procmaps *pm = NULL;
	uint64_t lo = 0, hi = 0, *set;
	const char *tab_src = "?";
	unsigned sources = 0;
	size_t i, nsyms = 0;
	int r;

	if (procmaps__read(getpid(), &pm))
		return 1;
	for (i = 0; i < pm->nr; i++) {
		const struct procmaps_entry *e = &pm->entries[i];

		if ((e->prot & PROCMAPS_PROT_EXEC) && strstr(e->path, lib)) {
			lo = e->start;
			hi = e->end;
			printf("library: %s [%llx-%llx)\n", e->path,
			       (unsigned long long)lo, (unsigned long long)hi);
			break;
		}
	}
	procmaps__free(pm);
	if (!lo) {
		fprintf(stderr, "%s is not mapped here\n", lib);
		return 1;
	}

	for (r = 0; r < ROUNDS; r++) {
		struct proc_cache *pc = proc_cache__new(
			&(struct proc_cache_opts){ .quiet = 1 });
		struct sym_result res;
		struct sframe_row row;
		struct proc *p;
		double t0, t1, t2, t3;

		t0 = now();
		p = proc_cache__get(pc, getpid());
		t1 = now();
		proc__symbolize(p, lo + 0x100, &res); /* loads symbols */
		t2 = now();
		proc__find_row(p, lo + 0x100, &row, NULL, NULL); /* table */
		t3 = now();
		t_maps[r] = t1 - t0;
		t_sym[r] = t2 - t1;
		t_tab[r] = t3 - t2;
		t_all[r] = t3 - t0;
		if (r == 0) {
			struct proc_stats st;

			proc_cache__stats(pc, &st);
			printf("dsos loaded per round: %llu, tables own %llu "
			       "derived %llu\n",
			       (unsigned long long)st.dso.loads,
			       (unsigned long long)st.dso.tables_own,
			       (unsigned long long)st.dso.tables_derived);
			tab_src = st.dso.tables_derived ? "derived from .eh_frame"
							: "own .sframe";
		}
		proc_cache__free(pc);
	}
	qsort(t_maps, ROUNDS, sizeof(double), cmp_double);
	qsort(t_sym, ROUNDS, sizeof(double), cmp_double);
	qsort(t_tab, ROUNDS, sizeof(double), cmp_double);
	qsort(t_all, ROUNDS, sizeof(double), cmp_double);

	{
		/* Symbol sources and count, from a standalone load. */
		struct dso_cache *dc = dso_cache__new(NULL);
		struct procmaps *m2 = NULL;
		struct dso *d = NULL;

		procmaps__read(getpid(), &m2);
		for (i = 0; m2 && i < m2->nr; i++)
			if ((m2->entries[i].prot & PROCMAPS_PROT_EXEC) &&
			    strstr(m2->entries[i].path, lib)) {
				d = dso_cache__open_path(dc, m2->entries[i].path);
				break;
			}
		if (d && dso__symtab(d)) {
			sources = symtab__sources(dso__symtab(d));
			nsyms = symtab__nr(dso__symtab(d));
		}
		procmaps__free(m2);
		dso_cache__free(dc);
	}
	printf("cold load (median of %d): maps+open %.2f ms, symbols %.2f ms "
	       "(%zu functions, sources 0x%x), SFrame %.2f ms (%s), total %.2f ms\n",
	       ROUNDS, t_maps[ROUNDS / 2] * 1e3, t_sym[ROUNDS / 2] * 1e3, nsyms,
	       sources, t_tab[ROUNDS / 2] * 1e3, tab_src,
	       t_all[ROUNDS / 2] * 1e3);

	{
		/* Symbols again with the separate debug file read from disk. */
		char dbg[PATH_MAX], libpath[PATH_MAX] = "";
		struct procmaps *m2 = NULL;
		double tw[5];
		unsigned how;

		procmaps__read(getpid(), &m2);
		for (i = 0; m2 && i < m2->nr; i++)
			if ((m2->entries[i].prot & PROCMAPS_PROT_EXEC) &&
			    strstr(m2->entries[i].path, lib)) {
				snprintf(libpath, sizeof(libpath), "%s",
					 m2->entries[i].path);
				break;
			}
		procmaps__free(m2);
		struct elfread *e = elfread__open(libpath);

		if (e && !symbolize__find_debug_file(e, libpath, NULL, dbg,
						     sizeof(dbg), &how)) {
			for (r = 0; r < 5; r++) {
				struct dso_cache *dc = dso_cache__new(NULL);
				struct dso *d;
				double t0;

				evict(dbg);
				d = dso_cache__open_path(dc, libpath);
				t0 = wall();
				if (d)
					dso__symtab(d);
				tw[r] = wall() - t0;
				dso_cache__free(dc);
			}
			qsort(tw, 5, sizeof(double), cmp_double);
			printf("symbols with %s evicted from the page cache "
			       "(wall, median of 5): %.2f ms\n",
			       dbg, tw[2] * 1e3);
		}
		elfread__free(e);
	}

	set = malloc(512 * sizeof(*set));
	for (i = 0; i < 512; i++)
		set[i] = lo + rnd() % (hi - lo);
	{
		struct proc_cache *pc = proc_cache__new(
			&(struct proc_cache_opts){ .quiet = 1 });
		struct proc *p = proc_cache__get(pc, getpid());
		const char *pat[2] = { "uniform", "512-PC set" };
		int k;

		for (k = 0; k < 2; k++) {
			struct sym_result res;
			struct sframe_row row;
			uint64_t n = 0, hits = 0, rows = 0;
			double t0, t;

			/* warm */
			for (i = 0; i < 512; i++)
				proc__symbolize(p, set[i], &res);
			t0 = now();
			do {
				for (i = 0; i < 4096; i++) {
					uint64_t a = k ? set[rnd() & 511]
						       : lo + rnd() % (hi - lo);

					hits += proc__symbolize(p, a, &res) == 0 &&
						res.name;
				}
				n += 4096;
				t = now() - t0;
			} while (t < secs);
			printf("proc__symbolize %-10s: %.2f M lookups/s "
			       "(%.0f ns each, %.1f%% named)\n",
			       pat[k], n / t / 1e6, t / n * 1e9,
			       100.0 * hits / n);
			n = 0;
			t0 = now();
			do {
				for (i = 0; i < 4096; i++) {
					uint64_t a = k ? set[rnd() & 511]
						       : lo + rnd() % (hi - lo);

					rows += proc__find_row(p, a, &row, NULL,
							       NULL) == 0;
				}
				n += 4096;
				t = now() - t0;
			} while (t < secs);
			printf("proc__find_row  %-10s: %.2f M lookups/s "
			       "(%.0f ns each, %.1f%% with a row)\n",
			       pat[k], n / t / 1e6, t / n * 1e9,
			       100.0 * rows / n);
		}
		proc_cache__free(pc);
	}
	free(set);
	return 0;
}
