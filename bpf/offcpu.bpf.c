// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Off-CPU time: how long each target thread stays off CPU, by the user
 * stack it blocked in. Two programs on every context switch of the
 * machine:
 *
 *  - tp_btf/sched_switch, in the context of `prev` (still current there):
 *    a target thread that leaves the CPU in a kept state (--state) gets
 *    its switch-out time (and, with --kernel, its kernel stack) in its
 *    task storage. Nothing is copied: the length of the block is not
 *    known yet.
 *  - tp_btf/sched_exit_tp, at the end of __schedule(), in the context of
 *    the thread switched back in, before it runs anything else: a thread
 *    with a switch-out time has ended a block. Blocks of at least
 *    --min-block are sent with its user registers and stack. Every
 *    switched-out thread resumes there (in context_switch(), inside the
 *    __schedule() call that switched it out, whichever path called it:
 *    schedule(), preemption, cond_resched), and it has not left the kernel
 *    since it blocked, so its pt_regs and user stack are the ones it
 *    blocked with, as the futex event's snapshot at sys_exit is. (fentry
 *    on finish_task_switch or fexit on schedule would do the same, but
 *    fentry/fexit programs fail to load here with EPERM; sched_exit_tp is
 *    a bare tracepoint, Linux 6.16+, and runs with the rq lock released.)
 *
 *  - --wakers: tp_btf/sched_waking, in the waker's context (try_to_wake_up
 *    runs there; sched_wakeup may run on the wakee's CPU from an IPI): a
 *    woken target thread whose block is already --min-block long gets a
 *    WAKER record (bpf/waker.bpf.h): the waker's kernel stack and, when
 *    the waker is a target thread, its user stack. User space joins it
 *    to the block's OFFCPU record by (woken tid, switch-out time).
 *
 * Task storage, not a hash by tid: the switch-in test of a thread that
 * never blocked as a target is one load of task->bpf_storage (NULL), and
 * the storage dies with the task, so a recycled tid never meets a stale
 * entry.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sfprof_event.h"
/* unreadable stacks read by their task (stack_copy.bpf.h) */
#define SFPROF_DEFER_READS 1
#include "stack_copy.bpf.h"
#include "waker.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct offcpu_entry {
	__u64 ts_out;	 /* switch-out time; 0: not blocked as a target */
	__s32 kstack_id; /* kernel stack at the switch-out, or <0 */
	__u32 state;	 /* enum sfprof_offcpu_state */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_entry);
} offcpu_start SEC(".maps");

/*
 * The state the kernel's own sched_switch output prints for prev
 * (TP_printk: preempt ? "R+" : __task_state_index(prev_state)): a
 * preempted task is runnable whatever its state word says.
 */
static __always_inline __u32 offcpu_state(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return SFPROF_OFFCPU_R;
	if (prev_state & SFPROF_TASK_INTERRUPTIBLE)
		return SFPROF_OFFCPU_S;
	if (prev_state & SFPROF_TASK_UNINTERRUPTIBLE)
		return SFPROF_OFFCPU_D;
	return SFPROF_OFFCPU_OTHER;
}

/*
 * A task's entry, if it has one. Most tasks of the machine have no task
 * storage at all: for them this is one load of task->bpf_storage, not a
 * helper call.
 */
static __always_inline struct offcpu_entry *offcpu_entry_of(struct task_struct *t)
{
	if (!t->bpf_storage)
		return NULL;
	return bpf_task_storage_get(&offcpu_start, t, NULL, 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sfprof_switch_out, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct offcpu_entry *ent;
	unsigned int flags;
	__u32 state;

	/* the cheap tests first: this runs for every switch on the machine */
	flags = prev->flags;
	if (flags & PF_KTHREAD)
		return 0;
	state = offcpu_state(preempt, prev_state);
	if (!(cfg.offcpu_states & state))
		return 0;
	/* an exiting thread past exit_mm() has no user stack left to copy */
	if (!prev->mm)
		return 0;
	/*
	 * A thread with an entry was a target's when the entry was made, and
	 * still is: a listed process leaves the targets map only when its
	 * last thread exits (so an exiting thread is asked again), and a
	 * tgid is not reused while one of its threads lives. Only a --cgroup
	 * scope can be left by a live thread. This saves the targets lookup
	 * at a target's every switch after its first.
	 */
	ent = offcpu_entry_of(prev);
	if (!ent || cfg.use_cgroup || (flags & PF_EXITING)) {
		/* prev is current here */
		if (!is_target((__u64)prev->tgid << 32 | (__u32)prev->pid))
			return 0;
		if (!ent)
			ent = bpf_task_storage_get(&offcpu_start, prev, NULL,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ent) {
			count(SFPROF_CNT_LOST_OFFCPU_MAP, 1);
			return 0;
		}
	}
	/* a Ruby thread's frames are named while it lives (ruby.bpf.h) */
	rb_note(prev->tgid, prev->pid);
	ent->state = state;
	ent->kstack_id = cfg.want_kstack ? bpf_get_stackid(ctx, &kstacks, SFPROF_KSTACK_SKIP_TP) : -1;
	ent->ts_out = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(sfprof_waking, struct task_struct *p)
{
	struct offcpu_entry *ent;
	__u64 ts_out;

	/* the cheap test first: this runs for every wakeup on the machine */
	ent = offcpu_entry_of(p);
	if (!ent || !(ts_out = ent->ts_out))
		return 0;
	if (bpf_ktime_get_ns() - ts_out < cfg.min_block_ns)
		return 0;
	emit_waker(ctx, p, ts_out, SFPROF_EV_OFFCPU);
	return 0;
}

SEC("tp_btf/sched_exit_tp")
int BPF_PROG(sfprof_switch_in, bool is_switch)
{
	struct task_struct *task;
	struct sfprof_event *e;
	struct offcpu_entry *ent;
	__u64 now, off;

	/* no switch: the thread never left the CPU in this __schedule() */
	if (!is_switch)
		return 0;
	task = bpf_get_current_task_btf();
	ent = offcpu_entry_of(task);
	if (!ent || !ent->ts_out)
		return 0;
	now = bpf_ktime_get_ns();
	off = now - ent->ts_out;
	ent->ts_out = 0;
	/* one counter a block: user space adds offcpu_short to offcpu_seen */
	if (off < cfg.min_block_ns) {
		count(SFPROF_CNT_OFFCPU_SHORT, 1);
		return 0;
	}
	count(SFPROF_CNT_OFFCPU_SEEN, 1);
	e = hdr_get(SFPROF_SLOT_OFFCPU);
	if (!e)
		return 0;
	fill_common(e, bpf_get_current_pid_tgid(), SFPROF_EV_OFFCPU);
	e->ts_ns = now;
	e->weight = off;
	e->offcpu.state = ent->state;
	e->kstack_id = ent->kstack_id;
	if (task_user_regs(e)) {
		e->flags |= SFPROF_EVF_NO_USER_REGS;
		__builtin_memset(&e->regs, 0, sizeof(e->regs));
		count(SFPROF_CNT_NO_USER_REGS, 1);
	}
	emit(e, SFPROF_SLOT_OFFCPU);
	hdr_put(e);
	return 0;
}
