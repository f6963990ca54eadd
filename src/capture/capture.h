/* SPDX-License-Identifier: MIT */
/*
 * Capture: loads the BPF programs (bpf/: task.bpf.c always, then one
 * object per event source, their table in src/capture/source.h),
 * configures them for a scope of processes, attaches them, and drains
 * the ring buffer into a callback, one struct sfprof_event at a time,
 * with the side-band's mapping changes (sideband.h) delivered in
 * timestamp order before the events they precede.
 *
 *   scope    a set of PIDs (and, inheriting, every process they create
 *            from attach on: added in BPF at fork, before the child runs),
 *            every process (-a), or a cgroup v2 subtree; filtered in BPF
 *            before anything is copied. sfprof itself is never a target.
 *   on-CPU   perf_event program on cycles or cpu-clock, one event per
 *            online CPU (pid=-1), filtered in BPF: threads and processes
 *            created later are covered without following them.
 *   futex    tp_btf/sys_enter + sys_exit (no tracefs): one event per wait
 *            of at least min_wait_ns, emitted at syscall exit.
 *   off-CPU tp_btf/sched_switch (switch-out of a target thread: time,
 *            state) + tp_btf/sched_exit_tp (its switch-in, in its own
 *            context): one event per block of at least min_block_ns.
 *   lifecycle FORK (a new process in scope, with its parent) and EXIT (its
 *            last thread is gone) records in the same ring.
 *
 * Wakeups: no program wakes the consumer per record (from the perf program
 * a wakeup cost ~90% of the samples on this kernel, DESIGN.md; from
 * sys_exit it tripled the cost of a futex event, 13 us -> 4 us measured);
 * a forced wakeup only once half the ring is pending. capture__poll drains
 * on a timer and ring_buffer__consume()s every time.
 *
 * Ownership: the event passed to the callback points into the ring buffer
 * and is valid only during the call; copy what you keep.
 */
#ifndef SFPROF_CAPTURE_H
#define SFPROF_CAPTURE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sfprof_event.h"
#include "capture/sideband.h"

#ifndef __cplusplus
_Static_assert(sizeof(struct sfprof_event) == SFPROF_EVENT_HDR_SIZE,
	       "struct sfprof_event must match SFPROF_EVENT_HDR_SIZE");
_Static_assert(sizeof(struct sfprof_regs) == 21 * 8,
	       "struct sfprof_regs must match struct pt_regs");
#endif

/*
 * Consumer interface: called for every record, in ring order. `len` is the
 * record's length in the ring (>= e->size, a multiple of 8); e->stack_len
 * bytes of stack follow the header. Return 0 to go on, a negative errno to
 * stop the capture (capture__run returns it).
 */
typedef int (*capture_event_fn)(void *ctx, const struct sfprof_event *e, size_t len);

/* Event sources, as bits: capture_opts.kind may name several. */
enum capture_kind {
	CAPTURE_CPU = 1,
	CAPTURE_FUTEX = 2,
	CAPTURE_OFFCPU = 4,
};

/* The perf event that drives on-CPU samples. */
enum capture_clock {
	CAPTURE_CLOCK_AUTO = 0,	 /* hardware cycles where the machine has them, else cpu-clock */
	CAPTURE_CLOCK_CYCLES,	 /* hardware cycles, frequency mode; an error without a PMU */
	CAPTURE_CLOCK_CPU,	 /* software cpu-clock, a fixed period of 1e9/freq ns */
};

/* Side-band records, called in timestamp order with the events (same ctx). */
typedef int (*capture_sideband_fn)(void *ctx, const struct sideband_rec *r);

struct capture_opts {
	const pid_t *pids;	/* target processes (tgids); none with all/cgroup */
	int nr_pids;
	int all;		/* every process on the machine but this one */
	const char *cgroup;	/* a cgroup v2 directory: only its subtree */
	int no_inherit;		/* processes the targets create are not targets */
	enum capture_kind kind;	/* one or more bits */
	uint32_t freq;		/* CPU: samples per second (period 1e9/freq ns) */
	enum capture_clock clock; /* CPU: the sampling event */
	uint32_t stack_size;	/* bytes of user stack per event, <= SFPROF_STACK_MAX */
	uint64_t min_wait_ns;	/* futex: shorter waits are only counted */
	uint64_t min_block_ns;	/* offcpu: shorter blocks are only counted */
	uint32_t offcpu_states;	/* offcpu: enum sfprof_offcpu_state bits; 0 = all */
	int wakers;		/* offcpu, futex: WAKER records, with the wakers' kernel stacks */
	uint32_t ring_bytes;	/* ring buffer size, a power of two; 0 = 16 MiB */
	int kernel_stacks;	/* kernel stack ids (capture__kstack): cpu at the sample,
				   futex and offcpu where the thread blocked */
	int wait_exec;		/* pids[0] is a target only from its exec (-- COMMAND) */
	capture_sideband_fn on_sideband; /* mapping changes; NULL: no side-band */
	/* enum sfprof_runtime_bit: the runtimes whose frames BPF walks in
	 * the processes capture__set_runtime_proc names (runtime__capture_bits) */
	uint32_t runtimes;
};

/* Programs whose cost capture_stats can carry. */
#define CAPTURE_PROG_COSTS 16

/* Totals: BPF per-CPU counters summed, plus what user space saw. */
struct capture_stats {
	uint64_t events_cpu;	   /* cpu records received */
	uint64_t events_futex;	   /* futex records received */
	uint64_t events_fork, events_exit; /* lifecycle records received */
	uint64_t futex_wait_ns;	   /* sum of weights of futex records */
	uint64_t events_offcpu;	   /* offcpu records received */
	uint64_t offcpu_ns;	   /* sum of weights of offcpu records */
	uint64_t events_waker;	   /* waker records received */
	uint64_t bytes;		   /* record bytes received */
	uint64_t stack_bytes;	   /* of which stack bytes */
	uint64_t stack_full;	   /* records whose copy hit --stack-size */
	uint64_t kernel_mode;	   /* cpu samples taken in the kernel */
	uint64_t bad_records;	   /* malformed records (size mismatch) */
	int direct_copy;	   /* stacks copied straight into the ring (6.16+) */
	/* a stack page not resident is read by the task before it returns to
	 * user space (6.18+); 0: the kernel refused it, such reads are lost */
	int defer_reads;
	int cycles;		   /* CPU samples driven by hardware cycles, not cpu-clock */
	uint64_t thread_tops_learned; /* capture__set_thread_top() calls that took */
	struct sideband_stats sideband;
	uint64_t bpf[SFPROF_CNT_MAX]; /* enum sfprof_counter, summed over CPUs */
	/*
	 * Kernel-measured program cost (only with sysctl
	 * kernel.bpf_stats_enabled=1, else 0; misses always), per program of
	 * the sources loaded (src/capture/source.h), in their table's order:
	 * every invocation counts, including the cheap ones other processes
	 * cause before the tgid filter returns.
	 */
	struct capture_prog_cost {
		const char *name;	/* the program's, without "sfprof_": "sys_exit" */
		uint64_t run_ns, run_cnt;
		/* invocations the kernel skipped because a BPF program was
		 * already running on that CPU (always counted) */
		uint64_t misses;
	} prog[CAPTURE_PROG_COSTS];
	size_t nr_prog;
};

/* Names of the counters as --stats prints them (lost_ringbuf, ...). */
const char *capture_counter__name(enum sfprof_counter c);

struct capture;

/*
 * Load, configure and attach for o's scope. Needs CAP_BPF + CAP_PERFMON
 * (or root). Returns NULL + errno: EPERM (privileges), ESRCH (no such
 * process), ENOENT/ENOTDIR (no such cgroup), EINVAL (options), others
 * from libbpf/perf_event_open. A one-line reason is written to `err`
 * (may be NULL).
 */
struct capture *capture__new(const struct capture_opts *o, capture_event_fn fn,
			     void *ctx, FILE *err);
void capture__free(struct capture *c); /* detaches; NULL is a no-op */

/*
 * Wait up to timeout_ms for data, then drain everything pending. Returns
 * the number of records delivered, or a negative errno (from the callback
 * or the ring buffer). -EINTR from a signal counts as 0 records.
 */
int capture__poll(struct capture *c, int timeout_ms);

/*
 * The top of thread `tid`'s frames, learned by unwinding one of its
 * events (its entry frame's SP): from now on its stack is copied only up
 * to there. For threads that existed before attach, whose copy otherwise
 * ends at the thread pointer, above the thread's static TLS. A thread the
 * BPF side saw created keeps the SP it recorded. Each tid is set once.
 * 0, or a negative errno.
 */
int capture__set_thread_top(struct capture *c, uint32_t tid, uint64_t sp);

/*
 * A runtime's BPF side for process `tgid` (bpf/<runtime>.bpf.h): its
 * entry `proc` (len bytes, the map's value size) in the BPF map named
 * `map` (its per-process map: "py_procs"), and its bit `rt_bit` (enum
 * sfprof_runtime_bit) in rt_tgids, so the runtime's walk runs for the
 * process's events from now on; proc NULL: no more. A no-op (0) when
 * capture_opts.runtimes lacks rt_bit. 0, -ENOENT (no such map), -EINVAL
 * (len is not the map's value size), or another -errno.
 */
int capture__set_runtime_proc(struct capture *c, uint32_t rt_bit, const char *map, uint32_t tgid,
			      const void *proc, size_t len);

/*
 * The fd of a runtime's other BPF map named `map` (a ring of code seen
 * for the first time, "py_new"; a hash the walk fills, "rb_seen"), or
 * -ENOENT when capture_opts.runtimes lacks rt_bit or there is no such
 * map. The fd is the capture's: dup() it to keep.
 */
int capture__runtime_map(struct capture *c, uint32_t rt_bit, const char *map);

/* Drain everything pending without waiting; same returns as capture__poll.
 * After capture__detach() it also delivers the rest of the side-band. */
int capture__drain(struct capture *c);

/* The time up to which every side-band record has been delivered (ns,
 * CLOCK_MONOTONIC; 0 without a side-band). */
uint64_t capture__delivered_ns(const struct capture *c);

/* Why capture__run returned. */
enum capture_end {
	CAPTURE_END_STOP = 1,	  /* *stop became nonzero (signal) */
	CAPTURE_END_DURATION,	  /* duration_ns elapsed */
	CAPTURE_END_TARGET_EXIT,  /* the target processes (-p, COMMAND) exited */
};

struct capture_run_opts {
	uint64_t duration_ns;		  /* 0 = no limit */
	volatile sig_atomic_t *stop;	  /* set by a signal handler; may be NULL */
	int poll_ms;			  /* drain interval; 0 = 50 ms */
	/* called after every drain (progress line); may be NULL */
	void (*on_tick)(void *ctx, const struct capture_stats *st);
	void *tick_ctx;
	/* called after every drain with the time (CLOCK_MONOTONIC ns): a
	 * consumer frees what exited long enough before it; may be NULL */
	void (*on_drained)(void *ctx, uint64_t delivered_ns);
	void *drained_ctx;
};

/*
 * Drain until stopped, the duration elapses, or every listed target
 * (pids; for -- COMMAND, the command itself) has exited (watched with
 * pidfds; never with all/cgroup), then drain what is left. Returns enum
 * capture_end (> 0) or a negative errno.
 */
int capture__run(struct capture *c, const struct capture_run_opts *ro);

/*
 * Detach every program (capture__run does it before its final drain), so
 * no record is produced after the next drain and the counters stop: after
 * detach + drain, samples_seen == events_cpu + lost_ringbuf + lost_busy,
 * futex_waits_seen == events_futex + futex_short + lost_ringbuf +
 * lost_busy, and offcpu_seen == events_offcpu + offcpu_short +
 * lost_ringbuf + lost_busy (for one source at a time). Idempotent.
 */
void capture__detach(struct capture *c);

/* Counters so far (reads the BPF per-CPU array). 0 or -errno. */
int capture__stats(struct capture *c, struct capture_stats *st);

/* Sum of the lost_* counters in st. */
uint64_t capture_stats__lost(const struct capture_stats *st);

/* --stats lines "name: value" for every counter. */
void capture_stats__print(const struct capture_stats *st, FILE *f);

/*
 * Kernel stack of a record (e->kstack_id >= 0, kernel_stacks set):
 * fills up to max instruction pointers, innermost first. Returns the
 * number written or -errno (-ENOENT: id unknown or evicted).
 */
int capture__kstack(struct capture *c, int32_t id, uint64_t *ips, size_t max);

/*
 * Missing privileges for capture, as text ("CAP_BPF and CAP_PERFMON"), or
 * NULL if the process has them (root or both capabilities).
 */
const char *capture__missing_privileges(void);

#endif
