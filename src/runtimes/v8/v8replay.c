// SPDX-License-Identifier: MIT
/* V8 through a capture (v8replay.h): record's writes and dedupe, report's
 * store and its naming of interpreted frames from the stack snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/runtime.h"
#include "runtimes/v8/v8replay.h"

#define V8_OFF_FUNCS_MAX (1u << 22) /* a process's FUNC records kept */

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

/* record: key's last hash slot (found or empty), the table grown first */
static struct v8_last_ent *last_slot(struct v8_rec_state *rs, uint64_t key)
{
	if (rs->nr * 2 >= rs->size) {
		size_t n = rs->size ? rs->size * 2 : 256;
		struct v8_last_ent *e = calloc(n, sizeof(*e));

		if (!e)
			return NULL;
		for (size_t i = 0; i < rs->size; i++) {
			size_t k;

			if (!rs->e[i].hash)
				continue;
			for (k = mix(rs->e[i].key) & (n - 1); e[k].hash; k = (k + 1) & (n - 1))
				;
			e[k] = rs->e[i];
		}
		free(rs->e);
		rs->e = e;
		rs->size = n;
	}
	for (size_t k = mix(key) & (rs->size - 1);; k = (k + 1) & (rs->size - 1))
		if (!rs->e[k].hash || rs->e[k].key == key)
			return &rs->e[k];
}

static int write_rec(const struct runtime_proc *p, uint32_t pid, const struct v8rec *r)
{
	uint8_t buf[V8REC_BYTES_MAX];
	int n = v8rec__encode(r, buf, sizeof(buf));

	if (n < 0)
		return n;
	return p->write(p->write_ctx, RUNTIME_REC_V8, pid, buf, (size_t)n);
}

int v8_rec__func(struct v8_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		 const struct v8_layout *l, uint64_t fn, uint64_t bytecode, uint32_t length,
		 const char *name)
{
	struct v8rec r = { .kind = V8REC_LAYOUT };
	struct v8_last_ent *e;
	uint64_t h = 0xcbf29ce484222325ull;
	int err;

	if (!p->write)
		return 0;
	if (!rs->layout_written) {
		r.layout.fp_function = (int32_t)l->fp_function;
		r.layout.fp_context = (int32_t)l->fp_context;
		r.layout.fp_bytecode_array = (int32_t)l->fp_bytecode_array;
		r.layout.fp_bytecode_offset = (int32_t)l->fp_bytecode_offset;
		r.layout.heap_tag = l->heap_tag;
		r.layout.heap_tag_mask = l->heap_tag_mask;
		r.layout.smi_shift = l->smi_shift;
		r.layout.offset_bias = l->bytecode_data - (uint32_t)l->heap_tag;
		if ((err = write_rec(p, pid, &r)))
			return err;
		rs->layout_written = true;
	}
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	h = mix(h ^ mix(bytecode) ^ length) | 1;
	if (!(e = last_slot(rs, fn)))
		return -ENOMEM;
	if (e->hash == h)
		return 0;
	r = (struct v8rec){ .kind = V8REC_FUNC };
	r.func.fn = fn;
	r.func.bytecode = bytecode;
	r.func.length = length;
	r.func.name = name;
	r.func.name_len = strlen(name);
	if ((err = write_rec(p, pid, &r)))
		return err;
	if (!e->hash)
		rs->nr++;
	e->key = fn;
	e->hash = h;
	return 0;
}

void v8_rec__free(struct v8_rec_state *rs)
{
	free(rs->e);
	memset(rs, 0, sizeof(*rs));
}

static struct v8_off_proc *proc_get(const struct v8_offline *o, uint32_t pid)
{
	for (size_t i = 0; i < o->nr; i++)
		if (o->procs[i]->pid == pid)
			return o->procs[i];
	return NULL;
}

const struct v8_off_proc *v8_off__proc(const struct v8_offline *o, uint32_t pid)
{
	return proc_get(o, pid);
}

static struct v8_off_func *func_slot(struct v8_off_func *f, size_t size, uint64_t fn)
{
	for (size_t k = mix(fn) & (size - 1);; k = (k + 1) & (size - 1))
		if (!f[k].fn || f[k].fn == fn)
			return &f[k];
}

const struct v8_off_func *v8_off__func(const struct v8_off_proc *p, uint64_t fn)
{
	const struct v8_off_func *e;

	if (!p->size || !fn)
		return NULL;
	e = func_slot(p->f, p->size, fn);
	return e->fn ? e : NULL;
}

static int add_func(struct v8_off_proc *p, const struct v8rec *r)
{
	struct v8_off_func *e;
	char *name;

	if (p->nr * 2 >= p->size) {
		size_t n = p->size ? p->size * 2 : 64;
		struct v8_off_func *f;

		if (p->nr >= V8_OFF_FUNCS_MAX || !(f = calloc(n, sizeof(*f))))
			return -ENOMEM;
		for (size_t i = 0; i < p->size; i++)
			if (p->f[i].fn)
				*func_slot(f, n, p->f[i].fn) = p->f[i];
		free(p->f);
		p->f = f;
		p->size = n;
	}
	if (!(name = strndup(r->func.name, r->func.name_len)))
		return -ENOMEM;
	e = func_slot(p->f, p->size, r->func.fn);
	if (e->fn)
		free(e->name); /* (a newer record of the same JSFunction) */
	else
		p->nr++;
	*e = (struct v8_off_func){ r->func.fn, r->func.bytecode, r->func.length, name };
	return 0;
}

int v8_off__record(struct v8_offline *o, uint32_t pid, const uint8_t *data, size_t len)
{
	struct v8_off_proc *p;
	struct v8rec r;
	int err;

	if ((err = v8rec__decode(data, len, &r)))
		return err;
	if (!(p = proc_get(o, pid))) {
		if (o->nr == o->cap) {
			size_t n = o->cap ? o->cap * 2 : 8;
			struct v8_off_proc **q = realloc(o->procs, n * sizeof(*q));

			if (!q)
				return -ENOMEM;
			o->procs = q;
			o->cap = n;
		}
		if (!(p = calloc(1, sizeof(*p))))
			return -ENOMEM;
		p->pid = pid;
		o->procs[o->nr++] = p;
	}
	if (r.kind == V8REC_LAYOUT) {
		p->layout = r;
		p->have_layout = true;
		return 0;
	}
	return add_func(p, &r);
}

/* The word at addr of f's stack snapshot: 0, or -EFAULT (not in it). */
static int snap_word(const struct runtime_frame *f, uint64_t addr, uint64_t *out)
{
	if (addr < f->stack_lo || addr - f->stack_lo > f->stack_len ||
	    f->stack_len - (addr - f->stack_lo) < 8)
		return -EFAULT;
	memcpy(out, f->stack + (addr - f->stack_lo), 8);
	return 0;
}

int v8_off__interp_name(const struct v8_offline *o, uint32_t pid, const struct runtime_frame *f,
			uint64_t fp, char *buf, size_t size)
{
	const struct v8_off_proc *p = proc_get(o, pid);
	const struct v8_off_func *fr;
	uint64_t cx, fn, ba, off, tag, mask;
	int64_t at;
	int n;

	if (!p)
		return -ESRCH;
	if (!p->have_layout || fp < 4096 || fp % 8 || fp > UINT64_MAX - 4096)
		return -ENOENT;
	tag = p->layout.layout.heap_tag;
	mask = p->layout.layout.heap_tag_mask;
	/* (the slots within V8REC_SLOT_MAX of fp: no overflow) */
	if (snap_word(f, fp + (uint64_t)(int64_t)p->layout.layout.fp_context, &cx) ||
	    snap_word(f, fp + (uint64_t)(int64_t)p->layout.layout.fp_function, &fn) ||
	    snap_word(f, fp + (uint64_t)(int64_t)p->layout.layout.fp_bytecode_array, &ba) ||
	    snap_word(f, fp + (uint64_t)(int64_t)p->layout.layout.fp_bytecode_offset, &off))
		return -ENOENT;
	/* (a typed frame's marker, a Smi, where a JS frame has its context) */
	if ((cx & mask) != tag || cx <= 4096 || (off & mask))
		return -ENOENT;
	if (!(fr = v8_off__func(p, fn)) || fr->bytecode != ba)
		return -ENOENT;
	at = ((int64_t)off >> p->layout.layout.smi_shift) - (int64_t)p->layout.layout.offset_bias;
	if (at < -1 || at >= (int64_t)fr->length)
		return -ENOENT;
	n = snprintf(buf, size, "%s", fr->name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void v8_off__free(struct v8_offline *o)
{
	for (size_t i = 0; i < o->nr; i++) {
		for (size_t k = 0; k < o->procs[i]->size; k++)
			free(o->procs[i]->f[k].name);
		free(o->procs[i]->f);
		free(o->procs[i]);
	}
	free(o->procs);
	memset(o, 0, sizeof(*o));
}
