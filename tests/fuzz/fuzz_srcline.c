// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ELF bytes with DWARF through srcline (libdw under
 * it): lookups at the start, middle and end of every executable section
 * and at every function symbol, twice (the second from the cache), with
 * every returned level checked for sanity.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "symbols/srcline.h"

static volatile uint64_t sink;

/*
 * libdw 0.188 leaks a line-table allocation on some corrupt inputs
 * (inside dwarf_getsrc_die); that is elfutils', not ours to fix here.
 * Leaks with any sfprof frame still fail.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

static void probe(struct srcline *s, uint64_t pc)
{
	const struct srcline_level *lv;
	size_t n;

	for (int k = 0; k < 2; k++) {
		if (srcline__lookup(s, pc, &lv, &n))
			continue;
		if (!n || n > SRCLINE_MAX_LEVELS)
			abort();
		for (size_t i = 0; i < n; i++)
			sink += (lv[i].func ? strlen(lv[i].func) : 0) +
				(lv[i].file ? strlen(lv[i].file) : 0) + lv[i].line;
	}
}

struct sym_ctx {
	struct srcline *s;
	int n;
};

static int sym_cb(void *ctx, const struct elfread_sym *sym)
{
	struct sym_ctx *c = ctx;

	if (sym->type == STT_FUNC && c->n++ < 64) {
		probe(c->s, sym->value);
		probe(c->s, sym->value + sym->size / 2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfread *e = elfread__open_mem(data, size);
	struct srcline *s;
	struct sym_ctx c;

	if (!e)
		return 0;
	setenv("SFPROF_DWARF_CACHE", "", 1); /* no cache entries for fuzz inputs */
	s = srcline__new(e, NULL, &(struct srcline_opts){ .no_debug_files = 1 });
	if (s) {
		for (size_t i = 0; i < elfread__nr_sections(e) && i < 256; i++) {
			struct elfread_section sec;

			if (elfread__section_at(e, i, &sec) || !(sec.flags & SHF_EXECINSTR))
				continue;
			probe(s, sec.vaddr);
			probe(s, sec.vaddr + sec.size / 2);
			probe(s, sec.vaddr + sec.size - 1);
		}
		c = (struct sym_ctx){ .s = s };
		elfread__for_each_symbol(e, SHT_SYMTAB, sym_cb, &c);
		srcline__free(s);
	}
	elfread__free(e);
	return 0;
}
