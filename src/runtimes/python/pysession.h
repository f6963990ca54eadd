/* SPDX-License-Identifier: MIT */
/*
 * CPython support for one run, the glue between the pieces: which
 * processes run CPython (pyprocs.h, told to the BPF walk through the
 * capture), the code-object reader for them (pyreader.h), the names of
 * their frames (pynames.h) for the stacks pipeline's merge (pymerge.h),
 * and, for record, the PYFRAME records that carry those names into the
 * capture before the events that need them. Offline (report) only the
 * names from the capture's records.
 *
 * Ownership: borrows the capture and the capture writer (both must
 * outlive it, or be unset). Single-threaded.
 */
#ifndef SFPROF_PYSESSION_H
#define SFPROF_PYSESSION_H

#include <stdint.h>
#include <stdio.h>

#include "runtimes/python/pymerge.h"
#include "sfprof_event.h"

struct capture;
struct capfile_writer;
struct capfile_record;
struct pysession;

/* live: processes are classified and read (live and record); else
 * offline. NULL + errno. */
struct pysession *pysession__new(int live);
void pysession__free(struct pysession *ps); /* NULL is a no-op */

void pysession__set_capture(struct pysession *ps, struct capture *c);
/* record: every new frame name becomes a PYFRAME record in w */
void pysession__set_writer(struct pysession *ps, struct capfile_writer *w);

/* The namer the stacks pipeline merges with (stacks__set_namer). */
pyname_fn pysession__namer(struct pysession *ps, void **ctx);

/* Live: a process attached (-p), an event (classify its process once;
 * with a writer, name its Python frames now), and the lifecycle. */
void pysession__attach(struct pysession *ps, uint32_t pid);
void pysession__event(struct pysession *ps, const struct sfprof_event *e);
void pysession__fork(struct pysession *ps, uint32_t ppid, uint32_t pid);
/* `-- COMMAND` is about to exec file (argv[0]): when it is a CPython
 * (or a script whose "#!" names one), its image is read now, so that
 * classifying the process after its exec reads no ELF. */
void pysession__starting(struct pysession *ps, const char *file);
/*
 * `-- COMMAND` has just exec'd as pid: classify it now, as its image
 * loads (retried every 0.2 ms up to PYSESSION_START_WAIT_NS, ended early
 * once it maps libc and nothing python-named), so its Python frames are
 * walked from its interpreter's start; classifying at its first event
 * waits for the consumer's first drain (25 ms and more), by which time
 * Python has run its start-up imports and often the script's own. 1 when
 * it runs a supported CPython (its exec's sideband record is then not
 * taken for another exec), else 0.
 */
#define PYSESSION_START_WAIT_NS (30ull * 1000 * 1000)
int pysession__started(struct pysession *ps, uint32_t pid);
void pysession__exec(struct pysession *ps, uint32_t pid);
void pysession__exit(struct pysession *ps, uint32_t pid, uint64_t ts);
/* The names of processes that exited at or before `before` (ns, the
 * events' clock) are dropped; how many processes. Call it where the
 * process model reaps (proc_cache__reap), with the same bound. */
size_t pysession__reap(struct pysession *ps, uint64_t before);
size_t pysession__exited_pending(const struct pysession *ps); /* (tests) */

/* Offline: a PYFRAME record of a capture. 0 or -ENOMEM. */
int pysession__record(struct pysession *ps, const struct capfile_record *rec);

/* --stats lines (nothing when no CPython process was seen). */
void pysession__print_stats(const struct pysession *ps, FILE *f);

#endif
