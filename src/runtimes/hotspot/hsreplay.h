/* SPDX-License-Identifier: MIT */
/*
 * HotSpot through a capture (hsrecord.h): record writes what it resolved
 * from the live JVM, once per capture (what it last wrote for each code
 * blob, pc and Method*: a change is written again, so the newest wins);
 * report steps and names the frames of a JVM that is gone from those
 * records (hsoffline.h), as the live path does from the VM's memory. A
 * frame the records do not resolve stays the VM's generic frame
 * ([interpreter], or its JIT entry's name), never another method's.
 */
#ifndef SFPROF_HSREPLAY_H
#define SFPROF_HSREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsoffline.h"

struct runtime_frame;
struct runtime_proc;

/* Record's state per JVM. */
struct hs_rec_state {
	struct hs_last last;
	bool jvm_written;
};

/* (p->write: record) blob c; a compiled caller's frame at pc (name NULL:
 * it did not read: a name written there before is voided); Method* method
 * of an interpreted frame named `name`, read from the process by read. */
void hs_rec__code(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		  const struct hotspot_layout *l, const struct hotspot_code *c);
void hs_rec__frame(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		   const struct hotspot_layout *l, uint64_t pc, const char *name,
		   const char *file, uint32_t line, const char *inl);
void hs_rec__method(struct hs_rec_state *rs, const struct runtime_proc *p, uint32_t pid,
		    const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t method, const char *name);
void hs_rec__free(struct hs_rec_state *rs);

/* Report: the record's bytes of process pid: 0, -EINVAL, -ENOTSUP, -ENOMEM. */
int hs_off__record(struct hs_offline *o, uint32_t pid, const uint8_t *data, size_t len);
/* pc's blob (no name): 0 with *out, -ENOENT. */
int hs_off__code(const struct hs_offline *o, uint32_t pid, uint64_t pc,
		 struct hotspot_code *out);
/* A frame's name of n characters (snprintf's count) in a buffer of size:
 * -ENAMETOOLONG when it did not fit; else 0, with m's file and line handed
 * to f when it asks and they fit (live and report name frames alike). */
int hs_frame_out(const struct runtime_frame *f, const struct hotspot_method *m, int n,
		 size_t size);
/* runtime.h frame_name() from the records: 0 with the name in buf,
 * -ESRCH (no records of the process), -ENOENT (not a frame they name),
 * -ENAMETOOLONG. An interpreted frame is always named: its Method's name
 * when its slots in the stack snapshot and its record agree, else
 * "[interpreter]". */
int hs_off__frame_name(const struct hs_offline *o, uint32_t pid, const struct runtime_frame *f,
		       char *buf, size_t size);

#endif
