/* SPDX-License-Identifier: MIT */
/*
 * Events -> stacks -> profile: the glue between capture (or a capture
 * file), the unwinder, the address-space model and the profile.
 *
 * For each event: the process's proc (proc.h), unwind_stack() over the
 * event's registers and stack snapshot with proc__find_row() as the row
 * lookup, proc__symbolize() for every frame, then profile__add() with the
 * frames root first under a root frame (comm, "comm-pid/tid" with
 * per_thread, "lock:SYM" with by_lock). A frame with no symbol is named
 * after the function holding it as the unwind tables know it (its FDE):
 * "binary+0xSTART", START the function's ELF vaddr, one frame per
 * function; without a table it keeps its dso and address (the profile
 * prints "binary+0xOFFSET"). A stack that
 * stopped before the thread's entry frame (a row saying RA is undefined,
 * an entry symbol such as _start or start_thread, or a return address
 * just past a binary's ELF entry point) gets the marker frame
 * "[truncated]" right under the root, so it stays visible. Kernel frames
 * (--kernel) go on top of the user frames, kind PROFILE_FRAME_KERNEL.
 *
 * With perf_maps (live profiles: the process must be the one the map is
 * for), a PC in anonymous memory is named from the process's JIT map,
 * /proc/PID/root/tmp/perf-PID.map (perfmap.h), re-read as it grows.
 *
 * Unless no_inline, each frame gets its source file and line from DWARF
 * (proc__srcline), and the functions inlined at its PC become frames of
 * their own above it (as perf script shows them), each with its line.
 * Off-CPU blocks with a WAKER record (--wakers) are joined to it in bcc
 * offwaketime's layout: the blocked stack root to leaf, a "--" marker,
 * the waker's stack leaf to root (kernel frames, then user frames), then
 * the waker as "comm-pid/tid", or "[interrupt]" when an interrupt woke
 * the thread.
 *
 * PROFILE_WALL takes cpu samples (weight period_ns) and off-CPU blocks,
 * each stack under a first frame "[running]" or the block's state
 * ("[sleep]", "[uninterruptible]", "[preempted]", "[stopped]").
 *
 * Symbol and row results are cached per (process, PC); the cache is
 * dropped for a process whose mapping list changed.
 *
 * Ownership: a stacks object borrows the proc cache and the profile; both
 * must outlive it. Single-threaded.
 */
#ifndef SFPROF_STACKS_H
#define SFPROF_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/proc.h"
#include "profile/profile.h"
#include "runtimes/python/pymerge.h"
#include "sfprof_event.h"
#include "unwind/unwind.h"

#define STACKS_MAX_DEPTH 1024u
/* distinct raw stacks held before they are handed to the profile */
#define STACKS_AGG_MAX 65536u
#define STACKS_TRUNCATED "[truncated]"
/* A frame in anonymous executable code that no JIT map names (one name
 * for all of it: per address it would make a frame per instruction). */
#define STACKS_ANON_CODE "[jit]"
/* The user part of a sample taken in the kernel after the user stack was
 * gone (exit_group, execve): the kernel frames follow. */
#define STACKS_NO_USER_STACK "[no user stack]"

struct stacks_opts {
	uint32_t kind;	    /* PROFILE_CPU, PROFILE_FUTEX or PROFILE_OFFCPU:
			       events of other kinds are skipped (counted) */
	unsigned max_depth; /* 0 = STACKS_MAX_DEPTH */
	int per_thread;	    /* root "comm-pid/tid" */
	int per_process;    /* root "comm-pid" */
	int by_lock;	    /* futex: root "lock:SYM" */
	int kernel;	    /* add kernel frames given to stacks__add_event */
	int no_profile;	    /* benchmarks: unwind + symbolize, skip profile__add */
	unsigned agg_max;   /* 0 = STACKS_AGG_MAX (tests set a small one) */
	int no_inline;	    /* --no-inline: no inline frames, no source lines */
	int perf_maps;	    /* live: name [anon] code from /tmp/perf-PID.map */
	/* live: the runtimes (bit i: runtime__get(i)) the run turned off
	 * (runtime.h enabled(): --no-jvm, --no-v8): none of their
	 * per-process hooks is asked (no VM read, no name, no row) */
	uint32_t runtimes_off;
	int jit_record;	    /* record: find JIT names for stacks__record_jit() */
	uint64_t period_ns; /* PROFILE_WALL: the weight of a cpu sample */
	int no_python;	    /* --no-python: Python sections are ignored */
};

struct stacks_stats {
	uint64_t events;	 /* handed to stacks__add_event */
	uint64_t events_skipped; /* other kind */
	uint64_t no_user_regs;	 /* events without user registers */
	uint64_t complete;	 /* stacks that reached the entry frame */
	uint64_t truncated;	 /* stacks marked [truncated] */
	uint64_t entry_by_symbol; /* completed by an entry symbol or the
				     ELF entry point of the outermost frame */
	uint64_t frames;
	uint64_t frames_unnamed; /* frames printed as binary+0xOFF */
	uint64_t cache_hits, cache_misses;
	/* row lookups the unwinder's memo answered, or passed on */
	uint64_t memo_hits, memo_misses;
	uint64_t add_errors;	 /* profile__add failures */
	uint64_t agg_flushes;	 /* raw-stack tables handed over early (STACKS_AGG_MAX) */
	/* stacks whose JIT frames were not named again at the end because
	 * their process was reaped meanwhile (they keep the names they had
	 * when first seen) */
	uint64_t agg_rename_stale;
	uint64_t wakers;	 /* WAKER records kept (offcpu --wakers) */
	uint64_t wakers_joined;	 /* blocks joined to their waker's stack */
	/* JIT names (jitmap.h): entries known, jitdumps opened, their loads,
	 * records and perf map lines skipped as bad, dumps given up as
	 * broken, and (record) the entries written to the capture */
	uint64_t jit_entries, jit_dumps, jit_dump_loads, jit_bad, jit_dumps_broken;
	uint64_t jit_dropped; /* JIT entries past the bounds (jitmap.h) */
	uint64_t jit_written;
	uint64_t pytramp_rows;	 /* rows given for CPython trampolines */
	uint64_t rt_named, rt_unnamed; /* JIT frames a runtime named from its VM, or could not */
	uint64_t rt_ns, rt_ns_max;     /* time spent naming them (and not); its longest */
	/* walks that stopped at a Go stack switch on g0: continued on the
	 * goroutine's stack (the record's Go section), or not (none), and
	 * malformed sections */
	uint64_t go_switch_continued, go_switch_stopped, go_bad_sections;
	uint64_t go_switch_parked; /* ... continued on mcall's parked goroutine */
	uint64_t go_switch_g0;	   /* ... on g0's base, mstart0 (no goroutine) */
	uint64_t go_signal_sections; /* gsignal samples with the interrupted stack */
	struct unwind_stats unwind;
	struct pymerge_stats python;
};

struct stacks;

struct stacks *stacks__new(struct proc_cache *pc, struct profile *prof,
			   const struct stacks_opts *opts);
void stacks__free(struct stacks *s); /* NULL is a no-op */
/*
 * Forget what the caches hold about binaries (symbols, source lines,
 * unwind rows, lock names, ELF entry points: pointers into the dsos and
 * the proc cache's paths), between events: after it,
 * proc_cache__evict_unused() may free what no process maps while s
 * lives on. What s aggregated already is kept (it holds profile ids).
 */
void stacks__forget_binaries(struct stacks *s);

/*
 * More labels for every sample of a process (the agent's: process name,
 * executable, cgroup, container, unit): fn fills those fields of *l for
 * pid; its strings must stay valid until the sample is added (the
 * profile copies them). Unset: pid, tid and thread only.
 */
typedef void (*stacks_label_fn)(void *ctx, uint32_t pid, struct profile_labels *l);
void stacks__set_labeler(struct stacks *s, stacks_label_fn fn, void *ctx);

/* Kernel symbol lookup for kernel frames (may be unset: "0xADDR"). */
typedef const char *(*stacks_ksym_fn)(void *ctx, uint64_t addr);
void stacks__set_ksym(struct stacks *s, stacks_ksym_fn fn, void *ctx);
/*
 * How many of a kernel stack's innermost frames (kips[0] first) are the
 * tracing machinery that ran sfprof's BPF program (bpf_prog_*,
 * bpf_trace_run*, __bpf_trace_*, __traceiter_*, trace_call_bpf,
 * perf_trace_*), known by name. The BPF side skips a fixed count of
 * them, but the kernel calls through __traceiter_* only while more than
 * one program is attached to the tracepoint: those frames are not the
 * target's, and stacks__add_event leaves them out of every event's but a
 * cpu sample's (which may be in a BPF program for real).
 */
size_t stacks__tracing_frames(stacks_ksym_fn fn, void *ctx, const uint64_t *kips, size_t nk);

/*
 * Told, for a thread other than the main one whose snapshot held bytes
 * above its frames, the SP of its entry frame (a complete walk that ended
 * at a row with the return address undefined, clone3's child): the top
 * of that thread's frames, so the capture can copy less of its stack.
 */
typedef void (*stacks_thread_top_fn)(void *ctx, uint32_t tid, uint64_t sp);
void stacks__set_thread_top(struct stacks *s, stacks_thread_top_fn fn, void *ctx);

/*
 * The namer of runtime `runtime`'s interpreter frames (its index in
 * runtimes/runtime.h's table; pymerge.h's pyname_fn): with one set (and
 * not no_python), an event's interpreter sections of that runtime
 * (runtime__section()) replace its native eval frames (the runtime's
 * is_eval(); pymerge.h says how): CPython's _PyEval_EvalFrameDefault,
 * CRuby's rb_vm_exec, PHP's execute_ex. NULL unsets; 0 or -EINVAL.
 */
int stacks__set_namer(struct stacks *s, size_t runtime, pyname_fn fn, void *ctx);

/*
 * Unwind, symbolize and add one event. kips[0..nk) is its kernel stack,
 * innermost first (nk = 0 for none). 0 or -ENOMEM. CPU samples are
 * aggregated by raw stack (PCs, process, mapping generation) and reach
 * the profile at stacks__flush() (or once STACKS_AGG_MAX distinct raw
 * stacks are held); futex waits reach it at once.
 */
int stacks__add_event(struct stacks *s, const struct sfprof_event *e,
		      const uint64_t *kips, size_t nk);

/* Hand the aggregated CPU stacks to the profile: call before writing it.
 * 0 or -ENOMEM. */
int stacks__flush(struct stacks *s);

/*
 * Unwind only (no symbols, no profile): what record does per event so
 * that every PC is resolved while the process lives (re-reading maps
 * for new mappings). Returns the proc used, or NULL.
 */
struct proc *stacks__resolve_event(struct stacks *s, const struct sfprof_event *e);

/*
 * The profile frame ids of a record's stack, outermost first: its user
 * frames (unless `user` is 0, or it has no user registers; the
 * "[truncated]" marker first when the walk stopped early), then its
 * kernel frames kips[0..nk) (innermost first in kips). *ids points into
 * s's scratch until its next call. The count, or -ENOMEM. (wakers.c)
 */
int stacks__frame_ids(struct stacks *s, const struct sfprof_event *e, const uint64_t *kips,
		      size_t nk, int user, const uint32_t **ids);

/*
 * JIT names for captures (stacks_jit.c). stacks__record_jit(), after
 * stacks__resolve_event() with jit_record: every JIT entry (jitmap.h)
 * that names a frame of that stack and was not handed over before goes
 * to fn (pid, start, size, name); for a frame first missed the JIT's
 * files are read at once; frames not named yet are kept (at most
 * STACKS_JIT_PENDING_MAX), asked again at each stack that has them, and
 * a last time by stacks__record_jit_finish(). fn's error stops and is returned, else 0.
 * stacks__set_jitmaps(): report names [anon] frames from j (offline, a
 * capture's JIT records; borrowed, it must outlive s).
 */
#define STACKS_JIT_PENDING_MAX 65536u
struct jitmaps;
typedef int (*stacks_jit_fn)(void *ctx, uint32_t pid, uint64_t start, uint64_t size,
			     const char *name);
int stacks__record_jit(struct stacks *s, stacks_jit_fn fn, void *ctx);
int stacks__record_jit_finish(struct stacks *s, stacks_jit_fn fn, void *ctx);
void stacks__set_jitmaps(struct stacks *s, struct jitmaps *j);

/*
 * The runtimes' records (runtimes/runtime.h, stacks_runtime.c): record
 * hands fn what a runtime must keep in the capture, by type (CPython's
 * perf trampolines: each process's trampoline template, its bytes, once,
 * before the first JIT entry of one of its trampolines; HotSpot's code
 * blobs, frames and Methods, before the event that needs them); report gives
 * back what a capture holds with stacks__runtime_record() (type:
 * enum runtime_record_type; -EINVAL: not a known template, -ENOENT: no
 * runtime's type). stacks__set_pytramp() is the PYTRAMP record's. 0 or
 * -ENOMEM.
 */
typedef int (*stacks_pytramp_fn)(void *ctx, unsigned type, uint32_t pid, const uint8_t *code,
				 size_t len);
int stacks__set_pytramp_writer(struct stacks *s, stacks_pytramp_fn fn, void *ctx);
int stacks__runtime_record(struct stacks *s, unsigned type, uint32_t pid, const uint8_t *data,
			   size_t len);
int stacks__set_pytramp(struct stacks *s, uint32_t pid, const uint8_t *code, size_t len);

void stacks__stats(const struct stacks *s, struct stacks_stats *out);
/* "name: value" lines (stacks_*, unwind_*). */
void stacks_stats__print(const struct stacks_stats *st, FILE *f);

/* Whether `name` is a thread entry function (_start, start_thread, ...). */
int stacks__is_entry_symbol(const char *name);

#endif
