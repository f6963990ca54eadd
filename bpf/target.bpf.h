/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Who is profiled: the run's configuration (rodata, set by user space
 * between open and load, so the verifier prunes what a run does not use)
 * and the one scope test every event source calls before copying
 * anything.
 *
 * Scopes (capture.h): a set of processes in the targets map (-p, the
 * started COMMAND, and with inheritance every process they create, added
 * synchronously at fork by task.bpf.c), or every process (-a), either
 * one narrowed to a cgroup v2 subtree (--cgroup). sfprof's own process
 * is never a target.
 *
 * Each event source is a BPF object of its own, with its user side in
 * src/capture/source_<name>.c and a line in the table there (source.h: the
 * capture loads those a run needs); they declare the same maps through
 * these headers, and capture_attach.c makes them share one instance of
 * each (bpf_map__reuse_fd).
 * The BPF static linker could merge them into one object, but libbpf
 * 1.1's linker rejects a kfunc extern (bpf_probe_read_user_dynptr) seen
 * in two objects.
 */
#ifndef SFPROF_TARGET_BPF_H
#define SFPROF_TARGET_BPF_H

#include "sfprof.bpf.h"

const volatile struct sfprof_config cfg = {
	.inherit = 1,
	.stack_size = SFPROF_STACK_DEFAULT,
};

/* tgid -> enum sfprof_target_state */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SFPROF_TARGETS_MAX);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

/* [0]: the --cgroup directory */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* bit tgid % 64 of word tgid / 64: an ARMED target (sfprof_event.h) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized by user space: pid_max / 64 */
	__type(key, __u32);
	__type(value, __u64);
} target_bits SEC(".maps");

/* 4 bits per tgid: enum sfprof_runtime_bit (sfprof_event.h) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized by user space: pid_max / 16 */
	__type(key, __u32);
	__type(value, __u64);
} rt_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFPROF_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	/* atomic: syscall tracepoint programs can be preempted on this
	 * kernel (faultable syscall tracepoints), so two may interleave */
	if (v)
		__sync_fetch_and_add(v, n);
}

/* Whether `tgid` is an ARMED member of the listed set: its bit, or for a
 * tgid past the bitmap (pid_max raised during the run) its hash entry. */
static __always_inline int tgid_armed(__u32 tgid)
{
	__u32 word = tgid / 64, *state;
	__u64 *bits = bpf_map_lookup_elem(&target_bits, &word);

	if (bits)
		return (*bits >> (tgid & 63)) & 1;
	state = bpf_map_lookup_elem(&targets, &tgid);
	return state && *state == SFPROF_TARGET_ARMED;
}

/* Arms or disarms `tgid`'s bit; the targets entry is set before a bit is,
 * and deleted after it is cleared. Atomic: user space and the task
 * programs on other CPUs write the same words. */
static __always_inline void target_bit(__u32 tgid, int on)
{
	__u32 word = tgid / 64;
	__u64 *bits = bpf_map_lookup_elem(&target_bits, &word), bit = 1ull << (tgid & 63);

	if (!bits)
		return;
	if (on)
		__sync_fetch_and_or(bits, bit);
	else
		__sync_fetch_and_and(bits, ~bit);
}

/* The runtimes (enum sfprof_runtime_bit) user space found in `tgid`: one
 * word read for all of them; all when the tgid is past the bitmap (each
 * walk then asks its hash). */
static __always_inline __u32 rt_bits(__u32 tgid)
{
	__u32 word = tgid / SFPROF_RT_TGIDS_PER_WORD;
	__u64 *bits = bpf_map_lookup_elem(&rt_tgids, &word);

	if (!bits)
		return SFPROF_RT_ALL;
	return (*bits >> ((tgid % SFPROF_RT_TGIDS_PER_WORD) * 4)) & SFPROF_RT_ALL;
}

/* Whether the current task's process is in scope: the cheap tests first,
 * a bitmap word only for a listed set. */
static __always_inline int is_target(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32;

	if (tgid == cfg.self_tgid || !tgid)
		return 0;
	if (cfg.scope_all || cfg.use_cgroup) {
		/* kernel threads have no user stack to profile */
		if (bpf_get_current_task_btf()->flags & PF_KTHREAD)
			return 0;
		return !cfg.use_cgroup || bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
	}
	return tgid_armed(tgid);
}

#endif
