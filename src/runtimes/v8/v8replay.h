/* SPDX-License-Identifier: MIT */
/*
 * V8 through a capture (v8record.h). Record: once per capture what report
 * needs to name an interpreted frame, written when live mode named one
 * (the interpreter's layout once per process; per JSFunction its
 * BytecodeArray and name, written again when they change: newest wins).
 * Report: a process's records (a pid reused within one capture keeps one
 * store, the newer node's records replacing where they meet) and an
 * interpreted frame named from them and the event's own stack snapshot,
 * never from a process of that pid.
 */
#ifndef SFPROF_V8REPLAY_H
#define SFPROF_V8REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/v8/v8reader.h"
#include "runtimes/v8/v8record.h"

struct runtime_frame;
struct runtime_proc;

/* Record's state per node process: what it last wrote per JSFunction
 * (the hash of its BytecodeArray, length and name; 0: an empty slot). */
struct v8_rec_state {
	struct v8_last_ent {
		uint64_t key, hash;
	} *e;
	size_t nr, size;
	bool layout_written;
};

/* (p->write: record) JSFunction fn (tagged) ran BytecodeArray bytecode
 * (tagged) of `length` bytes, named `name`: its records written unless
 * the same were already. 0, or the writer's error, -ENOMEM, -EINVAL. */
int v8_rec__func(struct v8_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		 const struct v8_layout *l, uint64_t fn, uint64_t bytecode, uint32_t length,
		 const char *name);
void v8_rec__free(struct v8_rec_state *rs);

struct v8_off_func {
	uint64_t fn; /* (the key; 0: an empty slot) */
	uint64_t bytecode;
	uint32_t length;
	char *name;
};

struct v8_off_proc {
	uint32_t pid;
	bool have_layout;
	struct v8rec layout; /* (its kind LAYOUT) */
	struct v8_off_func *f; /* open addressing by fn */
	size_t nr, size;
};

struct v8_offline {
	struct v8_off_proc **procs;
	size_t nr, cap;
};

/* Report: a V8 record's bytes of process pid: 0, -EINVAL, -ENOTSUP,
 * -ENOMEM. */
int v8_off__record(struct v8_offline *o, uint32_t pid, const uint8_t *data, size_t len);
/* Process pid's records, NULL when none. */
const struct v8_off_proc *v8_off__proc(const struct v8_offline *o, uint32_t pid);
/* JSFunction fn's record, NULL when none. */
const struct v8_off_func *v8_off__func(const struct v8_off_proc *p, uint64_t fn);
/* The interpreted frame f, its frame pointer fp, named from the records
 * and f's stack snapshot (its slots there: one outside it is not known):
 * 0 with its name in buf, -ESRCH (no records of pid), -ENOENT (no layout;
 * the slots are not a FUNC's: another function, another array, the
 * offset out of it, no object in the context slot), -ENAMETOOLONG. */
int v8_off__interp_name(const struct v8_offline *o, uint32_t pid, const struct runtime_frame *f,
			uint64_t fp, char *buf, size_t size);
void v8_off__free(struct v8_offline *o);

#endif
