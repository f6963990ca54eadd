/* SPDX-License-Identifier: MIT */
/*
 * srcline.c only: the DIEs of one Dwarf that hold a PC, innermost first,
 * as libdw's dwarf_getscopes() + dwarf_getscopes_die() give them, in one
 * walk down the tree. A CU's children are found through an index of
 * their address ranges, made at the CU's first PC.
 *
 * A struct dwarfscope holds DIEs of one Dwarf: dwarfscope__clear() it
 * before that Dwarf is ended (dwarf_end).
 */
#ifndef SFPROF_DWARFSCOPE_H
#define SFPROF_DWARFSCOPE_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#define DWARFSCOPE_PATH_MAX 256

struct sl_cu;

/* The CUs indexed so far, by CU DIE offset. Zeroed: empty. */
struct dwarfscope {
	struct sl_cu *v;
	size_t nr, cap; /* cap: a power of two */
};

/*
 * The DIEs of cudie that hold pc, innermost first, up to the CU, into
 * out[DWARFSCOPE_PATH_MAX]: their count (0: nothing holds pc), or -1
 * when this walk is not sure to agree with libdw's (an imported unit,
 * an error from dwarf_haspc, deeper than DWARFSCOPE_PATH_MAX): then ask
 * libdw.
 */
int dwarfscope__path(struct dwarfscope *m, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out);

/* Free every index: back to empty. */
void dwarfscope__clear(struct dwarfscope *m);

#endif
