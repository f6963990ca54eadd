// SPDX-License-Identifier: MIT
/*
 * "name@plt" symbols for x86-64 PLT stubs (.plt, .plt.sec, .plt.got), as
 * perf and objdump name them: each stub's jmp *disp(%rip) reads a GOT slot
 * that a JUMP_SLOT or GLOB_DAT relocation ties to a dynamic symbol.
 * See src/symbols/symbolize.h.
 */
#include "symbols/symbolize.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"

struct got_slot {
	uint64_t addr;
	uint32_t sym;
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* GOT slot address -> dynamic symbol, from .rela.plt and .rela.dyn. */
static int collect_got_slots(const struct elfread *e, struct got_slot **out,
			     size_t *nr)
{
	struct got_slot *v = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 1; i < elfread__nr_sections(e); i++) {
		struct elfread_section r;
		uint64_t k;

		/* the header first: only RELA sections' bytes are read */
		if (elfread__section_header_at(e, i, &r) || r.type != SHT_RELA ||
		    elfread__section_at(e, i, &r) || !r.data)
			continue;
		for (k = 0; k + sizeof(Elf64_Rela) <= r.size;
		     k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			uint32_t type;

			memcpy(&rel, r.data + k, sizeof(rel));
			type = ELF64_R_TYPE(rel.r_info);
			if ((type != R_X86_64_JUMP_SLOT &&
			     type != R_X86_64_GLOB_DAT) ||
			    !ELF64_R_SYM(rel.r_info))
				continue;
			if (util__grow((void **)&v, &cap, n + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n].addr = rel.r_offset;
			v[n].sym = ELF64_R_SYM(rel.r_info);
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), got_cmp);
	*out = v;
	*nr = n;
	return 0;
}

static const struct got_slot *find_got_slot(const struct got_slot *v,
					    size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == addr ? &v[lo] : NULL;
}

int symtab__add_plt(struct symtab *s, const struct elfread *e)
{
	static const char *plts[] = { ".plt", ".plt.sec", ".plt.got" };
	struct elfread_symtab dyn;
	struct got_slot *slots = NULL;
	size_t nslots = 0, i;
	int added = 0, err;

	if (elfread__machine(e) != EM_X86_64 || !elfread__is_64(e) ||
	    elfread__symbol_table(e, SHT_DYNSYM, &dyn))
		return 0;
	err = collect_got_slots(e, &slots, &nslots);
	if (err || !nslots) {
		free(slots);
		return err;
	}
	for (i = 0; i < sizeof(plts) / sizeof(plts[0]); i++) {
		struct elfread_section p;
		uint64_t ent, off;

		if (elfread__section(e, plts[i], &p) || !p.data)
			continue;
		ent = p.entsize >= 8 && p.entsize <= 64 ? p.entsize : 16;
		for (off = 0; off + ent <= p.size; off += ent) {
			const uint8_t *b = p.data + off;
			const struct got_slot *g;
			struct elfread_sym sym;
			char name[512];
			uint64_t k;
			int32_t disp;

			/* jmp *disp(%rip), maybe after endbr64 / bnd. */
			for (k = 0; k + 6 <= ent; k++)
				if (b[k] == 0xff && b[k + 1] == 0x25)
					break;
			if (k + 6 > ent)
				continue;
			memcpy(&disp, b + k + 2, 4);
			g = find_got_slot(slots, nslots,
					  p.vaddr + off + k + 6 + (int64_t)disp);
			if (!g || elfread_symtab__get(&dyn, g->sym, &sym) ||
			    !sym.name[0])
				continue;
			snprintf(name, sizeof(name), "%s@plt", sym.name);
			err = symtab__add(s, name, p.vaddr + off, ent, 0,
					  STB_GLOBAL);
			if (err) {
				free(slots);
				return err;
			}
			added++;
		}
	}
	free(slots);
	return added;
}
