/* SPDX-License-Identifier: MIT */
/*
 * JIT maps of live processes: per process, its perf map (perfmap.h)
 * found in its mount namespace, tmp/perf-PID.map resolved inside
 * /proc/PID/root (openat2 RESOLVE_IN_ROOT, where the kernel has it), and
 * read as it grows: on a lookup that misses, at most every
 * JITMAP_REREAD_NS, only the bytes appended, at most JITMAP_MAX_SIZE in
 * all. The file stays open once found, so what the JIT writes last (V8
 * buffers its map: entries reach the file late, some only at exit) is
 * still read after the process is gone. A few processes at a time (a
 * slot per pid, by pid).
 *
 * Only for processes that are live and are the pid's current owner: the
 * map of a recycled pid belongs to another process.
 *
 * Ownership: names returned live until jitmaps__free() or until the
 * slot is taken by another pid. Not thread-safe.
 */
#ifndef SFPROF_JITMAP_H
#define SFPROF_JITMAP_H

#include <stdint.h>

#define JITMAP_REREAD_NS 100000000ull /* 100 ms */
#define JITMAP_MAX_SIZE (256ull << 20)

struct jitmaps;

struct jitmaps *jitmaps__new(void); /* NULL + errno */
void jitmaps__free(struct jitmaps *j); /* NULL is a no-op */

/* The JIT's name for runtime address pc of process pid, or NULL.
 * now_or_never: read the file on a miss whenever it was last read (the
 * last chance, at the end of a profile). */
const char *jitmaps__name(struct jitmaps *j, uint32_t pid, uint64_t pc, int now_or_never);

#endif
