// SPDX-License-Identifier: MIT
/*
 * names_go helper: for a Go binary that has .debug_frame (the Go linker
 * writes it from each function's SP-delta table), the rows sfprof derives
 * from .gopclntab's SP deltas must equal the rows derived from
 * .debug_frame at every PC of every function both describe.
 *
 * usage: go_rows BINARY   prints "pcs N same N differ N only_cfi N
 * only_pcsp N funcs N" and the first differences; exit 1 when any differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dso.h"
#include "runtimes/go/goruntime.h"
#include "unwind/sframe.h"

static int same_row(const struct sframe_row *a, const struct sframe_row *b)
{
	return a->cfa.kind == b->cfa.kind && a->cfa.reg == b->cfa.reg &&
	       a->cfa.off == b->cfa.off && a->ra.kind == b->ra.kind &&
	       (a->ra.kind == SFRAME_RULE_NONE || a->ra.off == b->ra.off);
}

int main(int argc, char **argv)
{
	struct dso_cache_opts o = { .no_debug_files = 1 };
	struct sframe_encode_opts eo = { .version = 3, .abi = SFRAME_ABI_AMD64_LE,
					 .fixed_ra_offset = -8 };
	unsigned long pcs = 0, same = 0, differ = 0, only_cfi = 0, only_pcsp = 0,
		      funcs = 0;
	struct sframe_table *pcsp = NULL;
	const struct sframe_table *cfi;
	struct dso_cache *c;
	struct gopclntab t;
	struct dso *d;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: go_rows BINARY\n");
		return 2;
	}
	c = dso_cache__new(&o);
	d = c ? dso_cache__open_path(c, argv[1]) : NULL;
	if (!d) {
		perror(argv[1]);
		return 2;
	}
	cfi = dso__sframe(d);
	rc = go_runtime__open(dso__elf(d), &t);
	if (!cfi || rc) {
		fprintf(stderr, "go_rows: %s: no CFI table (%d) or pclntab: %s\n",
			argv[1], dso__table_error(d), gopclntab__strerror(rc));
		return 2;
	}
	rc = go_runtime__derive_table(&t, &eo, &pcsp);
	if (rc) {
		fprintf(stderr, "go_rows: derive: %d\n", rc);
		return 2;
	}
	for (uint64_t i = 0; i < t.nfunc; i++) {
		struct gopclntab_func f;

		/* TOPFRAME: .debug_frame keeps a row, pcsp's says outermost
		 * (but for runtime.sigtramp, goruntime.h) */
		if (gopclntab__func(&t, i, &f) ||
		    ((f.flag & GOPCLNTAB_FLAG_TOPFRAME) &&
		     strcmp(f.name, "runtime.sigtramp") != 0))
			continue;
		funcs++;
		for (uint64_t pc = f.start; pc < f.end; pc++) {
			struct sframe_row a, b;
			struct sframe_func fa, fb;
			int ra = sframe_table__find(cfi, pc, &a, &fa);
			int rb = sframe_table__find(pcsp, pc, &b, &fb);

			if (ra && rb)
				continue;
			pcs++;
			if (ra) {
				only_pcsp++;
			} else if (rb) {
				only_cfi++;
			} else if (same_row(&a, &b)) {
				same++;
			} else if (differ++ < 5) {
				printf("differ %s+0x%lx: cfi cfa %u/%u%+d ra %u%+d, pcsp cfa %u/%u%+d ra %u%+d\n",
				       f.name, (unsigned long)(pc - f.start), a.cfa.kind,
				       a.cfa.reg, a.cfa.off, a.ra.kind, a.ra.off, b.cfa.kind,
				       b.cfa.reg, b.cfa.off, b.ra.kind, b.ra.off);
			}
		}
	}
	printf("pcs %lu same %lu differ %lu only_cfi %lu only_pcsp %lu funcs %lu\n", pcs,
	       same, differ, only_cfi, only_pcsp, funcs);
	sframe_table__free(pcsp);
	dso_cache__free(c);
	return differ ? 1 : 0;
}
