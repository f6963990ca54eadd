// SPDX-License-Identifier: MIT
/*
 * SFrame decoder and lookup (versions 1, 2 and 3).
 *
 * A section is validated completely once, in sframe_table__new(), and
 * decoded into flat arrays: function starts in ascending order (binary
 * searched, through a coarse bucket index), per-function descriptors, row
 * start offsets and decoded rows. The lookup then reads only those arrays:
 * no variable-width parsing and no bounds checks on the hot path, which is
 * what the unwinder calls once per frame. The section bytes are kept (not
 * copied) for the dump, which prints them as stored.
 *
 * Spec: "The SFrame format", binutils 2.46 (v3), 2.41 (v2) and 2.40 (v1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/sframe.h"
#include "unwind/sframe_int.h"

const char *sframe_strerror(int err)
{
	switch (-err) {
	case 0:
		return "success";
	case SFRAME_E_TRUNCATED:
		return "sframe: header or sub-section past the end of the section";
	case SFRAME_E_MAGIC:
		return "sframe: bad magic";
	case SFRAME_E_VERSION:
		return "sframe: unsupported version";
	case SFRAME_E_ABI:
		return "sframe: unknown ABI/arch";
	case SFRAME_E_HEADER:
		return "sframe: inconsistent header fields";
	case SFRAME_E_FDE:
		return "sframe: malformed function descriptor";
	case SFRAME_E_FRE:
		return "sframe: malformed frame row";
	case SFRAME_E_UNSORTED:
		return "sframe: entries not in ascending order";
	case SFRAME_E_OVERLAP:
		return "sframe: sub-sections or functions overlap";
	case SFRAME_E_COUNT:
		return "sframe: absurd count";
	case SFRAME_E_EMPTY:
		return "sframe: empty section";
	case ENOMEM:
		return "sframe: out of memory";
	case ENOENT:
		return "sframe: no function covers this address";
	case ESRCH:
		return "sframe: no row for this address";
	case EINVAL:
		return "sframe: invalid argument";
	case ERANGE:
		return "sframe: value out of range for this version";
	default:
		return "sframe: unknown error";
	}
}

unsigned sframe_abi_sp(int abi)
{
	switch (abi) {
	case SFRAME_ABI_AARCH64_BE:
	case SFRAME_ABI_AARCH64_LE:
		return 31;
	case SFRAME_ABI_S390X_BE:
		return 15;
	default:
		return SFRAME_REG_AMD64_SP;
	}
}

unsigned sframe_abi_fp(int abi)
{
	switch (abi) {
	case SFRAME_ABI_AARCH64_BE:
	case SFRAME_ABI_AARCH64_LE:
		return 29;
	case SFRAME_ABI_S390X_BE:
		return 11;
	default:
		return SFRAME_REG_AMD64_BP;
	}
}

int sframe_raw_fre_read(const struct sframe_table *t, size_t *pos, size_t end,
			unsigned fre_type, struct sframe_fre_raw *out)
{
	static const uint8_t addr_len[3] = { 1, 2, 4 };
	static const uint8_t word_len[4] = { 1, 2, 4, 0 };
	const uint8_t *p;
	size_t at = *pos;
	unsigned alen, wlen;

	if (fre_type > 2)
		return -SFRAME_E_FDE;
	alen = addr_len[fre_type];
	if (at > end || end - at < alen + 1u)
		return -SFRAME_E_FRE;
	p = t->data + at;
	out->start = alen == 1 ? p[0]
		     : alen == 2 ? sframe_rd16(p, t->be)
				 : sframe_rd32(p, t->be);
	out->info = p[alen];
	out->count = SFRAME_FRE_COUNT(out->info);
	wlen = word_len[SFRAME_FRE_SIZE_CODE(out->info)];
	if (!wlen)
		return -SFRAME_E_FRE;
	at += alen + 1;
	if (end - at < (size_t)out->count * wlen)
		return -SFRAME_E_FRE;
	p = t->data + at;
	for (unsigned i = 0; i < out->count; i++, p += wlen) {
		if (wlen == 1) {
			out->uword[i] = p[0];
			out->word[i] = (int8_t)p[0];
		} else if (wlen == 2) {
			out->uword[i] = sframe_rd16(p, t->be);
			out->word[i] = (int16_t)out->uword[i];
		} else {
			out->uword[i] = sframe_rd32(p, t->be);
			out->word[i] = (int32_t)out->uword[i];
		}
	}
	*pos = at + (size_t)out->count * wlen;
	return 0;
}

static void rule_set(struct sframe_rule *r, unsigned kind, unsigned reg,
		     int32_t off)
{
	*r = sframe_rule__make(kind, reg, off);
}

/* A flexible-FDE control word + offset pair as a rule. */
static int flex_rule(const struct sframe_table *t, struct sframe_rule *r, uint32_t ctrl,
		     int32_t off, int is_cfa)
{
	if (SFRAME_FLEX_EXPR_P(ctrl)) {
		/* ours only: a file cannot name sfprof's expressions */
		if (!(t->flags & SFRAME_F_SFPROF_EXPR) || SFRAME_FLEX_REG_P(ctrl) || off ||
		    (is_cfa && SFRAME_FLEX_DEREF_P(ctrl)) || SFRAME_FLEX_REGNUM(ctrl) > INT32_MAX)
			return -SFRAME_E_FRE;
		rule_set(r, SFRAME_FLEX_DEREF_P(ctrl) ? SFRAME_RULE_EXPR : SFRAME_RULE_VAL_EXPR, 0,
			 (int32_t)SFRAME_FLEX_REGNUM(ctrl));
		return 0;
	}
	if (SFRAME_FLEX_REG_P(ctrl)) {
		if (SFRAME_FLEX_REGNUM(ctrl) > 255)
			return -SFRAME_E_FRE;
		rule_set(r,
			 SFRAME_FLEX_DEREF_P(ctrl) ? SFRAME_RULE_REG_DEREF
						   : SFRAME_RULE_REG,
			 SFRAME_FLEX_REGNUM(ctrl), off);
		return 0;
	}
	/* CFA recovery must name a base register (spec 3.2). */
	if (is_cfa)
		return -SFRAME_E_FRE;
	if (SFRAME_FLEX_DEREF_P(ctrl))
		rule_set(r, SFRAME_RULE_CFA_DEREF, 0, off);
	else /* value = CFA + off: no such rule kind; the unwinder falls back */
		rule_set(r, SFRAME_RULE_NO_RULE, 0, off);
	return 0;
}

/* The default RA rule when a row does not give one. */
static void ra_default(const struct sframe_table *t, struct sframe_rule *r)
{
	if (t->fixed_ra)
		rule_set(r, SFRAME_RULE_CFA_DEREF, 0, t->fixed_ra);
	else
		rule_set(r, SFRAME_RULE_NONE, 0, 0);
}

/* s390x v2 stores a register number in an odd RA/FP offset. */
static void s390x_slot(const struct sframe_table *t, struct sframe_rule *r,
		       int32_t w)
{
	if (t->version == 2 && (w & 1))
		rule_set(r, SFRAME_RULE_REG, (uint32_t)w >> 1 & 0xff, 0);
	else
		rule_set(r, SFRAME_RULE_CFA_DEREF, 0, w);
}

static int fre_to_row(const struct sframe_table *t,
		      const struct sframe_fde_raw *fde,
		      const struct sframe_fre_raw *f, struct sframe_row *row)
{
	unsigned n = f->count, i;
	int s390x = t->abi == SFRAME_ABI_S390X_BE;
	int err;

	memset(row, 0, sizeof(*row));
	row->start = f->start;
	if (SFRAME_FRE_MANGLED(f->info))
		row->flags |= SFRAME_ROW_MANGLED_RA;
	if (n == 0) {
		/* v2 erratum 2 / v3: no data words = RA undefined, outermost. */
		rule_set(&row->ra, SFRAME_RULE_UNDEFINED, 0, 0);
		return 0;
	}
	if (SFRAME_INFO2_FDE_TYPE(fde->info2) == SFRAME_FDE_TYPE_FLEX) {
		if (n < 2)
			return -SFRAME_E_FRE;
		err = flex_rule(t, &row->cfa, f->uword[0], f->word[1], 1);
		if (err)
			return err;
		i = 2;
		ra_default(t, &row->ra);
		if (i < n) {
			if (f->uword[i] == 0) { /* padding: default RA */
				i++;
			} else {
				if (i + 1 >= n)
					return -SFRAME_E_FRE;
				err = flex_rule(t, &row->ra, f->uword[i],
						f->word[i + 1], 0);
				if (err)
					return err;
				i += 2;
			}
		}
		if (i < n) {
			if (f->uword[i] == 0) {
				i++;
			} else {
				if (i + 1 >= n)
					return -SFRAME_E_FRE;
				err = flex_rule(t, &row->fp, f->uword[i],
						f->word[i + 1], 0);
				if (err)
					return err;
				i += 2;
			}
		}
		return i == n ? 0 : -SFRAME_E_FRE;
	}

	if (n > 3)
		return -SFRAME_E_FRE;
	rule_set(&row->cfa, SFRAME_RULE_REG,
		 SFRAME_FRE_BASE_SP(f->info) ? sframe_abi_sp(t->abi)
					     : sframe_abi_fp(t->abi),
		 s390x ? (int32_t)((int64_t)f->word[0] * SFRAME_S390X_CFA_ALIGN -
				   SFRAME_S390X_CFA_ADJ)
		       : f->word[0]);
	i = 1;
	/* RA: fixed in the header (AMD64) or the next word (AArch64, s390x). */
	if (t->fixed_ra) {
		ra_default(t, &row->ra);
	} else if (i < n) {
		if (s390x && f->word[i] == 0)
			rule_set(&row->ra, SFRAME_RULE_NONE, 0, 0);
		else if (s390x)
			s390x_slot(t, &row->ra, f->word[i]);
		else
			rule_set(&row->ra, SFRAME_RULE_CFA_DEREF, 0, f->word[i]);
		i++;
	}
	if (t->fixed_fp) {
		rule_set(&row->fp, SFRAME_RULE_CFA_DEREF, 0, t->fixed_fp);
	} else if (i < n) {
		if (s390x)
			s390x_slot(t, &row->fp, f->word[i]);
		else
			rule_set(&row->fp, SFRAME_RULE_CFA_DEREF, 0, f->word[i]);
	}
	return 0;
}

static int parse_header(struct sframe_table *t)
{
	const uint8_t *d = t->data;
	size_t body, fde_len;
	uint64_t fde_bytes;
	uint8_t allowed;

	if (t->len == 0)
		return -SFRAME_E_EMPTY;
	if (t->len < 4)
		return -SFRAME_E_TRUNCATED;
	if (sframe_rd16(d, 0) == SFRAME_MAGIC)
		t->be = 0;
	else if (sframe_rd16(d, 1) == SFRAME_MAGIC)
		t->be = 1;
	else
		return -SFRAME_E_MAGIC;
	t->version = d[2];
	t->flags = d[3];
	if (t->version < 1 || t->version > 3)
		return -SFRAME_E_VERSION;
	if (t->len < SFRAME_HDR_LEN)
		return -SFRAME_E_TRUNCATED;
	allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
	if (t->version >= 2)
		allowed |= SFRAME_F_FDE_FUNC_START_PCREL;
	if (t->version >= 3)
		allowed |= SFRAME_F_SFPROF_EXPR;
	if (t->flags & ~allowed)
		return -SFRAME_E_HEADER;
	t->abi = d[4];
	if (t->abi < SFRAME_ABI_AARCH64_BE || t->abi > SFRAME_ABI_S390X_BE)
		return -SFRAME_E_ABI;
	t->fixed_fp = (int8_t)d[5];
	t->fixed_ra = (int8_t)d[6];
	t->hdr_len = SFRAME_HDR_LEN + (size_t)d[7];
	t->num_fdes = sframe_rd32(d + 8, t->be);
	t->num_fres = sframe_rd32(d + 12, t->be);
	t->fre_len = sframe_rd32(d + 16, t->be);
	t->fdeoff = sframe_rd32(d + 20, t->be);
	t->freoff = sframe_rd32(d + 24, t->be);
	if (t->hdr_len > t->len)
		return -SFRAME_E_TRUNCATED;
	body = t->len - t->hdr_len;
	if (t->fdeoff > body || t->freoff > body)
		return -SFRAME_E_TRUNCATED;
	fde_len = t->version == 1   ? SFRAME_V1_FDE_LEN
		  : t->version == 2 ? SFRAME_V2_FDE_LEN
				    : SFRAME_V3_FDE_LEN;
	fde_bytes = (uint64_t)t->num_fdes * fde_len;
	if (fde_bytes > body - t->fdeoff)
		return -SFRAME_E_COUNT;
	if (t->fre_len > body - t->freoff)
		return -SFRAME_E_TRUNCATED;
	/* Every FRE takes at least 2 bytes, every v3 attribute record 5. */
	if (t->num_fres > t->fre_len / 2)
		return -SFRAME_E_COUNT;
	if (t->version == 3 &&
	    (uint64_t)t->num_fdes * SFRAME_V3_ATTR_LEN > t->fre_len)
		return -SFRAME_E_COUNT;
	if (fde_bytes && t->fre_len && t->fdeoff < t->freoff + (uint64_t)t->fre_len &&
	    t->freoff < t->fdeoff + fde_bytes)
		return -SFRAME_E_OVERLAP;
	return 0;
}

static int parse_fde(struct sframe_table *t, uint32_t i,
		     struct sframe_fde_raw *f)
{
	size_t fde_len = t->version == 1   ? SFRAME_V1_FDE_LEN
			 : t->version == 2 ? SFRAME_V2_FDE_LEN
					   : SFRAME_V3_FDE_LEN;
	size_t pos = t->hdr_len + t->fdeoff + (size_t)i * fde_len;
	size_t fre_sub = t->hdr_len + t->freoff;
	const uint8_t *p = t->data + pos;
	uint64_t field_addr = t->vaddr + pos;
	uint32_t fre_off;
	int64_t soff;

	memset(f, 0, sizeof(*f));
	if (t->version == 3) {
		soff = (int64_t)sframe_rd64(p, t->be);
		f->size = sframe_rd32(p + 8, t->be);
		fre_off = sframe_rd32(p + 12, t->be);
		if (fre_off > t->fre_len ||
		    t->fre_len - fre_off < SFRAME_V3_ATTR_LEN)
			return -SFRAME_E_FDE;
		p = t->data + fre_sub + fre_off;
		f->nfres = sframe_rd16(p, t->be);
		f->info = p[2];
		f->info2 = p[3];
		f->rep_size = p[4];
		f->fre_pos = (uint32_t)(fre_sub + fre_off + SFRAME_V3_ATTR_LEN);
		if (SFRAME_INFO2_FDE_TYPE(f->info2) > SFRAME_FDE_TYPE_FLEX ||
		    (f->info2 & 0xe0))
			return -SFRAME_E_FDE;
	} else {
		soff = (int32_t)sframe_rd32(p, t->be);
		f->size = sframe_rd32(p + 4, t->be);
		fre_off = sframe_rd32(p + 8, t->be);
		f->nfres = sframe_rd32(p + 12, t->be);
		f->info = p[16];
		if (t->version == 2)
			f->rep_size = p[17];
		else if (SFRAME_INFO_PCTYPE(f->info) == SFRAME_PC_MASK)
			/* v1 FDEs have no rep_size: binutils 2.40 masks the
			 * PC to the 16-byte x86-64 PLT entry */
			f->rep_size = 16;
		if (fre_off > t->fre_len)
			return -SFRAME_E_FDE;
		f->fre_pos = (uint32_t)(fre_sub + fre_off);
	}
	if (SFRAME_INFO_FRE_TYPE(f->info) > 2)
		return -SFRAME_E_FDE;
	/* Unsigned wrap-around is the arithmetic the spec means. */
	if (t->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		f->start = field_addr + (uint64_t)soff;
	else
		f->start = t->vaddr + (uint64_t)soff;
	if (f->start + f->size < f->start)
		return -SFRAME_E_FDE;
	return 0;
}

static int cmp_u64_idx(const void *a, const void *b, void *arg)
{
	const uint64_t *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (s[x] != s[y])
		return s[x] < s[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void build_buckets(struct sframe_table *t, uint64_t hi)
{
	uint64_t lo = t->starts[0], span = hi - lo, n = t->num_fdes, nb;
	unsigned shift = 0;
	uint32_t k = 0;

	if (n < 64)
		return; /* a plain binary search is as fast */
	while ((span >> shift) >= 2 * n)
		shift++;
	nb = (span >> shift) + 1;
	t->bucket_first = malloc((nb + 1) * sizeof(*t->bucket_first));
	if (!t->bucket_first)
		return; /* optional: lookups fall back to the full search */
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t at = lo + (b << shift); /* b << shift <= span */
		/* k = last function with start <= at */
		while (k + 1 < n && t->starts[k + 1] <= at)
			k++;
		t->bucket_first[b] = k;
	}
	/* The last bucket ends past every start: its bound is the last one. */
	t->bucket_first[nb] = (uint32_t)(n - 1);
	t->bucket_lo = lo;
	t->nr_buckets = nb;
	t->bucket_shift = shift;
}

static int table_build(struct sframe_table *t)
{
	uint32_t nf, nr_rows = 0, *order = NULL;
	size_t fre_end;
	int sorted = 1, err;
	uint64_t hi = 0;

	err = parse_header(t);
	if (err)
		return err;
	nf = t->num_fdes;
	fre_end = t->hdr_len + t->freoff + (size_t)t->fre_len;
	t->raw = calloc(nf ? nf : 1, sizeof(*t->raw));
	t->starts = calloc(nf ? nf : 1, sizeof(*t->starts));
	t->fns = calloc(nf ? nf : 1, sizeof(*t->fns));
	t->row_starts = calloc(t->num_fres ? t->num_fres : 1,
			       sizeof(*t->row_starts));
	t->rows = calloc(t->num_fres ? t->num_fres : 1, sizeof(*t->rows));
	order = malloc((nf ? nf : 1) * sizeof(*order));
	if (!t->raw || !t->starts || !t->fns || !t->row_starts || !t->rows ||
	    !order) {
		err = -ENOMEM;
		goto err_out;
	}

	for (uint32_t i = 0; i < nf; i++) {
		struct sframe_fde_raw *f = &t->raw[i];
		size_t pos;

		err = parse_fde(t, i, f);
		if (err)
			goto err_out;
		if (f->nfres > t->num_fres - nr_rows) {
			err = -SFRAME_E_COUNT;
			goto err_out;
		}
		f->row0 = nr_rows;
		pos = f->fre_pos;
		for (uint32_t j = 0; j < f->nfres; j++) {
			struct sframe_fre_raw fre;
			struct sframe_row *row = &t->rows[nr_rows];

			err = sframe_raw_fre_read(t, &pos, fre_end,
						  SFRAME_INFO_FRE_TYPE(f->info),
						  &fre);
			if (err)
				goto err_out;
			err = fre_to_row(t, f, &fre, row);
			if (err)
				goto err_out;
			if (j && row->start < t->rows[nr_rows - 1].start) {
				err = -SFRAME_E_UNSORTED;
				goto err_out;
			}
			t->row_starts[nr_rows++] = row->start;
		}
		if (i && f->start < t->raw[i - 1].start)
			sorted = 0;
		order[i] = i;
		if (f->start + f->size > hi)
			hi = f->start + f->size;
	}
	if (nr_rows != t->num_fres) {
		err = -SFRAME_E_HEADER;
		goto err_out;
	}
	if (!sorted) {
		/* A table that claims to be sorted and is not is lying. */
		if (t->flags & SFRAME_F_FDE_SORTED) {
			err = -SFRAME_E_UNSORTED;
			goto err_out;
		}
		for (uint32_t i = 0; i < nf; i++)
			t->starts[i] = t->raw[i].start;
		qsort_r(order, nf, sizeof(*order), cmp_u64_idx, t->starts);
	}
	for (uint32_t k = 0; k < nf; k++) {
		const struct sframe_fde_raw *f = &t->raw[order[k]];
		struct sframe_fn *fn = &t->fns[k];

		t->starts[k] = f->start;
		fn->size = f->size;
		fn->row0 = f->row0;
		fn->nrows = f->nfres;
		fn->pc_type = SFRAME_INFO_PCTYPE(f->info);
		fn->rep_size = f->rep_size;
		fn->flags = 0;
		if (t->version == 3 && SFRAME_INFO_SIGNAL(f->info))
			fn->flags |= SFRAME_FUNC_SIGNAL;
		if (SFRAME_INFO2_FDE_TYPE(f->info2) == SFRAME_FDE_TYPE_FLEX)
			fn->flags |= SFRAME_FUNC_FLEX;
		if ((t->abi == SFRAME_ABI_AARCH64_BE ||
		     t->abi == SFRAME_ABI_AARCH64_LE) &&
		    SFRAME_INFO_PAUTH_B(f->info))
			fn->flags |= SFRAME_FUNC_PAUTH_B;
		if (k && t->starts[k - 1] + t->fns[k - 1].size > f->start) {
			err = -SFRAME_E_OVERLAP;
			goto err_out;
		}
	}
	if (nf)
		build_buckets(t, hi);
	free(order);
	return 0;

err_out:
	free(order);
	return err;
}

static void table_release(struct sframe_table *t)
{
	free(t->raw);
	free(t->starts);
	free(t->fns);
	free(t->row_starts);
	free(t->rows);
	free(t->bucket_first);
	free(t->owned);
	free(t);
}

static int table_new(const void *data, size_t len, uint64_t vaddr, void *owned,
		     struct sframe_table **out)
{
	struct sframe_table *t;
	int err;

	*out = NULL;
	if (!data && len)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->data = data;
	t->len = len;
	t->vaddr = vaddr;
	err = table_build(t);
	if (err) {
		table_release(t); /* t->owned is still NULL: caller frees */
		return err;
	}
	t->owned = owned;
	*out = t;
	return 0;
}

int sframe_table__new(const void *data, size_t len, uint64_t section_vaddr,
		      struct sframe_table **out)
{
	return table_new(data, len, section_vaddr, NULL, out);
}

int sframe_table__new_owned(void *data, size_t len, uint64_t section_vaddr,
			    struct sframe_table **out)
{
	int err = table_new(data, len, section_vaddr, data, out);

	if (err)
		free(data);
	return err;
}

void sframe_table__free(struct sframe_table *t)
{
	if (t)
		table_release(t);
}

int sframe_table__version(const struct sframe_table *t)
{
	return t->version;
}

int sframe_table__abi(const struct sframe_table *t)
{
	return t->abi;
}

unsigned sframe_table__flags(const struct sframe_table *t)
{
	return t->flags;
}

int sframe_table__fixed_ra_offset(const struct sframe_table *t)
{
	return t->fixed_ra;
}

int sframe_table__fixed_fp_offset(const struct sframe_table *t)
{
	return t->fixed_fp;
}

size_t sframe_table__nr_funcs(const struct sframe_table *t)
{
	return t->num_fdes;
}

size_t sframe_table__nr_rows(const struct sframe_table *t)
{
	return t->num_fres;
}

static void func_fill(const struct sframe_table *t, size_t i,
		      struct sframe_func *f)
{
	const struct sframe_fn *fn = &t->fns[i];

	f->start = t->starts[i];
	f->size = fn->size;
	f->num_rows = fn->nrows;
	f->pc_type = fn->pc_type;
	f->rep_size = fn->rep_size;
	f->flags = fn->flags;
	f->pad = 0;
}

int sframe_table__func(const struct sframe_table *t, size_t i,
		       struct sframe_func *f)
{
	if (i >= t->num_fdes)
		return -ENOENT;
	func_fill(t, i, f);
	return 0;
}

int sframe_table__row(const struct sframe_table *t, size_t i, size_t j,
		      struct sframe_row *r)
{
	if (i >= t->num_fdes || j >= t->fns[i].nrows)
		return -ENOENT;
	*r = t->rows[t->fns[i].row0 + j];
	return 0;
}

int sframe_table__find(const struct sframe_table *t, uint64_t pc,
		       struct sframe_row *row, struct sframe_func *func)
{
	const uint64_t *s = t->starts;
	const struct sframe_fn *fn;
	const uint32_t *rs;
	uint32_t lo, n, off;
	uint64_t delta;

	if (!t->num_fdes || pc < s[0])
		return -ENOENT;
	if (t->bucket_first) {
		uint64_t b = (pc - t->bucket_lo) >> t->bucket_shift;

		if (b >= t->nr_buckets)
			return -ENOENT;
		lo = t->bucket_first[b];
		n = t->bucket_first[b + 1] - lo + 1;
	} else {
		lo = 0;
		n = t->num_fdes;
	}
	/* Last function with start <= pc, in [lo, lo + n). */
	while (n > 1) {
		uint32_t half = n / 2;

		lo = s[lo + half] <= pc ? lo + half : lo;
		n -= half;
	}
	fn = &t->fns[lo];
	delta = pc - s[lo];
	if (delta >= fn->size)
		return -ENOENT;
	off = (uint32_t)delta;
	if (fn->pc_type == SFRAME_PC_MASK && fn->rep_size)
		off %= fn->rep_size;
	rs = t->row_starts + fn->row0;
	n = fn->nrows;
	if (!n || off < rs[0])
		return -ESRCH;
	lo = 0;
	while (n > 1) {
		uint32_t half = n / 2;

		lo = rs[lo + half] <= off ? lo + half : lo;
		n -= half;
	}
	*row = t->rows[fn->row0 + lo];
	if (func)
		func_fill(t, (size_t)(fn - t->fns), func);
	return 0;
}
