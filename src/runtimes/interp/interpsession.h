/* SPDX-License-Identifier: MIT */
/*
 * An interpreter's session for one live run (live and record), what
 * CRuby's and PHP's share (src/runtimes/interp/): the names of their
 * frames by (pid, code, instr), read through the interpreter's own
 * reader (interp_kind.read) the first time a frame is seen, while its
 * process lives, and kept until the process is reaped; in record, each
 * new name also a PYFRAME record (the capture's interpreter-frame names,
 * which report names the frames from), written before the event that
 * needs it; the exited processes whose names go at the next reap; the
 * --stats lines of the names; and the runtime table's per-run hooks
 * (runtime.h) over all of it, so that an interpreter is its reader, its
 * process classifier and an interp_kind:
 *
 *   static const struct interp_kind rb_kind = { .name = "ruby", ... };
 *   const struct runtime_ops ruby_runtime_ops = {
 *           .name = "ruby", .session_new = rb_new, INTERP_SESSION_HOOKS, ...
 *   };
 *
 * The kind's state is made by kind->state_new with the session, and told
 * of the processes (attach, fork, exec, exit) before the session's names
 * change. Calls into the session take its lock; a kind that has threads
 * of its own (Ruby's prefetch) takes it with interp__lock() around what
 * they touch, or names frames with interp__prefetch() (PHP's). Names are freed only by the consumer's thread (events,
 * tasks, reaps): the namer's strings stay valid until then.
 *
 * Ownership: borrows the capture and the writer.
 */
#ifndef SFPROF_INTERPSESSION_H
#define SFPROF_INTERPSESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runtimes/runtime.h"

struct capture;
struct capfile_writer;
struct sfprof_event;
struct interp_session;

/* What a kind's reader says of one frame. name and file are malloc'd;
 * the session keeps them. */
struct interp_frame {
	char *name, *file;
	uint32_t line, first;
};

struct interp_kind {
	const char *name;	    /* "ruby": its --stats lines' prefix */
	uint32_t section_flag;	    /* SFPROF_PYS_* of its interpreter sections */
	/* the kind's state for session s (NULL + errno); freed by state_free */
	void *(*state_new)(struct interp_session *s);
	void (*state_free)(void *st);
	/* every hook below is optional */
	void (*set_capture)(void *st, struct capture *c);
	void (*attach)(void *st, uint32_t pid);
	void (*fork)(void *st, uint32_t ppid, uint32_t pid);
	void (*exec)(void *st, uint32_t pid);
	void (*exit)(void *st, uint32_t pid);
	/* the session drops the names of pid (all: of every process); the
	 * kind drops its own caches of them */
	void (*drop)(void *st, uint32_t pid, int all);
	/* the names of frame (pid, code, instr): 0 with *out, or -errno (the
	 * frame stays unnamed: it is not read again) */
	int (*read)(void *st, uint32_t pid, uint64_t code, int32_t instr, struct interp_frame *out);
	/* --stats: whether any process of the kind was seen (no lines
	 * without), and its own lines, printed before the names' */
	bool (*seen)(const void *st);
	void (*print_stats)(const void *st, FILE *f);
};

struct interp_session *interp__new(const struct interp_kind *k); /* NULL + errno */

void *interp__state(const struct interp_session *s);
/* The live capture, NULL before and after it (under the lock). */
struct capture *interp__capture(const struct interp_session *s);
void interp__lock(struct interp_session *s);
void interp__unlock(struct interp_session *s);

/* From a kind's prefetch thread: read the name of (pid, code, instr) now
 * unless known, for the namer (and the capture's record, which the
 * consumer's thread writes at the frame's next event). Takes the lock. */
void interp__prefetch(struct interp_session *s, uint32_t pid, uint64_t code, int32_t instr);

/* Exactly len bytes at addr of process *(uint32_t *)ctx: 0 or -errno
 * (process_vm_readv; a short read is -EFAULT). */
int interp__read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

/* runtime_ops' session_new for kind k: live only (offline, the frames
 * are named from the capture's PYFRAME records by names_from's session). */
int interp__session_new(const struct interp_kind *k, int live, void **out);

/* The session's calls, the runtime_ops session hooks (ss: a struct
 * interp_session; every one a no-op on NULL, the run has no support for
 * the kind). */
void interp__free(void *ss);
void interp__set_capture(void *ss, struct capture *c);
void interp__set_writer(void *ss, struct capfile_writer *w);
void interp__attach(void *ss, uint32_t pid);
/* A sample event: its process attached, its section's frames named. */
void interp__event(void *ss, const struct sfprof_event *e);
void interp__fork(void *ss, uint32_t ppid, uint32_t pid);
void interp__exec(void *ss, uint32_t pid);
void interp__exit(void *ss, uint32_t pid, uint64_t ts);
/* A FORK or EXIT record: __fork or __exit. */
void interp__task(void *ss, const struct sfprof_event *e);
/* Names of processes that exited at or before `before` go. */
void interp__reap(void *ss, uint64_t before);
void interp__print_stats(const void *ss, FILE *f);
/* The namer the stacks pipeline merges the kind's sections with. */
runtime_name_fn interp__namer(void *ss, void **ctx);

#define INTERP_SESSION_HOOKS                              \
	.session_free = interp__free,                     \
	.session_set_capture = interp__set_capture,       \
	.session_set_writer = interp__set_writer,         \
	.session_attach = interp__attach,                 \
	.session_event = interp__event,                   \
	.session_task = interp__task,                     \
	.session_exec = interp__exec,                     \
	.session_reap = interp__reap,                     \
	.session_print_stats = interp__print_stats,       \
	.session_namer = interp__namer

#endif
