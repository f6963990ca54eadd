// SPDX-License-Identifier: MIT
/*
 * Aggregated stacks (src/profile/profile.h): frame and stack hash tables over
 * the interned strings of strtab.c, and the ordering of named stacks the
 * writers share. The folded text form and root-frame names are in
 * folded.c.
 *
 * Three open-addressing tables (strings, frames, stacks) map contents to
 * dense uint32 ids; slots hold id + 1 so 0 means empty. Each table keeps
 * its load under 1/2 and stores the full 64-bit hash per entry, so a
 * lookup compares hashes before contents and rehashing never re-reads
 * strings.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile.h"
#include "profile/profile_int.h"
#include "profile/strtab.h"
#include "util.h"

#define FRAME_CACHE 16384 /* power of two; 64 KiB */

struct profile {
	struct profile_meta meta; /* strings point into strs */
	struct profile_render render; /* title points into strs */
	struct strtab strs;

	struct prof_frame *frames;
	uint32_t nr_frames, cap_frames;
	uint32_t *frame_slots;
	uint32_t frame_mask;

	struct prof_stack *stacks;
	size_t nr_stacks, cap_stacks;
	uint32_t *stack_slots;
	uint32_t stack_mask;

	uint32_t *ids;
	size_t nr_ids, cap_ids;

	/*
	 * Frames seen recently, by the caller's pointers: a hit is checked
	 * against the interned strings (so reused caller buffers stay exact)
	 * and skips hashing the strings and three table probes.
	 */
	uint32_t fcache[FRAME_CACHE];	/* frame id + 1, 0 = empty */

	uint32_t *scratch; /* frame ids of the stack being added */
	size_t cap_scratch;

	uint64_t total;
	uint64_t events;
	int64_t last_stack;	  /* profile__last_stack */
	struct prof_order *order; /* order.c; NULL: not kept */
};

struct prof_order **prof__order(struct profile *p)
{
	return &p->order;
}

int64_t profile__last_stack(const struct profile *p)
{
	return p->last_stack;
}


const char *prof__str(const struct profile *p, uint32_t id)
{
	if (!id || id >= p->strs.nr)
		return "";
	return p->strs.strs[id];
}

uint32_t prof__nr_strs(const struct profile *p)
{
	return p->strs.nr ? p->strs.nr : 1;
}

const struct prof_frame *prof__frames(const struct profile *p, uint32_t *nr)
{
	*nr = p->nr_frames;
	return p->frames;
}

const struct prof_stack *prof__stacks(const struct profile *p, size_t *nr)
{
	*nr = p->nr_stacks;
	return p->stacks;
}

const uint32_t *prof__ids(const struct profile *p)
{
	return p->ids;
}

struct profile *profile__new(const struct profile_meta *meta)
{
	struct profile *p = NULL;
	int64_t id;

	if (!meta || (meta->kind != PROFILE_CPU && meta->kind != PROFILE_FUTEX &&
		      meta->kind != PROFILE_OFFCPU && meta->kind != PROFILE_WALL)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto err_out;
	/* ids is never NULL, so ids + off is defined for root-only stacks */
	if (util__grow((void **)&p->ids, &p->cap_ids, 1, sizeof(*p->ids)))
		goto err_out;
	p->meta = *meta;
	p->last_stack = -1;
	p->meta.target_comm = p->meta.target_cmdline = p->meta.unit = NULL;
	p->meta.kernel_build_id = NULL;
	if ((id = strtab__intern_str(&p->strs, meta->kernel_build_id)) < 0)
		goto err_out;
	p->meta.kernel_build_id = id ? p->strs.strs[id] : NULL;
	if ((id = strtab__intern_str(&p->strs, meta->target_comm)) < 0)
		goto err_out;
	p->meta.target_comm = id ? p->strs.strs[id] : NULL;
	if ((id = strtab__intern_str(&p->strs, meta->target_cmdline)) < 0)
		goto err_out;
	p->meta.target_cmdline = id ? p->strs.strs[id] : NULL;
	if ((id = strtab__intern_str(&p->strs, meta->unit)) < 0)
		goto err_out;
	p->meta.unit = id ? p->strs.strs[id]
			  : (meta->kind == PROFILE_CPU ? "samples" : "nanoseconds");
	return p;

err_out:
	profile__free(p);
	errno = ENOMEM;
	return NULL;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	strtab__release(&p->strs);
	free(p->frames);
	free(p->frame_slots);
	free(p->stacks);
	free(p->stack_slots);
	free(p->ids);
	free(p->scratch);
	prof_order__free(p->order);
	free(p);
}

void profile__set_duration(struct profile *p, uint64_t duration_ns)
{
	if (p)
		p->meta.duration_ns = duration_ns;
}

int profile__set_render(struct profile *p, const struct profile_render *r)
{
	int64_t id = strtab__intern_str(&p->strs, r->title);
	int64_t sub = strtab__intern_str(&p->strs, r->subtitle);
	int64_t cnt = strtab__intern_str(&p->strs, r->countname);

	if (id < 0 || sub < 0 || cnt < 0)
		return -ENOMEM;
	p->render = *r;
	p->render.title = id ? p->strs.strs[id] : NULL;
	p->render.subtitle = sub ? p->strs.strs[sub] : NULL;
	p->render.countname = cnt ? p->strs.strs[cnt] : NULL;
	return 0;
}

const struct profile_render *profile__render(const struct profile *p)
{
	return &p->render;
}

const struct profile_meta *profile__meta(const struct profile *p)
{
	return &p->meta;
}

uint64_t profile__total_weight(const struct profile *p)
{
	return p->total;
}

uint64_t profile__nr_events(const struct profile *p)
{
	return p->events;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nr_stacks;
}

/*
 * A display name never contains ';' (the folded separator) or line
 * breaks; other bytes pass (the SVG writer escapes for XML itself).
 */
static void sanitize(char *s)
{
	for (; *s; s++) {
		if (*s == ';')
			*s = '_';
		else if (*s == '\n' || *s == '\r')
			*s = ' ';
	}
}

static int64_t intern_display(struct profile *p, const char *s)
{
	char stackbuf[256], *buf = stackbuf;
	size_t len = strlen(s);
	int64_t id;

	if (!strpbrk(s, ";\n\r"))
		return strtab__intern(&p->strs, s, len);
	if (len >= sizeof(stackbuf) && !(buf = malloc(len + 1)))
		return -ENOMEM;
	memcpy(buf, s, len + 1);
	sanitize(buf);
	id = strtab__intern(&p->strs, buf, len);
	if (buf != stackbuf)
		free(buf);
	return id;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* What folded and SVG print for a frame (see profile.h). */
static int64_t frame_display(struct profile *p, const struct profile_frame *f)
{
	char small[512], *buf = small;
	const char *prefix;
	size_t need;
	int64_t id;

	if (f->name && *f->name && f->kind == PROFILE_FRAME_PYTHON && f->file && *f->file) {
		need = strlen(f->name) + strlen(f->file) + sizeof(" (:)") + 10;
		if (need > sizeof(small) && !(buf = malloc(need)))
			return -ENOMEM;
		snprintf(buf, need, "%s (%s:%u)", f->name, base_name(f->file), f->line);
	} else if (f->name && *f->name && f->kind != PROFILE_FRAME_KERNEL) {
		return intern_display(p, f->name);
	} else if (f->name && *f->name) {
		need = strlen(f->name) + sizeof("_[k]");
		if (need > sizeof(small) && !(buf = malloc(need)))
			return -ENOMEM;
		snprintf(buf, need, "%s_[k]", f->name);
	} else {
		if (f->dso && *f->dso)
			prefix = base_name(f->dso);
		else
			prefix = f->kind == PROFILE_FRAME_KERNEL ? "[kernel.kallsyms]" : "[unknown]";
		need = strlen(prefix) + sizeof("+0x_[k]") + 16;
		if (need > sizeof(small) && !(buf = malloc(need)))
			return -ENOMEM;
		snprintf(buf, need, "%s+0x%" PRIx64 "%s", prefix, f->rel_addr,
			 f->kind == PROFILE_FRAME_KERNEL ? "_[k]" : "");
	}
	id = intern_display(p, buf);
	if (buf != small)
		free(buf);
	return id;
}

/* Does interned string id hold s (NULL and "" are id 0)? */
static int str_is(const struct profile *p, uint32_t id, const char *s)
{
	if (!s || !*s)
		return id == 0;
	return id && !strcmp(p->strs.strs[id], s);
}

/* The fields of a frame that are not strings, hashed. */
static uint64_t frame_where_hash(uint64_t h, const struct profile_frame *f)
{
	h = prof__hash_mix(h, f->rel_addr);
	h = prof__hash_mix(h, f->kind | (uint64_t)f->pid << 32);
	h = prof__hash_mix(h, f->addr);
	h = prof__hash_mix(h, f->map_start);
	h = prof__hash_mix(h, f->map_end);
	h = prof__hash_mix(h, f->map_offset);
	h = prof__hash_mix(h, f->vm_shared);
	return prof__hash_mix(h, f->map_exec | (uint64_t)f->start_line << 32);
}

static uint32_t fcache_slot(const struct profile_frame *f)
{
	uint64_t h = prof__hash_mix(prof__hash_mix((uintptr_t)f->name, (uintptr_t)f->dso),
				    (uintptr_t)f->build_id);

	h = prof__hash_mix(h, f->line);

	return (uint32_t)(frame_where_hash(h, f) & (FRAME_CACHE - 1));
}

static int frame_where_eq(const struct prof_frame *e, const struct profile_frame *f)
{
	return e->rel_addr == f->rel_addr && e->kind == f->kind && e->pid == f->pid &&
	       e->addr == f->addr && e->map_start == f->map_start && e->map_end == f->map_end &&
	       e->map_offset == f->map_offset && e->map_exec == f->map_exec &&
	       e->start_line == f->start_line && e->vm_shared == f->vm_shared;
}

static int64_t frame__intern(struct profile *p, const struct profile_frame *f)
{
	int64_t name, dso, bid, file, disp, sys;
	uint32_t j, slot = fcache_slot(f);
	struct prof_frame *e;
	uint64_t h;

	if (p->fcache[slot]) {
		e = &p->frames[p->fcache[slot] - 1];
		if (frame_where_eq(e, f) && str_is(p, e->name, f->name) &&
		    str_is(p, e->dso, f->dso) && str_is(p, e->build_id, f->build_id) &&
		    e->line == f->line && str_is(p, e->file, f->file))
			return p->fcache[slot] - 1;
	}
	name = strtab__intern_str(&p->strs, f->name);
	dso = strtab__intern_str(&p->strs, f->dso);
	bid = strtab__intern_str(&p->strs, f->build_id);
	file = strtab__intern_str(&p->strs, f->file);
	if (name < 0 || dso < 0 || bid < 0 || file < 0)
		return -ENOMEM;
	/* string ids are unique per content, so hashing ids is exact */
	h = frame_where_hash(prof__hash_mix(prof__hash_mix(prof__hash_mix(0, (uint64_t)name),
							   (uint64_t)dso), (uint64_t)bid), f);
	if (f->line || file)
		h = prof__hash_mix(prof__hash_mix(h, f->line), (uint64_t)file);
	if (p->frame_slots) {
		for (j = h & p->frame_mask; p->frame_slots[j]; j = (j + 1) & p->frame_mask) {
			e = &p->frames[p->frame_slots[j] - 1];
			if (e->hash == h && e->name == name && e->dso == dso &&
			    e->build_id == bid && frame_where_eq(e, f) &&
			    e->line == f->line && e->file == (uint32_t)file) {
				p->fcache[slot] = p->frame_slots[j];
				return p->frame_slots[j] - 1;
			}
		}
	}
	disp = frame_display(p, f);
	if (disp < 0)
		return disp;
	/* interned only where it differs: most names are the binary's */
	sys = f->sys_name && f->name && strcmp(f->sys_name, f->name) ?
		strtab__intern_str(&p->strs, f->sys_name) : 0;
	if (sys < 0)
		return -ENOMEM;
	if (grow32((void **)&p->frames, &p->cap_frames, (size_t)p->nr_frames + 1, sizeof(*p->frames)))
		return -ENOMEM;
	e = &p->frames[p->nr_frames];
	*e = (struct prof_frame){ .hash = h, .rel_addr = f->rel_addr, .name = (uint32_t)name,
				  .dso = (uint32_t)dso, .build_id = (uint32_t)bid,
				  .kind = f->kind, .disp = (uint32_t)disp,
				  .line = f->line, .file = (uint32_t)file, .pid = f->pid,
				  .addr = f->addr, .map_start = f->map_start, .map_end = f->map_end,
				  .map_offset = f->map_offset, .map_exec = f->map_exec,
				  .start_line = f->start_line, .sys_name = (uint32_t)sys,
				  .vm_shared = f->vm_shared };
	p->nr_frames++;
	if (!p->frame_slots || 2 * (size_t)p->nr_frames > (size_t)p->frame_mask) {
		if (slots__rebuild(&p->frame_slots, &p->frame_mask, p->nr_frames, p->frames,
				   sizeof(*p->frames), offsetof(struct prof_frame, hash))) {
			p->nr_frames--;
			return -ENOMEM;
		}
	} else {
		for (j = h & p->frame_mask; p->frame_slots[j]; j = (j + 1) & p->frame_mask)
			;
		p->frame_slots[j] = p->nr_frames;
	}
	p->fcache[slot] = p->nr_frames;
	return p->nr_frames - 1;
}

int64_t profile__frame_id(struct profile *p, const struct profile_frame *f)
{
	if (!p || !f)
		return -EINVAL;
	return frame__intern(p, f);
}

static int stack_labels_eq(const struct prof_stack *s, const struct prof_stack *k)
{
	return s->has_labels == k->has_labels && s->pid == k->pid && s->tid == k->tid &&
	       s->thread == k->thread && s->lock == k->lock && s->lock_addr == k->lock_addr &&
	       s->process == k->process && s->exe == k->exe && s->cgroup == k->cgroup &&
	       s->container == k->container && s->unit == k->unit;
}

int profile__add_sample(struct profile *p, const char *root, const struct profile_labels *labels,
			const uint32_t *ids, size_t n, uint64_t count, uint64_t weight)
{
	struct prof_stack *s, key = { 0 };
	int64_t rid, tid = 0, lid = 0, xid[5] = { 0 };
	uint64_t h;
	uint32_t j;
	int err;

	if (!p || (n && !ids) || n > UINT32_MAX)
		return -EINVAL;
	if (!weight || !count)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= p->nr_frames)
			return -EINVAL;
	rid = root && *root ? intern_display(p, root) : 0;
	if (rid < 0)
		return -ENOMEM;
	if (labels) {
		tid = strtab__intern_str(&p->strs, labels->thread);
		lid = strtab__intern_str(&p->strs, labels->lock);
		xid[0] = strtab__intern_str(&p->strs, labels->process);
		xid[1] = strtab__intern_str(&p->strs, labels->exe);
		xid[2] = strtab__intern_str(&p->strs, labels->cgroup);
		xid[3] = strtab__intern_str(&p->strs, labels->container);
		xid[4] = strtab__intern_str(&p->strs, labels->unit);
		if (tid < 0 || lid < 0 || xid[0] < 0 || xid[1] < 0 || xid[2] < 0 || xid[3] < 0 ||
		    xid[4] < 0)
			return -ENOMEM;
		key = (struct prof_stack){ .has_labels = 1, .pid = labels->pid, .tid = labels->tid,
					   .thread = (uint32_t)tid, .lock = (uint32_t)lid,
					   .process = (uint32_t)xid[0], .exe = (uint32_t)xid[1],
					   .cgroup = (uint32_t)xid[2], .container = (uint32_t)xid[3],
					   .unit = (uint32_t)xid[4], .lock_addr = labels->lock_addr };
	}
	h = prof__hash_mix(0x5eed, (uint64_t)rid);
	for (size_t i = 0; i < n; i++)
		h = prof__hash_mix(h, ids[i]);
	h = prof__hash_mix(h, n);
	if (labels) {
		h = prof__hash_mix(h, (uint64_t)key.pid << 32 | key.tid);
		h = prof__hash_mix(h, (uint64_t)key.thread << 32 | key.lock);
		h = prof__hash_mix(h, key.lock_addr);
		h = prof__hash_mix(h, (uint64_t)key.process << 32 | key.exe);
		h = prof__hash_mix(h, (uint64_t)key.cgroup << 32 | key.container);
		h = prof__hash_mix(h, key.unit);
	}

	if (p->stack_slots) {
		for (j = h & p->stack_mask; p->stack_slots[j]; j = (j + 1) & p->stack_mask) {
			s = &p->stacks[p->stack_slots[j] - 1];
			if (s->hash == h && s->root == rid && s->n == n && stack_labels_eq(s, &key) &&
			    !memcmp(p->ids + s->off, ids, n * sizeof(*ids))) {
				s->weight = prof__sat_add(s->weight, weight);
				s->count = prof__sat_add(s->count, count);
				p->total = prof__sat_add(p->total, weight);
				p->events = prof__sat_add(p->events, count);
				p->last_stack = (int64_t)(s - p->stacks);
				return 0;
			}
		}
	}
	if (p->nr_stacks >= UINT32_MAX - 1)
		return -ENOMEM;
	if ((err = util__grow((void **)&p->ids, &p->cap_ids, p->nr_ids + n, sizeof(*p->ids))) ||
	    (err = util__grow((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks))))
		return err;
	if (n)
		memcpy(p->ids + p->nr_ids, ids, n * sizeof(*ids));
	s = &p->stacks[p->nr_stacks];
	*s = key;
	s->hash = h;
	s->weight = weight;
	s->count = count;
	s->off = p->nr_ids;
	s->root = (uint32_t)rid;
	s->n = (uint32_t)n;
	p->nr_stacks++;
	if (!p->stack_slots || 2 * p->nr_stacks > (size_t)p->stack_mask) {
		if (slots__rebuild(&p->stack_slots, &p->stack_mask, p->nr_stacks, p->stacks,
				   sizeof(*p->stacks), offsetof(struct prof_stack, hash))) {
			p->nr_stacks--;
			return -ENOMEM;
		}
	} else {
		for (j = h & p->stack_mask; p->stack_slots[j]; j = (j + 1) & p->stack_mask)
			;
		p->stack_slots[j] = (uint32_t)p->nr_stacks;
	}
	p->nr_ids += n;
	p->total = prof__sat_add(p->total, weight);
	p->events = prof__sat_add(p->events, count);
	p->last_stack = (int64_t)p->nr_stacks - 1;
	return 0;
}

int profile__add_ids(struct profile *p, const char *root, const uint32_t *ids,
		     size_t n, uint64_t weight)
{
	return profile__add_sample(p, root, NULL, ids, n, 1, weight);
}

int profile__add(struct profile *p, const char *root, const struct profile_frame *frames,
		 size_t n, uint64_t weight)
{
	int err;

	if (!p || (n && !frames) || n > UINT32_MAX)
		return -EINVAL;
	if (!weight)
		return 0;
	if ((err = util__grow((void **)&p->scratch, &p->cap_scratch, n ? n : 1, sizeof(*p->scratch))))
		return err;
	for (size_t i = 0; i < n; i++) {
		int64_t fid = frame__intern(p, &frames[i]);

		if (fid < 0)
			return (int)fid;
		p->scratch[i] = (uint32_t)fid;
	}
	return profile__add_ids(p, root, p->scratch, n, weight);
}

uint64_t prof__folded_count(const struct profile *p, uint64_t weight)
{
	uint64_t us;

	if (p->meta.kind == PROFILE_CPU)
		return weight;
	us = weight / 1000 + (weight % 1000 >= 500);
	return us ? us : (weight ? 1 : 0);
}

/* ---- stacks merged by display name ------------------------------------ */

struct named_ctx {
	const uint32_t *rank; /* display string id -> alphabetical rank */
	const uint32_t *ids;
};

static const struct named_ctx *named_sort_ctx;

static int named_cmp(const void *a, const void *b)
{
	const struct prof_named_stack *x = a, *y = b;
	const uint32_t *xi = named_sort_ctx->ids + x->off, *yi = named_sort_ctx->ids + y->off;
	const uint32_t *rank = named_sort_ctx->rank;
	uint32_t n = x->n < y->n ? x->n : y->n;

	for (uint32_t i = 0; i < n; i++) {
		if (xi[i] != yi[i])
			return rank[xi[i]] < rank[yi[i]] ? -1 : 1;
	}
	return x->n < y->n ? -1 : x->n > y->n;
}

static const struct profile *str_sort_profile;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(prof__str(str_sort_profile, *(const uint32_t *)a),
		      prof__str(str_sort_profile, *(const uint32_t *)b));
}

void prof_named__release(struct prof_named *nm)
{
	free(nm->stacks);
	free(nm->ids);
	memset(nm, 0, sizeof(*nm));
}

int prof__named(const struct profile *p, struct prof_named *out)
{
	return prof__named_rev(p, 0, out);
}

int prof__named_rev(const struct profile *p, int reverse, struct prof_named *out)
{
	uint32_t nstr = prof__nr_strs(p), *order = NULL, *rank = NULL, *slots = NULL;
	size_t size = 64, total_ids = 0;
	struct named_ctx ctx;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->nr_stacks; i++)
		total_ids += p->stacks[i].n + 1;
	while (size < 2 * (p->nr_stacks + 1))
		size *= 2;
	order = malloc((size_t)nstr * sizeof(*order));
	rank = malloc((size_t)nstr * sizeof(*rank));
	slots = calloc(size, sizeof(*slots));
	out->stacks = malloc((p->nr_stacks ? p->nr_stacks : 1) * sizeof(*out->stacks));
	out->ids = malloc((total_ids ? total_ids : 1) * sizeof(*out->ids));
	if (!order || !rank || !slots || !out->stacks || !out->ids)
		goto err_out;

	/* ranks: one sort of all strings, then stacks compare as integers */
	for (uint32_t i = 0; i < nstr; i++)
		order[i] = i;
	str_sort_profile = p;
	qsort(order, nstr, sizeof(*order), str_cmp);
	for (uint32_t i = 0; i < nstr; i++)
		rank[order[i]] = i;

	for (size_t i = 0; i < p->nr_stacks; i++) {
		const struct prof_stack *s = &p->stacks[i];
		uint32_t *dst = out->ids + out->nr_ids, n = 0, j;
		struct prof_named_stack *ns;
		uint64_t h = 0x6e616d6564ull;

		if (s->root)
			dst[n++] = s->root;
		for (uint32_t k = 0; k < s->n; k++)
			dst[n++] = p->frames[p->ids[s->off + (reverse ? s->n - 1 - k : k)]].disp;
		for (uint32_t k = 0; k < n; k++)
			h = prof__hash_mix(h, dst[k]);
		h = prof__hash_mix(h, n);
		for (j = h & (size - 1); slots[j]; j = (j + 1) & (size - 1)) {
			ns = &out->stacks[slots[j] - 1];
			if (ns->n == n && !memcmp(out->ids + ns->off, dst, n * sizeof(*dst)))
				break;
		}
		if (slots[j]) {
			ns = &out->stacks[slots[j] - 1];
			ns->weight = prof__sat_add(ns->weight, s->weight);
			continue;
		}
		ns = &out->stacks[out->nr];
		*ns = (struct prof_named_stack){ .weight = s->weight, .off = out->nr_ids, .n = n };
		slots[j] = (uint32_t)++out->nr;
		out->nr_ids += n;
		if (n > out->max_depth)
			out->max_depth = n;
	}
	ctx = (struct named_ctx){ .rank = rank, .ids = out->ids };
	named_sort_ctx = &ctx;
	qsort(out->stacks, out->nr, sizeof(*out->stacks), named_cmp);
	named_sort_ctx = NULL;
	err = 0;
err_out:
	free(order);
	free(rank);
	free(slots);
	if (err)
		prof_named__release(out);
	return err;
}
