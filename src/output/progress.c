// SPDX-License-Identifier: MIT
/*
 * One-line status on a terminal (src/output/progress.h). The line is
 * rewritten in place: "\r" + text + "\033[K" (erase to end of line), so
 * a shorter line never leaves debris, and erased with "\r\033[K" at the
 * end so the final summary starts on a clean line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/progress.h"
#include "util.h"

#define PROGRESS_INTERVAL_NS 1000000000ull

struct progress {
	FILE *f;
	int active;
	int shown; /* a status line is on screen */
	uint64_t duration_ns;
	uint64_t start_ns, last_ns;
	uint64_t last_events;
};

struct progress *progress__new(FILE *f, int quiet, uint64_t duration_ns)
{
	struct progress *pg = calloc(1, sizeof(*pg));

	if (!pg) {
		errno = ENOMEM;
		return NULL;
	}
	pg->f = f;
	pg->active = f && !quiet && isatty(fileno(f));
	pg->duration_ns = duration_ns;
	pg->start_ns = pg->last_ns = util__now_ns();
	return pg;
}

int progress__active(const struct progress *pg)
{
	return pg && pg->active;
}

void progress__update(struct progress *pg, uint64_t events, uint64_t lost)
{
	char ev[32], lo[32], rate[32], planned[32] = "";
	uint64_t now, dt;

	if (!pg || !pg->active)
		return;
	now = util__now_ns();
	dt = now - pg->last_ns;
	if (dt < PROGRESS_INTERVAL_NS)
		return;
	util__fmt_count(ev, sizeof(ev), events);
	util__fmt_count(lo, sizeof(lo), lost);
	util__fmt_count(rate, sizeof(rate),
			events >= pg->last_events ? (events - pg->last_events) * 1000000000ull / dt : 0);
	if (pg->duration_ns)
		snprintf(planned, sizeof(planned), "/%" PRIu64 "s",
			 (uint64_t)((pg->duration_ns + 999999999ull) / 1000000000ull));
	fprintf(pg->f, "\rsfprof: %" PRIu64 "s%s  events %s  lost %s  rate %s/s\033[K",
		(uint64_t)((now - pg->start_ns) / 1000000000ull), planned, ev, lo, rate);
	fflush(pg->f);
	pg->shown = 1;
	pg->last_ns = now;
	pg->last_events = events;
}

void progress__end(struct progress *pg)
{
	if (!pg || !pg->active || !pg->shown)
		return;
	fputs("\r\033[K", pg->f);
	fflush(pg->f);
	pg->shown = 0;
}

void progress__summary(FILE *f, int quiet, const char *path, uint64_t n, const char *what,
		       uint64_t lost)
{
	char nb[32], lb[32];

	if (quiet || !f)
		return;
	util__fmt_count(nb, sizeof(nb), n);
	util__fmt_count(lb, sizeof(lb), lost);
	fprintf(f, "sfprof: wrote %s: %s %s%s%s%s\n", !path || !strcmp(path, "-") ? "stdout" : path,
		nb, what, lost != PROGRESS_LOST_UNKNOWN ? ", " : "",
		lost != PROGRESS_LOST_UNKNOWN ? lb : "", lost != PROGRESS_LOST_UNKNOWN ? " lost" : "");
	if (lost && lost != PROGRESS_LOST_UNKNOWN)
		fprintf(f, "sfprof: warning: %s events lost (ring buffer full or stacks "
			"unreadable): the profile under-counts; --stats says which, a larger "
			"--ring-mb or a lower -F helps\n", lb);
}

void progress__free(struct progress *pg)
{
	if (!pg)
		return;
	progress__end(pg);
	free(pg);
}
