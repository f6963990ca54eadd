// SPDX-License-Identifier: MIT
/*
 * Every option of every subcommand: which subcommands take it, what it
 * means for which event, its --help line and default, and how its value
 * is parsed. src/cli/options.c builds getopt's tables from this one.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options_int.h"
#include "profile/profile.h"
#include "sfprof_event.h"

#ifndef SFPROF_GIT_DESCRIBE
#define SFPROF_GIT_DESCRIBE "unknown"
#endif

#define BAD(...)                                                               \
	do {                                                                   \
		fprintf(err, "sfprof: " __VA_ARGS__);                          \
		fputc('\n', err);                                              \
		return -EINVAL;                                                \
	} while (0)

/* Whole-string unsigned decimal in [min, max]; 0 or -EINVAL. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

#define SECONDS_MAX 1e7 /* 115 days: a longer run is a mistake */

static int parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > SECONDS_MAX)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9);
	return *ns ? 0 : -EINVAL;
}

const char *sfprof_event__name(unsigned sel)
{
	switch (sel) {
	case SFPROF_SEL_CPU: return "cpu";
	case SFPROF_SEL_FUTEX: return "futex";
	case SFPROF_SEL_OFFCPU: return "offcpu";
	case SFPROF_SEL_WALL: return "wall";
	}
	return "?";
}

/* -e cpu,futex,offcpu: one event or several (wall alone). */
static int set_event(struct sfprof_opts *o, const char *arg, FILE *err)
{
	static const unsigned all[] = { SFPROF_SEL_CPU, SFPROF_SEL_FUTEX, SFPROF_SEL_OFFCPU,
					SFPROF_SEL_WALL };
	const char *p = arg;
	unsigned mask = 0;

	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if (strlen(sfprof_event__name(all[i])) == len &&
			    !strncmp(p, sfprof_event__name(all[i]), len))
				break;
		if (i == sizeof(all) / sizeof(all[0]))
			BAD("-e: unknown event in '%s' (expected cpu, futex, offcpu or wall, or a "
			    "comma-separated list of them)", arg);
		mask |= all[i];
		p += len;
		if (*p == ',' && !*++p)
			BAD("-e: '%s' ends with a comma", arg);
	}
	if (!mask)
		BAD("-e: no event in '%s'", arg);
	/* -e cpu -e futex is -e cpu,futex, as perf's -e adds events */
	if (o->event_given)
		mask |= (unsigned)o->event;
	if ((mask & SFPROF_SEL_WALL) && mask != SFPROF_SEL_WALL)
		BAD("-e wall is on-CPU and off-CPU time in one profile: give it alone");
	o->event = (enum sfprof_event_sel)mask;
	o->event_given = 1;
	return 0;
}

static int set_min_block(struct sfprof_opts *o, const char *arg, FILE *err)
{
	uint64_t v;

	if (parse_u64(arg, 0, UINT64_MAX / 1000, &v))
		BAD("--min-block: expected microseconds (an integer from 0 to %" PRIu64 "), got '%s'",
		    UINT64_MAX / 1000, arg);
	o->min_block_us = v;
	return 0;
}

/* --state S,D,R: a comma-separated list of state letters. */
static int set_states(struct sfprof_opts *o, const char *arg, FILE *err)
{
	const char *p = arg;
	uint32_t mask = 0;

	for (;;) {
		if (p[0] == 'S' && (p[1] == ',' || !p[1]))
			mask |= SFPROF_OFFCPU_S;
		else if (p[0] == 'D' && (p[1] == ',' || !p[1]))
			mask |= SFPROF_OFFCPU_D;
		else if (p[0] == 'R' && (p[1] == ',' || !p[1]))
			mask |= SFPROF_OFFCPU_R;
		else
			BAD("--state: expected a comma-separated list of S, D and R, got '%s'", arg);
		if (!p[1])
			break;
		p += 2;
	}
	o->offcpu_states = mask;
	return 0;
}

#define SFPROF_STACK_MIN 512u

static int set_freq(struct sfprof_opts *o, const char *arg, FILE *err)
{
	uint64_t v;

	if (parse_u64(arg, 1, SFPROF_MAX_HZ, &v))
		BAD("-F: frequency must be an integer from 1 to %u, got '%s'", SFPROF_MAX_HZ, arg);
	o->freq = (uint32_t)v;
	return 0;
}

static int set_cpu_event(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!strcmp(arg, "auto"))
		o->cpu_event = SFPROF_CPU_EVENT_AUTO;
	else if (!strcmp(arg, "cycles"))
		o->cpu_event = SFPROF_CPU_EVENT_CYCLES;
	else if (!strcmp(arg, "cpu-clock"))
		o->cpu_event = SFPROF_CPU_EVENT_CPU_CLOCK;
	else
		BAD("--cpu-event: unknown event '%s' (expected auto, cycles or cpu-clock)", arg);
	return 0;
}

static int set_duration(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (parse_seconds(arg, &o->duration_ns))
		BAD("-d: duration must be a number of seconds above 0 and at most %.0f "
		    "(115 days), got '%s'", SECONDS_MAX, arg);
	return 0;
}

static int set_interval(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (parse_seconds(arg, &o->interval_ns) || o->interval_ns < 500000000ull)
		BAD("--interval: expected seconds from 0.5 to %.0f, got '%s'", SECONDS_MAX, arg);
	return 0;
}

static int set_min_wait(struct sfprof_opts *o, const char *arg, FILE *err)
{
	uint64_t v;

	if (parse_u64(arg, 0, UINT64_MAX / 1000, &v))
		BAD("--min-wait: expected microseconds (an integer from 0 to %" PRIu64 "), got '%s'",
		    UINT64_MAX / 1000, arg);
	o->min_wait_us = v;
	return 0;
}

static int set_stack_size(struct sfprof_opts *o, const char *arg, FILE *err)
{
	uint64_t v;

	/* below a few frames' worth every stack is [truncated] */
	if (parse_u64(arg, SFPROF_STACK_MIN, SFPROF_STACK_MAX, &v))
		BAD("--stack-size: expected bytes from %u to %u, got '%s'", SFPROF_STACK_MIN,
		    SFPROF_STACK_MAX, arg);
	o->stack_size = (uint32_t)v;
	return 0;
}

static int set_output(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!arg[0])
		BAD("-o: empty file name");
	o->output = arg;
	return 0;
}

static int set_format(struct sfprof_opts *o, const char *arg, FILE *err)
{
	int f = profile_format__parse(arg);

	if (f < 0)
		BAD("-f: unknown format '%s' (expected folded, svg or pprof)", arg);
	o->format = (enum profile_format)f;
	return 0;
}

/*
 * "-p 1,2" and "-p 1 -p 2" alike: every PID is appended once, in the
 * order given.
 */
static int set_pids(struct sfprof_opts *o, const char *list, FILE *err)
{
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char buf[24];
		uint64_t v;
		int i;

		if (len == 0 || len >= sizeof(buf))
			BAD("-p: expected process IDs (positive integers, comma-separated), got '%s'",
			    list);
		memcpy(buf, p, len);
		buf[len] = 0;
		if (parse_u64(buf, 1, INT_MAX, &v))
			BAD("-p: expected a process ID (a positive integer), got '%s'", buf);
		for (i = 0; i < o->nr_pids && o->pids[i] != (pid_t)v; i++)
			;
		if (i == o->nr_pids) {
			if (o->nr_pids == SFPROF_MAX_PIDS)
				BAD("-p: at most %d processes (use --cgroup or -a for more)",
				    SFPROF_MAX_PIDS);
			o->pids[o->nr_pids++] = (pid_t)v;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int set_cgroup(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!arg[0])
		BAD("--cgroup: empty directory name");
	o->cgroup = arg;
	return 0;
}

static int set_ring_mb(struct sfprof_opts *o, const char *arg, FILE *err)
{
	uint64_t v;

	if (parse_u64(arg, 1, 1024, &v) || (v & (v - 1)))
		BAD("--ring-mb: expected a power of two from 1 to 1024, got '%s'", arg);
	o->ring_mb = (uint32_t)v;
	return 0;
}

static int set_dump_events(struct sfprof_opts *o, const char *arg, FILE *err)
{
	(void)err;
	o->dump_events = arg;
	return 0;
}

static int set_title(struct sfprof_opts *o, const char *arg, FILE *err)
{
	(void)err;
	o->title = arg;
	return 0;
}

static int set_subtitle(struct sfprof_opts *o, const char *arg, FILE *err)
{
	(void)err;
	o->subtitle = arg;
	return 0;
}

static int set_countname(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!arg[0])
		BAD("--countname: empty name");
	o->countname = arg;
	return 0;
}

/* A number in [lo, hi], all of s (an optional trailing '%' when pct). */
static int parse_real(const char *s, double lo, double hi, int *pct, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (pct && (*pct = *end == '%'))
		end++;
	if (errno || *end || !isfinite(v) || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_svg_width(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (parse_real(arg, 200, 100000, NULL, &o->svg_width))
		BAD("--width: expected pixels from 200 to 100000, got '%s'", arg);
	return 0;
}

static int set_minwidth(struct sfprof_opts *o, const char *arg, FILE *err)
{
	double v;
	int pct = 0;

	if (parse_real(arg, 0.001, 1000, &pct, &v) || (pct && v > 100))
		BAD("--minwidth: expected pixels from 0.001 to 1000, or a share of the total "
		    "from 0.001%% to 100%% (e.g. 0.5%%), got '%s'", arg);
	o->min_px = pct ? 0 : v;
	o->min_pct = pct ? v : 0;
	return 0;
}

static int set_colors(struct sfprof_opts *o, const char *arg, FILE *err)
{
	int pal = svg_palette__parse(arg);

	if (pal < 0)
		BAD("--colors: unknown palette '%s' (expected %s)", arg, svg_palette__names());
	o->palette = pal;
	return 0;
}

static int set_base(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!arg[0])
		BAD("--base: expected an address");
	o->sframe_base = arg;
	return 0;
}

static int set_buildid_dir(struct sfprof_opts *o, const char *arg, FILE *err)
{
	if (!arg[0])
		BAD("--buildid-dir: empty directory name");
	o->buildid_dir = arg;
	return 0;
}

#define FLAG(field) .flag_off = offsetof(struct sfprof_opts, field)
#define SEL_CPU SFPROF_SEL_CPU
#define SEL_FUTEX SFPROF_SEL_FUTEX
#define SEL_OFFCPU (SFPROF_SEL_OFFCPU | SFPROF_SEL_WALL)

const struct sfprof_optdef sfprof_optdefs[] = {
	/* ---- target (live, record) ---- */
	{ "pid", 'p', "PID[,PID...]", OPT_CAPTURING, 0, OPTG_TARGET,
	  "these processes (all their threads); may repeat", NULL, set_pids },
	{ "all", 'a', NULL, OPT_CAPTURING, 0, OPTG_TARGET,
	  "every process on the machine but sfprof", NULL, NULL, FLAG(all) },
	{ "cgroup", 0, "DIR", OPT_CAPTURING, 0, OPTG_TARGET,
	  "the processes of a cgroup v2 directory and its\nchild cgroups (alone or with -a)",
	  NULL, set_cgroup },
	{ "no-inherit", 0, NULL, OPT_CAPTURING, 0, OPTG_TARGET,
	  "do not follow descendants (fork, exec chains)", NULL, NULL, FLAG(no_inherit) },

	/* ---- what to measure ---- */
	{ "event", 'e', "EV[,EV...]", OPT_CAPTURING, 0, OPTG_MEASURE,
	  "what to measure: cpu, futex (lock waits), offcpu\n(time off CPU by stack), or wall "
	  "(on- and\noff-CPU time per thread, alone); several in one\nrun write one -o file each "
	  "(prof.svg ->\nprof.cpu.svg, prof.offcpu.svg)", "cpu", set_event },
	{ "event", 'e', "EV[,EV...]", OPT_REPORT, 0, OPTG_MEASURE,
	  "which events of the capture to report", "all the capture's", set_event },
	{ "freq", 'F', "HZ", OPT_CAPTURING, SEL_CPU | SFPROF_SEL_WALL, OPTG_MEASURE,
	  "on-CPU samples per second per thread", NULL, set_freq, .def_u = SFPROF_DEFAULT_HZ },
	{ "cpu-event", 0, "EV", OPT_CAPTURING, SEL_CPU | SFPROF_SEL_WALL, OPTG_MEASURE,
	  "what drives on-CPU samples: cycles (hardware),\ncpu-clock (software), or auto: cycles where\n"
	  "the machine has a PMU, else cpu-clock", "auto", set_cpu_event },
	{ "duration", 'd', "SEC", OPT_CAPTURING, 0, OPTG_MEASURE,
	  "stop after SEC seconds (fractions allowed), or\nat SIGINT/SIGTERM",
	  "when the targets exit", set_duration },
	{ "interval", 0, "SEC", OPT_LIVE, 0, OPTG_OUTPUT,
	  "continuous: one profile per SEC seconds (>= 0.5)\nto -o FILE, where %t is the "
	  "interval's UTC\nstart (20261201T080000Z) and %p the target PID;\nSIGHUP ends an "
	  "interval early", "one profile", set_interval },
	{ "min-wait", 0, "USEC", OPT_CAPTURING, SEL_FUTEX, OPTG_MEASURE,
	  "record futex waits of at least USEC", NULL, set_min_wait,
	  .def_u = SFPROF_DEFAULT_MIN_WAIT_US },
	{ "min-block", 0, "USEC", OPT_CAPTURING, SEL_OFFCPU, OPTG_MEASURE,
	  "offcpu: record blocks of at least USEC", NULL, set_min_block,
	  .def_u = SFPROF_DEFAULT_MIN_BLOCK_US },
	{ "state", 0, "S,D,R", OPT_CAPTURING, SEL_OFFCPU, OPTG_MEASURE,
	  "offcpu: only these states: S sleep, D\nuninterruptible (disk I/O), R preempted",
	  "every state", set_states },
	{ "wakers", 0, NULL, OPT_CAPTURING, SFPROF_SEL_OFFCPU | SFPROF_SEL_FUTEX, OPTG_MEASURE,
	  "join each block to the stack of the thread\nthat woke it (blocked;--;waker, as "
	  "offwaketime)", "off", NULL, FLAG(wakers) },
	{ "stack-size", 0, "BYTES", OPT_CAPTURING, 0, OPTG_MEASURE,
	  "user stack bytes copied per event, at most 65528", NULL, set_stack_size,
	  .def_u = SFPROF_STACK_DEFAULT },
	{ "kernel", 0, NULL, OPT_CAPTURING, 0, OPTG_MEASURE,
	  "add kernel stacks (frames suffixed _[k]); report\nshows them when the capture has them",
	  "off", NULL, FLAG(kernel) },

	/* ---- output ---- */
	{ "output", 'o', "FILE", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "write the profile to FILE; by extension: .svg,\n.svg.gz (gzip), .pb.gz/.pb/.pprof (pprof),\n"
	  ".folded/.txt, .folded.gz (gzip); else folded",
	  "stdout", set_output },
	{ "output", 'o', "FILE", OPT_RECORD, 0, OPTG_OUTPUT,
	  "write the capture to FILE (mode 0600), e.g.\nrun.sfcap; required", NULL, set_output },
	{ "format", 'f', "FMT", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "folded|svg|pprof", "by -o extension, else folded", set_format },
	{ "per-thread", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "root each stack at comm-pid/tid", "comm", NULL, FLAG(per_thread) },
	{ "per-process", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "root each stack at comm-pid (the process's name,\nnot its threads')", "comm", NULL,
	  FLAG(per_process) },
	{ "by-lock", 0, NULL, OPT_LIVE | OPT_REPORT, SEL_FUTEX, OPTG_OUTPUT,
	  "futex: root each stack at its lock address", "off", NULL, FLAG(by_lock) },
	{ "no-demangle", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "keep C++ names mangled", "demangled", NULL, FLAG(no_demangle) },
	{ "full-names", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "C++ names with return type and parameters", "as perf script prints them", NULL,
	  FLAG(full_names) },
	{ "no-inline", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "no inline frames or source lines from DWARF", "both shown", NULL, FLAG(no_inline) },
	{ "no-python", 0, NULL, OPT_LIVE | OPT_RECORD | OPT_REPORT, 0, OPTG_OUTPUT,
	  "CPython: keep the native _PyEval_EvalFrameDefault frames", "Python functions in their place",
	  NULL, FLAG(no_python) },
	{ "no-ruby", 0, NULL, OPT_LIVE | OPT_RECORD | OPT_REPORT, 0, OPTG_OUTPUT,
	  "CRuby: keep the native rb_vm_exec frames", "Ruby methods and blocks in their place",
	  NULL, FLAG(no_ruby) },
	{ "no-php", 0, NULL, OPT_LIVE | OPT_RECORD | OPT_REPORT, 0, OPTG_OUTPUT,
	  "PHP: keep the native execute_ex frames", "PHP functions in their place",
	  NULL, FLAG(no_php) },
	{ "no-v8", 0, NULL, OPT_LIVE | OPT_RECORD, 0, OPTG_OUTPUT,
	  "node: name JIT frames from a perf map only", "from V8's objects where none names them",
	  NULL, FLAG(no_v8) },
	{ "no-jvm", 0, NULL, OPT_LIVE | OPT_RECORD, 0, OPTG_OUTPUT,
	  "JVM: name JIT frames from a perf map only", "from HotSpot's metadata",
	  NULL, FLAG(no_jvm) },
	{ "keep-cmdline", 0, NULL, OPT_LIVE | OPT_REPORT, 0, OPTG_OUTPUT,
	  "name the whole command line in SVG/pprof", "only argv[0]; arguments\ncan hold secrets",
	  NULL, FLAG(keep_cmdline) },
	{ "title", 0, "TEXT", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: the flame graph's title", "what was measured", set_title,
	  .formats = OPT_FMT_SVG },
	{ "inverted", 0, NULL, OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: an icicle graph, root on top", "off", NULL, FLAG(inverted),
	  .formats = OPT_FMT_SVG },
	{ "reverse", 0, NULL, OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: stacks reversed before merging (merged by\nleaf: who calls the hot functions)",
	  "off", NULL, FLAG(reverse), .formats = OPT_FMT_SVG },
	{ "subtitle", 0, "TEXT", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: a line under the title", "none", set_subtitle, .formats = OPT_FMT_SVG },
	{ "width", 0, "PX", OPT_PROFILING, 0, OPTG_OUTPUT, "SVG: the image's width in pixels",
	  "1200", set_svg_width, .formats = OPT_FMT_SVG },
	{ "minwidth", 0, "PX|PCT%", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: leave out frames narrower than PX pixels,\nor than PCT% of the total (the header "
	  "counts\nthem)", "0.1", set_minwidth, .formats = OPT_FMT_SVG },
	{ "countname", 0, "NAME", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: what the counts are, in tooltips (\"1,234\nNAME\")",
	  "samples, or times off CPU", set_countname, .formats = OPT_FMT_SVG },
	{ "colors", 0, "PALETTE", OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: runtime (by what runs: native red, kernel\norange, Python green, JIT aqua, Go "
	  "yellow,\nlock purple; a legend says so), flamegraph.pl's\nhot, mem, io, java, js, perl, "
	  "python, or one\nhue: red, green, blue, aqua, yellow, purple,\norange", "runtime",
	  set_colors, .formats = OPT_FMT_SVG },
	{ "hash", 0, NULL, OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: colour by name prefix, so similar names get\nsimilar colours (flamegraph.pl's --hash)",
	  "a hash of the whole name", NULL, FLAG(svg_hash), .formats = OPT_FMT_SVG },
	{ "flamechart", 0, NULL, OPT_PROFILING, 0, OPTG_OUTPUT,
	  "SVG: a flame chart: x is time, each sample's\nstack drawn in the order it came, "
	  "neighbours\nof one stack merged (flamegraph.pl's\n--flamechart); the first 1M runs",
	  "a flame graph, stacks sorted by name", NULL, FLAG(flamechart),
	  .formats = OPT_FMT_SVG },

	/* ---- sframe-dump ---- */
	{ "raw", 0, NULL, OPT_SFRAME, 0, OPTG_OUTPUT,
	  "FILE is a bare .sframe section (needs --base)", "FILE is ELF", NULL,
	  FLAG(sframe_raw) },
	{ "base", 0, "ADDR", OPT_SFRAME, 0, OPTG_OUTPUT,
	  "with --raw: the address the section is loaded at", NULL, set_base },
	{ "from-eh-frame", 0, NULL, OPT_SFRAME, 0, OPTG_OUTPUT,
	  "dump the table derived from FILE's .eh_frame\n(or .debug_frame) instead of .sframe",
	  "off", NULL, FLAG(from_eh_frame) },

	/* ---- other ---- */
	{ "buildid-dir", 0, "DIR", OPT_RECORD | OPT_REPORT, 0, OPTG_OTHER,
	  "record keeps the binaries it saw there, report\nfinds them there by build-id",
	  "$XDG_CACHE_HOME or\n~/.cache, /sfprof/buildid", set_buildid_dir },
	{ "no-buildid-cache", 0, NULL, OPT_RECORD | OPT_REPORT, 0, OPTG_OTHER,
	  "neither keep nor look up binaries by build-id", "the cache is used", NULL,
	  FLAG(no_buildid_cache) },
	{ "stats", 0, NULL, OPT_CAPTURING | OPT_REPORT, 0, OPTG_OTHER,
	  "print counters on stderr at the end (name: value)", "off", NULL, FLAG(stats) },
	{ "no-realtime", 0, NULL, OPT_CAPTURING, 0, OPTG_OTHER,
	  "run at the caller's CPU priority, not at\nSCHED_RR 1 (else nice -20), which a "
	  "target's\nrunnable threads cannot starve", "off", NULL,
	  FLAG(no_realtime) },
	{ "quiet", 0, NULL, OPT_CAPTURING, 0, OPTG_OTHER,
	  "no progress line (one is shown on a terminal)\nand no end-of-run summary", "off", NULL,
	  FLAG(quiet) },
	{ "quiet", 0, NULL, OPT_REPORT | OPT_DIFF, 0, OPTG_OTHER,
	  "no end-of-run summary", "off", NULL, FLAG(quiet) },
	{ "help", 'h', NULL, OPT_ALL_CMDS, 0, OPTG_OTHER, "this help", NULL, NULL, FLAG(help) },
	{ "version", 0, NULL, OPT_ALL_CMDS, 0, OPTG_OTHER,
	  "print the version and the build's git describe", NULL, NULL, FLAG(version) },

	/* ---- hidden, for tests: raw records to a file; ring buffer size ---- */
	{ "dump-events", 0, "FILE", OPT_CAPTURING, 0, OPTG_HIDDEN, NULL, NULL, set_dump_events },
	{ "ring-mb", 0, "N", OPT_CAPTURING, 0, OPTG_HIDDEN, NULL, NULL, set_ring_mb },
};

const size_t sfprof_nr_optdefs = sizeof(sfprof_optdefs) / sizeof(sfprof_optdefs[0]);

_Static_assert(sizeof(sfprof_optdefs) / sizeof(sfprof_optdefs[0]) <= 128,
	       "sfprof_opts.given holds 128 bits");

void sfprof_opts__print_version(FILE *f)
{
	fprintf(f, "sfprof %s (git %s)\n", SFPROF_VERSION, SFPROF_GIT_DESCRIBE);
}

#define HELP_COL 26

/* text with '\n' continuation lines, each indented to HELP_COL */
static void put_indented(FILE *f, const char *text)
{
	for (const char *p = text; *p; p++) {
		putc(*p, f);
		if (*p == '\n')
			fprintf(f, "%*s", HELP_COL, "");
	}
}

static void usage_entry(FILE *f, const struct sfprof_optdef *d)
{
	char left[64], num[16];
	const char *def = d->def;
	int n;

	if (!def && d->def_u) {
		snprintf(num, sizeof(num), "%u", d->def_u);
		def = num;
	}

	if (d->short_name)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", d->short_name, d->name,
			     d->arg ? " " : "", d->arg ? d->arg : "");
	else
		n = snprintf(left, sizeof(left), "      --%s%s%s", d->name, d->arg ? " " : "",
			     d->arg ? d->arg : "");
	if (n >= HELP_COL - 1)
		fprintf(f, "%s\n%*s", left, HELP_COL, "");
	else
		fprintf(f, "%-*s", HELP_COL, left);
	put_indented(f, d->help);
	if (def) {
		const char *last = strrchr(d->help, '\n');
		size_t tail = strlen(last ? last + 1 : d->help);
		const char *nl = strchr(def, '\n');
		size_t first = nl ? (size_t)(nl - def) : strlen(def);

		/* keep lines under 80 columns */
		if (HELP_COL + tail + 12 + first > 79)
			fprintf(f, "\n%*s", HELP_COL, "");
		else
			putc(' ', f);
		fputs("(default: ", f);
		put_indented(f, def);
		putc(')', f);
	}
	putc('\n', f);
}

static const char *const group_title[OPTG__COUNT] = {
	[OPTG_TARGET] = "Target (one of; descendants created during the run are followed):",
	[OPTG_MEASURE] = "What to measure:",
	[OPTG_OUTPUT] = "Output:",
	[OPTG_OTHER] = "Other:",
};

static void usage_head(enum sfprof_subcmd cmd, FILE *f)
{
	switch (cmd) {
	case SFPROF_CMD_REPORT:
		fputs("usage: sfprof report [options] FILE\n"
		      "Unwind a capture written by `sfprof record` into a profile.\n"
		      "Options may come before or after FILE.\n", f);
		break;
	case SFPROF_CMD_RECORD:
		fputs("usage: sfprof record -o FILE [options] TARGET\n"
		      "Capture raw events to FILE (mode 0600) for `sfprof report`.\n", f);
		break;
	case SFPROF_CMD_SFRAME_DUMP:
		fputs("usage: sfprof sframe-dump FILE\n"
		      "       sfprof sframe-dump --raw FILE --base ADDR\n"
		      "       sfprof sframe-dump --from-eh-frame FILE\n"
		      "Print the SFrame section of FILE in the format of objdump --sframe.\n", f);
		break;
	case SFPROF_CMD_DIFF:
		fputs("usage: sfprof diff [options] BASE NEW\n"
		      "A differential profile of two folded files or captures: widths follow\n"
		      "NEW; red grew, blue shrank, normalised by the totals.\n", f);
		break;
	default:
		fputs("usage: sfprof [options] TARGET\n"
		      "       sfprof record -o FILE [options] TARGET\n"
		      "       sfprof report [options] FILE\n"
		      "       sfprof sframe-dump [options] FILE\n"
		      "       sfprof diff [options] BASE NEW\n"
		      "Profile processes: on-CPU samples or futex (lock) waits, unwound with SFrame.\n"
		      "`sfprof record --help` (report, sframe-dump, diff) lists a command's options.\n",
		      f);
	}
}

void sfprof_opts__usage(enum sfprof_subcmd cmd, FILE *f)
{
	unsigned bit = 1u << cmd;

	usage_head(cmd, f);
	for (int g = 0; g < OPTG__COUNT; g++) {
		int printed = 0;

		for (size_t i = 0; i < sfprof_nr_optdefs; i++) {
			const struct sfprof_optdef *d = &sfprof_optdefs[i];

			if (d->group != (enum sfprof_optgroup)g || !(d->cmds & bit))
				continue;
			if (!printed++) {
				fprintf(f, "\n%s\n", group_title[g]);
				if (g == OPTG_TARGET)
					fputs("  -- COMMAND [ARGS...]    start COMMAND and profile it; "
					      "sfprof exits with\n"
					      "                          COMMAND's exit status\n", f);
			}
			usage_entry(f, d);
		}
	}
}
