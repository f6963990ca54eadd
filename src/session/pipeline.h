/* SPDX-License-Identifier: MIT */
/*
 * One pipeline for every way sfprof runs (live, record, replay of a
 * capture, the agent): the runtimes' sessions, and per event kind the
 * profile and the stacks that fill it, made by one rule. report_sink.c
 * (live, record, agent) and cli/cmd_report.c (replay) feed it events;
 * nothing else builds a stacks pipeline.
 *
 * A sample's path: capture/ (ring buffer) -> report_sink__event ->
 * stacks__add_event (stacks/: unwind, name, merge runtime frames) ->
 * profile__add (profile/) -> report_out.c's writers (output/).
 */
#ifndef SFPROF_SESSION_PIPELINE_H
#define SFPROF_SESSION_PIPELINE_H

#include <stdint.h>

#include "symbols/ksyms.h"
#include "cli/options.h"
#include "profile/profile.h"
#include "runtimes/runtime.h"
#include "stacks/stacks.h"

enum pipeline_mode {
	PIPELINE_LIVE,	 /* sfprof [-o FILE]: events to profiles now */
	PIPELINE_RECORD, /* sfprof record: events resolved and written out */
	PIPELINE_REPLAY, /* sfprof report: a capture's events to profiles */
	PIPELINE_AGENT,	 /* sfprof agent: live, cut into retention slices */
};

struct jitmaps;

struct pipeline {
	enum pipeline_mode mode;
	struct sfprof_opts o;
	uint32_t hz;		/* samples a second: the wall weight of a cpu sample */
	struct proc_cache *pc;	/* the processes' model (not owned) */
	struct ksyms *ksyms;	/* kernel names (not owned) */
	/* each runtime's session, by its table index (NULL: none in this
	 * run, e.g. --no-python; offline, a runtime named through another's
	 * session, names_from, has none of its own) */
	void *rt_session[RUNTIME_MAX];
	/* set by the caller before the first pipeline__make; applied to each
	 * stacks made (NULL: none) */
	stacks_thread_top_fn thread_top;	/* live: frame tops to the capture */
	void *thread_top_ctx;
	stacks_label_fn labeler;		/* the agent's sample labels */
	void *labeler_ctx;
	stacks_pytramp_fn pytramp_writer;	/* record: trampolines to the capture */
	void *pytramp_ctx;
	struct jitmaps *jit;			/* replay: the capture's JIT names */
	int no_profile;				/* benchmarks: unwind, do not aggregate */
};

/* The mode a command runs the pipeline in. */
enum pipeline_mode pipeline__mode(const struct sfprof_opts *o);

/* Make the runtimes' sessions for mode (live ones read the targets; a
 * replay's read the capture's records). 0 or -ENOMEM (then
 * pipeline__release frees what was made). */
int pipeline__init(struct pipeline *p, enum pipeline_mode mode, const struct sfprof_opts *o,
		   uint32_t hz, struct proc_cache *pc, struct ksyms *ksyms);
void pipeline__release(struct pipeline *p);

/* The stacks options of event index idx (SFPROF_SEL_* is 1 << idx). */
struct stacks_opts pipeline__stacks_opts(const struct pipeline *p, int idx);

/* A profile for meta and the stacks of event idx that fill it, wired to
 * the sessions' namers and the caller's hooks: 0, or -ENOMEM with both
 * NULL. */
int pipeline__make(struct pipeline *p, int idx, const struct profile_meta *meta,
		   struct profile **prof, struct stacks **stacks);

/* Each runtime r that has a session ss in pipeline p, in table order. */
#define pipeline_for_each_session(p, r, ss)                                      \
	for (size_t ss##_i = 0; ss##_i < runtime__count(); ss##_i++)             \
		for (const struct runtime_ops *r = runtime__get(ss##_i); r; r = NULL) \
			for (void *ss = (p)->rt_session[ss##_i]; ss; ss = NULL)

#endif
