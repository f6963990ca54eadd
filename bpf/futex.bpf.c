// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Futex waits: tp_btf sys_enter/sys_exit (no tracefs needed). The entry
 * time is kept per thread; at exit one record is sent, weighted by the
 * wait, for waits of at least --min-wait. The user stack does not change
 * while the thread is in the kernel, so the snapshot at exit is the
 * waiting stack.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sfprof_event.h"
#include "stack_copy.bpf.h"
#include "waker.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#include "futex.bpf.h"

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

	/* the syscall first: this runs for every syscall on the machine */
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
	if (!is_target(pid_tgid))
		return 0;
	ent.addr = regs->di;
	ent.nr = id;
	ent.kstack_id = -1;
	ent.pad = 0;
	ent.ts_ns = bpf_ktime_get_ns();
	tid = (__u32)pid_tgid;
	if (bpf_map_update_elem(&futex_start, &tid, &ent, BPF_ANY))
		count(SFPROF_CNT_LOST_ENTRY_MAP, 1);
	return 0;
}

/*
 * The record of a wait, built in the waiting task's own storage, not on
 * the stack: a syscall tracepoint's program runs on the kernel stack
 * (6.18.44 gives no private stack to a program that may be preempted),
 * where its frame and emit()'s, with emit()'s deepest walk, must fit in
 * 512 bytes together; a 248-byte header on this frame took it to 608.
 * Per task, not per CPU: the program can be preempted in the middle of
 * the record by another task's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sfprof_event);
} futex_rec SEC(".maps");

SEC("tp_btf/sys_exit")
int BPF_PROG(sfprof_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct futex_entry *ent;
	struct sfprof_event *e;
	__u64 now, waited, nr;
	__u32 tid;

	/* the syscall first: this runs for every syscall on the machine. An
	 * entry exists only for a target's wait (sys_enter tested it), and
	 * one left by a thread that died in its wait is deleted at its exit
	 * (task.bpf.c) */
	nr = regs->orig_ax;
	if (nr != SFPROF_NR_futex && nr != SFPROF_NR_futex_waitv && nr != SFPROF_NR_futex_wait)
		return 0;
	tid = (__u32)pid_tgid;
	ent = bpf_map_lookup_elem(&futex_start, &tid);
	if (!ent)
		return 0;
	if (nr != ent->nr) {
		bpf_map_delete_elem(&futex_start, &tid);
		count(SFPROF_CNT_FUTEX_STALE, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	waited = now - ent->ts_ns;
	count(SFPROF_CNT_FUTEX_WAITS_SEEN, 1);
	if (waited < cfg.min_wait_ns) {
		count(SFPROF_CNT_FUTEX_SHORT, 1);
		bpf_map_delete_elem(&futex_start, &tid);
		return 0;
	}
	e = bpf_task_storage_get(&futex_rec, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		/* no memory, or the storage's lock busy (a program nested in
		 * this one on the task's storage) */
		bpf_map_delete_elem(&futex_start, &tid);
		count(SFPROF_CNT_LOST_BUSY, 1);
		return 0;
	}
	fill_common(e, pid_tgid, SFPROF_EV_FUTEX);
	e->ts_ns = now;
	e->weight = waited;
	e->futex.addr = ent->addr;
	e->futex.op = ent->op;
	e->futex.syscall_nr = ent->nr;
	e->kstack_id = ent->kstack_id;
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

/*
 * --kernel: the kernel stack where a futex wait sleeps (futex_wait_queue
 * and what called it), taken at its switch-out; at sys_enter the kernel
 * stack is only the syscall entry. Attached only with --kernel: it runs
 * for every switch of the machine, and tests a thread's wait entry (one
 * exists only for a target's wait in progress).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(sfprof_futex_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct futex_entry *ent;
	__u32 tid;

	/* a preemption is not where the wait sleeps */
	if (preempt || prev_state == 0 || (prev->flags & PF_KTHREAD))
		return 0;
	tid = prev->pid;
	ent = bpf_map_lookup_elem(&futex_start, &tid);
	if (ent)
		ent->kstack_id = bpf_get_stackid(ctx, &kstacks, SFPROF_KSTACK_SKIP_TP);
	return 0;
}

/* --wakers: who ends a futex wait (the FUTEX_WAKE caller, pthread_mutex_unlock) */
SEC("tp_btf/sched_waking")
int BPF_PROG(sfprof_futex_waking, struct task_struct *p)
{
	struct futex_entry *ent;
	__u64 ts;

	if (p->flags & PF_KTHREAD)
		return 0;
	{
		__u32 tid = p->pid; /* scoped: emit_waker's record may share its slot */

		ent = bpf_map_lookup_elem(&futex_start, &tid);
	}
	if (!ent || bpf_ktime_get_ns() - (ts = ent->ts_ns) < cfg.min_wait_ns)
		return 0;
	emit_waker(ctx, p, ts, SFPROF_EV_FUTEX);
	return 0;
}
