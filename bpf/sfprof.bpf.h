/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* BPF-only definitions shared by the bpf/ programs. */
#ifndef SFPROF_BPF_H
#define SFPROF_BPF_H

#define SFPROF_PAGE_SIZE 4096u
/* pages a maximal snapshot can touch: 65528 bytes from an unaligned SP */
#define SFPROF_STACK_PAGES 17

/* include/linux/sched.h */
#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
#define PF_EXITING 0x00000004
#define SFPROF_TASK_INTERRUPTIBLE 0x0001
#define SFPROF_TASK_UNINTERRUPTIBLE 0x0002

/* arch/x86/entry/syscalls/syscall_64.tbl */
#define SFPROF_NR_futex 202
#define SFPROF_NR_futex_waitv 449
#define SFPROF_NR_futex_wait 455

/* include/uapi/linux/futex.h */
#define SFPROF_FUTEX_WAIT 0
#define SFPROF_FUTEX_LOCK_PI 6
#define SFPROF_FUTEX_WAIT_BITSET 9
#define SFPROF_FUTEX_WAIT_REQUEUE_PI 11
#define SFPROF_FUTEX_LOCK_PI2 13
#define SFPROF_FUTEX_CMD_MASK (~(128 | 256))

/*
 * Kernel frames bpf_get_stackid() skips in a tp_btf program on
 * sched_switch: the program itself and bpf_trace_run4(), so the stack's
 * leaf is __schedule().
 */
#define SFPROF_KSTACK_SKIP_TP 2

enum sfprof_slot_kind {
	SFPROF_SLOT_CPU = 0,
	SFPROF_SLOT_FUTEX = 1,
	SFPROF_SLOT_OFFCPU = 2,
	SFPROF_SLOT_WAKER = 3,
	SFPROF_SLOT_KINDS = 4,
};

/* One record under construction: a struct sfprof_event and its stack
 * (plus a page of slack the verifier needs for the last page copy), and
 * room for a Python section behind it. */
struct sfprof_scratch {
	__u64 busy;
	__u8 rec[SFPROF_EVENT_HDR_SIZE + SFPROF_STACK_MAX + SFPROF_PAGE_SIZE + 8 +
		 SFPROF_PY_SECTION_SIZE(SFPROF_PY_FRAMES_MAX)];
};

#endif
