// SPDX-License-Identifier: MIT
/*
 * Heap a symbol table keeps: symtab__load() (as the daemon calls it: the
 * .symtab, else a debug file's, and .dynsym) of each binary named, then
 * symtab__finish(); prints each binary's symbols and the bytes malloc
 * gave out for its table and has not got back (mallinfo2), and the total.
 * The ELF image is freed before the table is measured (the daemon keeps
 * the table, not the file's bytes, for the lookups).
 *   usage: bench/symtab_mem.sh [BINARY...]   (bench/symtab_mem.sh)
 */
#include <malloc.h>
#include <stdio.h>

#include "model/elfread.h"
#include "symbols/symbolize.h"

static size_t heap(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
}

int main(int argc, char **argv)
{
	size_t total = 0, syms = 0;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		size_t h0 = heap(), h1;
		struct elfread *e = elfread__open(argv[i]);
		struct symtab *t;

		if (!e)
			continue;
		t = symtab__load(e, argv[i], NULL);
		elfread__free(e);
		if (!t)
			continue;
		symtab__finish(t);
		h1 = heap();
		printf("%10zu %8zu %s\n", h1 > h0 ? h1 - h0 : 0, symtab__nr(t), argv[i]);
		total += h1 > h0 ? h1 - h0 : 0;
		syms += symtab__nr(t);
		n++;
		/* kept: the next binary's delta is its own */
		(void)t;
	}
	printf("total: %d binaries, %zu symbols, %.2f MiB\n", n, syms, total / 1048576.0);
	return 0;
}
