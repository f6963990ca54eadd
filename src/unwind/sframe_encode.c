// SPDX-License-Identifier: MIT
/*
 * SFrame encoder: functions and rows in, a valid v2 or v3 section out.
 *
 * v2 sections carry SFRAME_F_FDE_FUNC_START_PCREL (binutils 2.45's v2
 * erratum 1) so they stay correct wherever the buffer lives. v3 writes a
 * function as a default FDE when every row fits the ABI's fixed layout
 * (CFA from SP/FP, RA at the fixed offset or a CFA slot, FP at a CFA slot)
 * and as a flexible FDE otherwise (spec 3.2: control word + offset pairs).
 *
 * NO_RULE rows split a function: the range they cover gets no FDE, so a
 * lookup there finds nothing and the unwinder falls back. A row whose RA
 * is UNDEFINED is written with no data words (v2 erratum 2, v3), and
 * decodes back with CFA and FP set to NONE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/sframe.h"
#include "unwind/sframe_int.h"
#include "util.h"

#define NEED_FLEX 1 /* row_words(): the default layout cannot say this */

struct seg {
	uint64_t start;
	uint32_t size;
	uint32_t base; /* subtracted from the source rows' start */
	const struct sframe_row *rows;
	uint32_t nrows;
	uint8_t pc_type, rep_size, flags;
	/* filled while encoding */
	uint8_t info, info2;
	uint32_t fre_off; /* v2: first FRE; v3: attribute record */
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int buf_reserve(struct buf *b, size_t more)
{
	size_t cap;
	uint8_t *np;

	if (b->cap - b->len >= more)
		return 0;
	if (__builtin_add_overflow(b->len, more, &cap) ||
	    __builtin_mul_overflow(cap, 2, &cap))
		return -ENOMEM;
	np = realloc(b->p, cap);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = cap;
	return 0;
}

static void wr16(uint8_t *p, uint16_t v, int be)
{
	if (be) {
		p[0] = v >> 8;
		p[1] = v;
	} else {
		p[0] = v;
		p[1] = v >> 8;
	}
}

static void wr32(uint8_t *p, uint32_t v, int be)
{
	for (int i = 0; i < 4; i++)
		p[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v, int be)
{
	for (int i = 0; i < 8; i++)
		p[be ? 7 - i : i] = (uint8_t)(v >> (8 * i));
}

static int row_has_no_rule(const struct sframe_row *r)
{
	if (r->ra.kind == SFRAME_RULE_UNDEFINED)
		return 0; /* CFA and FP do not matter in an outermost row */
	return r->cfa.kind == SFRAME_RULE_NO_RULE ||
	       r->ra.kind == SFRAME_RULE_NO_RULE ||
	       r->fp.kind == SFRAME_RULE_NO_RULE;
}

/*
 * Does this RA or FP rule say what the header's fixed offset for it
 * (fixed_ra_offset or fixed_fp_offset, 0: none) already says?
 */
static int rule_is_default(const struct sframe_rule *r, int fixed_off)
{
	if (r->kind == SFRAME_RULE_NONE)
		return 1;
	return fixed_off && r->kind == SFRAME_RULE_CFA_DEREF &&
	       r->off == fixed_off;
}

/* Flexible-FDE control word for a rule, or 0 if it has none. */
static uint32_t flex_ctrl(const struct sframe_rule *r)
{
	switch (r->kind) {
	case SFRAME_RULE_REG:
		return (uint32_t)r->reg << 3 | 1;
	case SFRAME_RULE_REG_DEREF:
		return (uint32_t)r->reg << 3 | 2 | 1;
	case SFRAME_RULE_CFA_DEREF:
		return 2;
	case SFRAME_RULE_VAL_EXPR: /* (sframe_int.h: ours only) */
		return (uint32_t)r->off << 3 | 4;
	case SFRAME_RULE_EXPR:
		return (uint32_t)r->off << 3 | 4 | 2;
	default:
		return 0;
	}
}

/* An expression rule names an expression (1..): dwexpr.h. */
static int expr_ok(const struct sframe_rule *r)
{
	return (r->kind != SFRAME_RULE_VAL_EXPR && r->kind != SFRAME_RULE_EXPR) || r->off > 0;
}

/* The offset word after a rule's control word. */
static int32_t flex_off(const struct sframe_rule *r)
{
	return r->kind == SFRAME_RULE_VAL_EXPR || r->kind == SFRAME_RULE_EXPR ? 0 : r->off;
}

/*
 * The data words of one row. Default layout: returns NEED_FLEX when the
 * row does not fit it. *ctrl_mask gets a bit per word that is a control
 * word (unsigned) rather than an offset (signed).
 */
static int row_words(const struct sframe_encode_opts *o,
		     const struct sframe_row *r, int flex, int32_t *w,
		     unsigned *n, unsigned *ctrl_mask, int *base_sp)
{
	unsigned sp = sframe_abi_sp(o->abi), fp = sframe_abi_fp(o->abi);
	int ra_def = rule_is_default(&r->ra, o->fixed_ra_offset);
	int fp_def = rule_is_default(&r->fp, o->fixed_fp_offset);

	*n = 0;
	*ctrl_mask = 0;
	*base_sp = 0;
	if (r->ra.kind == SFRAME_RULE_UNDEFINED)
		return 0;
	if (!flex) {
		if (r->cfa.kind != SFRAME_RULE_REG ||
		    (r->cfa.reg != sp && r->cfa.reg != fp))
			return NEED_FLEX;
		*base_sp = r->cfa.reg == sp;
		w[(*n)++] = r->cfa.off;
		if (o->fixed_ra_offset) {
			if (!ra_def)
				return NEED_FLEX;
		} else if (r->ra.kind == SFRAME_RULE_CFA_DEREF) {
			w[(*n)++] = r->ra.off;
		} else if (r->ra.kind != SFRAME_RULE_NONE ||
			   (!fp_def && !o->fixed_fp_offset)) {
			/* no RA slot to skip before an FP slot */
			return NEED_FLEX;
		}
		if (o->fixed_fp_offset) {
			if (!fp_def)
				return NEED_FLEX;
		} else if (r->fp.kind == SFRAME_RULE_CFA_DEREF) {
			w[(*n)++] = r->fp.off;
		} else if (r->fp.kind != SFRAME_RULE_NONE) {
			return NEED_FLEX;
		}
		return 0;
	}

	if ((r->cfa.kind != SFRAME_RULE_REG && r->cfa.kind != SFRAME_RULE_REG_DEREF &&
	     r->cfa.kind != SFRAME_RULE_VAL_EXPR) ||
	    !expr_ok(&r->cfa) || !expr_ok(&r->ra) || !expr_ok(&r->fp))
		return -EINVAL;
	*ctrl_mask |= 1u << *n;
	w[(*n)++] = (int32_t)flex_ctrl(&r->cfa);
	w[(*n)++] = flex_off(&r->cfa);
	if (!ra_def) {
		if (!flex_ctrl(&r->ra))
			return -EINVAL;
		*ctrl_mask |= 1u << *n;
		w[(*n)++] = (int32_t)flex_ctrl(&r->ra);
		w[(*n)++] = flex_off(&r->ra);
	} else if (!fp_def) {
		*ctrl_mask |= 1u << *n;
		w[(*n)++] = 0; /* padding: RA at its default place */
	}
	if (!fp_def) {
		if (!flex_ctrl(&r->fp))
			return -EINVAL;
		*ctrl_mask |= 1u << *n;
		w[(*n)++] = (int32_t)flex_ctrl(&r->fp);
		w[(*n)++] = flex_off(&r->fp);
	}
	return 0;
}

static unsigned word_size_code(const int32_t *w, unsigned n, unsigned ctrl)
{
	unsigned code = 0;

	for (unsigned i = 0; i < n; i++) {
		int64_t v = w[i];
		unsigned c;

		if (ctrl & (1u << i))
			c = (uint32_t)v <= 0xff ? 0 : (uint32_t)v <= 0xffff ? 1 : 2;
		else
			c = v >= INT8_MIN && v <= INT8_MAX	   ? 0
			    : v >= INT16_MIN && v <= INT16_MAX ? 1
							       : 2;
		if (c > code)
			code = c;
	}
	return code;
}

static int encode_seg_fres(const struct sframe_encode_opts *o, struct seg *s,
			   struct buf *fre, int be)
{
	uint32_t max_start = 0;
	unsigned fre_type, alen;
	int flex = 0, err;

	for (uint32_t j = 0; j < s->nrows; j++) {
		int32_t w[8];
		unsigned n, cm;
		int bsp;

		if (s->rows[j].start - s->base > max_start)
			max_start = s->rows[j].start - s->base;
		err = row_words(o, &s->rows[j], 0, w, &n, &cm, &bsp);
		if (err < 0)
			return err;
		if (err == NEED_FLEX)
			flex = 1;
	}
	if (flex && o->version < 3)
		return -EINVAL;
	fre_type = max_start <= 0xff ? 0 : max_start <= 0xffff ? 1 : 2;
	alen = fre_type == 0 ? 1 : fre_type == 1 ? 2 : 4;
	s->info = (uint8_t)(fre_type | (s->pc_type & 1) << 4);
	if ((o->abi == SFRAME_ABI_AARCH64_BE || o->abi == SFRAME_ABI_AARCH64_LE) &&
	    (s->flags & SFRAME_FUNC_PAUTH_B))
		s->info |= 1u << 5;
	if (o->version == 3 && (s->flags & SFRAME_FUNC_SIGNAL))
		s->info |= 1u << 7;
	s->info2 = flex ? SFRAME_FDE_TYPE_FLEX : SFRAME_FDE_TYPE_DEFAULT;

	s->fre_off = (uint32_t)fre->len;
	if (o->version == 3) {
		err = buf_reserve(fre, SFRAME_V3_ATTR_LEN);
		if (err)
			return err;
		wr16(fre->p + fre->len, (uint16_t)s->nrows, be);
		fre->p[fre->len + 2] = s->info;
		fre->p[fre->len + 3] = s->info2;
		fre->p[fre->len + 4] = s->rep_size;
		fre->len += SFRAME_V3_ATTR_LEN;
	}
	for (uint32_t j = 0; j < s->nrows; j++) {
		const struct sframe_row *r = &s->rows[j];
		uint32_t start = r->start - s->base;
		int32_t w[8];
		unsigned n, cm, code, wl;
		int bsp;
		uint8_t *p;

		err = row_words(o, r, flex, w, &n, &cm, &bsp);
		if (err)
			return err < 0 ? err : -EINVAL;
		code = word_size_code(w, n, cm);
		wl = 1u << code;
		err = buf_reserve(fre, alen + 1 + n * wl);
		if (err)
			return err;
		p = fre->p + fre->len;
		if (alen == 1)
			p[0] = (uint8_t)start;
		else if (alen == 2)
			wr16(p, (uint16_t)start, be);
		else
			wr32(p, start, be);
		p[alen] = (uint8_t)((bsp && !flex ? 1 : 0) | n << 1 | code << 5 |
				    ((r->flags & SFRAME_ROW_MANGLED_RA) ? 0x80 : 0));
		p += alen + 1;
		for (unsigned i = 0; i < n; i++, p += wl) {
			if (wl == 1)
				p[0] = (uint8_t)w[i];
			else if (wl == 2)
				wr16(p, (uint16_t)w[i], be);
			else
				wr32(p, (uint32_t)w[i], be);
		}
		fre->len = (size_t)(p - fre->p);
	}
	if (fre->len > UINT32_MAX)
		return -E2BIG;
	return 0;
}

static int seg_push(struct seg **v, size_t *n, size_t *cap, const struct seg *s)
{
	if (util__grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = *s;
	return 0;
}

/* Add function f's rows as one or more segments (FDEs). */
static int func_segments(const struct sframe_encode_opts *o,
			 const struct sframe_func *f,
			 const struct sframe_row *rows, struct seg **v,
			 size_t *n, size_t *cap)
{
	/* v3 counts a function's rows in 16 bits: longer runs are split. */
	uint32_t max_rows = o->version == 3 ? UINT16_MAX : UINT32_MAX;
	struct seg s = { .pc_type = f->pc_type, .rep_size = f->rep_size,
			 .flags = f->flags };
	uint32_t j = 0;
	int err;

	for (uint32_t k = 0; k < f->num_rows; k++) {
		if (k && rows[k].start < rows[k - 1].start)
			return -EINVAL;
		if (f->pc_type == SFRAME_PC_INC && rows[k].start > f->size)
			return -EINVAL;
		if (f->pc_type != SFRAME_PC_INC && row_has_no_rule(&rows[k]))
			return -EINVAL;
	}
	if (f->pc_type != SFRAME_PC_INC || f->num_rows == 0) {
		if (f->num_rows > max_rows)
			return -E2BIG;
		s.start = f->start;
		s.size = f->size;
		s.rows = rows;
		s.nrows = f->num_rows;
		return seg_push(v, n, cap, &s);
	}
	while (j < f->num_rows) {
		uint32_t first, end_j;

		while (j < f->num_rows && row_has_no_rule(&rows[j]))
			j++;
		if (j == f->num_rows)
			break;
		first = j;
		while (j < f->num_rows && !row_has_no_rule(&rows[j]) &&
		       j - first < max_rows)
			j++;
		end_j = j;
		/* The first run keeps the function's start, so a PC before its
		 * first row still finds the function (and no row). */
		s.base = first == 0 ? 0 : rows[first].start;
		s.start = f->start + s.base;
		s.size = (end_j < f->num_rows ? rows[end_j].start : f->size) -
			 s.base;
		s.rows = rows + first;
		s.nrows = end_j - first;
		if (s.size == 0)
			continue; /* every row here is overridden at once */
		err = seg_push(v, n, cap, &s);
		if (err)
			return err;
	}
	return 0;
}

static int row_has_expr(const struct sframe_row *r)
{
	return r->cfa.kind >= SFRAME_RULE_VAL_EXPR ||
	       r->ra.kind >= SFRAME_RULE_VAL_EXPR ||
	       r->fp.kind >= SFRAME_RULE_VAL_EXPR;
}

static int cmp_func(const void *a, const void *b, void *arg)
{
	const struct sframe_func *f = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (f[x].start != f[y].start)
		return f[x].start < f[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

int sframe_encode(const struct sframe_encode_opts *opts,
		  const struct sframe_func *funcs, size_t nr_funcs,
		  const struct sframe_row *rows, size_t nr_rows, void **out,
		  size_t *out_len)
{
	size_t *order = NULL, *row0 = NULL, nsegs = 0, segcap = 0, total = 0;
	size_t fde_len, fde_bytes, nfres = 0, len;
	struct seg *segs = NULL;
	struct buf fre = { 0 };
	uint8_t *sec = NULL, *p;
	int be, err;

	if (!opts || !out || !out_len || (nr_funcs && !funcs) ||
	    (nr_rows && !rows))
		return -EINVAL;
	*out = NULL;
	*out_len = 0;
	if (opts->version != 2 && opts->version != 3)
		return -EINVAL;
	if (opts->abi != SFRAME_ABI_AMD64_LE &&
	    opts->abi != SFRAME_ABI_AARCH64_LE &&
	    opts->abi != SFRAME_ABI_AARCH64_BE)
		return -EINVAL; /* s390x's default layout is not written */
	if (opts->fixed_ra_offset < INT8_MIN || opts->fixed_ra_offset > INT8_MAX ||
	    opts->fixed_fp_offset < INT8_MIN || opts->fixed_fp_offset > INT8_MAX)
		return -EINVAL;
	if (nr_funcs > UINT32_MAX)
		return -E2BIG;
	be = opts->abi == SFRAME_ABI_AARCH64_BE;

	order = malloc((nr_funcs ? nr_funcs : 1) * sizeof(*order));
	row0 = malloc((nr_funcs ? nr_funcs : 1) * sizeof(*row0));
	if (!order || !row0) {
		err = -ENOMEM;
		goto err_out;
	}
	for (size_t i = 0; i < nr_funcs; i++) {
		order[i] = i;
		row0[i] = total;
		if (funcs[i].num_rows > nr_rows - total) {
			err = -EINVAL;
			goto err_out;
		}
		total += funcs[i].num_rows;
	}
	if (total != nr_rows) {
		err = -EINVAL;
		goto err_out;
	}
	qsort_r(order, nr_funcs, sizeof(*order), cmp_func, (void *)funcs);
	for (size_t k = 0; k < nr_funcs; k++) {
		const struct sframe_func *f = &funcs[order[k]];

		if (f->start + f->size < f->start) {
			err = -EINVAL;
			goto err_out;
		}
		if (k && funcs[order[k - 1]].start + funcs[order[k - 1]].size >
				 f->start) {
			err = -EINVAL; /* overlapping functions */
			goto err_out;
		}
		err = func_segments(opts, f, rows + row0[order[k]], &segs,
				    &nsegs, &segcap);
		if (err)
			goto err_out;
	}
	if (nsegs > UINT32_MAX) {
		err = -E2BIG;
		goto err_out;
	}
	for (size_t i = 0; i < nsegs; i++) {
		err = encode_seg_fres(opts, &segs[i], &fre, be);
		if (err)
			goto err_out;
		nfres += segs[i].nrows;
	}
	if (nfres > UINT32_MAX) {
		err = -E2BIG;
		goto err_out;
	}

	fde_len = opts->version == 3 ? SFRAME_V3_FDE_LEN : SFRAME_V2_FDE_LEN;
	fde_bytes = nsegs * fde_len;
	if (fde_bytes > UINT32_MAX ||
	    SFRAME_HDR_LEN + fde_bytes + fre.len < fre.len) {
		err = -E2BIG;
		goto err_out;
	}
	len = SFRAME_HDR_LEN + fde_bytes + fre.len;
	sec = calloc(1, len);
	if (!sec) {
		err = -ENOMEM;
		goto err_out;
	}
	wr16(sec, SFRAME_MAGIC, be);
	sec[2] = (uint8_t)opts->version;
	sec[3] = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	/* The flag says what the FREs written hold: rows of a function that
	 * no segment covers (size 0) are not written, and v2 has no flag. */
	for (size_t i = 0; i < nsegs && opts->version == 3; i++)
		for (uint32_t j = 0; j < segs[i].nrows; j++)
			if (row_has_expr(&segs[i].rows[j]))
				sec[3] |= SFRAME_F_SFPROF_EXPR;
	sec[4] = (uint8_t)opts->abi;
	sec[5] = (uint8_t)(int8_t)opts->fixed_fp_offset;
	sec[6] = (uint8_t)(int8_t)opts->fixed_ra_offset;
	sec[7] = 0;
	wr32(sec + 8, (uint32_t)nsegs, be);
	wr32(sec + 12, (uint32_t)nfres, be);
	wr32(sec + 16, (uint32_t)fre.len, be);
	wr32(sec + 20, 0, be);
	wr32(sec + 24, (uint32_t)fde_bytes, be);
	for (size_t i = 0; i < nsegs; i++) {
		const struct seg *s = &segs[i];
		size_t pos = SFRAME_HDR_LEN + i * fde_len;
		/* PCREL: from the start field itself (spec 2.1.3). */
		uint64_t rel = s->start - (opts->section_vaddr + pos);

		p = sec + pos;
		if (opts->version == 3) {
			wr64(p, rel, be);
			wr32(p + 8, s->size, be);
			wr32(p + 12, s->fre_off, be);
		} else {
			if ((int64_t)rel < INT32_MIN || (int64_t)rel > INT32_MAX) {
				err = -ERANGE;
				goto err_out;
			}
			wr32(p, (uint32_t)rel, be);
			wr32(p + 4, s->size, be);
			wr32(p + 8, s->fre_off, be);
			wr32(p + 12, s->nrows, be);
			p[16] = s->info;
			p[17] = s->rep_size;
		}
	}
	if (fre.len)
		memcpy(sec + SFRAME_HDR_LEN + fde_bytes, fre.p, fre.len);
	*out = sec;
	*out_len = len;
	sec = NULL;
	err = 0;
err_out:
	free(sec);
	free(fre.p);
	free(segs);
	free(order);
	free(row0);
	return err;
}
