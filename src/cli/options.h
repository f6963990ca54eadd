/* SPDX-License-Identifier: MIT */
/*
 * sfprof's command line, parsed into struct sfprof_opts. Each subcommand
 * (live, record, report, sframe-dump) has its own option set: one table
 * (src/cli/options_table.c) says, per option, which subcommands take it,
 * which events it has a meaning for, its --help group, text and default.
 * An option outside the subcommand's set, or one with no meaning for the
 * chosen event, is a usage error. The parser is pure: it reads argv,
 * writes opts, and reports a bad option as one line on the given stream.
 *
 *   sfprof [options] (-p PID[,PID...] | -a | --cgroup DIR | -- COMMAND [ARGS...])
 *   sfprof record -o FILE [options] (same targets)
 *   sfprof report [options] FILE      (options may follow FILE)
 *   sfprof sframe-dump [--raw --base ADDR | --from-eh-frame] FILE
 *   sfprof diff [options] BASE NEW   (folded files or captures)
 *
 * Adding an option: one entry in src/cli/options_table.c (a flag names its int
 * field; a value names a setter), plus its field here.
 *
 * Ownership: every pointer in sfprof_opts points into argv (or to a string
 * literal); it lives as long as argv.
 */
#ifndef SFPROF_OPTIONS_H
#define SFPROF_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "output/output.h" /* enum profile_format */

enum sfprof_subcmd {
	SFPROF_CMD_LIVE = 0,
	SFPROF_CMD_RECORD,
	SFPROF_CMD_REPORT,
	SFPROF_CMD_SFRAME_DUMP,
	SFPROF_CMD_DIFF,
	SFPROF_CMD__COUNT,
};

/* sfprof's version; --version adds the build's `git describe`. */
#define SFPROF_VERSION "0.1"

enum sfprof_event_sel {
	SFPROF_SEL_CPU = 1,
	SFPROF_SEL_FUTEX = 2,
	SFPROF_SEL_OFFCPU = 4,
	SFPROF_SEL_WALL = 8, /* cpu + offcpu in one profile of time per thread */
};

enum sfprof_cpu_event {
	SFPROF_CPU_EVENT_AUTO = 0,	/* cycles where there is a PMU, else cpu-clock */
	SFPROF_CPU_EVENT_CYCLES,
	SFPROF_CPU_EVENT_CPU_CLOCK,
};

#define SFPROF_DEFAULT_HZ 99u
#define SFPROF_MAX_HZ 100000u
#define SFPROF_DEFAULT_MIN_WAIT_US 10u
#define SFPROF_DEFAULT_MIN_BLOCK_US 10u
/* -p may list this many processes (repeated -p and comma lists together) */
#define SFPROF_MAX_PIDS 64

struct sfprof_opts {
	enum sfprof_subcmd cmd;
	enum sfprof_event_sel event;	/* -e: one or several SFPROF_SEL_* bits, default cpu */
	uint32_t freq;			/* -F HZ, default 99 */
	enum sfprof_cpu_event cpu_event; /* --cpu-event, default auto */
	uint64_t duration_ns;		/* -d SEC (fractions allowed), 0 = until the end */
	uint64_t interval_ns;		/* --interval SEC: one profile per SEC, 0 = one */
	uint64_t min_wait_us;		/* --min-wait USEC, default 10 */
	uint64_t min_block_us;		/* --min-block USEC (offcpu), default 10 */
	uint32_t offcpu_states;		/* --state S,D,R: enum sfprof_offcpu_state
					   bits, default all */
	int wakers;			/* --wakers (offcpu, futex): join each block to its waker */
	uint32_t stack_size;		/* --stack-size BYTES, default and max 65528 */
	const char *output;		/* -o FILE, NULL = stdout */
	enum profile_format format;	/* -f, AUTO = by -o extension */
	int stats;			/* --stats */
	int kernel;			/* --kernel: add kernel stacks */
	int no_demangle;		/* --no-demangle */
	int full_names;			/* --full-names: C++ signatures */
	int no_inline;			/* --no-inline: no inline frames or lines */
	int no_python;			/* --no-python: native eval frames, no Python ones */
	int no_ruby;			/* --no-ruby: native rb_vm_exec frames, no Ruby ones */
	int no_php;			/* --no-php: native execute_ex frames, no PHP ones */
	int no_v8;			/* --no-v8: node's JIT frames only from a perf map */
	int no_jvm;			/* --no-jvm: a JVM's JIT frames only from a perf map */
	int by_lock;			/* --by-lock (futex) */
	int per_thread;			/* --per-thread: root comm-pid/tid */
	int per_process;		/* --per-process: root comm-pid */
	int quiet;			/* --quiet: no progress line */
	int keep_cmdline;		/* --keep-cmdline: SVG/pprof name all of argv */
	const char *buildid_dir;	/* --buildid-dir DIR, NULL = the default */
	int no_buildid_cache;		/* --no-buildid-cache */
	pid_t pids[SFPROF_MAX_PIDS];	/* -p PID[,PID...] (repeatable), in order given */
	int nr_pids;			/* 0 = no -p */
	int all;			/* -a: every process but sfprof */
	const char *cgroup;		/* --cgroup DIR: a cgroup v2 directory, NULL = none */
	int no_inherit;			/* --no-inherit: descendants are not followed */
	int no_realtime;		/* --no-realtime: the capture keeps the caller's
					   scheduling (src/cli/sched_int.h) */
	char **command;			/* after "--": argv of COMMAND, NULL-terminated */
	int command_argc;
	const char *input;		/* report: the capture FILE */
	const char *dump_events;	/* hidden --dump-events FILE: raw records (tests) */
	uint32_t ring_mb;		/* hidden --ring-mb N: ring buffer size; 0: sfprof_opts__ring_mb() */
	int help;			/* -h/--help or --version: text printed, exit 0 */
	/* added by the per-subcommand option sets */
	int version;			/* --version was given */
	const char *title;		/* --title TEXT: the SVG's title, NULL = by event */
	int inverted;			/* --inverted: SVG icicle, root on top */
	int reverse;			/* --reverse: SVG of stacks merged by leaf */
	/* SVG, flamegraph.pl's (profile_render's; 0 / NULL: defaults) */
	double svg_width;		/* --width PX */
	const char *subtitle;		/* --subtitle TEXT */
	const char *countname;		/* --countname NAME */
	double min_px, min_pct;		/* --minwidth PX or PCT% */
	int palette;			/* --colors PALETTE: enum svg_palette */
	int svg_hash;			/* --hash */
	int flamechart;			/* --flamechart: SVG by time */
	int sframe_raw;			/* sframe-dump --raw */
	const char *sframe_base;	/* sframe-dump --base ADDR (as given) */
	int from_eh_frame;		/* sframe-dump --from-eh-frame */
	const char *diff_base;		/* diff: BASE (folded or capture) */
	int event_given;		/* -e was given (report: else the capture's) */
	uint64_t given[2];		/* bit i: table entry i was given (options_table.c) */
};

/* Exit status for bad command-line input. */
#define SFPROF_EXIT_USAGE 2

/* Defaults for every field (cmd as given). */
void sfprof_opts__init(struct sfprof_opts *o, enum sfprof_subcmd cmd);

/*
 * Parse argv[1..argc) (argv[0] is the program or subcommand name) into
 * o, which sfprof_opts__init prepared. On -h/--help (--version) prints
 * usage (the version) to `out`, sets o->help and returns 0. A bad option
 * or value, an option of another subcommand, or one with no meaning for
 * the event prints one line "sfprof: ..." on `err` and returns -EINVAL.
 * It also checks the operands of the subcommand (for live/record exactly
 * one of -p, -a and COMMAND, or --cgroup alone or with -a; one FILE for
 * report and sframe-dump; BASE NEW for diff) and that record's -o names
 * a capture, but not whether the PIDs, the cgroup or the files exist.
 * live and record stop at the first operand (COMMAND keeps its options);
 * the others permute, so options may follow FILE.
 */
int sfprof_opts__parse(struct sfprof_opts *o, int argc, char **argv,
		       FILE *out, FILE *err);

/* Usage text for cmd: only its options, grouped, with defaults. */
void sfprof_opts__usage(enum sfprof_subcmd cmd, FILE *f);

/*
 * Check every given option against the chosen event(s) (o->event): one
 * that has no meaning for it is one line on err and -EINVAL. parse runs
 * it for live and record; report runs it once the capture says what it
 * holds (when -e was not given).
 */
int sfprof_opts__check_events(const struct sfprof_opts *o, FILE *err);

/*
 * Before anything starts: can o->output be written (profile__check_output)?
 * 0, or -errno after one line on err naming the path and what is wrong.
 */
int sfprof_opts__check_output(const struct sfprof_opts *o, FILE *err);

/*
 * The BPF ring buffer's size in MiB: --ring-mb, else 16 for a run that
 * ends, and 4 for one that does not (--interval, the agent). The ring's
 * data pages are mapped twice, so a 16 MiB ring is 34.8 MiB of the
 * process's RSS once it has wrapped, a third of the always-on mode's
 * 100 MB; 4 MiB lost nothing at 99 Hz plus 1,900 off-CPU events a second
 * on two CPUs under churn (BENCHMARKS.md, agent memory).
 */
uint32_t sfprof_opts__ring_mb(const struct sfprof_opts *o);

/* "cpu", "futex": the -e name of one event bit. */
const char *sfprof_event__name(unsigned sel);

/* "sfprof 0.1 (git DESCRIBE)\n" */
void sfprof_opts__print_version(FILE *f);

#endif
