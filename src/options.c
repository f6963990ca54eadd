// SPDX-License-Identifier: MIT
/* sfprof's command line: argv -> struct sfprof_opts. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interval.h"
#include "options.h"
#include "sfprof_event.h"

enum {
	OPT_MIN_WAIT = 0x100,
	OPT_STACK_SIZE,
	OPT_STATS,
	OPT_KERNEL,
	OPT_NO_DEMANGLE,
	OPT_BY_LOCK,
	OPT_PER_THREAD,
	OPT_QUIET,
	OPT_DUMP_EVENTS,
	OPT_RING_MB,
	OPT_CPU_EVENT,
	OPT_PER_PROCESS,
	OPT_CGROUP,
	OPT_NO_INHERIT,
	OPT_INTERVAL,
};

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "min-wait", required_argument, NULL, OPT_MIN_WAIT },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "pid", required_argument, NULL, 'p' },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "by-lock", no_argument, NULL, OPT_BY_LOCK },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "per-process", no_argument, NULL, OPT_PER_PROCESS },
	{ "all", no_argument, NULL, 'a' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, 'h' },
	/* hidden, for tests: raw records to a file; ring buffer size */
	{ "dump-events", required_argument, NULL, OPT_DUMP_EVENTS },
	{ "ring-mb", required_argument, NULL, OPT_RING_MB },
	{ "cpu-event", required_argument, NULL, OPT_CPU_EVENT },
	{ NULL, 0, NULL, 0 },
};

void sfprof_opts__init(struct sfprof_opts *o, enum sfprof_subcmd cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->event = SFPROF_SEL_CPU;
	o->freq = SFPROF_DEFAULT_HZ;
	o->min_wait_us = SFPROF_DEFAULT_MIN_WAIT_US;
	o->stack_size = SFPROF_STACK_DEFAULT;
	o->format = PROFILE_FMT_AUTO;
	o->ring_mb = 16;
}

void sfprof_opts__usage(enum sfprof_subcmd cmd, FILE *f)
{
	if (cmd == SFPROF_CMD_REPORT) {
		fprintf(f,
			"usage: sfprof report [options] FILE\n"
			"Unwind a capture written by `sfprof record` into a profile.\n");
	} else if (cmd == SFPROF_CMD_RECORD) {
		fprintf(f,
			"usage: sfprof record -o FILE [options] TARGET\n"
			"Capture raw events to FILE (mode 0600) for `sfprof report`.\n");
	} else {
		fprintf(f,
			"usage: sfprof [options] TARGET\n"
			"       sfprof record -o FILE [options] TARGET\n"
			"       sfprof report [options] FILE\n"
			"       sfprof sframe-dump [options] FILE\n"
			"Profile a process: on-CPU samples or futex (lock) waits, unwound with SFrame.\n");
	}
	fprintf(f,
		"\nOptions:\n"
		"  -e, --event cpu|futex   what to measure (default: cpu)\n"
		"  -F, --freq HZ           on-CPU samples per second per thread (default: %u)\n"
		"      --cpu-event EV      what drives them: cycles (hardware), cpu-clock\n"
		"                          (software) or auto (default: cycles where the\n"
		"                          machine has a PMU, else cpu-clock)\n"
		"  -d, --duration SEC      stop after SEC seconds (default: until the target\n"
		"                          exits or SIGINT/SIGTERM)\n"
		"      --interval SEC      continuous: one profile per SEC seconds (>= 0.5)\n"
		"                          to -o FILE, where %%t is the interval's UTC start\n"
		"                          (20261201T080000Z) and %%p the target PID; SIGHUP\n"
		"                          ends an interval early (not with record/report)\n"
		"      --min-wait USEC     record futex waits of at least USEC (default: %u)\n"
		"      --stack-size BYTES  user stack bytes copied per event (default: %u,\n"
		"                          max %u)\n"
		"  -o, --output FILE       write the profile to FILE (default: stdout)\n"
		"  -f, --format FMT        folded|svg|pprof (default: by -o extension, else folded)\n"
		"      --stats             print counters on stderr at the end (name: value)\n"
		"\nTARGET (one of; descendants created during the run are followed):\n"
		"  -- COMMAND [ARGS...]    start COMMAND and profile it; sfprof exits with\n"
		"                          COMMAND's exit status\n"
		"  -p, --pid PID[,PID...]  these processes (all their threads); may repeat\n"
		"  -a, --all               every process on the machine but sfprof\n"
		"      --cgroup DIR        the processes of a cgroup v2 directory and its\n"
		"                          child cgroups (alone or with -a)\n"
		"      --no-inherit        do not follow descendants (fork, exec chains)\n"
		"\n"
		"      --kernel            add kernel stacks (frames suffixed _[k])\n"
		"      --no-demangle       keep C++ names mangled\n"
		"      --by-lock           futex: root each stack at its lock address\n"
		"      --per-thread        root each stack at comm-pid/tid (default: comm)\n"
		"      --per-process       root each stack at comm-pid\n"
		"      --quiet             no progress line on a terminal\n"
		"  -h, --help              this help\n",
		SFPROF_DEFAULT_HZ, SFPROF_DEFAULT_MIN_WAIT_US, SFPROF_STACK_DEFAULT,
		SFPROF_STACK_MAX);
}

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

static int parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 1e7)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9);
	return *ns ? 0 : -EINVAL;
}

/*
 * "-p 1,2" and "-p 1 -p 2" alike: every PID is appended once, in the
 * order given. 0 or -EINVAL with one line on err.
 */
static int parse_pid_list(struct sfprof_opts *o, const char *list, FILE *err)
{
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char buf[24];
		uint64_t v;
		int i;

		if (len == 0 || len >= sizeof(buf)) {
			fprintf(err, "sfprof: -p: expected process IDs (positive integers, "
				"comma-separated), got '%s'\n", list);
			return -EINVAL;
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		if (parse_u64(buf, 1, INT_MAX, &v)) {
			fprintf(err, "sfprof: -p: expected a process ID (a positive integer), "
				"got '%s'\n", buf);
			return -EINVAL;
		}
		for (i = 0; i < o->nr_pids && o->pids[i] != (pid_t)v; i++)
			;
		if (i == o->nr_pids) {
			if (o->nr_pids == SFPROF_MAX_PIDS) {
				fprintf(err, "sfprof: -p: at most %d processes (use --cgroup or -a "
					"for more)\n", SFPROF_MAX_PIDS);
				return -EINVAL;
			}
			o->pids[o->nr_pids++] = (pid_t)v;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

#define BAD(...)                                                               \
	do {                                                                   \
		fprintf(err, "sfprof: " __VA_ARGS__);                          \
		fputc('\n', err);                                              \
		return -EINVAL;                                                \
	} while (0)

int sfprof_opts__parse(struct sfprof_opts *o, int argc, char **argv,
		       FILE *out, FILE *err)
{
	uint64_t v;
	int c;

	opterr = 0;
	optind = 0; /* full re-initialisation in glibc: parse may run twice */
	/* '+': stop at the first non-option, so COMMAND keeps its own options */
	while ((c = getopt_long(argc, argv, "+:e:F:d:o:f:p:ah", long_opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!strcmp(optarg, "cpu"))
				o->event = SFPROF_SEL_CPU;
			else if (!strcmp(optarg, "futex"))
				o->event = SFPROF_SEL_FUTEX;
			else
				BAD("-e: unknown event '%s' (expected cpu or futex)", optarg);
			break;
		case 'F':
			if (parse_u64(optarg, 1, SFPROF_MAX_HZ, &v))
				BAD("-F: frequency must be an integer from 1 to %u, got '%s'",
				    SFPROF_MAX_HZ, optarg);
			o->freq = (uint32_t)v;
			break;
		case 'd':
			if (parse_seconds(optarg, &o->duration_ns))
				BAD("-d: duration must be a positive number of seconds, got '%s'",
				    optarg);
			break;
		case OPT_INTERVAL:
			if (parse_seconds(optarg, &o->interval_ns) || o->interval_ns < 500000000ull)
				BAD("--interval: expected seconds (at least 0.5), got '%s'", optarg);
			break;
		case OPT_MIN_WAIT:
			if (parse_u64(optarg, 0, UINT64_MAX / 1000, &v))
				BAD("--min-wait: expected microseconds (an integer >= 0), got '%s'",
				    optarg);
			o->min_wait_us = v;
			break;
		case OPT_STACK_SIZE:
			if (parse_u64(optarg, 0, SFPROF_STACK_MAX, &v))
				BAD("--stack-size: expected bytes from 0 to %u, got '%s'",
				    SFPROF_STACK_MAX, optarg);
			o->stack_size = (uint32_t)v;
			break;
		case 'o':
			if (!optarg[0])
				BAD("-o: empty file name");
			o->output = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "folded"))
				o->format = PROFILE_FMT_FOLDED;
			else if (!strcmp(optarg, "svg"))
				o->format = PROFILE_FMT_SVG;
			else if (!strcmp(optarg, "pprof"))
				o->format = PROFILE_FMT_PPROF;
			else
				BAD("-f: unknown format '%s' (expected folded, svg or pprof)", optarg);
			break;
		case 'p':
			if (parse_pid_list(o, optarg, err))
				return -EINVAL;
			break;
		case 'a': o->all = 1; break;
		case OPT_CGROUP:
			if (!optarg[0])
				BAD("--cgroup: empty directory name");
			o->cgroup = optarg;
			break;
		case OPT_NO_INHERIT: o->no_inherit = 1; break;
		case OPT_PER_PROCESS: o->per_process = 1; break;
		case OPT_STATS: o->stats = 1; break;
		case OPT_KERNEL: o->kernel = 1; break;
		case OPT_NO_DEMANGLE: o->no_demangle = 1; break;
		case OPT_BY_LOCK: o->by_lock = 1; break;
		case OPT_PER_THREAD: o->per_thread = 1; break;
		case OPT_QUIET: o->quiet = 1; break;
		case OPT_DUMP_EVENTS: o->dump_events = optarg; break;
		case OPT_CPU_EVENT:
			if (!strcmp(optarg, "auto"))
				o->cpu_event = SFPROF_CPU_EVENT_AUTO;
			else if (!strcmp(optarg, "cycles"))
				o->cpu_event = SFPROF_CPU_EVENT_CYCLES;
			else if (!strcmp(optarg, "cpu-clock"))
				o->cpu_event = SFPROF_CPU_EVENT_CPU_CLOCK;
			else
				BAD("--cpu-event: unknown event '%s' (expected auto, cycles or cpu-clock)",
				    optarg);
			break;
		case OPT_RING_MB:
			if (parse_u64(optarg, 1, 1024, &v) || (v & (v - 1)))
				BAD("--ring-mb: expected a power of two from 1 to 1024, got '%s'",
				    optarg);
			o->ring_mb = (uint32_t)v;
			break;
		case 'h':
			sfprof_opts__usage(o->cmd, out);
			o->help = 1;
			return 0;
		case ':':
			BAD("option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			if (optopt)
				BAD("unknown option '-%c' (see --help)", optopt);
			BAD("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}

	if (o->interval_ns && o->cmd != SFPROF_CMD_LIVE)
		BAD("--interval is for live runs, not record or report");
	if (o->interval_ns && (!o->output || !strcmp(o->output, "-")))
		BAD("--interval writes a file per interval: give -o FILE (%%t: the start)");
	if (o->interval_ns && interval__check_template(o->output))
		BAD("-o: unknown %% escape in '%s' (%%t, %%p and %%%% are known)", o->output);
	if (o->cmd == SFPROF_CMD_REPORT) {
		if (optind != argc - 1)
			BAD("report: expected one capture FILE (see --help)");
		o->input = argv[optind];
		return 0;
	}
	if (optind < argc) {
		o->command = &argv[optind];
		o->command_argc = argc - optind;
	}
	if ((o->nr_pids > 0) + !!o->all + !!o->command > 1)
		BAD("give one target, not several: -p PID, -a or -- COMMAND (--cgroup DIR may go "
		    "with -a)");
	if (o->cgroup && (o->nr_pids || o->command))
		BAD("--cgroup DIR selects its own processes: give it alone or with -a, "
		    "not with -p or COMMAND");
	if (!o->nr_pids && !o->all && !o->command && !o->cgroup)
		BAD("no target: give -p PID, -a, --cgroup DIR or -- COMMAND (see --help)");
	if (o->per_thread && o->per_process)
		BAD("--per-thread and --per-process both choose the root: give one");
	if (o->no_inherit && (o->all || o->cgroup))
		BAD("--no-inherit applies to -p and COMMAND: -a and --cgroup see every "
		    "process in scope");
	if (o->cmd == SFPROF_CMD_RECORD && !o->output)
		BAD("record: -o FILE is required");
	return 0;
}
