/* SPDX-License-Identifier: MIT */
/*
 * CRuby support for one live run (live and record), the glue between
 * the pieces: which processes run CRuby (rbprocs.h, told to the BPF walk
 * through the capture), the iseq reader for them (rbreader.h), and the
 * names of their frames, by (pid, iseq, pc index), labelled with their
 * class (from the method entry the BPF walk found for the iseq's frame
 * when it first saw it: the one of its first sighting names it, so a
 * module_function's iseq, run as Mod.f and as Mod#f, is named as it ran
 * first), for the stacks
 * pipeline's merge (rbmerge.h; the namer has pymerge.h's pyname_fn
 * shape). In record, each frame named for the first time also becomes
 * a PYFRAME record (the capture's interpreter-frame names: code is the
 * iseq, instr the pc index), written before the event that needs it;
 * report names Ruby frames from those records as it names Python's.
 *
 * Names are read while the process lives: each iseq a process runs for
 * the first time comes through the rb_new ring (bpf/ruby.bpf.h) to a
 * thread of this session, which reads its names and line table at once
 * and keeps them; a Ruby thread's frames are also noted when it blocks.
 * What is lost: a thread that blocked before sfprof knew its process
 * for Ruby (the first events after its exec are handled a drain later)
 * is seen only when its block ends; if the process exits within
 * milliseconds of that, its frames are named PYMERGE_UNREADABLE.
 *
 * Ownership: borrows the capture and the writer. Single-threaded.
 */
#ifndef SFPROF_RBSESSION_H
#define SFPROF_RBSESSION_H

#include <stdint.h>
#include <stdio.h>

#include "pymerge.h"
#include "sfprof_event.h"

struct capture;
struct capfile_writer;
struct rbsession;

struct rbsession *rbsession__new(void); /* NULL + errno */
void rbsession__free(struct rbsession *rs); /* NULL is a no-op */

void rbsession__set_capture(struct rbsession *rs, struct capture *c);
void rbsession__set_writer(struct rbsession *rs, struct capfile_writer *w);

/* The namer the stacks pipeline merges Ruby sections with (stacks__set_namer). */
pyname_fn rbsession__namer(struct rbsession *rs, void **ctx);

void rbsession__attach(struct rbsession *rs, uint32_t pid);
void rbsession__event(struct rbsession *rs, const struct sfprof_event *e);
void rbsession__fork(struct rbsession *rs, uint32_t ppid, uint32_t pid);
void rbsession__exec(struct rbsession *rs, uint32_t pid);
void rbsession__exit(struct rbsession *rs, uint32_t pid, uint64_t ts);
/* Names of processes that exited at or before `before` go; how many. */
size_t rbsession__reap(struct rbsession *rs, uint64_t before);

/* --stats lines (nothing when no Ruby-named process was seen). */
void rbsession__print_stats(const struct rbsession *rs, FILE *f);

/* A FORK or EXIT record: __fork or __exit. Every call but __new and
 * __namer is a no-op on NULL (the run has no rb support). */
void rbsession__task(struct rbsession *s, const struct sfprof_event *e);

#endif
