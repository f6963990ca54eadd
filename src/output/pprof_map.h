/* SPDX-License-Identifier: MIT */
/*
 * The pprof writer's Mappings (pprof.c): which Mapping each frame of a
 * profile is in, the Mappings' ids (the main binary's is 1) and the
 * ranges laid out for frames with no runtime range. Internal to
 * src/output/.
 */
#ifndef SFPROF_OUTPUT_PPROF_MAP_H
#define SFPROF_OUTPUT_PPROF_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile_int.h"

struct pp_mapping {
	uint64_t hash;
	uint64_t start, limit, offset;
	uint32_t dso, build_id;
	uint32_t pid, exec;
	uint32_t kernel;    /* [kernel.kallsyms] */
	uint32_t synthetic; /* no runtime range known: laid out here */
	uint32_t identity;  /* synthetic, kernel-like: addresses are rel_addr */
	uint32_t python;    /* an interpreter's Python frames (pid's) */
	uint32_t nr_py;	    /* ... numbered so far */
	uint32_t nr_locs, unnamed; /* locations, and those with no Line */
	uint32_t made_up;   /* frames named binary+0xSTART, not by a symbol */
	uint32_t with_file, with_line; /* frames with a source file, a line */
	uint32_t inlined;   /* a Location has inline Lines (set by pprof.c) */
	uint64_t min_rel, max_rel;
	uint32_t id;	    /* Mapping.id: the main binary is 1 */
	uint32_t pad;
};

/* The frames' mappings. Zeroed, then pp_map__assign(); pp_map__free(). */
struct pp_maps {
	struct pp_mapping *maps;
	size_t nr_maps, cap_maps;
	uint32_t *map_slots; /* open addressing: mapping index + 1 */
	size_t nr_slots;
	uint32_t *frame_map; /* frame index -> mapping index + 1, 0 = none */
	uint64_t *frame_rel; /* frame index -> its rel_addr in its mapping */
	uint32_t main;	     /* the main binary's mapping index + 1, 0 = none */
};

/* A location with no Line: an unsymbolized user frame in a binary
 * (map: its mapping index + 1). */
static inline int pp_frame_unnamed(const struct prof_frame *f, uint32_t map)
{
	return map && !f->name && f->kind == PROFILE_FRAME_USER;
}

/*
 * Assign each of p's nfr frames (fr) its mapping (frame_map, frame_rel),
 * count what each mapping's flags need, number the mappings (the
 * target's own executable, else the first executable seen, is id 1) and
 * lay out the synthetic ones. 0, or -ENOMEM.
 */
int pp_map__assign(struct pp_maps *pm, const struct profile *p, const struct prof_frame *fr,
		   uint32_t nfr);

/* Location.address of frame i (fr: the frames pp_map__assign had) in mp. */
static inline uint64_t pp_map__address(const struct pp_maps *pm, const struct pp_mapping *mp,
				       const struct prof_frame *fr, uint32_t i)
{
	if (!mp->synthetic)
		return fr[i].addr;
	return mp->identity ? pm->frame_rel[i] : mp->start + pm->frame_rel[i];
}

void pp_map__free(struct pp_maps *pm);

#endif
