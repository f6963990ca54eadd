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

#endif
