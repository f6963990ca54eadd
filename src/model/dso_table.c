// SPDX-License-Identifier: MIT
/*
 * Unwind tables a binary without .sframe gets from its .eh_frame (or
 * .debug_frame, also from its separate debug file): the whole table, or
 * lazily, a block of FDEs at a time through .eh_frame_hdr's search table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "model/dso_int.h"
#include "unwind/sframe.h"
#include "symbols/srcline.h"
#include "symbols/symbolize.h"
#include "util.h"

void *dso__runtime(struct dso *d, size_t i)
{
	const struct runtime_ops *ops = runtime__get(i);

	if (i >= RUNTIME_MAX || !ops || !ops->probe)
		return NULL;
	if (!d->rt[i].probed) {
		d->rt[i].probed = 1;
		d->rt[i].bin = ops->probe(d);
		if (d->rt[i].bin)
			d->rt_mask |= 1u << i;
	}
	return d->rt[i].bin;
}

bool dso__has_runtime(struct dso *d)
{
	size_t n = runtime__count();

	if (d->rt_known != n) {
		for (size_t i = 0; i < n; i++)
			dso__runtime(d, i);
		d->rt_known = (uint32_t)n;
	}
	return d->rt_mask != 0;
}

/* A table derived from .eh_frame/.debug_frame, or a negative error. */
int dso__derive_table(struct dso *d, struct sframe_table **out)
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
	err = cfi_input_from_elf(elfread__libelf_some(d->elf, ELFREAD_FILL_CFI), &in);
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
		if (dbg && !cfi_input_from_elf(elfread__libelf_some(dbg, ELFREAD_FILL_CFI), &din) &&
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
	if (err == -ENOENT) {
		/* no CFI at all: a runtime's own rows (Go's SP deltas) */
		for (size_t i = 0; i < runtime__count(); i++) {
			const struct runtime_ops *ops = runtime__get(i);
			void *bin;

			if (!ops->derive_table || !(bin = dso__runtime(d, i)))
				continue;
			elfread__free(dbg);
			return ops->derive_table(d, bin, &o, out);
		}
	}
	if (!err)
		err = cfi_to_sframe(&in, &o, &sec, &len, NULL);
	elfread__free(dbg); /* in's pointers die here: encoded already */
	if (err)
		return err;
	/* Frees sec on failure. */
	return sframe_table__new_owned(sec, len, o.section_vaddr, out);
}

int dso__reg_rule(struct dso *d, uint64_t vaddr, unsigned reg, struct cfi_reg_rule *out)
{
	struct cfi_input in;
	int err;

	if (elfread__machine(d->elf) != 62 /* EM_X86_64 */)
		return -EOPNOTSUPP;
	memset(&in, 0, sizeof(in));
	err = cfi_input_from_elf(elfread__libelf_some(d->elf, ELFREAD_FILL_CFI), &in);
	if (err)
		return err;
	return cfi__reg_rule(&in, vaddr, reg, out);
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

void dso_lazy__free(struct dso_lazy *z)
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
	if (dbg && !cfi_input_from_elf(elfread__libelf_some(dbg, ELFREAD_FILL_CFI), &din) &&
	    din.debug_frame)
		ret = 1;
	elfread__free(dbg);
	return ret;
}

/* 0 with d->lazy set, or -1: derive the whole table. */
int dso_lazy__setup(struct dso *d)
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
	if (cfi_input_from_elf(elfread__libelf_some(d->elf, ELFREAD_FILL_CFI), &z->in) ||
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
	dso_lazy__free(z);
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
 * dso_lazy__find() for an address in PLT section k. The whole table gives a
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
			dso_lazy__free(z);
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
int dso_lazy__find(struct dso *d, uint64_t vaddr, struct sframe_row *row,
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
	dso_lazy__free(z);
	d->lazy = NULL;
	return 1;
}

/* What d made from its binary that can be made again: symbols, lines,
 * unwind tables (its own .sframe's index, a derived table, the lazy
 * blocks and the fallback). */
static int dso__holds(const struct dso *d)
{
	return d->symtab_loaded || d->srcline || d->table_loaded ||
	       d->fallback_loaded;
}

/* Free them, back to "not made yet": the next lookup makes them again
 * exactly as the first did. */
static void dso__shed(struct dso *d)
{
	symtab__free(d->symtab);
	d->symtab = NULL;
	d->symtab_loaded = 0;
	srcline__free(d->srcline);
	d->srcline = NULL;
	dso_lazy__free(d->lazy);
	d->lazy = NULL;
	sframe_table__free(d->table);
	d->table = NULL;
	d->table_loaded = 0;
	d->table_src = DSO_TABLE_UNKNOWN;
	d->table_err = 0;
	sframe_table__free(d->fallback);
	d->fallback = NULL;
	d->fallback_loaded = 0;
}

int dso_cache__shed_oldest(struct dso_cache *c, uint64_t before, uint64_t hot)
{
	struct dso *old = NULL;

	if (!c)
		return 0;
	for (struct dso *d = c->all; d; d = d->next_all)
		if (dso__holds(d) && d->last_use < before &&
		    (!old || d->last_use < old->last_use))
			old = d;
	if (!old)
		return 0;
	dso__shed(old);
	/* the file's pages read so far: read again when next wanted (the
	 * file is read into this process's memory, never mapped, so they
	 * are ours to give back, not the page cache's); a runtime's state
	 * may point into its sections, so then only the tables' */
	c->st.shed_bytes += elfread__drop_pages(old->elf, old->rt_mask ? ELFREAD_DROP_TABLES
							     : ELFREAD_DROP_ALL);
	c->st.shed++;
	if (old->last_use >= hot)
		c->st.shed_hot++;
	return 1;
}

size_t dso_cache__trim_dwarf(struct dso_cache *c)
{
	size_t n = 0;

	for (struct dso *d = c ? c->all : NULL; d; d = d->next_all)
		n += (size_t)srcline__trim(d->srcline);
	if (c)
		c->st.dwarf_trims += n;
	return n;
}

int dso_cache__close_dwarf_oldest(struct dso_cache *c, uint64_t before)
{
	struct dso *old = NULL;

	for (struct dso *d = c ? c->all : NULL; d; d = d->next_all)
		if (srcline__is_open(d->srcline) && d->last_use < before &&
		    (!old || d->last_use < old->last_use))
			old = d;
	if (!old || !srcline__close_dwarf(old->srcline))
		return 0;
	c->st.dwarf_closes++;
	return 1;
}

uint64_t dso_cache__dwarf_work(const struct dso_cache *c)
{
	return c ? c->st.srcline_resolved : 0;
}

uint64_t dso_cache__use_clock(const struct dso_cache *c)
{
	return c ? c->use_clock : 0;
}

size_t dso_cache__nr_loaded(const struct dso_cache *c)
{
	size_t n = 0;

	for (const struct dso *d = c ? c->all : NULL; d; d = d->next_all)
		n += dso__holds(d) != 0;
	return n;
}
