// SPDX-License-Identifier: MIT
/*
 * sfprof's command line: argv -> struct sfprof_opts, with getopt's tables
 * built from the option table (src/cli/options_table.c) for one subcommand.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "output/interval.h"
#include "cli/options_int.h"
#include "sfprof_event.h"

#define BAD(...)                                                               \
	do {                                                                   \
		fprintf(err, "sfprof: " __VA_ARGS__);                          \
		fputc('\n', err);                                              \
		return -EINVAL;                                                \
	} while (0)

static const char *const cmd_name[SFPROF_CMD__COUNT] = {
	[SFPROF_CMD_LIVE] = "live", [SFPROF_CMD_RECORD] = "record",
	[SFPROF_CMD_REPORT] = "report", [SFPROF_CMD_SFRAME_DUMP] = "sframe-dump",
	[SFPROF_CMD_DIFF] = "diff",
};

void sfprof_opts__init(struct sfprof_opts *o, enum sfprof_subcmd cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->event = SFPROF_SEL_CPU;
	o->freq = SFPROF_DEFAULT_HZ;
	o->min_wait_us = SFPROF_DEFAULT_MIN_WAIT_US;
	o->min_block_us = SFPROF_DEFAULT_MIN_BLOCK_US;
	o->offcpu_states = SFPROF_OFFCPU_ALL;
	o->stack_size = SFPROF_STACK_DEFAULT;
	o->format = PROFILE_FMT_AUTO;
}

static int takes(const struct sfprof_optdef *d, enum sfprof_subcmd cmd)
{
	return (d->cmds >> cmd) & 1;
}

static void name_of(const struct sfprof_optdef *d, char *buf, size_t size)
{
	if (d->short_name)
		snprintf(buf, size, "-%c", d->short_name);
	else
		snprintf(buf, size, "--%s", d->name);
}

/* "live, record": the subcommands that take d's name */
static void takers(const char *name, char *buf, size_t size)
{
	unsigned mask = 0;
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sfprof_nr_optdefs; i++)
		if (!strcmp(sfprof_optdefs[i].name, name))
			mask |= sfprof_optdefs[i].cmds;
	for (int c = 0; c < SFPROF_CMD__COUNT && n < size; c++)
		if (mask & (1u << c))
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", cmd_name[c]);
}

/* The event bits an option applies to, as "-e futex" (for messages). */
static void events_text(unsigned events, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned b = 1; b && n < size; b <<= 1)
		if (events & b)
			n += (size_t)snprintf(buf + n, size - n, "%s-e %s", n ? " or " : "",
					      sfprof_event__name(b));
}

/*
 * o->event is a mask of SFPROF_SEL_* bits (one today; several events in
 * one run select several): an option applies when it means something for
 * at least one of them.
 */
int sfprof_opts__check_events(const struct sfprof_opts *o, FILE *err)
{
	unsigned sel = (unsigned)o->event;

	for (size_t i = 0; i < sfprof_nr_optdefs; i++) {
		const struct sfprof_optdef *d = &sfprof_optdefs[i];
		char nm[40], ev[64], chosen[64];
		size_t n = 0;

		if (!((o->given[i / 64] >> (i % 64)) & 1) || !d->events || (d->events & sel))
			continue;
		name_of(d, nm, sizeof(nm));
		events_text(d->events, ev, sizeof(ev));
		chosen[0] = 0;
		for (unsigned b = 1; b && n < sizeof(chosen); b <<= 1)
			if (sel & b)
				n += (size_t)snprintf(chosen + n, sizeof(chosen) - n, "%s%s",
						      n ? "," : "", sfprof_event__name(b));
		BAD("%s has no meaning for -e %s: it applies to %s", nm, chosen, ev);
	}
	return 0;
}

/* A profile extension on record's -o: the user expects a profile. */
static const char *profile_ext(const char *path)
{
	static const char *const exts[] = { ".svg", ".svgz", ".svg.gz", ".pb.gz", ".pb",
					    ".pprof", ".folded", ".folded.gz", ".txt" };
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t l = strlen(exts[i]);

		if (len > l && !strcasecmp(path + len - l, exts[i]))
			return exts[i];
	}
	return NULL;
}

static int check_outputs(const struct sfprof_opts *o, FILE *err)
{
	size_t len = o->output ? strlen(o->output) : 0;
	const char *ext;

	if (o->cmd == SFPROF_CMD_RECORD) {
		if (!o->output)
			BAD("record: -o FILE is required (a capture file, e.g. -o run.sfcap)");
		ext = profile_ext(o->output);
		if (ext)
			BAD("record: -o %s: record writes a capture, not a %s; name it "
			    "FILE.sfcap and run `sfprof report -o %s FILE.sfcap`", o->output,
			    strstr(ext, "svg") ? "flame graph" : strstr(ext, "p") ? "pprof profile"
										: "folded profile",
			    o->output);
		return 0;
	}
	/* Chromium reads a .svgz from file:// as XML and fails: only a web
	 * server's Content-Encoding: gzip makes it gunzip one */
	if (len > 5 && !strcasecmp(o->output + len - 5, ".svgz"))
		BAD("-o %s: browsers do not open .svgz files from disk (Chromium decodes gzip "
		    "only with a server's Content-Encoding): write .svg, or .svg.gz to serve "
		    "compressed", o->output);
	if (len > 6 && !strcasecmp(o->output + len - 6, ".sfcap"))
		BAD("-o %s: a capture file is written by `sfprof record -o %s`; this command "
		    "writes a profile (.svg, .folded, .pb.gz)", o->output, o->output);
	return 0;
}

/* An option for some output formats only (--title: SVG) with another. */
static int check_formats(const struct sfprof_opts *o, FILE *err)
{
	enum profile_format fmt = o->format != PROFILE_FMT_AUTO ? o->format
				  : profile_format__from_path(o->output);
	static const char *const fmt_name[] = {
		[PROFILE_FMT_AUTO] = "folded", [PROFILE_FMT_FOLDED] = "folded",
		[PROFILE_FMT_SVG] = "SVG", [PROFILE_FMT_PPROF] = "pprof",
	};

	for (size_t i = 0; i < sfprof_nr_optdefs; i++) {
		const struct sfprof_optdef *d = &sfprof_optdefs[i];
		char nm[40];

		if (!((o->given[i / 64] >> (i % 64)) & 1) || !d->formats ||
		    (d->formats & (1u << fmt)))
			continue;
		name_of(d, nm, sizeof(nm));
		BAD("%s has no meaning for %s output: it draws the SVG flame graph (-o FILE.svg "
		    "or -f svg)", nm, fmt_name[fmt]);
	}
	return 0;
}

static int check_target(const struct sfprof_opts *o, FILE *err)
{
	if ((o->nr_pids > 0) + !!o->all + !!o->command > 1)
		BAD("give one target, not several: -p PID, -a or -- COMMAND (--cgroup DIR may go "
		    "with -a)");
	if (o->cgroup && (o->nr_pids || o->command))
		BAD("--cgroup DIR selects its own processes: give it alone or with -a, "
		    "not with -p or COMMAND");
	if (!o->nr_pids && !o->all && !o->command && !o->cgroup)
		BAD("no target: give -p PID, -a, --cgroup DIR or -- COMMAND (see --help)");
	if (o->no_inherit && (o->all || o->cgroup))
		BAD("--no-inherit applies to -p and COMMAND: -a and --cgroup see every "
		    "process in scope");
	return 0;
}

/* Levenshtein distance of a and b, capped at 9 (for "did you mean"). */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[32], la = (unsigned)strlen(a), lb = (unsigned)strlen(b);

	if (la >= 32 || lb >= 32)
		return 9;
	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb] < 9 ? row[lb] : 9;
}

/*
 * `sfprof recrod -o x.svg -- ./prog` would profile a program named
 * recrod: a first word that is no subcommand needs `--` before it, as
 * perf's does, and the nearest subcommand is suggested.
 */
static int check_bare_word(const char *word, FILE *err)
{
	const char *best = NULL;
	unsigned best_d = 3;
	char all[128];
	size_t n = 0;

	all[0] = 0;
	for (int c = 0; c < SFPROF_CMD__COUNT; c++) {
		unsigned d;

		if (c == SFPROF_CMD_LIVE || !cmd_name[c])
			continue;
		if (n < sizeof(all))
			n += (size_t)snprintf(all + n, sizeof(all) - n, "%s%s", n ? ", " : "",
					      cmd_name[c]);
		d = edit_distance(word, cmd_name[c]);
		if (d < best_d)
			best = cmd_name[c], best_d = d;
	}
	if (best)
		BAD("'%s' is not a subcommand (did you mean '%s'?); to profile a command, put it "
		    "after --: sfprof [OPTIONS] -- %s ...", word, best, word);
	BAD("'%s' is not a subcommand (%s); to profile a command, put it after --: "
	    "sfprof [OPTIONS] -- %s ...", word, all, word);
}

/* After the options: FILE, BASE NEW, or COMMAND, by subcommand. */
static int take_operands(struct sfprof_opts *o, int argc, char **argv, FILE *err)
{
	int left = argc - optind;

	switch (o->cmd) {
	case SFPROF_CMD_REPORT:
		if (left != 1)
			BAD("report: expected one capture FILE, got %d (see --help)", left);
		o->input = argv[optind];
		return 0;
	case SFPROF_CMD_SFRAME_DUMP:
		if (left != 1)
			BAD("sframe-dump: expected one FILE, got %d (see --help)", left);
		o->input = argv[optind];
		if (o->sframe_raw && !o->sframe_base)
			BAD("sframe-dump: --raw needs --base ADDR (where the section is loaded)");
		if (!o->sframe_raw && o->sframe_base)
			BAD("sframe-dump: --base goes with --raw");
		if (o->sframe_raw && o->from_eh_frame)
			BAD("sframe-dump: --raw and --from-eh-frame exclude each other");
		return 0;
	case SFPROF_CMD_DIFF:
		if (left != 2)
			BAD("diff: expected BASE and NEW (folded files or captures), got %d "
			    "operand(s)", left);
		o->diff_base = argv[optind];
		o->input = argv[optind + 1];
		return 0;
	default:
		break;
	}
	if (left > 0 && o->cmd == SFPROF_CMD_LIVE && optind == 1)
		return check_bare_word(argv[optind], err);
	if (left > 0) {
		o->command = &argv[optind];
		o->command_argc = left;
	}
	return check_target(o, err);
}

/*
 * getopt's tables: every name is known (so an option of another
 * subcommand gets its own message), the subcommand's own entry first
 * (getopt_long takes the first exact match).
 */
struct opt_tables {
	struct option lo[128 + 1];
	int idx[128];	/* lo[k] -> table entry */
	char shorts[128 * 2 + 4];
};

static void build_tables(struct opt_tables *t, enum sfprof_subcmd cmd)
{
	size_t nlo = 0, ns = 0;

	/* '+': live and record stop at the first non-option (COMMAND keeps
	 * its own options); the others permute, so options may follow FILE */
	if (cmd == SFPROF_CMD_LIVE || cmd == SFPROF_CMD_RECORD)
		t->shorts[ns++] = '+';
	t->shorts[ns++] = ':';
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sfprof_nr_optdefs; i++) {
			const struct sfprof_optdef *d = &sfprof_optdefs[i];
			size_t k;

			if (takes(d, cmd) != !pass)
				continue;
			for (k = 0; k < nlo && strcmp(t->lo[k].name, d->name); k++)
				;
			if (k < nlo)
				continue;
			t->lo[nlo] = (struct option){ d->name, d->arg ? required_argument : no_argument,
						      NULL, 0x100 + (int)nlo };
			t->idx[nlo++] = (int)i;
			if (d->short_name && !memchr(t->shorts, d->short_name, ns)) {
				t->shorts[ns++] = d->short_name;
				if (d->arg)
					t->shorts[ns++] = ':';
			}
		}
	}
	t->lo[nlo] = (struct option){ NULL, 0, NULL, 0 };
	t->shorts[ns] = 0;
}

/* The entry for short option c: the subcommand's, else any. */
static int short_entry(int c, enum sfprof_subcmd cmd)
{
	int any = -1;

	for (size_t i = 0; i < sfprof_nr_optdefs; i++) {
		if (sfprof_optdefs[i].short_name != c)
			continue;
		if (takes(&sfprof_optdefs[i], cmd))
			return (int)i;
		if (any < 0)
			any = (int)i;
	}
	return any;
}

int sfprof_opts__parse(struct sfprof_opts *o, int argc, char **argv,
		       FILE *out, FILE *err)
{
	static struct opt_tables t;
	int c, ret;

	build_tables(&t, o->cmd);
	opterr = 0;
	optind = 0; /* full re-initialisation in glibc: parse may run twice */
	while ((c = getopt_long(argc, argv, t.shorts, t.lo, NULL)) != -1) {
		const struct sfprof_optdef *d;
		char nm[40], who[80];
		int i;

		if (c == ':')
			BAD("option '%s' needs a value (see --help)", argv[optind - 1]);
		if (c == '?') {
			if (optopt)
				BAD("unknown option '-%c' (see --help)", optopt);
			BAD("unknown option '%s' (see --help)", argv[optind - 1]);
		}
		i = c >= 0x100 ? t.idx[c - 0x100] : short_entry(c, o->cmd);
		if (i < 0)
			BAD("unknown option '-%c' (see --help)", c);
		d = &sfprof_optdefs[i];
		if (!takes(d, o->cmd)) {
			name_of(d, nm, sizeof(nm));
			takers(d->name, who, sizeof(who));
			if (o->cmd == SFPROF_CMD_LIVE)
				BAD("%s is not a live option (it is for: %s; see sfprof --help)", nm,
				    who);
			BAD("%s: %s is not a %s option (it is for: %s; see sfprof %s --help)",
			    cmd_name[o->cmd], nm, cmd_name[o->cmd], who, cmd_name[o->cmd]);
		}
		o->given[i / 64] |= 1ull << (i % 64);
		if (d->set) {
			ret = d->set(o, optarg, err);
			if (ret)
				return ret;
		} else {
			*(int *)((char *)o + d->flag_off) = 1;
		}
		if (o->help) {
			sfprof_opts__usage(o->cmd, out);
			return 0;
		}
		if (o->version) {
			sfprof_opts__print_version(out);
			o->help = 1;
			return 0;
		}
	}
	ret = take_operands(o, argc, argv, err);
	if (ret)
		return ret;
	if (o->per_thread && o->per_process)
		BAD("--per-thread and --per-process both choose the root: give one");
	if (o->interval_ns && (!o->output || !strcmp(o->output, "-")))
		BAD("--interval writes a file per interval: give -o FILE (%%t: the start)");
	if (o->interval_ns && interval__check_template(o->output))
		BAD("-o: unknown %% escape in '%s' (%%t, %%p and %%%% are known)", o->output);
	if (o->interval_ns && (o->event & (o->event - 1)))
		BAD("--interval writes one event's profiles: give one -e");
	if (o->cmd == SFPROF_CMD_LIVE && (o->event & (o->event - 1)) &&
	    (!o->output || !strcmp(o->output, "-")))
		BAD("several events write one output each, named after -o FILE: give -o "
		    "(prof.svg -> prof.cpu.svg, prof.futex.svg...)");
	if (o->cmd != SFPROF_CMD_SFRAME_DUMP && o->output && (ret = check_outputs(o, err)))
		return ret;
	if (o->cmd == SFPROF_CMD_RECORD && !o->output)
		return check_outputs(o, err);
	if ((ret = check_formats(o, err)))
		return ret;
	/* report: the capture says what it holds; checked once it is open */
	if (o->cmd != SFPROF_CMD_REPORT || o->event_given)
		return sfprof_opts__check_events(o, err);
	return 0;
}

uint32_t sfprof_opts__ring_mb(const struct sfprof_opts *o)
{
	if (o->ring_mb)
		return o->ring_mb;
	return o->interval_ns ? 4 : 16;
}

int sfprof_opts__check_output(const struct sfprof_opts *o, FILE *err)
{
	int ret = profile__check_output(o->output);
	const char *why;

	switch (ret) {
	case 0: return 0;
	case -ENOENT: why = "its directory does not exist"; break;
	case -ENOTDIR: why = "a part of its directory is not a directory"; break;
	case -EACCES: case -EPERM: case -EROFS: why = "its directory is not writable"; break;
	case -EISDIR: why = "it is a directory (give a file name)"; break;
	default: why = strerror(-ret);
	}
	fprintf(err, "sfprof: -o %s: cannot write there: %s\n", o->output, why);
	return ret;
}
