/* SPDX-License-Identifier: MIT */
/* Internals of the address-space model shared by src/model/proc.c (lookups,
 * /proc reads, captures) and src/model/proc_live.c (changes in order). */
#ifndef SFPROF_PROC_INT_H
#define SFPROF_PROC_INT_H

#include <stdint.h>

#include "model/proc.h"

#define PROC_BUCKETS 4096
#define STR_BUCKETS 4096
#define VDSO_MAX (1u << 20) /* the vdso is a few pages */
/* The most mapping slots all address spaces may hold together (152
 * bytes each on x86-64: ~300 MiB). Forks share their parent's array until one
 * of them changes, so only a capture that makes each of many processes
 * change a big address space comes near it (sfprof.1, "LIMITS"). */
#define PROC_MAP_SLOTS_MAX (2u << 20)

enum map_state {
	MAP_UNRESOLVED = 0, /* offline: binary not opened yet */
	MAP_OK,		    /* dso set */
	MAP_NO_DSO,	    /* anonymous, unreadable, refused */
};

struct proc_map {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;
	uint8_t prot;
	uint8_t state; /* enum map_state */
	uint8_t is_vdso;
	uint8_t deleted;
	const char *path; /* interned */
	const char *name; /* basename of path, or "[anon]" */
	struct dso *dso;
	int64_t bias;
	uint32_t build_id_len; /* offline: recorded build-id */
	uint8_t build_id[ELFREAD_BUILD_ID_MAX];
};

struct maps_share {
	size_t refs;   /* procs holding the array */
	uint64_t walk; /* the last proc_cache__walk that saw it */
};

struct proc {
	uint32_t pid;
	struct proc_map *maps; /* sorted by start, non-overlapping */
	size_t nr, cap;
	/* maps is shared with forks (copy on write): the number of procs
	 * holding it; NULL while this proc's own */
	struct maps_share *shared;
	size_t last;	       /* index of the last hit, for locality */
	uint64_t generation;
	uint64_t birth; /* its first generation: which proc this is, for good */
	uint64_t last_read_ns;
	int exited;	       /* no more re-reads */
	int invalid;	       /* next miss re-reads regardless of rate */
	int stale;	       /* exec: re-read before the next lookup */
	int offline;
	/* ordered mode: the maps were read from /proc once (or the process
	 * began under sfprof's eyes and has no need to); 0: not yet */
	int known;
	uint64_t exit_ts;      /* ordered: when its last thread exited (0: alive) */
	struct proc_cache *pc;
	struct proc *next;
};

struct str_node {
	struct str_node *next;
	char s[];
};

struct problem {
	const char *path;
	const char *what;
	char *detail;
	struct problem *next;
};

struct proc_cache {
	struct proc_cache_opts opts;
	/* the last generation given out: a proc's generation is unique
	 * among all procs' maps, past and present */
	uint64_t generations;
	struct dso_cache *dsos;
	struct proc *procs[PROC_BUCKETS];
	struct str_node *strs[STR_BUCKETS];
	size_t nr_strs; /* interned strings: mapping paths, options */
	struct problem *problems;
	struct dso *self_vdso; /* offline: this process's vdso */
	int self_vdso_tried;
	/* ordered mode (proc_cache__set_ordered): changes come as they
	 * happen; /proc is read once per pre-existing process, and re-read
	 * on a miss only after changes were lost */
	int ordered;
	int changes_lost;
	size_t exiting; /* procs with an exit_ts, not yet reaped */
	/* at most the earliest exit_ts of those (0: not known): a reap with
	 * none due passes over no bucket (proc_cache__reap, every drain) */
	uint64_t exiting_min;
	proc_observer_fn observer;
	void *observer_ctx;
	uint64_t walks;	  /* proc__walk_first's walk counter */
	size_t map_slots; /* struct proc_map slots allocated, shared ones once */
	struct proc_stats st;
};

const char *proc__intern(struct proc_cache *pc, const char *s);
struct proc *proc_cache__create(struct proc_cache *pc, uint32_t pid);
void proc__free(struct proc *p);
/* Make p's mappings its own with room for cap (a shared array copied):
 * 0, -ENOMEM, or -E2BIG past PROC_MAP_SLOTS_MAX (counted). */
int proc__own_maps(struct proc *p, size_t cap);
/* Let go of p's mappings (freed when no fork shares them). */
void proc__drop_maps(struct proc *p);
/* Share parent's mappings with child (which has none). */
void proc__share_maps(struct proc *parent, struct proc *child);
/* Start a walk over all procs' mappings; proc__walk_first is 1 for a
 * proc whose array no other proc seen in this walk shares. */
static inline uint64_t proc_cache__walk(struct proc_cache *pc)
{
	return ++pc->walks;
}
static inline int proc__walk_first(struct proc *p, uint64_t walk)
{
	if (!p->shared)
		return 1;
	if (p->shared->walk == walk)
		return 0;
	p->shared->walk = walk;
	return 1;
}
/* Count n slots against the bound: 0 or -E2BIG (counted). */
int proc_cache__charge_slots(struct proc_cache *pc, size_t n);
void proc_map__set_name(struct proc_map *m);
void proc_map__set_dso(struct proc_map *m, struct dso *d);
struct dso *proc__read_vdso(struct proc_cache *pc, uint32_t pid, uint64_t start, uint64_t end);
struct dso *proc__open_mapped_file(struct proc_cache *pc, uint32_t pid,
				   const struct proc_map *m);
/* Read /proc/PID/maps into p (the previous mappings replaced). 0 or -errno. */
int proc__read_maps(struct proc *p);
/* m from a recording or the side-band (state and dso left unset). 0 or -errno. */
int proc_map__from_rec(struct proc_cache *pc, const struct proc_mapping_rec *rec,
		       struct proc_map *m);
/* Insert m, dropping the mappings it overlaps; bumps the generation. */
int proc__insert_map(struct proc *p, const struct proc_map *m);
/* Tell the observer, if there is one. */
void proc__notify(struct proc_cache *pc, uint32_t what, uint32_t pid, uint32_t ppid,
		  uint64_t ts, const struct proc_mapping_rec *m);
/* A mapping as a capture records it (build-id from the dso or the record). */
void proc_map__to_rec(const struct proc_map *m, struct proc_mapping_rec *r);

#endif
