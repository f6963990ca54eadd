// SPDX-License-Identifier: MIT
/* Go binaries: names, stack switches and unwind rows from .gopclntab
 * (src/runtimes/go/goruntime.h), and Go's ops table (runtimes/runtime.h). */
#include "runtimes/go/goruntime.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "runtimes/runtime.h"
#include "unwind/sframe.h"
#include "symbols/symbolize.h"

int go_runtime__open(const struct elfread *e, struct gopclntab *t)
{
	struct elfread_section s, text;

	memset(t, 0, sizeof(*t));
	/* -buildmode=pie puts it among the relocated read-only data */
	if ((elfread__section(e, ".gopclntab", &s) || !s.data || !s.size) &&
	    (elfread__section(e, ".data.rel.ro.gopclntab", &s) || !s.data || !s.size))
		return -ENOENT;
	if (elfread__section(e, ".text", &text))
		text.vaddr = 0;
	return gopclntab__parse(s.data, s.size, text.vaddr, t);
}

static void func_of(const struct gopclntab_func *f, uint8_t flags,
		    struct sframe_func *fn)
{
	if (!fn)
		return;
	memset(fn, 0, sizeof(*fn));
	fn->start = f->start;
	fn->size = (uint32_t)(f->end - f->start);
	fn->num_rows = 1;
	fn->pc_type = SFRAME_PC_INC;
	fn->flags = flags;
}

/* Go's sa_restorer: rt_sigreturn, returned to at its first byte by the
 * signal handler runtime.sigtramp (1.20+ calls it sigreturn__sigaction) */
static int is_sigreturn(const char *name)
{
	return !strcmp(name, "runtime.sigreturn") ||
	       !strcmp(name, "runtime.sigreturn__sigaction");
}

/* runtime.asyncPreempt: "called" by the preemption signal's handler,
 * which pushed the interrupted PC as its return address */
static int is_async_preempt(const char *name)
{
	return !strcmp(name, "runtime.asyncPreempt") || !strcmp(name, "runtime.asyncPreempt.abi0");
}

/* The outermost frame of its stack. TOPFRAME stops Go's traceback; but
 * runtime.sigtramp has a real caller, the kernel's signal frame (its
 * return address is runtime.sigreturn). */
static int is_topframe(const struct gopclntab_func *f)
{
	return (f->flag & GOPCLNTAB_FLAG_TOPFRAME) &&
	       strcmp(f->name, "runtime.sigtramp") != 0;
}

/* f's SP-delta row at vaddr, SFRAME_ROW_EXACT_RA: 1, or 0 (no delta) */
static int async_preempt_row(const struct gopclntab *t, const struct gopclntab_func *f,
			     uint64_t vaddr, struct sframe_row *row, struct sframe_func *fn)
{
	struct gopclntab_pcvalue it;
	uint64_t lo, hi;
	int32_t val;

	if (gopclntab__pcvalue_start(t, f, f->pcsp, &it))
		return 0;
	while (gopclntab__pcvalue_next(&it, &lo, &hi, &val) == 1) {
		if (vaddr < lo || vaddr >= hi)
			continue;
		if (val < 0 || val > INT32_MAX - 8 || (val & 7))
			return 0;
		memset(row, 0, sizeof(*row));
		row->start = (uint32_t)(lo - f->start);
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, SFRAME_REG_AMD64_SP, val + 8);
		row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
		row->fp = sframe_rule__make(SFRAME_RULE_NONE, 0, 0);
		row->flags = SFRAME_ROW_EXACT_RA;
		func_of(f, 0, fn);
		return 1;
	}
	return 0;
}

int go_runtime__special_row(const struct gopclntab *t, uint64_t vaddr,
			    struct sframe_row *row, struct sframe_func *fn)
{
	struct gopclntab_func f;

	if (!t->data || gopclntab__find(t, vaddr, &f))
		return 0;
	/* in the trampoline, or returned to (a caller frame is looked up at
	 * its return address - 1): SP points at the ucontext */
	if (is_sigreturn(f.name) ||
	    (f.end == vaddr + 1 && !gopclntab__find(t, vaddr + 1, &f) &&
	     is_sigreturn(f.name))) {
		memset(row, 0, sizeof(*row));
		func_of(&f, SFRAME_FUNC_SIGNAL, fn);
		return 1;
	}
	if (vaddr < f.start)
		return 0;
	if (is_topframe(&f)) {
		/* .debug_frame gives goexit and mstart a row like any other,
		 * and the word above them is no caller's: clone's, or 0 */
		memset(row, 0, sizeof(*row));
		row->ra = sframe_rule__make(SFRAME_RULE_UNDEFINED, 0, 0);
		func_of(&f, 0, fn);
		return 1;
	}
	/* asyncPreempt's return address is the PC a signal interrupted,
	 * not one after a call: its own row, flagged so that the caller's
	 * is looked up at that PC, not at it - 1 */
	if (is_async_preempt(f.name))
		return async_preempt_row(t, &f, vaddr, row, fn);
	if (!(f.flag & GOPCLNTAB_FLAG_SPWRITE))
		return 0;
	memset(row, 0, sizeof(*row));
	row->start = (uint32_t)(vaddr - f.start);
	row->flags = SFRAME_ROW_STACK_SWITCH;
	func_of(&f, 0, fn);
	return 1;
}

struct rows {
	struct sframe_func *fn;
	size_t nfn, capfn;
	struct sframe_row *row;
	size_t nrow, caprow;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 256, bytes;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		if (__builtin_mul_overflow(n, 2, &n))
			return -ENOMEM;
	if (__builtin_mul_overflow(n, size, &bytes))
		return -ENOMEM;
	q = realloc(*p, bytes);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* f's rows from its SP-delta table: 1 added, 0 skipped (no usable
 * table: the unwinder falls back there), or -ENOMEM. */
static int func_rows(const struct gopclntab *t, const struct gopclntab_func *f,
		     struct rows *r)
{
	struct gopclntab_pcvalue it;
	size_t first = r->nrow;
	uint64_t lo, hi, covered = f->start, end = f->end;
	int32_t val;
	int rc;

	if (f->end <= f->start || f->end - f->start > UINT32_MAX)
		return 0;
	if (is_topframe(f)) {
		if (grow((void **)&r->row, &r->caprow, r->nrow + 1, sizeof(*r->row)))
			return -ENOMEM;
		memset(&r->row[r->nrow], 0, sizeof(*r->row));
		r->row[r->nrow++].ra = sframe_rule__make(SFRAME_RULE_UNDEFINED, 0, 0);
		goto add;
	}
	if (gopclntab__pcvalue_start(t, f, f->pcsp, &it))
		return 0;
	while ((rc = gopclntab__pcvalue_next(&it, &lo, &hi, &val)) == 1) {
		struct sframe_row *row;

		if (val < 0 || val > INT32_MAX - 8 || (val & 7)) {
			r->nrow = first; /* not a frame Go's traceback could walk */
			return 0;
		}
		covered = hi;
		if (hi == lo)
			continue;
		if (r->nrow > first && r->row[r->nrow - 1].cfa.off == val + 8)
			continue; /* same CFA as the run before */
		if (grow((void **)&r->row, &r->caprow, r->nrow + 1, sizeof(*r->row)))
			return -ENOMEM;
		row = &r->row[r->nrow++];
		memset(row, 0, sizeof(*row));
		row->start = (uint32_t)(lo - f->start);
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, SFRAME_REG_AMD64_SP, val + 8);
		row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
		row->fp = sframe_rule__make(SFRAME_RULE_NONE, 0, 0);
	}
	if (rc < 0 || r->nrow == first) {
		r->nrow = first;
		return 0;
	}
	/* The table ends with the code: the alignment padding after it gets
	 * no row (the FDE ends where the table does). */
	end = covered;
add:
	if (grow((void **)&r->fn, &r->capfn, r->nfn + 1, sizeof(*r->fn)))
		return -ENOMEM;
	memset(&r->fn[r->nfn], 0, sizeof(*r->fn));
	r->fn[r->nfn].start = f->start;
	r->fn[r->nfn].size = (uint32_t)(end - f->start);
	r->fn[r->nfn].num_rows = (uint32_t)(r->nrow - first);
	r->fn[r->nfn].pc_type = SFRAME_PC_INC;
	r->nfn++;
	return 1;
}

int go_runtime__derive_table(const struct gopclntab *t,
			     struct sframe_encode_opts *o,
			     struct sframe_table **out)
{
	struct rows r = { 0 };
	void *sec = NULL;
	size_t len = 0;
	int err = 0;

	*out = NULL;
	if (!t->data)
		return -ENOENT;
	for (uint64_t i = 0; i < t->nfunc && !err; i++) {
		struct gopclntab_func f;

		if (gopclntab__func(t, i, &f))
			continue; /* a bad record: no rows, the walk falls back */
		err = func_rows(t, &f, &r);
		if (err > 0)
			err = 0;
	}
	if (!err && !r.nfn)
		err = -ENOENT;
	o->section_vaddr = t->text;
	if (!err)
		err = sframe_encode(o, r.fn, r.nfn, r.row, r.nrow, &sec, &len);
	free(r.fn);
	free(r.row);
	if (err)
		return err;
	return sframe_table__new_owned(sec, len, o->section_vaddr, out);
}

int go_runtime__add_symbols(struct symtab *s, const struct elfread *e)
{
	struct gopclntab t;
	int n = 0;

	if (go_runtime__open(e, &t))
		return 0;
	for (uint64_t i = 0; i < t.nfunc; i++) {
		struct gopclntab_func f;

		if (gopclntab__func(&t, i, &f) || !f.name[0] || f.end <= f.start)
			continue;
		if (symtab__add(s, f.name, f.start, f.end - f.start, 0, STB_GLOBAL))
			return -ENOMEM;
		n++;
	}
	return n;
}

/*
 * Go behind the runtime interface (runtimes/runtime.h). A binary's state:
 * its pclntab, and the rows derived from its SP-delta tables either as
 * the binary's main table (no CFI at all: rows_main) or, made on the
 * first miss, for the PCs its CFI lacks (external linking, then strip:
 * CFI for the C start files only).
 */
struct go_binary {
	struct gopclntab t;
	int rows_main;
	int table_loaded;
	struct sframe_table *table;
};

static void *go_probe(struct dso *d)
{
	struct go_binary *b = calloc(1, sizeof(*b));

	if (b && go_runtime__open(dso__elf(d), &b->t)) {
		free(b);
		b = NULL;
	}
	return b;
}

static void go_release(void *bin)
{
	struct go_binary *b = bin;

	if (!b)
		return;
	sframe_table__free(b->table);
	free(b);
}

static int go_special_row(void *bin, uint64_t vaddr, struct sframe_row *row,
			  struct sframe_func *fn)
{
	return go_runtime__special_row(&((struct go_binary *)bin)->t, vaddr, row, fn);
}

static int go_find_row(struct dso *d, void *bin, uint64_t vaddr, struct sframe_row *row,
		       struct sframe_func *fn)
{
	struct go_binary *b = bin;
	const struct dso_cache_opts *opts = dso__opts(d);
	struct sframe_encode_opts o = {
		.version = opts->sframe_version,
		.abi = SFRAME_ABI_AMD64_LE,
		.fixed_ra_offset = -8,
	};

	if (b->rows_main || opts->no_derive)
		return -ESRCH;
	if (!b->table_loaded) {
		b->table_loaded = 1;
		if (go_runtime__derive_table(&b->t, &o, &b->table))
			b->table = NULL;
	}
	if (!b->table || sframe_table__find(b->table, vaddr, row, fn))
		return -ESRCH;
	return 0;
}

/* go build -ldflags=-s: no CFI, but Go's own SP deltas */
static int go_derive_table(struct dso *d, void *bin, struct sframe_encode_opts *o,
			   struct sframe_table **out)
{
	struct go_binary *b = bin;

	(void)d;
	b->rows_main = 1;
	return go_runtime__derive_table(&b->t, o, out);
}

/* a Go binary linked with -s still names its functions */
static int go_add_symbols(struct symtab *s, const struct elfread *e, int have_full)
{
	return have_full ? 0 : go_runtime__add_symbols(s, e);
}

const struct runtime_ops go_runtime_ops = {
	.name = "go",
	.symsrc = SYMSRC_GOPCLNTAB,
	.probe = go_probe,
	.release = go_release,
	.special_row = go_special_row,
	.find_row = go_find_row,
	.derive_table = go_derive_table,
	.add_symbols = go_add_symbols,
};
