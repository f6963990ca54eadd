// SPDX-License-Identifier: MIT
/*
 * The CFA instruction interpreter: runs a CIE's initial instructions or
 * an FDE's, and hands each row (CFA, rbp and return-address rules) to the
 * walk's callbacks. DWARF 5 section 6.4.2; gas's gen-sframe.c for when a
 * new SFrame row starts. Every operand read is bounds-checked
 * (cfi_read.h); every multiplication by an alignment factor is checked
 * for overflow.
 */
#include "unwind/cfi_exec.h"

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
/* More rows than bytes in any sane function: stop absurd inputs early. */
#define ROWS_MAX (1u << 20)

static struct cfi_reg_state *exec_reg(struct exec *x, uint64_t reg)
{
	if (reg == REG_FP)
		return &x->cur.fp;
	if (reg == x->cie->ra_col)
		return &x->cur.ra;
	if (x->xr_reg1 && reg == x->xr_reg1 - 1)
		return &x->cur.xr;
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
	if (x->xr_reg1 && reg == x->xr_reg1 - 1)
		return &x->init->xr;
	return &unset;
}

int cfi_exec__emit(struct exec *x)
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
		int err = cfi_exec__emit(x);
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

int cfi_exec__run(struct exec *x, const uint8_t *p, const uint8_t *end)
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

void cfi_exec__begin_fde(struct exec *x, const struct sec *s,
			 const struct cie *c, uint64_t pc_begin,
			 uint64_t pc_range, const struct cfi_walk_ops *ops,
			 void *ctx)
{
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
	x->xr_reg1 = 0;
	x->ops = ops;
	x->ctx = ctx;
}
