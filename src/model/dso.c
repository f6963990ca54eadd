// SPDX-License-Identifier: MIT
/* Binaries cached by identity, with lazy SFrame and symbol tables. */
#include "model/dso.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "unwind/cfi.h"
#include "unwind/sframe.h"
#include "symbols/srcline.h"
#include "symbols/symbolize.h"
#include "util.h"

#include "model/dso_int.h"


static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (n--) {
		h ^= *p++;
		h *= 1099511628211ull;
	}
	return h;
}

static size_t ident_bucket(const struct stat *st)
{
	uint64_t k[3] = { st->st_dev, st->st_ino, (uint64_t)st->st_size };

	return hash_bytes((const uint8_t *)k, sizeof(k)) % HASH_BUCKETS;
}

struct dso_cache *dso_cache__new(const struct dso_cache_opts *opts)
{
	struct dso_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (opts)
		c->opts = *opts;
	if (!c->opts.sframe_version)
		c->opts.sframe_version = 3;
	return c;
}


static void dso__free(struct dso *d)
{
	dso_lazy__free(d->lazy);
	sframe_table__free(d->table);
	sframe_table__free(d->fallback);
	for (size_t i = 0; i < RUNTIME_MAX; i++) {
		const struct runtime_ops *ops = runtime__get(i);

		if (d->rt[i].bin && ops && ops->release)
			ops->release(d->rt[i].bin);
	}
	symtab__free(d->symtab);
	srcline__free(d->srcline);
	elfread__free(d->elf);
	free(d->path);
	free(d);
}

static int kept(const struct dso *d, const struct dso *const *keep, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keep[mid] == d)
			return 1;
		if ((uintptr_t)keep[mid] < (uintptr_t)d)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

size_t dso_cache__sweep(struct dso_cache *c, const struct dso *const *keep, size_t nkeep)
{
	struct dso **pd, *d;
	size_t freed = 0;

	if (!c)
		return 0;
	/* unlink from the indexes first, then free */
	for (size_t i = 0; i < HASH_BUCKETS; i++) {
		struct dso_ident **px = &c->by_ident[i], *x;

		while ((x = *px)) {
			if (!kept(x->dso, keep, nkeep)) {
				*px = x->next;
				free(x);
			} else {
				px = &x->next;
			}
		}
		for (pd = &c->by_bid[i]; (d = *pd);) {
			if (!kept(d, keep, nkeep))
				*pd = d->next_bid;
			else
				pd = &d->next_bid;
		}
	}
	for (pd = &c->all; (d = *pd);) {
		if (kept(d, keep, nkeep)) {
			pd = &d->next_all;
			continue;
		}
		*pd = d->next_all;
		dso__free(d);
		freed++;
	}
	c->st.evicted += freed;
	return freed;
}

void dso_cache__free(struct dso_cache *c)
{
	struct dso *d, *dn;
	size_t i;

	if (!c)
		return;
	for (d = c->all; d; d = dn) {
		dn = d->next_all;
		dso__free(d);
	}
	for (i = 0; i < HASH_BUCKETS; i++) {
		struct dso_ident *x, *xn;

		for (x = c->by_ident[i]; x; x = xn) {
			xn = x->next;
			free(x);
		}
	}
	free(c);
}

static struct dso *find_by_build_id(struct dso_cache *c, const uint8_t *id,
				    size_t len)
{
	struct dso *d;

	for (d = c->by_bid[hash_bytes(id, len) % HASH_BUCKETS]; d;
	     d = d->next_bid)
		if (d->build_id_len == len && !memcmp(d->build_id, id, len))
			return d;
	return NULL;
}

struct dso *dso_cache__find_build_id(struct dso_cache *c, const uint8_t *id, size_t len)
{
	return len ? find_by_build_id(c, id, len) : NULL;
}

static int add_ident(struct dso_cache *c, const struct stat *st, struct dso *d)
{
	struct dso_ident *x = calloc(1, sizeof(*x));
	size_t b = ident_bucket(st);

	if (!x)
		return -ENOMEM;
	x->dev = st->st_dev;
	x->ino = st->st_ino;
	x->size = st->st_size;
	x->mtime_sec = st->st_mtim.tv_sec;
	x->mtime_nsec = st->st_mtim.tv_nsec;
	x->dso = d;
	x->next = c->by_ident[b];
	c->by_ident[b] = x;
	return 0;
}

static struct dso *find_by_ident(struct dso_cache *c, const struct stat *st)
{
	struct dso_ident *x;

	for (x = c->by_ident[ident_bucket(st)]; x; x = x->next)
		if (x->dev == (uint64_t)st->st_dev &&
		    x->ino == (uint64_t)st->st_ino &&
		    x->size == (uint64_t)st->st_size &&
		    x->mtime_sec == st->st_mtim.tv_sec &&
		    x->mtime_nsec == st->st_mtim.tv_nsec)
			return x->dso;
	return NULL;
}

/* Take ownership of e: a new dso, or the known one with e's build-id. */
static struct dso *dso_cache__adopt(struct dso_cache *c, struct elfread *e,
				    const char *path, int *known)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	size_t len = 0;
	struct dso *d;
	const char *slash;

	*known = 0;
	if (!elfread__build_id(e, id, &len)) {
		d = find_by_build_id(c, id, len);
		if (d) {
			elfread__free(e);
			*known = 1;
			return d;
		}
	} else {
		len = 0;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto err_out;
	d->path = strdup(path ? path : "");
	if (!d->path)
		goto err_out;
	slash = strrchr(d->path, '/');
	d->name = slash ? slash + 1 : d->path;
	d->elf = e;
	d->cache = c;
	d->build_id_len = len;
	memcpy(d->build_id, id, len);
	elfread__hex(id, len, d->build_id_hex);
	d->next_all = c->all;
	c->all = d;
	if (len) {
		size_t b = hash_bytes(id, len) % HASH_BUCKETS;

		d->next_bid = c->by_bid[b];
		c->by_bid[b] = d;
	}
	c->st.loads++;
	return d;

err_out:
	if (d)
		free(d->path);
	free(d);
	elfread__free(e);
	errno = ENOMEM;
	return NULL;
}

struct dso *dso_cache__open_fd(struct dso_cache *c, int fd, const char *path)
{
	struct elfread *e;
	struct stat st;
	struct dso *d;
	int known;

	c->st.opens++;
	if (fstat(fd, &st) != 0)
		return NULL;
	d = find_by_ident(c, &st);
	if (d) {
		c->st.hits_identity++;
		return d;
	}
	e = elfread__open_fd(fd);
	if (!e) {
		c->st.load_errors++;
		return NULL;
	}
	d = dso_cache__adopt(c, e, path, &known);
	if (!d)
		return NULL;
	if (known)
		c->st.hits_build_id++;
	if (add_ident(c, &st, d)) {
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

struct dso *dso_cache__open_buildid(struct dso_cache *c, const char *dir,
				    const uint8_t *id, size_t len, const char *path)
{
	const uint8_t *got;
	struct dso *d;
	int fd;

	if (!dir || !len)
		return NULL;
	fd = buildid_cache__open(dir, id, len);
	if (fd < 0)
		return NULL;
	d = dso_cache__open_fd(c, fd, path);
	close(fd);
	if (d && (dso__build_id(d, &got) != len || memcmp(got, id, len)))
		return NULL; /* a wrong file under that name: never used */
	return d;
}

struct dso *dso_cache__open_path(struct dso_cache *c, const char *path)
{
	struct dso *d;
	/* a path from a capture or /proc: no FIFO, device or symlink */
	int fd = util__open_regular(path, 1, NULL);
	int saved;

	if (fd < 0) {
		c->st.opens++;
		errno = -fd;
		return NULL;
	}
	d = dso_cache__open_fd(c, fd, path);
	saved = errno;
	close(fd);
	errno = saved;
	return d;
}

struct dso *dso_cache__open_mem(struct dso_cache *c, const void *image,
				size_t len, const char *name)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	struct elfread *e;
	struct dso *d;
	size_t id_len;
	void *copy;
	int known;

	c->st.opens++;
	e = elfread__open_mem(image, len);
	if (!e) {
		c->st.load_errors++;
		return NULL;
	}
	if (!elfread__build_id(e, id, &id_len)) {
		d = find_by_build_id(c, id, id_len);
		if (d) {
			elfread__free(e);
			c->st.hits_build_id++;
			return d;
		}
	}
	elfread__free(e);
	copy = malloc(len ? len : 1);
	if (!copy)
		return NULL;
	memcpy(copy, image, len);
	e = elfread__open_mem_owned(copy, len);
	if (!e) {
		c->st.load_errors++;
		return NULL;
	}
	return dso_cache__adopt(c, e, name, &known);
}

void dso_cache__stats(const struct dso_cache *c, struct dso_stats *out)
{
	*out = c->st;
	out->loaded = dso_cache__nr_loaded(c);
}

const char *dso__path(const struct dso *d)
{
	return d->path;
}

const char *dso__name(const struct dso *d)
{
	return d->name;
}

const char *dso__build_id_hex(const struct dso *d)
{
	return d->build_id_hex;
}

size_t dso__build_id(const struct dso *d, const uint8_t **id)
{
	if (id)
		*id = d->build_id;
	return d->build_id_len;
}

const struct dso_cache_opts *dso__opts(const struct dso *d)
{
	return &d->cache->opts;
}

const struct elfread *dso__elf(const struct dso *d)
{
	return d->elf;
}

int dso__mapping_bias(const struct dso *d, uint64_t start, uint64_t off,
		      int64_t *bias)
{
	return elfread__mapping_bias(d->elf, start, off, bias);
}


static void dso__load_table(struct dso *d)
{
	struct dso_cache *c = d->cache;
	struct elfread_section s;
	int err = -ENOENT;

	if (d->table_loaded)
		return;
	d->table_loaded = 1;
	if (!elfread__section(d->elf, ".sframe", &s) && s.data) {
		err = sframe_table__new(s.data, s.size, s.vaddr, &d->table);
		if (!err) {
			d->table_src = DSO_TABLE_OWN;
			c->st.tables_own++;
			return;
		}
		d->table = NULL;
	}
	if (!c->opts.no_derive) {
		if (!dso_lazy__setup(d)) {
			d->table_src = DSO_TABLE_DERIVED;
			c->st.tables_derived++;
			return;
		}
		c->st.tables_whole++;
		err = dso__derive_table(d, &d->table);
		if (!err) {
			d->table_src = DSO_TABLE_DERIVED;
			c->st.tables_derived++;
			return;
		}
		d->table = NULL;
	}
	d->table_src = DSO_TABLE_NONE;
	d->table_err = err;
	c->st.tables_none++;
}

/* Replace the lazy table by the whole derived one. */
static void dso__derive_whole(struct dso *d)
{
	struct dso_cache *c = d->cache;
	int err;

	dso_lazy__free(d->lazy);
	d->lazy = NULL;
	c->st.tables_whole++;
	err = dso__derive_table(d, &d->table);
	if (err) {
		d->table = NULL;
		d->table_src = DSO_TABLE_NONE;
		d->table_err = err;
		c->st.tables_derived--;
		c->st.tables_none++;
	}
}

const struct sframe_table *dso__sframe(struct dso *d)
{
	dso__load_table(d);
	if (d->lazy)
		dso__derive_whole(d);
	return d->table;
}

enum dso_table_source dso__table_source(struct dso *d)
{
	dso__load_table(d);
	return d->table_src;
}

int dso__table_error(const struct dso *d)
{
	return d->table_err;
}

/* The row from the binary's table: 0 or -ESRCH. */
static int find_row(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		    struct sframe_func *fn)
{
	struct dso_cache *c = d->cache;
	int err;

	dso__load_table(d);
	if (d->lazy) {
		err = dso_lazy__find(d, vaddr, row, fn);
		if (err == 1) {
			dso__derive_whole(d);
		} else {
			if (err)
				return -ESRCH;
			return 0;
		}
	}
	if (!d->table)
		return -ESRCH;
	err = sframe_table__find(d->table, vaddr, row, fn);
	if (err == -ENOENT && d->table_src == DSO_TABLE_OWN &&
	    !c->opts.no_derive) {
		if (!d->fallback_loaded) {
			d->fallback_loaded = 1;
			if (dso__derive_table(d, &d->fallback))
				d->fallback = NULL;
		}
		if (d->fallback)
			err = sframe_table__find(d->fallback, vaddr, row, fn);
	}
	return err ? -ESRCH : 0;
}

int dso__find_row(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		  struct sframe_func *fn)
{
	bool rt = dso__has_runtime(d);
	size_t nrt = rt ? runtime__count() : 0;
	const struct runtime_ops *ops;
	void *bin;

	d->cache->st.row_lookups++;
	dso_touch(d);
	/* a runtime's rows before the binary's own (Go's stack switches) */
	for (size_t i = 0; i < nrt; i++)
		if ((bin = d->rt[i].bin) && (ops = runtime__get(i))->special_row &&
		    ops->special_row(bin, vaddr, row, fn))
			return 0;
	if (!find_row(d, vaddr, row, fn))
		return 0;
	/* and for the PCs the binary's own miss (Go code in a binary whose
	 * CFI is only its C code's: external linking, then strip) */
	for (size_t i = 0; i < nrt; i++)
		if ((bin = d->rt[i].bin) && (ops = runtime__get(i))->find_row &&
		    !ops->find_row(d, bin, vaddr, row, fn))
			return 0;
	d->cache->st.row_misses++;
	return -ESRCH;
}

struct symtab *dso__symtab(struct dso *d)
{
	struct dso_cache *c = d->cache;

	if (!d->symtab_loaded) {
		struct symtab_opts o = {
			.debug_root = c->opts.debug_root,
			.no_demangle = c->opts.no_demangle,
			.full_names = c->opts.full_names,
			.no_debug_files = c->opts.no_debug_files,
		};

		d->symtab_loaded = 1;
		d->symtab = symtab__load(d->elf, d->path, &o);
		if (d->symtab)
			c->st.symtabs++;
		/* the table has its own copy of the names: the file's
		 * .symtab and .strtab need not stay in memory */
		elfread__drop_pages(d->elf, ELFREAD_DROP_SYMBOLS);
	}
	return d->symtab;
}

int dso__symbolize(struct dso *d, uint64_t vaddr, const char **name,
		   const char **sys_name, uint64_t *offset)
{
	struct symtab *s = dso__symtab(d);

	dso_touch(d);
	if (s && !symtab__lookup_sys(s, vaddr, name, sys_name, offset, NULL)) {
		d->cache->st.sym_hits++;
		return 0;
	}
	d->cache->st.sym_misses++;
	return -ENOENT;
}

int dso__srcline(struct dso *d, uint64_t vaddr,
		 const struct srcline_level **levels, size_t *n)
{
	struct dso_cache *c = d->cache;

	dso_touch(d);
	if (!d->srcline) {
		struct srcline_opts o = {
			.debug_root = c->opts.debug_root,
			.no_debug_files = c->opts.no_debug_files,
			.full_names = c->opts.full_names,
			.lean_dwarf = c->opts.lean_dwarf,
		};

		d->srcline = srcline__new(d->elf, d->path, &o);
		if (!d->srcline)
			return -ENOMEM;
	}
	struct srcline_stats before, after;
	int err;

	srcline__stats(d->srcline, &before);
	err = srcline__lookup(d->srcline, vaddr, levels, n);
	srcline__stats(d->srcline, &after);
	c->st.srcline_lookups++;
	c->st.srcline_resolved += after.resolved - before.resolved;
	c->st.srcline_images += after.images - before.images;
	c->st.srcline_images_cached += after.images_cached - before.images_cached;
	c->st.srcline_opens += after.opens - before.opens;
	if (!err)
		c->st.srcline_found++;
	return err;
}

void dso_stats__print(const struct dso_stats *st, FILE *f)
{
	fprintf(f, "dso_opens: %llu\n", (unsigned long long)st->opens);
	fprintf(f, "dso_hits_identity: %llu\n",
		(unsigned long long)st->hits_identity);
	fprintf(f, "dso_hits_build_id: %llu\n",
		(unsigned long long)st->hits_build_id);
	fprintf(f, "dso_loads: %llu\n", (unsigned long long)st->loads);
	fprintf(f, "dso_evicted: %llu\n", (unsigned long long)st->evicted);
	fprintf(f, "dso_load_errors: %llu\n",
		(unsigned long long)st->load_errors);
	/* process-wide: debug files count too */
	fprintf(f, "dso_dropped_changed: %llu\n",
		(unsigned long long)elfread__nr_changed());
	fprintf(f, "dso_tables_own: %llu\n", (unsigned long long)st->tables_own);
	fprintf(f, "dso_tables_derived: %llu\n",
		(unsigned long long)st->tables_derived);
	fprintf(f, "dso_tables_none: %llu\n",
		(unsigned long long)st->tables_none);
	fprintf(f, "dso_tables_whole: %llu\n",
		(unsigned long long)st->tables_whole);
	fprintf(f, "dso_symtabs: %llu\n", (unsigned long long)st->symtabs);
	fprintf(f, "dso_sym_hits: %llu\n", (unsigned long long)st->sym_hits);
	fprintf(f, "dso_sym_misses: %llu\n", (unsigned long long)st->sym_misses);
	fprintf(f, "dso_row_lookups: %llu\n",
		(unsigned long long)st->row_lookups);
	fprintf(f, "dso_row_misses: %llu\n",
		(unsigned long long)st->row_misses);
	fprintf(f, "dso_srcline_lookups: %llu\n",
		(unsigned long long)st->srcline_lookups);
	fprintf(f, "dso_srcline_resolved: %llu\n",
		(unsigned long long)st->srcline_resolved);
	fprintf(f, "dso_srcline_found: %llu\n",
		(unsigned long long)st->srcline_found);
	fprintf(f, "dso_srcline_images: %llu\n",
		(unsigned long long)st->srcline_images);
	fprintf(f, "dso_srcline_images_cached: %llu\n",
		(unsigned long long)st->srcline_images_cached);
	fprintf(f, "dso_shed: %llu\n", (unsigned long long)st->shed);
	fprintf(f, "dso_shed_hot: %llu\n", (unsigned long long)st->shed_hot);
	fprintf(f, "dso_shed_bytes: %llu\n", (unsigned long long)st->shed_bytes);
	fprintf(f, "dso_loaded: %llu\n", (unsigned long long)st->loaded);
	fprintf(f, "dso_dwarf_trims: %llu\n", (unsigned long long)st->dwarf_trims);
	fprintf(f, "dso_dwarf_closes: %llu\n", (unsigned long long)st->dwarf_closes);
	fprintf(f, "dso_srcline_opens: %llu\n", (unsigned long long)st->srcline_opens);
}
