/* SPDX-License-Identifier: MIT */
/*
 * Which processes run CPython, and what the BPF walk (bpf/python.bpf.h)
 * needs to know of each: a process is classified once, at its first
 * event or when it is attached, from the binaries it maps (the
 * executable, or libpython3.X.so: pyversion.h), and again after an exec.
 * A supported one gets its struct sfprof_py_proc handed to a setter
 * (capture__set_runtime_proc: the py_procs map), so its events carry their
 * Python frames from then on; a fork's child inherits its parent's, as it
 * inherits its address space. An unsupported version is said once per
 * version on stderr and counted.
 *
 * Ownership: pyprocs__info() pointers live until the process is forgotten
 * (exec, exit) or pyprocs__free(). Single-threaded.
 */
#ifndef SFPROF_PYPROCS_H
#define SFPROF_PYPROCS_H

#include <stdint.h>
#include <stdio.h>

#include "runtimes/python/pyversion.h"
#include "sfprof_event.h"

struct pyoffsets;

/* p NULL: forget tgid. 0 or -errno. */
typedef int (*pyprocs_set_fn)(void *ctx, uint32_t tgid, const struct sfprof_py_proc *p);

struct pyprocs_stats {
	uint64_t classified;  /* processes looked at */
	uint64_t python;      /* ... running a supported CPython */
	uint64_t unsupported; /* ... running a CPython without offsets */
	uint64_t set_errors;  /* the BPF map refused an entry */
};

/* One classified CPython process. */
struct pyproc_info {
	struct pyversion_info v;
	int64_t bias;	   /* load bias of the interpreter image */
	uint64_t runtime;  /* &_PyRuntime in the process */
	struct sfprof_py_proc bpf;
};

struct pyprocs;

struct pyprocs *pyprocs__new(pyprocs_set_fn set, void *ctx); /* NULL + errno */
void pyprocs__free(struct pyprocs *pp);			      /* NULL is a no-op */

/* Classify pid unless done: the info of a supported CPython, else NULL. */
const struct pyproc_info *pyprocs__check(struct pyprocs *pp, uint32_t pid);
/* Read the interpreter image at path ahead of its processes (`-- COMMAND`
 * before its exec): their classifying then costs no ELF reading. 1 when
 * it is a supported CPython, else 0. */
int pyprocs__prepare(struct pyprocs *pp, const char *path);
/*
 * Classify pid now, whatever was known, while its image may still be
 * loading (just after its exec): 1 with *info when it runs a supported
 * CPython; 0 when not (yet): then nothing is remembered, and its next
 * event or probe classifies it again; -EPROTONOSUPPORT (an unsupported
 * CPython, remembered), -ENOMEM.
 */
int pyprocs__probe(struct pyprocs *pp, uint32_t pid, const struct pyproc_info **info);
/* The info if pid is known to run a supported CPython (no classifying). */
const struct pyproc_info *pyprocs__info(const struct pyprocs *pp, uint32_t pid);
void pyprocs__exec(struct pyprocs *pp, uint32_t pid); /* classify again */
void pyprocs__fork(struct pyprocs *pp, uint32_t ppid, uint32_t pid);
void pyprocs__exit(struct pyprocs *pp, uint32_t pid);

/*
 * The BPF walk's view of an interpreter: sfprof_py_proc for offsets o and
 * &_PyRuntime at `runtime`. -EPROTONOSUPPORT when o cannot be walked
 * (fields too far apart for one window read, a missing field).
 */
int pyprocs__bpf_config(const struct pyoffsets *o, uint64_t runtime, struct sfprof_py_proc *out);

void pyprocs__stats(const struct pyprocs *pp, struct pyprocs_stats *out);
void pyprocs_stats__print(const struct pyprocs_stats *st, FILE *f);

#endif
