/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * --wakers: the WAKER record (include/sfprof_event.h) that tells user
 * space who ended a block, sent from tp_btf/sched_waking, which runs in
 * the waker's context (try_to_wake_up; sched_wakeup may run on the
 * wakee's CPU from an IPI). offcpu.bpf.c sends one for a woken thread's
 * off-CPU block, futex.bpf.c for its futex wait, each once the block is
 * at least as long as its minimum.
 */
#ifndef SFPROF_WAKER_BPF_H
#define SFPROF_WAKER_BPF_H

#include "stack_copy.bpf.h"

/* woken: the task woken; ts: when its block began (the key user space
 * joins on); kind: the event of that block (SFPROF_EV_OFFCPU, _FUTEX) */
static __always_inline void emit_waker(void *ctx, struct task_struct *woken, __u64 ts,
				       __u32 kind)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sfprof_event *e;

	count(SFPROF_CNT_WAKERS, 1);
	/* off the stack: stack_copy.bpf.h, hdr_slots */
	e = hdr_get(SFPROF_SLOT_WAKER);
	if (!e)
		return;
	fill_common(e, pid_tgid, SFPROF_EV_WAKER);
	e->weight = 0;
	e->waker.woken_tid = woken->pid;
	e->waker.block_start = ts;
	e->waker.of_kind = kind;
	e->kstack_id = bpf_get_stackid(ctx, &kstacks, SFPROF_KSTACK_SKIP_TP);
	/*
	 * The waker's user context when it is one of ours. From an interrupt
	 * (a timer, an I/O completion) current is only the task it
	 * interrupted: user space tells by the kernel stack (BPF cannot: the
	 * per-CPU preempt count is not in kallsyms here, and the program runs
	 * on a private stack, not on the interrupt's).
	 */
	if (!is_target(pid_tgid) || task_user_regs(e)) {
		e->flags |= SFPROF_EVF_NO_USER_REGS;
		__builtin_memset(&e->regs, 0, sizeof(e->regs));
	}
	emit(e, SFPROF_SLOT_WAKER);
	hdr_put(e);
}

#endif
