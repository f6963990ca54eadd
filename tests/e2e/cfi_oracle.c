// SPDX-License-Identifier: MIT
/*
 * Helper of cfi_oracle.sh (built by it against the library).
 *
 *   cfi_oracle compare FILE...   for a binary with its own .sframe (gas
 *        --gsframe): the table derived from .eh_frame must equal the
 *        .sframe, function by function and row by row, for every function
 *        gas emitted. Also checks that the derived table survives
 *        sframe_encode -> sframe_table__new unchanged.
 *   cfi_oracle coverage FILE...  for a binary without .sframe: conversion
 *        succeeds, every FDE becomes a function, fallback rows by reason.
 *
 * Prints "PASS name" / "FAIL name: why" lines; exit 1 on any FAIL.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "unwind/sframe.h"

static int verbose;

static const char *kind_name(int k)
{
	static const char *n[] = { "none", "cfa_deref", "reg", "reg_deref",
				   "undefined", "no_rule" };
	return k >= 0 && k < 6 ? n[k] : "?";
}

static void row_str(const struct sframe_row *r, char *buf, size_t n)
{
	snprintf(buf, n, "@%u cfa=%s/%u%+d ra=%s/%u%+d fp=%s/%u%+d fl=%u",
		 r->start, kind_name(r->cfa.kind), r->cfa.reg, r->cfa.off,
		 kind_name(r->ra.kind), r->ra.reg, r->ra.off,
		 kind_name(r->fp.kind), r->fp.reg, r->fp.off, r->flags);
}

static int rule_eq(const struct sframe_rule *a, const struct sframe_rule *b)
{
	return a->kind == b->kind && a->reg == b->reg && a->off == b->off;
}

static int row_eq(const struct sframe_row *a, const struct sframe_row *b)
{
	return a->start == b->start && a->flags == b->flags &&
	       rule_eq(&a->cfa, &b->cfa) && rule_eq(&a->ra, &b->ra) &&
	       rule_eq(&a->fp, &b->fp);
}

struct elf_file {
	int fd;
	Elf *e;
};

static int open_elf(const char *path, struct elf_file *f)
{
	f->fd = open(path, O_RDONLY);
	if (f->fd < 0)
		return -errno;
	f->e = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->e) {
		close(f->fd);
		return -EINVAL;
	}
	return 0;
}

static void close_elf(struct elf_file *f)
{
	elf_end(f->e);
	close(f->fd);
}

static int find_section(Elf *e, const char *want, const void **data,
			size_t *len, uint64_t *vaddr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(name, want))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return -ENOENT;
		*data = d->d_buf;
		*len = d->d_size;
		*vaddr = sh.sh_addr;
		return 0;
	}
	return -ENOENT;
}

/* Index of the derived function starting at `start`, or -1. */
static long find_func(const struct cfi_table *t, uint64_t start)
{
	size_t lo = 0, hi = t->nr_funcs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->funcs[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nr_funcs && t->funcs[lo].start == start ? (long)lo : -1;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* First row index of every derived function. */
static size_t *row_index(const struct cfi_table *t)
{
	size_t *first = calloc(t->nr_funcs + 1, sizeof(*first));
	if (!first)
		return NULL;
	for (size_t i = 0, r = 0; i < t->nr_funcs; i++) {
		first[i] = r;
		r += t->funcs[i].num_rows;
	}
	return first;
}

/*
 * Encode the derived table and decode it again: every function without
 * NO_RULE rows must come back with the same rows.
 */
static int check_roundtrip(const char *name, const struct cfi_input *in,
			   const struct cfi_table *t, const size_t *first)
{
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0,
					in->eh_frame_vaddr ? in->eh_frame_vaddr : 0x1000 };
	void *buf = NULL;
	size_t len = 0;
	struct sframe_table *st = NULL;
	int err = cfi_to_sframe(in, &o, &buf, &len, NULL);
	if (err) {
		printf("FAIL cfi_roundtrip_%s: cfi_to_sframe: %d (%s)\n", name,
		       err, err < -999 ? sframe_strerror(err) : strerror(-err));
		return 1;
	}
	err = sframe_table__new_owned(buf, len, o.section_vaddr, &st);
	if (err) {
		free(buf);
		printf("FAIL cfi_roundtrip_%s: decode: %s\n", name, sframe_strerror(err));
		return 1;
	}
	size_t checked = 0, bad = 0;
	for (size_t i = 0; i < t->nr_funcs; i++) {
		const struct sframe_func *f = &t->funcs[i];
		int has_nr = 0;
		for (size_t j = 0; j < f->num_rows; j++)
			has_nr |= t->rows[first[i] + j].cfa.kind == SFRAME_RULE_NO_RULE;
		if (has_nr)
			continue;
		checked++;
		for (size_t j = 0; j < f->num_rows; j++) {
			const struct sframe_row *want = &t->rows[first[i] + j];
			struct sframe_row got;
			struct sframe_func gf;
			uint64_t pc = f->start + want->start;
			err = sframe_table__find(st, pc, &got, &gf);
			if (f->pc_type == SFRAME_PC_MASK) {
				if (err || gf.pc_type != SFRAME_PC_MASK ||
				    gf.rep_size != f->rep_size)
					err = err ? err : -EINVAL;
				else
					got.start = want->start;
			}
			if (!err && f->pc_type == SFRAME_PC_INC)
				got.start = (uint32_t)(pc - gf.start);
			if (err || !row_eq(&got, want)) {
				if (bad++ < 5) {
					char a[160], b[160];
					row_str(want, a, sizeof(a));
					row_str(&got, b, sizeof(b));
					printf("    roundtrip func 0x%llx: want %s got %s (err %d)\n",
					       (unsigned long long)f->start, a, b, err);
				}
				break;
			}
		}
	}
	sframe_table__free(st);
	if (bad) {
		printf("FAIL cfi_roundtrip_%s: %zu of %zu functions differ after encode/decode\n",
		       name, bad, checked);
		return 1;
	}
	printf("PASS cfi_roundtrip_%s (%zu functions, %zu bytes v3)\n", name,
	       checked, len);
	return 0;
}

static int compare(const char *path)
{
	struct elf_file f;
	struct cfi_input in;
	struct cfi_table t = { 0 };
	struct cfi_stats st;
	struct sframe_table *sf = NULL;
	const void *sdata;
	size_t slen;
	uint64_t svaddr;
	const char *name = base(path);
	size_t *first = NULL;
	int fail = 1, err;

	if (open_elf(path, &f)) {
		printf("FAIL cfi_oracle_%s: cannot open\n", name);
		return 1;
	}
	if ((err = cfi_input_from_elf(f.e, &in)) ||
	    (err = cfi_derive(&in, &t, &st))) {
		printf("FAIL cfi_oracle_%s: derive: %d\n", name, err);
		goto out;
	}
	if (find_section(f.e, ".sframe", &sdata, &slen, &svaddr)) {
		printf("SKIP cfi_oracle_%s: no .sframe section\n", name);
		fail = 0;
		goto out;
	}
	if ((err = sframe_table__new(sdata, slen, svaddr, &sf))) {
		printf("FAIL cfi_oracle_%s: own .sframe: %s\n", name, sframe_strerror(err));
		goto out;
	}
	first = row_index(&t);
	if (!first)
		goto out;

	size_t n = sframe_table__nr_funcs(sf), match = 0, shown = 0;
	int v1 = sframe_table__version(sf) == 1;
	for (size_t i = 0; i < n; i++) {
		struct sframe_func g;
		sframe_table__func(sf, i, &g);
		long k = find_func(&t, g.start);
		const char *why = NULL;
		char detail[400] = "";
		if (k < 0) {
			why = "no derived function at this start";
		} else {
			const struct sframe_func *d = &t.funcs[k];
			/* v1 has no rep_size field: its PCMASK FDEs are 16-byte PLT entries. */
			int rep_ok = d->rep_size == g.rep_size ||
				     (v1 && g.rep_size == 0 && d->rep_size == 16);
			if (d->size != g.size || d->pc_type != g.pc_type ||
			    (g.pc_type == SFRAME_PC_MASK && !rep_ok)) {
				why = "function size/type differs";
				snprintf(detail, sizeof(detail),
					 "size %u/%u type %u/%u rep %u/%u", g.size,
					 d->size, g.pc_type, d->pc_type, g.rep_size,
					 d->rep_size);
			} else if (d->num_rows != g.num_rows) {
				why = "row count differs";
				snprintf(detail, sizeof(detail), "gas %u derived %u",
					 g.num_rows, d->num_rows);
			}
			for (size_t j = 0; !why && j < g.num_rows; j++) {
				struct sframe_row gr;
				const struct sframe_row *dr = &t.rows[first[k] + j];
				sframe_table__row(sf, i, j, &gr);
				if (!row_eq(&gr, dr)) {
					char a[160], b[160];
					row_str(&gr, a, sizeof(a));
					row_str(dr, b, sizeof(b));
					why = "row differs";
					snprintf(detail, sizeof(detail),
						 "row %zu: gas %s derived %s", j, a, b);
				}
			}
			if (why && d->num_rows != g.num_rows && verbose) {
				for (size_t j = 0; j < g.num_rows; j++) {
					struct sframe_row gr;
					char a[160];
					sframe_table__row(sf, i, j, &gr);
					row_str(&gr, a, sizeof(a));
					printf("      gas     %s\n", a);
				}
				for (size_t j = 0; j < d->num_rows; j++) {
					char a[160];
					row_str(&t.rows[first[k] + j], a, sizeof(a));
					printf("      derived %s\n", a);
				}
			}
		}
		if (!why) {
			match++;
			continue;
		}
		if (shown++ < 10 || verbose)
			printf("    %s: func 0x%llx size %u: %s %s\n", name,
			       (unsigned long long)g.start, g.size, why, detail);
	}
	size_t gas_skipped = 0;
	for (size_t k = 0; k < t.nr_funcs; k++) {
		struct sframe_func g;
		struct sframe_row r;
		if (sframe_table__find(sf, t.funcs[k].start, &r, &g) != 0 ||
		    g.start != t.funcs[k].start)
			gas_skipped++;
	}
	double rate = n ? 100.0 * (double)match / (double)n : 100.0;
	printf("    %s: %zu of %zu gas functions match row by row (%.2f%%); "
	       "%zu derived functions gas did not emit; %llu rows derived\n",
	       name, match, n, rate, gas_skipped, (unsigned long long)st.rows);
	if (match != n || n == 0) {
		printf("FAIL cfi_oracle_%s: match rate %.2f%% (%zu of %zu)\n", name,
		       rate, match, n);
		goto out;
	}
	printf("PASS cfi_oracle_%s (%zu functions, 100%%)\n", name, n);
	fail = check_roundtrip(name, &in, &t, first);
out:
	free(first);
	sframe_table__free(sf);
	cfi_table__release(&t);
	close_elf(&f);
	return fail;
}

static int coverage(const char *path)
{
	struct elf_file f;
	struct cfi_input in;
	struct cfi_table t = { 0 };
	struct cfi_stats st;
	const char *name = base(path);
	size_t *first = NULL;
	int fail = 1, err;

	if (open_elf(path, &f)) {
		printf("SKIP cfi_coverage_%s: cannot open %s\n", name, path);
		return 0;
	}
	if ((err = cfi_input_from_elf(f.e, &in)) ||
	    (err = cfi_derive(&in, &t, &st))) {
		printf("FAIL cfi_coverage_%s: derive: %d\n", name, err);
		goto out;
	}
	printf("    %s: fdes %llu converted %llu empty %llu rejected %llu; "
	       "funcs %llu (pcmask %llu, signal %llu, plt synthesized %llu); "
	       "rows %llu, flexible %llu, DWARF expressions %llu, ra-undefined %llu, "
	       "no-rule %llu\n",
	       name, (unsigned long long)st.fdes,
	       (unsigned long long)st.fdes_converted,
	       (unsigned long long)st.fdes_empty,
	       (unsigned long long)st.fdes_rejected,
	       (unsigned long long)st.funcs, (unsigned long long)st.pcmask_funcs,
	       (unsigned long long)st.signal_funcs,
	       (unsigned long long)st.plt_synthesized,
	       (unsigned long long)st.rows, (unsigned long long)st.rows_flex,
	       (unsigned long long)st.rows_expr,
	       (unsigned long long)st.rows_ra_undefined,
	       (unsigned long long)st.rows_no_rule);
	for (int i = 0; i < CFI_NR__COUNT; i++)
		if (st.no_rule[i])
			printf("    %s: fallback rows %s: %llu\n", name,
			       cfi_norule__name(i), (unsigned long long)st.no_rule[i]);
	if (verbose)
		cfi_stats__print(&st, stdout);
	if (st.fdes_rejected || st.funcs_overlap ||
	    st.fdes != st.fdes_converted + st.fdes_empty) {
		printf("FAIL cfi_coverage_%s: not every FDE converted (%llu rejected, %llu overlapping)\n",
		       name, (unsigned long long)st.fdes_rejected,
		       (unsigned long long)st.funcs_overlap);
		cfi_stats__print(&st, stdout);
		goto out;
	}
	/* a DWARF expression CFI may use becomes a rule the unwinder
	 * evaluates (dwexpr.h), never a fallback row */
	if (st.no_rule[CFI_NR_CFA_EXPRESSION]) {
		printf("FAIL cfi_coverage_%s: %llu CFA expressions left to the fallback\n", name,
		       (unsigned long long)st.no_rule[CFI_NR_CFA_EXPRESSION]);
		goto out;
	}
	first = row_index(&t);
	if (!first)
		goto out;
	printf("PASS cfi_coverage_%s (%llu FDEs, %llu rows, %llu fallback)\n",
	       name, (unsigned long long)st.fdes, (unsigned long long)st.rows,
	       (unsigned long long)st.rows_no_rule);
	fail = check_roundtrip(name, &in, &t, first);
out:
	free(first);
	cfi_table__release(&t);
	close_elf(&f);
	return fail;
}

int main(int argc, char **argv)
{
	int bad = 0;
	if (argc < 3) {
		fprintf(stderr, "usage: %s compare|coverage FILE...\n", argv[0]);
		return 2;
	}
	if (getenv("CFI_ORACLE_VERBOSE"))
		verbose = 1;
	elf_version(EV_CURRENT);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[1], "compare"))
			bad |= compare(argv[i]);
		else
			bad |= coverage(argv[i]);
	}
	return bad;
}
