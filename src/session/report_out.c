// SPDX-License-Identifier: MIT
/*
 * What a report writes and where (src/session/report.h): output paths, one
 * per event kind; event names and selections; the profile written to its
 * file; problems printed. Used by `report` and by the live/record sink
 * (report_sink.c) alike, and independent of the sink's state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "symbols/dwarfimage.h"
#include "output/output.h"
#include "session/report.h"
#include "util.h"
/* Paths from a capture or /proc: escaped, they may hold any byte. */
void report__print_problem(void *ctx, const char *path, const char *what,
			  const char *detail)
{
	char p[1024], d[1024];

	(void)ctx;
	fprintf(stderr, "sfprof: %s: %s%s%s\n", util__escape(p, sizeof(p), path),
		what, detail && *detail ? ": " : "",
		util__escape(d, sizeof(d), detail ? detail : ""));
}

int report__write_profile(struct profile *prof, const struct sfprof_opts *o)
{
	struct profile_render r = { .title = o->title, .inverted = o->inverted,
				    .reverse = o->reverse, .width = o->svg_width,
				    .subtitle = o->subtitle, .countname = o->countname,
				    .min_px = o->min_px, .min_pct = o->min_pct,
				    .palette = o->palette, .hash = o->svg_hash,
				    .flamechart = o->flamechart };
	int err = profile__set_render(prof, &r);

	if (!err)
		err = profile__write(prof, o->format, o->output);

	if (err)
		fprintf(stderr, "sfprof: writing %s: %s\n",
			o->output ? o->output : "stdout", util__strerror(err));
	return err;
}

int report_output__check(const char *path)
{
	int err;

	if (!path || !strcmp(path, "-"))
		return 0;
	err = util__out_check(path);
	if (!err)
		err = profile__check_output(path); /* creates a file there: /proc */
	if (err)
		fprintf(stderr, "sfprof: -o %s: cannot write there: %s\n", path,
			util__strerror(err));
	return err;
}

int report_output__check_events(const char *path, uint32_t sel)
{
	if (!(sel & (sel - 1)) || !path || !strcmp(path, "-") || util__out_is_file(path))
		return 0;
	fprintf(stderr, "sfprof: -o %s is not a regular file, and several events make one file "
		"each beside it (%s.cpu...): give a file name, or one event with -e\n", path, path);
	return -EINVAL;
}

void report__cache_trim(const struct sfprof_opts *o)
{
	char bdir[4096], ddir[4096];
	const char *dirs[2] = {
		report__buildid_dir(o, bdir, sizeof(bdir)),
		dwarf_image__cache_dir(ddir, sizeof(ddir)) ? NULL : ddir,
	};

	dwarf_image__cache_trim_all(dirs, 2, dwarf_image__cache_max(), NULL);
}

const char *report__buildid_dir(const struct sfprof_opts *o, char *buf, size_t size)
{
	if (o->no_buildid_cache)
		return NULL;
	if (o->buildid_dir)
		return o->buildid_dir;
	return buildid_cache__default_dir(buf, size) ? NULL : buf;
}

/* The comm of a single target: COMMAND's as exec will set it (the base
 * name, at most 15 bytes), or -p PID's from /proc. "" when there is none. */
void report__target_comm(const struct sfprof_opts *o, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	if (o->command) {
		const char *b = strrchr(o->command[0], '/');

		snprintf(buf, size, "%.15s", b ? b + 1 : o->command[0]);
	} else if (o->nr_pids == 1 && !o->all && !o->cgroup) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)o->pids[0]);
		f = fopen(path, "re");
		if (f) {
			if (fgets(buf, (int)size, f))
				buf[strcspn(buf, "\n")] = 0;
			else
				buf[0] = 0;
			fclose(f);
		}
	}
}

/* Known output extensions, longest first (".pb.gz" before ".gz"). */
static const char *const out_exts[] = { ".pb.gz", ".folded", ".pprof", ".svg", ".txt", ".pb" };

int report__event_path(char *buf, size_t size, const char *path, const char *event)
{
	size_t len = strlen(path), base = len;
	int n;

	for (size_t i = 0; i < sizeof(out_exts) / sizeof(out_exts[0]); i++) {
		size_t el = strlen(out_exts[i]);
		const char *slash = strrchr(path, '/');

		/* an extension, not the whole file name */
		if (len > el && !strcmp(path + len - el, out_exts[i]) &&
		    (!slash || (size_t)(slash - path) + 1 < len - el)) {
			base = len - el;
			break;
		}
	}
	n = snprintf(buf, size, "%.*s.%s%s", (int)base, path, event, path + base);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}

int report__write_event_profile(struct profile *prof, const struct sfprof_opts *o,
				uint32_t sel)
{
	struct sfprof_opts one = *o;
	char path[4096];
	int err;

	/* one event: -o as given; several: one file each, named after -o */
	if (o->event & (o->event - 1)) {
		err = report__event_path(path, sizeof(path), o->output, report__event_name(sel));
		if (err < 0) {
			fprintf(stderr, "sfprof: -o %s: name too long\n", o->output);
			return err;
		}
		if (one.format == PROFILE_FMT_AUTO)
			one.format = profile_format__from_path(o->output);
		one.output = path;
	}
	return report__write_profile(prof, &one);
}


/*
 * The events a run profiles (-e), by index (SFPROF_SEL_* == 1 << index):
 * the name -e and capture files spell, the profile kind, what its
 * end-of-run line counts, the record kind its samples come as (wall's:
 * both CPU samples and blocks, by time), and whether its profile is per
 * thread unless --per-process says otherwise. A waker record
 * (SFPROF_EV_WAKER) belongs with the kind of block it ended.
 */
static const struct report_event {
	const char *name;
	uint32_t profile_kind; /* PROFILE_* */
	const char *counted;
	uint32_t record_kind; /* SFPROF_EV_*; 0: wall's two */
	bool per_thread;
} report_events[REPORT_EVENTS] = {
	{ "cpu", PROFILE_CPU, "samples", SFPROF_EV_CPU, false },
	{ "futex", PROFILE_FUTEX, "waits", SFPROF_EV_FUTEX, false },
	{ "offcpu", PROFILE_OFFCPU, "blocks", SFPROF_EV_OFFCPU, false },
	{ "wall", PROFILE_WALL, "events", 0, true },
};

/* sel's row (one SFPROF_SEL_* bit), else cpu's (index 0). */
static const struct report_event *report_event_of(uint32_t sel)
{
	for (int i = 0; i < REPORT_EVENTS; i++)
		if (sel == 1u << i)
			return &report_events[i];
	return &report_events[0];
}

uint32_t report__profile_kind(uint32_t sel)
{
	return report_event_of(sel)->profile_kind;
}

const char *report__event_name(uint32_t sel)
{
	return report_event_of(sel)->name;
}

bool report__event_per_thread(uint32_t sel)
{
	return report_event_of(sel)->per_thread;
}

const char *report__counted(uint32_t profile_kind)
{
	for (int i = 0; i < REPORT_EVENTS; i++)
		if (report_events[i].profile_kind == profile_kind)
			return report_events[i].counted;
	return report_events[0].counted;
}

uint32_t report__event_sel(const char *name)
{
	uint32_t sel = 0;

	while (*name) {
		size_t len = strcspn(name, ","), i;

		for (i = 0; i < REPORT_EVENTS; i++)
			if (strlen(report_events[i].name) == len &&
			    !strncmp(name, report_events[i].name, len))
				break;
		if (i == REPORT_EVENTS)
			return 0;
		sel |= 1u << i;
		name += len + (name[len] == ',');
	}
	return sel;
}

int report__event_index(const struct sfprof_event *e, uint32_t sel)
{
	/* a waker belongs with the block it ended */
	uint32_t kind = e->kind == SFPROF_EV_WAKER ? e->waker.of_kind : e->kind;

	for (int i = 0; i < REPORT_EVENTS; i++)
		if (sel == 1u << i && !report_events[i].record_kind)
			return i; /* wall: both kinds of record in one profile */
	for (int i = 0; i < REPORT_EVENTS; i++)
		if (report_events[i].record_kind && report_events[i].record_kind == kind)
			return i;
	return 0;
}
