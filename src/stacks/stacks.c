// SPDX-License-Identifier: MIT
/*
 * Events -> unwound, symbolized stacks -> profile (src/stacks/stacks.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/stacks.h"
#include "stacks/stacks_int.h"
#include "stacks/lockname.h"
#include "unwind/cfi.h"
#include "runtimes/jit/jitmap.h"
#include "stacks/wakers.h"
#include "util.h"
#include "model/dso.h"
#include "model/elfread.h"

_Static_assert(sizeof(struct unwind_frame) == 16,
	       "an aggregation key holds unwind_frames as two words each");

struct stacks *stacks__new(struct proc_cache *pc, struct profile *prof,
			   const struct stacks_opts *opts)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pc = pc;
	s->prof = prof;
	s->keep_order = prof && profile__keeps_order(prof); /* (set before: report_sink) */
	s->opts = *opts;
	if (!s->opts.max_depth || s->opts.max_depth > STACKS_MAX_DEPTH)
		s->opts.max_depth = STACKS_MAX_DEPTH;
	s->cache_bits = CACHE_BITS_MIN;
	s->cache = calloc(1u << CACHE_BITS_MIN, sizeof(*s->cache));
	s->rows = aligned_alloc(64, (1u << CACHE_BITS_MIN) * sizeof(*s->rows));
	if (s->rows)
		memset(s->rows, 0, (1u << CACHE_BITS_MIN) * sizeof(*s->rows));
	s->ucache.bits = CACHE_BITS_MIN;
	s->ucache.e = calloc(1u << CACHE_BITS_MIN, sizeof(*s->ucache.e));
	s->frames = calloc(STACKS_MAX_DEPTH, sizeof(*s->frames));
	/* user frames + marker + kernel frames */
	/* user frames (inline levels included) + marker + kernel frames;
	 * twice, and a few markers: a block joined to its waker's stack */
	s->pids = calloc(2 * (USER_FRAMES_MAX + 1 + 128) + 4, sizeof(*s->pids));
	s->marker_id = -1;
#if defined(__x86_64__)
	s->crc32 = __builtin_cpu_supports("sse4.2");
#endif
	if (!s->cache || !s->rows || !s->ucache.e || !s->frames || !s->pids) {
		stacks__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void stacks__forget_binaries(struct stacks *s)
{
	size_t n = (size_t)1 << s->cache_bits;

	memset(s->cache, 0, n * sizeof(*s->cache));
	memset(s->rows, 0, n * sizeof(*s->rows));
	memset(s->ucache.e, 0, ((size_t)1 << s->ucache.bits) * sizeof(*s->ucache.e));
	s->nr_entries = 0;
	lockname__free(s->locks);
	s->locks = NULL;
	s->cur = NULL;
}

void stacks__free(struct stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->agg_nr; i++) {
		free(s->agg[i].key); /* (and its ids and root) */
	}
	free(s->agg);
	free(s->agg_slots);
	free(s->agg_order);
	free(s->cache);
	free(s->rows);
	free(s->ucache.e);
	free(s->frames);
	free(s->pids);
	lockname__free(s->locks);
	if (!s->jit_borrowed)
		jitmaps__free(s->jit);
	stacks_jit_free(s);
	stacks_runtime_free(s);
	wakers__free(s->wakers);
	free(s);
}

void stacks__set_thread_top(struct stacks *s, stacks_thread_top_fn fn, void *ctx)
{
	s->thread_top = fn;
	s->thread_top_ctx = ctx;
}

void stacks__set_labeler(struct stacks *s, stacks_label_fn fn, void *ctx)
{
	s->labeler = fn;
	s->labeler_ctx = ctx;
}

int stacks__set_namer(struct stacks *s, size_t runtime, pyname_fn fn, void *ctx)
{
	if (runtime >= RUNTIME_MAX)
		return -EINVAL;
	if (!s->namer[runtime] && fn)
		s->nr_namers++;
	else if (s->namer[runtime] && !fn)
		s->nr_namers--;
	s->namer[runtime] = fn;
	s->namer_ctx[runtime] = ctx;
	return 0;
}

/* A native frame the section being merged replaces: its runtime says. */
static int stacks_is_eval(const struct stacks *s, const char *name)
{
	int i = runtime__section(s->py->flags);

	return i >= 0 && runtime__get((size_t)i)->is_eval(name);
}

/* The namer of the section being merged (its runtime's), and its context. */
static pyname_fn stacks_namer(const struct stacks *s, uint32_t flags, void **ctx)
{
	int i = runtime__section(flags);

	if (i < 0 || i >= RUNTIME_MAX) {
		*ctx = NULL;
		return NULL;
	}
	*ctx = s->namer_ctx[i];
	return s->namer[i];
}

/* The event's Python section when its frames are to be merged, else NULL. */
static const struct sfprof_py_section *event_python(struct stacks *s, const struct sfprof_event *e)
{
	const struct sfprof_py_section *sec;
	int bad = 0;

	void *ctx;

	if (!(e->flags & SFPROF_EVF_PYTHON) || s->opts.no_python ||
	    !s->nr_namers)
		return NULL;
	sec = pymerge__section(e, &bad);
	s->pyst.bad_sections += bad;
	if (!sec || !stacks_namer(s, sec->flags, &ctx))
		return NULL;
	s->pyst.sections++;
	s->pyst.cut += !!(sec->flags & SFPROF_PYS_CUT);
	s->pyst.read_failed += !!(sec->flags & SFPROF_PYS_READ_FAILED);
	s->py_pid = e->pid;
	return sec;
}

size_t stacks__tracing_frames(stacks_ksym_fn fn, void *ctx, const uint64_t *kips, size_t nk)
{
	static const char *const tracing[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					       "__traceiter_", "trace_call_bpf", "perf_trace_" };
	size_t i;

	for (i = 0; fn && i < nk; i++) {
		const char *name = fn(ctx, kips[i]);
		size_t j;

		for (j = 0; name && j < sizeof(tracing) / sizeof(tracing[0]); j++)
			if (!strncmp(name, tracing[j], strlen(tracing[j])))
				break;
		if (!name || j == sizeof(tracing) / sizeof(tracing[0]))
			break; /* the first frame of the traced code */
	}
	return i < nk ? i : 0; /* (all of them: keep what there is) */
}

void stacks__set_ksym(struct stacks *s, stacks_ksym_fn fn, void *ctx)
{
	s->ksym = fn;
	s->ksym_ctx = ctx;
}


/*
 * How the current section's groups go onto the stack's eval frames: nev
 * native eval frames, ng groups (starts[], innermost first). Only the ng
 * innermost eval frames take groups (when nev > ng); seen counts eval
 * frames met from the outermost. 1 when the section has frames.
 */
struct py_plan {
	uint32_t starts[SFPROF_PY_FRAMES_MAX];
	uint32_t ng, nev, seen, skip;
};

static int py_plan(struct stacks *s, size_t n, struct py_plan *p)
{
	p->ng = (uint32_t)pymerge__groups(s->py, p->starts, SFPROF_PY_FRAMES_MAX);
	if (!p->ng)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;

		p->nev += stacks_is_eval(s, stacks_symbolized(s, look)->sym.name);
	}
	if (p->nev == 0)
		s->pyst.no_eval++;
	else if (p->nev < p->ng)
		s->pyst.unmatched += p->ng - p->nev;
	/* (nev > ng: the outer eval frames, past the walk, stay native) */
	p->skip = p->nev > p->ng ? p->nev - p->ng : 0;
	return 1;
}

/* Groups [g, last) of the plan: their frames' ids, oldest first. */
static int py_ids(struct stacks *s, const struct py_plan *p, uint32_t g, uint32_t last,
		  uint32_t *out, size_t room)
{
	struct pymerge_ctx c = { s->prof, NULL, NULL, s->py_pid, &s->pyst };

	c.name = stacks_namer(s, s->py->flags, &c.name_ctx);
	uint32_t to = last < p->ng ? p->starts[last] : s->py->nframes;
	int cut = last >= p->ng && (s->py->flags & (SFPROF_PYS_CUT | SFPROF_PYS_READ_FAILED));

	return pymerge__ids(&c, s->py, p->starts[g], to, cut, out, room);
}

/*
 * Symbolize frames[0..n), name the kernel PCs, and fill the entry's
 * accounting fields. With `ids`, also put the stack's profile frame ids
 * (outermost first, the marker and kernel frames included) into s->pids
 * and return them with their count in *np_out; NULL then means no memory.
 * Without, returns s->pids untouched.
 */
uint32_t *stacks_build_ids(struct stacks *s, size_t n, int stop,
			   const uint64_t *kips, size_t nk, bool ids,
			   size_t *np_out, struct agg_entry *acc)
{
	uint32_t *out = s->pids + 1; /* slot 0: the marker */
	struct sym_result outer_sr = { 0 }; /* (a copy: the PC cache's entry
					       may be reused in the loop) */
	const char *outer = NULL;
	size_t np = 0;
	int complete;

	struct py_plan py = { 0 };
	uint64_t failed = s->pyst.frames_failed;

	s->jit_missed = 0;
	if (ids && s->py && py_plan(s, n, &py) && py.nev == 0) {
		/* no native eval frame: the Python frames go at the root */
		int k = py_ids(s, &py, 0, py.ng, out, USER_FRAMES_MAX - n);

		if (k < 0)
			return NULL;
		np += (size_t)k;
	}
	/* frames[n-1] is the outermost: it goes first */
	for (size_t i = n; i-- > 0;) {
		const struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;
		struct pc_entry *e = stacks_symbolized(s, look);

		if (ids && py.ng && stacks_is_eval(s, e->sym.name) && py.seen++ >= py.skip) {
			/* eval frame g (innermost first) runs group g; the
			 * outermost matched one also the groups left over */
			uint32_t g = py.nev - py.seen, last = g + 1;
			int k;

			if (py.nev < py.ng && py.seen == 1)
				last = py.ng;
			k = py_ids(s, &py, g, last, out + np, USER_FRAMES_MAX - np - i);
			if (k < 0)
				return NULL;
			np += (size_t)k;
			/* the eval frame's own id goes, its inlined callees stay */
			k = stacks_frame_ids(s, e, look, f->pad, out + np, USER_FRAMES_MAX - np - i);
			if (k < 0)
				return NULL;
			memmove(out + np, out + np + 1, (size_t)(k - 1) * sizeof(*out));
			np += (size_t)(k - 1);
		} else if (ids) {
			int k = stacks_frame_ids(s, e, look, f->pad, out + np,
						 USER_FRAMES_MAX - np - i);

			if (k < 0)
				return NULL;
			np += (size_t)k;
		} else {
			np++;
		}
		if (!e->sym.name)
			acc->unnamed++;
		if (i == n - 1) {
			outer = e->sym.name;
			outer_sr = e->sym;
		}
	}

	complete = stop == UNWIND_STOP_COMPLETE || stop == UNWIND_STOP_USER_GONE;
	if (!complete && (stacks__is_entry_symbol(outer) ||
			  (n && stacks_at_elf_entry(s, &outer_sr)))) {
		complete = 1;
		acc->at_entry = 1;
	}
	acc->complete = complete;
	acc->jit_pending = s->jit_missed;
	acc->name_pending = s->pyst.frames_failed != failed;
	if (!ids)
		return s->pids;
	if (!complete) {
		if (s->marker_id < 0) {
			struct profile_frame pf = { .name = STACKS_TRUNCATED,
						    .kind = PROFILE_FRAME_MARKER };

			s->marker_id = profile__frame_id(s->prof, &pf);
			if (s->marker_id < 0)
				return NULL;
		}
		out--;
		np++;
		out[0] = (uint32_t)s->marker_id;
	} else if (stop == UNWIND_STOP_USER_GONE) {
		/* no user part to show: said so, then the kernel's */
		struct profile_frame pf = { .name = STACKS_NO_USER_STACK,
					    .kind = PROFILE_FRAME_MARKER };
		int64_t id = profile__frame_id(s->prof, &pf);

		if (id < 0)
			return NULL;
		out[np++] = (uint32_t)id;
	}

	for (size_t i = nk; i-- > 0;) {
		const char *name = s->ksym ? s->ksym(s->ksym_ctx, kips[i]) : NULL;
		struct profile_frame pf = { .kind = PROFILE_FRAME_KERNEL,
					    .rel_addr = kips[i] };
		char hex[24];
		int64_t id;

		if (!name) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)kips[i]);
			name = hex;
		}
		pf.name = name;
		id = profile__frame_id(s->prof, &pf);
		if (id < 0)
			return NULL;
		out[np++] = (uint32_t)id;
	}
	*np_out = np;
	return out;
}

/*
 * What each record kind (SFPROF_EV_*) is to a stacks pipeline, and what
 * each profile kind (PROFILE_*) takes and how it adds a sample: the one
 * place an event kind's meaning is written (session/report_out.c's table
 * names them, gives their files and roots' defaults).
 */
struct stacks_record_kind {
	bool lifecycle;	 /* FORK/EXIT: changes the model, not a sample */
	bool tracepoint; /* the kernel stack starts under the tracing frames */
	bool lock;	 /* a futex wait: a lock label; root lock:SYM with --by-lock */
	bool block;	 /* a block the waker that ended it is joined to */
	bool waker;	 /* a wake-up: kept until its block's record */
	bool period;	 /* weighed as one sample period in wall (else e->weight, ns) */
	bool state;	 /* offcpu.state holds the task's state (SFPROF_OFFCPU_*) */
};

static const struct stacks_record_kind stacks_records[] = {
	[SFPROF_EV_CPU] = { .period = true },
	[SFPROF_EV_FUTEX] = { .tracepoint = true, .lock = true, .block = true },
	[SFPROF_EV_FORK] = { .tracepoint = true, .lifecycle = true },
	[SFPROF_EV_EXIT] = { .tracepoint = true, .lifecycle = true },
	[SFPROF_EV_OFFCPU] = { .tracepoint = true, .block = true, .state = true },
	[SFPROF_EV_WAKER] = { .tracepoint = true, .waker = true },
};

/* An unknown kind (a newer capture's) is a tracepoint's sample. */
static const struct stacks_record_kind *record_kind(uint32_t kind)
{
	static const struct stacks_record_kind other = { .tracepoint = true };

	return kind < sizeof(stacks_records) / sizeof(stacks_records[0]) && kind ?
		       &stacks_records[kind] : &other;
}

struct stacks_profile_kind {
	uint32_t takes;	 /* the records (1 << SFPROF_EV_*) it takes as samples; 0: all */
	bool aggregated; /* raw stacks aggregated before naming (stacks_agg.c) */
	bool wall;	 /* each stack under its state's marker, in ns */
	bool wakers;	 /* keeps waker records to join to blocks */
};

static const struct stacks_profile_kind stacks_profiles[] = {
	[PROFILE_CPU] = { 1u << SFPROF_EV_CPU, .aggregated = true },
	[PROFILE_FUTEX] = { 1u << SFPROF_EV_FUTEX, .wakers = true },
	[PROFILE_OFFCPU] = { 1u << SFPROF_EV_OFFCPU, .wakers = true },
	[PROFILE_WALL] = { 1u << SFPROF_EV_CPU | 1u << SFPROF_EV_OFFCPU, .wall = true,
			   .wakers = true },
};

static const struct stacks_profile_kind *profile_kind(uint32_t kind)
{
	static const struct stacks_profile_kind other = { .wakers = true };

	return kind < sizeof(stacks_profiles) / sizeof(stacks_profiles[0]) ?
		       &stacks_profiles[kind] : &other;
}

static bool stacks_takes(const struct stacks_profile_kind *pk, uint32_t record_kind)
{
	return !pk->takes || (record_kind < 32 && (pk->takes & 1u << record_kind));
}

/*
 * A futex's lock: "SYMBOL" or "SYMBOL+0xOFF" when the address lies in a
 * binary's data (a global or static lock), else "0xADDR". Into buf.
 */
static void lock_label(struct stacks *s, const struct sfprof_event *e, char *buf, size_t size)
{
	char root[PROFILE_ROOT_MAX];
	struct sym_result lr;
	const char *lname;
	uint64_t loff;

	if (s->cur && !s->locks)
		s->locks = lockname__new(proc_cache__dsos(s->pc));
	if (s->cur && s->locks && !lockname__resolve(s->locks, s->cur, e->futex.addr, &lname, &loff))
		profile_root__lock(root, sizeof(root), lname, loff, e->futex.addr);
	else if (s->cur && proc__symbolize(s->cur, e->futex.addr, &lr) == 0 && lr.name)
		profile_root__lock(root, sizeof(root), lr.name, lr.offset, e->futex.addr);
	else
		profile_root__lock(root, sizeof(root), NULL, 0, e->futex.addr);
	snprintf(buf, size, "%s", root + strlen("lock:"));
}

struct exe_name_ctx {
	char *buf;
	size_t size;
};

static int exe_name_cb(void *ctx, struct dso *d)
{
	struct exe_name_ctx *c = ctx;
	const struct elfread *elf = dso__elf(d);

	if (!elf || !elfread__is_executable(elf))
		return 0;
	snprintf(c->buf, c->size, "%.*s", SFPROF_COMM_LEN - 1, dso__name(d)); /* as exec's comm */
	return 1;
}

/*
 * The name of e's process, one per pid whichever thread is sampled
 * (threads name themselves worker-0, worker-1...): the main thread's comm
 * (tid == pid), which is the exec name unless it renamed itself; before
 * the main thread is seen, the executable's base name, else the thread's
 * comm. Kept until the main thread's comm changes (exec).
 */
static const char *stacks_process_name(struct stacks *s, const struct sfprof_event *e)
{
	unsigned slot = e->pid % 64;
	typeof(&s->pnames[0]) pn = &s->pnames[slot];
	int is_main = e->tid == e->pid;

	if (pn->pid != e->pid || !pn->name[0]) {
		struct exe_name_ctx c = { pn->name, sizeof(pn->name) };

		memset(pn, 0, sizeof(*pn));
		pn->pid = e->pid;
		if (is_main || !s->cur || proc__for_each_dso(s->cur, exe_name_cb, &c) != 1)
			stacks_copy_comm(pn->name, e->comm);
	}
	if (is_main && (!pn->main_seen || memcmp(pn->main_comm, e->comm, SFPROF_COMM_LEN))) {
		if (pn->main_seen) /* exec: a new program in this pid */
			stacks_copy_comm(pn->name, e->comm);
		pn->main_seen = true;
		memcpy(pn->main_comm, e->comm, SFPROF_COMM_LEN);
	}
	return pn->name;
}

/* lock: lock_label()'s, for a futex event (else unused). */
static void make_root(struct stacks *s, const struct sfprof_event *e, const char *lock,
		      char *root, size_t size)
{
	char comm[SFPROF_COMM_LEN + 1];
	bool by_lock = s->opts.by_lock && record_kind(e->kind)->lock;

	if (!s->opts.per_thread && !s->opts.per_process && !by_lock) {
		stacks_copy_comm(root, e->comm); /* size > comm's 17 */
		return;
	}
	stacks_copy_comm(comm, e->comm);
	if (by_lock && s->cur)
		snprintf(root, size, "lock:%s", lock);
	else if (s->opts.per_thread)
		profile_root__thread(root, size, comm, e->pid, e->tid);
	else if (s->opts.per_process)
		profile_root__process(root, size, stacks_process_name(s, e), e->pid);
	else
		memcpy(root, comm, strlen(comm) + 1); /* (by_lock, no proc) */
}

int stacks__frame_ids(struct stacks *s, const struct sfprof_event *e, const uint64_t *kips,
		      size_t nk, int user, const uint32_t **ids)
{
	struct agg_entry acc;
	size_t n = 0, np = 0;
	int stop = UNWIND_STOP_COMPLETE;

	memset(&acc, 0, sizeof(acc));
	if (user && !(e->flags & SFPROF_EVF_NO_USER_REGS))
		n = unwind_event(s, e, &stop);
	s->py = user ? event_python(s, e) : NULL;
	*ids = stacks_build_ids(s, n, stop, kips, nk > 128 ? 128 : nk, true, &np, &acc);
	s->py = NULL;
	return *ids ? (int)np : -ENOMEM;
}

/* -e wall: the stack under its state, weighted in nanoseconds. ids lies
 * in s->pids, which has room for one more. */
static int wall_add(struct stacks *s, const struct sfprof_event *e, const char *root,
		    const struct profile_labels *labels, uint32_t *ids, size_t np)
{
	const struct stacks_record_kind *rk = record_kind(e->kind);
	uint32_t st = rk->state ? e->offcpu.state : 0;
	struct profile_frame pf = {
		.name = !st ? "[running]" : st == SFPROF_OFFCPU_S ? "[sleep]" :
			st == SFPROF_OFFCPU_D ? "[uninterruptible]" :
			st == SFPROF_OFFCPU_R ? "[preempted]" : "[stopped]",
		.kind = PROFILE_FRAME_MARKER,
	};
	int64_t id = profile__frame_id(s->prof, &pf);

	if (id < 0)
		return -ENOMEM;
	memmove(ids + 1, ids, np * sizeof(*ids));
	ids[0] = (uint32_t)id;
	uint64_t w = rk->period ? s->opts.period_ns : e->weight;

	if (profile__add_sample(s->prof, root, labels, ids, np + 1, 1, w) ||
	    profile__order_push(s->prof, profile__last_stack(s->prof), w)) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	return 0;
}

int stacks__add_event(struct stacks *s, const struct sfprof_event *e,
		      const uint64_t *kips, size_t nk)
{
	char root[PROFILE_ROOT_MAX], lock[PROFILE_ROOT_MAX] = "", comm[SFPROF_COMM_LEN + 1];
	struct profile_labels labels;
	const uint32_t *ids;
	struct agg_entry acc;
	size_t n, np;
	int stop = UNWIND_STOP_NONE;
	const struct stacks_record_kind *rk = record_kind(e->kind);
	const struct stacks_profile_kind *pk = profile_kind(s->opts.kind);
	bool comm_root;

	s->st.events++;
	/* a tracepoint's stack (not a cpu sample's, which may be in a BPF
	 * program for real) begins under the tracing frames */
	if (rk->tracepoint) {
		size_t top = stacks__tracing_frames(s->ksym, s->ksym_ctx, kips, nk);

		kips += top;
		nk -= top;
	}
	if (rk->lifecycle) {
		/* lifecycle records change the model, they are not samples */
		s->st.events_skipped++;
		return 0;
	}
	if (rk->waker && pk->wakers && !s->opts.no_profile) {
		if (!s->wakers && !(s->wakers = wakers__new()))
			return -ENOMEM;
		s->st.wakers++;
		return wakers__add_record(s->wakers, s, s->prof, s->ksym, s->ksym_ctx, e, kips, nk);
	}
	if (!stacks_takes(pk, e->kind)) {
		s->st.events_skipped++;
		return 0;
	}
	if (e->flags & SFPROF_EVF_NO_USER_REGS)
		s->st.no_user_regs++;
	n = unwind_event(s, e, &stop);
	/* (record with its own profile, SFPROF_RECORD_PROFILE: the frames
	 * stacks__record_jit() hands over, as stacks__resolve_event()'s) */
	s->resolved_n = n;
	s->resolved_stop = stop;
	if (!s->opts.kernel)
		nk = 0;
	if (nk > 128)
		nk = 128;
	/* an aggregated (cpu) sample's root is its comm, unless per thread */
	comm_root = pk->aggregated && !s->opts.per_thread && !s->opts.per_process;
	memset(&acc, 0, sizeof(acc));
	comm_words(e->comm, acc.comm);
	acc.pid = e->pid;
	acc.tid = e->tid;
	if (!comm_root && pk->aggregated)
		make_root(s, e, NULL, root, sizeof(root));
	acc.proc = s->cur;
	acc.proc_birth = s->cur ? proc__birth(s->cur) : 0;
	acc.gen = s->cur_gen;
	acc.n = (uint32_t)n;
	acc.nk = (uint32_t)nk;
	acc.stop = stop;

	s->py = event_python(s, e);
	if (pk->aggregated && !s->opts.no_profile) {
		int err = stacks_agg_add(s, e, kips, nk, stop, &acc, comm_root, root);

		s->py = NULL;
		return err;
	}

	ids = stacks_build_ids(s, n, stop, kips, nk, !s->opts.no_profile, &np, &acc);
	s->py = NULL;
	stacks_count_sample(s, &acc);
	if (s->opts.no_profile)
		return 0;
	/* after the frames: naming the lock may re-read the maps */
	if (rk->lock)
		lock_label(s, e, lock, sizeof(lock));
	make_root(s, e, lock, root, sizeof(root));
	stacks_copy_comm(comm, e->comm);
	labels = (struct profile_labels){ .pid = e->pid, .tid = e->tid, .thread = comm };
	if (s->labeler)
		s->labeler(s->labeler_ctx, e->pid, &labels);
	if (rk->lock) {
		labels.lock = lock;
		labels.lock_addr = e->futex.addr;
	}
	if (ids && pk->wall)
		return wall_add(s, e, root, &labels, (uint32_t *)ids, np);
	if (ids && s->wakers && rk->block) {
		/* (ids lies in s->pids, which has room for a second stack) */
		size_t nt = wakers__take(s->wakers, e->tid, e->ts_ns - e->weight,
					 (uint32_t *)ids + np, USER_FRAMES_MAX + 1 + 128 + 3);

		np += nt;
		s->st.wakers_joined += nt != 0;
	}
	if (!ids || profile__add_sample(s->prof, root, &labels, ids, np, 1, e->weight) ||
	    profile__order_push(s->prof, profile__last_stack(s->prof), e->weight)) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	return 0;
}

void stacks__stats(const struct stacks *s, struct stacks_stats *out)
{
	*out = s->st;
	out->python = s->pyst;
	out->memo_hits = s->ucache.hits;
	out->memo_misses = s->ucache.misses;
	stacks_jit_stats(s, out);
}

void stacks_stats__print(const struct stacks_stats *st, FILE *f)
{
#define P(name, v) fprintf(f, "%s: %llu\n", name, (unsigned long long)(v))
	P("stacks_events", st->events);
	P("stacks_events_other_kind", st->events_skipped);
	P("stacks_no_user_regs", st->no_user_regs);
	P("stacks_complete", st->complete);
	P("stacks_truncated", st->truncated);
	P("stacks_complete_at_entry", st->entry_by_symbol);
	P("stacks_frames", st->frames);
	P("stacks_frames_unnamed", st->frames_unnamed);
	P("stacks_cache_hits", st->cache_hits);
	P("stacks_cache_misses", st->cache_misses);
	P("stacks_row_memo_hits", st->memo_hits);
	P("stacks_row_memo_misses", st->memo_misses);
	P("stacks_agg_flushes", st->agg_flushes);
	P("stacks_agg_rename_stale", st->agg_rename_stale);
	if (st->go_switch_continued || st->go_switch_stopped) {
		P("stacks_go_switch_continued", st->go_switch_continued);
		P("stacks_go_switch_stopped", st->go_switch_stopped);
		P("stacks_go_switch_parked", st->go_switch_parked);
		P("stacks_go_switch_g0", st->go_switch_g0);
	}
	if (st->go_signal_sections)
		P("stacks_go_signal_sections", st->go_signal_sections);
	if (st->go_bad_sections)
		P("stacks_go_bad_sections", st->go_bad_sections);
	if (st->add_errors)
		P("stacks_add_errors", st->add_errors);
	if (st->wakers) {
		P("stacks_wakers", st->wakers);
		P("stacks_wakers_joined", st->wakers_joined);
	}
#undef P
	if (st->python.sections || st->python.bad_sections)
		pymerge_stats__print(&st->python, f);
	stacks_jit_stats__print(st, f);
	unwind_stats__print(&st->unwind, f);
}
