// SPDX-License-Identifier: MIT
/*
 * jitdump parse speed: read a jit-PID.dump as sfprof follows it
 * (jitdump__read_fd: headers and names read, code bytes stepped over),
 * then look up every entry's start. Prints the median of N runs.
 * Usage: jitdump_bench FILE [RUNS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/jit/jitdump.h"
#include "runtimes/jit/perfmap.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 11, fd;
	double t[101], tl[101];
	struct jitdump_stats st = { 0 };
	struct stat sb;
	size_t entries = 0;

	if (argc < 2 || runs < 1 || runs > 101) {
		fprintf(stderr, "usage: jitdump_bench FILE [RUNS <= 101]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &sb)) {
		perror(argv[1]);
		return 1;
	}
	for (int r = 0; r < runs; r++) {
		struct perfmap *m = perfmap__new();
		struct jitdump *d = jitdump__new(m);
		const char *name;
		double t0 = now();
		int err = jitdump__read_fd(d, fd, 1ull << 32);
		volatile size_t hits = 0;

		t[r] = now() - t0;
		if (err) {
			fprintf(stderr, "jitdump_bench: %s: error %d (%s)\n", argv[1], err,
				jitdump__error(d) ? jitdump__error(d) : "");
			return 1;
		}
		jitdump__stats(d, &st);
		entries = perfmap__nr(m);
		/* lookups: a sweep over the code's address range, 1M probes */
		t0 = now();
		for (uint64_t a = 0; a < 1000000; a++)
			hits += !perfmap__lookup(m, 0x100000000ull + a * 4096, &name, NULL);
		tl[r] = now() - t0;
		jitdump__free(d);
		perfmap__free(m);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp);
	qsort(tl, (size_t)runs, sizeof(*tl), cmp);
	printf("%s: %.1f MiB, %llu loads, %llu moves, %llu debug lines, %llu unwinding infos, "
	       "%zu entries\n", argv[1], sb.st_size / 1048576.0, (unsigned long long)st.loads,
	       (unsigned long long)st.moves, (unsigned long long)st.lines,
	       (unsigned long long)st.unwinding_infos, entries);
	printf("read+parse: median %.2f ms of %d runs (%.0f MiB/s, %.0f ns/record)\n",
	       t[runs / 2] * 1e3, runs, sb.st_size / 1048576.0 / t[runs / 2],
	       t[runs / 2] * 1e9 / (double)(st.loads + st.unwinding_infos + st.moves + 1));
	printf("lookup: median %.1f ns (1M probes)\n", tl[runs / 2] * 1e3);
	return 0;
}
