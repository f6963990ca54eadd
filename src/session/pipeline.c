// SPDX-License-Identifier: MIT
/*
 * The pipeline every command builds its profiles with (pipeline.h): the
 * runtimes' sessions, and one rule for the stacks of each event kind, so
 * that live, record, replay and the agent cannot drift apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/pipeline.h"
#include "session/report.h"

enum pipeline_mode pipeline__mode(const struct sfprof_opts *o)
{
	switch (o->cmd) {
	case SFPROF_CMD_RECORD:
		return PIPELINE_RECORD;
	case SFPROF_CMD_REPORT:
	case SFPROF_CMD_DIFF:
		return PIPELINE_REPLAY;
	default:
		return PIPELINE_LIVE;
	}
}

static int is_live(const struct pipeline *p)
{
	return p->mode != PIPELINE_REPLAY;
}

/* The runtime whose session names runtime i's frames: its own, or
 * offline its names_from's (Ruby's and PHP's frames are named from the
 * capture's PYFRAME records, which CPython's session keeps). */
static int names_source(const struct pipeline *p, size_t i)
{
	const struct runtime_ops *r = runtime__get(i);

	if (is_live(p) || !r->names_from)
		return (int)i;
	return runtime__find(r->names_from);
}

int pipeline__init(struct pipeline *p, enum pipeline_mode mode, const struct sfprof_opts *o,
		   uint32_t hz, struct proc_cache *pc, struct ksyms *ksyms)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->o = *o;
	p->hz = hz;
	p->pc = pc;
	p->ksyms = ksyms;
	/* each session once, for the runtimes this run names (not --no-X) */
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *r = runtime__get(i), *src;
		int si;

		if (!r->session_new || (r->enabled && !r->enabled(o)))
			continue;
		si = names_source(p, i);
		if (si < 0 || p->rt_session[si] || !(src = runtime__get((size_t)si))->session_new)
			continue;
		if (src->session_new(is_live(p), &p->rt_session[si]))
			return -ENOMEM;
	}
	return 0;
}

void pipeline__release(struct pipeline *p)
{
	pipeline_for_each_session(p, r, ss)
		if (r->session_free)
			r->session_free(ss);
	memset(p->rt_session, 0, sizeof(p->rt_session));
}

struct stacks_opts pipeline__stacks_opts(const struct pipeline *p, int idx)
{
	const struct sfprof_opts *o = &p->o;
	struct stacks_opts so = {
		.kind = report__profile_kind(1u << idx),
		/* per thread unless asked otherwise, as the event says (wall) */
		.per_thread = o->per_thread ||
			      (report__event_per_thread(1u << idx) && !o->per_process),
		.period_ns = p->hz ? 1000000000ull / p->hz : 0,
		.per_process = o->per_process,
		.by_lock = o->by_lock,
		.kernel = o->kernel,
		.no_inline = o->no_inline,
		.no_profile = p->no_profile,
	};

	if (is_live(p)) {
		/* live: the pid is the process the map is for; record: the
		 * capture carries the JIT names */
		so.perf_maps = p->mode != PIPELINE_RECORD;
		so.jit_record = p->mode == PIPELINE_RECORD;
		/* (a runtime the options turn off reads nothing live) */
		for (size_t i = 0; i < runtime__count(); i++) {
			const struct runtime_ops *r = runtime__get(i);

			if (r->enabled && !r->enabled(o))
				so.runtimes_off |= 1u << i;
		}
	}
	return so;
}

/* Each runtime's namer into stk, from the session that names its frames. */
static void set_namers(const struct pipeline *p, struct stacks *stk)
{
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *r = runtime__get(i), *src;
		int si = names_source(p, i);
		runtime_name_fn fn;
		void *ctx;

		if (si < 0 || !p->rt_session[si] || (r->enabled && !r->enabled(&p->o)))
			continue;
		src = runtime__get((size_t)si);
		if (src->session_namer && (fn = src->session_namer(p->rt_session[si], &ctx)))
			stacks__set_namer(stk, i, fn, ctx);
	}
}

int pipeline__make(struct pipeline *p, int idx, const struct profile_meta *meta,
		   struct profile **prof, struct stacks **stacks)
{
	struct stacks_opts so = pipeline__stacks_opts(p, idx);

	*stacks = NULL;
	*prof = profile__new(meta);
	if (!*prof || (p->o.flamechart && profile__keep_order(*prof, REPORT_FLAMECHART_RUNS)))
		goto err_out;
	*stacks = stacks__new(p->pc, *prof, &so);
	if (!*stacks)
		goto err_out;
	stacks__set_ksym(*stacks, ksyms__name, p->ksyms);
	set_namers(p, *stacks);
	if (p->pytramp_writer &&
	    stacks__set_pytramp_writer(*stacks, p->pytramp_writer, p->pytramp_ctx))
		goto err_out;
	if (p->thread_top)
		stacks__set_thread_top(*stacks, p->thread_top, p->thread_top_ctx);
	if (p->labeler)
		stacks__set_labeler(*stacks, p->labeler, p->labeler_ctx);
	if (p->jit)
		stacks__set_jitmaps(*stacks, p->jit);
	return 0;

err_out:
	stacks__free(*stacks);
	profile__free(*prof);
	*stacks = NULL;
	*prof = NULL;
	return -ENOMEM;
}
