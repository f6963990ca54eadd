/* SPDX-License-Identifier: MIT */
/*
 * JIT names of processes, from the sources a JIT writes, all feeding one
 * lookup table per process (perfmap.h):
 *  - its perf map, tmp/perf-PID.map resolved inside /proc/PID/root (the
 *    target's mount namespace; openat2 RESOLVE_IN_ROOT where the kernel
 *    has it);
 *  - its jitdumps (jitdump.h): a JIT announces one by mmap()ing it
 *    executable, so a file named jit-N.dump among the process's mappings
 *    (proc.h: /proc/PID/maps and the side-band's MMAP2 records) is opened
 *    by that path inside /proc/PID/root, safely as the perf map is
 *    (O_NOFOLLOW, a regular file, no FIFO), at most JITMAP_DUMPS of them;
 *  - or, offline (report), the JIT records a capture carries
 *    (jitmaps__add()): then no file is ever opened.
 * Files are read as they grow: on a lookup that misses, at most every
 * JITMAP_REREAD_NS (and new files looked for), on one that hits, the open
 * files at most every JITMAP_HIT_REREAD_NS; only the bytes appended, at
 * most JITMAP_MAX_SIZE of each. An entry is valid from when its file was
 * last modified (its mtime, within the reads before and at which it
 * appeared). A file stays open once found, so what the JIT writes last (V8
 * buffers its perf map: entries reach the file late, some only at exit)
 * is still read after the process is gone. Live, a few processes at a
 * time (JITMAP_LIVE_PROCS; the oldest makes room); offline, every process
 * with records.
 *
 * Live lookups are only for processes that are live and are the pid's
 * current owner: the map of a recycled pid belongs to another process.
 *
 * Ownership: strings returned live until jitmaps__free() (live: or until
 * the process's slot is reused). Not thread-safe.
 */
#ifndef SFPROF_JITMAP_H
#define SFPROF_JITMAP_H

#include <stdint.h>

#include "model/proc.h"

#define JITMAP_REREAD_NS 100000000ull /* 100 ms */
#define JITMAP_HIT_REREAD_NS 10000000ull /* 10 ms: the open files only */
#define JITMAP_MAX_SIZE (256ull << 20)
#define JITMAP_DUMPS 4u
#define JITMAP_LIVE_PROCS 16u
/* The most memory JIT names may take (perfmap__set_limit), per process
 * and for all together; entries past either are dropped and counted
 * (--stats: stacks_jit_dropped). A 10M-entry map took 420 MB before. */
#define JITMAP_PROC_BYTES (64ull << 20)
#define JITMAP_TOTAL_BYTES (256ull << 20)

struct jitmaps;

/* A JIT name: the code [start, end) holding the address, and its
 * source line when a jitdump's debug info gives one (file NULL if not);
 * seq names the entry among the process's (perfmap.h), from 1. */
struct jitmap_hit {
	const char *name;
	uint64_t start, end;
	uint32_t seq;
	const char *file;
	uint32_t line;
	const char *inl; /* frames inlined here (perfmap__add_src()), or NULL */
};

struct jitmap_stats {
	uint64_t perfmap_entries, perfmap_bad_lines;
	uint64_t perfmap_dropped; /* past JITMAP_PROC_BYTES or JITMAP_TOTAL_BYTES */
	uint64_t dumps_opened, dump_loads, dump_moves, dump_lines, dump_bad;
	uint64_t dumps_broken; /* dumps no longer read: bad header or size */
};

struct jitmaps *jitmaps__new(void);	    /* live; NULL + errno */
struct jitmaps *jitmaps__new_offline(void); /* from a capture's records */
void jitmaps__free(struct jitmaps *j);	    /* NULL is a no-op */
/* Other bounds than JITMAP_PROC_BYTES and JITMAP_TOTAL_BYTES (tests). */
void jitmaps__set_bounds(struct jitmaps *j, uint64_t per_proc, uint64_t total);

/*
 * The JIT's name for runtime address pc of process pid: 0 with *hit, or
 * -ENOENT. p (may be NULL) is pid's address-space model, where its
 * jitdumps are found. now_or_never: read the files on a miss whenever
 * they were last read (the last chance, at the end of a profile).
 */
int jitmaps__lookup(struct jitmaps *j, struct proc *p, uint32_t pid, uint64_t pc,
		    int now_or_never, struct jitmap_hit *hit);

/*
 * The same as the map named pc at time t (perfmap__lookup_at(); t in
 * CLOCK_MONOTONIC ns, an event's time; UINT64_MAX: the newest entry).
 * Live, an entry is valid from when it was read: the files are re-read
 * at their pace on hits too, so a JIT that puts new code where old code
 * was and appends its line names the new code from then on.
 */
int jitmaps__lookup_at(struct jitmaps *j, struct proc *p, uint32_t pid, uint64_t pc,
		       uint64_t t, int now_or_never, struct jitmap_hit *hit);
/* pid's entry seq (a hit's), its line at pc: 0 with *hit, or -ENOENT. */
int jitmaps__entry(struct jitmaps *j, uint32_t pid, uint32_t seq, uint64_t pc,
		   struct jitmap_hit *hit);
/* Offline: the entries added from now on are valid from t (a capture
 * keeps the order: report gives the time of the event before them). */
void jitmaps__set_time(struct jitmaps *j, uint64_t t);

/* An entry a capture carries (offline), or, live, one a runtime read
 * from the process (runtime.h's jit_name()). 0, -EINVAL, -ENOMEM. */
int jitmaps__add(struct jitmaps *j, uint32_t pid, uint64_t start, uint64_t size,
		 const char *name);

/* The name a runtime gives the code at pc of process pid at time t
 * (runtime.h frame_name(): live, read from the VM itself; offline, from a
 * capture's runtime records), as the entry [pc, pc + 1) (the newest such
 * entry when it has the name already): 0 with *hit, -EINVAL (a bad
 * name), -ENOMEM. */
int jitmaps__add_live(struct jitmaps *j, uint32_t pid, uint64_t pc, const char *name,
		      uint64_t t, struct jitmap_hit *hit);
/* The same with the source file and line the VM gives the frame (line 0:
 * none; file NULL or its name) and the frames inlined at it (NULL or
 * perfmap__add_src()'s lines), kept with the entry (a hit's file, line,
 * inl). */
int jitmaps__add_live_src(struct jitmaps *j, uint32_t pid, uint64_t pc, const char *name,
			  const char *file, uint32_t line, const char *inl, uint64_t t,
			  struct jitmap_hit *hit);

void jitmaps__stats(const struct jitmaps *j, struct jitmap_stats *out);

#endif
