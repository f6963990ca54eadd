// SPDX-License-Identifier: MIT
/* HotSpot through a capture: record's side and report's (hsreplay.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/hsreplay.h"
#include "runtimes/runtime.h"

/* The kinds in the dedupe's keys' top bits (addresses are below 2^56). */
#define KEY_JVM (1ull << 60)
#define KEY_CODE (2ull << 60)
#define KEY_FRAME (3ull << 60)
#define KEY_METHOD (4ull << 60)

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	return mix(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

#define HASH0 1469598103934665603ull

/* r, written when key's last record was another: 0, or an error. */
static int emit(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		uint64_t key, uint64_t hash, const struct hsrec *r)
{
	uint8_t *buf;
	int n, err;

	if (hs_last__get(&rs->last, key) == (hash | 1))
		return 0;
	if (!(buf = malloc(HSREC_BYTES_MAX)))
		return -ENOMEM;
	n = hsrec__encode(r, buf, HSREC_BYTES_MAX);
	err = n < 0 ? n : p->write(p->write_ctx, RUNTIME_REC_HOTSPOT, pid, buf, (size_t)n);
	free(buf);
	if (err)
		return err;
	return hs_last__put(&rs->last, key, hash) < 0 ? -ENOMEM : 0;
}

/* The JVM's interpreter layout, before its first other record. */
static int emit_jvm(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		    const struct hotspot_layout *l)
{
	struct hsrec r = { .kind = HSREC_JVM };
	uint64_t h = HASH0;
	int err;

	if (rs->jvm_written)
		return 0;
	r.jvm.has_interp = l->has_interp;
	r.jvm.fp_method = l->has_interp ? l->fp_method : 0;
	r.jvm.fp_bcp = l->has_interp ? l->fp_bcp : 0;
	h = mix(h, &r.jvm, sizeof(r.jvm));
	if (!(err = emit(rs, p, pid, KEY_JVM, h, &r)))
		rs->jvm_written = true;
	return err;
}

void hs_rec__code(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		  const struct hotspot_layout *l, const struct hotspot_code *c)
{
	struct hsrec r = { .kind = HSREC_CODE };
	uint64_t h = HASH0;

	/* (a stub is stepped by its frame pointer live and offline alike) */
	if (!p->write || p->offline || (c->kind != HOTSPOT_NMETHOD && c->kind != HOTSPOT_INTERPRETER))
		return;
	r.code.start = c->start;
	r.code.end = c->end;
	r.code.frame_complete = c->frame_complete < c->start ? c->start :
				c->frame_complete > c->end ? c->end : c->frame_complete;
	r.code.frame_size = c->frame_size;
	r.code.kind = c->kind;
	h = mix(h, &r.code, sizeof(r.code));
	if (!emit_jvm(rs, p, pid, l))
		(void)emit(rs, p, pid, KEY_CODE | c->start, h, &r);
}

void hs_rec__frame(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		   const struct hotspot_layout *l, uint64_t pc, const char *name,
		   const char *file, uint32_t line, const char *inl)
{
	struct hsrec r = { .kind = HSREC_FRAME };
	uint64_t h = HASH0;

	if (!p->write || p->offline || !pc || pc >= (1ull << 56))
		return;
	/* (one that did not read voids only a name written there before) */
	if (!name && !hs_last__get(&rs->last, KEY_FRAME | pc))
		return;
	r.frame.pc = pc;
	r.frame.name = name ? name : "";
	r.frame.file = name && file ? file : "";
	r.frame.inl = name && inl ? inl : "";
	r.frame.line = name ? line : 0;
	r.frame.name_len = strlen(r.frame.name);
	r.frame.file_len = strlen(r.frame.file);
	r.frame.inl_len = strlen(r.frame.inl);
	if (r.frame.inl_len > HSREC_INL_MAX) {
		r.frame.inl = "";
		r.frame.inl_len = 0;
	}
	h = mix_str(mix_str(mix_str(mix(h, &r.frame.line, 4), r.frame.name), r.frame.file),
		    r.frame.inl);
	if (!emit_jvm(rs, p, pid, l))
		(void)emit(rs, p, pid, KEY_FRAME | pc, h, &r);
}

void hs_rec__method(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		    const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t method, const char *name)
{
	struct hotspot_method_rec *mr;
	struct hsrec r = { .kind = HSREC_METHOD };
	uint64_t h;

	if (!p->write || p->offline || !method || method >= (1ull << 56))
		return;
	/* (the same Method* with the same name: its record is there) */
	h = mix_str(mix(HASH0, &method, sizeof(method)), name);
	if (hs_last__get(&rs->last, KEY_METHOD | method) == (h | 1) || !(mr = malloc(sizeof(*mr))))
		return;
	if (!hotspot__method_rec(l, read, ctx, method, mr) && !strcmp(mr->m.name, name)) {
		r.method.method = method;
		r.method.code = mr->code;
		r.method.code_size = mr->code_size;
		r.method.name = mr->m.name;
		r.method.name_len = strlen(mr->m.name);
		r.method.file = mr->m.file;
		r.method.file_len = strlen(mr->m.file);
		r.method.lnt = mr->lnt;
		r.method.lnt_len = mr->lnt_len;
		if (!emit_jvm(rs, p, pid, l))
			(void)emit(rs, p, pid, KEY_METHOD | method, h, &r);
	}
	free(mr);
}

void hs_rec__free(struct hs_rec_state *rs)
{
	hs_last__free(&rs->last);
}

int hs_off__record(struct hs_offline *o, uint32_t pid, const uint8_t *data, size_t len)
{
	struct hsrec r;
	int err = hsrec__decode(data, len, &r);

	return err ? err : hs_offline__add(o, pid, &r);
}

int hs_off__code(const struct hs_offline *o, uint32_t pid, uint64_t pc,
		 struct hotspot_code *out)
{
	const struct hs_off_proc *op = hs_offline__proc(o, pid);
	const struct hs_off_code *c = op ? hs_offline__code(op, pc) : NULL;

	if (!c)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->start = c->start;
	out->end = c->end;
	out->frame_complete = c->frame_complete;
	out->frame_size = c->frame_size;
	out->kind = (enum hotspot_kind)c->kind;
	return 0;
}

/* A word of the stack snapshot (the frame's slots as sampled): 0, -EFAULT. */
static int snap64(const struct runtime_frame *f, uint64_t addr, uint64_t *v)
{
	if (addr < f->stack_lo || addr - f->stack_lo > f->stack_len ||
	    f->stack_len - (addr - f->stack_lo) < sizeof(*v))
		return -EFAULT;
	memcpy(v, f->stack + (addr - f->stack_lo), sizeof(*v));
	return 0;
}

/* An interpreted frame from its slots and its Method's record, tied as
 * live: its bcp in the method's bytecodes (a native method's is 0). */
static int off_interp(const struct hs_off_proc *op, const struct runtime_frame *f, uint64_t fp,
		      struct hotspot_method *m)
{
	const struct hs_off_method *mm;
	uint64_t method, bcp;
	uint32_t line;

	memset(m, 0, sizeof(*m));
	if (!op->have_jvm || !op->has_interp)
		return -ENOENT;
	if (!fp || fp & 7 || fp < 4096 || fp >= (1ull << 56) ||
	    snap64(f, fp + (uint64_t)(int64_t)op->fp_method, &method) ||
	    !(mm = hs_offline__method(op, method)))
		return -ENOENT;
	/* the sampled frame while its entry builds it: its Method* pushed
	 * (in the snapshot, above SP: this frame's), its bcp slot not yet
	 * (below SP: live reads a stale word there, the snapshot has none) */
	if (snap64(f, fp + (uint64_t)(int64_t)op->fp_bcp, &bcp)) {
		if (!f->leaf)
			return -ENOENT;
		bcp = 0;
	} else if (bcp ? bcp < mm->code || bcp - mm->code >= mm->code_size : mm->code_size != 0) {
		return -EINVAL;
	}
	snprintf(m->name, sizeof(m->name), "%s", mm->name);
	snprintf(m->file, sizeof(m->file), "%s", mm->file);
	m->method = method;
	/* (a leaf's bcp slot is the one saved at its last call: no line) */
	if (bcp && !f->leaf && mm->lnt_len &&
	    !hotspot__line_of(mm->lnt, mm->lnt_len, (uint32_t)(bcp - mm->code), &line))
		m->line = line;
	return 0;
}

int hs_off__frame_name(const struct hs_offline *o, uint32_t pid, const struct runtime_frame *f,
		       char *buf, size_t size)
{
	const struct hs_off_proc *op = hs_offline__proc(o, pid);
	const struct hs_off_frame *fr;
	const struct hs_off_code *c;
	struct hotspot_method m;
	int n;

	if (!op)
		return -ESRCH;
	if (!(c = hs_offline__code(op, f->pc)))
		return -ENOENT;
	if (c->kind == HOTSPOT_NMETHOD) {
		/* (a compiled caller's, at its call; the leaf is its entry's) */
		if (f->leaf || !(fr = hs_offline__frame(op, f->pc)) || !fr->name[0])
			return -ENOENT;
		memset(&m, 0, sizeof(m));
		n = snprintf(buf, size, "%s", fr->name);
		snprintf(m.file, sizeof(m.file), "%s", fr->file);
		m.line = fr->line;
		if (f->inl && f->inl_size > strlen(fr->inl))
			memcpy(f->inl, fr->inl, strlen(fr->inl) + 1);
	} else if (c->kind == HOTSPOT_INTERPRETER && op->has_interp) {
		if (off_interp(op, f, f->frame_fp(f->walk, f->index), &m)) {
			memset(&m, 0, sizeof(m));
			n = snprintf(buf, size, "[interpreter]");
		} else {
			n = snprintf(buf, size, "%s", m.name);
		}
	} else {
		return -ENOENT;
	}
	return hs_frame_out(f, &m, n, size);
}

int hs_frame_out(const struct runtime_frame *f, const struct hotspot_method *m, int n,
		 size_t size)
{
	if (n <= 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	/* (its class's source file and the line of its call, a caller's) */
	if (m->line && m->file[0] && f->line && f->file && f->file_size > strlen(m->file)) {
		memcpy(f->file, m->file, strlen(m->file) + 1);
		*f->line = m->line;
	}
	return 0;
}
