// SPDX-License-Identifier: MIT
/*
 * DWARF CFI entry parser for .eh_frame and .debug_frame: walks a
 * section's entries, parses CIEs (augmentations, encodings) and FDE
 * headers, and runs each FDE's instructions through the CFA interpreter
 * (cfi_exec.c), whose rows reach the walk's callbacks.
 *
 * References: DWARF 5 section 6.4 (call frame information), the LSB's
 * .eh_frame description (augmentations z/R/P/L/S, DW_EH_PE_* pointer
 * encodings).
 *
 * Every entry is parsed inside the bounds of its own length field, which
 * itself is checked against the section; every LEB128, block and pointer
 * read is bounds-checked (cfi_read.h). A bad FDE (or a bad CIE, for all
 * of its FDEs) is rejected with a counted reason; the walk goes on with
 * the next entry as long as the entry lengths still make sense.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_exec.h"

/* Open-addressed map: CIE offset -> parsed CIE. */
struct cie_map {
	struct cie *slots;
	size_t cap, n;
	bool *used;
};

static struct cie *cie_map__find(struct cie_map *m, uint64_t off)
{
	if (!m->cap)
		return NULL;
	size_t i = (size_t)(off * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
	while (m->used[i]) {
		if (m->slots[i].off == off)
			return &m->slots[i];
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

static struct cie *cie_map__add(struct cie_map *m, uint64_t off)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 16;
		struct cie *ns = calloc(ncap, sizeof(*ns));
		bool *nu = calloc(ncap, sizeof(*nu));
		if (!ns || !nu) {
			free(ns);
			free(nu);
			return NULL;
		}
		struct cie_map nm = { ns, ncap, 0, nu };
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->used[i])
				continue;
			struct cie *c = cie_map__add(&nm, m->slots[i].off);
			*c = m->slots[i];
		}
		free(m->slots);
		free(m->used);
		*m = nm;
	}
	size_t i = (size_t)(off * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = true;
	m->n++;
	memset(&m->slots[i], 0, sizeof(m->slots[i]));
	m->slots[i].off = off;
	return &m->slots[i];
}

static void cie_map__free(struct cie_map *m)
{
	free(m->slots);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/*
 * Parse the entry header at `off`: its length (32- or 64-bit form) and
 * id. Sets *body (just past the id), *entry_end and *id. Returns 0,
 * 1 for a zero terminator, or REJ(reason).
 */
static int entry_header(const struct sec *s, uint64_t off, uint64_t *id,
			bool *is64, const uint8_t **body, const uint8_t **entry_end)
{
	struct rd r = { s->base + off, s->base + s->len };
	uint64_t len;

	if (!rd_uN(&r, 4, &len))
		return REJ(CFI_REJ_LENGTH);
	if (len == 0)
		return 1;
	*is64 = len == 0xffffffffu;
	if (*is64 && !rd_uN(&r, 8, &len))
		return REJ(CFI_REJ_LENGTH);
	if (len > (uint64_t)(r.end - r.p))
		return REJ(CFI_REJ_LENGTH);
	*entry_end = r.p + len;
	r.end = *entry_end;
	if (!rd_uN(&r, *is64 ? 8 : 4, id))
		return REJ(CFI_REJ_TRUNCATED);
	*body = r.p;
	return 0;
}

static bool is_cie_id(const struct sec *s, uint64_t id, bool is64)
{
	if (s->is_eh)
		return id == 0;
	return id == (is64 ? ~(uint64_t)0 : 0xffffffffu);
}

/* Parse the CIE at `off` into c (c->rej set on failure), tracking
 * register xr_reg1 - 1 too (0: none). 0 or -errno. */
static int cie_parse(const struct sec *s, uint64_t off, struct cie *c, uint64_t xr_reg1)
{
	const uint8_t *body, *end;
	uint64_t id, v;
	bool is64;
	uint8_t ver, b;
	int err;

	c->addr_size = 8;
	c->fde_enc = PE_absptr;
	c->lsda_enc = PE_omit;
	err = entry_header(s, off, &id, &is64, &body, &end);
	if (err == 1)
		err = REJ(CFI_REJ_CIE_POINTER);
	if (err)
		goto out;
	if (!is_cie_id(s, id, is64)) {
		err = REJ(CFI_REJ_CIE_POINTER);
		goto out;
	}
	struct rd r = { body, end };
	if (!rd_u8(&r, &ver)) {
		err = REJ(CFI_REJ_TRUNCATED);
		goto out;
	}
	/* .eh_frame: 1 (or 3); .debug_frame: 1, 3, 4. */
	if (!(ver == 1 || ver == 3 || (!s->is_eh && ver == 4))) {
		err = REJ(CFI_REJ_CIE_VERSION);
		goto out;
	}
	const uint8_t *aug = r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end) {
		err = REJ(CFI_REJ_TRUNCATED);
		goto out;
	}
	const uint8_t *aug_end = r.p++;
	if (ver == 4) {
		uint8_t seg;
		if (!rd_u8(&r, &c->addr_size) || !rd_u8(&r, &seg)) {
			err = REJ(CFI_REJ_TRUNCATED);
			goto out;
		}
		if ((c->addr_size != 4 && c->addr_size != 8) || seg != 0) {
			err = REJ(CFI_REJ_ENCODING);
			goto out;
		}
	}
	if (!rd_uleb(&r, &c->code_align) || !rd_sleb(&r, &c->data_align)) {
		err = REJ(CFI_REJ_TRUNCATED);
		goto out;
	}
	if (ver == 1) {
		if (!rd_u8(&r, &b)) {
			err = REJ(CFI_REJ_TRUNCATED);
			goto out;
		}
		c->ra_col = b;
	} else if (!rd_uleb(&r, &c->ra_col)) {
		err = REJ(CFI_REJ_TRUNCATED);
		goto out;
	}
	if (c->code_align == 0) {
		err = REJ(CFI_REJ_OPCODE);
		goto out;
	}

	if (aug < aug_end && aug[0] == 'z') {
		uint64_t alen;
		c->has_z = true;
		if (!rd_uleb(&r, &alen) || alen > (uint64_t)(r.end - r.p)) {
			err = REJ(CFI_REJ_TRUNCATED);
			goto out;
		}
		struct rd a = { r.p, r.p + alen };
		r.p += alen;
		for (const uint8_t *q = aug + 1; q < aug_end; q++) {
			switch (*q) {
			case 'R':
				if (!rd_u8(&a, &c->fde_enc)) {
					err = REJ(CFI_REJ_TRUNCATED);
					goto out;
				}
				break;
			case 'L':
				if (!rd_u8(&a, &c->lsda_enc)) {
					err = REJ(CFI_REJ_TRUNCATED);
					goto out;
				}
				break;
			case 'P':
				if (!rd_u8(&a, &b)) {
					err = REJ(CFI_REJ_TRUNCATED);
					goto out;
				}
				err = rd_encoded(&a, s, b, c->addr_size, 0, false, &v);
				if (err)
					goto out;
				break;
			case 'S':
				c->signal = true;
				break;
			case 'B': /* AArch64 PAC B key; harmless here */
			case 'G': /* AArch64 MTE tagged frame */
				break;
			default:
				/* 'z' says how long the data is: the rest can be skipped. */
				q = aug_end - 1;
				break;
			}
		}
		/* The FDE encoding must be usable: checked once, here. */
		if (s->is_eh && (c->fde_enc & 0x0f) != PE_absptr &&
		    (c->fde_enc & 0x0f) != PE_uleb128 &&
		    ((c->fde_enc & 0x0f) < PE_udata2 || (c->fde_enc & 0x0f) > PE_udata8) &&
		    ((c->fde_enc & 0x0f) < PE_sleb128 || (c->fde_enc & 0x0f) > PE_sdata8)) {
			err = REJ(CFI_REJ_ENCODING);
			goto out;
		}
		if (c->fde_enc == PE_omit) {
			err = REJ(CFI_REJ_ENCODING);
			goto out;
		}
	} else if (aug_end - aug == 2 && aug[0] == 'e' && aug[1] == 'h') {
		/* Old GCC: a pointer to exception data follows. */
		if (!rd_uN(&r, c->addr_size, &v)) {
			err = REJ(CFI_REJ_TRUNCATED);
			goto out;
		}
	} else if (aug != aug_end) {
		err = REJ(CFI_REJ_AUGMENTATION);
		goto out;
	}

	/* Initial instructions: the state every FDE of this CIE starts from. */
	struct exec x = { .sec = s, .cie = c, .pc_range = ~(uint64_t)0, .xr_reg1 = xr_reg1 };
	err = cfi_exec__run(&x, r.p, r.end);
	if (err > 0)
		goto out;
	if (err < 0)
		return err;
	c->init = x.cur;
out:
	c->rej = err > 0 ? err : 0;
	return 0;
}

struct walker {
	const struct cfi_input *in;
	struct cfi_stats *st;
	const struct cfi_walk_ops *ops;
	void *ctx;
	struct cie_map cies;
	struct exec x; /* large: kept here, not on the stack, per FDE */
};

static void count_reject(struct walker *w, int rej)
{
	w->st->reject[rej - 1]++;
	w->st->fdes_rejected++;
}

static int get_cie(struct walker *w, const struct sec *s, uint64_t off,
		   const struct cie **out)
{
	struct cie *c = cie_map__find(&w->cies, off);
	if (!c) {
		c = cie_map__add(&w->cies, off);
		if (!c)
			return -ENOMEM;
		int err = cie_parse(s, off, c, 0);
		if (err)
			return err;
		if (!c->rej)
			w->st->cies++;
	}
	*out = c;
	return 0;
}

/* One FDE whose body starts at `body` (just after its CIE pointer). */
static int fde_run(struct walker *w, const struct sec *s, const struct cie *c,
		   const uint8_t *body, const uint8_t *end)
{
	struct rd r = { body, end };
	uint64_t pc_begin, pc_range;
	int err;

	if (c->rej)
		return c->rej;
	uint8_t enc = s->is_eh ? c->fde_enc : PE_absptr;
	err = rd_encoded(&r, s, enc, c->addr_size, 0, true, &pc_begin);
	if (err)
		return err;
	/* The range uses the format of the encoding, never its base. */
	err = rd_encoded(&r, s, enc & 0x0f, c->addr_size, 0, true, &pc_range);
	if (err)
		return err;
	if (c->has_z) {
		uint64_t alen;
		if (!rd_uleb(&r, &alen) || alen > (uint64_t)(r.end - r.p))
			return REJ(CFI_REJ_TRUNCATED);
		r.p += alen; /* LSDA pointer: not needed to unwind */
	}
	/*
	 * Nothing to cover; in .debug_frame, a start of 0 is also what the
	 * linker leaves in the FDEs of discarded (garbage-collected) code.
	 */
	if (pc_range == 0 || (!s->is_eh && pc_begin == 0)) {
		w->st->fdes_empty++;
		return 0;
	}
	if (pc_range > UINT32_MAX || pc_begin + pc_range < pc_begin)
		return REJ(CFI_REJ_RANGE);

	struct exec *x = &w->x;
	cfi_exec__begin_fde(x, s, c, pc_begin, pc_range, w->ops, w->ctx);

	struct cfi_fde_info info = { pc_begin, pc_range, c->ra_col, c->signal };
	err = w->ops->fde_begin(w->ctx, &info);
	if (err)
		return err;
	err = cfi_exec__run(x, r.p, r.end);
	if (!err)
		err = cfi_exec__emit(x); /* the pending row, always (as gas does) */
	if (err < 0)
		return err;
	int e2 = w->ops->fde_end(w->ctx, err == 0);
	if (e2)
		return e2;
	if (!err)
		w->st->fdes_converted++;
	return err;
}

static int walk_section(struct walker *w, const struct sec *s)
{
	uint64_t off = 0;
	int err = 0;

	cie_map__free(&w->cies);
	while (off < s->len) {
		const uint8_t *body, *end;
		uint64_t id;
		bool is64;

		err = entry_header(s, off, &id, &is64, &body, &end);
		if (err == 1) /* zero terminator */
			break;
		if (err) {
			/* Without a length the next entry cannot be found. */
			w->st->fdes++;
			count_reject(w, err);
			break;
		}
		uint64_t next = (uint64_t)(end - s->base);
		if (is_cie_id(s, id, is64)) {
			const struct cie *c;
			err = get_cie(w, s, off, &c);
			if (err)
				return err;
			off = next;
			continue;
		}

		w->st->fdes++;
		uint64_t cie_off;
		if (s->is_eh) {
			/* Relative to the CIE pointer field itself. */
			uint64_t field = (uint64_t)(body - s->base) - (is64 ? 8 : 4);
			if (id > field) {
				count_reject(w, REJ(CFI_REJ_CIE_POINTER));
				off = next;
				continue;
			}
			cie_off = field - id;
		} else {
			cie_off = id;
		}
		const struct cie *c;
		if (cie_off >= s->len) {
			count_reject(w, REJ(CFI_REJ_CIE_POINTER));
			off = next;
			continue;
		}
		err = get_cie(w, s, cie_off, &c);
		if (err)
			return err;
		err = fde_run(w, s, c, body, end);
		if (err < 0)
			return err;
		if (err > 0)
			count_reject(w, err);
		off = next;
	}
	return 0;
}

int cfi__walk(const struct cfi_input *in, struct cfi_stats *st,
	      const struct cfi_walk_ops *ops, void *ctx)
{
	struct walker *w = calloc(1, sizeof(*w));
	int err = 0;

	if (!w)
		return -ENOMEM;
	w->in = in;
	w->st = st;
	w->ops = ops;
	w->ctx = ctx;
	if (in->eh_frame && in->eh_frame_len) {
		struct sec s = { in->eh_frame, in->eh_frame_len,
				 in->eh_frame_vaddr, true, in };
		st->eh_frame_bytes += in->eh_frame_len;
		err = walk_section(w, &s);
	}
	if (!err && in->debug_frame && in->debug_frame_len) {
		struct sec s = { in->debug_frame, in->debug_frame_len, 0, false, in };
		st->debug_frame_bytes += in->debug_frame_len;
		err = walk_section(w, &s);
	}
	cie_map__free(&w->cies);
	free(w);
	return err;
}

/* ---- one register's rule at one address (cfi__reg_rule) -------------- */

struct rule_at {
	uint64_t loc; /* pc - the FDE's start */
	bool have;
	struct cfi_reg_state xr;
};

static int rule_fde_begin(void *ctx, const struct cfi_fde_info *fde)
{
	(void)ctx;
	(void)fde;
	return 0;
}

static int rule_row(void *ctx, uint64_t loc, const struct cfi_regs *regs)
{
	struct rule_at *r = ctx;

	if (loc <= r->loc) { /* (rows come in ascending loc) */
		r->xr = regs->xr;
		r->have = true;
	}
	return 0;
}

static int rule_fde_end(void *ctx, bool ok)
{
	if (!ok)
		((struct rule_at *)ctx)->have = false;
	return 0;
}

static const struct cfi_walk_ops rule_ops = { rule_fde_begin, rule_row, rule_fde_end };

/*
 * The FDE at off of s, when it covers pc: its rule for reg at pc into
 * *xr (1), or 0 (a CIE, another range, a rejected entry); -errno. *c and
 * *cie_at keep the last CIE parsed (FDEs in a row mostly share one).
 */
static int fde_rule(const struct sec *s, uint64_t off, uint64_t pc, unsigned reg,
		    struct cie *c, uint64_t *cie_at, struct exec *x, struct cfi_reg_state *xr)
{
	const uint8_t *body, *end;
	uint64_t id, cie_off, pc_begin, pc_range;
	struct rule_at at = { 0 };
	bool is64;
	int err;

	if (entry_header(s, off, &id, &is64, &body, &end) || is_cie_id(s, id, is64))
		return 0;
	if (s->is_eh) {
		uint64_t field = (uint64_t)(body - s->base) - (is64 ? 8 : 4);

		if (id > field)
			return 0;
		cie_off = field - id;
	} else {
		cie_off = id;
	}
	if (cie_off >= s->len)
		return 0;
	if (*cie_at != cie_off + 1) {
		memset(c, 0, sizeof(*c));
		err = cie_parse(s, cie_off, c, (uint64_t)reg + 1);
		if (err)
			return err;
		*cie_at = cie_off + 1;
	}
	if (c->rej)
		return 0;
	struct rd r = { body, end };
	uint8_t enc = s->is_eh ? c->fde_enc : PE_absptr;

	if (rd_encoded(&r, s, enc, c->addr_size, 0, true, &pc_begin) ||
	    rd_encoded(&r, s, enc & 0x0f, c->addr_size, 0, true, &pc_range))
		return 0;
	if (pc < pc_begin || pc - pc_begin >= pc_range || pc_range > UINT32_MAX)
		return 0;
	if (c->has_z) {
		uint64_t alen;

		if (!rd_uleb(&r, &alen) || alen > (uint64_t)(r.end - r.p))
			return 0;
		r.p += alen;
	}
	at.loc = pc - pc_begin;
	cfi_exec__begin_fde(x, s, c, pc_begin, pc_range, &rule_ops, &at);
	x->xr_reg1 = (uint64_t)reg + 1;
	err = cfi_exec__run(x, r.p, r.end);
	if (!err)
		err = cfi_exec__emit(x);
	if (err < 0)
		return err;
	if (err || !at.have)
		return 0;
	*xr = at.xr;
	return 1;
}

/* The .eh_frame offset of the FDE .eh_frame_hdr's table gives pc, or -1
 * (no table of the usual encoding, or no entry at or below pc). */
static int64_t hdr_fde(const struct cfi_input *in, uint64_t pc)
{
	const uint8_t *h = in->eh_frame_hdr, *tab;
	uint64_t nr, lo = 0, hi, fde;

	if (!h || in->eh_frame_hdr_len < 12 || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return -1;
	nr = (uint64_t)h[8] | (uint64_t)h[9] << 8 | (uint64_t)h[10] << 16 | (uint64_t)h[11] << 24;
	if (nr > (in->eh_frame_hdr_len - 12) / 8)
		return -1;
	tab = h + 12;
	hi = nr;
	while (lo < hi) { /* first entry starting above pc */
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t v;

		memcpy(&v, tab + 8 * mid, 4);
		if (in->eh_frame_hdr_vaddr + (uint64_t)(int64_t)v <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	int32_t f;

	memcpy(&f, tab + 8 * (lo - 1) + 4, 4);
	fde = in->eh_frame_hdr_vaddr + (uint64_t)(int64_t)f;
	if (fde < in->eh_frame_vaddr || fde - in->eh_frame_vaddr >= in->eh_frame_len)
		return -1;
	return (int64_t)(fde - in->eh_frame_vaddr);
}

/* Every FDE of s in turn (a section without a search table). */
static int scan_rule(const struct sec *s, uint64_t pc, unsigned reg, struct cie *c,
		     struct exec *x, struct cfi_reg_state *xr)
{
	uint64_t off = 0, cie_at = 0;

	while (off < s->len) {
		const uint8_t *body, *end;
		uint64_t id;
		bool is64;
		int rc;

		if (entry_header(s, off, &id, &is64, &body, &end))
			break; /* the terminator, or no length to go on by */
		rc = fde_rule(s, off, pc, reg, c, &cie_at, x, xr);
		if (rc)
			return rc;
		off = (uint64_t)(end - s->base);
	}
	return 0;
}

int cfi__reg_rule(const struct cfi_input *in, uint64_t pc, unsigned reg,
		  struct cfi_reg_rule *out)
{
	struct {
		struct exec x;
		struct cie c;
	} *w = calloc(1, sizeof(*w)); /* (large: not on the stack) */
	struct cfi_reg_state xr;
	int64_t off;
	int rc = 0;

	if (!w)
		return -ENOMEM;
	if (in->eh_frame && in->eh_frame_len) {
		struct sec s = { in->eh_frame, in->eh_frame_len, in->eh_frame_vaddr, true, in };
		uint64_t cie_at = 0;

		off = hdr_fde(in, pc);
		rc = off >= 0 ? fde_rule(&s, (uint64_t)off, pc, reg, &w->c, &cie_at, &w->x, &xr)
			      : scan_rule(&s, pc, reg, &w->c, &w->x, &xr);
	}
	if (!rc && in->debug_frame && in->debug_frame_len) {
		struct sec s = { in->debug_frame, in->debug_frame_len, 0, false, in };

		rc = scan_rule(&s, pc, reg, &w->c, &w->x, &xr);
	}
	free(w);
	if (rc < 0)
		return rc;
	if (!rc)
		return -ENOENT;
	switch (xr.rule) {
	case CFI_RULE_UNSET:
	case CFI_RULE_SAME:
		*out = (struct cfi_reg_rule){ CFI_REG_SAME, 0 };
		break;
	case CFI_RULE_OFFSET:
		*out = (struct cfi_reg_rule){ CFI_REG_AT_CFA, xr.off };
		break;
	case CFI_RULE_VAL_OFFSET:
		*out = (struct cfi_reg_rule){ CFI_REG_CFA_PLUS, xr.off };
		break;
	default:
		*out = (struct cfi_reg_rule){ CFI_REG_OTHER, 0 };
		break;
	}
	return 0;
}
