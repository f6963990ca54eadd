/* SPDX-License-Identifier: MIT */
/*
 * sfprof's command line, parsed once into struct sfprof_opts for every
 * subcommand (live, record, report). The parser is pure: it reads argv,
 * writes opts, and reports a bad option as one line on the given stream.
 *
 *   sfprof [-e cpu|futex] [-F HZ] [-d SEC] [--min-wait USEC]
 *          [--stack-size BYTES] [-o FILE] [-f folded|svg|pprof] [--stats]
 *          [--kernel] [--no-demangle] [--by-lock] [--per-thread|--per-process]
 *          [--quiet] [--no-inherit] [--cgroup DIR]
 *          (-p PID[,PID...] | -a | --cgroup DIR | -- COMMAND [ARGS...])
 *   sfprof record -o FILE [same options] (same targets)
 *   sfprof report [-e ...] [-o OUT] [-f ...] [--stats] ... FILE
 *
 * Ownership: every pointer in sfprof_opts points into argv (or to a string
 * literal); it lives as long as argv.
 */
#ifndef SFPROF_OPTIONS_H
#define SFPROF_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "profile.h" /* enum profile_format */

enum sfprof_subcmd {
	SFPROF_CMD_LIVE = 0,
	SFPROF_CMD_RECORD,
	SFPROF_CMD_REPORT,
};

enum sfprof_event_sel {
	SFPROF_SEL_CPU = 1,
	SFPROF_SEL_FUTEX = 2,
};

enum sfprof_cpu_event {
	SFPROF_CPU_EVENT_AUTO = 0,	/* cycles where there is a PMU, else cpu-clock */
	SFPROF_CPU_EVENT_CYCLES,
	SFPROF_CPU_EVENT_CPU_CLOCK,
};

#define SFPROF_DEFAULT_HZ 99u
#define SFPROF_MAX_HZ 100000u
#define SFPROF_DEFAULT_MIN_WAIT_US 10u
/* -p may list this many processes (repeated -p and comma lists together) */
#define SFPROF_MAX_PIDS 64

struct sfprof_opts {
	enum sfprof_subcmd cmd;
	enum sfprof_event_sel event;	/* -e, default cpu */
	uint32_t freq;			/* -F HZ, default 99 */
	enum sfprof_cpu_event cpu_event; /* --cpu-event, default auto */
	uint64_t duration_ns;		/* -d SEC (fractions allowed), 0 = until the end */
	uint64_t interval_ns;		/* --interval SEC: one profile per SEC, 0 = one */
	uint64_t min_wait_us;		/* --min-wait USEC, default 10 */
	uint32_t stack_size;		/* --stack-size BYTES, default and max 65528 */
	const char *output;		/* -o FILE, NULL = stdout */
	enum profile_format format;	/* -f, AUTO = by -o extension */
	int stats;			/* --stats */
	int kernel;			/* --kernel: add kernel stacks */
	int no_demangle;		/* --no-demangle */
	int by_lock;			/* --by-lock (futex) */
	int per_thread;			/* --per-thread: root comm-pid/tid */
	int per_process;		/* --per-process: root comm-pid */
	int quiet;			/* --quiet: no progress line */
	pid_t pids[SFPROF_MAX_PIDS];	/* -p PID[,PID...] (repeatable), in order given */
	int nr_pids;			/* 0 = no -p */
	int all;			/* -a: every process but sfprof */
	const char *cgroup;		/* --cgroup DIR: a cgroup v2 directory, NULL = none */
	int no_inherit;			/* --no-inherit: descendants are not followed */
	char **command;			/* after "--": argv of COMMAND, NULL-terminated */
	int command_argc;
	const char *input;		/* report: the capture FILE */
	const char *dump_events;	/* hidden --dump-events FILE: raw records (tests) */
	uint32_t ring_mb;		/* hidden --ring-mb N: ring buffer size, default 16 */
	int help;			/* -h/--help was given: usage printed, exit 0 */
};

/* Exit status for bad command-line input. */
#define SFPROF_EXIT_USAGE 2

/* Defaults for every field (cmd as given). */
void sfprof_opts__init(struct sfprof_opts *o, enum sfprof_subcmd cmd);

/*
 * Parse argv[1..argc) (argv[0] is the program or subcommand name) into
 * o, which sfprof_opts__init prepared. On -h/--help prints usage to
 * `out`, sets o->help and returns 0. A bad option or value prints one line
 * "sfprof: ..." on `err` and returns -EINVAL. It also checks the target
 * rules of the subcommand (for live/record exactly one of -p, -a and
 * COMMAND, or --cgroup alone or with -a; one FILE for report) but not
 * whether the PIDs or the cgroup exist.
 */
int sfprof_opts__parse(struct sfprof_opts *o, int argc, char **argv,
		       FILE *out, FILE *err);

/* Usage text for o->cmd. */
void sfprof_opts__usage(enum sfprof_subcmd cmd, FILE *f);

#endif
