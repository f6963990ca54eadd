// SPDX-License-Identifier: MIT
/* Binaries cached by identity, with lazy SFrame and symbol tables. */
#include "dso.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "sframe.h"
#include "srcline.h"
#include "symbolize.h"
#include "util.h"

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

	struct dso *next_all;
	struct dso *next_bid; /* build-id hash chain */
};

struct dso_cache {
	struct dso_cache_opts opts;
	struct dso *all;
	struct dso *by_bid[HASH_BUCKETS];
	struct dso_ident *by_ident[HASH_BUCKETS];
	struct dso_stats st;
};

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

static void lazy_free(struct dso_lazy *z);

static void dso__free(struct dso *d)
{
	lazy_free(d->lazy);
	sframe_table__free(d->table);
	sframe_table__free(d->fallback);
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

const struct elfread *dso__elf(const struct dso *d)
{
	return d->elf;
}

int dso__mapping_bias(const struct dso *d, uint64_t start, uint64_t off,
		      int64_t *bias)
{
	return elfread__mapping_bias(d->elf, start, off, bias);
}

/* A table derived from .eh_frame/.debug_frame, or a negative error. */
static int derive_table(struct dso *d, struct sframe_table **out)
{
	struct sframe_encode_opts o = {
		.version = d->cache->opts.sframe_version,
		.abi = SFRAME_ABI_AMD64_LE,
		.fixed_ra_offset = -8,
		.fixed_fp_offset = 0,
		.section_vaddr = 0,
	};
	struct elfread *dbg = NULL;
	struct cfi_input in;
	void *sec = NULL;
	size_t len = 0;
	int err;

	if (elfread__machine(d->elf) != 62 /* EM_X86_64 */)
		return -EOPNOTSUPP;
	memset(&in, 0, sizeof(in));
	err = cfi_input_from_elf(elfread__libelf(d->elf), &in);
	if ((err == 0 || err == -ENOENT) && !in.debug_frame &&
	    !d->cache->opts.no_debug_files) {
		/*
		 * Code built without unwind tables keeps its CFI in
		 * .debug_frame, which stripping moves to the separate debug
		 * file (same link, so the same addresses): use it too.
		 */
		char path[4096];
		struct cfi_input din;
		unsigned how;

		if (!symbolize__find_debug_file(d->elf, d->path,
						d->cache->opts.debug_root, path,
						sizeof(path), &how))
			dbg = elfread__open(path);
		memset(&din, 0, sizeof(din));
		if (dbg && !cfi_input_from_elf(elfread__libelf(dbg), &din) &&
		    din.debug_frame) {
			if (err)
				in = din;
			in.debug_frame = din.debug_frame;
			in.debug_frame_len = din.debug_frame_len;
			err = 0;
		}
	}
	/*
	 * Place the derived section at .eh_frame's address: function starts
	 * are encoded relative to it, and 32-bit offsets from 0 would drop
	 * functions of binaries linked above 2 GiB.
	 */
	o.section_vaddr = in.eh_frame ? in.eh_frame_vaddr : 0;
	if (!err)
		err = cfi_to_sframe(&in, &o, &sec, &len, NULL);
	elfread__free(dbg); /* in's pointers die here: encoded already */
	if (err)
		return err;
	/* Frees sec on failure. */
	return sframe_table__new_owned(sec, len, o.section_vaddr, out);
}

/*
 * Lazily derived tables. Deriving a whole .eh_frame (libc: ~3,000 FDEs)
 * costs a few milliseconds, yet a profile hits a few dozen functions of
 * it. With .eh_frame_hdr's sorted search table, the FDE for a PC is found
 * by binary search; blocks of LAZY_BLOCK FDEs (plus the one before, so an
 * overlapping predecessor is dropped or kept as in the whole table) are
 * copied into a small .eh_frame image and derived on first use. Anything
 * unusual (other encodings, .debug_frame, PLT sections, a search table
 * that does not list every FDE) derives the whole table instead.
 */
#define LAZY_BLOCK 16
#define LAZY_EMPTY ((struct sframe_table *)1) /* block derived no function */

struct dso_lazy {
	struct cfi_input in;	  /* pointers into d->elf's data */
	const uint8_t *tab;	  /* search table: (start, fde) int32 pairs */
	size_t nr;		  /* FDEs in it */
	struct sframe_table **blocks;
	/* per PLT section (in.plt): its own block, NULL until used */
	struct sframe_table *plt_blocks[4];
};

static uint64_t lazy_start(const struct dso_lazy *z, size_t i)
{
	return z->in.eh_frame_hdr_vaddr + (int64_t)(int32_t)util__get32(z->tab + 8 * i);
}

/* Offset in .eh_frame of search table entry i's FDE, or -1. */
static int64_t lazy_fde_off(const struct dso_lazy *z, size_t i)
{
	uint64_t a = z->in.eh_frame_hdr_vaddr +
		     (int64_t)(int32_t)util__get32(z->tab + 8 * i + 4);

	if (a < z->in.eh_frame_vaddr || a - z->in.eh_frame_vaddr >
					     z->in.eh_frame_len - 8)
		return -1;
	return (int64_t)(a - z->in.eh_frame_vaddr);
}

/* Total size of the 32-bit-length record at off, or 0 when unusable. */
static size_t rec_size(const uint8_t *b, size_t len, size_t off)
{
	uint32_t l;

	if (off > len || len - off < 8)
		return 0;
	l = util__get32(b + off);
	if (l < 4 || l == 0xffffffffu || l > len - off - 4)
		return 0;
	return (size_t)l + 4;
}

static int uleb_skip(const uint8_t **p, const uint8_t *end)
{
	while (*p < end)
		if (!(*(*p)++ & 0x80))
			return 0;
	return -1;
}

/*
 * The FDE pointer encoding of the CIE at off (its 'R' augmentation), or
 * -1 when the CIE is not one this copier understands.
 */
static int cie_fde_enc(const uint8_t *b, size_t len, size_t off)
{
	size_t sz = rec_size(b, len, off);
	const uint8_t *p, *end, *aug, *ad_end;
	uint64_t alen = 0;
	unsigned shift = 0;
	uint8_t ver;

	if (!sz || util__get32(b + off + 4) != 0)
		return -1;
	p = b + off + 8;
	end = b + off + sz;
	if (p >= end)
		return -1;
	ver = *p++;
	if (ver != 1 && ver != 3)
		return -1;
	aug = p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	if (!*aug)
		return 0; /* no augmentation: absolute pointers */
	if (*aug != 'z')
		return -1;
	if (uleb_skip(&p, end) || uleb_skip(&p, end)) /* alignments */
		return -1;
	if (ver == 1) {
		if (p >= end)
			return -1;
		p++;
	} else if (uleb_skip(&p, end)) {
		return -1;
	}
	for (;;) { /* augmentation data length */
		if (p >= end || shift > 28)
			return -1;
		alen |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
		if (!(*p++ & 0x80))
			break;
	}
	if (alen > (uint64_t)(end - p))
		return -1;
	ad_end = p + alen;
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			return p < ad_end ? *p : -1;
		case 'L':
			p++;
			break;
		case 'S':
		case 'B':
			break;
		case 'P': {
			uint8_t e;

			if (p >= ad_end)
				return -1;
			e = *p++;
			switch (e & 0x0f) {
			case 0x00: case 0x04: case 0x0c: p += 8; break;
			case 0x02: case 0x0a: p += 2; break;
			case 0x03: case 0x0b: p += 4; break;
			default: return -1;
			}
			break;
		}
		default:
			return -1;
		}
		if (p > ad_end)
			return -1;
	}
	return 0; /* no 'R': absolute pointers */
}

static void lazy_free(struct dso_lazy *z)
{
	size_t i;

	if (!z)
		return;
	for (i = 0; z->blocks && i < (z->nr + LAZY_BLOCK - 1) / LAZY_BLOCK; i++)
		if (z->blocks[i] != LAZY_EMPTY)
			sframe_table__free(z->blocks[i]);
	for (i = 0; i < sizeof(z->plt_blocks) / sizeof(z->plt_blocks[0]); i++)
		if (z->plt_blocks[i] != LAZY_EMPTY)
			sframe_table__free(z->plt_blocks[i]);
	free(z->blocks);
	free(z);
}

/* Whether a separate debug file adds .debug_frame to d's CFI. */
static int debug_frame_elsewhere(struct dso *d)
{
	char path[4096];
	struct elfread *dbg = NULL;
	struct cfi_input din;
	unsigned how;
	int ret = 0;

	if (d->cache->opts.no_debug_files)
		return 0;
	if (!symbolize__find_debug_file(d->elf, d->path,
					d->cache->opts.debug_root, path,
					sizeof(path), &how))
		dbg = elfread__open(path);
	if (dbg && !cfi_input_from_elf(elfread__libelf(dbg), &din) &&
	    din.debug_frame)
		ret = 1;
	elfread__free(dbg);
	return ret;
}

/* 0 with d->lazy set, or -1: derive the whole table. */
static int lazy_setup(struct dso *d)
{
	struct dso_lazy *z;
	const uint8_t *h;
	size_t off, fdes = 0, i;
	uint64_t ptr;

	if (elfread__machine(d->elf) != 62 /* EM_X86_64 */)
		return -1;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -1;
	if (cfi_input_from_elf(elfread__libelf(d->elf), &z->in) ||
	    !z->in.eh_frame || !z->in.eh_frame_hdr || z->in.debug_frame ||
	    z->in.eh_frame_len < 8 || z->in.eh_frame_hdr_len < 12)
		goto fail;
	h = z->in.eh_frame_hdr;
	/* version 1; eh_frame_ptr pcrel sdata4; count udata4; table datarel sdata4 */
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		goto fail;
	ptr = z->in.eh_frame_hdr_vaddr + 4 + (int64_t)(int32_t)util__get32(h + 4);
	if (ptr != z->in.eh_frame_vaddr)
		goto fail;
	z->nr = util__get32(h + 8);
	if (!z->nr || z->nr > (z->in.eh_frame_hdr_len - 12) / 8)
		goto fail;
	z->tab = h + 12;
	for (i = 1; i < z->nr; i++)
		if ((int64_t)(int32_t)util__get32(z->tab + 8 * i) <
		    (int64_t)(int32_t)util__get32(z->tab + 8 * (i - 1)))
			goto fail;
	/* The search table must list every FDE of .eh_frame. */
	for (off = 0; off + 4 <= z->in.eh_frame_len;) {
		size_t sz;

		if (util__get32(z->in.eh_frame + off) == 0)
			break; /* terminator */
		sz = rec_size(z->in.eh_frame, z->in.eh_frame_len, off);
		if (!sz)
			goto fail;
		if (util__get32(z->in.eh_frame + off + 4) != 0)
			fdes++;
		off += sz;
	}
	if (fdes != z->nr)
		goto fail;
	if (z->in.nr_plt < 0 || z->in.nr_plt > 4)
		goto fail;
	if (debug_frame_elsewhere(d))
		goto fail;
	z->blocks = calloc((z->nr + LAZY_BLOCK - 1) / LAZY_BLOCK,
			   sizeof(*z->blocks));
	if (!z->blocks)
		goto fail;
	d->lazy = z;
	return 0;
fail:
	lazy_free(z);
	return -1;
}

/*
 * Derive search table entries [lo, hi) into *out (LAZY_EMPTY when none
 * converts), with the rows of PLT section `plt` (may be NULL) that no FDE
 * covers. 0, or -1 when they cannot be copied faithfully.
 */
static int lazy_block(struct dso *d, size_t lo, size_t hi,
		      const struct cfi_plt *plt, struct sframe_table **out)
{
	const struct dso_lazy *z = d->lazy;
	const uint8_t *b = z->in.eh_frame;
	size_t len = z->in.eh_frame_len;
	size_t cie_old[LAZY_BLOCK + 1], cie_new[LAZY_BLOCK + 1];
	int cie_enc[LAZY_BLOCK + 1];
	size_t nr_cie = 0, total = 4, pos, i, k;
	struct sframe_encode_opts o = {
		.version = d->cache->opts.sframe_version,
		.abi = SFRAME_ABI_AMD64_LE,
		.fixed_ra_offset = -8,
		.fixed_fp_offset = 0,
		.section_vaddr = z->in.eh_frame_vaddr,
	};
	struct cfi_input in;
	uint8_t *img;
	void *sec = NULL;
	size_t sec_len = 0;
	int err;

	/* Sizes and the CIEs the FDEs use. */
	for (i = lo; i < hi; i++) {
		int64_t f = lazy_fde_off(z, i);
		size_t sz, c;

		if (f < 0 || !(sz = rec_size(b, len, (size_t)f)) ||
		    !util__get32(b + f + 4) || util__get32(b + f + 4) > (uint64_t)f + 4)
			return -1;
		total += sz;
		c = (size_t)f + 4 - util__get32(b + f + 4);
		for (k = 0; k < nr_cie && cie_old[k] != c; k++)
			;
		if (k == nr_cie) {
			size_t csz = rec_size(b, len, c);

			cie_enc[k] = cie_fde_enc(b, len, c);
			if (!csz || cie_enc[k] < 0 || (cie_enc[k] & 0x80))
				return -1;
			if ((cie_enc[k] & 0x70) == 0x10 &&
			    (cie_enc[k] & 0x0f) != 0x0b)
				return -1; /* pcrel other than sdata4 */
			if ((cie_enc[k] & 0x70) != 0x10 &&
			    (cie_enc[k] & 0x70) != 0x00 &&
			    (cie_enc[k] & 0x70) != 0x30 &&
			    (cie_enc[k] & 0x70) != 0x20)
				return -1; /* funcrel/aligned */
			cie_old[k] = c;
			nr_cie++;
			total += csz;
		}
	}
	img = malloc(total);
	if (!img)
		return -1;
	pos = 0;
	for (k = 0; k < nr_cie; k++) {
		size_t csz = rec_size(b, len, cie_old[k]);

		memcpy(img + pos, b + cie_old[k], csz);
		cie_new[k] = pos;
		pos += csz;
	}
	for (i = lo; i < hi; i++) {
		size_t f = (size_t)lazy_fde_off(z, i);
		size_t sz = rec_size(b, len, f);
		size_t c = f + 4 - util__get32(b + f + 4);

		for (k = 0; cie_old[k] != c; k++)
			;
		memcpy(img + pos, b + f, sz);
		util__put32(img + pos + 4, (uint32_t)(pos + 4 - cie_new[k]));
		if ((cie_enc[k] & 0x70) == 0x10) {
			/* pcrel: same target from the field's new place */
			int64_t v;

			if (sz < 12) {
				free(img);
				return -1;
			}
			v = (int64_t)(int32_t)util__get32(b + f + 8) + (int64_t)f - (int64_t)pos;
			if (v < INT32_MIN || v > INT32_MAX) {
				free(img);
				return -1;
			}
			util__put32(img + pos + 8, (uint32_t)(int32_t)v);
		}
		pos += sz;
	}
	util__put32(img + pos, 0);
	in = z->in;
	in.eh_frame = img;
	in.eh_frame_len = total;
	in.eh_frame_hdr = NULL;
	in.eh_frame_hdr_len = 0;
	in.nr_plt = 0;
	memset(in.plt, 0, sizeof(in.plt));
	if (plt) {
		in.plt[0] = *plt;
		in.nr_plt = 1;
	}
	err = cfi_to_sframe(&in, &o, &sec, &sec_len, NULL);
	free(img);
	if (err == -ENOENT) {
		*out = LAZY_EMPTY;
		return 0;
	}
	if (err)
		return -1;
	if (sframe_table__new_owned(sec, sec_len, o.section_vaddr, out))
		return -1;
	return 0;
}

/* First search table entry starting at or above vaddr (`above`: above). */
static size_t lazy_bound(const struct dso_lazy *z, uint64_t vaddr, bool above)
{
	size_t lo = 0, hi = z->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start = lazy_start(z, mid);

		if (start < vaddr || (above && start == vaddr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * lazy_find() for an address in PLT section k. The whole table gives a
 * PLT the rows of the FDEs that cover it, or synthesized rows when no FDE
 * touches it (cfi_derive's synth_plt). So the PLT's block holds every FDE
 * starting inside the section, the two before it (the one that may reach
 * into it, and its predecessor for overlaps, as in lazy blocks), and the
 * section itself.
 */
static int lazy_find_plt(struct dso *d, int k, uint64_t vaddr,
			 struct sframe_row *row, struct sframe_func *fn)
{
	struct dso_lazy *z = d->lazy;
	const struct cfi_plt *p = &z->in.plt[k];
	size_t lo, hi;

	if (!z->plt_blocks[k]) {
		int err = -1;

		if (p->vaddr + p->size >= p->vaddr) {
			lo = lazy_bound(z, p->vaddr, false);
			hi = lazy_bound(z, p->vaddr + p->size, false);
			lo = lo >= 2 ? lo - 2 : 0;
			if (hi - lo <= LAZY_BLOCK + 1)
				err = lazy_block(d, lo, hi, p, &z->plt_blocks[k]);
		}
		if (err) {
			lazy_free(z);
			d->lazy = NULL;
			return 1;
		}
	}
	if (z->plt_blocks[k] == LAZY_EMPTY)
		return -ENOENT;
	return sframe_table__find(z->plt_blocks[k], vaddr, row, fn) ? -ENOENT : 0;
}

/*
 * Row lookup in a lazily derived table: 0, -ENOENT (no row), or 1 when
 * the whole table is needed (d->lazy is then dropped).
 */
static int lazy_find(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		     struct sframe_func *fn)
{
	struct dso_lazy *z = d->lazy;
	size_t lo, i, blk;
	int k;

	for (k = 0; k < z->in.nr_plt; k++)
		if (vaddr - z->in.plt[k].vaddr < z->in.plt[k].size)
			return lazy_find_plt(d, k, vaddr, row, fn);
	lo = lazy_bound(z, vaddr, true);
	if (!lo)
		return -ENOENT;
	i = lo - 1;
	blk = i / LAZY_BLOCK;
	if (!z->blocks[blk]) {
		size_t first = blk * LAZY_BLOCK;
		size_t end = first + LAZY_BLOCK;

		if (end > z->nr)
			end = z->nr;
		if (lazy_block(d, first ? first - 1 : 0, end, NULL, &z->blocks[blk]))
			goto whole;
	}
	if (z->blocks[blk] == LAZY_EMPTY)
		return -ENOENT;
	return sframe_table__find(z->blocks[blk], vaddr, row, fn) ? -ENOENT : 0;
whole:
	lazy_free(z);
	d->lazy = NULL;
	return 1;
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
		if (!lazy_setup(d)) {
			d->table_src = DSO_TABLE_DERIVED;
			c->st.tables_derived++;
			return;
		}
		c->st.tables_whole++;
		err = derive_table(d, &d->table);
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

	lazy_free(d->lazy);
	d->lazy = NULL;
	c->st.tables_whole++;
	err = derive_table(d, &d->table);
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

int dso__find_row(struct dso *d, uint64_t vaddr, struct sframe_row *row,
		  struct sframe_func *fn)
{
	struct dso_cache *c = d->cache;
	int err;

	c->st.row_lookups++;
	dso__load_table(d);
	if (d->lazy) {
		err = lazy_find(d, vaddr, row, fn);
		if (err == 1) {
			dso__derive_whole(d);
		} else {
			if (err) {
				c->st.row_misses++;
				return -ESRCH;
			}
			return 0;
		}
	}
	if (!d->table) {
		c->st.row_misses++;
		return -ESRCH;
	}
	err = sframe_table__find(d->table, vaddr, row, fn);
	if (err == -ENOENT && d->table_src == DSO_TABLE_OWN &&
	    !c->opts.no_derive) {
		if (!d->fallback_loaded) {
			d->fallback_loaded = 1;
			if (derive_table(d, &d->fallback))
				d->fallback = NULL;
		}
		if (d->fallback)
			err = sframe_table__find(d->fallback, vaddr, row, fn);
	}
	if (err) {
		c->st.row_misses++;
		return -ESRCH;
	}
	return 0;
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
	}
	return d->symtab;
}

int dso__symbolize(struct dso *d, uint64_t vaddr, const char **name,
		   uint64_t *offset)
{
	struct symtab *s = dso__symtab(d);

	if (s && !symtab__lookup(s, vaddr, name, offset, NULL)) {
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

	if (!d->srcline) {
		struct srcline_opts o = {
			.debug_root = c->opts.debug_root,
			.no_debug_files = c->opts.no_debug_files,
			.full_names = c->opts.full_names,
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
}
