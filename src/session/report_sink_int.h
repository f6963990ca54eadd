/* SPDX-License-Identifier: MIT */
/*
 * The live and record sink's state, shared by its two files:
 * report_sink.c (the pipelines, record, the end of the run) and
 * report_interval.c (--interval's cut of the profiles by time).
 */
#ifndef SFPROF_REPORT_SINK_INT_H
#define SFPROF_REPORT_SINK_INT_H

#include <stdint.h>

#include "capfile/capfile.h"
#include "symbols/ksyms.h"
#include "session/report.h"
#include "session/pipeline.h"
#include "runtimes/runtime.h"
#include "stacks/stacks.h"

/* The events of a run, one profile each: SFPROF_SEL_* is 1 << index. */
#define SINK_EVENTS REPORT_EVENTS
#define sink_index report__event_index

struct report_sink {
	int record;
	struct proc_cache *pc;
	/* per event (sink_index), created at its first record */
	struct profile *profs[SINK_EVENTS];
	struct stacks *stackss[SINK_EVENTS];
	struct capfile_writer *w;
	struct capture *cap;
	struct ksyms ksyms;
	uint64_t start_mono;
	uint64_t attached_mono; /* the capture is attached: the profiled window opens */
	struct sfprof_opts o;
	const char *record_profile; /* SFPROF_RECORD_PROFILE */
	int create_procs; /* -a: a process first seen in the side-band is in scope */
	int werr;	  /* record: the first write error of an observed change */
	int failed;	  /* record: a write error was said (REPORT_E_REPORTED) */
	struct buildid_keeper *keeper; /* record: binaries for report */
	/* the runtimes' sessions and the rule that makes each event's
	 * profile and stacks (pipeline.h) */
	struct pipeline pl;
	/* --interval (one event, index iv_idx): profs/stackss[iv_idx] hold
	 * [iv_start, iv_end) (CLOCK_MONOTONIC, as event timestamps); events
	 * stamped later go to the next one, made when the first arrives,
	 * until the current one is written */
	int iv_idx;
	uint64_t iv_start, iv_end;
	struct profile *next_prof[SINK_EVENTS];
	struct stacks *next_stacks[SINK_EVENTS];
	report_slice_fn slice_fn; /* the agent: intervals go there, not to files */
	void *slice_ctx;
	int64_t unix_minus_mono; /* wall clock = monotonic + this */
	int iv_err;		 /* the first write error of an interval */
	uint64_t iv_written;
	uint32_t iv_pid;	 /* the first target (its comm names an idle start) */
	char iv_last[4096];	 /* the last interval's name, %t/%p expanded */
	unsigned iv_same;	 /* how many had that name */
	unsigned heap_events;	 /* events since the heap budget was checked */
	uint64_t heap_clock;	 /* the dsos' use clock at that check */
	uint64_t heap_dwarf;	 /* and their DWARF work (dso_cache__dwarf_work) */
	uint64_t heap_at;	 /* and when it was (drain time) */
};

/* Each runtime r that has a session ss in sink s, in the table's order. */
#define sink_for_each_session(s, r, ss) pipeline_for_each_session(&(s)->pl, r, ss)

/* report_sink.c: a profile of event `idx` for meta and its stacks
 * pipeline (0 or -ENOMEM); the profile and stacks of event `idx`, made at
 * its first record (NULL: -ENOMEM); the --stats lines. */
int report_sink__pipeline(struct report_sink *s, int idx, const struct profile_meta *meta,
			  struct profile **prof, struct stacks **stacks);
struct stacks *report_sink__stacks(struct report_sink *s, int idx,
				   const struct sfprof_event *e);
void report_sink__print_stats(struct report_sink *s);

/* report_interval.c, live with --interval only: the pipeline event e of
 * event idx goes to (cur's, or the next interval's: NULL on -ENOMEM);
 * after a drain at now_ns, write the intervals due; at the end, the last
 * ones (0, or REPORT_E_REPORTED). */
struct stacks *report_interval__stacks(struct report_sink *s, int idx,
				       const struct sfprof_event *e, struct stacks *cur);
void report_interval__drained(struct report_sink *s, uint64_t now_ns);
int report_interval__finish(struct report_sink *s, const struct sfprof_opts *o,
			    const struct capture_stats *st);

#endif
