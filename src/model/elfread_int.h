/* SPDX-License-Identifier: MIT */
/* Inside elfread: the object, shared by elfread.c (the ELF view) and
 * elfread_file.c (a file's bytes, read as they are wanted). */
#ifndef SFPROF_ELFREAD_INT_H
#define SFPROF_ELFREAD_INT_H

#include <gelf.h>
#include <libelf.h>

#include "model/elfread.h"

struct lazy;

#define MAX_LOADS 64 /* real binaries have < 10 PT_LOADs */

struct elfread {
	Elf *elf;
	const uint8_t *img;
	size_t len;
	void *owned;	/* free() on close */
	void *map;	/* munmap(map, len) on close */
	struct lazy *lazy; /* a file's copy, filled as read; NULL for memory */
	GElf_Ehdr ehdr;
	size_t shnum;
	size_t shstrndx; /* SHN_UNDEF when unknown */
	struct elfread_section shstr; /* its headers, when have_shstr */
	int have_shstr;
	struct elfread_load loads[MAX_LOADS];
	size_t nr_loads;
	int is_exec; /* elfread__is_executable() */
};

static inline int in_image(const struct elfread *e, uint64_t off, uint64_t size)
{
	return off <= e->len && size <= e->len - off;
}

/* elfread_file.c: [off, off + size) of the image read from the file (a
 * no-op for an image in memory): 0 or -errno (-ESTALE: the file shrank). */
int elfread__fill(const struct elfread *e, uint64_t off, uint64_t size);
/* every byte a libelf user may read: all but the DWARF */
int elfread__fill_for_libelf(const struct elfread *e);
void elfread__lazy_free(struct lazy *lz);

/* elfread.c */
int elfread__init(struct elfread *e);
void elfread__init_shstr(struct elfread *e);
int elfread__section_raw(const struct elfread *e, size_t idx, struct elfread_section *out,
			 uint32_t *name_off, int want);
const char *elfread__section_str(const struct elfread_section *s, uint64_t off);

#endif
