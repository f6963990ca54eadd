/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* The futex waits in progress, per thread: futex.bpf.c fills and reads
 * them, task.bpf.c drops the entry of a thread that dies in its wait. */
#ifndef SFPROF_FUTEX_BPF_H
#define SFPROF_FUTEX_BPF_H

struct futex_entry {
	__u64 ts_ns;
	__u64 addr;
	__u32 op;
	__u32 nr;
	__s32 kstack_id; /* --kernel: where the wait last slept, or <0 */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct futex_entry);
} futex_start SEC(".maps");

#endif
