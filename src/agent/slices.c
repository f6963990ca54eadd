// SPDX-License-Identifier: MIT
/*
 * The agent's memory: one profile per slice and event for the last
 * --retention seconds, oldest first. The capture's thread adds; HTTP
 * threads take references and read the profiles (never written once
 * added), so a merge runs without holding the lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "profile/profile_int.h"
#include "util.h"

/* a coarse slice being made, per event (the capture's thread only) */
struct coarse {
	struct profile *prof;
	uint64_t start, end, first_seq, last_seq;
};

struct agent_slices {
	struct coarse co[4];
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a slice came, or close */
	struct agent_slice **v;
	size_t nr, cap;
	uint64_t retention_ns, seq, newest_end, first_start;
	int closed;
};

struct agent_slices *agent_slices__new(uint64_t retention_ns)
{
	struct agent_slices *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->retention_ns = retention_ns;
	return s;
}

static void slice_free(struct agent_slice *sl)
{
	profile__free(sl->prof);
	free(sl);
}

void agent_slices__free(struct agent_slices *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr; i++)
		if (--s->v[i]->refs == 0)
			slice_free(s->v[i]);
	for (int i = 0; i < 4; i++)
		profile__free(s->co[i].prof);
	free(s->v);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* The coarse slice c of sel replaces the fine ones it was made of. */
static void publish(struct agent_slices *s, uint32_t sel, struct coarse *c)
{
	struct agent_slice *sl = calloc(1, sizeof(*sl)), *gone[64];
	size_t k = 0, ngone = 0, at = SIZE_MAX;

	if (!sl) {
		profile__free(c->prof);
		c->prof = NULL;
		return;
	}
	*sl = (struct agent_slice){ .prof = c->prof, .sel = sel, .coarse = 1,
				    .start_mono = c->start, .end_mono = c->end, .seq = c->last_seq,
				    .first_seq = c->first_seq, .refs = 1 };
	c->prof = NULL;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nr; i++) {
		struct agent_slice *f = s->v[i];

		if (f->sel == sel && !f->coarse && f->seq >= sl->first_seq && f->seq <= sl->seq &&
		    ngone < 64) {
			if (at == SIZE_MAX)
				at = k++; /* the coarse one takes the first one's place */
			if (--f->refs == 0)
				gone[ngone++] = f;
			continue;
		}
		s->v[k++] = f;
	}
	s->nr = k;
	if (at == SIZE_MAX) { /* all gone already (the retention) */
		pthread_mutex_unlock(&s->mu);
		slice_free(sl);
	} else {
		s->v[at] = sl;
		pthread_mutex_unlock(&s->mu);
	}
	for (size_t i = 0; i < ngone; i++)
		slice_free(gone[i]);
}

/*
 * The fine slices of sel that left the newest AGENT_FINE_NS go into the
 * coarse one being made (merged outside the lock: a slice is immutable),
 * which is published once it spans AGENT_COARSE_NS.
 */
static void coalesce(struct agent_slices *s, uint32_t sel)
{
	struct coarse *c = &s->co[__builtin_ctz(sel) & 3];
	struct agent_slice *aged[16];
	uint64_t dropped = 0;
	size_t n = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nr && n < 16; i++) {
		struct agent_slice *f = s->v[i];

		if (f->sel == sel && !f->coarse && f->seq > c->last_seq &&
		    f->end_mono + AGENT_FINE_NS <= s->newest_end) {
			f->refs++;
			aged[n++] = f;
		}
	}
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < n; i++) {
		struct agent_slice *f = aged[i];

		if (!c->prof) {
			c->prof = profile__new(profile__meta(f->prof));
			c->start = f->start_mono;
			c->first_seq = f->seq;
		}
		/* no memory for it: those fine slices stay as they are */
		if (c->prof && agent_profile__merge(c->prof, f->prof, NULL, AGENT_MERGE_MAX_STACKS,
						    &dropped)) {
			profile__free(c->prof);
			c->prof = NULL;
		}
		c->end = f->end_mono;
		c->last_seq = f->seq;
		agent_slices__put(s, f);
		if (c->prof && c->end - c->start >= AGENT_COARSE_NS) {
			profile__set_duration(c->prof, c->end - c->start);
			publish(s, sel, c);
		}
	}
}

int agent_slices__add(struct agent_slices *s, uint32_t sel, struct profile *prof,
		      uint64_t start_mono, uint64_t end_mono)
{
	struct agent_slice *sl = calloc(1, sizeof(*sl)), *old[64];
	size_t drop = 0, nold = 0;
	int err = 0;

	if (!sl) {
		profile__free(prof);
		return -ENOMEM;
	}
	*sl = (struct agent_slice){ .prof = prof, .sel = sel, .start_mono = start_mono,
				    .end_mono = end_mono, .refs = 1 };
	pthread_mutex_lock(&s->mu);
	if ((err = util__grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v)))) {
		pthread_mutex_unlock(&s->mu);
		slice_free(sl);
		return err;
	}
	sl->seq = sl->first_seq = ++s->seq;
	s->v[s->nr++] = sl;
	if (end_mono > s->newest_end)
		s->newest_end = end_mono;
	if (!s->first_start)
		s->first_start = start_mono;
	/* what ended more than the retention before the newest goes */
	while (drop < s->nr && drop < 64 && s->v[drop]->end_mono + s->retention_ns < s->newest_end)
		drop++;
	for (size_t i = 0; i < drop; i++)
		if (--s->v[i]->refs == 0)
			old[nold++] = s->v[i];
	memmove(s->v, s->v + drop, (s->nr - drop) * sizeof(*s->v));
	s->nr -= drop;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < nold; i++) /* freed outside the lock */
		slice_free(old[i]);
	coalesce(s, sel);
	return 0;
}

size_t agent_slices__get(struct agent_slices *s, uint32_t sel, uint64_t after_seq,
			 uint64_t from_mono, uint64_t to_mono, struct agent_slice **out,
			 size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nr && n < max; i++) {
		struct agent_slice *sl = s->v[i];

		if (sl->sel != sel || sl->first_seq <= after_seq || sl->end_mono <= from_mono ||
		    sl->end_mono > to_mono)
			continue;
		sl->refs++;
		out[n++] = sl;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

void agent_slices__put(struct agent_slices *s, struct agent_slice *sl)
{
	int last;

	pthread_mutex_lock(&s->mu);
	last = --sl->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last)
		slice_free(sl);
}

uint64_t agent_slices__newest_end(struct agent_slices *s, uint64_t *first_start)
{
	uint64_t e;

	pthread_mutex_lock(&s->mu);
	e = s->newest_end;
	if (first_start)
		*first_start = s->first_start;
	pthread_mutex_unlock(&s->mu);
	return e;
}

int agent_slices__wait(struct agent_slices *s, uint64_t mono, uint64_t deadline_mono)
{
	struct timespec ts = { .tv_sec = (time_t)(deadline_mono / 1000000000ull),
			       .tv_nsec = (long)(deadline_mono % 1000000000ull) };
	int ok;

	pthread_mutex_lock(&s->mu);
	while (s->newest_end < mono && !s->closed &&
	       pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0)
		;
	ok = s->newest_end >= mono;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

void agent_slices__close(struct agent_slices *s)
{
	pthread_mutex_lock(&s->mu);
	s->closed = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

int agent_slices__closed(struct agent_slices *s)
{
	int c;

	pthread_mutex_lock(&s->mu);
	c = s->closed;
	pthread_mutex_unlock(&s->mu);
	return c;
}

size_t agent_slices__count(struct agent_slices *s, uint64_t *stacks)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nr;
	*stacks = 0;
	for (size_t i = 0; i < s->nr; i++)
		*stacks += profile__nr_stacks(s->v[i]->prof);
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- merging ---- */

static int cgroup_match(const char *path, const char *prefix)
{
	size_t l = strlen(prefix);

	while (l > 1 && prefix[l - 1] == '/')
		l--;
	return path && !strncmp(path, prefix, l) && (path[l] == 0 || path[l] == '/' || l == 1);
}

static int stack_passes(const struct profile *src, const struct prof_stack *st,
			const struct agent_filter *f)
{
	if (!f)
		return 1;
	if (f->pid && (!st->has_labels || st->pid != f->pid))
		return 0;
	if (f->comm && (!st->has_labels || !st->process ||
			strcmp(prof__str(src, st->process), f->comm)))
		return 0;
	if (f->cgroup && (!st->has_labels || !st->cgroup ||
			  !cgroup_match(prof__str(src, st->cgroup), f->cgroup)))
		return 0;
	return 1;
}

static const char *str_or_null(const struct profile *p, uint32_t id)
{
	return id ? prof__str(p, id) : NULL;
}

int agent_profile__merge(struct profile *dst, const struct profile *src,
			 const struct agent_filter *f, size_t max_stacks, uint64_t *dropped)
{
	uint32_t nf, *ids = NULL;
	const struct prof_frame *frames = prof__frames(src, &nf);
	size_t ns, cap_ids = 0;
	const struct prof_stack *stacks = prof__stacks(src, &ns);
	const uint32_t *sids = prof__ids(src);
	int64_t *fmap = NULL;
	int err = 0;

	if (nf && !(fmap = malloc(nf * sizeof(*fmap))))
		return -ENOMEM;
	for (uint32_t i = 0; i < nf; i++)
		fmap[i] = -1;
	for (size_t i = 0; i < ns && !err; i++) {
		const struct prof_stack *st = &stacks[i];
		struct profile_labels l;

		if (!stack_passes(src, st, f))
			continue;
		if (profile__nr_stacks(dst) >= max_stacks) {
			(*dropped)++;
			continue;
		}
		if ((err = util__grow((void **)&ids, &cap_ids, st->n + 1, sizeof(*ids))))
			break;
		for (uint32_t k = 0; k < st->n && !err; k++) {
			uint32_t id = sids[st->off + k];
			const struct prof_frame *fr = &frames[id];

			if (fmap[id] < 0) {
				struct profile_frame pf = {
					.name = str_or_null(src, fr->name),
					.sys_name = str_or_null(src, fr->sys_name),
					.dso = str_or_null(src, fr->dso),
					.build_id = str_or_null(src, fr->build_id),
					.rel_addr = fr->rel_addr,
					.kind = fr->kind,
					.line = fr->line,
					.file = str_or_null(src, fr->file),
					.start_line = fr->start_line,
					.pid = fr->pid,
					.addr = fr->addr,
					.map_start = fr->map_start,
					.map_end = fr->map_end,
					.map_offset = fr->map_offset,
					.map_exec = fr->map_exec,
					.vm_shared = fr->vm_shared,
				};

				fmap[id] = profile__frame_id(dst, &pf);
				if (fmap[id] < 0)
					err = -ENOMEM;
			}
			ids[k] = (uint32_t)fmap[id];
		}
		if (err)
			break;
		l = (struct profile_labels){
			.pid = st->pid, .tid = st->tid,
			.thread = str_or_null(src, st->thread), .lock = str_or_null(src, st->lock),
			.lock_addr = st->lock_addr, .process = str_or_null(src, st->process),
			.exe = str_or_null(src, st->exe), .cgroup = str_or_null(src, st->cgroup),
			.container = str_or_null(src, st->container),
			.unit = str_or_null(src, st->unit),
		};
		err = profile__add_sample(dst, st->root ? prof__str(src, st->root) : NULL,
					  st->has_labels ? &l : NULL, ids, st->n, st->count,
					  st->weight);
	}
	free(ids);
	free(fmap);
	return err;
}
