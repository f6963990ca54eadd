// SPDX-License-Identifier: MIT
/*
 * Cost of naming CPython code objects (pyreader.h) in a live
 * /usr/bin/python3.11 holding every code object of a few stdlib packages:
 * cold (decode: names, file, line table), warm re-validated hits (one
 * process_vm_readv each), warm trusted hits. Thread CPU time, medians of
 * `rounds`. Usage: pycode_bench [rounds]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyreader.h"

#define PY311 "/usr/bin/python3.11"
#define MAX_CODES 200000

static const char child_py[] =
	"import sys, gc, types, json, asyncio, email, http.client, unittest, argparse\n"
	"cs = [o for o in gc.get_objects() if isinstance(o, types.FunctionType)]\n"
	"codes = {id(f.__code__): f.__code__ for f in cs}\n"
	"print(len(codes))\n"
	"for k in codes: print(k)\n"
	"sys.stdout.flush()\n"
	"sys.stdin.read()\n";

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, in[2], out[2];
	static uint64_t codes[MAX_CODES];
	const struct pyoffsets *o;
	size_t n = 0, total;
	pid_t pid;

	if (rounds < 1 || rounds > 101 || pyoffsets_for_version(3, 11, &o) < 0 ||
	    pipe(in) < 0 || pipe(out) < 0)
		return 2;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(PY311, PY311, "-c", child_py, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	if (!f || fscanf(f, "%zu", &total) != 1)
		return 1;
	while (n < total && n < MAX_CODES && fscanf(f, "%" SCNu64, &codes[n]) == 1)
		n++;
	double cold[101], warm[101], trusted[101], tick[101];
	size_t named = 0;
	for (int r = 0; r < rounds; r++) {
		struct pyreader *rd = pyreader__new((unsigned)n + 1, 0);
		struct pyreader *tr = pyreader__new((unsigned)n + 1, PYREADER_F_TRUST_CACHE);
		struct pyreader_target t = { .offsets = o };
		struct pycode_frame pf;

		pyreader__add_target(rd, (uint32_t)pid, &t);
		pyreader__add_target(tr, (uint32_t)pid, &t);
		double t0 = cpu_ns();
		named = 0;
		for (size_t i = 0; i < n; i++)
			named += pycode_name(rd, (uint32_t)pid, codes[i], 0, &pf) == 0;
		double t1 = cpu_ns();
		for (size_t i = 0; i < n; i++)
			pycode_name(rd, (uint32_t)pid, codes[i], 4, &pf);
		double t2 = cpu_ns();
		for (size_t i = 0; i < n; i++)
			pycode_name(tr, (uint32_t)pid, codes[i], 0, &pf);
		double t3 = cpu_ns();
		for (size_t i = 0; i < n; i++)
			pycode_name(tr, (uint32_t)pid, codes[i], 4, &pf);
		double t4 = cpu_ns();
		struct pyreader *tk = pyreader__new((unsigned)n + 1, PYREADER_F_VERIFY_PER_TICK);
		pyreader__add_target(tk, (uint32_t)pid, &t);
		for (size_t i = 0; i < n; i++)
			pycode_name(tk, (uint32_t)pid, codes[i], 0, &pf);
		/* 10 lookups of each per tick, as a drain with repeated frames */
		pyreader__tick(tk);
		double t5 = cpu_ns();
		for (int k = 0; k < 10; k++)
			for (size_t i = 0; i < n; i++)
				pycode_name(tk, (uint32_t)pid, codes[i], 4, &pf);
		double t6 = cpu_ns();
		pyreader__free(tk);
		tick[r] = (t6 - t5) / (double)(10 * n);
		cold[r] = (t1 - t0) / (double)n;
		warm[r] = (t2 - t1) / (double)n;
		trusted[r] = (t4 - t3) / (double)n;
		pyreader__free(rd);
		pyreader__free(tr);
	}
	close(in[1]);
	fclose(f);
	waitpid(pid, NULL, 0);
	printf("code objects: %zu, named: %zu, rounds: %d (medians, thread CPU time)\n", n, named,
	       rounds);
	printf("cold decode:            %8.0f ns per code object\n", median(cold, rounds));
	printf("warm hit, re-validated: %8.0f ns\n", median(warm, rounds));
	printf("warm hit, trusted:      %8.0f ns\n", median(trusted, rounds));
	printf("warm hit, per tick (10 hits per tick): %8.0f ns\n", median(tick, rounds));
	return named == n ? 0 : 1;
}
