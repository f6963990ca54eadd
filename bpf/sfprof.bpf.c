// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * sfprof capture: on-CPU samples (perf_event, cpu-clock) and futex waits
 * (tp_btf sys_enter/sys_exit; no tracefs needed) of one process, each with
 * the full user register set and a snapshot of the user stack, sent as
 * variable-length records through one BPF ring buffer.
 *
 * Options are rodata set by user space between open and load, so the
 * verifier prunes what a run does not use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sfprof_event.h"
#include "sfprof.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 target_tgid = 0;
/*
 * `-- COMMAND`: the target is sfprof's own forked child until it execs.
 * Its events before the exec belong to sfprof's image, not COMMAND's, so
 * nothing is recorded until sched_process_exec has armed the filter.
 */
const volatile __u32 wait_exec = 0;
const volatile __u32 stack_size = SFPROF_STACK_DEFAULT;
const volatile __u64 min_wait_ns = 0;
const volatile __u32 want_kstack = 0;
/* Ask the consumer to wake up once this much data is pending (0: never). */
const volatile __u64 wakeup_bytes = 0;
/* Build records in scratch slots even where the direct copy works (tests
 * of the path older kernels take). */
const volatile __u32 force_scratch = 0;

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFPROF_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct futex_entry {
	__u64 ts_ns;
	__u64 addr;
	__u32 op;
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct futex_entry);
} futex_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1); /* resized by user space when --kernel */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} kstacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} exec_seen SEC(".maps");

/*
 * The first SP of each thread the target creates while sfprof watches:
 * the top of its frames (its start routine is called from there). LRU,
 * so exited threads need no cleanup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);   /* tid */
	__type(value, __u64); /* initial user SP */
} thread_top SEC(".maps");

static __always_inline int is_target(__u64 pid_tgid)
{
	__u32 zero = 0, *seen;

	if ((pid_tgid >> 32) != target_tgid)
		return 0;
	if (!wait_exec)
		return 1;
	seen = bpf_map_lookup_elem(&exec_seen, &zero);
	return seen && *seen;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sfprof_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 zero = 0, one = 1;

	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
		bpf_map_update_elem(&exec_seen, &zero, &one, BPF_ANY);
	return 0;
}

/*
 * A new thread of the target: clone has set up its user registers by now
 * (copy_thread() runs in copy_process(), before this tracepoint), so its
 * SP is the stack top glibc, musl or any runtime chose for it.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sfprof_fork, struct task_struct *parent, struct task_struct *child)
{
	struct pt_regs *regs;
	__u32 tid = child->pid;
	__u64 sp;

	if (child->tgid != target_tgid || child->pid == child->tgid)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(child);
	if (!regs || bpf_probe_read_kernel(&sp, sizeof(sp), &regs->sp) || !sp)
		return 0;
	bpf_map_update_elem(&thread_top, &tid, &sp, BPF_ANY);
	return 0;
}

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	/* atomic: syscall tracepoint programs can be preempted on this
	 * kernel (faultable syscall tracepoints), so two may interleave */
	if (v)
		__sync_fetch_and_add(v, n);
}

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

/* Stack flags, length and record size of a header whose copy is done. */
static __always_inline void stack_done(struct sfprof_event *h, __u32 len, __u32 span, __u32 at_top)
{
	if (span) {
		if (len == 0) {
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
}

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

static __always_inline void emit_direct(struct sfprof_event *h, __u32 span, __u32 at_top,
					__u64 flags)
{
	struct dcopy_state c = {
		.sp = h->regs.sp,
		.want = span,
	};
	__u32 rsize = (SFPROF_EVENT_HDR_SIZE + span + 7) & ~7u;

	if (bpf_ringbuf_reserve_dynptr(&events, rsize, 0, &c.dp)) {
		bpf_ringbuf_discard_dynptr(&c.dp, 0);
		count(SFPROF_CNT_LOST_RINGBUF, 1);
		return;
	}
	if (span) {
		/* the frame span is mapped and resident as a rule: one read;
		 * where it is not, page by page up to the first failing page */
		if (!bpf_probe_read_user_dynptr(&c.dp, SFPROF_EVENT_HDR_SIZE, span, (void *)c.sp))
			c.off = span;
		else
			bpf_loop(SFPROF_STACK_PAGES, dcopy_page, &c, 0);
	}
	stack_done(h, c.off, span, at_top);
	bpf_dynptr_write(&c.dp, 0, h, SFPROF_EVENT_HDR_SIZE, 0);
	bpf_ringbuf_submit_dynptr(&c.dp, flags);
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
					 __u64 flags, __u32 kind)
{
	struct sfprof_scratch *s = slot_get(kind);
	__u32 len = 0;
	__u64 size;

	if (!s)
		return;
	if (span)
		len = copy_user_stack(s->rec + SFPROF_EVENT_HDR_SIZE, h->regs.sp, span);
	stack_done(h, len, span, at_top);
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

/* Sends the record whose header `h` (on the BPF stack) is filled in. */
static __always_inline void emit(struct sfprof_event *h, __u32 kind)
{
	__u32 want = stack_size, span = 0, at_top = 0;
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (want > SFPROF_STACK_MAX)
		want = SFPROF_STACK_MAX;
	if (!(h->flags & SFPROF_EVF_NO_USER_REGS) && want)
		span = frames_span(h->regs.sp, want, &at_top);
	/* no wakeup per record: the consumer drains on a timer (a wakeup per
	 * futex event tripled its cost), and is woken only when half the
	 * ring is pending */
	if (wakeup_bytes &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (!force_scratch && have_direct_copy())
		emit_direct(h, span, at_top, flags);
	else
		emit_scratch(h, span, at_top, flags, kind);
}

static __always_inline void fill_common(struct sfprof_event *e, __u64 pid_tgid, __u16 kind)
{
	e->kind = kind;
	e->flags = 0;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	e->futex_addr = 0;
	e->futex_op = 0;
	e->kstack_id = -1;
	e->syscall_nr = 0;
	e->pad0 = 0;
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

SEC("perf_event")
int sfprof_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sfprof_event ev, *e = &ev;
	__u64 cs;

	if (!is_target(pid_tgid))
		return 0;
	count(SFPROF_CNT_SAMPLES_SEEN, 1);
	fill_common(e, pid_tgid, SFPROF_EV_CPU);
	e->weight = 1;
	/* full 8-byte read: the verifier rejects narrower ctx loads of cs */
	cs = ctx->regs.csx;
	if ((cs & 3) == 3) {
		e->regs.r15 = ctx->regs.r15;
		e->regs.r14 = ctx->regs.r14;
		e->regs.r13 = ctx->regs.r13;
		e->regs.r12 = ctx->regs.r12;
		e->regs.bp = ctx->regs.bp;
		e->regs.bx = ctx->regs.bx;
		e->regs.r11 = ctx->regs.r11;
		e->regs.r10 = ctx->regs.r10;
		e->regs.r9 = ctx->regs.r9;
		e->regs.r8 = ctx->regs.r8;
		e->regs.ax = ctx->regs.ax;
		e->regs.cx = ctx->regs.cx;
		e->regs.dx = ctx->regs.dx;
		e->regs.si = ctx->regs.si;
		e->regs.di = ctx->regs.di;
		e->regs.orig_ax = ctx->regs.orig_ax;
		e->regs.ip = ctx->regs.ip;
		e->regs.cs = cs;
		e->regs.flags = ctx->regs.flags;
		e->regs.sp = ctx->regs.sp;
		e->regs.ss = ctx->regs.ssx;
	} else {
		e->flags |= SFPROF_EVF_KERNEL_MODE;
		if (task_user_regs(e)) {
			e->flags |= SFPROF_EVF_NO_USER_REGS;
			__builtin_memset(&e->regs, 0, sizeof(e->regs));
			count(SFPROF_CNT_NO_USER_REGS, 1);
		}
	}
	if (want_kstack)
		e->kstack_id = bpf_get_stackid(ctx, &kstacks, 0);
	emit(e, SFPROF_SLOT_CPU);
	return 0;
}

/*
 * Futex waits. FUTEX_CMD_MASK strips FUTEX_PRIVATE_FLAG and
 * FUTEX_CLOCK_REALTIME (include/uapi/linux/futex.h).
 */
static __always_inline int futex_is_wait(__u32 op)
{
	switch (op & SFPROF_FUTEX_CMD_MASK) {
	case SFPROF_FUTEX_WAIT:
	case SFPROF_FUTEX_LOCK_PI:
	case SFPROF_FUTEX_WAIT_BITSET:
	case SFPROF_FUTEX_WAIT_REQUEUE_PI:
	case SFPROF_FUTEX_LOCK_PI2:
		return 1;
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sfprof_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct futex_entry ent;
	__u32 tid;

	if (!is_target(pid_tgid))
		return 0;
	if (id == SFPROF_NR_futex) {
		ent.op = (__u32)regs->si;
		if (!futex_is_wait(ent.op))
			return 0;
	} else if (id == SFPROF_NR_futex_waitv || id == SFPROF_NR_futex_wait) {
		/* futex_wait(uaddr, val, mask, flags, ...): op = flags */
		ent.op = id == SFPROF_NR_futex_wait ? (__u32)regs->r10 : 0;
	} else {
		return 0;
	}
	ent.addr = regs->di;
	ent.nr = id;
	ent.ts_ns = bpf_ktime_get_ns();
	tid = (__u32)pid_tgid;
	if (bpf_map_update_elem(&futex_start, &tid, &ent, BPF_ANY))
		count(SFPROF_CNT_LOST_ENTRY_MAP, 1);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sfprof_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct futex_entry *ent;
	struct sfprof_event ev, *e = &ev;
	__u64 now, waited;
	__u32 tid;

	if (!is_target(pid_tgid))
		return 0;
	tid = (__u32)pid_tgid;
	ent = bpf_map_lookup_elem(&futex_start, &tid);
	if (!ent)
		return 0;
	/* an entry left by a thread that never returned from its wait (killed
	 * by exit_group) must not match a later syscall of a reused tid */
	if (regs->orig_ax != ent->nr) {
		bpf_map_delete_elem(&futex_start, &tid);
		count(SFPROF_CNT_FUTEX_STALE, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	waited = now - ent->ts_ns;
	count(SFPROF_CNT_FUTEX_WAITS_SEEN, 1);
	if (waited < min_wait_ns) {
		count(SFPROF_CNT_FUTEX_SHORT, 1);
		bpf_map_delete_elem(&futex_start, &tid);
		return 0;
	}
	fill_common(e, pid_tgid, SFPROF_EV_FUTEX);
	e->ts_ns = now;
	e->weight = waited;
	e->futex_addr = ent->addr;
	e->futex_op = ent->op;
	e->syscall_nr = ent->nr;
	bpf_map_delete_elem(&futex_start, &tid);
	/* the user stack does not change while the thread is in the kernel:
	 * the snapshot at exit is the waiting stack */
	if (task_user_regs(e)) {
		e->flags |= SFPROF_EVF_NO_USER_REGS;
		__builtin_memset(&e->regs, 0, sizeof(e->regs));
		count(SFPROF_CNT_NO_USER_REGS, 1);
	}
	emit(e, SFPROF_SLOT_FUTEX);
	return 0;
}
