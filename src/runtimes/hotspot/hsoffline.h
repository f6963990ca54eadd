/* SPDX-License-Identifier: MIT */
/*
 * HotSpot offline (report): what a capture's HotSpot records
 * (hsrecord.h) gave, per process, for hsruntime.c to step and name the
 * frames of a JVM that is gone: its interpreter frame layout, its code
 * blobs by address (a newer blob replaces every older one it overlaps),
 * compiled callers' frames by pc and Methods by address (a newer record
 * replaces the older one). A pid a capture sees reused by another JVM
 * keeps one store: the new JVM's records replace the old one's where
 * they meet (its blobs overlap, its pcs and Method*s are the same), as
 * the capture's JIT entries do. And record's dedupe: what it last wrote
 * for each key.
 */
#ifndef SFPROF_HSOFFLINE_H
#define SFPROF_HSOFFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/hotspot/hsrecord.h"

struct hs_off_code {
	uint64_t start, end, frame_complete;
	uint32_t frame_size, kind;
};

struct hs_off_frame {
	uint64_t pc; /* (the key) */
	uint32_t line;
	char *name, *file, *inl; /* NUL-terminated, file and inl may be "" */
};

struct hs_off_method {
	uint64_t method; /* (the key) */
	uint64_t code;
	uint32_t code_size;
	char *name, *file;
	uint8_t *lnt;
	size_t lnt_len;
};

/* A map of entries whose first member is their uint64_t key. */
struct hs_map {
	void **slot;
	size_t nr, size;
};

struct hs_off_proc {
	uint32_t pid;
	bool have_jvm, has_interp;
	int32_t fp_method, fp_bcp;
	struct hs_off_code *codes; /* sorted by start, none overlapping */
	size_t nr_codes, cap_codes;
	struct hs_map frames, methods;
};

struct hs_offline {
	struct hs_off_proc **procs;
	size_t nr, cap;
};

/* Record r of process pid: 0, or -ENOMEM. */
int hs_offline__add(struct hs_offline *o, uint32_t pid, const struct hsrec *r);
struct hs_off_proc *hs_offline__proc(const struct hs_offline *o, uint32_t pid);
const struct hs_off_code *hs_offline__code(const struct hs_off_proc *p, uint64_t pc);
const struct hs_off_frame *hs_offline__frame(const struct hs_off_proc *p, uint64_t pc);
const struct hs_off_method *hs_offline__method(const struct hs_off_proc *p, uint64_t method);
void hs_offline__free(struct hs_offline *o);

/* The hash of what was last written for each key (a code blob's start,
 * a frame's pc, a Method*, with its kind in the top bits). */
struct hs_last {
	struct hs_last_ent {
		uint64_t key, hash; /* hash 0: an empty slot */
	} *e;
	size_t nr, size;
};
/* key's last hash, 0 when none. */
uint64_t hs_last__get(const struct hs_last *s, uint64_t key);
/* key's hash is now h: 1 (it was another, or none), 0 (it was h), or
 * -ENOMEM. */
int hs_last__put(struct hs_last *s, uint64_t key, uint64_t h);
void hs_last__free(struct hs_last *s);

#endif
