/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * PHP frames: for an event of a thread in a process user space told us
 * runs PHP (php_procs, by tgid: include/sfprof_event.h struct
 * sfprof_php_proc), the chain of zend_execute_data the engine is
 * running, innermost first, as the trailing section of its record, in
 * the layout of Python's (struct sfprof_py_section, SFPROF_PYS_PHP set).
 *
 * NTS builds (the CLI and FPM as Debian ships them) keep the engine's
 * state in one global, executor_globals: current_execute_data, then
 * prev_execute_data to a bounded depth. Per frame one read of a window
 * of the zend_execute_data (opline, func, This's call info, prev), one of
 * the function's head (type, name, scope) and, for a user function, one
 * of a window of its op_array (opcodes, which turn the opline into an
 * index user space looks the line up with; file, lines, size). The
 * frame's code is the function's address with a hash of those above it
 * (include/sfprof_event.h SFPROF_PHP_ADDR). A frame without a function (a
 * dummy call frame) is passed over.
 *
 * The running frame's saved opline is stale: the x86-64 VM (HYBRID, with
 * global registers, as Debian builds it) keeps execute_data in r14 and
 * the opline in r15, and saves the opline into the frame only before a
 * call or what may throw, so the frame's own said its function's first
 * line or an old one. When the sample's r14 is the frame and r15 an
 * opline of its function (in its opcodes, at an opline's boundary), r15
 * is the opline: code of another unit that reused the two registers
 * would have to hold both by chance. The buffers are Python's
 * (py_bufs): a thread runs one interpreter.
 *
 * A (function, opline index) seen for the first time in a process (an
 * LRU set, php_seen) also goes, as a struct sfprof_php_code, through a
 * ring of its own, php_new, which a thread of sfprof drains at once
 * (phpsession.c): PHP-FPM frees a request's functions at its end and
 * compiles the next request's, maybe elsewhere, so a name read when the
 * main consumer gets to the event can find freed memory.
 */
#ifndef SFPROF_PHP_BPF_H
#define SFPROF_PHP_BPF_H

#include "python.bpf.h"

/* Zend/zend_compile.h, the same from 7.4 to 8.4 */
#define SFPROF_PHP_USER_FUNCTION 2
#define SFPROF_PHP_CALL_TOP (1u << 17)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct sfprof_php_proc);
} php_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sfprof_php_code);
	__type(value, __u8);
} php_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} php_new SEC(".maps");

struct php_walk {
	struct py_buf *b;
	const struct sfprof_php_proc *p;
	__u64 ex;
	__u64 live_ex, live_opline; /* the sample's r14, r15 */
	__u32 tgid;
};

/* A frame not seen before in this process goes to php_new. */
static __always_inline void php_note(__u32 tgid, __u64 func, __s32 instr)
{
	struct sfprof_php_code k = { .tgid = tgid, .instr = instr, .func = func };
	__u8 one = 1;

	if (bpf_map_lookup_elem(&php_seen, &k))
		return;
	if (!bpf_map_update_elem(&php_seen, &k, &one, BPF_NOEXIST))
		bpf_ringbuf_output(&php_new, &k, sizeof(k), 0);
}

static __always_inline __u64 php_mix(__u64 h, __u64 v)
{
	return (h ^ v) * 0x9e3779b97f4a7c15ull;
}

/* h mixed with the hash zend_string s keeps (0 until computed; an interned
 * one, as PHP's function names and compiled file names are, has it) */
static __always_inline __u64 php_mix_str(const struct sfprof_php_proc *p, __u64 h, __u64 s)
{
	__u64 v = 0;

	if (s)
		bpf_probe_read_user(&v, sizeof(v), (void *)(s + p->str_h));
	return php_mix(php_mix(h, s), v);
}

/* One zend_execute_data; a bpf_loop callback. 1 ends the walk. */
static long php_frame(__u64 i, void *data)
{
	struct php_walk *w = data;
	struct py_buf *b = w->b;
	const struct sfprof_php_proc *p = w->p;
	__u32 n = b->nframes, info;
	__u64 opline, func, code, ops = 0, h = 0, ex = w->ex;
	__u32 last;
	__u8 type = 0;
	__s32 instr = -1;

	if (!ex)
		return 1;
	if (n >= SFPROF_PY_FRAMES_MAX) {
		b->flags |= SFPROF_PYS_CUT;
		return 1;
	}
	if (bpf_probe_read_user(b->win, SFPROF_PHP_EX_WIN, (void *)w->ex)) {
		b->flags |= SFPROF_PYS_READ_FAILED;
		return 1;
	}
	opline = py_win64(b, p->ex_opline);
	func = py_win64(b, p->ex_func);
	info = (__u32)py_win64(b, p->ex_call_info);
	w->ex = py_win64(b, p->ex_prev);
	if (!func)
		return 0;
	if (bpf_probe_read_user(b->win, SFPROF_PHP_FN_HEAD, (void *)func)) {
		b->flags |= SFPROF_PYS_READ_FAILED;
		return 1;
	}
	type = b->win[0];
	h = php_mix(php_mix_str(p, h, py_win64(b, p->fn_name)), py_win64(b, p->fn_scope));
	if (type == SFPROF_PHP_USER_FUNCTION &&
	    !bpf_probe_read_user(b->win, SFPROF_PY_WIN, (void *)(func + p->op_win))) {
		/* (an offset outside the window reads as 0: py_win64) */
		ops = py_win64(b, (__u16)(p->fn_opcodes - p->op_win));
		h = php_mix(h, ops);
		h = php_mix_str(p, h, py_win64(b, (__u16)(p->op_filename - p->op_win)));
		h = php_mix(h, py_win64(b, (__u16)(p->op_line_start - p->op_win)));
		last = (__u32)py_win64(b, (__u16)(p->op_last - p->op_win));
		h = php_mix(h, last);
		if (ex == w->live_ex && ops && p->op_size && w->live_opline >= ops &&
		    w->live_opline < ops + (__u64)last * p->op_size &&
		    (w->live_opline - ops) % p->op_size == 0) {
			opline = w->live_opline;
			count(SFPROF_CNT_PHP_LIVE_OPLINE, 1);
		}
		if (opline && p->op_size && ops && opline >= ops &&
		    (opline - ops) / p->op_size < 0x7fffffff)
			instr = (__s32)((opline - ops) / p->op_size);
	}
	code = func >> SFPROF_PHP_ADDR_BITS ? func : func | (h >> SFPROF_PHP_ADDR_BITS) << SFPROF_PHP_ADDR_BITS;
	php_note(w->tgid, code, instr);
	b->frames[n].code = code;
	b->frames[n].instr = instr;
	b->frames[n].flags =
		type == SFPROF_PHP_USER_FUNCTION && (info & SFPROF_PHP_CALL_TOP) ? SFPROF_PYF_ENTRY : 0;
	b->nframes = n + 1;
	return 0;
}

/*
 * Walk the current thread's PHP frames into the buffer of program kind
 * `kind`: the buffer (hold it until py_put()) when the thread runs PHP,
 * else NULL. Sets SFPROF_EVF_PYTHON in h when it returns one.
 */
static __always_inline struct py_buf *php_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	__u32 tgid = h->pid;
	const struct sfprof_php_proc *p;
	struct php_walk w = {};
	struct py_buf *b;
	__u64 ex = 0;

	if (!(cfg.rt_walk & SFPROF_RT_PHP) || !(rt & SFPROF_RT_PHP) || (h->flags & SFPROF_EVF_NO_USER_REGS))
		return NULL;
	p = bpf_map_lookup_elem(&php_procs, &tgid);
	if (!p)
		return NULL;
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)p->current_ex)) {
		count(SFPROF_CNT_PHP_FAILED, 1);
		return NULL;
	}
	if (!ex)
		return NULL;
	b = bpf_map_lookup_elem(&py_bufs, &kind);
	if (!b)
		return NULL;
	if (__sync_val_compare_and_swap(&b->busy, 0, 1) != 0) {
		count(SFPROF_CNT_PY_LOST_BUSY, 1);
		return NULL;
	}
	b->nframes = 0;
	b->flags = SFPROF_PYS_PHP;
	w.b = b;
	w.p = p;
	w.ex = ex;
	w.live_ex = h->regs.r14;
	w.live_opline = h->regs.r15;
	w.tgid = tgid;
	bpf_loop(SFPROF_PY_FRAMES_MAX + 1, php_frame, &w, 0);
	count(SFPROF_CNT_PHP_WALKS, 1);
	count(SFPROF_CNT_PHP_FRAMES, b->nframes);
	if (b->flags & SFPROF_PYS_READ_FAILED)
		count(SFPROF_CNT_PHP_FAILED, 1);
	if (b->flags & SFPROF_PYS_CUT)
		count(SFPROF_CNT_PHP_CUT, 1);
	h->flags |= SFPROF_EVF_PYTHON;
	return b;
}

/* php_walk() for emit(), as sfprof_py_walk (python.bpf.h) */
__noinline int sfprof_php_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	return h && php_walk(h, kind, rt) != NULL;
}

#endif
