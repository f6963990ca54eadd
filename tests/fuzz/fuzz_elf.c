// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ELF bytes through elfread (libelf's elf_memory under
 * it) and everything sfprof extracts from them: sections, PT_LOAD address
 * translation, build-id, debuglink, symbols into a symbol table with
 * lookups (in and around each code section, and every bucket of the lazy
 * index), the raw symbol table reader, the MiniDebugInfo image (one
 * level, small cap) and the .sframe section as the dso code opens it.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "unwind/sframe.h"
#include "symbols/symbolize.h"

static volatile uint64_t sink;

static void extract(const struct elfread *e, int depth)
{
	static const char *names[] = { ".text", ".sframe", ".eh_frame",
				       ".gnu_debuglink", ".symtab", ".dynsym" };
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	struct elfread_section s;
	struct elfread_load l;
	struct symtab *st;
	const char *link;
	uint32_t crc;
	size_t i, len, img_len;
	const uint8_t *img = elfread__image(e, &img_len);
	int64_t bias;
	uint64_t va;

	sink += elfread__type(e) + elfread__machine(e);
	for (i = 0; i < elfread__nr_sections(e) && i < 4096; i++) {
		if (elfread__section_at(e, i, &s))
			continue;
		sink += strlen(s.name);
		if (s.data) {
			if (s.data < img || s.size > img_len ||
			    s.data + s.size > img + img_len)
				abort(); /* section bytes must lie in the image */
			sink += s.data[0] + s.data[s.size - 1];
		}
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!elfread__section(e, names[i], &s) && s.data)
			sink += s.data[s.size - 1];
	for (i = 0; i < elfread__nr_loads(e); i++) {
		if (elfread__load(e, i, &l))
			abort();
		if (!elfread__mapping_bias(e, 0x7f0000000000ull, l.offset & ~0xfffull,
					   &bias))
			sink += bias;
		if (!elfread__offset_to_vaddr(e, l.offset, &va))
			sink += va;
	}
	if (!elfread__build_id(e, id, &len)) {
		if (!len || len > ELFREAD_BUILD_ID_MAX)
			abort();
		sink += strlen(elfread__hex(id, len, hex));
	}
	if (!elfread__debuglink(e, &link, &crc))
		sink += strlen(link) + crc;

	st = symtab__new(0);
	if (st) {
		const char *name;
		uint64_t off, start;

		symtab__add_elf(st, e, SHT_SYMTAB);
		symtab__add_elf(st, e, SHT_DYNSYM);
		symtab__add_plt(st, e);
		if (!symtab__finish(st)) {
			uint64_t probes[] = { 0, 1, 0x1000, 0x401000,
					      0x7fffffffffffffffull };

			for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
				if (!symtab__lookup(st, probes[i], &name, &off,
						    &start))
					sink += strlen(name) + off + start;
			/* in and around each code section (lazy buckets) */
			for (i = 0; i < elfread__nr_sections(e) && i < 64; i++) {
				uint64_t at[4], k;

				if (elfread__section_at(e, i, &s) ||
				    !(s.flags & SHF_EXECINSTR))
					continue;
				at[0] = s.vaddr;
				at[1] = s.vaddr + s.size / 2;
				at[2] = s.vaddr + s.size - 1;
				at[3] = s.vaddr + s.size;
				for (k = 0; k < 4; k++)
					if (!symtab__lookup(st, at[k], &name,
							    &off, &start))
						sink += strlen(name) + off;
			}
			sink += symtab__nr(st); /* finishes every bucket */
		}
		symtab__free(st);
	}
	{
		struct elfread_symtab t;
		struct elfread_sym sym;
		uint64_t k;

		if (!elfread__symbol_table(e, SHT_SYMTAB, &t)) {
			if (t.strs_len && t.strs[t.strs_len - 1])
				abort(); /* strs_len ends at a NUL */
			for (k = 0; k < t.nr && k < 100000; k++)
				if (!elfread_symtab__get(&t, k, &sym))
					sink += strlen(sym.name) + sym.value;
		}
	}
	if (!elfread__section(e, ".sframe", &s) && s.data) {
		struct sframe_table *t = NULL;

		if (!sframe_table__new(s.data, s.size, s.vaddr, &t)) {
			struct sframe_row row;

			sink += sframe_table__find(t, s.vaddr, &row, NULL);
			sframe_table__free(t);
		}
	}
	if (depth == 0) {
		struct elfread *mini = elfread__open_gnu_debugdata(e, 1u << 20);

		if (mini) {
			extract(mini, 1);
			elfread__free(mini);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private, writable copy, as a file mapping would be. */
	uint8_t *copy = malloc(size ? size : 1);
	struct elfread *e;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	e = elfread__open_mem_owned(copy, size); /* frees copy on failure */
	if (!e)
		return 0;
	extract(e, 0);
	elfread__free(e);
	return 0;
}
