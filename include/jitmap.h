/* SPDX-License-Identifier: MIT */
/*
 * JIT maps of live processes: per process, its perf map (perfmap.h)
 * found in its mount namespace, /proc/PID/root/tmp/perf-PID.map, and
 * read as it grows: on a lookup that misses, at most every
 * JITMAP_REREAD_NS, only the bytes appended, at most JITMAP_MAX_SIZE in
 * all. A few processes at a time (a slot per pid, by pid).
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

/* The JIT's name for runtime address pc of process pid, or NULL. */
const char *jitmaps__name(struct jitmaps *j, uint32_t pid, uint64_t pc);

#endif
