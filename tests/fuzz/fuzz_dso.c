// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: an ELF image opened as a dso (dso_cache__open_mem) and
 * its SFrame rows looked up the way the unwinder does. This drives the
 * lazy .eh_frame_hdr path of dso.c (search table, block copies into a
 * small .eh_frame image, per-block derivation) and the whole-table
 * fallbacks behind it, on hostile bytes. Lookups walk every search-table
 * start and a spread of addresses over each executable segment.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "unwind/sframe.h"

static volatile uint64_t sink;

static void probe(struct dso *d, uint64_t va)
{
	struct sframe_row row;
	struct sframe_func fn;

	if (!dso__find_row(d, va, &row, &fn)) {
		if (fn.start > va || va - fn.start >= fn.size)
			abort(); /* a row must come from the function covering va */
		sink += row.cfa.off + fn.size;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dso_cache_opts o = { .no_debug_files = 1, .no_demangle = 1 };
	struct dso_cache *c = dso_cache__new(&o);
	const struct elfread *e;
	struct elfread_section s;
	struct elfread_load l;
	struct dso *d;

	if (!c)
		abort();
	d = dso_cache__open_mem(c, data, size, "fuzz");
	e = d ? dso__elf(d) : NULL;
	if (e) {
		/* every start the .eh_frame_hdr search table names, and its
		 * neighbours */
		if (!elfread__section(e, ".eh_frame_hdr", &s) && s.data &&
		    s.size >= 12) {
			uint32_t n;

			memcpy(&n, s.data + 8, 4);
			for (uint64_t i = 0; i < n && 12 + 8 * i + 8 <= s.size && i < 512; i++) {
				int32_t rel;

				memcpy(&rel, s.data + 12 + 8 * i, 4);
				probe(d, s.vaddr + (int64_t)rel);
				probe(d, s.vaddr + (int64_t)rel + 1);
				probe(d, s.vaddr + (int64_t)rel - 1);
			}
		}
		for (size_t i = 0; i < elfread__nr_loads(e) && i < 16; i++) {
			if (elfread__load(e, i, &l) || !(l.flags & PF_X))
				continue;
			for (uint64_t k = 0; k <= 64; k++)
				probe(d, l.vaddr + (l.memsz / 64) * k);
		}
	}
	dso_cache__free(c);
	return 0;
}
