/* SPDX-License-Identifier: MIT */
/*
 * Names of Python frames, by (pid, code object, instruction offset):
 * what pymerge.h's namer (pyname_fn) answers. Live, a miss asks the
 * code-object reader (pyreader.h) and keeps its answer, failures too (a
 * frame that cannot be named once is not read again until its process
 * execs); offline (report), the names are only those a capture's PYFRAME
 * records gave (pynames__put). Each new name goes to an observer (record:
 * the PYFRAME record, written before the event that needs it).
 *
 * Ownership: returned strings live until pynames__forget_pid() of their
 * pid or pynames__free(). Single-threaded but for pynames__prefetch().
 */
#ifndef SFPROF_PYNAMES_H
#define SFPROF_PYNAMES_H

#include <stdint.h>

struct pyreader;
struct pynames;

typedef void (*pynames_new_fn)(void *ctx, uint32_t pid, uint64_t code, int32_t instr,
			       uint32_t line, uint32_t firstlineno, const char *qualname,
			       const char *file);

/* r: the live reader (borrowed), or NULL offline. NULL + errno. */
struct pynames *pynames__new(struct pyreader *r);
void pynames__free(struct pynames *n); /* NULL is a no-op */
void pynames__set_observer(struct pynames *n, pynames_new_fn fn, void *ctx);

/* pyname_fn: ctx is the pynames. */
int pynames__name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		  const char **file, uint32_t *line, uint32_t *firstlineno);
/* Set (or replace) a name (firstlineno: co_firstlineno, 0 = unknown).
 * 0 or -ENOMEM. */
int pynames__put(struct pynames *n, uint32_t pid, uint64_t code, int32_t instr, uint32_t line,
		 uint32_t firstlineno, const char *qualname, const char *file);
/*
 * Another thread (pysession's prefetch): have the reader read and cache
 * code object `code` of pid now, so that later names of it survive the
 * process. Takes the reader's lock; 0 or the reader's -errno.
 */
int pynames__prefetch(struct pynames *n, uint32_t pid, uint64_t code);
/* The reader's lock, for other calls into it while a prefetch thread runs. */
void pynames__lock(struct pynames *n);
void pynames__unlock(struct pynames *n);

/* pid exec'd or is reused: its names are gone. */
void pynames__forget_pid(struct pynames *n, uint32_t pid);

uint64_t pynames__count(const struct pynames *n);

#endif
