// SPDX-License-Identifier: MIT
/*
 * What the kernel's verifier costs each capture program at start-up
 * (BENCHMARKS.md, "Start-up: the verifier"): the program's instructions,
 * the instructions the verifier processed (its "processed N insns"), its
 * own "verification time", and the wall time of loading the object,
 * RUNS loads of each object, medians.
 *
 * The objects are opened from their skeletons and configured as a plain
 * `sfprof -- COMMAND` run configures them (capture.c: Python, Ruby and
 * PHP walks on, the direct copy, a 16 MiB ring), `-a` when ALL=1, a walk
 * off when NO_PY, NO_RB or NO_PHP is set. Each is
 * loaded on its own (its own maps, not the task object's shared ones).
 *   build/bench/verifier_cost [RUNS]     (bench/verifier_cost.sh builds it)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "sfprof_event.h"
#include "cpu.skel.h"
#include "offcpu.skel.h"
#include "futex.skel.h"
#include "task.skel.h"

#define RUNS_MAX 64
#define LOG_SIZE (1 << 26)

static char log_buf[LOG_SIZE];

struct prog_cost {
	long insns, processed, verify_us;
};

static void config(struct sfprof_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scope_all = getenv("ALL") && atoi(getenv("ALL"));
	cfg->self_tgid = (__u32)getpid();
	cfg->inherit = 1;
	cfg->stack_size = SFPROF_STACK_DEFAULT;
	cfg->offcpu_states = SFPROF_OFFCPU_ALL;
	cfg->rt_walk = SFPROF_RT_GO | (getenv("NO_PY") ? 0 : SFPROF_RT_PYTHON) |
		       (getenv("NO_RB") ? 0 : SFPROF_RT_RUBY) | (getenv("NO_PHP") ? 0 : SFPROF_RT_PHP);
	cfg->wakeup_bytes = 8u << 20;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void parse_log(const char *log, struct prog_cost *pc)
{
	const char *p = strstr(log, "processed ");
	const char *t = strstr(log, "verification time ");

	pc->processed = p ? strtol(p + 10, NULL, 10) : -1;
	pc->verify_us = t ? strtol(t + 18, NULL, 10) : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* One object: open, configure, log level 4 (statistics) on every
 * program, load; the per-program costs and the load's wall time. */
#define LOAD_ONE(NAME, PROGS, NPROGS, COST, MS)                                       \
	do {                                                                        \
		struct NAME##_bpf *s = NAME##_bpf__open();                          \
		struct bpf_program *pr;                                             \
		double t0;                                                          \
		int i_ = 0;                                                         \
		if (!s)                                                             \
			return -errno;                                              \
		config((struct sfprof_config *)&s->rodata->cfg);                    \
		bpf_object__for_each_program(pr, s->obj) {                          \
			if (!bpf_program__autoload(pr))                             \
				continue;                                           \
			bpf_program__set_log_level(pr, getenv("LOG_LEVEL") ? atoi(getenv("LOG_LEVEL")) : 4);                        \
			bpf_program__set_log_buf(pr, log_buf + i_ * (LOG_SIZE / 8),  \
						 LOG_SIZE / 8);                     \
			PROGS[i_++] = pr;                                           \
		}                                                                   \
		NPROGS = i_;                                                        \
		t0 = now_ms();                                                      \
		if (NAME##_bpf__load(s)) {                                          \
			fprintf(stderr, "verifier_cost: loading %s failed\n", #NAME); \
			if (getenv("SHOW_LOG"))                                     \
				fputs(log_buf, stderr);                              \
			NAME##_bpf__destroy(s);                                     \
			return -1;                                                  \
		}                                                                   \
		MS = now_ms() - t0;                                                 \
		for (i_ = 0; i_ < NPROGS; i_++) {                                   \
			COST[i_].insns = bpf_program__insn_cnt(PROGS[i_]);          \
			parse_log(log_buf + i_ * (LOG_SIZE / 8), &COST[i_]);         \
			if (getenv("SHOW_LOG"))                                     \
				fputs(log_buf + i_ * (LOG_SIZE / 8), stderr);       \
			snprintf(names[i_], sizeof(names[i_]), "%s",                \
				 bpf_program__name(PROGS[i_]));                     \
		}                                                                   \
		NAME##_bpf__destroy(s);                                             \
	} while (0)

static char names[8][64];

static int load(const char *obj, struct prog_cost *cost, int *nprogs, double *ms)
{
	struct bpf_program *progs[8];

	memset(log_buf, 0, sizeof(log_buf));
	if (!strcmp(obj, "cpu"))
		LOAD_ONE(cpu, progs, *nprogs, cost, *ms);
	else if (!strcmp(obj, "offcpu"))
		LOAD_ONE(offcpu, progs, *nprogs, cost, *ms);
	else if (!strcmp(obj, "futex"))
		LOAD_ONE(futex, progs, *nprogs, cost, *ms);
	else
		LOAD_ONE(task, progs, *nprogs, cost, *ms);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *objs[] = { "task", "cpu", "offcpu", "futex" };
	int runs = argc > 1 ? atoi(argv[1]) : 5;
	unsigned o;

	if (runs < 1 || runs > RUNS_MAX) {
		fprintf(stderr, "verifier_cost: RUNS 1..%d\n", RUNS_MAX);
		return 2;
	}
	libbpf_set_print(quiet);
	printf("| object | program | insns | verified insns | verification time | object load (wall) |\n");
	printf("|---|---|---:|---:|---:|---:|\n");
	for (o = 0; o < sizeof(objs) / sizeof(objs[0]); o++) {
		struct prog_cost cost[RUNS_MAX][8];
		double ms[RUNS_MAX];
		int n = 0, r, p;

		for (r = 0; r < runs; r++)
			if (load(objs[o], cost[r], &n, &ms[r]))
				return 1;
		qsort(ms, runs, sizeof(ms[0]), cmp_double);
		for (p = 0; p < n; p++) {
			long us[RUNS_MAX];

			for (r = 0; r < runs; r++)
				us[r] = cost[r][p].verify_us;
			qsort(us, runs, sizeof(us[0]), cmp_long);
			printf("| %s | %s | %ld | %ld | %.1f ms | %s |\n", objs[o], names[p],
			       cost[0][p].insns, cost[0][p].processed, us[runs / 2] / 1e3,
			       p ? "" : (snprintf(log_buf, 64, "%.0f ms", ms[runs / 2]), log_buf));
		}
	}
	printf("(medians of %d loads; ALL=%s)\n", runs, getenv("ALL") ? getenv("ALL") : "0");
	return 0;
}
