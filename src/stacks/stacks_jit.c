// SPDX-License-Identifier: MIT
/*
 * JIT names and captures (src/stacks/stacks.h): record hands the entries
 * its stacks used to the capture; report names from what a capture holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jit/jitmap.h"
#include "runtimes/runtime.h"
#include "sfprof_event.h"
#include "stacks/stacks_int.h"
#include "util.h"

/* A set of (pid, address) pairs: open addressing, power-of-two size. */
struct jit_set {
	struct jit_key {
		uint64_t addr;
		uint32_t pid;
		uint32_t used;
		uint32_t seq; /* (written: the entry; else 0) */
	} *k;
	size_t nr, size;
};

struct stacks_jit_rec {
	struct jit_set written; /* (pid, entry start) handed to fn */
	struct jit_set pending; /* (pid, pc) not named yet */
};

static size_t set_slot(const struct jit_set *t, uint32_t pid, uint64_t addr, uint32_t seq)
{
	uint64_t h = (addr ^ ((uint64_t)pid << 40) ^ ((uint64_t)seq << 20)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (t->size - 1);
}

static bool set_has(const struct jit_set *t, uint32_t pid, uint64_t addr, uint32_t seq)
{
	if (!t->size)
		return false;
	for (size_t i = set_slot(t, pid, addr, seq);; i = (i + 1) & (t->size - 1)) {
		if (!t->k[i].used)
			return false;
		if (t->k[i].pid == pid && t->k[i].addr == addr && t->k[i].seq == seq)
			return true;
	}
}

/* 0 (added, or there already), -ENOMEM. */
static int set_add(struct jit_set *t, uint32_t pid, uint64_t addr, uint32_t seq)
{
	size_t i;

	if (set_has(t, pid, addr, seq))
		return 0;
	if ((t->nr + 1) * 2 > t->size) {
		struct jit_set n = { .size = t->size ? t->size * 2 : 256 };

		n.k = calloc(n.size, sizeof(*n.k));
		if (!n.k)
			return -ENOMEM;
		for (size_t j = 0; j < t->size; j++)
			if (t->k[j].used) {
				for (i = set_slot(&n, t->k[j].pid, t->k[j].addr, t->k[j].seq);
				     n.k[i].used;
				     i = (i + 1) & (n.size - 1))
					;
				n.k[i] = t->k[j];
			}
		n.nr = t->nr;
		free(t->k);
		*t = n;
	}
	for (i = set_slot(t, pid, addr, seq); t->k[i].used; i = (i + 1) & (t->size - 1))
		;
	t->k[i] = (struct jit_key){ addr, pid, 1, seq };
	t->nr++;
	return 0;
}

void stacks_jit_stats(const struct stacks *s, struct stacks_stats *out)
{
	struct jitmap_stats js;

	if (!s->jit)
		return;
	jitmaps__stats(s->jit, &js);
	out->jit_entries = js.perfmap_entries;
	out->jit_dumps = js.dumps_opened;
	out->jit_dump_loads = js.dump_loads;
	out->jit_bad = js.dump_bad + js.perfmap_bad_lines;
	out->jit_dumps_broken = js.dumps_broken;
	out->jit_dropped = js.perfmap_dropped;
	out->jit_written = s->jrec ? s->jrec->written.nr : 0;
}

void stacks_jit_stats__print(const struct stacks_stats *st, FILE *f)
{
	if (st->pytramp_rows)
		fprintf(f, "stacks_pytramp_rows: %llu\n", (unsigned long long)st->pytramp_rows);
	if (st->rt_named || st->rt_unnamed)
		fprintf(f, "stacks_runtime_named: %llu\nstacks_runtime_unnamed: %llu\n"
			   "stacks_runtime_name_ns: %llu\nstacks_runtime_name_ns_max: %llu\n",
			(unsigned long long)st->rt_named, (unsigned long long)st->rt_unnamed,
			(unsigned long long)st->rt_ns, (unsigned long long)st->rt_ns_max);
	if (!st->jit_entries && !st->jit_dumps)
		return;
	fprintf(f, "stacks_jit_entries: %llu\n", (unsigned long long)st->jit_entries);
	fprintf(f, "stacks_jit_dumps: %llu\n", (unsigned long long)st->jit_dumps);
	fprintf(f, "stacks_jit_dump_loads: %llu\n", (unsigned long long)st->jit_dump_loads);
	fprintf(f, "stacks_jit_bad_records: %llu\n", (unsigned long long)st->jit_bad);
	fprintf(f, "stacks_jit_dumps_broken: %llu\n", (unsigned long long)st->jit_dumps_broken);
	/* entries past the memory bounds (jitmap.h): never silently */
	fprintf(f, "stacks_jit_dropped: %llu\n", (unsigned long long)st->jit_dropped);
	if (st->jit_written)
		fprintf(f, "stacks_jit_written: %llu\n", (unsigned long long)st->jit_written);
}

void stacks_jit_free(struct stacks *s)
{
	free(s->vmnative);
	s->vmnative = NULL;
	if (!s->jrec)
		return;
	free(s->jrec->written.k);
	free(s->jrec->pending.k);
	free(s->jrec);
	s->jrec = NULL;
}

bool stacks_jit_code(struct stacks *s, const struct pc_entry *e)
{
	/* anonymous code; or, in a report, code in no mapping the capture
	 * knows (it keeps file-backed ones only) */
	if (e->sym.has_elf || (e->sym.dso_path && strcmp(e->sym.dso_path, "[anon]")))
		return false;
	if (s->jit)
		return true;
	if (!s->opts.perf_maps && !s->opts.jit_record)
		return false;
	s->jit = jitmaps__new();
	return s->jit != NULL;
}

/*
 * The frame-pointer fallback's check: ra's call in an executable mapping
 * of the process, or in code a JIT named (a capture keeps no anonymous
 * mappings, only the JIT entries its stacks used).
 */
bool stacks_is_exec(void *ctx, uint64_t ra)
{
	struct stacks *s = ctx;
	struct sframe_row row;
	struct sframe_func fn;
	struct jitmap_hit hit;
	int rc;

	if (!s->cur || ra == 0)
		return false;
	rc = proc__find_row(s->cur, ra - 1, &row, &fn, NULL);
	/* (a miss may have re-read the maps: the memo's tag follows them) */
	if (proc__generation(s->cur) != s->cur_gen) {
		s->cur_gen = proc__generation(s->cur);
		s->ucache.tag = s->cur_gen;
	}
	if (rc != -ENOENT)
		return true;
	return s->jit && !jitmaps__lookup(s->jit, s->cur, proc__pid(s->cur), ra - 1, 0, &hit);
}

void stacks__set_jitmaps(struct stacks *s, struct jitmaps *j)
{
	if (!s->jit_borrowed)
		jitmaps__free(s->jit);
	s->jit = j;
	s->jit_borrowed = j != NULL;
}

/* pc of process pid (its entry seq when tagged, else 0): written (or
 * already) 1, not known 0, or fn's error. */
static int record_one(struct stacks *s, struct proc *p, uint32_t pid, uint64_t pc,
		      uint32_t seq, int final, stacks_jit_fn fn, void *ctx)
{
	struct jitmap_hit hit;
	int err;

	if ((!seq || jitmaps__entry(s->jit, pid, seq, pc, &hit)) &&
	    jitmaps__lookup(s->jit, p, pid, pc, final, &hit))
		return 0;
	/* (an entry newer than one written for the same code is written
	 * too: the capture keeps them in their order) */
	if (set_has(&s->jrec->written, pid, hit.start, hit.seq))
		return 1;
	err = stacks_runtime_jit_written(s, pid, hit.name, hit.end - hit.start);
	if (!err)
		err = fn(ctx, pid, hit.start, hit.end - hit.start, hit.name);
	if (err)
		return err;
	return set_add(&s->jrec->written, pid, hit.start, hit.seq) ? -ENOMEM : 1;
}

/* The frame-pointer fallback's frames (and a walk's last frame without a
 * row): where JIT code can be (it has no rows). */
static bool jit_candidate(const struct stacks *s, size_t i, size_t n, int stop)
{
	return i + 1 < n ? (s->frames[i + 1].flags & UNWIND_FRAME_FP) != 0
			 : stop == UNWIND_STOP_NO_ROW || stop == UNWIND_STOP_NO_MAPPING;
}

/* The frame pointers of a stack's frames, found when a runtime asks. */
struct fp_walk {
	struct stacks *s;
	const struct sfprof_event *ev;
	const struct unwind_ops *ops;
	size_t n;
	bool have;
	uint64_t fps[STACKS_MAX_DEPTH];
};

/*
 * runtime_frame.frame_fp: frame i's frame pointer as the walk restored it
 * (0 where it did not know it): the walk again, by the general step (it
 * gives the frames unwind_stack() gave), once per stack, and only for a
 * process a runtime says is its own.
 */
static uint64_t walk_fp(void *ctx, size_t idx)
{
	struct fp_walk *w = ctx;
	struct unwind_state st;
	size_t i = 0;

	if (!w->have) {
		unwind_for_each_frame(&st, &w->ev->regs, w->ev->stack, w->ev->stack_len, w->ops,
				      (unsigned)w->n) {
			if (i >= w->n || st.pc != w->s->frames[i].pc)
				break;
			w->fps[i++] = (st.reg_known & (1u << UNWIND_REG_RBP)) ?
					      st.regs[UNWIND_REG_RBP] : 0;
		}
		for (; i < w->n; i++)
			w->fps[i] = 0;
		w->have = true;
	}
	return idx < w->n ? w->fps[idx] : 0;
}

#define VMNATIVE_SLOTS 1024u

/* jitmaps__add_live() for a frame in a VM's native code: the entry this
 * process's PC had with that name before when it is still there (one
 * slot per process, PC and name hash, the newest kept), else a new one. */
static int vmnative_add(struct stacks *s, uint64_t pc, const char *name, uint64_t t,
			struct jitmap_hit *hit)
{
	uint32_t pid = proc__pid(s->cur);
	uint64_t h = 0xcbf29ce484222325ull;
	struct vmnative_slot *v;
	int err;

	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	if (!s->vmnative && !(s->vmnative = calloc(VMNATIVE_SLOTS, sizeof(*s->vmnative))))
		return -ENOMEM;
	v = &s->vmnative[((h ^ pc * 0x9e3779b97f4a7c15ull) + pid) % VMNATIVE_SLOTS];
	if (v->seq && v->pc == pc && v->hash == h && v->pid == pid &&
	    !jitmaps__entry(s->jit, pid, v->seq, pc, hit) && hit->start == pc &&
	    !strcmp(hit->name, name))
		return 0;
	if ((err = jitmaps__add_live(s->jit, pid, pc, name, t, hit)))
		return err;
	*v = (struct vmnative_slot){ pc, h, pid, hit->seq };
	return 0;
}

/* Live: a runtime's name for frame i, read from its VM now (close to the
 * sample), kept as a JIT entry: its seq, or 0. sources_only: the name of
 * the JIT entry naming it (its line or the frames inlined there wanted),
 * asked only of the runtimes that give frames' source lines
 * (frame_sources), whose name must be the same (a perf map's spelling
 * wins). sym: the native function it is in (runtime.h names_native()),
 * NULL for JIT code. */
static uint32_t runtime_name(struct fp_walk *w, size_t i, uint64_t look, uint64_t t,
			     const char *sources_only, const char *sym)
{
	struct stacks *s = w->s;
	const struct sfprof_event *ev = w->ev;
	struct runtime_frame rf = {
		.pc = look,
		.leaf = !(s->frames[i].flags & UNWIND_FRAME_CALLER),
		.stack = ev->stack,
		.stack_lo = ev->regs.sp,
		.stack_len = ev->stack_len,
		.frame_fp = walk_fp,
		.walk = w,
		.index = i,
		.sym = sym,
	};
	char name[2048], file[256] = "", inl[1024] = "";
	uint32_t line = 0;
	bool carried = false;
	struct jitmap_hit hit;
	uint64_t t0 = util__now_ns();
	int rc;

	rf.file = file;
	rf.file_size = sizeof(file);
	rf.line = &line;
	rf.inl = inl;
	rf.inl_size = sizeof(inl);
	rf.carried = &carried;
	rc = stacks_runtime_frame_name(s, &rf, name, sizeof(name), sources_only != NULL);
	file[sizeof(file) - 1] = 0;
	inl[sizeof(inl) - 1] = 0;
	/* (asked for its source: an answer with neither a line nor frames
	 * inlined there adds nothing to the entry's name) */
	if (!rc && sources_only && ((!line && !inl[0]) || strcmp(name, sources_only)))
		rc = -ENOENT;

	t0 = util__now_ns() - t0;
	if (rc == -ESRCH || (sources_only && rc))
		return 0;
	s->st.rt_ns += t0;
	if (t0 > s->st.rt_ns_max)
		s->st.rt_ns_max = t0; /* (a process's first: its binary read) */
	if (rc || (sym ? vmnative_add(s, look, name, t, &hit)
		       : jitmaps__add_live_src(s->jit, proc__pid(s->cur), look, name,
					       file[0] ? file : NULL, line, inl[0] ? inl : NULL,
					       t, &hit))) {
		s->st.rt_unnamed++;
		return 0;
	}
	s->st.rt_named++;
	if (carried && i < STACKS_MAX_DEPTH)
		s->jit_carried[i / 64] |= 1ull << (i % 64);
	return hit.seq;
}

/* A frame in native code whose frames a runtime names (runtime.h
 * names_native(), asked once per PC): live; in record and report only by
 * a runtime whose capture records carry them (frames_offline: their PCs
 * are every function's, a capture's entry by PC could name one only, and
 * record writes none for a native frame). */
static bool live_native(struct stacks *s, struct pc_entry *e, size_t n)
{
	if (!(s->opts.perf_maps || s->opts.jit_record || s->jit_borrowed) ||
	    n > STACKS_MAX_DEPTH)
		return false;
	if (!(e->have & HAVE_VMNATIVE)) {
		e->have |= HAVE_VMNATIVE;
		if (stacks_runtime_names_native(s, e->sym.name,
						s->opts.jit_record || s->jit_borrowed))
			e->have |= IS_VMNATIVE;
	}
	if (!(e->have & IS_VMNATIVE))
		return false;
	if (!s->jit)
		s->jit = jitmaps__new();
	return s->jit != NULL;
}

void stacks_jit_tag(struct stacks *s, const struct sfprof_event *ev, const struct unwind_ops *ops,
		    size_t n, int stop)
{
	uint64_t fp = s->st.unwind.fp_frames, t = ev->ts_ns;
	bool none = fp == s->jit_fp_frames; /* no frame found by its FP */
	bool any;
	struct fp_walk *w = NULL;

	s->jit_fp_frames = fp;
	memset(s->jit_carried, 0, sizeof(s->jit_carried));
	if ((!s->jit && !s->opts.perf_maps && !s->opts.jit_record) || !s->cur)
		return;
	/* (a runtime's JIT code may have rows: then any frame may be it) */
	any = stacks_runtime_proc(s);
	if (!any && none && stop != UNWIND_STOP_NO_ROW && stop != UNWIND_STOP_NO_MAPPING)
		return;
	for (size_t i = 0; i < n; i++) {
		struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;
		struct jitmap_hit hit;
		struct pc_entry *e;
		bool live, sized;
		int rc;

		if (!any && !jit_candidate(s, i, n, stop))
			continue;
		e = stacks_symbolized(s, look);
		if (e->sym.name) {
			/* (live: a VM's native code its frames run in, the name
			 * the VM gives this sample's frame) */
			if (!live_native(s, e, n))
				continue;
			if (!w) {
				if (!(w = malloc(sizeof(*w))))
					break;
				*w = (struct fp_walk){ .s = s, .ev = ev, .ops = ops, .n = n };
			}
			f->pad = runtime_name(w, i, look, t, NULL, e->sym.name);
			continue;
		}
		if (!stacks_jit_code(s, e))
			continue;
		/* (live: a runtime reads its name from the VM now) */
		if ((s->opts.perf_maps || s->opts.jit_record) &&
		    stacks_runtime_jit_name(s, look) < 0)
			continue;
		rc = jitmaps__lookup_at(s->jit, s->cur, proc__pid(s->cur), look, t, 0, &hit);
		/* (report: the runtimes that name frames from the capture's
		 * records, runtime.h frames_offline) */
		live = (s->opts.perf_maps || s->opts.jit_record || s->jit_borrowed) &&
		       n <= STACKS_MAX_DEPTH && stacks_runtime_names_frames(s);
		/* a JIT map's entry (perf map, jitdump) names the frame (a
		 * caller's with its line first where a runtime gives frames'
		 * sources); else, live, the runtime reads it from the VM (its
		 * own entries are one byte long) */
		sized = !rc && hit.end - hit.start > 1;
		if (sized && !(live && (f->flags & UNWIND_FRAME_CALLER) && hit.line == 0)) {
			f->pad = hit.seq;
			continue;
		}
		if (live) {
			/* one walk of the frame pointers per stack, at its first ask */
			if (!w) {
				if (!(w = malloc(sizeof(*w))))
					break;
				*w = (struct fp_walk){ .s = s, .ev = ev, .ops = ops, .n = n };
			}
			f->pad = runtime_name(w, i, look, t, sized ? hit.name : NULL, NULL);
			if (f->pad)
				continue;
		}
		if (!rc)
			f->pad = hit.seq;
	}
	free(w);
}

int stacks__record_jit(struct stacks *s, stacks_jit_fn fn, void *ctx)
{
	uint32_t pid;
	bool py, seen;

	if (!s->opts.jit_record || !s->cur || !s->resolved_n)
		return 0;
	if (!s->jrec && !(s->jrec = calloc(1, sizeof(*s->jrec))))
		return -ENOMEM;
	pid = proc__pid(s->cur);
	/* a CPython trampoline has a row (runtimes/python/pytramp_ops.c): in
	 * a Python process any frame may be JIT code */
	py = stacks_runtime_proc(s);
	for (size_t i = 0; i < s->resolved_n; i++) {
		const struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;
		struct pc_entry *e;
		int rc;

		/* JIT code has no rows: only a frame whose caller was found by
		 * its frame pointer, or the last one of a walk that found no
		 * row, can be JIT code (the others are not even symbolized) */
		if (!py && !jit_candidate(s, i, s->resolved_n, s->resolved_stop))
			continue;
		/* (a runtime's own records carry its name) */
		if (i < STACKS_MAX_DEPTH && (s->jit_carried[i / 64] & (1ull << (i % 64))))
			continue;
		e = stacks_symbolized(s, look);
		if (e->sym.name || !stacks_jit_code(s, e))
			continue;
		/* report needs an entry before the events that go through it
		 * (a trampoline's rows, the fallback's executable check): the
		 * files are read at once for a PC first missed, and a PC not
		 * named is asked again (the maps are re-read at their pace) */
		seen = set_has(&s->jrec->pending, pid, look, 0) ||
		       s->jrec->pending.nr >= STACKS_JIT_PENDING_MAX;
		rc = record_one(s, s->cur, pid, look, f->pad, !seen, fn, ctx);
		if (rc < 0)
			return rc;
		if (rc == 0 && !seen && set_add(&s->jrec->pending, pid, look, 0))
			return -ENOMEM;
	}
	return 0;
}

int stacks__record_jit_finish(struct stacks *s, stacks_jit_fn fn, void *ctx)
{
	struct jit_set *t;

	if (!s->jrec || !s->jit)
		return 0;
	t = &s->jrec->pending;
	for (size_t i = 0; i < t->size; i++) {
		int rc;

		if (!t->k[i].used)
			continue;
		/* (the process may be gone: the files found stay open) */
		rc = record_one(s, NULL, t->k[i].pid, t->k[i].addr, 0, 1, fn, ctx);
		if (rc < 0)
			return rc;
	}
	return 0;
}
