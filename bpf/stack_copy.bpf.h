/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The one stack copy every event source shares: a record header filled
 * in on the BPF stack, the user stack from SP copied up to the thread's
 * outermost frame (or --stack-size, or the end of the mapping), the
 * whole sent as one variable-length record through the `events` ring.
 */
#ifndef SFPROF_STACK_COPY_BPF_H
#define SFPROF_STACK_COPY_BPF_H

#include "target.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "php.bpf.h"

/* Linux 6.16: copy user memory straight into a ring buffer record. */
extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, __u32 off, __u32 size,
				      const void *unsafe_ptr__ign) __ksym __weak;

/* libbpf resolves a missing __weak kfunc to 0 and the verifier drops the
 * branch that calls it (libbpf 1.1 has no bpf_ksym_exists()) */
static __always_inline int have_direct_copy(void)
{
	return !!bpf_probe_read_user_dynptr;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by user space */
} events SEC(".maps");

/*
 * Record scratch space, one slot per (CPU, program kind): per-CPU map
 * values are limited to 32 KiB, a record can be 64 KiB. Slot index is
 * cpu * SFPROF_SLOT_KINDS + kind; user space sets max_entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct sfprof_scratch);
} scratch SEC(".maps");

/*
 * Headers off the stack, one per (CPU, program kind), for the tp_btf
 * programs that build a record: 6.18.44 gives no private stack to a
 * tp_btf or raw_tp program (only to perf_event's), so such a program's
 * frame, emit()'s and emit()'s deepest walk share one 512-byte stack, and
 * a 248-byte header on the caller's frame took the chain to 608 bytes.
 * Per CPU: these programs run with preemption off; busy covers one
 * interrupting another on its CPU (the futex sys_exit, which can be
 * preempted, keeps its header in the task's storage instead).
 */
struct sfprof_hdr_slot {
	__u64 busy;
	__u8 h[SFPROF_EVENT_HDR_SIZE] __attribute__((aligned(8))); /* a struct sfprof_event */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFPROF_SLOT_KINDS);
	__type(key, __u32);
	__type(value, struct sfprof_hdr_slot);
} hdr_slots SEC(".maps");

/* Kernel stacks (--kernel), referenced from records by kstack_id. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1); /* resized by user space when --kernel */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} kstacks SEC(".maps");

/*
 * The first SP of each thread a target creates while sfprof watches:
 * the top of its frames (its start routine is called from there). LRU,
 * so exited threads need no cleanup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);   /* tid */
	__type(value, __u64); /* initial user SP */
} thread_top SEC(".maps");

/*
 * The next piece of a page-by-page copy of `want` bytes from `sp`, `off`
 * of them done: up to the end of the page, or of the copy; 0 when done.
 */
static __always_inline __u32 page_chunk(__u64 sp, __u64 off, __u32 want)
{
	__u64 chunk = SFPROF_PAGE_SIZE - ((sp + off) & (SFPROF_PAGE_SIZE - 1));

	if (off >= want)
		return 0;
	return chunk < want - off ? chunk : want - off;
}

/*
 * Copies up to `want` bytes of user memory from `sp` into `dst`, one page
 * at a time, so the copy reaches exactly the end of the stack mapping: a
 * single large read fails as a whole when the mapping ends inside it.
 * Returns the bytes copied.
 */
struct copy_state {
	__u8 *dst;	    /* the record's stack[] in a scratch slot */
	__u64 sp;
	__u64 off;	    /* bytes done */
	__u32 want;
};

/* One page of the copy; a bpf_loop callback, so the verifier checks this
 * body once instead of once per page of an unrolled loop (14k -> 2k
 * instructions, half a second less to load). 1 ends the loop. */
static long copy_page(__u64 i, void *data)
{
	struct copy_state *c = data;
	__u64 off = c->off, chunk = page_chunk(c->sp, off, c->want);

	/* bounds the verifier needs: off <= 65528, 1 <= chunk <= 4096; the
	 * scratch slot has a page of slack behind SFPROF_STACK_MAX */
	if (off > SFPROF_STACK_MAX || chunk > SFPROF_PAGE_SIZE || chunk == 0)
		return 1;
	/* the mapping ended, or the page is not resident (BPF cannot fault it
	 * in): the snapshot ends here */
	if (bpf_probe_read_user(c->dst + off, chunk, (void *)(c->sp + off)))
		return 1;
	c->off = off + chunk;
	return 0;
}

static __always_inline __u32 copy_user_stack(__u8 *dst, __u64 sp, __u32 want)
{
	struct copy_state c = {
		.dst = dst,
		.sp = sp,
		.want = want,
	};

	bpf_loop(SFPROF_STACK_PAGES, copy_page, &c, 0);
	return c.off;
}

/*
 * How many bytes from `sp` can hold frames: no frame lies above a
 * thread's outermost one, so the copy stops there instead of carrying
 * bytes no unwinder reads. Three tops are known without a VMA walk
 * (bpf_find_vma costs ~8 us per sample from the perf program):
 *  - a thread created while sfprof watches: its first SP, which
 *    sfprof_fork recorded; its start routine's frame is the outermost.
 *  - the main stack: mm->start_stack is argc's address, the SP exec gave
 *    _start (create_elf_tables(), fs/binfmt_elf.c); above it are only
 *    argv/envp/auxv, exec's random never-touched gap and the strings.
 *  - glibc and musl threads that existed before: the thread pointer (fs
 *    base) is the thread descriptor at the top of the thread's stack
 *    mapping, above its static TLS block and every frame
 *    (allocate_stack(), nptl).
 * A top applies only when SP lies below it within the snapshot size, so
 * a stack elsewhere (sigaltstack, coroutines, Go) is copied in full up to
 * `want` or its mapping's end. The slack past each top keeps argc and the
 * first argv words (_start's own CFA is start_stack + 8), the thread
 * entry's CFA (first SP + 8), and the thread descriptor's first two words
 * (tcb->tcb == fs base), which lets a test check that the top was the
 * descriptor.
 */
#define SFPROF_MAIN_TOP_SLACK 64
#define SFPROF_THREAD_TOP_SLACK 16

/* Bytes from `sp` up to `top` when that is fewer than `want`, else 0. */
static __always_inline __u32 span_to(__u64 sp, __u64 top, __u32 want)
{
	return sp < top && top - sp < want ? top - sp : 0;
}

static __always_inline __u32 frames_span(__u64 sp, __u32 want, __u32 *at_top)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;
	__u32 span = 0;

	if (task->pid != task->tgid) {
		__u32 tid = task->pid;
		__u64 *first_sp = bpf_map_lookup_elem(&thread_top, &tid);

		if (first_sp)
			span = span_to(sp, *first_sp + SFPROF_THREAD_TOP_SLACK, want);
	}
	if (!span && mm)
		span = span_to(sp, mm->start_stack + SFPROF_MAIN_TOP_SLACK, want);
	if (!span)
		span = span_to(sp, task->thread.fsbase + SFPROF_THREAD_TOP_SLACK, want);
	*at_top = span != 0;
	return span ? span : want;
}

/*
 * frames_span() as a global function, for emit(): the span, bit 31 set
 * when it ends at a frame top. Its result is one unknown value to the
 * verifier: inlined, each of the tops (and none) gave the copy that
 * follows a span of its own, one more state through the rest of emit().
 */
__noinline __u32 sfprof_frames_span(__u64 sp, __u32 want)
{
	__u32 at_top = 0, span = frames_span(sp, want, &at_top);

	return span | (at_top ? 1u << 31 : 0);
}

/*
 * Whether a sample in the kernel has no user stack left to read: its
 * process is exiting (exit_group: the address space is being or has
 * been torn down) or exec'ing (past the point of no return the old
 * image's stack is gone and the registers still point into it). These
 * made most of a churning machine's lost_stack_read (bench/agent_mem.py
 * with a trace of each failure: exit_group and execve, 17 of 19); they
 * are samples of the kernel's work for that process, not lost stacks.
 */
__noinline int user_stack_gone(const struct sfprof_event *h)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__s64 nr;

	if (!h)
		return 0;
	nr = (__s64)h->regs.orig_ax;
	/* an off-CPU event is always taken in the kernel */
	if (!(h->flags & SFPROF_EVF_KERNEL_MODE) && h->kind != SFPROF_EV_OFFCPU)
		return 0;
	return !task->mm || (task->flags & PF_EXITING) || nr == 59 /* execve */ ||
	       nr == 322 /* execveat */ || nr == 231 /* exit_group */ || nr == 60 /* exit */;
}

/* Stack flags, length and record size of a header whose copy is done.
 * Global, as user_stack_gone() above: each of its branches was a state
 * of its own through the rest of an inlined caller. */
__noinline int stack_done(struct sfprof_event *h, __u32 len, __u32 span, __u32 at_top)
{
	if (!h)
		return 0;
	if (span) {
		if (len == 0 && user_stack_gone(h)) {
			h->flags |= SFPROF_EVF_USER_GONE;
			count(SFPROF_CNT_NO_USER_STACK, 1);
		} else if (len == 0) {
			h->flags |= SFPROF_EVF_STACK_PARTIAL;
			count(SFPROF_CNT_LOST_STACK_READ, 1);
		} else if (len >= span) {
			h->flags |= at_top ? SFPROF_EVF_STACK_TOP : SFPROF_EVF_STACK_FULL;
		}
	}
	if (len > SFPROF_STACK_MAX)
		len = SFPROF_STACK_MAX;
	h->stack_len = len;
	h->size = (SFPROF_EVENT_HDR_SIZE + len + 7) & ~7u;
	return 0;
}

/* (behind page_chunk and the direct copy's kfunc, which it uses) */
#include "go.bpf.h"

/*
 * Deferred reads (Linux 6.18+). A sample whose first stack page is not
 * resident (a new process faulting its stack in: the sample lands in the
 * page fault, or between a `sub rsp` and the first touch) cannot be read
 * here: BPF in interrupt context cannot fault. The task reads it itself
 * instead, in a task_work callback run just before it returns to user
 * space, where bpf_copy_from_user may fault the page in. The user
 * registers are the sample's (nothing ran in user space in between), so
 * the record is the one the sample would have made, late by the rest of
 * the fault or syscall. One pending read per CPU; a busy slot, or a task
 * that can take no task_work (exiting), keeps the empty record.
 *
 * Only the objects whose events it serves (cpu.bpf.c, offcpu.bpf.c)
 * define SFPROF_DEFER_READS before including this: in another object the
 * unused callback stayed, naming a kfunc it never calls, which libbpf
 * cannot open (no BTF for the extern). The map is in every object, as
 * all of them share the task object's maps by name.
 */
struct sfprof_deferred {
	struct bpf_task_work tw;
	__u64 busy;   /* scheduled, its callback not finished */
	__u32 span;
	__u32 at_top;
	struct sfprof_event h;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized by user space: one per CPU */
	__type(key, __u32);
	__type(value, struct sfprof_deferred);
} deferred SEC(".maps");

#ifdef SFPROF_DEFER_READS
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw, void *map__map,
					      int (*callback)(struct bpf_map *map, void *key,
							      void *value),
					      void *aux__prog) __ksym __weak;
extern int bpf_copy_from_user_dynptr(const struct bpf_dynptr *dptr, __u32 off, __u32 size,
				     const void *unsafe_ptr__ign) __ksym __weak;

struct ucopy_state {
	struct bpf_dynptr dp;
	__u64 sp;
	__u32 off;
	__u32 want;
};

/* One page of a faulting copy; 1 ends the loop (the mapping ended). */
static long ucopy_page(__u64 i, void *data)
{
	struct ucopy_state *c = data;
	__u32 off = c->off, chunk = page_chunk(c->sp, off, c->want);

	if (!chunk)
		return 1;
	if (bpf_copy_from_user_dynptr(&c->dp, SFPROF_EVENT_HDR_SIZE + off, chunk,
				      (void *)(c->sp + off)))
		return 1;
	c->off = off + chunk;
	return 0;
}

/* The task_work callback: in the sampled task, sleepable. */
static int deferred_read(struct bpf_map *map, void *key, void *value)
{
	struct sfprof_deferred *d = value;
	struct ucopy_state c = {};
	__u32 span = d->span, rsize;

	if (span > SFPROF_STACK_MAX)
		span = SFPROF_STACK_MAX;
	c.sp = d->h.regs.sp;
	c.want = span;
	rsize = (SFPROF_EVENT_HDR_SIZE + span + 7) & ~7u;
	if (bpf_ringbuf_reserve_dynptr(&events, rsize, 0, &c.dp)) {
		bpf_ringbuf_discard_dynptr(&c.dp, 0);
		count(SFPROF_CNT_LOST_RINGBUF, 1);
		d->busy = 0;
		return 0;
	}
	if (!bpf_copy_from_user_dynptr(&c.dp, SFPROF_EVENT_HDR_SIZE, span, (void *)c.sp))
		c.off = span;
	else
		bpf_loop(SFPROF_STACK_PAGES, ucopy_page, &c, 0);
	stack_done(&d->h, c.off, span, d->at_top);
	if (c.off)
		count(SFPROF_CNT_STACK_DEFERRED_READ, 1);
	bpf_dynptr_write(&c.dp, 0, &d->h, SFPROF_EVENT_HDR_SIZE, 0);
	bpf_ringbuf_submit_dynptr(&c.dp, BPF_RB_NO_WAKEUP);
	d->busy = 0;
	return 0;
}

/* 1 when the read of h's stack is left to the task (h is then sent by
 * deferred_read), 0 when h goes now as it is. */
static __noinline int defer_read(struct sfprof_event *h, __u32 span, __u32 at_top)
{
	__u32 key = bpf_get_smp_processor_id();
	struct sfprof_deferred *d;

	if (!cfg.defer_reads || !bpf_task_work_schedule_resume_impl || !bpf_copy_from_user_dynptr)
		return 0;
	d = bpf_map_lookup_elem(&deferred, &key);
	if (!d || __sync_val_compare_and_swap(&d->busy, 0, 1) != 0) {
		count(SFPROF_CNT_STACK_DEFER_FAILED, 1);
		return 0;
	}
	__builtin_memcpy(&d->h, h, SFPROF_EVENT_HDR_SIZE);
	/* the Python frames were read now; the record carries none */
	d->h.flags &= ~SFPROF_EVF_PYTHON;
	d->span = span;
	d->at_top = at_top;
	if (bpf_task_work_schedule_resume_impl(bpf_get_current_task_btf(), &d->tw, &deferred,
					       deferred_read, NULL)) {
		d->busy = 0;
		count(SFPROF_CNT_STACK_DEFER_FAILED, 1);
		return 0;
	}
	count(SFPROF_CNT_STACK_DEFERRED, 1);
	return 1;
}
#endif /* SFPROF_DEFER_READS */

/*
 * The direct path (Linux 6.16+): a ring buffer record reserved at the
 * size the copy will have, the stack read straight into it, the header
 * written in front. One copy of the stack instead of two (user stack to
 * scratch slot, slot to ring), no slot to share, so nothing is lost to a
 * preempted program holding it.
 */
struct dcopy_state {
	struct bpf_dynptr dp;
	__u64 sp;
	__u32 off;	/* bytes done */
	__u32 want;
};

/* One page of a direct copy that failed as a whole; 1 ends the loop. */
static long dcopy_page(__u64 i, void *data)
{
	struct dcopy_state *c = data;
	__u32 off = c->off, chunk = page_chunk(c->sp, off, c->want);

	if (!chunk)
		return 1;
	if (bpf_probe_read_user_dynptr(&c->dp, SFPROF_EVENT_HDR_SIZE + off, chunk,
				       (void *)(c->sp + off)))
		return 1;
	c->off = off + chunk;
	return 0;
}

static __always_inline int emit_direct(struct sfprof_event *h, __u32 span, __u32 at_top,
				       __u64 flags, struct py_buf *py, __u32 kind, struct go_ctx *go,
				       int may_defer)
{
	struct dcopy_state c = {
		.sp = h->regs.sp,
		.want = span,
	};
	__u32 rsize = (SFPROF_EVENT_HDR_SIZE + span + 7) & ~7u, pysize = 0;

	if (py) {
		pysize = py_section_size(py);
		rsize += pysize;
	}
	if (go) /* (never with py) */
		rsize += go_section_room(go);

	if (bpf_ringbuf_reserve_dynptr(&events, rsize, 0, &c.dp)) {
		bpf_ringbuf_discard_dynptr(&c.dp, 0);
		count(SFPROF_CNT_LOST_RINGBUF, 1);
		return 0;
	}
	if (span) {
		/* the frame span is mapped and resident as a rule: one read;
		 * where it is not, page by page up to the first failing page */
		if (!bpf_probe_read_user_dynptr(&c.dp, SFPROF_EVENT_HDR_SIZE, span, (void *)c.sp))
			c.off = span;
		else
			bpf_loop(SFPROF_STACK_PAGES, dcopy_page, &c, 0);
		/* nothing readable: an on- or off-CPU event's task may read it
		 * itself (the two kinds a churning machine loses stacks of);
		 * the caller tries (emit()), this record goes */
		if (may_defer && !c.off && (kind == SFPROF_SLOT_CPU || kind == SFPROF_SLOT_OFFCPU) &&
		    !user_stack_gone(h)) {
			bpf_ringbuf_discard_dynptr(&c.dp, 0);
			return (span << 1 | !!at_top) & 0x1ffff;
		}
	}
	stack_done(h, c.off, span, at_top);
	/* the Python section right behind the stack bytes copied */
	if (py && pysize <= SFPROF_PY_SECTION_SIZE(SFPROF_PY_FRAMES_MAX)) {
		if (bpf_dynptr_write(&c.dp, h->size, &py->nframes, pysize, 0))
			h->flags &= ~SFPROF_EVF_PYTHON;
		else
			h->size += pysize;
	}
	if (go) {
		__u32 gsize = go_section_write(&c.dp, h->size, go);

		if (gsize) {
			h->flags |= SFPROF_EVF_GO;
			h->size += gsize;
		}
	}
	bpf_dynptr_write(&c.dp, 0, h, SFPROF_EVENT_HDR_SIZE, 0);
	bpf_ringbuf_submit_dynptr(&c.dp, flags);
	return 0;
}

/*
 * The scratch path (older kernels): the record is built in an ARRAY slot
 * per (CPU, program kind), then copied into the ring.
 */
static __always_inline struct sfprof_scratch *slot_get(__u32 kind)
{
	__u32 key = bpf_get_smp_processor_id() * SFPROF_SLOT_KINDS + kind;
	struct sfprof_scratch *s = bpf_map_lookup_elem(&scratch, &key);

	if (!s)
		return NULL;
	/* a program preempted on this CPU may still hold the slot */
	if (__sync_val_compare_and_swap(&s->busy, 0, 1) != 0) {
		count(SFPROF_CNT_LOST_BUSY, 1);
		return NULL;
	}
	return s;
}

static __always_inline void slot_put(struct sfprof_scratch *s)
{
	/* the helper calls before this are compiler barriers */
	*(volatile __u64 *)&s->busy = 0;
}

static __always_inline void emit_scratch(struct sfprof_event *h, __u32 span, __u32 at_top,
					 __u64 flags, __u32 kind, struct py_buf *py)
{
	struct sfprof_scratch *s = slot_get(kind);
	__u32 len = 0, pysize;
	__u64 off; /* 64-bit: the bounds test and the access use one register */
	__u64 size;

	if (!s)
		return;
	if (span)
		len = copy_user_stack(s->rec + SFPROF_EVENT_HDR_SIZE, h->regs.sp, span);
	stack_done(h, len, span, at_top);
	if (py) {
		off = h->size;
		pysize = py_section_size(py);
		asm volatile("" : "+r"(off));
		if (off <= SFPROF_EVENT_HDR_SIZE + SFPROF_STACK_MAX + 8 &&
		    pysize <= SFPROF_PY_SECTION_SIZE(SFPROF_PY_FRAMES_MAX) &&
		    !bpf_probe_read_kernel(s->rec + off, pysize, &py->nframes))
			h->size += pysize;
		else
			h->flags &= ~SFPROF_EVF_PYTHON;
	}
	__builtin_memcpy(s->rec, h, SFPROF_EVENT_HDR_SIZE);
	/* re-read and clamp right before the call, opaque to clang, so the
	 * register the helper gets carries the bound the verifier needs */
	size = h->size;
	asm volatile("" : "+r"(size));
	if (size > sizeof(s->rec))
		size = sizeof(s->rec);
	if (bpf_ringbuf_output(&events, s->rec, size, flags))
		count(SFPROF_CNT_LOST_RINGBUF, 1);
	slot_put(s);
}

/* Sends the record whose header `h` (on the BPF stack) is filled in; or,
 * when `may_defer` and nothing of the stack was readable, sends nothing
 * and returns the span and top flag a deferred read needs (span << 1 |
 * at_top, never 0). */
static __always_inline int emit_record(struct sfprof_event *h, __u32 kind, int may_defer)
{
	int ret = 0;
	__u32 want = cfg.stack_size, span = 0, at_top = 0;
	__u64 flags = BPF_RB_NO_WAKEUP;
	/* one word read tells which runtime maps know the process: most
	 * processes run none, and ask no hash */
	__u32 rt = rt_bits(h->pid);
	struct py_buf *py = NULL;
	struct go_ctx go;
	int on_g0 = 0;

	/* The runtimes' walks, dispatched by their rt_tgids bit: the one
	 * place BPF names each runtime (user space names none: a runtime's
	 * session fills its own map and bit, capture__set_runtime_proc, and
	 * its runtime_ops.capture_bit says the bit; src/runtimes/runtime.h).
	 * A thread runs CPython, CRuby or PHP: one section, walked by a
	 * global function (verified once, not once per state of this body),
	 * which leaves the section in py_bufs[kind], held; Go's g0 below. */
	if ((rt & (SFPROF_RT_PYTHON | SFPROF_RT_RUBY | SFPROF_RT_PHP)) &&
	    !(h->flags & SFPROF_EVF_NO_USER_REGS) &&
	    (sfprof_py_walk(h, kind, rt) || sfprof_rb_walk(h, kind, rt) ||
	     sfprof_php_walk(h, kind, rt)))
		py = bpf_map_lookup_elem(&py_bufs, &kind);

	if (want > SFPROF_STACK_MAX)
		want = SFPROF_STACK_MAX;
	if (!(h->flags & SFPROF_EVF_NO_USER_REGS) && want) {
		span = sfprof_frames_span(h->regs.sp, want);
		at_top = span >> 31;
		span &= 0x7fffffff;
		if (span > want)
			span = want;
	}
	/* no wakeup per record: the consumer drains on a timer (a wakeup per
	 * futex event tripled its cost), and is woken only when half the
	 * ring is pending. Computed, not branched: one state for the
	 * verifier either way (NO_WAKEUP 1, FORCE_WAKEUP 2). */
	if (cfg.wakeup_bytes)
		flags = BPF_RB_NO_WAKEUP +
			(bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg.wakeup_bytes);
	/* Go's g0: the goroutine behind the switch, in the direct path's
	 * record only (the scratch slot has no room for a second stack) */
	if (!py && !cfg.force_scratch && have_direct_copy())
		on_g0 = go_switched(h, &go, rt);
	if (!cfg.force_scratch && have_direct_copy())
		ret = emit_direct(h, span, at_top, flags, py, kind, on_g0 ? &go : NULL, may_defer);
	else
		emit_scratch(h, span, at_top, flags, kind, py);
	if (py)
		py_put(py);
	return ret;
}

/*
 * emit() as a global function: the verifier checks its body once per
 * program, with h's contents and kind unknown, instead of once for every
 * state its caller reaches the call in (each branch of the caller, user
 * or kernel registers, a kernel stack or none, multiplied the states the
 * inlined body was verified in: sfprof_cpu took 30k verified insns and
 * half a second to load). h must be a whole header (the caller's stack).
 * A global function may not sleep, nor name what does: the deferred read
 * (its callback faults pages in) is scheduled by emit(), outside it.
 */
__noinline int sfprof_emit(struct sfprof_event *h, __u32 kind, int may_defer)
{
	if (!h)
		return 0;
	return emit_record(h, kind, may_defer);
}

static __always_inline void emit(struct sfprof_event *h, __u32 kind)
{
	int defer = sfprof_emit(h, kind, 1);

	if (!defer)
		return;
#ifdef SFPROF_DEFER_READS
	if (defer_read(h, (__u32)defer >> 1, defer & 1))
		return;
#endif
	/* no deferred read: the record goes as it is, with no stack (and
	 * a runtime section only if the second walk gets one) */
	h->flags &= ~SFPROF_EVF_PYTHON;
	sfprof_emit(h, kind, 0);
}

static __always_inline void fill_common(struct sfprof_event *e, __u64 pid_tgid, __u16 kind)
{
	e->kind = kind;
	e->flags = 0;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	e->futex.addr = 0;
	e->futex.op = 0;
	e->kstack_id = -1;
	e->futex.syscall_nr = 0;
	e->fork.ppid = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

/* The task's saved user registers (syscall entry or interrupt frame). */
static __always_inline int task_user_regs(struct sfprof_event *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (task->flags & PF_KTHREAD)
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || bpf_probe_read_kernel(&e->regs, sizeof(e->regs), regs))
		return -1;
	return 0;
}

/* A header slot of kind (hdr_slots), NULL (counted lost_busy) when an
 * interrupted program of this CPU holds it; hdr_put() gives it back. */
static __always_inline struct sfprof_event *hdr_get(__u32 kind)
{
	struct sfprof_hdr_slot *s = bpf_map_lookup_elem(&hdr_slots, &kind);

	if (!s)
		return NULL;
	if (s->busy) {
		count(SFPROF_CNT_LOST_BUSY, 1);
		return NULL;
	}
	s->busy = 1;
	return (struct sfprof_event *)s->h;
}

static __always_inline void hdr_put(struct sfprof_event *h)
{
	/* busy is the word before h in its slot; the helper calls before
	 * this are compiler barriers */
	*(volatile __u64 *)((__u8 *)h - sizeof(__u64)) = 0;
}

/* A header-only record (FORK, EXIT): no registers, no stack. */
static __always_inline void emit_task(struct sfprof_event *h)
{
	h->flags = SFPROF_EVF_NO_USER_REGS;
	h->stack_len = 0;
	h->size = SFPROF_EVENT_HDR_SIZE;
	__builtin_memset(&h->regs, 0, sizeof(h->regs));
	if (bpf_ringbuf_output(&events, h, SFPROF_EVENT_HDR_SIZE, BPF_RB_NO_WAKEUP))
		count(SFPROF_CNT_LOST_TASK, 1);
}

#endif
