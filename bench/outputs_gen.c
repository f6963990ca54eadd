// SPDX-License-Identifier: MIT
/*
 * Synthetic profile for the output benchmarks (bench/outputs.sh): a random
 * call graph of NFUNCS functions, walked from main() to random depths
 * until N distinct stacks exist, with skewed (Zipf-like) weights, so the
 * stacks share prefixes the way a real program's do. Deterministic (fixed
 * seed). Then writes one format and prints how long that took.
 *
 *   outputs_gen [-n STACKS] [-e cpu|futex] -f folded|svg|pprof -o PATH
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "output/output.h"
#include "profile/profile.h"

#define NFUNCS 6000
#define FANOUT 6
#define MAXDEPTH 48

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	static char names[NFUNCS][64];
	static uint32_t callees[NFUNCS][FANOUT];
	struct profile_frame frames[MAXDEPTH];
	const char *out = NULL, *fmt = "folded", *ev = "cpu";
	size_t want = 100000;
	struct profile *p;
	double t0, t1, t2, c0, c1, c2;
	long rss_built;
	int c, f, err;

	while ((c = getopt(argc, argv, "n:f:o:e:")) != -1) {
		switch (c) {
		case 'n': want = strtoull(optarg, NULL, 10); break;
		case 'f': fmt = optarg; break;
		case 'o': out = optarg; break;
		case 'e': ev = optarg; break;
		default: return 2;
		}
	}
	f = profile_format__parse(fmt);
	if (f < 0 || !out) {
		fprintf(stderr, "usage: outputs_gen [-n STACKS] [-e cpu|futex] -f folded|svg|pprof -o PATH\n");
		return 2;
	}
	static const char *const ns[] = { "app", "net", "db", "std", "util", "core", "io", "json" };
	for (int i = 0; i < NFUNCS; i++) {
		snprintf(names[i], sizeof(names[i]), "%s::%s_%d", ns[i % 8],
			 i % 3 ? "handle" : "compute", i);
		for (int k = 0; k < FANOUT; k++)
			callees[i][k] = (uint32_t)(next_rand() % NFUNCS);
	}
	struct profile_meta m = { .kind = strcmp(ev, "futex") ? PROFILE_CPU : PROFILE_FUTEX,
				  .hz = 999, .target_pid = 4242, .target_comm = "synthetic",
				  .target_cmdline = "./synthetic --threads 8", .duration_ns = 60000000000ull };

	t0 = now_s();
	c0 = cpu_s();
	p = profile__new(&m);
	if (!p)
		return 1;
	while (profile__nr_stacks(p) < want) {
		uint32_t fn = 0, depth = 6 + (uint32_t)(next_rand() % (MAXDEPTH - 6));
		uint64_t r = next_rand(), w;

		for (uint32_t d = 0; d < depth; d++) {
			frames[d] = (struct profile_frame){ .name = names[fn], .dso = "/usr/bin/synthetic",
							    .build_id = "0123456789abcdef0123456789abcdef01234567",
							    .rel_addr = 0x1000 + fn * 64ull + (d == depth - 1 ? r % 64 : 8) };
			/* callee choice skewed to the first ones: shared prefixes */
			uint64_t x = next_rand() % 100;
			fn = callees[fn][x < 50 ? 0 : x < 75 ? 1 : x < 88 ? 2 : 3 + x % 3];
		}
		w = 1 + 1000 / (1 + next_rand() % 1000); /* Zipf-like: many 1s, a few large */
		if (m.kind == PROFILE_FUTEX)
			w *= 10000 + next_rand() % 1000000;
		err = profile__add(p, r % 8 ? "synthetic" : "synthetic-io", frames, depth, w);
		if (err) {
			fprintf(stderr, "profile__add: %s\n", strerror(-err));
			return 1;
		}
	}
	t1 = now_s();
	rss_built = maxrss_kb();
	c1 = cpu_s();
	err = profile__write(p, (enum profile_format)f, out);
	t2 = now_s();
	c2 = cpu_s();
	if (err) {
		fprintf(stderr, "profile__write: %s\n", strerror(-err));
		return 1;
	}
	printf("format=%s stacks=%zu events=%" PRIu64 " build_s=%.3f build_cpu_s=%.3f write_s=%.3f write_cpu_s=%.3f "
	       "rss_after_build_kb=%ld peak_rss_kb=%ld\n",
	       fmt, profile__nr_stacks(p), profile__nr_events(p), t1 - t0, c1 - c0, t2 - t1, c2 - c1, rss_built,
	       maxrss_kb());
	profile__free(p);
	return 0;
}
