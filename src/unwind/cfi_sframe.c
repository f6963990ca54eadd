// SPDX-License-Identifier: MIT
/*
 * DWARF CFI -> an SFrame table (x86-64), then sframe_encode().
 *
 * cfi__walk (cfi_parse.c) hands over each FDE's rows; each becomes one
 * SFrame row (cfi_row.c) and is staged until the FDE ends, when its runs
 * of rows become functions: PCINC for ordinary rows, PCMASK for the PLT
 * expression. PLT sections no FDE covers get their known rows. Rows start
 * where gas would start them (see cfi_exec.c), so a table derived from
 * gas's .eh_frame equals gas's own .sframe. Also the names of the
 * counters and their printing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_row.h"
#include "util.h"

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
	P(rows_expr);
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
		if (cfi_row__is_flex(&c->rows[i]))
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

	s.kind = cfi_row__convert(&c->fde, regs, &s.row, &s.ps, &s.nr);
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
	if (cfi_row__is_flex(&s->row))
		st->rows_flex++;
	if (cfi_row__has_expr(&s->row))
		st->rows_expr++;
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
				if (!cfi_row__is_flex(w))
					continue;
				if (stats)
					stats->rows_expr -= cfi_row__has_expr(w);
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
