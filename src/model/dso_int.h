// SPDX-License-Identifier: MIT
/*
 * Inside the binary cache: the dso and cache structures, shared by dso.c
 * (the cache, symbols and row lookup) and dso_table.c (tables derived
 * from .eh_frame/.debug_frame, whole or a block at a time).
 */
#ifndef SFPROF_DSO_INT_H
#define SFPROF_DSO_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/dso.h"
#include "runtimes/runtime.h"
#include "unwind/sframe.h"

#define HASH_BUCKETS 1024

/* dev:inode:size:mtime of an opened file -> its dso. */
struct dso_ident {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	struct dso *dso;
	struct dso_ident *next;
};

struct dso_lazy;

struct dso {
	char *path;
	const char *name;
	uint8_t build_id[ELFREAD_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	struct elfread *elf;
	struct dso_cache *cache;

	int table_loaded;
	enum dso_table_source table_src;
	int table_err;
	struct sframe_table *table;
	/* For a binary with its own .sframe: rows from .eh_frame for the
	 * functions .sframe lacks (e.g. crt1.o's _start, built without
	 * --gsframe), made on the first miss. */
	int fallback_loaded;
	struct sframe_table *fallback;
	struct dso_lazy *lazy; /* derived table, a block at a time */

	int symtab_loaded;
	struct symtab *symtab;
	struct srcline *srcline; /* DWARF lines, made at first use */
	/* one slot per runtime (runtime__get(i)): its probe asked, and its
	 * state for this binary (NULL: not the runtime's) */
	struct {
		int probed;
		void *bin;
	} rt[RUNTIME_MAX];
	uint32_t rt_mask;  /* bit i: rt[i].bin is set */
	uint32_t rt_known; /* runtimes all probed, of runtime__count() */

	/* the cache's use clock at this dso's last lookup: which binary's
	 * tables to free first when the heap is over budget */
	uint64_t last_use;

	struct dso *next_all;
	struct dso *next_bid; /* build-id hash chain */
};

struct dso_cache {
	struct dso_cache_opts opts;
	struct dso *all;
	struct dso *by_bid[HASH_BUCKETS];
	struct dso_ident *by_ident[HASH_BUCKETS];
	uint64_t use_clock; /* bumped by every lookup (dso_touch) */
	struct dso_stats st;
};

/* d was looked up now: the most recently used of the cache's dsos. */
static inline void dso_touch(struct dso *d)
{
	d->last_use = ++d->cache->use_clock;
}

/* A table derived from .eh_frame/.debug_frame, or a negative error. */
int dso__derive_table(struct dso *d, struct sframe_table **out);

/* 0 with d->lazy set, or -1: derive the whole table. */
int dso_lazy__setup(struct dso *d);

/*
 * Row lookup in a lazily derived table: 0, -ENOENT (no row), or 1 when
 * the whole table is needed (d->lazy is then dropped).
 */
int dso_lazy__find(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		   struct sframe_func *fn);

void dso_lazy__free(struct dso_lazy *z);
/* Runtime i's state for d (probed on the first call), or NULL: d is not
 * its binary, or it has no per-binary hooks. */
void *dso__runtime(struct dso *d, size_t i);
/* Whether some runtime has state for d (every one probed on the first
 * call): the row lookup's fast path skips their loops without. */
bool dso__has_runtime(struct dso *d);

/* How many dsos hold tables, symbols or lines (dso_table.c). */
size_t dso_cache__nr_loaded(const struct dso_cache *c);

#endif
