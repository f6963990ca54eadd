// SPDX-License-Identifier: MIT
/*
 * Address spaces changed in order: fork, exec, mmap and exit as the
 * side-band and the lifecycle records tell them (src/model/proc.h,
 * "Changes in order"). Lookups and /proc reads are in src/model/proc.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/proc_int.h"

void proc_cache__set_ordered(struct proc_cache *pc, int on)
{
	pc->ordered = !!on;
}

void proc_cache__changes_lost(struct proc_cache *pc, uint64_t n)
{
	pc->changes_lost = 1;
	pc->st.changes_lost += n;
}

void proc_cache__set_observer(struct proc_cache *pc, proc_observer_fn fn, void *ctx)
{
	pc->observer = fn;
	pc->observer_ctx = ctx;
}

void proc__notify(struct proc_cache *pc, uint32_t what, uint32_t pid, uint32_t ppid,
		  uint64_t ts, const struct proc_mapping_rec *m)
{
	if (pc->observer)
		pc->observer(pc->observer_ctx, what, pid, ppid, ts, m);
}

size_t proc_cache__count(const struct proc_cache *pc)
{
	size_t n = 0;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (const struct proc *p = pc->procs[i]; p; p = p->next)
			n++;
	return n;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

/* Is s in keep[0..n) (sorted pointers)? */
static int ptr_kept(const void *s, const void *const *keep, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keep[mid] == s)
			return 1;
		if ((uintptr_t)keep[mid] < (uintptr_t)s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Free the interned paths no mapping, problem or option holds. */
static void sweep_strings(struct proc_cache *pc, const void **keep, size_t cap)
{
	size_t n = 0;

	uint64_t walk = proc_cache__walk(pc);

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *p = pc->procs[i]; p; p = p->next)
			for (size_t k = 0, first = proc__walk_first(p, walk); first && k < p->nr; k++)
				keep[n++] = p->maps[k].path;
	for (const struct problem *pr = pc->problems; pr && n < cap; pr = pr->next)
		keep[n++] = pr->path;
	if (pc->opts.debug_root)
		keep[n++] = pc->opts.debug_root;
	if (pc->opts.sysroot)
		keep[n++] = pc->opts.sysroot;
	qsort(keep, n, sizeof(*keep), ptr_cmp);
	for (size_t b = 0; b < STR_BUCKETS; b++) {
		struct str_node **pn = &pc->strs[b], *sn;

		while ((sn = *pn)) {
			if (ptr_kept(sn->s, keep, n)) {
				pn = &sn->next;
				continue;
			}
			*pn = sn->next;
			free(sn);
			pc->nr_strs--;
		}
	}
}

size_t proc_cache__evict_unused(struct proc_cache *pc)
{
	const struct dso **keep = NULL;
	size_t n = 0, cap = 0, nprob = 0, freed;

	/* what is mapped (and this process's own vdso), sorted */
	uint64_t walk = proc_cache__walk(pc);

	/* a shared array once */
	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *p = pc->procs[i]; p; p = p->next)
			if (proc__walk_first(p, walk))
				cap += p->nr;
	for (const struct problem *pr = pc->problems; pr; pr = pr->next)
		nprob++;
	keep = malloc((cap + nprob + 2) * sizeof(*keep));
	if (!keep)
		return 0; /* nothing freed: still correct */
	walk = proc_cache__walk(pc);
	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *p = pc->procs[i]; p; p = p->next)
			for (size_t k = 0, first = proc__walk_first(p, walk); first && k < p->nr; k++)
				if (p->maps[k].dso)
					keep[n++] = p->maps[k].dso;
	if (pc->self_vdso)
		keep[n++] = pc->self_vdso;
	qsort(keep, n, sizeof(*keep), ptr_cmp);
	freed = dso_cache__sweep(pc->dsos, keep, n);
	/* the same room again, for the paths */
	sweep_strings(pc, (const void **)keep, cap + nprob + 2);
	free(keep);
	return freed;
}

size_t proc_cache__nr_paths(const struct proc_cache *pc)
{
	return pc->nr_strs;
}

/* ---- mappings shared by forks (copy on write), and their bound ---- */

unsigned proc_cache__map_slots_max(void)
{
	return PROC_MAP_SLOTS_MAX;
}

int proc_cache__charge_slots(struct proc_cache *pc, size_t n)
{
	if (n > PROC_MAP_SLOTS_MAX - pc->map_slots) {
		pc->st.maps_over_bound++;
		return -E2BIG;
	}
	pc->map_slots += n;
	return 0;
}

void proc__drop_maps(struct proc *p)
{
	if (p->shared && --p->shared->refs) {
		p->shared = NULL; /* the others keep it */
	} else {
		free(p->shared);
		p->shared = NULL;
		free(p->maps);
		p->pc->map_slots -= p->cap;
	}
	p->maps = NULL;
	p->nr = p->cap = 0;
	p->last = 0;
}

void proc__share_maps(struct proc *parent, struct proc *child)
{
	if (!parent->nr)
		return;
	if (!parent->shared) {
		parent->shared = calloc(1, sizeof(*parent->shared));
		if (!parent->shared)
			return; /* the child starts empty; still correct for it */
		parent->shared->refs = 1;
	}
	parent->shared->refs++;
	child->shared = parent->shared;
	child->maps = parent->maps;
	child->nr = parent->nr;
	child->cap = parent->cap;
	parent->pc->st.maps_shared++;
}

int proc__own_maps(struct proc *p, size_t cap)
{
	struct proc_cache *pc = p->pc;
	struct proc_map *nm;

	if (cap < p->nr)
		cap = p->nr;
	if (p->shared && p->shared->refs > 1) {
		if (proc_cache__charge_slots(pc, cap))
			return -E2BIG;
		nm = malloc(cap * sizeof(*nm));
		if (!nm) {
			pc->map_slots -= cap;
			return -ENOMEM;
		}
		memcpy(nm, p->maps, p->nr * sizeof(*nm));
		p->shared->refs--;
		p->shared = NULL;
		p->maps = nm;
		p->cap = cap;
		pc->st.maps_unshared++;
		return 0;
	}
	if (p->shared) { /* the last holder: it is this proc's alone */
		free(p->shared);
		p->shared = NULL;
	}
	if (cap <= p->cap)
		return 0;
	if (proc_cache__charge_slots(pc, cap - p->cap))
		return -E2BIG;
	nm = realloc(p->maps, cap * sizeof(*nm));
	if (!nm) {
		pc->map_slots -= cap - p->cap;
		return -ENOMEM;
	}
	p->maps = nm;
	p->cap = cap;
	return 0;
}

/* The proc of a pid that is in scope: existing, or created (live: read
 * from /proc once, as a process that existed before the run). */
static struct proc *known_proc(struct proc_cache *pc, uint32_t pid, int create)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	if (p || !create)
		return p;
	return proc_cache__get(pc, pid);
}

int proc_cache__fork(struct proc_cache *pc, uint32_t ppid, uint32_t pid, uint64_t ts)
{
	struct proc *parent, *p;

	if (pid == ppid || !pid)
		return -EINVAL;
	/* a reused PID: the old process's events all came before this */
	proc_cache__remove(pc, pid);
	parent = known_proc(pc, ppid, !pc->opts.offline);
	p = proc_cache__create(pc, pid);
	if (!p)
		return -ENOMEM;
	p->known = 1;
	/* shared until one of them changes: a fork bomb costs a proc each */
	if (parent)
		proc__share_maps(parent, p);
	pc->st.changes_forks++;
	proc__notify(pc, PROC_CHANGE_FORK, pid, ppid, ts, NULL);
	return 0;
}

int proc_cache__reset(struct proc_cache *pc, uint32_t pid, uint64_t ts, int create)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	if (!p) {
		if (!create)
			return 0;
		p = proc_cache__create(pc, pid);
		if (!p)
			return -ENOMEM;
	}
	/* the new image's mappings follow: nothing to read from /proc */
	p->known = 1;
	if (p->shared)
		proc__drop_maps(p); /* (its own array is kept for reuse) */
	p->nr = 0;
	p->last = 0;
	p->exited = 0;
	if (p->exit_ts)
		pc->exiting--;
	p->exit_ts = 0;
	p->stale = 0;
	p->generation = ++pc->generations;
	pc->st.changes_resets++;
	proc__notify(pc, PROC_CHANGE_RESET, pid, 0, ts, NULL);
	return 0;
}

static int build_id_matches(const struct proc_map *m, const struct dso *d)
{
	const uint8_t *id;
	size_t len = dso__build_id(d, &id);

	return !m->build_id_len || (len == m->build_id_len && !memcmp(id, m->build_id, len));
}

/* The binary of a new mapping, opened while it exists. */
static void map_open_live(struct proc_cache *pc, uint32_t pid, struct proc_map *m)
{
	struct dso *d = NULL;

	if (m->is_vdso) {
		d = proc__read_vdso(pc, pid, m->start, m->end);
	} else if (!m->path[0] || m->path[0] == '[') {
		m->state = MAP_NO_DSO; /* anonymous code (JIT) */
		return;
	} else {
		if (m->build_id_len)
			d = dso_cache__find_build_id(proc_cache__dsos(pc), m->build_id,
						     m->build_id_len);
		if (!d)
			d = proc__open_mapped_file(pc, pid, m);
		if (d && !build_id_matches(m, d)) {
			/* the path now holds another binary (replaced since) */
			pc->st.buildid_mismatch++;
			d = NULL;
		}
		if (!d)
			pc->st.mappings_unopened++;
	}
	proc_map__set_dso(m, d);
}

int proc_cache__map(struct proc_cache *pc, uint32_t pid, uint64_t ts,
		    const struct proc_mapping_rec *rec, int create)
{
	struct proc_map m;
	struct proc_mapping_rec r;
	struct proc *p;
	int err;

	if (!rec || !rec->path || rec->start >= rec->end ||
	    rec->build_id_len > ELFREAD_BUILD_ID_MAX)
		return -EINVAL;
	if (!(rec->prot & PROT_EXEC))
		return 0;
	p = known_proc(pc, pid, create);
	if (!p)
		return 0; /* not in scope */
	err = proc_map__from_rec(pc, rec, &m);
	if (err)
		return err;
	map_open_live(pc, pid, &m);
	err = proc__insert_map(p, &m);
	if (err)
		return err;
	pc->st.changes_mappings++;
	proc_map__to_rec(&m, &r);
	if (r.path)
		proc__notify(pc, PROC_CHANGE_MAPPING, pid, 0, ts, &r);
	return 0;
}

void proc_cache__exit(struct proc_cache *pc, uint32_t pid, uint64_t ts)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	if (!p)
		return;
	p->exited = 1;
	if (!p->exit_ts)
		pc->exiting++;
	p->exit_ts = ts ? ts : 1;
	if (pc->exiting_min > p->exit_ts)
		pc->exiting_min = p->exit_ts;
	pc->st.changes_exits++;
	proc__notify(pc, PROC_CHANGE_EXIT, pid, 0, ts, NULL);
}

size_t proc_cache__reap(struct proc_cache *pc, uint64_t before)
{
	uint64_t min = UINT64_MAX;
	size_t n = 0;

	if (pc->exiting_min > before)
		return 0; /* none due yet */
	for (size_t i = 0; i < PROC_BUCKETS && pc->exiting; i++) {
		struct proc **pp = &pc->procs[i];

		while (*pp) {
			struct proc *p = *pp;

			if (p->exit_ts && p->exit_ts <= before) {
				*pp = p->next;
				proc__free(p);
				pc->exiting--;
				n++;
			} else {
				if (p->exit_ts && p->exit_ts < min)
					min = p->exit_ts;
				pp = &p->next;
			}
		}
	}
	/* the pass stops at the last exiting one: then none is left */
	pc->exiting_min = pc->exiting ? min : UINT64_MAX;
	pc->st.procs_reaped += n;
	return n;
}
