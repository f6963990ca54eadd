// SPDX-License-Identifier: MIT
/*
 * DWARF CFI interpreter for .eh_frame and .debug_frame.
 *
 * References: DWARF 5 section 6.4 (call frame information), the LSB's
 * .eh_frame description (augmentations z/R/P/L/S, DW_EH_PE_* pointer
 * encodings), and gas's gen-sframe.c for when a new SFrame row starts.
 *
 * Every entry is parsed inside the bounds of its own length field, which
 * itself is checked against the section; every LEB128, block and pointer
 * read is bounds-checked. A bad FDE (or a bad CIE, for all of its FDEs)
 * is rejected with a counted reason; the walk goes on with the next entry
 * as long as the entry lengths still make sense.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_int.h"

/* DW_EH_PE_* (LSB, "DWARF Extensions": pointer encoding). */
enum {
	PE_absptr = 0x00,
	PE_uleb128 = 0x01,
	PE_udata2 = 0x02,
	PE_udata4 = 0x03,
	PE_udata8 = 0x04,
	PE_sleb128 = 0x09,
	PE_sdata2 = 0x0a,
	PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c,
	PE_pcrel = 0x10,
	PE_textrel = 0x20,
	PE_datarel = 0x30,
	PE_funcrel = 0x40,
	PE_aligned = 0x50,
	PE_indirect = 0x80,
	PE_omit = 0xff,
};

/* DW_CFA_* (DWARF 5, table 7.29, plus the GNU extensions). */
enum {
	CFA_advance_loc = 0x40,
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_MIPS_advance_loc8 = 0x1d,
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
};

#define REG_FP 6
/* Deep enough for any compiler; DWARF sets no limit. */
#define STATE_STACK_MAX 32
/* More rows than bytes in any sane function: stop absurd inputs early. */
#define ROWS_MAX (1u << 20)

/* A positive return is a reject reason + 1; negative is a hard error. */
#define REJ(r) ((r) + 1)

struct sec {
	const uint8_t *base;
	size_t len;
	uint64_t vaddr;
	bool is_eh;
	const struct cfi_input *in;
};

struct rd {
	const uint8_t *p, *end;
};

static bool rd_u8(struct rd *r, uint8_t *v)
{
	if (r->p >= r->end)
		return false;
	*v = *r->p++;
	return true;
}

static bool rd_uN(struct rd *r, unsigned n, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	*v = x;
	return true;
}

static bool rd_uleb(struct rd *r, uint64_t *v)
{
	return cfi__uleb(&r->p, r->end, v);
}

static bool rd_sleb(struct rd *r, int64_t *v)
{
	return cfi__sleb(&r->p, r->end, v);
}

/* Sign-extend the low n bytes of x. */
static int64_t sext(uint64_t x, unsigned n)
{
	unsigned s = 64 - 8 * n;
	return s ? (int64_t)(x << s) >> s : (int64_t)x;
}

/*
 * Read a DW_EH_PE-encoded pointer. `func` is the funcrel base (the FDE's
 * start, 0 while reading it). With need_value false the value is only
 * skipped, so an indirect personality pointer, say, costs nothing.
 * Returns 0 or a REJ() reason.
 */
static int rd_encoded(struct rd *r, const struct sec *s, uint8_t enc,
		      unsigned addr_size, uint64_t func, bool need_value,
		      uint64_t *out)
{
	uint64_t v = 0, base = 0;
	int64_t sv;

	if (enc == PE_omit)
		return REJ(CFI_REJ_ENCODING);
	if ((enc & 0x70) == PE_aligned) {
		/* Aligned to the address size in the section's address space. */
		uint64_t at = s->vaddr + (uint64_t)(r->p - s->base);
		uint64_t pad = (addr_size - (at % addr_size)) % addr_size;
		if ((uint64_t)(r->end - r->p) < pad)
			return REJ(CFI_REJ_TRUNCATED);
		r->p += pad;
		if ((enc & 0x0f) != PE_absptr)
			return REJ(CFI_REJ_ENCODING);
	}
	uint64_t field = s->vaddr + (uint64_t)(r->p - s->base);

	switch (enc & 0x0f) {
	case PE_absptr:
		if (!rd_uN(r, addr_size, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	case PE_uleb128:
		if (!rd_uleb(r, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	case PE_udata2:
	case PE_udata4:
	case PE_udata8: {
		unsigned n = 1u << (enc & 0x0f) >> 1; /* 2, 4, 8 */
		if (!rd_uN(r, n, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	}
	case PE_sleb128:
		if (!rd_sleb(r, &sv))
			return REJ(CFI_REJ_TRUNCATED);
		v = (uint64_t)sv;
		break;
	case PE_sdata2:
	case PE_sdata4:
	case PE_sdata8: {
		unsigned n = 1u << ((enc & 0x0f) - 8) >> 1;
		if (!rd_uN(r, n, &v))
			return REJ(CFI_REJ_TRUNCATED);
		v = (uint64_t)sext(v, n);
		break;
	}
	default:
		return REJ(CFI_REJ_ENCODING);
	}
	if (!need_value)
		return 0;

	switch (enc & 0x70) {
	case PE_absptr:
	case PE_aligned:
		break;
	case PE_pcrel:
		base = field;
		break;
	case PE_textrel:
		base = s->in->text_vaddr;
		if (!base)
			return REJ(CFI_REJ_POINTER);
		break;
	case PE_datarel:
		base = s->in->got_vaddr;
		if (!base)
			return REJ(CFI_REJ_POINTER);
		break;
	case PE_funcrel:
		base = func;
		break;
	default:
		return REJ(CFI_REJ_ENCODING);
	}
	/* The value would be a pointer read from the target's memory. */
	if (enc & PE_indirect)
		return REJ(CFI_REJ_POINTER);
	v += base;
	if (addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return 0;
}

struct cie {
	uint64_t off; /* offset of the CIE in its section */
	int rej;      /* 0, or REJ() reason every FDE using it gets */
	bool has_z, signal;
	uint8_t fde_enc, lsda_enc, addr_size;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_col;
	struct cfi_regs init; /* after the initial instructions */
};

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

/* The instruction interpreter's state for one CIE or FDE. */
struct exec {
	const struct sec *sec;
	const struct cie *cie;
	const struct cfi_regs *init; /* CIE state, for DW_CFA_restore; NULL in a CIE */
	struct cfi_regs cur;
	struct cfi_regs stack[STATE_STACK_MAX];
	int depth;
	uint64_t pc_begin, pc_range;
	uint64_t loc, row_start;
	uint32_t nrows;
	/*
	 * A row is written at an advance only when an instruction since the
	 * last one set the CFA, FP or RA rule, as gas's gen-sframe.c starts
	 * a new FRE only then; the last pending row is always written.
	 */
	bool dirty;
	/*
	 * gas restores rbp (DW_CFA_restore) to its rule in the function's
	 * first FRE, not in the CIE: they differ in split-off .cold parts,
	 * whose first row already has rbp saved. Done the same here, so the
	 * rows equal gas's; the slot gas points at still holds the value.
	 */
	bool have_first;
	struct cfi_reg_state first_fp;
	const struct cfi_walk_ops *ops;
	void *ctx;
};

static struct cfi_reg_state *exec_reg(struct exec *x, uint64_t reg)
{
	if (reg == REG_FP)
		return &x->cur.fp;
	if (reg == x->cie->ra_col)
		return &x->cur.ra;
	return NULL;
}

static const struct cfi_reg_state *init_reg(const struct exec *x, uint64_t reg)
{
	static const struct cfi_reg_state unset;
	if (!x->init)
		return &unset;
	if (reg == REG_FP)
		return &x->init->fp;
	if (reg == x->cie->ra_col)
		return &x->init->ra;
	return &unset;
}

static int exec_emit(struct exec *x)
{
	if (!x->ops || x->row_start >= x->pc_range)
		return 0;
	if (++x->nrows > ROWS_MAX)
		return REJ(CFI_REJ_ROWS);
	if (!x->have_first) {
		x->have_first = true;
		x->first_fp = x->cur.fp;
	}
	return x->ops->row(x->ctx, x->row_start, &x->cur);
}

static int exec_advance(struct exec *x, uint64_t newloc)
{
	if (!x->init) /* advancing in a CIE's initial instructions */
		return REJ(CFI_REJ_OPCODE);
	if (newloc < x->loc || newloc > x->pc_range)
		return REJ(CFI_REJ_LOCATION);
	if (x->dirty) {
		int err = exec_emit(x);
		if (err)
			return err;
		x->dirty = false;
	}
	x->loc = x->row_start = newloc;
	return 0;
}

static int exec_delta(struct exec *x, uint64_t delta)
{
	uint64_t d;
	if (__builtin_mul_overflow(delta, x->cie->code_align, &d) ||
	    d > x->pc_range - x->loc)
		return REJ(CFI_REJ_LOCATION);
	return exec_advance(x, x->loc + d);
}

static bool rd_block(struct rd *r, const uint8_t **p, uint32_t *len)
{
	uint64_t n;
	if (!rd_uleb(r, &n) || n > (uint64_t)(r->end - r->p))
		return false;
	*p = r->p;
	*len = (uint32_t)n;
	r->p += n;
	return true;
}

static int64_t mul_off(uint64_t u, int64_t f, bool *ovf)
{
	int64_t v = 0;
	if (u > INT64_MAX || __builtin_mul_overflow((int64_t)u, f, &v))
		*ovf = true;
	return v;
}

static int exec_set_reg(struct exec *x, uint64_t reg, uint8_t rule,
			int64_t off, uint64_t reg2, const uint8_t *e,
			uint32_t elen)
{
	struct cfi_reg_state *rs = exec_reg(x, reg);
	if (!rs)
		return 0;
	*rs = (struct cfi_reg_state){ .rule = rule, .off = off, .reg = reg2,
				      .expr = e, .expr_len = elen };
	x->dirty = true;
	return 0;
}

/* Run CFA instructions [p, end). 0, REJ(reason) or a callback error. */
static int exec_run(struct exec *x, const uint8_t *p, const uint8_t *end)
{
	struct rd r = { p, end };
	const struct cie *c = x->cie;

	while (r.p < r.end) {
		uint8_t op, b8;
		uint64_t reg, u, v;
		int64_t s;
		bool ovf = false;
		const uint8_t *e;
		uint32_t elen;
		int err = 0;

		rd_u8(&r, &op);
		switch (op & 0xc0) {
		case CFA_advance_loc:
			err = exec_delta(x, op & 0x3f);
			goto next;
		case CFA_offset:
			if (!rd_uleb(&r, &u))
				return REJ(CFI_REJ_TRUNCATED);
			s = mul_off(u, c->data_align, &ovf);
			if (ovf)
				return REJ(CFI_REJ_OPCODE);
			err = exec_set_reg(x, op & 0x3f, CFI_RULE_OFFSET, s, 0,
					   NULL, 0);
			goto next;
		case CFA_restore:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case CFA_nop:
			break;
		case CFA_set_loc: {
			uint8_t enc = x->sec->is_eh ? c->fde_enc : PE_absptr;
			err = rd_encoded(&r, x->sec, enc, c->addr_size,
					 x->pc_begin, true, &v);
			if (err)
				return err;
			if (v < x->pc_begin)
				return REJ(CFI_REJ_LOCATION);
			err = exec_advance(x, v - x->pc_begin);
			break;
		}
		case CFA_advance_loc1:
			if (!rd_u8(&r, &b8))
				return REJ(CFI_REJ_TRUNCATED);
			err = exec_delta(x, b8);
			break;
		case CFA_advance_loc2:
		case CFA_advance_loc4:
		case CFA_MIPS_advance_loc8:
			if (!rd_uN(&r, op == CFA_advance_loc2 ? 2 : op == CFA_advance_loc4 ? 4 : 8, &u))
				return REJ(CFI_REJ_TRUNCATED);
			err = exec_delta(x, u);
			break;
		case CFA_offset_extended:
		case CFA_val_offset:
		case CFA_GNU_negative_offset_extended:
			if (!rd_uleb(&r, &reg) || !rd_uleb(&r, &u))
				return REJ(CFI_REJ_TRUNCATED);
			s = mul_off(u, c->data_align, &ovf);
			if (ovf)
				return REJ(CFI_REJ_OPCODE);
			if (op == CFA_GNU_negative_offset_extended)
				s = -s;
			err = exec_set_reg(x, reg,
					   op == CFA_val_offset ? CFI_RULE_VAL_OFFSET : CFI_RULE_OFFSET,
					   s, 0, NULL, 0);
			break;
		case CFA_offset_extended_sf:
		case CFA_val_offset_sf:
			if (!rd_uleb(&r, &reg) || !rd_sleb(&r, &s))
				return REJ(CFI_REJ_TRUNCATED);
			if (__builtin_mul_overflow(s, c->data_align, &s))
				return REJ(CFI_REJ_OPCODE);
			err = exec_set_reg(x, reg,
					   op == CFA_val_offset_sf ? CFI_RULE_VAL_OFFSET : CFI_RULE_OFFSET,
					   s, 0, NULL, 0);
			break;
		case CFA_restore_extended:
			if (!rd_uleb(&r, &reg))
				return REJ(CFI_REJ_TRUNCATED);
restore: {
			struct cfi_reg_state *rs = exec_reg(x, reg);
			if (rs) {
				*rs = *init_reg(x, reg);
				if (reg == REG_FP && x->have_first)
					*rs = x->first_fp;
				x->dirty = true;
			}
			break;
		}
		case CFA_undefined:
		case CFA_same_value:
			if (!rd_uleb(&r, &reg))
				return REJ(CFI_REJ_TRUNCATED);
			err = exec_set_reg(x, reg,
					   op == CFA_undefined ? CFI_RULE_UNDEFINED : CFI_RULE_SAME,
					   0, 0, NULL, 0);
			break;
		case CFA_register:
			if (!rd_uleb(&r, &reg) || !rd_uleb(&r, &v))
				return REJ(CFI_REJ_TRUNCATED);
			err = exec_set_reg(x, reg, CFI_RULE_REGISTER, 0, v, NULL, 0);
			break;
		case CFA_remember_state:
			if (x->depth >= STATE_STACK_MAX)
				return REJ(CFI_REJ_STATE_STACK);
			x->stack[x->depth++] = x->cur;
			break;
		case CFA_restore_state:
			if (x->depth <= 0)
				return REJ(CFI_REJ_STATE_STACK);
			x->cur = x->stack[--x->depth];
			x->dirty = true;
			break;
		case CFA_def_cfa:
			if (!rd_uleb(&r, &reg) || !rd_uleb(&r, &u))
				return REJ(CFI_REJ_TRUNCATED);
			if (u > INT64_MAX)
				return REJ(CFI_REJ_OPCODE);
			x->cur.cfa = (struct cfi_cfa_state){ CFI_CFA_REG, reg, (int64_t)u, NULL, 0 };
			x->dirty = true;
			break;
		case CFA_def_cfa_sf:
			if (!rd_uleb(&r, &reg) || !rd_sleb(&r, &s))
				return REJ(CFI_REJ_TRUNCATED);
			if (__builtin_mul_overflow(s, c->data_align, &s))
				return REJ(CFI_REJ_OPCODE);
			x->cur.cfa = (struct cfi_cfa_state){ CFI_CFA_REG, reg, s, NULL, 0 };
			x->dirty = true;
			break;
		case CFA_def_cfa_register:
			if (!rd_uleb(&r, &reg))
				return REJ(CFI_REJ_TRUNCATED);
			/* Only meaningful on a register+offset CFA (DWARF 5, 6.4.2.2). */
			if (x->cur.cfa.kind == CFI_CFA_EXPR)
				return REJ(CFI_REJ_CFA);
			x->cur.cfa.kind = CFI_CFA_REG;
			x->cur.cfa.reg = reg;
			x->dirty = true;
			break;
		case CFA_def_cfa_offset:
		case CFA_def_cfa_offset_sf:
			if (op == CFA_def_cfa_offset) {
				if (!rd_uleb(&r, &u))
					return REJ(CFI_REJ_TRUNCATED);
				if (u > INT64_MAX)
					return REJ(CFI_REJ_OPCODE);
				s = (int64_t)u;
			} else {
				if (!rd_sleb(&r, &s))
					return REJ(CFI_REJ_TRUNCATED);
				if (__builtin_mul_overflow(s, c->data_align, &s))
					return REJ(CFI_REJ_OPCODE);
			}
			if (x->cur.cfa.kind != CFI_CFA_REG)
				return REJ(CFI_REJ_CFA);
			x->cur.cfa.off = s;
			x->dirty = true;
			break;
		case CFA_def_cfa_expression:
			if (!rd_block(&r, &e, &elen))
				return REJ(CFI_REJ_TRUNCATED);
			x->cur.cfa = (struct cfi_cfa_state){ CFI_CFA_EXPR, 0, 0, e, elen };
			x->dirty = true;
			break;
		case CFA_expression:
		case CFA_val_expression:
			if (!rd_uleb(&r, &reg) || !rd_block(&r, &e, &elen))
				return REJ(CFI_REJ_TRUNCATED);
			err = exec_set_reg(x, reg,
					   op == CFA_expression ? CFI_RULE_EXPR : CFI_RULE_VAL_EXPR,
					   0, 0, e, elen);
			break;
		case CFA_GNU_args_size:
			if (!rd_uleb(&r, &u))
				return REJ(CFI_REJ_TRUNCATED);
			break;
		default:
			return REJ(CFI_REJ_OPCODE);
		}
next:
		if (err)
			return err;
	}
	return 0;
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

/* Parse the CIE at `off` into c (c->rej set on failure). 0 or -errno. */
static int cie_parse(const struct sec *s, uint64_t off, struct cie *c)
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
	struct exec x = { .sec = s, .cie = c, .pc_range = ~(uint64_t)0 };
	err = exec_run(&x, r.p, r.end);
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
		int err = cie_parse(s, off, c);
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
	x->sec = s;
	x->cie = c;
	x->init = &c->init;
	x->cur = c->init;
	x->depth = 0;
	x->pc_begin = pc_begin;
	x->pc_range = pc_range;
	x->loc = x->row_start = 0;
	x->nrows = 0;
	x->dirty = true;
	x->have_first = false;
	x->ops = w->ops;
	x->ctx = w->ctx;

	struct cfi_fde_info info = { pc_begin, pc_range, c->ra_col, c->signal };
	err = w->ops->fde_begin(w->ctx, &info);
	if (err)
		return err;
	err = exec_run(x, r.p, r.end);
	if (!err)
		err = exec_emit(x); /* the pending row, always (as gas does) */
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
