/* SPDX-License-Identifier: MIT */
/* dwarfimage.c and dwarfcache.c only: the image's insides. */
#ifndef SFPROF_DWARFIMAGE_INT_H
#define SFPROF_DWARFIMAGE_INT_H

#include "symbols/dwarfimage.h"

struct dwarf_image {
	void *map; /* anonymous, or the cache file's (read-only) */
	size_t size;
	Elf *elf;
	int from_cache;
	int mapped; /* the cache file's mapping (its pages the page cache's) */
};

/*
 * The image dwarf_image__open_flags() would make of src, written to fd
 * (a new, empty file) a section at a time, through a buffer of
 * dwarf_image_write_chunk bytes (1 MiB; the unit tests lower it): the
 * image is never whole in memory. 0, or -errno (-ENOTSUP as there).
 */
int dwarf_image__write(Elf *src, unsigned flags, int fd);
extern size_t dwarf_image_write_chunk;

#endif
