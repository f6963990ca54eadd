/* SPDX-License-Identifier: MIT */
/*
 * One-line status on a terminal during long runs:
 *   sfprof: 12s/30s  events 12,345  lost 0  rate 1,023/s
 * refreshed at most about once a second, rewritten in place with '\r',
 * and only when the stream is a terminal and the user did not ask for
 * --quiet. Otherwise every call is a cheap no-op, so the capture loop can
 * call progress__update() on every drain without checking anything.
 */
#ifndef SFPROF_PROGRESS_H
#define SFPROF_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct progress;

/*
 * f: where to print (stderr); active only if isatty(fileno(f)) and !quiet.
 * duration_ns: planned run length (-d), 0 if open-ended.
 * NULL + errno (ENOMEM) on failure.
 */
struct progress *progress__new(FILE *f, int quiet, uint64_t duration_ns);

/* Nonzero if this progress prints anything at all. */
int progress__active(const struct progress *pg);

/*
 * Report totals so far (events seen, events lost). Prints when at least
 * ~1 s passed since the last line. NULL pg is a no-op.
 */
void progress__update(struct progress *pg, uint64_t events, uint64_t lost);

/* Erase the status line (before the final summary). NULL is a no-op. */
void progress__end(struct progress *pg);

void progress__free(struct progress *pg); /* calls progress__end; NULL ok */

/*
 * The end-of-run line, as perf and py-spy print one:
 *   sfprof: wrote prof.svg: 1,234 samples, 0 lost
 * (path NULL or "-": "stdout"; what: "samples", "waits", "events"...),
 * then, when lost > 0, a warning that the profile under-counts and what
 * helps. lost PROGRESS_LOST_UNKNOWN (report: the capture's run is
 * over): no count. Nothing when quiet.
 */
#define PROGRESS_LOST_UNKNOWN UINT64_MAX
void progress__summary(FILE *f, int quiet, const char *path, uint64_t n, const char *what,
		       uint64_t lost);

#endif
