/* SPDX-License-Identifier: MIT */
/*
 * Inside a symtab (src/symbols/symbolize.h): symbolize.c fills it,
 * symtab_index.c finishes it and answers lookups.
 */
#ifndef SFPROF_SYMTAB_INT_H
#define SFPROF_SYMTAB_INT_H

#include <stddef.h>
#include <stdint.h>

/* One symbol as added. */
struct symtab_sym {
	uint64_t start;
	uint64_t size;
	uint64_t limit; /* 0 or section end */
	uint32_t name;	/* offset in strs */
	uint8_t bind;
	uint8_t label;	/* STT_NOTYPE in code: a label, not a function */
	uint8_t elf;	/* an ELF name: "name@VER" shows as "name" */
};

/*
 * One start address of a finished bucket: the symbols added at it are
 * ord[first .. first + nr). All of them have the same size, section end
 * and label flag (else the best was chosen when the bucket was finished
 * and nr is 1), so the name is chosen when it is first shown.
 */
struct symtab_ent {
	uint64_t end;	/* exclusive; unknown while open */
	char *shown;	/* the name shown, once made; NULL: not yet */
	uint32_t first;
	uint32_t nr;
	uint8_t open;	/* size 0 and last of its bucket: end not known */
};

struct symtab_bucket {
	uint32_t nr;	/* entries, or BUCKET_RAW: not finished yet */
	uint32_t pos;	/* of the first in ent[] and starts[] */
};

struct symtab {
	struct symtab_sym *syms;
	size_t nr, cap;
	char *strs;
	size_t strs_len, strs_cap;
	/*
	 * After symtab__finish(): syms[] indices dropped into nb buckets by
	 * start (bucket b holds starts lo + [b << shift, (b + 1) << shift)),
	 * bucket b at ord[bstart[b] .. bstart[b + 1]). A bucket is sorted and
	 * grouped by the first lookup that needs it (bk[b].nr != BUCKET_RAW):
	 * its bk[b].nr entries are appended to ent[] (their starts to
	 * starts[]) at bk[b].pos, so memory is touched for the buckets looked
	 * up only. cover[b]: the largest end of a sized symbol in the
	 * buckets before b.
	 */
	uint32_t *ord;
	uint32_t *bstart;
	struct symtab_bucket *bk;
	uint64_t *cover;
	struct symtab_ent *ent;
	uint64_t *starts;
	size_t nr_ent, ent_cap, starts_cap;
	uint64_t lo;
	size_t nb;
	unsigned shift;
	int no_demangle;
	int full_names;	/* demangled names keep parameters, return type */
	int finished;
	unsigned sources;
};

#define BUCKET_RAW UINT32_MAX

/* Back to a table being filled: drops the finished state and names. */
void symtab__unfinish(struct symtab *s);

#endif
