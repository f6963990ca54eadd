// SPDX-License-Identifier: MIT
/*
 * --interval (and the agent's slices): the live sink's profiles cut by
 * the events' timestamps, one per interval, each written (or handed to
 * the slice hook) once the events stamped before its end are all in.
 * report_sink.c makes the pipelines and hands each event here to pick
 * the interval it belongs to.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/interval.h"
#include "output/progress.h"
#include "session/report_sink_int.h"
#include "util.h"

/* --interval: an interval is written this long after its end, when the
 * events stamped before its end have all been drained */
#define REPORT_SINK_INTERVAL_SLACK_NS (100 * 1000000ull)

/*
 * --interval: the heap the binaries' unwind tables, symbol tables and
 * DWARF lines may fill, and the RSS (ring buffer's two mappings and the
 * binaries' file pages read included), before the least recently used
 * binary's are freed (it stays mapped; its next lookup makes them again).
 * A whole machine maps more code with debug info than fits (BENCHMARKS.md,
 * agent memory: 110-240 MiB of heap before, two thirds of it libdw's line
 * tables, and 20-60 MiB of pages of big binaries' files). Checked every
 * REPORT_SINK_HEAP_EVENTS events (one binary's lines can take tens of MiB
 * in one drain) and once a second on the drain timer (mallinfo2 walks
 * malloc's free lists: not at 40 drains a second); freed down to three
 * quarters of each.
 */
#define REPORT_SINK_HEAP_BUDGET (40ull << 20)
#define REPORT_SINK_RSS_BUDGET (92ull << 20)
/* The target the budget is for (100 MB, ring included): past it even the
 * binaries of the last second's samples are freed, and made again at
 * their next use (counted: dso_shed_hot). */
#define REPORT_SINK_RSS_HARD (100ull * 1000 * 1000)
#define REPORT_SINK_HEAP_EVENTS 256
/* ... and after every REPORT_SINK_HEAP_DWARF addresses resolved through
 * libdw: a burst of new binaries' first samples decodes their line
 * tables and faults in their DWARF images (six 80 MB binaries with 44 MB
 * of DWARF each took the agent to 535-672 MiB within 256 events;
 * BENCHMARKS.md, DWARF burst) */
#define REPORT_SINK_HEAP_DWARF 16
#define REPORT_SINK_HEAP_EVERY_NS (1000 * 1000000ull)

volatile sig_atomic_t report_sink_cut_requested;

/* Bytes malloc gave out and has not got back (mmapped chunks too). */
static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

/* This process's resident bytes (/proc/self/statm), 0 if unknown. */
static size_t rss_bytes(void)
{
	char buf[128];
	unsigned long long size, res;
	ssize_t n;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return 0;
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static int heap_over(int low)
{
	return heap_in_use() > (low ? REPORT_SINK_HEAP_BUDGET / 4 * 3 : REPORT_SINK_HEAP_BUDGET);
}

static int over_budget(int low)
{
	size_t r = low ? REPORT_SINK_RSS_BUDGET / 4 * 3 : REPORT_SINK_RSS_BUDGET;

	return heap_over(low) || rss_bytes() > r;
}

/*
 * Close libdw's handles of the binaries last used before `before`,
 * oldest first, while over the budget: what costs no answer (every
 * address named so far keeps its names; only a new one opens the DWARF
 * again). Freed heap is given back to the system (malloc_trim) once the
 * heap alone is under, then a handle at a time while the RSS is over.
 */
static size_t close_dwarf(struct dso_cache *c, uint64_t before)
{
	size_t n = 0;

	while (heap_over(1) && dso_cache__close_dwarf_oldest(c, before))
		n++;
	if (n)
		malloc_trim(0);
	while (over_budget(1) && dso_cache__close_dwarf_oldest(c, before)) {
		malloc_trim(0);
		n++;
	}
	return n;
}

/* The pipelines forget what their caches point to in binaries, before
 * one is shed (as at an interval's end). */
static void forget_binaries(struct report_sink *s)
{
	for (int i = 0; i < SINK_EVENTS; i++) {
		if (s->stackss[i])
			stacks__forget_binaries(s->stackss[i]);
		if (s->next_stacks[i])
			stacks__forget_binaries(s->next_stacks[i]);
	}
}

/*
 * Keep the heap under REPORT_SINK_HEAP_BUDGET: free the least recently
 * used binaries' tables, symbols and lines until it is under three
 * quarters of it (hysteresis, so a working set near the budget does not
 * free and remake every second). The pipelines forget what their caches
 * point to in binaries first, as at an interval's end.
 */
static void interval_bound_heap(struct report_sink *s)
{
	struct dso_cache *c = proc_cache__dsos(s->pc);
	uint64_t before = s->heap_clock;
	size_t shed = 0;

	/* binaries used since the last check are the working set: kept */
	s->heap_events = 0;
	s->heap_clock = dso_cache__use_clock(c);
	s->heap_dwarf = dso_cache__dwarf_work(c);
	if (!over_budget(0))
		return;
	/* first what costs no remake: the DWARF images' pages mapped from
	 * the cache (page faults at their next lookups), then libdw's
	 * handles (a new address's CU decoded again) */
	dso_cache__trim_dwarf(c);
	close_dwarf(c, before);
	if (over_budget(1))
		forget_binaries(s);
	while (over_budget(1) && dso_cache__shed_oldest(c, before, before))
		shed++;
	/* libdw's and the tables' blocks back to the system, not only to
	 * malloc's free lists: RSS is what the budget is for */
	if (shed)
		malloc_trim(0);
	/* The working set alone is over the target (a Go compile and a cc1
	 * with all their DWARF sampled in one second): free it too, oldest
	 * first, about as much heap as the RSS is over the budget. Nothing
	 * is lost (each is made again at its next use): a remake costs CPU,
	 * counted as dso_shed_hot. */
	size_t rss = rss_bytes();

	if (rss > REPORT_SINK_RSS_HARD && close_dwarf(c, UINT64_MAX))
		rss = rss_bytes(); /* the working set's handles went first */
	if (rss > REPORT_SINK_RSS_HARD) {
		size_t heap = heap_in_use(), over = rss - REPORT_SINK_RSS_BUDGET;
		size_t target = heap > over ? heap - over : 0, hot = 0;

		forget_binaries(s);
		while (heap_in_use() > target && rss_bytes() > REPORT_SINK_RSS_BUDGET &&
		       dso_cache__shed_oldest(c, UINT64_MAX, before))
			hot++;
		if (hot)
			malloc_trim(0);
	}
}

/* The output name of the interval that starts at mono (ns). */
static int interval_path(struct report_sink *s, uint64_t mono, char *buf, size_t size)
{
	const struct profile *p = s->profs[s->iv_idx];
	const struct profile_meta *m = p ? profile__meta(p) : NULL;
	uint32_t pid = m && m->target_pid ? m->target_pid : (uint32_t)getpid();

	return interval__expand_path(buf, size, s->o.output,
				     (uint64_t)((int64_t)mono + s->unix_minus_mono), pid);
}

/* Write event idx's current interval [iv_start, end) (or hand it to the
 * slice hook) and free it. */
static int interval_write(struct report_sink *s, int idx, uint64_t end)
{
	struct profile **prof = &s->profs[idx];
	struct stacks **stk = &s->stackss[idx];
	char path[4096];
	int err;

	if (!*prof)
		return 0;
	profile__set_duration(*prof, end > s->iv_start ? end - s->iv_start : 0);
	err = *stk ? stacks__flush(*stk) : 0;
	if (s->slice_fn) {
		struct stacks_stats ss;

		if (*stk && !err) {
			stacks__stats(*stk, &ss);
			s->slice_fn(s->slice_ctx, 1u << idx, *prof, s->iv_start, end, &ss);
			*prof = NULL; /* the hook's now */
			s->iv_written++;
		}
		goto out;
	}
	if (!err)
		err = interval_path(s, s->iv_start, path, sizeof(path));
	/* another interval began in the same second: number this one
	 * (without %t, each interval replaces the last on purpose) */
	if (!err && strstr(s->o.output, "%t") && !strcmp(path, s->iv_last)) {
		err = interval__number_path(path, sizeof(path), ++s->iv_same + 1);
	} else if (!err) {
		snprintf(s->iv_last, sizeof(s->iv_last), "%s", path);
		s->iv_same = 0;
	}
	if (!err) {
		struct sfprof_opts one = s->o;

		one.output = path;
		err = report__write_profile(*prof, &one);
	} else {
		fprintf(stderr, "sfprof: -o %s: %s\n", s->o.output, util__strerror(err));
	}
	if (!err)
		s->iv_written++;
out:
	stacks__free(*stk);
	profile__free(*prof);
	*stk = NULL;
	*prof = NULL;
	return err;
}

/*
 * End the current interval: write it (each event's), and make the next
 * one current (the one its late events already went to, or a new empty
 * one). The next interval starts where this one ended, so every event
 * lands in exactly one profile, cut by its timestamp.
 */
static int interval_rotate(struct report_sink *s)
{
	struct profile *nprof[SINK_EVENTS] = { NULL };
	struct stacks *nstk[SINK_EVENTS] = { NULL };
	struct profile_meta meta;
	int err = 0, nerr = 0, werr;

	for (int i = 0; i < SINK_EVENTS; i++) {
		if (!s->profs[i])
			continue;
		/* the next interval's pipeline, when no event made it yet:
		 * made before this one is written and freed, since the
		 * meta's strings (comm, command line) live in this profile */
		if (!s->next_prof[i]) {
			meta = *profile__meta(s->profs[i]);
			meta.start_unix_ns = (uint64_t)((int64_t)s->iv_end + s->unix_minus_mono);
			meta.duration_ns = 0;
			if (report_sink__pipeline(s, i, &meta, &nprof[i], &nstk[i]))
				nerr = -ENOMEM;
		}
		werr = interval_write(s, i, s->iv_end);
		if (werr && !err)
			err = werr;
	}
	s->iv_start = s->iv_end;
	s->iv_end = s->iv_start + s->o.interval_ns;
	/*
	 * Free the binaries no process maps any more, so a long run stays
	 * flat. The written pipelines are gone; a next one that events
	 * came for already (a busy target: nearly always) forgets what its
	 * caches point to in them first.
	 */
	for (int i = 0; i < SINK_EVENTS; i++) {
		if (s->next_prof[i]) {
			s->profs[i] = s->next_prof[i];
			s->stackss[i] = s->next_stacks[i];
			s->next_prof[i] = NULL;
			s->next_stacks[i] = NULL;
			stacks__forget_binaries(s->stackss[i]);
		} else if (nprof[i]) {
			s->profs[i] = nprof[i];
			s->stackss[i] = nstk[i];
		}
	}
	proc_cache__evict_unused(s->pc);
	return nerr ? nerr : err;
}

static int has_next(const struct report_sink *s)
{
	for (int i = 0; i < SINK_EVENTS; i++)
		if (s->next_prof[i])
			return 1;
	return 0;
}

/* Which pipeline an event belongs to: the current interval's, or the
 * next one's when it is stamped at or after the current one's end. */
struct stacks *report_interval__stacks(struct report_sink *s, int idx,
				       const struct sfprof_event *e, struct stacks *cur)
{
	struct profile_meta meta;

	if (!s->o.interval_ns)
		return cur;
	if (++s->heap_events >= REPORT_SINK_HEAP_EVENTS ||
	    dso_cache__dwarf_work(proc_cache__dsos(s->pc)) - s->heap_dwarf >= REPORT_SINK_HEAP_DWARF)
		interval_bound_heap(s);
	if (e->ts_ns < s->iv_end)
		return cur;
	if (!s->next_prof[idx]) {
		meta = *profile__meta(s->profs[idx]);
		meta.start_unix_ns = (uint64_t)((int64_t)s->iv_end + s->unix_minus_mono);
		if (report_sink__pipeline(s, idx, &meta, &s->next_prof[idx], &s->next_stacks[idx]))
			return NULL;
	}
	return s->next_stacks[idx];
}

/*
 * The first interval's pipeline before its first event: an idle target
 * still gets a profile per interval (with no samples), so every interval
 * of the run is on disk and a gap means sfprof was not running. Its comm
 * is the command's name, or the first target's from /proc (none with -a).
 */
static struct stacks *interval_first(struct report_sink *s)
{
	struct sfprof_event e0;
	char path[64];
	ssize_t n = -1;
	int fd;

	memset(&e0, 0, sizeof(e0));
	e0.pid = s->iv_pid ? s->iv_pid : s->o.nr_pids ? (uint32_t)s->o.pids[0] : 0;
	if (s->o.command && s->o.command[0]) {
		/* the kernel's comm after exec: the file's name, 15 bytes */
		const char *base = strrchr(s->o.command[0], '/');

		base = base ? base + 1 : s->o.command[0];
		snprintf(e0.comm, sizeof(e0.comm), "%.*s", (int)sizeof(e0.comm) - 1, base);
	} else if (e0.pid) {
		snprintf(path, sizeof(path), "/proc/%u/comm", e0.pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, e0.comm, sizeof(e0.comm));
			close(fd);
		}
		/* "name\n", at most 15 bytes of name */
		for (ssize_t i = 0; i < n; i++)
			if (e0.comm[i] == '\n')
				e0.comm[i] = 0;
	}
	return report_sink__stacks(s, s->iv_idx, &e0);
}

void report_interval__drained(struct report_sink *s, uint64_t now_ns)
{
	if (s->o.interval_ns && !s->record && !s->profs[s->iv_idx] &&
	    now_ns >= s->iv_end && !interval_first(s) && !s->iv_err)
		s->iv_err = -ENOMEM;
	if (s->o.interval_ns && !s->record && s->profs[s->iv_idx]) {
		/* SIGHUP: the current interval ends now (the next one, if
		 * events for it came already, began at the old end) */
		if (report_sink_cut_requested) {
			report_sink_cut_requested = 0;
			if (!has_next(s) && now_ns > s->iv_start && now_ns < s->iv_end)
				s->iv_end = now_ns;
		}
		while (now_ns >= s->iv_end + REPORT_SINK_INTERVAL_SLACK_NS) {
			int err = interval_rotate(s);

			if (err && !s->iv_err)
				s->iv_err = err;
			if (err == -ENOMEM)
				break;
		}
	}
	if (s->o.interval_ns && !s->record && now_ns >= s->heap_at + REPORT_SINK_HEAP_EVERY_NS) {
		s->heap_at = now_ns;
		interval_bound_heap(s);
	}
}

int report_interval__finish(struct report_sink *s, const struct sfprof_opts *o,
			    const struct capture_stats *st)
{
	/* the last, partial interval (and the one after it, if its
	 * events came before this one was due) */
	uint64_t now = util__now_ns();
	int err;

	if (!s->profs[s->iv_idx]) {
		struct sfprof_event e0;

		memset(&e0, 0, sizeof(e0));
		e0.pid = o->nr_pids ? (uint32_t)o->pids[0] : 0;
		if (!report_sink__stacks(s, s->iv_idx, &e0))
			return -ENOMEM;
	}
	if (has_next(s)) {
		err = interval_rotate(s);
		if (!s->iv_err)
			s->iv_err = err;
	}
	for (int i = 0; i < SINK_EVENTS; i++) {
		err = interval_write(s, i, now > s->iv_end ? s->iv_end : now);
		if (!s->iv_err)
			s->iv_err = err;
	}
	proc_cache__for_each_problem(s->pc, report__print_problem, NULL);
	if (o->stats) {
		fprintf(stderr, "intervals_written: %" PRIu64 "\n", s->iv_written);
		report_sink__print_stats(s);
	}
	if (!s->iv_err && !o->quiet) {
		char what[64];

		snprintf(what, sizeof(what), "interval profiles of %" PRIu64 " events",
			 st ? st->events_cpu + st->events_futex + st->events_offcpu : 0);
		progress__summary(stderr, 0, o->output, s->iv_written, what,
				  st ? capture_stats__lost(st) : 0);
	}
	return s->iv_err ? REPORT_E_REPORTED : 0;
}
