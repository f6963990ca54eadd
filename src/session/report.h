/* SPDX-License-Identifier: MIT */
/*
 * The stacks pipeline as a capture sink, for src/cli/main.c: live runs (events
 * -> folded/SVG/pprof at the end) and `record` (events + the mappings they
 * need -> a capture file, capfile.h). `sfprof report` (src/cli/cmd_report.c)
 * reads such a file back through the same pipeline.
 *
 * record resolves every event's stack while the process lives (so a
 * library dlopen()ed mid-run is seen, and its mapping recorded before the
 * first event that needs it). For the tests, SFPROF_RECORD_PROFILE=PATH
 * makes record also write the folded profile of the events it recorded,
 * which `report` on the capture must reproduce exactly.
 *
 * Ownership: the sink owns its proc cache, profile and writer.
 */
#ifndef SFPROF_REPORT_H
#define SFPROF_REPORT_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "capture/capture.h"
#include "cli/options.h"
#include "profile/profile.h"
#include "capture/sideband.h"
#include "stacks/stacks.h"

struct report_sink;

/*
 * --interval SEC (live runs): one profile per interval, written to -o
 * with %t/%p expanded (interval.h) a little after the interval ends;
 * each event goes to the interval its timestamp falls in. Set this flag
 * (from a SIGHUP handler) to end the current interval at the next drain.
 * The last, partial interval is written by report_sink__finish().
 */
extern volatile sig_atomic_t report_sink_cut_requested;

/* o->cmd decides: SFPROF_CMD_RECORD writes o->output as a capture file.
 * NULL + errno (a message on stderr). */
struct report_sink *report_sink__new(const struct sfprof_opts *o);
/*
 * The agent's hook (src/agent/): with --interval, each interval's profile
 * of each event (sel, one SFPROF_SEL_* bit) goes to fn, which owns it,
 * instead of a file: [start_mono, end_mono) on CLOCK_MONOTONIC. labeler
 * (may be NULL) adds labels to every sample (stacks__set_labeler). Set
 * before the first event. st: the interval's unwinder counters (or NULL).
 * report_sink__proc_stats: the model's counters (processes, binaries).
 */
typedef void (*report_slice_fn)(void *ctx, uint32_t sel, struct profile *prof,
				uint64_t start_mono, uint64_t end_mono,
				const struct stacks_stats *st);
void report_sink__set_slice_hook(struct report_sink *s, report_slice_fn fn, void *ctx,
				 stacks_label_fn labeler, void *labeler_ctx);
void report_sink__proc_stats(const struct report_sink *s, struct proc_stats *out);
/* Kernel stacks (--kernel) are read from c; set it once it exists. */
void report_sink__set_capture(struct report_sink *s, struct capture *c);
/*
 * The run's processes that exist before it starts (-p's, the started
 * COMMAND): read from /proc now, and the model switched to changes in
 * order (the side-band and lifecycle records then keep it current).
 * 0 or -errno.
 */
/* --flamechart: the runs of one stack each profile keeps, in order
 * (16 bytes each; the weight after them is counted, not drawn) */
#define REPORT_FLAMECHART_RUNS (1u << 20)
int report_sink__add_targets(struct report_sink *s, const pid_t *pids, int n);
/* `-- COMMAND` is about to exec file (argv[0]), then has exec'd as pid:
 * runtimes that must know it from its first instruction (CPython's
 * start-up imports) read its image before and classify it after. */
void report_sink__starting(struct report_sink *s, const char *file);
void report_sink__started(struct report_sink *s, pid_t pid);
/* capture_event_fn: samples, waits, and FORK/EXIT records */
int report_sink__event(void *ctx, const struct sfprof_event *e, size_t len);
/*
 * The sink's functions return REPORT_E_REPORTED for an error they have
 * already explained on stderr (a full disk, naming the file): the caller
 * stops and fails without a second message.
 */
#define REPORT_E_REPORTED (-ECANCELED)

/* capture_sideband_fn: mapping changes, in order with the events */
int report_sink__sideband(void *ctx, const struct sideband_rec *r);
/* After each drain: free the state of processes gone long enough. */
void report_sink__drained(void *ctx, uint64_t now_ns);
/* Write the output (profile, or close the capture); --stats lines. */
int report_sink__finish(void *ctx, const struct sfprof_opts *o,
			const struct capture_stats *st);
void report_sink__free(struct report_sink *s);

/*
 * Whether -o PATH can be written (NULL and "-" are stdout): 0, or the
 * -errno / -UTIL_E_DEVICE after one line on stderr naming PATH. Run
 * before any work, so a refused device costs no profiling run.
 */
int report_output__check(const char *path);
/* Several events in sel write one file each named after PATH: refused
 * (-EINVAL, one line) when PATH is a device, FIFO or stdout, where no
 * sibling may be created. */
int report_output__check_events(const char *path, uint32_t sel);
/* The build-id cache directory of o (buf holds the default): NULL when
 * --no-buildid-cache or no default can be made. */
const char *report__buildid_dir(const struct sfprof_opts *o, char *buf, size_t size);
/* One size bound for the build-id cache's copies and the DWARF cache's
 * images (dwarf_image__cache_max), least recently used dropped first. */
void report__cache_trim(const struct sfprof_opts *o);
/* For report_sink and `report`: one line per binary that could not be
 * used (proc_problem_fn), and the profile written as -o/-f say. */
void report__print_problem(void *ctx, const char *path, const char *what, const char *detail);
int report__write_profile(struct profile *prof, const struct sfprof_opts *o);
/*
 * `sfprof report`'s pipeline without the writing: the capture at input
 * unwound into one profile per selected event, out[report__event_index]
 * (the others NULL; the caller frees them), as o asks (-e, default every
 * event the capture holds; roots, --no-demangle; --stats lines on
 * stderr); *sel gets the SFPROF_SEL_* bits reported. Returns an exit
 * status: 0, 1 (damaged file, no such events, out of memory), 2 (not a
 * capture, an option with no meaning for its event); every error said on
 * stderr.
 */
#define REPORT_EVENTS 4
int report__capture(const struct sfprof_opts *o, const char *input,
		    struct profile *out[REPORT_EVENTS], uint32_t *sel);

/* The single target's comm ("" when several or unknown), for META. */
void report__target_comm(const struct sfprof_opts *o, char *buf, size_t size);

/* One event (an SFPROF_SEL_* bit): its profile kind (PROFILE_*), and its
 * name as -e and capture files spell it ("cpu", "futex", "offcpu"). */
uint32_t report__profile_kind(uint32_t sel);
const char *report__event_name(uint32_t sel);
/* Its profile is per thread unless --per-process (wall's), and what a
 * profile of kind PROFILE_* counts, for the end-of-run line ("samples",
 * "waits", "blocks", "events"). */
bool report__event_per_thread(uint32_t sel);
const char *report__counted(uint32_t profile_kind);
/* The SFPROF_SEL_* bits of a name or a list ("cpu,futex"), 0 for an
 * unknown one. */
uint32_t report__event_sel(const char *name);
/*
 * Several events in one run write one output each, named after -o with
 * the event before the extension: prof.svg -> prof.cpu.svg, prof.pb.gz ->
 * prof.futex.pb.gz, prof -> prof.offcpu. report__event_path() writes that
 * name into buf (its length, or -ENAMETOOLONG); report__write_event_profile()
 * writes the profile of event `sel` where o says, so named when o->event
 * has several bits (the format then follows -o's extension or -f).
 */
/* The profile a record goes to: SFPROF_SEL_* == 1 << index. */
int report__event_index(const struct sfprof_event *e, uint32_t sel);
int report__event_path(char *buf, size_t size, const char *path, const char *event);
int report__write_event_profile(struct profile *prof, const struct sfprof_opts *o,
				uint32_t sel);

#endif
