// SPDX-License-Identifier: MIT
/*
 * DWARF CFI rows -> SFrame rows (x86-64), then sframe_encode().
 *
 * What a plain SFrame row says on AMD64: CFA = rsp|rbp + off, RA at the
 * fixed CFA-8, rbp saved at CFA+off or unchanged. What it cannot say
 * becomes a v3 flexible rule where one fits (CFA from another register,
 * RA saved elsewhere than CFA-8,
 * `DW_OP_bregN off [; DW_OP_deref]` expressions: DRAP realignment, signal
 * frames; RA or rbp kept in another register), the x86-64 PLT CFA
 * expression becomes a PCMASK function, and
 * everything else a NO_RULE row that leaves its range to the unwinder's
 * fallback. Rows start where gas would start them (see cfi_parse.c), so a
 * table derived from gas's .eh_frame equals gas's own .sframe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "cfi_int.h"
#include "util.h"

#define REG_FP SFRAME_REG_AMD64_BP
#define REG_SP SFRAME_REG_AMD64_SP
#define REG_RA SFRAME_REG_AMD64_RA
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

static const char *const reject_names[CFI_REJ__COUNT] = {
	[CFI_REJ_TRUNCATED] = "reject_truncated",
	[CFI_REJ_LENGTH] = "reject_length",
	[CFI_REJ_CIE_POINTER] = "reject_cie_pointer",
	[CFI_REJ_CIE_VERSION] = "reject_cie_version",
	[CFI_REJ_AUGMENTATION] = "reject_augmentation",
	[CFI_REJ_ENCODING] = "reject_encoding",
	[CFI_REJ_POINTER] = "reject_pointer",
	[CFI_REJ_RANGE] = "reject_range",
	[CFI_REJ_OPCODE] = "reject_opcode",
	[CFI_REJ_LOCATION] = "reject_location",
	[CFI_REJ_STATE_STACK] = "reject_state_stack",
	[CFI_REJ_CFA] = "reject_cfa",
	[CFI_REJ_ROWS] = "reject_rows",
};

static const char *const norule_names[CFI_NR__COUNT] = {
	[CFI_NR_CFA_UNDEFINED] = "no_rule_cfa_undefined",
	[CFI_NR_CFA_EXPRESSION] = "no_rule_cfa_expression",
	[CFI_NR_CFA_REGISTER] = "no_rule_cfa_register",
	[CFI_NR_OFFSET_RANGE] = "no_rule_offset_range",
	[CFI_NR_RA_COLUMN] = "no_rule_ra_column",
	[CFI_NR_RA_OFFSET] = "no_rule_ra_offset",
	[CFI_NR_RA_RULE] = "no_rule_ra_rule",
	[CFI_NR_FP_RULE] = "no_rule_fp_rule",
	[CFI_NR_PLT_ALIGN] = "no_rule_plt_align",
	[CFI_NR_NEEDS_V3] = "no_rule_needs_v3",
};

const char *cfi_reject__name(int reason)
{
	if (reason < 0 || reason >= CFI_REJ__COUNT)
		return "reject_unknown";
	return reject_names[reason];
}

const char *cfi_norule__name(int reason)
{
	if (reason < 0 || reason >= CFI_NR__COUNT)
		return "no_rule_unknown";
	return norule_names[reason];
}

void cfi_stats__print(const struct cfi_stats *st, FILE *f)
{
#define P(x) fprintf(f, "%s: %llu\n", #x, (unsigned long long)st->x)
	P(eh_frame_bytes);
	P(debug_frame_bytes);
	P(cies);
	P(fdes);
	P(fdes_converted);
	P(fdes_rejected);
	P(fdes_empty);
	P(funcs);
	P(funcs_overlap);
	P(funcs_far);
	P(rows);
	P(rows_flex);
	P(rows_no_rule);
	P(rows_ra_undefined);
	P(pcmask_funcs);
	P(plt_synthesized);
	P(signal_funcs);
#undef P
	for (int i = 0; i < CFI_REJ__COUNT; i++)
		if (st->reject[i])
			fprintf(f, "%s: %llu\n", reject_names[i],
				(unsigned long long)st->reject[i]);
	for (int i = 0; i < CFI_NR__COUNT; i++)
		if (st->no_rule[i])
			fprintf(f, "%s: %llu\n", norule_names[i],
				(unsigned long long)st->no_rule[i]);
}

/* ---- expression shapes ------------------------------------------------ */

struct xr {
	const uint8_t *p, *end;
};

static bool xr_uleb(struct xr *r, uint64_t *v)
{
	return cfi__uleb(&r->p, r->end, v);
}

static bool xr_sleb(struct xr *r, int64_t *v)
{
	return cfi__sleb(&r->p, r->end, v);
}

/* DW_OP_bregN off / DW_OP_bregx N off. */
static bool xr_breg(struct xr *r, uint64_t *reg, int64_t *off)
{
	if (r->p >= r->end)
		return false;
	uint8_t op = *r->p++;
	if (op >= OP_breg0 && op <= OP_breg31)
		*reg = op - OP_breg0;
	else if (op != OP_bregx || !xr_uleb(r, reg))
		return false;
	return xr_sleb(r, off);
}

/* DW_OP_litN or DW_OP_const1u N. */
static bool xr_small(struct xr *r, unsigned *v)
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

static bool xr_op(struct xr *r, uint8_t op)
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
	struct xr r = { e, e + n };
	if (!e || !xr_breg(&r, reg, off))
		return false;
	*deref = xr_op(&r, OP_deref);
	return r.p == r.end;
}

struct plt_shape {
	int64_t base;	  /* CFA = sp + base ...          */
	unsigned rep;	  /* ... + add when pc % rep >= at */
	unsigned at, add;
};

/*
 * The x86-64 PLT CFA expression ld writes (bfd/elf64-x86-64.c):
 * DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11
 * (10 or 9 in other PLT layouts); DW_OP_ge; DW_OP_lit3; DW_OP_shl;
 * DW_OP_plus: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0).
 */
static bool expr_plt(const uint8_t *e, uint32_t n, struct plt_shape *ps)
{
	struct xr r = { e, e + n };
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

/* ---- one DWARF row -> one SFrame row ---------------------------------- */

enum { ROW_NORMAL = 0, ROW_PLT = 1 };

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static struct sframe_rule rule(uint8_t kind, uint64_t reg, int64_t off)
{
	return (struct sframe_rule){ .kind = kind, .reg = (uint8_t)reg,
				     .off = (int32_t)off };
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

	switch (r->rule) {
	case CFI_RULE_REGISTER:
		if (r->reg > REG_FLEX_MAX)
			return false;
		*out = rule(SFRAME_RULE_REG, r->reg, 0);
		return true;
	case CFI_RULE_EXPR:
	case CFI_RULE_VAL_EXPR:
		/* saved at bregN+off, or value *(bregN+off): both REG_DEREF */
		if (!expr_breg(r->expr, r->expr_len, &reg, &off, &deref) ||
		    deref != (r->rule == CFI_RULE_VAL_EXPR) ||
		    reg > REG_FLEX_MAX || !fits32(off))
			return false;
		*out = rule(SFRAME_RULE_REG_DEREF, reg, off);
		return true;
	default:
		return false;
	}
}

/*
 * Convert g into *out. Returns ROW_NORMAL or ROW_PLT (with *ps), and sets
 * *nr to a CFI_NR_* reason (out all NO_RULE) or -1.
 */
static int row_convert(const struct cfi_fde_info *fde, const struct cfi_regs *g,
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

static bool row_is_flex(const struct sframe_row *r)
{
	if (r->cfa.kind == SFRAME_RULE_NO_RULE)
		return false;
	return (r->cfa.kind == SFRAME_RULE_REG && r->cfa.reg != REG_SP &&
		r->cfa.reg != REG_FP) ||
	       r->cfa.kind == SFRAME_RULE_REG_DEREF ||
	       r->ra.kind == SFRAME_RULE_REG_DEREF ||
	       r->fp.kind == SFRAME_RULE_REG_DEREF ||
	       r->ra.kind == SFRAME_RULE_REG || r->fp.kind == SFRAME_RULE_REG ||
	       (r->ra.kind == SFRAME_RULE_CFA_DEREF && r->ra.off != -8);
}

/* ---- collecting functions --------------------------------------------- */

struct fn {
	struct sframe_func f;
	size_t first; /* index of its first row in conv.rows */
	size_t seq;   /* order of appearance: earlier wins an overlap */
};

struct staged {
	struct sframe_row row;
	struct plt_shape ps;
	int kind;
	int nr;
};

struct conv {
	struct cfi_stats *st;
	struct fn *fns;
	size_t nr_fns, cap_fns;
	struct sframe_row *rows;
	size_t nr_rows, cap_rows;
	struct staged *stage;
	size_t nr_stage, cap_stage;
	struct cfi_fde_info fde;
};

static struct sframe_row *conv_add_row(struct conv *c)
{
	if (util__grow((void **)&c->rows, &c->cap_rows, c->nr_rows + 1, sizeof(*c->rows)))
		return NULL;
	return &c->rows[c->nr_rows++];
}

/* A function over [start, start+size) whose rows are the last nrows added. */
static int conv_add_fn(struct conv *c, uint64_t start, uint64_t size,
		       size_t first, uint8_t pc_type, uint8_t rep, bool signal)
{
	if (util__grow((void **)&c->fns, &c->cap_fns, c->nr_fns + 1, sizeof(*c->fns)))
		return -ENOMEM;
	struct fn *f = &c->fns[c->nr_fns];
	memset(f, 0, sizeof(*f));
	f->f.start = start;
	f->f.size = (uint32_t)size;
	f->f.num_rows = (uint32_t)(c->nr_rows - first);
	f->f.pc_type = pc_type;
	f->f.rep_size = rep;
	f->f.flags = signal ? SFRAME_FUNC_SIGNAL : 0;
	for (size_t i = first; i < c->nr_rows; i++)
		if (row_is_flex(&c->rows[i]))
			f->f.flags |= SFRAME_FUNC_FLEX;
	f->first = first;
	f->seq = c->nr_fns;
	c->nr_fns++;
	return 0;
}

static int cb_fde_begin(void *ctx, const struct cfi_fde_info *fde)
{
	struct conv *c = ctx;
	c->fde = *fde;
	c->nr_stage = 0;
	return 0;
}

static int cb_row(void *ctx, uint64_t loc, const struct cfi_regs *regs)
{
	struct conv *c = ctx;
	struct staged s;

	s.kind = row_convert(&c->fde, regs, &s.row, &s.ps, &s.nr);
	s.row.start = (uint32_t)loc; /* loc < pc_range <= UINT32_MAX */
	/* A zero advance: the later row wins at that address. */
	if (c->nr_stage && c->stage[c->nr_stage - 1].row.start == s.row.start) {
		c->stage[c->nr_stage - 1] = s;
		return 0;
	}
	if (util__grow((void **)&c->stage, &c->cap_stage, c->nr_stage + 1,
		       sizeof(*c->stage)))
		return -ENOMEM;
	c->stage[c->nr_stage++] = s;
	return 0;
}

static void count_row(struct cfi_stats *st, const struct staged *s)
{
	st->rows++;
	if (s->nr >= 0) {
		st->rows_no_rule++;
		st->no_rule[s->nr]++;
		return;
	}
	if (row_is_flex(&s->row))
		st->rows_flex++;
	if (s->row.ra.kind == SFRAME_RULE_UNDEFINED)
		st->rows_ra_undefined++;
}

/* The PCMASK rows of a PLT shape, added to c->rows. */
static int add_plt_rows(struct conv *c, const struct plt_shape *ps,
			const struct sframe_rule *fp)
{
	struct sframe_row *r = conv_add_row(c);
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->cfa = rule(SFRAME_RULE_REG, REG_SP, ps->base);
	r->ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	r->fp = *fp;
	if (ps->at == 0) {
		r->cfa.off += ps->add;
		return 0;
	}
	struct sframe_row *r2 = conv_add_row(c);
	if (!r2)
		return -ENOMEM;
	*r2 = c->rows[c->nr_rows - 2];
	r2->start = ps->at;
	r2->cfa.off += ps->add;
	return 0;
}

/*
 * Turn the staged rows of one FDE into functions: runs of ordinary rows
 * make a PCINC function; a PLT-expression row makes a PCMASK function
 * over its own range.
 */
static int cb_fde_end(void *ctx, bool ok)
{
	struct conv *c = ctx;
	const struct cfi_fde_info *fde = &c->fde;
	int err;

	if (!ok || !c->nr_stage)
		return 0;
	for (size_t i = 0; i < c->nr_stage; i++) {
		struct staged *s = &c->stage[i];
		if (s->kind != ROW_PLT)
			continue;
		uint64_t at = fde->pc_begin + s->row.start;
		if (at % s->ps.rep) {
			/* Entries must line up with rep_size for PCMASK lookups. */
			s->kind = ROW_NORMAL;
			s->nr = CFI_NR_PLT_ALIGN;
			s->row.cfa = rule(SFRAME_RULE_NO_RULE, 0, 0);
			s->row.ra = s->row.fp = s->row.cfa;
		}
	}

	size_t i = 0;
	while (i < c->nr_stage) {
		size_t j = i;
		uint64_t seg_start = c->stage[i].row.start, seg_end;
		if (c->stage[i].kind == ROW_PLT) {
			j = i + 1;
			seg_end = j < c->nr_stage ? c->stage[j].row.start : fde->pc_range;
			size_t first = c->nr_rows;
			err = add_plt_rows(c, &c->stage[i].ps, &c->stage[i].row.fp);
			if (err)
				return err;
			err = conv_add_fn(c, fde->pc_begin + seg_start,
					  seg_end - seg_start, first, SFRAME_PC_MASK,
					  (uint8_t)c->stage[i].ps.rep, fde->signal);
			if (err)
				return err;
			c->st->pcmask_funcs++;
			count_row(c->st, &c->stage[i]);
			i = j;
			continue;
		}
		while (j < c->nr_stage && c->stage[j].kind != ROW_PLT)
			j++;
		seg_end = j < c->nr_stage ? c->stage[j].row.start : fde->pc_range;
		size_t first = c->nr_rows;
		for (size_t k = i; k < j; k++) {
			struct sframe_row *r = conv_add_row(c);
			if (!r)
				return -ENOMEM;
			*r = c->stage[k].row;
			r->start -= (uint32_t)seg_start;
			count_row(c->st, &c->stage[k]);
		}
		err = conv_add_fn(c, fde->pc_begin + seg_start, seg_end - seg_start,
				  first, SFRAME_PC_INC, 0, fde->signal);
		if (err)
			return err;
		i = j;
	}
	if (fde->signal)
		c->st->signal_funcs++;
	return 0;
}

static bool covered(const struct conv *c, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < c->nr_fns; i++) {
		const struct sframe_func *f = &c->fns[i].f;
		if (f->start < hi && lo < f->start + f->size)
			return true;
	}
	return false;
}

static int add_fixed_row(struct conv *c, uint32_t start, int32_t cfa_off)
{
	struct sframe_row *r = conv_add_row(c);
	if (!r)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->start = start;
	r->cfa = rule(SFRAME_RULE_REG, REG_SP, cfa_off);
	r->ra = rule(SFRAME_RULE_CFA_DEREF, 0, -8);
	return 0;
}

/*
 * Known rows of PLT sections no FDE covers (layouts from ld's
 * elf_x86_64_lazy_plt / lazy_ibt_plt / non_lazy_plt).
 */
static int synth_plt(struct conv *c, const struct cfi_plt *p)
{
	uint64_t ent = p->entsize ? p->entsize : 16;
	int err;

	if (!p->size || p->size > UINT32_MAX || p->vaddr + p->size < p->vaddr ||
	    p->kind == CFI_PLT_UNKNOWN || covered(c, p->vaddr, p->vaddr + p->size))
		return 0;
	if (p->kind == CFI_PLT_DIRECT) {
		size_t first = c->nr_rows;
		if ((err = add_fixed_row(c, 0, 8)))
			return err;
		err = conv_add_fn(c, p->vaddr, p->size, first, SFRAME_PC_INC, 0, false);
		if (!err)
			c->st->plt_synthesized++;
		return err;
	}
	if (p->kind != CFI_PLT_LAZY && p->kind != CFI_PLT_LAZY_IBT)
		return 0;
	if (ent != 16)
		return 0;
	/* PLT0: pushq GOT+8(%rip); jmp *GOT+16(%rip): entered with sp+16. */
	size_t first = c->nr_rows;
	if ((err = add_fixed_row(c, 0, 16)) || (err = add_fixed_row(c, 6, 24)))
		return err;
	uint64_t plt0 = p->size < 16 ? p->size : 16;
	if ((err = conv_add_fn(c, p->vaddr, plt0, first, SFRAME_PC_INC, 0, false)))
		return err;
	if (p->size > 16) {
		/* PLTn: [endbr64;] jmp *GOT(%rip) / pushq $n / jmp PLT0 */
		struct plt_shape ps = { 8, 16, p->kind == CFI_PLT_LAZY_IBT ? 9 : 11, 8 };
		struct sframe_rule none = { 0 };
		first = c->nr_rows;
		if ((err = add_plt_rows(c, &ps, &none)))
			return err;
		if ((err = conv_add_fn(c, p->vaddr + 16, p->size - 16, first,
				       SFRAME_PC_MASK, 16, false)))
			return err;
	}
	c->st->plt_synthesized++;
	return 0;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	if (x->f.start != y->f.start)
		return x->f.start < y->f.start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void cfi_table__release(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->funcs);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int cfi_derive(const struct cfi_input *in, struct cfi_table *out,
	       struct cfi_stats *stats)
{
	struct cfi_stats local;
	struct conv c = { 0 };
	static const struct cfi_walk_ops ops = { cb_fde_begin, cb_row, cb_fde_end };
	int err;

	if (!in || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	c.st = stats;
	if (in->nr_plt < 0 || in->nr_plt > (int)(sizeof(in->plt) / sizeof(in->plt[0])))
		return -EINVAL;

	err = cfi__walk(in, stats, &ops, &c);
	if (err)
		goto err_out;
	for (int i = 0; i < in->nr_plt; i++)
		if ((err = synth_plt(&c, &in->plt[i])))
			goto err_out;

	/* Sorted and non-overlapping, as an SFrame function index must be. */
	if (c.nr_fns)
		qsort(c.fns, c.nr_fns, sizeof(*c.fns), fn_cmp);
	size_t nf = 0, nrows = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < c.nr_fns; i++) {
		struct fn *f = &c.fns[i];
		if (nf && f->f.start < end) {
			stats->funcs_overlap++;
			continue;
		}
		end = f->f.start + f->f.size;
		nrows += f->f.num_rows;
		c.fns[nf++] = *f;
	}
	if (nf) {
		out->funcs = calloc(nf, sizeof(*out->funcs));
		out->rows = calloc(nrows ? nrows : 1, sizeof(*out->rows));
		if (!out->funcs || !out->rows) {
			err = -ENOMEM;
			goto err_out;
		}
	}
	size_t r = 0;
	for (size_t i = 0; i < nf; i++) {
		out->funcs[i] = c.fns[i].f;
		if (c.fns[i].f.num_rows)
			memcpy(&out->rows[r], &c.rows[c.fns[i].first],
			       c.fns[i].f.num_rows * sizeof(*out->rows));
		r += c.fns[i].f.num_rows;
	}
	out->nr_funcs = nf;
	out->nr_rows = r;
	stats->funcs = nf;
	err = 0;
err_out:
	if (err)
		cfi_table__release(out);
	free(c.fns);
	free(c.rows);
	free(c.stage);
	return err;
}

#define FAR_LIMIT ((int64_t)7 << 28) /* 1.75 GiB */

int cfi_to_sframe(const struct cfi_input *in,
		  const struct sframe_encode_opts *opts, void **out,
		  size_t *out_len, struct cfi_stats *stats)
{
	struct cfi_table t;
	int err;

	if (!in || !opts || !out || !out_len)
		return -EINVAL;
	*out = NULL;
	*out_len = 0;
	if (opts->abi != SFRAME_ABI_AMD64_LE)
		return -EOPNOTSUPP;
	err = cfi_derive(in, &t, stats);
	if (err)
		return err;
	/*
	 * SFrame stores function starts as int32 offsets from their FDE's own
	 * address in the section: keep a margin for the section's size.
	 */
	size_t nf = 0, nr = 0;
	for (size_t i = 0, r = 0; i < t.nr_funcs; r += t.funcs[i++].num_rows) {
		const struct sframe_func *f = &t.funcs[i];
		int64_t lo = (int64_t)(f->start - opts->section_vaddr);
		int64_t hi = (int64_t)(f->start + f->size - opts->section_vaddr);
		if (lo < -FAR_LIMIT || lo > FAR_LIMIT || hi < -FAR_LIMIT || hi > FAR_LIMIT) {
			if (stats)
				stats->funcs_far++;
			continue;
		}
		memmove(&t.rows[nr], &t.rows[r], f->num_rows * sizeof(*t.rows));
		nr += f->num_rows;
		t.funcs[nf++] = *f;
	}
	t.nr_funcs = nf;
	t.nr_rows = nr;
	if (stats)
		stats->funcs = nf;
	if (opts->version < 3) {
		/* v2 has no flexible FDEs: leave those ranges to the fallback. */
		for (size_t i = 0, r = 0; i < t.nr_funcs; r += t.funcs[i++].num_rows) {
			t.funcs[i].flags &= (uint8_t)~SFRAME_FUNC_FLEX;
			for (size_t j = r; j < r + t.funcs[i].num_rows; j++) {
				struct sframe_row *w = &t.rows[j];
				if (!row_is_flex(w))
					continue;
				w->cfa = rule(SFRAME_RULE_NO_RULE, 0, 0);
				w->ra = w->fp = w->cfa;
				if (stats) {
					stats->rows_flex--;
					stats->rows_no_rule++;
					stats->no_rule[CFI_NR_NEEDS_V3]++;
				}
			}
		}
	}
	if (!t.nr_funcs)
		err = -ENOENT;
	else
		err = sframe_encode(opts, t.funcs, t.nr_funcs, t.rows, t.nr_rows,
				    out, out_len);
	cfi_table__release(&t);
	return err;
}

/* ---- ELF glue ---------------------------------------------------------- */

int cfi_input_from_elf(Elf *e, struct cfi_input *in)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	struct cfi_plt *plt = NULL, *plt_sec = NULL;

	if (!e || !in)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		/* A separate debug file keeps the addresses, not the bytes. */
		if (sh.sh_type == SHT_NOBITS) {
			if (!strcmp(name, ".got"))
				in->got_vaddr = sh.sh_addr;
			else if (!strcmp(name, ".text"))
				in->text_vaddr = sh.sh_addr;
			continue;
		}
		bool is_eh = !strcmp(name, ".eh_frame");
		bool is_dbg = !strcmp(name, ".debug_frame");
		bool is_hdr = !strcmp(name, ".eh_frame_hdr");
		if (!strcmp(name, ".got"))
			in->got_vaddr = sh.sh_addr;
		else if (!strcmp(name, ".text"))
			in->text_vaddr = sh.sh_addr;
		else if ((!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			  !strcmp(name, ".plt.got")) && in->nr_plt < 4) {
			struct cfi_plt *p = &in->plt[in->nr_plt++];
			p->vaddr = sh.sh_addr;
			p->size = sh.sh_size;
			p->entsize = (uint32_t)sh.sh_entsize;
			p->kind = name[4] ? CFI_PLT_DIRECT : CFI_PLT_LAZY;
			if (!name[4])
				plt = p;
			if (!strcmp(name, ".plt.sec"))
				plt_sec = p;
		}
		if (!is_eh && !is_dbg && !is_hdr)
			continue;
		if (is_dbg && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			continue;
		if (is_eh) {
			in->eh_frame = d->d_buf;
			in->eh_frame_len = d->d_size;
			in->eh_frame_vaddr = sh.sh_addr;
		} else if (is_dbg) {
			in->debug_frame = d->d_buf;
			in->debug_frame_len = d->d_size;
		} else {
			in->eh_frame_hdr = d->d_buf;
			in->eh_frame_hdr_len = d->d_size;
			in->eh_frame_hdr_vaddr = sh.sh_addr;
		}
	}
	/* With IBT, .plt entries start with endbr64 and .plt.sec holds the jumps. */
	if (plt && plt_sec)
		plt->kind = CFI_PLT_LAZY_IBT;
	return in->eh_frame || in->debug_frame ? 0 : -ENOENT;
}
