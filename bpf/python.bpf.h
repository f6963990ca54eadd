/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * CPython frames: for an event of a thread in a process user space told
 * us runs CPython (py_procs, by tgid: include/sfprof_event.h struct
 * sfprof_py_proc), the chain of _PyInterpreterFrame the thread is running,
 * innermost first, as the trailing section of its record.
 *
 * The thread state (3.11): the GIL-state TSS key of the runtime,
 * _PyRuntime.gilstate.autoTSSkey._key, names the thread's pthread key
 * slot whose value is the thread's PyThreadState (CPython sets it when a
 * thread state is bound to its thread). A thread's slot is in its struct
 * pthread, which on x86-64 glibc is where the thread pointer
 * (task->thread.fsbase) points: specific_1stblock[key].data for keys
 * below 32 (CPython allocates its key at startup, so in practice always).
 * A thread without a thread state (a plain C thread) has no section.
 *
 * From the thread state: cframe->current_frame, then `previous` to a
 * bounded depth, per frame the code object, the last instruction started
 * as an offset from co_code_adaptive, and the is_entry marker. One read
 * of a window of the frame per frame, in a bpf_loop callback (checked
 * once by the verifier). More frames than SFPROF_PY_FRAMES_MAX mark the
 * section cut; an unreadable frame marks it failed (frames read so far
 * are kept).
 *
 * A code object seen for the first time (per process, in an LRU set) is
 * also sent, as a struct sfprof_py_code, through a small ring of its own,
 * py_new, which a thread of sfprof drains at once: it names the code
 * object while the process lives, even when the main consumer is busy
 * (loading debug info) and the process exits before its events are
 * handled.
 *
 * The frames are built in a per-CPU buffer per program kind (as the
 * stack's scratch slots: a futex program can be preempted, and the perf
 * program can interrupt it) and copied behind the stack by emit().
 */
#ifndef SFPROF_PYTHON_BPF_H
#define SFPROF_PYTHON_BPF_H

#include "target.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct sfprof_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sfprof_py_code);
	__type(value, __u8);
} py_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} py_new SEC(".maps");

struct py_buf {
	__u64 busy;
	__u8 win[SFPROF_PY_WIN + 8];
	/* the section as it travels: struct sfprof_py_section */
	__u32 nframes;
	__u32 flags;
	struct sfprof_py_frame frames[SFPROF_PY_FRAMES_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFPROF_SLOT_KINDS);
	__type(key, __u32);
	__type(value, struct py_buf);
} py_bufs SEC(".maps");

struct py_walk {
	struct py_buf *b;
	const struct sfprof_py_proc *p;
	__u64 frame;
	__u32 tgid;
};

/* A code object not seen before in this process goes to py_new. */
static __always_inline void py_note_code(__u32 tgid, __u64 code)
{
	struct sfprof_py_code k = { .tgid = tgid, .code = code };
	__u8 one = 1;

	if (bpf_map_lookup_elem(&py_seen, &k))
		return;
	if (!bpf_map_update_elem(&py_seen, &k, &one, BPF_NOEXIST))
		bpf_ringbuf_output(&py_new, &k, sizeof(k), 0);
}

static __always_inline __u64 py_win64(const struct py_buf *b, __u32 off)
{
	__u64 v = 0;

	if (off <= SFPROF_PY_WIN - 8)
		__builtin_memcpy(&v, b->win + off, 8);
	return v;
}

/* One frame; a bpf_loop callback. 1 ends the walk. */
static long py_frame(__u64 i, void *data)
{
	struct py_walk *w = data;
	struct py_buf *b = w->b;
	const struct sfprof_py_proc *p = w->p;
	__u32 n = b->nframes, fl = 0;
	__u64 code, instr;

	if (!w->frame)
		return 1;
	if (n >= SFPROF_PY_FRAMES_MAX) {
		b->flags |= SFPROF_PYS_CUT;
		return 1;
	}
	__u32 len = p->win_len;

	if (len > SFPROF_PY_WIN || len < 8)
		len = SFPROF_PY_WIN;
	if (bpf_probe_read_user(b->win, len, (void *)(w->frame + p->win_base))) {
		b->flags |= SFPROF_PYS_READ_FAILED;
		return 1;
	}
	w->frame = py_win64(b, p->w_previous);
	/* 3.12+: a C call's shim frame is no Python function; the frame
	 * pushed after it began that C call */
	if (p->owner_cstack != SFPROF_PY_NONE && p->w_owner < SFPROF_PY_WIN &&
	    b->win[p->w_owner] == p->owner_cstack) {
		if (n > 0 && n <= SFPROF_PY_FRAMES_MAX)
			b->frames[n - 1].flags |= SFPROF_PYF_ENTRY;
		return 0;
	}
	code = py_win64(b, p->w_code);
	instr = py_win64(b, p->w_instr);
	if (p->w_entry < SFPROF_PY_WIN && b->win[p->w_entry])
		fl = SFPROF_PYF_ENTRY;
	b->frames[n].code = code;
	b->frames[n].instr = (__s32)(instr - code - p->code_adaptive);
	b->frames[n].flags = fl;
	b->nframes = n + 1;
	py_note_code(w->tgid, code);
	return 0;
}

/* The current thread's PyThreadState, or 0 (none, or unreadable: *failed). */
static __always_inline __u64 py_tstate(const struct sfprof_py_proc *p, int *failed)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tss[2] = {}, key;
	__u64 tstate = 0, slot;

	if (bpf_probe_read_user(tss, sizeof(tss), (void *)p->tss_addr)) {
		*failed = 1;
		return 0;
	}
	/* (_is_initialized, _key) adjacent as in 3.11's Py_tss_t */
	if (!tss[0] || p->tss_key_off != 4)
		return 0;
	key = tss[1];
	if (key >= p->key_max) {
		*failed = 1;
		return 0;
	}
	slot = task->thread.fsbase + p->specific + (__u64)key * p->key_data_size;
	if (bpf_probe_read_user(&tstate, sizeof(tstate), (void *)slot))
		*failed = 1;
	return tstate;
}

/*
 * Walk the current thread's Python frames into the buffer of program
 * kind `kind`: the buffer (hold it until py_put()) when the thread runs
 * Python, else NULL. Sets SFPROF_EVF_PYTHON in h when it returns one.
 * `rt`: the process's runtime bits (rt_bits(), read once per event): no
 * py_procs lookup for a process without SFPROF_RT_PYTHON.
 */
static __always_inline struct py_buf *py_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	__u32 tgid = h->pid;
	const struct sfprof_py_proc *p;
	struct py_walk w = {};
	struct py_buf *b;
	__u64 tstate, cf = 0;
	int failed = 0;

	if (!(cfg.rt_walk & SFPROF_RT_PYTHON) || !(rt & SFPROF_RT_PYTHON) || (h->flags & SFPROF_EVF_NO_USER_REGS))
		return NULL;
	p = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!p)
		return NULL;
	tstate = py_tstate(p, &failed);
	if (!tstate) {
		if (failed)
			count(SFPROF_CNT_PY_FAILED, 1);
		return NULL;
	}
	b = bpf_map_lookup_elem(&py_bufs, &kind);
	if (!b)
		return NULL;
	if (__sync_val_compare_and_swap(&b->busy, 0, 1) != 0) {
		count(SFPROF_CNT_PY_LOST_BUSY, 1);
		return NULL;
	}
	b->nframes = 0;
	b->flags = 0;
	if (bpf_probe_read_user(&cf, sizeof(cf), (void *)(tstate + p->ts_frame)))
		b->flags |= SFPROF_PYS_READ_FAILED;
	else if (p->cframe_current == SFPROF_PY_NONE)
		w.frame = cf;
	else if (cf && bpf_probe_read_user(&w.frame, sizeof(w.frame),
					   (void *)(cf + p->cframe_current)))
		b->flags |= SFPROF_PYS_READ_FAILED;
	w.b = b;
	w.p = p;
	w.tgid = tgid;
	if (w.frame)
		bpf_loop(SFPROF_PY_FRAMES_MAX + 1, py_frame, &w, 0);
	count(SFPROF_CNT_PY_WALKS, 1);
	count(SFPROF_CNT_PY_FRAMES, b->nframes);
	if (b->flags & SFPROF_PYS_READ_FAILED)
		count(SFPROF_CNT_PY_FAILED, 1);
	if (b->flags & SFPROF_PYS_CUT)
		count(SFPROF_CNT_PY_CUT, 1);
	h->flags |= SFPROF_EVF_PYTHON;
	return b;
}

/*
 * The runtime walks as global functions, called by emit(): 1 when the
 * walk left a section in py_bufs[kind] (held until py_put()), else 0.
 * Each is verified once per program with its arguments unknown; inlined,
 * their exits multiplied the states the rest of emit() was checked in.
 */
__noinline int sfprof_py_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	return h && py_walk(h, kind, rt) != NULL;
}

static __always_inline __u32 py_section_size(const struct py_buf *b)
{
	__u32 n = b->nframes;

	if (n > SFPROF_PY_FRAMES_MAX)
		n = SFPROF_PY_FRAMES_MAX;
	return SFPROF_PY_SECTION_SIZE(n);
}

static __always_inline void py_put(struct py_buf *b)
{
	*(volatile __u64 *)&b->busy = 0;
}

#endif
