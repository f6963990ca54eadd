/* SPDX-License-Identifier: MIT */
/*
 * One binary (executable, shared object, vdso), cached by identity and
 * shared by every process that maps it.
 *
 * Identity: the GNU build-id when the file has one, else the file's
 * dev:inode:size:mtime (from fstat of the opened file). Opening a file
 * whose dev:inode:size:mtime was seen before costs an fstat and a hash
 * lookup; a new file with a known build-id (the same library seen through
 * another path, container root or hard link) joins the existing dso.
 *
 * Loaded lazily, once per dso:
 *  - its SFrame table: its own .sframe section (sframe_table__new over the
 *    mapped bytes, never copied), else one derived from .eh_frame (and
 *    .debug_frame) via cfi_to_sframe() (src/unwind/cfi.h);
 *  - its symbol table (symbolize.h), with separate debug files;
 *  - its DWARF source lines and inline frames (srcline.h);
 *  - each language runtime's state for it, when it is the runtime's (a Go
 *    binary's pclntab): runtimes/runtime.h, asked on the first row lookup.
 *
 * Ownership: the cache owns every dso. Pointers returned by dso_cache__*
 * and every pointer a dso returns (path, name, build-id, table, symbol
 * names) stay valid until dso_cache__free(): a dso is never evicted while
 * the cache lives. Single-threaded.
 */
#ifndef SFPROF_DSO_H
#define SFPROF_DSO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/elfread.h"

struct dso;
struct dso_cache;
struct sframe_table;
struct sframe_row;
struct sframe_func;
struct srcline_level;

struct dso_cache_opts {
	const char *debug_root;	 /* for separate debug files; NULL = "/" */
	int no_demangle;	 /* keep C++ names mangled */
	int full_names;		 /* C++ names with their signatures */
	int no_debug_files;	 /* skip separate debug file lookup */
	int no_derive;		 /* never derive SFrame from .eh_frame */
	int sframe_version;	 /* of derived tables: 2 or 3 (0 = 3) */
	int lean_dwarf;		 /* srcline_opts.lean_dwarf */
};

/* Where a dso's table came from. */
enum dso_table_source {
	DSO_TABLE_UNKNOWN = 0,	/* not loaded yet */
	DSO_TABLE_OWN,		/* the binary's .sframe */
	DSO_TABLE_DERIVED,	/* cfi_to_sframe from .eh_frame/.debug_frame */
	DSO_TABLE_NONE,		/* neither worked (see dso__table_error) */
};

struct dso_stats {
	uint64_t opens;		 /* dso_cache__open_* calls */
	uint64_t hits_identity;	 /* found by dev:inode:size:mtime */
	uint64_t hits_build_id;	 /* new file, known build-id */
	uint64_t loads;		 /* new dsos (ELF parsed) */
	uint64_t evicted;	 /* dsos freed by dso_cache__sweep */
	uint64_t load_errors;	 /* files that are not usable ELF */
	uint64_t tables_own;
	uint64_t tables_derived;
	uint64_t tables_none;
	uint64_t tables_whole;	 /* derived tables made whole at once (no
				    usable .eh_frame_hdr, or a lookup the
				    lazy blocks cannot answer) */
	uint64_t symtabs;	 /* symbol tables built */
	uint64_t sym_hits;	 /* dso__symbolize found a symbol */
	uint64_t sym_misses;
	uint64_t row_lookups;	 /* dso__find_row calls */
	uint64_t row_misses;	 /* ... that found no row */
	uint64_t srcline_lookups;  /* dso__srcline calls */
	uint64_t srcline_resolved; /* ... resolved through libdw (not cached) */
	uint64_t srcline_found;	   /* ... with DWARF levels */
	uint64_t srcline_images;   /* DWARF opened from an inflated image */
	uint64_t srcline_images_cached; /* ... read from the DWARF cache */
	uint64_t shed;		   /* mapped dsos whose symbols, lines and
				      unwind tables were freed
				      (dso_cache__shed_oldest) */
	uint64_t shed_hot;	   /* ... of them used since the previous
				      check: the working set did not fit */
	uint64_t shed_bytes;	   /* ... and the bytes of their files'
				      tables given back (elfread__drop_tables) */
	uint64_t loaded;	   /* dsos holding symbols, lines or unwind
				      tables now */
	uint64_t dwarf_trims;	   /* DWARF images whose mapped pages were
				      given back (dso_cache__trim_dwarf) */
	uint64_t dwarf_closes;	   /* libdw handles freed, answers kept
				      (dso_cache__close_dwarf) */
	uint64_t srcline_opens;	   /* DWARF opened: first, or after a close */
};

struct dso_cache *dso_cache__new(const struct dso_cache_opts *opts);
void dso_cache__free(struct dso_cache *c); /* frees every dso */

/*
 * The dso of an open file (fd is not kept; it may be closed after).
 * `path` is how the file is known (maps path), kept for display and for
 * the debuglink search. NULL + errno (EINVAL: not ELF).
 */
struct dso *dso_cache__open_fd(struct dso_cache *c, int fd, const char *path);

/*
 * report's hook: build-id id's entry of the build-id cache under dir
 * (buildid_cache.h) as a dso of c named `path` (the recorded path, so
 * frames keep the binary's name), only when its build-id is id. NULL
 * when dir is NULL, id is empty, or there is no such entry.
 */
struct dso *dso_cache__open_buildid(struct dso_cache *c, const char *dir,
				    const uint8_t *id, size_t len, const char *path);
/* path names untrusted bytes (a capture): opened only when it is a regular
 * file and not a symlink (util__open_regular), so a FIFO cannot hang it
 * and a device is never opened. errno UTIL_E_NOT_REGULAR, ELOOP... */
struct dso *dso_cache__open_path(struct dso_cache *c, const char *path);
/* An in-memory image (e.g. the [vdso] read from a process); copied. */
struct dso *dso_cache__open_mem(struct dso_cache *c, const void *image,
				size_t len, const char *name);

/* The dso already loaded with this build-id, or NULL (opens nothing). */
struct dso *dso_cache__find_build_id(struct dso_cache *c, const uint8_t *id, size_t len);

void dso_cache__stats(const struct dso_cache *c, struct dso_stats *out);

/*
 * Free every dso not in keep[0..nkeep) (sorted by address): a long run
 * must not keep every binary it ever saw. The freed dsos' pointers and
 * strings die; the caller makes sure nothing holds them. Returns how many
 * were freed.
 */
size_t dso_cache__sweep(struct dso_cache *c, const struct dso *const *keep, size_t nkeep);

/*
 * Free what the least recently used dso made from its binary (symbol
 * table, DWARF lines, unwind tables: most of its heap) while it stays
 * mapped and cached: its next lookup makes them again. A whole-machine
 * run touches more binaries than its heap budget holds; this is the
 * eviction. As with sweep, pointers and strings into what was freed die
 * (the caller makes the stacks pipelines forget first). Only a dso last
 * used before use clock `before` (dso_cache__use_clock) is a candidate,
 * so what the latest events use stays; one last used at or after clock
 * `hot` (the caller's working set, freed only when even it does not fit)
 * is counted in shed_hot too. The pages read of its file are given back
 * (elfread__drop_pages) and read again when next wanted. 1 if one was
 * freed, 0 if none could be.
 */
int dso_cache__shed_oldest(struct dso_cache *c, uint64_t before, uint64_t hot);

/*
 * Before any binary is freed: give back the pages every binary's DWARF
 * image maps from the DWARF cache (srcline__trim), which costs their next
 * lookups page faults, not a remake. Returns how many were trimmed.
 */
size_t dso_cache__trim_dwarf(struct dso_cache *c);
/*
 * Then, before a binary is shed: free the libdw handle (line tables, CUs:
 * most of a binary's line memory) of the binary last used longest ago,
 * before use clock `before` (UINT64_MAX: any). Its answers and names stay
 * (srcline__close_dwarf): nothing a pipeline points to dies, and only an
 * address not looked up before opens it again. 1 if one was freed.
 */
int dso_cache__close_dwarf_oldest(struct dso_cache *c, uint64_t before);
/* Addresses resolved through libdw so far (dso_stats.srcline_resolved):
 * where a binary's line memory grows, for a caller's budget checks. */
uint64_t dso_cache__dwarf_work(const struct dso_cache *c);
/* The use clock: bumped by every lookup in any of the cache's dsos. */
uint64_t dso_cache__use_clock(const struct dso_cache *c);

const char *dso__path(const struct dso *d);	/* as first opened */
const char *dso__name(const struct dso *d);	/* basename of path */
const char *dso__build_id_hex(const struct dso *d); /* "" when none */
size_t dso__build_id(const struct dso *d, const uint8_t **id); /* 0 = none */
const struct elfread *dso__elf(const struct dso *d);
/* The options of d's cache (for the runtimes' hooks, runtime.h). */
const struct dso_cache_opts *dso__opts(const struct dso *d);

/* Runtime = vaddr + bias for a mapping [start, ...) at file offset off. */
int dso__mapping_bias(const struct dso *d, uint64_t start, uint64_t off,
		      int64_t *bias);

/* The SFrame table (loaded on first call); NULL when there is none. */
const struct sframe_table *dso__sframe(struct dso *d);
enum dso_table_source dso__table_source(struct dso *d); /* loads */
int dso__table_error(const struct dso *d); /* why NONE: -errno/sframe err */

/* Row at ELF vaddr: 0, -ESRCH (no table or no row). */
int dso__find_row(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		  struct sframe_func *fn);

/* How the function at ELF vaddr keeps callee-saved register reg there,
 * from its CFI (cfi__reg_rule()): 0, -ENOENT, -errno. */
struct cfi_reg_rule;
int dso__reg_rule(struct dso *d, uint64_t vaddr, unsigned reg, struct cfi_reg_rule *out);

/* Function at ELF vaddr (symbols loaded on first call). 0 / -ENOENT.
 * sys_name (may be NULL): symtab__lookup_sys()'s, the mangled name. */
int dso__symbolize(struct dso *d, uint64_t vaddr, const char **name,
		   const char **sys_name, uint64_t *offset);
struct symtab *dso__symtab(struct dso *d); /* loads; may be NULL on ENOMEM */

/* Inline levels and source lines at ELF vaddr from DWARF (srcline.h; the
 * DWARF opened on first call, each address resolved once): 0 with
 * *levels[0..*n) innermost first, -ENOENT (no DWARF for it), -ENOMEM. */
int dso__srcline(struct dso *d, uint64_t vaddr,
		 const struct srcline_level **levels, size_t *n);

void dso_stats__print(const struct dso_stats *st, FILE *f);

#endif
