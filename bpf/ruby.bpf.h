/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * CRuby frames: for an event of a thread in a process user space told us
 * runs CRuby (rb_procs, by tgid: include/sfprof_event.h struct
 * sfprof_rb_proc), the control frames the thread's execution context is
 * running, innermost first, as the trailing section of its record, in
 * the layout of Python's (struct sfprof_py_section, SFPROF_PYS_RUBY set).
 *
 * The execution context is the thread-local ruby_current_ec, set for
 * every thread that runs Ruby (a thread of C only, as the timer thread,
 * has none, and no section). Its control frames lie at the top of its VM
 * stack: from ec->cfp upwards, each sizeof(rb_control_frame_t) bytes, to
 * the end of the stack, vm_stack + vm_stack_size words
 * (RUBY_VM_END_CONTROL_FRAME), oldest last. The walk only goes up and
 * stops at that end, so it cannot loop.
 *
 * An iseq seen for the first time in a process (an LRU set, rb_seen)
 * also goes, as a struct sfprof_rb_iseq, through a ring of its own,
 * rb_new, which a thread of sfprof drains at once (rbsession.h), with
 * the method entry its frame runs for (rb_frame_me), which names the
 * frame's class: looked for once per iseq, not per sample.
 *
 * Per frame: one read of the control frame (pc, iseq, ep), one of
 * ep[-2..0] (VM_ENV_DATA_INDEX_ME_CREF: a C method frame's method entry;
 * VM_ENV_DATA_INDEX_FLAGS: the frame's magic and VM_FRAME_FLAG_FINISH),
 * and for an iseq frame iseq->body and body->iseq_encoded, which turn pc
 * into an index user space can look a line up with. A C method's frame
 * is kept as its method entry (instr SFPROF_RB_INSTR_CFUNC), named by
 * user space; C-block (ifunc) and dummy frames carry no name: they are
 * passed over (the native stack has the C code), their FINISH mark
 * moved to the newer frame, as python.bpf.h does for 3.12's shim
 * frames. More frames than SFPROF_PY_FRAMES_MAX, or than the
 * loop's bound, mark the section cut; an unreadable frame marks it
 * failed (frames read so far are kept).
 *
 * The buffers are Python's (py_bufs): a thread runs one or the other.
 */
#ifndef SFPROF_RUBY_BPF_H
#define SFPROF_RUBY_BPF_H

#include "python.bpf.h"

/* vm_core.h, the same from 2.7 to 3.4: VM_FRAME_MAGIC_*, VM_FRAME_FLAG_FINISH */
#define SFPROF_RB_MAGIC_MASK 0x7fff0001u
#define SFPROF_RB_MAGIC_CFUNC 0x55550001u
#define SFPROF_RB_MAGIC_IFUNC 0x66660001u
#define SFPROF_RB_MAGIC_DUMMY 0x79990001u
#define SFPROF_RB_FLAG_FINISH 0x0020u
#define SFPROF_RB_ENV_LOCAL 0x0002u /* VM_ENV_FLAG_LOCAL */
/* outer environments looked through for a frame's method entry (a block
 * nested this deep in its method is labelled without its class) */
#define SFPROF_RB_EP_LEVELS 8
/* a VM stack larger than this is no VM stack (Ruby's default is 1 MiB) */
#define SFPROF_RB_STACK_MAX (256ull << 20)
/* control frames looked at per walk, those passed over included */
#define SFPROF_RB_STEPS (2 * SFPROF_PY_FRAMES_MAX)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct sfprof_rb_proc);
} rb_procs SEC(".maps");

/* iseqs seen per process (the value: the method entry found for the
 * iseq's frame then, 0 if none), and the new ones for user space to read
 * at once, while the process lives (a thread of sfprof drains rb_new):
 * the events that need them may be handled after the process is gone, as
 * python.bpf.h's py_new does for code objects */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sfprof_py_code);
	__type(value, __u64);
} rb_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rb_new SEC(".maps");

/* Whether VALUE v is a T_IMEMO of imemo type `type`. */
static __always_inline int rb_is_imemo(const struct sfprof_rb_proc *p, __u64 v, __u32 type)
{
	__u64 flags = 0;

	if (!v || (v & 7) || bpf_probe_read_user(&flags, sizeof(flags), (void *)v))
		return 0;
	return (flags & p->t_mask) == p->t_imemo && ((flags >> p->fl_ushift) & p->imemo_mask) == type;
}

/*
 * The method entry an iseq frame runs for, as rb_vm_frame_method_entry
 * finds it (vm_insnhelper.c): env[] is ep[-2..0] of the frame (ME_CREF,
 * SPECVAL, FLAGS); up the outer environments (a block's: SPECVAL is the
 * previous ep, low bits tagged) to the local one, the first ME_CREF slot
 * that holds a method entry, the local one's possibly through an svar.
 * 0 when there is none (top level, a class body) or it is unreadable.
 */
static __always_inline __u64 rb_frame_me(const struct sfprof_rb_proc *p, const __u64 *env)
{
	__u64 e[3] = { env[0], env[1], env[2] }, v, ep;

	for (int i = 0; i < SFPROF_RB_EP_LEVELS; i++) {
		int local = (e[2] & SFPROF_RB_ENV_LOCAL) != 0;

		v = e[0];
		if (local && rb_is_imemo(p, v, p->imemo_svar) &&
		    bpf_probe_read_user(&v, sizeof(v), (void *)(v + p->svar_cref_or_me)))
			return 0;
		if (rb_is_imemo(p, v, p->imemo_ment))
			return v;
		ep = e[1] & ~3ull;
		if (local || !ep || bpf_probe_read_user(e, sizeof(e), (void *)(ep - 16)))
			return 0;
	}
	return 0;
}

/* An iseq not seen before in this process goes to rb_new, with the
 * method entry of its frame (env: ep[-2..0], NULL for a C method's entry). */
static __always_inline void rb_note_iseq(const struct sfprof_rb_proc *p, __u32 tgid, __u64 iseq,
					 const __u64 *env)
{
	struct sfprof_py_code k = { .tgid = tgid, .code = iseq };
	struct sfprof_rb_iseq m = { .tgid = tgid, .iseq = iseq };

	if (bpf_map_lookup_elem(&rb_seen, &k))
		return;
	if (env)
		m.me = rb_frame_me(p, env);
	if (!bpf_map_update_elem(&rb_seen, &k, &m.me, BPF_NOEXIST))
		bpf_ringbuf_output(&rb_new, &m, sizeof(m), 0);
}

struct rb_walk {
	struct py_buf *b;
	const struct sfprof_rb_proc *p;
	__u64 cfp, end;
	__u32 tgid;
};

/* The newest frame kept begins a C-level VM call. */
static __always_inline void rb_mark_entry(struct py_buf *b, __u32 n)
{
	if (n > 0 && n <= SFPROF_PY_FRAMES_MAX)
		b->frames[n - 1].flags |= SFPROF_PYF_ENTRY;
}

/* One control frame; a bpf_loop callback. 1 ends the walk. */
static long rb_frame(__u64 i, void *data)
{
	struct rb_walk *w = data;
	struct py_buf *b = w->b;
	const struct sfprof_rb_proc *p = w->p;
	__u32 n = b->nframes, len = p->cfp_size, magic;
	__u64 pc, iseq, ep, flags, body = 0, enc = 0, env[3];
	__s32 instr = -1;

	if (w->cfp + len > w->end)
		return 1;
	if (n >= SFPROF_PY_FRAMES_MAX) {
		b->flags |= SFPROF_PYS_CUT;
		return 1;
	}
	if (len > SFPROF_RB_CFP_MAX || len < 8)
		len = SFPROF_RB_CFP_MAX;
	if (bpf_probe_read_user(b->win, len, (void *)w->cfp)) {
		b->flags |= SFPROF_PYS_READ_FAILED;
		return 1;
	}
	w->cfp += len;
	pc = py_win64(b, p->cfp_pc);
	iseq = py_win64(b, p->cfp_iseq);
	ep = py_win64(b, p->cfp_ep);
	/* ep[-2] (the method entry of a C frame), ep[-1], ep[0] (flags) */
	if (!ep || bpf_probe_read_user(env, sizeof(env), (void *)(ep - 16))) {
		b->flags |= SFPROF_PYS_READ_FAILED;
		return 1;
	}
	flags = env[2];
	magic = (__u32)flags & SFPROF_RB_MAGIC_MASK;
	if (magic == SFPROF_RB_MAGIC_CFUNC && env[0]) {
		iseq = env[0];
		instr = SFPROF_RB_INSTR_CFUNC;
	} else if (!iseq || magic == SFPROF_RB_MAGIC_CFUNC || magic == SFPROF_RB_MAGIC_IFUNC ||
		   magic == SFPROF_RB_MAGIC_DUMMY) {
		if (flags & SFPROF_RB_FLAG_FINISH)
			rb_mark_entry(b, n);
		return 0;
	} else if (pc && !bpf_probe_read_user(&body, sizeof(body), (void *)(iseq + p->iseq_body)) &&
		   body &&
		   !bpf_probe_read_user(&enc, sizeof(enc), (void *)(body + p->body_encoded)) &&
		   enc && pc >= enc && (pc - enc) / 8 < 0x7fffffff) {
		instr = (__s32)((pc - enc) / 8);
	}
	b->frames[n].code = iseq;
	b->frames[n].instr = instr;
	b->frames[n].flags = (flags & SFPROF_RB_FLAG_FINISH) ? SFPROF_PYF_ENTRY : 0;
	b->nframes = n + 1;
	rb_note_iseq(p, w->tgid, iseq, instr == SFPROF_RB_INSTR_CFUNC ? NULL : env);
	return 0;
}

/* The current thread's execution context, or 0 (none, or unreadable: *failed). */
static __always_inline __u64 rb_ec(const struct sfprof_rb_proc *p, int *failed)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tp = task->thread.fsbase, addr, dtv = 0, blk = 0, ec = 0;

	if (p->tls_mode == SFPROF_RB_TLS_TP) {
		addr = tp + p->tls_offset;
	} else if (p->tls_mode == SFPROF_RB_TLS_DTV && p->tls_module < 65536) {
		/* tcbhead_t: tcb, dtv; dtv_t: { val, to_free } per module */
		if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(tp + 8)) || !dtv ||
		    bpf_probe_read_user(&blk, sizeof(blk), (void *)(dtv + p->tls_module * 16))) {
			*failed = 1;
			return 0;
		}
		/* TLS_DTV_UNALLOCATED: the thread never touched the block */
		if (!blk || blk == ~0ull)
			return 0;
		addr = blk + p->tls_offset;
	} else {
		*failed = 1;
		return 0;
	}
	if (bpf_probe_read_user(&ec, sizeof(ec), (void *)addr))
		*failed = 1;
	return ec;
}

/*
 * Walk the current thread (of process tgid)'s Ruby frames into the
 * buffer of program kind `kind`: the buffer (hold it until py_put())
 * when the thread runs Ruby, else NULL; *failed when its context could
 * not be read.
 */
static __always_inline struct py_buf *rb_walk_tgid(__u32 tgid, __u32 kind, int *failed)
{
	const struct sfprof_rb_proc *p;
	struct rb_walk w = {};
	struct py_buf *b;
	__u64 ctx[3] = {}, ec;

	p = bpf_map_lookup_elem(&rb_procs, &tgid);
	if (!p)
		return NULL;
	ec = rb_ec(p, failed);
	if (!ec)
		return NULL;
	b = bpf_map_lookup_elem(&py_bufs, &kind);
	if (!b)
		return NULL;
	if (__sync_val_compare_and_swap(&b->busy, 0, 1) != 0) {
		count(SFPROF_CNT_PY_LOST_BUSY, 1);
		return NULL;
	}
	b->nframes = 0;
	b->flags = SFPROF_PYS_RUBY;
	/* vm_stack, vm_stack_size, cfp: adjacent from 2.7 to 3.4, but read
	 * each where the offsets say */
	if (bpf_probe_read_user(&ctx[0], 8, (void *)(ec + p->ec_vm_stack)) ||
	    bpf_probe_read_user(&ctx[1], 8, (void *)(ec + p->ec_vm_stack_size)) ||
	    bpf_probe_read_user(&ctx[2], 8, (void *)(ec + p->ec_cfp)) || !ctx[0] ||
	    ctx[1] > SFPROF_RB_STACK_MAX / 8 || ctx[2] < ctx[0]) {
		b->flags |= SFPROF_PYS_READ_FAILED;
	} else {
		w.b = b;
		w.p = p;
		w.cfp = ctx[2];
		w.tgid = tgid;
		w.end = ctx[0] + ctx[1] * 8;
		bpf_loop(SFPROF_RB_STEPS, rb_frame, &w, 0);
		if (!(b->flags & (SFPROF_PYS_CUT | SFPROF_PYS_READ_FAILED)) &&
		    w.cfp + p->cfp_size <= w.end)
			b->flags |= SFPROF_PYS_CUT;
	}
	return b;
}

/*
 * Walk the current thread's Ruby frames for the record h of program kind
 * `kind`: the buffer (hold it until py_put()) when the thread runs Ruby,
 * else NULL. Sets SFPROF_EVF_PYTHON in h when it returns one.
 */
static __always_inline struct py_buf *rb_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	struct py_buf *b;
	int failed = 0;

	if (!(cfg.rt_walk & SFPROF_RT_RUBY) || !(rt & SFPROF_RT_RUBY) || (h->flags & SFPROF_EVF_NO_USER_REGS))
		return NULL;
	b = rb_walk_tgid(h->pid, kind, &failed);
	if (!b) {
		if (failed)
			count(SFPROF_CNT_RB_FAILED, 1);
		return NULL;
	}
	count(SFPROF_CNT_RB_WALKS, 1);
	count(SFPROF_CNT_RB_FRAMES, b->nframes);
	if (b->flags & SFPROF_PYS_READ_FAILED)
		count(SFPROF_CNT_RB_FAILED, 1);
	if (b->flags & SFPROF_PYS_CUT)
		count(SFPROF_CNT_RB_CUT, 1);
	h->flags |= SFPROF_EVF_PYTHON;
	return b;
}

/* rb_walk() for emit(), as sfprof_py_walk (python.bpf.h) */
__noinline int sfprof_rb_walk(struct sfprof_event *h, __u32 kind, __u32 rt)
{
	return h && rb_walk(h, kind, rt) != NULL;
}

/* where each thread's frames were last noted at a block (rb_note) */
#define SFPROF_RB_NOTE_NS (50ull * 1000 * 1000)
struct rb_noted_at {
	__u64 ns;
	__u64 where; /* its innermost frame and its caller's pc, hashed */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct rb_noted_at);
} rb_noted SEC(".maps");

/*
 * A Ruby thread leaves the CPU to block (offcpu.bpf.c): its iseqs go to
 * rb_new now, no record made. The frames of a block are otherwise first
 * seen at its end (the switch-in builds the record), which for a thread
 * never sampled running may come just before its process exits, too late
 * to read them. A thread that blocks again where it last did (the same
 * innermost control frame and caller pc) within SFPROF_RB_NOTE_NS is not
 * walked again: GVL hand-offs and wait loops block at the same place.
 */
static __always_inline void rb_note(__u32 tgid, __u32 tid)
{
	const struct sfprof_rb_proc *p;
	struct rb_noted_at at = {}, *last;
	__u64 ec, cfp = 0, pcs[2] = {};
	struct py_buf *b;
	int failed = 0;

	if (!(cfg.rt_walk & SFPROF_RT_RUBY) || !(rt_bits(tgid) & SFPROF_RT_RUBY) ||
	    !(p = bpf_map_lookup_elem(&rb_procs, &tgid)))
		return;
	ec = rb_ec(p, &failed);
	if (!ec || bpf_probe_read_user(&cfp, sizeof(cfp), (void *)(ec + p->ec_cfp)) || !cfp)
		return;
	bpf_probe_read_user(&pcs[0], 8, (void *)(cfp + p->cfp_pc));
	bpf_probe_read_user(&pcs[1], 8, (void *)(cfp + p->cfp_size + p->cfp_pc));
	at.ns = bpf_ktime_get_ns();
	at.where = cfp ^ (pcs[0] * 0x9e3779b97f4a7c15ull) ^ (pcs[1] * 0xc2b2ae3d27d4eb4full);
	last = bpf_map_lookup_elem(&rb_noted, &tid);
	if (last && last->where == at.where && at.ns - last->ns < SFPROF_RB_NOTE_NS)
		return;
	bpf_map_update_elem(&rb_noted, &tid, &at, BPF_ANY);
	b = rb_walk_tgid(tgid, SFPROF_SLOT_OFFCPU, &failed);
	if (b)
		py_put(b);
}

#endif
