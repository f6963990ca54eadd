// SPDX-License-Identifier: MIT
/*
 * One DWARF CFI row -> one SFrame row (x86-64).
 *
 * What a plain SFrame row says on AMD64: CFA = rsp|rbp + off, RA at the
 * fixed CFA-8, rbp saved at CFA+off or unchanged. What it cannot say
 * becomes a v3 flexible rule where one fits (CFA from another register,
 * RA saved elsewhere than CFA-8,
 * `DW_OP_bregN off [; DW_OP_deref]` expressions: DRAP realignment, signal
 * frames; RA or rbp kept in another register), the x86-64 PLT CFA
 * expression becomes a PCMASK row (ROW_PLT), any other valid DWARF
 * expression a rule naming it (dwexpr.h: the unwinder evaluates it; no
 * SFrame can say it, so it lives only in derived tables), and everything
 * else a NO_RULE row that leaves its range to the unwinder's fallback.
 * Expressions are read with the bounds-checked reader of cfi_read.h.
 */
#include <string.h>

#include "unwind/cfi_read.h"
#include "unwind/dwexpr.h"
#include "unwind/cfi_row.h"

/* Highest DWARF register a flexible rule may name: the 16 GPRs. */
#define REG_FLEX_MAX 15

/* DW_OP_* used by the expression shapes recognised here. */
enum {
	OP_deref = 0x06,
	OP_const1u = 0x08,
	OP_and = 0x1a,
	OP_plus = 0x22,
	OP_shl = 0x24,
	OP_ge = 0x2a,
	OP_lit0 = 0x30,
	OP_lit31 = 0x4f,
	OP_breg0 = 0x70,
	OP_breg31 = 0x8f,
	OP_bregx = 0x92,
};

/* ---- expression shapes ------------------------------------------------ */

/* DW_OP_bregN off / DW_OP_bregx N off. */
static bool xr_breg(struct rd *r, uint64_t *reg, int64_t *off)
{
	if (r->p >= r->end)
		return false;
	uint8_t op = *r->p++;
	if (op >= OP_breg0 && op <= OP_breg31)
		*reg = op - OP_breg0;
	else if (op != OP_bregx || !rd_uleb(r, reg))
		return false;
	return rd_sleb(r, off);
}

/* DW_OP_litN or DW_OP_const1u N. */
static bool xr_small(struct rd *r, unsigned *v)
{
	if (r->p >= r->end)
		return false;
	uint8_t op = *r->p++;
	if (op >= OP_lit0 && op <= OP_lit31) {
		*v = op - OP_lit0;
		return true;
	}
	if (op == OP_const1u && r->p < r->end) {
		*v = *r->p++;
		return true;
	}
	return false;
}

static bool xr_op(struct rd *r, uint8_t op)
{
	if (r->p >= r->end || *r->p != op)
		return false;
	r->p++;
	return true;
}

/*
 * `DW_OP_bregN off` (*deref false) or `DW_OP_bregN off; DW_OP_deref`
 * (*deref true), nothing else.
 */
static bool expr_breg(const uint8_t *e, uint32_t n, uint64_t *reg, int64_t *off,
		      bool *deref)
{
	struct rd r = { e, e + n };
	if (!e || !xr_breg(&r, reg, off))
		return false;
	*deref = xr_op(&r, OP_deref);
	return r.p == r.end;
}

/*
 * The x86-64 PLT CFA expression ld writes (bfd/elf64-x86-64.c):
 * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11
 * (10 or 9 in other PLT layouts); DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0).
 */
static bool expr_plt(const uint8_t *e, uint32_t n, struct plt_shape *ps)
{
	struct rd r = { e, e + n };
	uint64_t reg;
	int64_t off, rip_off;
	unsigned mask, at, sh;

	if (!e || !xr_breg(&r, &reg, &off) || reg != REG_SP)
		return false;
	if (!xr_breg(&r, &reg, &rip_off) || reg != REG_RA || rip_off != 0)
		return false;
	if (!xr_small(&r, &mask) || !xr_op(&r, OP_and) || !xr_small(&r, &at) ||
	    !xr_op(&r, OP_ge) || !xr_small(&r, &sh) || !xr_op(&r, OP_shl) ||
	    !xr_op(&r, OP_plus) || r.p != r.end)
		return false;
	/* rep_size is one byte in SFrame; the mask must be 2^k - 1. */
	if (mask == 0 || mask > 127 || (mask & (mask + 1)) || at > mask ||
	    sh > 7 || off < 0 || off > INT32_MAX - 256)
		return false;
	*ps = (struct plt_shape){ off, mask + 1, at, 1u << sh };
	return true;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * RA or rbp kept in another register (glibc's __longjmp/setcontext: rip in
 * rdx), saved at bregN+off, or whose value is *(bregN+off): SFrame v3
 * flexible rules. False for any rule not of these forms, or out of range.
 */
static bool flex_rule(const struct cfi_reg_state *r, struct sframe_rule *out)
{
	uint64_t reg;
	int64_t off;
	bool deref;
	uint32_t id;

	switch (r->rule) {
	case CFI_RULE_REGISTER:
		if (r->reg > REG_FLEX_MAX)
			return false;
		*out = rule(SFRAME_RULE_REG, r->reg, 0);
		return true;
	case CFI_RULE_EXPR:
	case CFI_RULE_VAL_EXPR:
		/* saved at bregN+off, or value *(bregN+off): both REG_DEREF */
		if (expr_breg(r->expr, r->expr_len, &reg, &off, &deref) &&
		    deref == (r->rule == CFI_RULE_VAL_EXPR) &&
		    reg <= REG_FLEX_MAX && fits32(off)) {
			*out = rule(SFRAME_RULE_REG_DEREF, reg, off);
			return true;
		}
		/* any other shape: the expression itself (the CFA pushed) */
		id = dwexpr__intern(r->expr, r->expr_len);
		if (!id)
			return false;
		*out = rule(r->rule == CFI_RULE_EXPR ? SFRAME_RULE_EXPR : SFRAME_RULE_VAL_EXPR,
			    0, id);
		return true;
	default:
		return false;
	}
}

int cfi_row__convert(const struct cfi_fde_info *fde, const struct cfi_regs *g,
		     struct sframe_row *out, struct plt_shape *ps, int *nr)
{
	uint64_t reg;
	int64_t off;
	bool deref;
	int kind = ROW_NORMAL;

	*nr = -1;
	memset(out, 0, sizeof(*out));

	/* CFA */
	switch (g->cfa.kind) {
	case CFI_CFA_REG:
		if (g->cfa.reg > REG_FLEX_MAX) {
			*nr = CFI_NR_CFA_REGISTER;
			goto no_rule;
		}
		if (!fits32(g->cfa.off)) {
			*nr = CFI_NR_OFFSET_RANGE;
			goto no_rule;
		}
		out->cfa = rule(SFRAME_RULE_REG, g->cfa.reg, g->cfa.off);
		break;
	case CFI_CFA_EXPR:
		if (expr_plt(g->cfa.expr, g->cfa.expr_len, ps)) {
			kind = ROW_PLT;
			out->cfa = rule(SFRAME_RULE_REG, REG_SP, ps->base);
			break;
		}
		if (expr_breg(g->cfa.expr, g->cfa.expr_len, &reg, &off, &deref) &&
		    reg <= REG_FLEX_MAX) {
			if (!fits32(off)) {
				*nr = CFI_NR_OFFSET_RANGE;
				goto no_rule;
			}
			out->cfa = rule(deref ? SFRAME_RULE_REG_DEREF : SFRAME_RULE_REG,
					reg, off);
			break;
		}
		/* OpenSSL's *(rsp+40)+8, its *(rsp+8+8*r9)+8, ...: the
		 * expression itself, evaluated by the unwinder */
		if ((reg = dwexpr__intern(g->cfa.expr, g->cfa.expr_len))) {
			out->cfa = rule(SFRAME_RULE_VAL_EXPR, 0, reg);
			break;
		}
		*nr = CFI_NR_CFA_EXPRESSION;
		goto no_rule;
	default:
		*nr = CFI_NR_CFA_UNDEFINED;
		goto no_rule;
	}

	/* RA: SFrame's AMD64 RA is at the fixed CFA-8. */
	if (fde->ra_column != REG_RA) {
		*nr = CFI_NR_RA_COLUMN;
		goto no_rule;
	}
	switch (g->ra.rule) {
	case CFI_RULE_OFFSET:
		/* Not at the fixed CFA-8 (glibc's setcontext: CFA+168): v3 flexible. */
		if (!fits32(g->ra.off)) {
			*nr = CFI_NR_RA_OFFSET;
			goto no_rule;
		}
		out->ra = rule(SFRAME_RULE_CFA_DEREF, 0, g->ra.off);
		break;
	case CFI_RULE_UNDEFINED:
		out->ra = rule(SFRAME_RULE_UNDEFINED, 0, 0);
		break;
	default:
		if (!flex_rule(&g->ra, &out->ra)) {
			*nr = CFI_NR_RA_RULE;
			goto no_rule;
		}
		break;
	}

	/* FP */
	switch (g->fp.rule) {
	case CFI_RULE_UNSET:
	case CFI_RULE_SAME:
	case CFI_RULE_UNDEFINED: /* outermost frames: nothing to restore */
		out->fp = rule(SFRAME_RULE_NONE, 0, 0);
		break;
	case CFI_RULE_OFFSET:
		if (!fits32(g->fp.off)) {
			*nr = CFI_NR_OFFSET_RANGE;
			goto no_rule;
		}
		out->fp = rule(SFRAME_RULE_CFA_DEREF, 0, g->fp.off);
		break;
	default:
		if (!flex_rule(&g->fp, &out->fp)) {
			*nr = CFI_NR_FP_RULE;
			goto no_rule;
		}
		break;
	}
	/*
	 * An outermost frame: SFrame's "RA undefined" row carries no offsets
	 * at all, so nothing else of the row survives encoding either.
	 */
	if (out->ra.kind == SFRAME_RULE_UNDEFINED) {
		uint32_t start = out->start;
		memset(out, 0, sizeof(*out));
		out->start = start;
		out->ra.kind = SFRAME_RULE_UNDEFINED;
		return ROW_NORMAL;
	}
	return kind;

no_rule:
	out->cfa = rule(SFRAME_RULE_NO_RULE, 0, 0);
	out->ra = out->cfa;
	out->fp = out->cfa;
	return ROW_NORMAL;
}

bool cfi_row__is_flex(const struct sframe_row *r)
{
	if (r->cfa.kind == SFRAME_RULE_NO_RULE)
		return false;
	return (r->cfa.kind == SFRAME_RULE_REG && r->cfa.reg != REG_SP &&
		r->cfa.reg != REG_FP) ||
	       r->cfa.kind == SFRAME_RULE_REG_DEREF ||
	       r->ra.kind == SFRAME_RULE_REG_DEREF ||
	       r->fp.kind == SFRAME_RULE_REG_DEREF ||
	       r->ra.kind == SFRAME_RULE_REG || r->fp.kind == SFRAME_RULE_REG ||
	       (r->ra.kind == SFRAME_RULE_CFA_DEREF && r->ra.off != -8) ||
	       cfi_row__has_expr(r);
}

static bool is_expr(const struct sframe_rule *r)
{
	return r->kind == SFRAME_RULE_EXPR || r->kind == SFRAME_RULE_VAL_EXPR;
}

bool cfi_row__has_expr(const struct sframe_row *r)
{
	return is_expr(&r->cfa) || is_expr(&r->ra) || is_expr(&r->fp);
}
