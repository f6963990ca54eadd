// SPDX-License-Identifier: MIT
/* HotSpot offline: a capture's HotSpot records, per process (hsoffline.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsoffline.h"

static size_t key_slot(uint64_t k, size_t size)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & (size - 1);
}

static uint64_t key_of(const void *e)
{
	uint64_t k;

	memcpy(&k, e, sizeof(k));
	return k;
}

static void **map_find(const struct hs_map *m, uint64_t k)
{
	if (!m->size)
		return NULL;
	for (size_t i = key_slot(k, m->size);; i = (i + 1) & (m->size - 1)) {
		if (!m->slot[i])
			return NULL;
		if (key_of(m->slot[i]) == k)
			return &m->slot[i];
	}
}

/* Put e in (the entry of its key, if any, in *old): 0 or -ENOMEM. */
static int map_put(struct hs_map *m, void *e, void **old)
{
	void **at = map_find(m, key_of(e));
	size_t i;

	*old = NULL;
	if (at) {
		*old = *at;
		*at = e;
		return 0;
	}
	if ((m->nr + 1) * 2 > m->size) {
		struct hs_map n = { .size = m->size ? m->size * 2 : 64 };

		if (!(n.slot = calloc(n.size, sizeof(*n.slot))))
			return -ENOMEM;
		for (size_t j = 0; j < m->size; j++)
			if (m->slot[j]) {
				for (i = key_slot(key_of(m->slot[j]), n.size); n.slot[i];
				     i = (i + 1) & (n.size - 1))
					;
				n.slot[i] = m->slot[j];
			}
		n.nr = m->nr;
		free(m->slot);
		*m = n;
	}
	for (i = key_slot(key_of(e), m->size); m->slot[i]; i = (i + 1) & (m->size - 1))
		;
	m->slot[i] = e;
	m->nr++;
	return 0;
}

static void frame_free(struct hs_off_frame *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->file);
	free(f->inl);
	free(f);
}

static void method_free(struct hs_off_method *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->file);
	free(m->lnt);
	free(m);
}

struct hs_off_proc *hs_offline__proc(const struct hs_offline *o, uint32_t pid)
{
	for (size_t i = 0; i < o->nr; i++)
		if (o->procs[i]->pid == pid)
			return o->procs[i];
	return NULL;
}

static struct hs_off_proc *proc_get(struct hs_offline *o, uint32_t pid)
{
	struct hs_off_proc *p = hs_offline__proc(o, pid);

	if (p)
		return p;
	if (o->nr == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 4;
		void *n = realloc(o->procs, ncap * sizeof(*o->procs));

		if (!n)
			return NULL;
		o->procs = n;
		o->cap = ncap;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	o->procs[o->nr++] = p;
	return p;
}

/* The first blob ending after pc (its index; nr_codes when none). */
static size_t code_after(const struct hs_off_proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nr_codes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->codes[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A newer blob: every older one it overlaps goes. */
static int code_add(struct hs_off_proc *p, const struct hsrec *r)
{
	struct hs_off_code c = { r->code.start, r->code.end, r->code.frame_complete,
				 r->code.frame_size, r->code.kind };
	size_t i = code_after(p, c.start), j = i;

	while (j < p->nr_codes && p->codes[j].start < c.end)
		j++;
	if (i == j && p->nr_codes == p->cap_codes) {
		size_t ncap = p->cap_codes ? p->cap_codes * 2 : 64;
		void *n = realloc(p->codes, ncap * sizeof(*p->codes));

		if (!n)
			return -ENOMEM;
		p->codes = n;
		p->cap_codes = ncap;
	}
	/* [i, j) overlap c: c takes their place */
	if (j != i + 1)
		memmove(p->codes + i + 1, p->codes + j, (p->nr_codes - j) * sizeof(*p->codes));
	p->nr_codes = p->nr_codes - (j - i) + 1;
	p->codes[i] = c;
	return 0;
}

const struct hs_off_code *hs_offline__code(const struct hs_off_proc *p, uint64_t pc)
{
	size_t i = code_after(p, pc);

	return i < p->nr_codes && p->codes[i].start <= pc ? &p->codes[i] : NULL;
}

const struct hs_off_frame *hs_offline__frame(const struct hs_off_proc *p, uint64_t pc)
{
	void **at = map_find(&p->frames, pc);

	return at ? *at : NULL;
}

const struct hs_off_method *hs_offline__method(const struct hs_off_proc *p, uint64_t method)
{
	void **at = map_find(&p->methods, method);

	return at ? *at : NULL;
}

static int frame_add(struct hs_off_proc *p, const struct hsrec *r)
{
	struct hs_off_frame *f = calloc(1, sizeof(*f));
	void *old;

	if (!f)
		return -ENOMEM;
	f->pc = r->frame.pc;
	f->line = r->frame.line;
	f->name = strndup(r->frame.name, r->frame.name_len);
	f->file = strndup(r->frame.file, r->frame.file_len);
	f->inl = strndup(r->frame.inl, r->frame.inl_len);
	if (!f->name || !f->file || !f->inl || map_put(&p->frames, f, &old)) {
		frame_free(f);
		return -ENOMEM;
	}
	frame_free(old);
	return 0;
}

static int method_add(struct hs_off_proc *p, const struct hsrec *r)
{
	struct hs_off_method *m = calloc(1, sizeof(*m));
	void *old;

	if (!m)
		return -ENOMEM;
	m->method = r->method.method;
	m->code = r->method.code;
	m->code_size = r->method.code_size;
	m->lnt_len = r->method.lnt_len;
	m->name = strndup(r->method.name, r->method.name_len);
	m->file = strndup(r->method.file, r->method.file_len);
	m->lnt = malloc(m->lnt_len ? m->lnt_len : 1);
	if (!m->name || !m->file || !m->lnt) {
		method_free(m);
		return -ENOMEM;
	}
	if (m->lnt_len)
		memcpy(m->lnt, r->method.lnt, m->lnt_len);
	if (map_put(&p->methods, m, &old)) {
		method_free(m);
		return -ENOMEM;
	}
	method_free(old);
	return 0;
}

int hs_offline__add(struct hs_offline *o, uint32_t pid, const struct hsrec *r)
{
	struct hs_off_proc *p = proc_get(o, pid);

	if (!p)
		return -ENOMEM;
	switch (r->kind) {
	case HSREC_JVM:
		p->have_jvm = true;
		p->has_interp = r->jvm.has_interp != 0;
		p->fp_method = r->jvm.fp_method;
		p->fp_bcp = r->jvm.fp_bcp;
		return 0;
	case HSREC_CODE:
		return code_add(p, r);
	case HSREC_FRAME:
		return frame_add(p, r);
	case HSREC_METHOD:
		return method_add(p, r);
	}
	return 0;
}

void hs_offline__free(struct hs_offline *o)
{
	for (size_t i = 0; i < o->nr; i++) {
		struct hs_off_proc *p = o->procs[i];

		for (size_t j = 0; j < p->frames.size; j++)
			frame_free(p->frames.slot[j]);
		for (size_t j = 0; j < p->methods.size; j++)
			method_free(p->methods.slot[j]);
		free(p->frames.slot);
		free(p->methods.slot);
		free(p->codes);
		free(p);
	}
	free(o->procs);
	memset(o, 0, sizeof(*o));
}

static struct hs_last_ent *last_find(const struct hs_last *s, uint64_t key)
{
	if (!s->size)
		return NULL;
	for (size_t i = key_slot(key, s->size);; i = (i + 1) & (s->size - 1)) {
		if (!s->e[i].hash || s->e[i].key == key)
			return &s->e[i];
	}
}

uint64_t hs_last__get(const struct hs_last *s, uint64_t key)
{
	const struct hs_last_ent *e = last_find(s, key);

	return e ? e->hash : 0;
}

int hs_last__put(struct hs_last *s, uint64_t key, uint64_t h)
{
	struct hs_last_ent *e = last_find(s, key);

	h |= 1; /* (0 is an empty slot) */
	if (e && e->hash) {
		if (e->hash == h)
			return 0;
		e->hash = h;
		return 1;
	}
	if ((s->nr + 1) * 2 > s->size) {
		struct hs_last n = { .size = s->size ? s->size * 2 : 256 };

		if (!(n.e = calloc(n.size, sizeof(*n.e))))
			return -ENOMEM;
		for (size_t j = 0; j < s->size; j++)
			if (s->e[j].hash)
				*last_find(&n, s->e[j].key) = s->e[j];
		n.nr = s->nr;
		free(s->e);
		*s = n;
	}
	e = last_find(s, key);
	*e = (struct hs_last_ent){ key, h };
	s->nr++;
	return 1;
}

void hs_last__free(struct hs_last *s)
{
	free(s->e);
	memset(s, 0, sizeof(*s));
}
