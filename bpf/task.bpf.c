// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Process and thread lifecycle, for every event source: which processes
 * are targets (a target's new process is one from the instant it is
 * created, so no event of it can precede the decision), where a new
 * thread's frames end, and the FORK and EXIT records that tell user
 * space when a process's state begins and may be freed.
 *
 * Loaded in every run, first: the maps it creates are the ones the other
 * objects share.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sfprof_event.h"
#include "stack_copy.bpf.h"
#include "futex.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * `-- COMMAND`: the target is sfprof's own forked child until it execs.
 * Its events before the exec belong to sfprof's image, not COMMAND's, so
 * it waits in the targets map, unarmed, until its exec.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sfprof_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, armed = SFPROF_TARGET_ARMED;
	__u32 *state = bpf_map_lookup_elem(&targets, &tgid);

	if (state && *state == SFPROF_TARGET_WAIT_EXEC &&
	    !bpf_map_update_elem(&targets, &tgid, &armed, BPF_EXIST))
		target_bit(tgid, 1);
	return 0;
}

/* Whether process `tgid` (not the current task's) is a target. */
static __always_inline int tgid_is_target(__u32 tgid)
{
	if (cfg.scope_all || cfg.use_cgroup)
		return 1;
	return tgid_armed(tgid);
}

/*
 * A new thread of a target: clone has set up its user registers by now
 * (copy_thread() runs in copy_process(), before this tracepoint), so its
 * SP is the stack top glibc, musl or any runtime chose for it.
 */
static __always_inline void new_thread(struct task_struct *child)
{
	struct pt_regs *regs;
	__u32 tid = child->pid;
	__u64 sp;

	regs = (struct pt_regs *)bpf_task_pt_regs(child);
	if (!regs || bpf_probe_read_kernel(&sp, sizeof(sp), &regs->sp) || !sp)
		return;
	bpf_map_update_elem(&thread_top, &tid, &sp, BPF_ANY);
}

/*
 * A new process (fork, vfork, clone without CLONE_THREAD): the current
 * task is its parent. Under -a and --cgroup every process is in scope
 * already (a child starts in its parent's cgroup); a set of targets
 * grows by the children of its members when inheriting.
 */
static __always_inline void new_process(struct task_struct *parent, struct task_struct *child)
{
	struct sfprof_event ev, *e = &ev;
	__u32 tgid = child->tgid, armed = SFPROF_TARGET_ARMED;

	if (!is_target(bpf_get_current_pid_tgid()))
		return;
	if (!cfg.scope_all && !cfg.use_cgroup) {
		if (!cfg.inherit)
			return;
		if (bpf_map_update_elem(&targets, &tgid, &armed, BPF_ANY)) {
			count(SFPROF_CNT_LOST_TARGET_MAP, 1);
			return;
		}
		target_bit(tgid, 1);
	}
	count(SFPROF_CNT_FORKS, 1);
	fill_common(e, ((__u64)tgid << 32) | child->pid, SFPROF_EV_FORK);
	e->fork.ppid = parent->tgid;
	emit_task(e);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sfprof_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->flags & PF_KTHREAD)
		return 0;
	if (child->pid == child->tgid)
		new_process(parent, child);
	else if (tgid_is_target(child->tgid))
		new_thread(child);
	return 0;
}

/*
 * A thread exits. One that dies inside a futex wait (exit_group kills it
 * there) leaves its entry, which a later thread with the same tid must
 * not match. When the last thread of a target goes (group_dead), the
 * process leaves the targets map and user space may free its state once
 * the events still in flight are in.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sfprof_exit, struct task_struct *p, bool group_dead)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct sfprof_event ev, *e = &ev;

	if (p->flags & PF_KTHREAD)
		return 0;
	if (bpf_map_lookup_elem(&futex_start, &tid)) {
		bpf_map_delete_elem(&futex_start, &tid);
		count(SFPROF_CNT_FUTEX_STALE, 1);
	}
	if (!group_dead || !is_target(pid_tgid)) {
		/* a COMMAND that died before its exec */
		if (group_dead && !cfg.scope_all && !cfg.use_cgroup) {
			target_bit(tgid, 0);
			bpf_map_delete_elem(&targets, &tgid);
		}
		return 0;
	}
	if (!cfg.scope_all && !cfg.use_cgroup) {
		target_bit(tgid, 0);
		bpf_map_delete_elem(&targets, &tgid);
	}
	count(SFPROF_CNT_EXITS, 1);
	fill_common(e, pid_tgid, SFPROF_EV_EXIT);
	emit_task(e);
	return 0;
}
