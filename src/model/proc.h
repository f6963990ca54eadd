/* SPDX-License-Identifier: MIT */
/*
 * Process address spaces: mappings -> dso (dso.h) + load bias, for the
 * unwinder (proc__find_row) and the symbolizer (proc__symbolize).
 *
 * Live: a proc reads /proc/PID/maps at first use (proc_cache__get). Each
 * executable file mapping is opened right away through
 * /proc/PID/map_files/START-END (works for deleted files and other mount
 * namespaces), else /proc/PID/root/PATH, else PATH, and identified, so a
 * short-lived process is caught while it lives. The [vdso] is read from
 * the target's memory (process_vm_readv, else /proc/PID/mem) and used as
 * an in-memory ELF. When a PC falls in no known mapping, maps are re-read
 * (at most once per `reread_interval_ms` per process, unless
 * proc__invalidate() was called): that covers dlopen, dlclose and exec.
 * When the process is gone the last maps stay, so queued events of an
 * exited process still unwind; proc_cache__remove() drops them.
 *
 * Offline (capture files): proc_cache__add_mapping() rebuilds a process
 * from recorded mappings, with no /proc access. Binaries are found by
 * path (under opts.sysroot when set); one whose build-id differs from the
 * recorded one is refused for that mapping: counted, listed once by
 * proc_cache__for_each_problem() (the caller prints it), never silently
 * used. The
 * [vdso] of a capture is matched by build-id against this process's own.
 *
 * Ownership: the cache owns every proc, dso and string. A struct proc *
 * lives until proc_cache__remove(pid) or proc_cache__free(). Strings in
 * a struct sym_result (and in snapshot records) live until
 * proc_cache__free(), or proc_cache__evict_unused() for the binaries and
 * paths no process maps any more; never earlier.
 * Single-threaded: one thread uses a cache at a time.
 */
#ifndef SFPROF_PROC_H
#define SFPROF_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/dso.h"
#include "unwind/sframe.h"

struct proc;
struct proc_cache;

struct proc_cache_opts {
	const char *debug_root;	     /* separate debug files; NULL = "/" */
	int no_demangle;	     /* --no-demangle */
	int full_names;		     /* --full-names */
	int offline;		     /* never touch /proc (report) */
	const char *sysroot;	     /* offline: prefix for recorded paths */
	uint32_t reread_interval_ms; /* min gap between re-reads; 0 = 50 */
	int sframe_version;	     /* of derived tables; 0 = 3 */
	int no_derive;		     /* no tables from .eh_frame */
	int lean_dwarf;		     /* dso_cache_opts.lean_dwarf */
	int quiet;		     /* kept for callers; the cache never prints */
	const char *buildid_dir;     /* offline: the build-id cache to try when
				      * a recorded path is missing or holds
				      * another build-id (buildid_cache.h);
				      * NULL = none */
};

struct proc_cache *proc_cache__new(const struct proc_cache_opts *opts);
void proc_cache__free(struct proc_cache *pc); /* NULL is a no-op */

/*
 * The proc for pid (the process id, i.e. the tgid that all its threads
 * share; pass no thread ids): existing, or created (live: its maps read
 * now; a process whose maps cannot be read still gets a proc with no
 * mappings, whose lookups return -ENOENT). NULL + errno only on ENOMEM.
 */
struct proc *proc_cache__get(struct proc_cache *pc, uint32_t pid);
/* The proc for pid if it exists; never creates or reads. */
struct proc *proc_cache__lookup(struct proc_cache *pc, uint32_t pid);
/* Forget pid (its proc pointer dies). 0 or -ENOENT. */
int proc_cache__remove(struct proc_cache *pc, uint32_t pid);

/* Event hints from capture (optional): exec replaced the address space
 * (re-read at next use, no rate limit); the process exited (never re-read
 * again: keep the last maps). */
void proc_cache__note_exec(struct proc_cache *pc, uint32_t pid);
void proc_cache__note_exit(struct proc_cache *pc, uint32_t pid);
/* An mmap was seen: the next miss re-reads regardless of the rate limit. */
void proc__invalidate(struct proc *p);

uint32_t proc__pid(const struct proc *p);
/* Changes every time the mapping list changes (capture writers compare),
 * to a value no other proc of the cache has had: it names one version of
 * one address space (caches key on it). Never 0. */
uint64_t proc__generation(const struct proc *p);
/* Unique per proc for the cache's life, unchanged by map changes (its
 * first generation): tells a live proc from a freed one at the same
 * address. */
uint64_t proc__birth(const struct proc *p);

/*
 * The SFrame row for runtime address pc (the caller passes pc - 1 for
 * return addresses). 0 with *row, *fn (start in ELF vaddr space) and
 * *fn_runtime_start = fn->start + bias; -ENOENT: pc is in no executable
 * mapping (after a re-read); -ESRCH: mapped, but no table or no row.
 * fn and fn_runtime_start may be NULL.
 */
int proc__find_row(struct proc *p, uint64_t pc, struct sframe_row *row,
		   struct sframe_func *fn, uint64_t *fn_runtime_start);

/* dso__reg_rule() at runtime address pc: 0, -ENOENT, -errno. */
int proc__reg_rule(struct proc *p, uint64_t pc, unsigned reg, struct cfi_reg_rule *out);

/*
 * Calls cb for each mapping of p whose binary is open (live, and offline
 * once looked up), in address order, with its dso; a nonzero return from
 * cb stops and is returned. Never re-reads the maps. Returns 0 or cb's.
 */
typedef int (*proc_dso_fn)(void *ctx, struct dso *d);
int proc__for_each_dso(struct proc *p, proc_dso_fn cb, void *ctx);

/* proc__symbolize() result. Strings live until proc_cache__free(). */
struct sym_result {
	const char *name;     /* function (demangled unless off); NULL: none */
	const char *sys_name; /* as the binary spells it, where not name (C++:
				 mangled); NULL: name's */
	uint64_t offset;      /* pc - function start, when name != NULL */
	const char *dso_path; /* mapped path, "[vdso]", "[anon]"; NULL: no mapping */
	const char *dso_name; /* basename of dso_path */
	const char *build_id; /* lowercase hex, "" when unknown */
	uint64_t rel_addr;    /* ELF vaddr of pc (addr2line -e dso_path);
				 file offset when the ELF is unreadable */
	uint64_t file_offset; /* pc - start + mapping offset */
	int has_elf;	      /* rel_addr is an ELF vaddr */
	int is_exec;	      /* the binary is a program, not a library
				 (elfread__is_executable) */
	/* the mapping holding pc, as in /proc/PID/maps (pprof's Mapping) */
	uint64_t map_start, map_end, map_offset;
};

/*
 * Fills *out (always: zeroed first). 0 when pc is in a mapping (name may
 * still be NULL: then print "dso_name+0xREL_ADDR"), -ENOENT when not.
 */
int proc__symbolize(struct proc *p, uint64_t pc, struct sym_result *out);

/*
 * Inline levels and source lines at runtime address pc (dso__srcline()):
 * 0 with levels[0..*n) innermost first (they live until
 * proc_cache__free()); -ENOENT: no mapping, no binary or no DWARF.
 */
struct srcline_level;
int proc__srcline(struct proc *p, uint64_t pc,
		  const struct srcline_level **levels, size_t *n);

/*
 * Copy len bytes at runtime address pc from the mapped binary's bytes
 * (the file as opened, or the vdso image), e.g. to recognise a signal
 * trampoline by its code. Works for deleted files, other mount
 * namespaces, exited processes and offline procs. 0; -ENOENT: no mapping;
 * -ESRCH: no usable binary, or the range is not all in the file.
 */
int proc__read_code(struct proc *p, uint64_t pc, void *buf, size_t len);

/*
 * Mapping records, as a capture file stores them. Both directions:
 * proc__snapshot_maps() fills them from a proc; proc_cache__add_mapping()
 * rebuilds a proc from them.
 */
struct proc_mapping_rec {
	uint64_t start, end, offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t prot;		/* PROCMAPS_PROT_* */
	uint32_t build_id_len;	/* 0: none known */
	uint8_t build_id[ELFREAD_BUILD_ID_MAX];
	const char *path;	/* "[vdso]" for the vdso */
};

/*
 * The executable mappings of p (file-backed and [vdso]; build-ids filled
 * in). *out is a malloc()ed array the caller frees (path strings belong to
 * the cache). Returns 0 and *nr, or -errno.
 */
int proc__snapshot_maps(struct proc *p, struct proc_mapping_rec **out,
			size_t *nr);

/*
 * Offline: add one recorded mapping to pid's proc (created if needed,
 * never reading /proc). The binary is opened lazily by path; a build-id
 * mismatch refuses it (proc__symbolize still reports the path and file
 * offset; proc__find_row returns -ESRCH). Mappings may come in any order;
 * one overlapping an existing mapping replaces it. 0 or -errno.
 */
int proc_cache__add_mapping(struct proc_cache *pc, uint32_t pid,
			    const struct proc_mapping_rec *rec);

/* Binaries refused (offline build-id mismatch) or unreadable, one call
 * per path: what = "build-id mismatch" | "cannot open" | "not ELF". */
typedef void (*proc_problem_fn)(void *ctx, const char *path, const char *what,
				const char *detail);
void proc_cache__for_each_problem(const struct proc_cache *pc,
				  proc_problem_fn cb, void *ctx);

struct proc_stats {
	uint64_t procs;		/* procs created */
	uint64_t maps_reads;	/* /proc/PID/maps reads, first ones included */
	uint64_t maps_rereads;	/* re-reads after a miss or exec */
	uint64_t rereads_limited; /* misses that could not re-read (rate) */
	uint64_t map_misses;	/* lookups in no mapping (after re-read) */
	uint64_t open_map_files, open_root, open_path, open_failed;
	uint64_t open_replaced;	   /* the path held another inode than the mapped one */
	uint64_t vdso_reads;
	uint64_t maps_from_thread; /* leader's maps empty: a live thread's used */
	/* changes in order (live side-band, or a capture's records) */
	uint64_t changes_forks, changes_resets, changes_mappings, changes_exits;
	uint64_t changes_lost;	   /* side-band records the kernel dropped */
	uint64_t procs_reaped;	   /* exited processes freed */
	uint64_t maps_shared;	   /* forks that share their parent's mappings */
	uint64_t maps_unshared;	   /* shared mappings copied for a change */
	uint64_t maps_over_bound;  /* changes refused: PROC_MAP_SLOTS_MAX */
	uint64_t mappings_unopened; /* live: mapped file not found while it lived */
	uint64_t buildid_mismatch; /* offline: binaries refused */
	uint64_t open_buildid_cache; /* offline: found in the build-id cache */
	uint64_t sym_lookups, sym_hits, sym_misses;
	uint64_t row_lookups, row_hits, row_misses;
	struct dso_stats dso;
};
void proc_cache__stats(const struct proc_cache *pc, struct proc_stats *out);
/* The most mapping slots all processes of a model hold together; a
 * change past it fails with -E2BIG (forks share their parent's). */
unsigned proc_cache__map_slots_max(void);
/* "name: value" lines. */
void proc_stats__print(const struct proc_stats *st, FILE *f);

struct dso_cache *proc_cache__dsos(struct proc_cache *pc);

/*
 * ---- Changes in order ----
 *
 * Live, the capture's side-band and lifecycle records (sideband.h, the
 * FORK/EXIT events) tell every change to an address space in timestamp
 * order with the samples; offline, a capture's records replay the same
 * changes. In ordered mode a sample is resolved against the mappings
 * live at its timestamp: /proc/PID/maps is read only for a process that
 * existed before the run (at its first use), and not re-read on a miss
 * unless changes were lost (proc_cache__changes_lost).
 */
void proc_cache__set_ordered(struct proc_cache *pc, int on);
/* The side-band lost records: from now on a miss may re-read /proc. */
void proc_cache__changes_lost(struct proc_cache *pc, uint64_t n);

/* What proc_cache__set_observer reports; also the capture's TASK kinds. */
enum proc_change_kind {
	PROC_CHANGE_RESET = 1,	 /* pid's mappings are gone (exec, or a re-read follows) */
	PROC_CHANGE_MAPPING = 2, /* pid mapped m */
	PROC_CHANGE_FORK = 3,	 /* pid is a new process, a copy of ppid */
	PROC_CHANGE_EXIT = 4,	 /* pid's last thread exited */
};
/* Called for every change applied to a model, in order, including the
 * mappings a /proc read found (as RESET then MAPPINGs). m and its path
 * live during the call. */
typedef void (*proc_observer_fn)(void *ctx, uint32_t what, uint32_t pid, uint32_t ppid,
				 uint64_t ts_ns, const struct proc_mapping_rec *m);
void proc_cache__set_observer(struct proc_cache *pc, proc_observer_fn fn, void *ctx);

/*
 * pid is a new process created by ppid at ts: its mappings are a copy of
 * ppid's (read first if ppid existed before and was never read). An old
 * proc of the same pid (a reused PID) is dropped. 0 or -ENOMEM.
 */
int proc_cache__fork(struct proc_cache *pc, uint32_t ppid, uint32_t pid, uint64_t ts);
/* pid execs (or, from a capture, a full set of mappings follows): no
 * mappings are left. A pid not known is created when `create`. */
int proc_cache__reset(struct proc_cache *pc, uint32_t pid, uint64_t ts, int create);
/*
 * Live: pid mapped rec at ts (from the side-band: path as the target
 * sees it, build-id when the kernel read it). The binary is opened now,
 * while it exists: a dso already cached under the build-id, else
 * /proc/PID/map_files, /proc/PID/root/PATH, PATH, each accepted only
 * when its build-id matches. A pid not known is read from /proc first
 * when `create`, else the record is ignored (not a target). 0 or -errno.
 */
int proc_cache__map(struct proc_cache *pc, uint32_t pid, uint64_t ts,
		    const struct proc_mapping_rec *rec, int create);
/* pid's last thread exited at ts; its proc stays for the events in
 * flight until proc_cache__reap(). */
void proc_cache__exit(struct proc_cache *pc, uint32_t pid, uint64_t ts);
/* Free the procs that exited at or before `before` (ns). Returns how many. */
size_t proc_cache__reap(struct proc_cache *pc, uint64_t before);
/* Procs in the cache (live and exited, not reaped). */
size_t proc_cache__count(const struct proc_cache *pc);
/*
 * Free the binaries that no proc maps any more (dlclose()d libraries,
 * those of reaped processes), and the interned paths no mapping holds: a
 * long run (--interval) keeps only what is mapped. The freed dsos' and
 * paths' strings die with them, so call this only when no sym_result or
 * lockname object of this cache is alive and every stacks object of it
 * has forgotten them (stacks__forget_binaries), e.g. between two
 * profiles. Returns how many binaries were freed.
 */
size_t proc_cache__evict_unused(struct proc_cache *pc);
/* Interned strings held now (mapping paths, options): what
 * proc_cache__evict_unused() bounds. */
size_t proc_cache__nr_paths(const struct proc_cache *pc);

#endif
