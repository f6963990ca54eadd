// SPDX-License-Identifier: MIT
/*
 * `sfprof diff BASE NEW`: a differential profile of two folded files or
 * captures (a capture goes through report's pipeline). Widths follow NEW;
 * the SVG colours growth red and shrinkage blue with BASE scaled to NEW's
 * total (flamegraph.pl's difffolded.pl -n); folded writes "stack BASE NEW";
 * pprof holds NEW plus BASE negated (pprof -diff_base). src/output/diff.c,
 * svg.c and pprof.c write them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "cli/cmd.h"
#include "cli/options.h"
#include "output/output.h"
#include "profile/profile.h"
#include "session/report.h"

/* 1 if path starts with the capture magic, 0 if not, -errno */
static int is_capture(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rbe");
	size_t n;

	if (!f)
		return -errno;
	n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == sizeof(magic) && !memcmp(magic, CAPFILE_MAGIC, sizeof(magic));
}

/* BASE or NEW as a profile; an exit status (0 ok), the error said. */
static int load(const struct sfprof_opts *o, const char *path, struct profile **out)
{
	struct profile_meta meta = { .kind = PROFILE_CPU };
	size_t bad = 0;
	FILE *f;
	int err = is_capture(path);

	*out = NULL;
	if (err < 0) {
		fprintf(stderr, "sfprof: diff: %s: %s\n", path, strerror(-err));
		return err == -ENOENT ? SFPROF_EXIT_USAGE : 1;
	}
	if (err) {
		struct profile *prof[REPORT_EVENTS];
		uint32_t sel;
		int st = report__capture(o, path, prof, &sel), i;

		if (st)
			return st;
		if (sel & (sel - 1)) {
			for (i = 0; i < REPORT_EVENTS; i++)
				profile__free(prof[i]);
			fprintf(stderr, "sfprof: diff: %s holds several events: choose one with -e\n",
				path);
			return SFPROF_EXIT_USAGE;
		}
		for (i = 0; i < REPORT_EVENTS && !prof[i]; i++)
			;
		*out = i < REPORT_EVENTS ? prof[i] : NULL;
		return *out ? 0 : 1;
	}
	/* folded: counts, whatever they count */
	f = fopen(path, "re");
	*out = f ? profile__new(&meta) : NULL;
	if (!*out) {
		fprintf(stderr, "sfprof: diff: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	err = profile__read_folded(*out, f, &bad);
	fclose(f);
	if (err == -EINVAL) {
		fprintf(stderr, "sfprof: diff: %s:%zu: not folded stacks ('frame;frame COUNT') "
			"nor a capture\n", path, bad);
		return SFPROF_EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, "sfprof: diff: %s: %s\n", path, strerror(-err));
		return 1;
	}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct sfprof_opts o;
	struct profile *base = NULL, *cur = NULL;
	struct profile_render r = { 0 };
	int status;

	sfprof_opts__init(&o, SFPROF_CMD_DIFF);
	if (sfprof_opts__parse(&o, argc, argv, stdout, stderr))
		return SFPROF_EXIT_USAGE;
	if (o.help)
		return 0;
	if (sfprof_opts__check_output(&o, stderr))
		return SFPROF_EXIT_USAGE;
	if (o.flamechart) {
		fprintf(stderr, "sfprof: diff: --flamechart draws one run in time order; a diff "
			"compares sums: use report --flamechart on each capture\n");
		return SFPROF_EXIT_USAGE;
	}
	status = load(&o, o.diff_base, &base);
	if (!status)
		status = load(&o, o.input, &cur);
	if (!status && profile__meta(base)->kind != profile__meta(cur)->kind) {
		fprintf(stderr, "sfprof: diff: %s and %s measure different things (samples and "
			"wait time): compare two of a kind\n", o.diff_base, o.input);
		status = SFPROF_EXIT_USAGE;
	}
	if (!status) {
		r.title = o.title ? o.title : "Differential flame graph: NEW against BASE";
		r.inverted = o.inverted;
		r.reverse = o.reverse;
		r.width = o.svg_width;
		r.subtitle = o.subtitle;
		r.countname = o.countname;
		r.min_px = o.min_px;
		r.min_pct = o.min_pct;
		r.palette = o.palette;
		r.hash = o.svg_hash;
		r.diff_base = base;
		if (profile__set_render(cur, &r)) {
			fprintf(stderr, "sfprof: diff: out of memory\n");
			status = 1;
		}
	}
	if (!status) {
		int err = profile__write(cur, o.format, o.output);

		if (err) {
			fprintf(stderr, "sfprof: writing %s: %s\n", o.output ? o.output : "stdout",
				strerror(-err));
			status = 1;
		}
	}
	profile__free(cur);
	profile__free(base);
	return status;
}
