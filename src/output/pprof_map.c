// SPDX-License-Identifier: MIT
/*
 * Mappings for pprof (pprof_map.h): one per distinct key of a frame
 * (its runtime range and file; its binary when it has no range; its
 * interpreter for Python frames; the kernel), found in an open-addressing
 * hash set; ranges laid out for the synthetic ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pprof_map.h"
#include "util.h"

static uint32_t frame_kernel(const struct prof_frame *f)
{
	return f->kind == PROFILE_FRAME_KERNEL;
}

/*
 * A name stacks_names.c made up for stripped code, "BINARY+0xSTART"
 * (BINARY the dso's base name): its Line keeps it for a reader without
 * the binary, but the mapping must not claim has_functions, or pprof and
 * backends never re-symbolize it.
 */
static int frame_made_up(const struct profile *p, const struct prof_frame *f)
{
	const char *name, *dso, *b;
	size_t n;

	if (f->kind != PROFILE_FRAME_USER || !f->name || !f->dso)
		return 0;
	name = prof__str(p, f->name);
	dso = prof__str(p, f->dso);
	b = strrchr(dso, '/');
	b = b ? b + 1 : dso;
	n = strlen(b);
	if (!n || strncmp(name, b, n) || strncmp(name + n, "+0x", 3) || !name[n + 3])
		return 0;
	return strspn(name + n + 3, "0123456789abcdef") == strlen(name + n + 3);
}

/* The mapping key of a frame, into m (hash set). */
static void frame_mapping_key(const struct prof_frame *f, struct pp_mapping *m)
{
	*m = (struct pp_mapping){ .min_rel = UINT64_MAX };
	if (frame_kernel(f) && !f->dso) {
		m->kernel = m->synthetic = 1;
	} else if (f->kind == PROFILE_FRAME_PYTHON) {
		m->synthetic = m->python = 1;
		m->pid = f->pid;
		m->dso = f->dso;
	} else if (f->map_end > f->map_start) {
		m->start = f->map_start;
		m->limit = f->map_end;
		m->offset = f->map_offset;
		m->dso = f->dso;
		m->build_id = f->build_id;
		m->pid = f->pid;
		m->exec = f->map_exec;
	} else {
		m->synthetic = 1;
		m->dso = f->dso;
		m->build_id = f->build_id;
	}
	/* one entry for equal ranges of one file in several processes: pprof
	 * has no processes, and the entries would say the same */
	m->hash = prof__hash_mix(prof__hash_mix(prof__hash_mix(prof__hash_mix(
		prof__hash_mix(prof__hash_mix(1, m->start), m->limit), m->offset), m->dso),
		m->build_id), m->kernel | m->synthetic << 1 | m->python << 2);
	if (m->python) /* one per interpreter: its code objects are its own */
		m->hash = prof__hash_mix(m->hash, m->pid);
}

static int mapping_key_eq(const struct pp_mapping *a, const struct pp_mapping *b)
{
	return a->hash == b->hash && a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && a->dso == b->dso && a->build_id == b->build_id &&
	       a->kernel == b->kernel && a->synthetic == b->synthetic &&
	       a->python == b->python && (!a->python || a->pid == b->pid);
}

static int slots_grow(struct pp_maps *pm)
{
	size_t n = pm->nr_slots ? pm->nr_slots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < pm->nr_maps; i++) {
		size_t j;

		for (j = pm->maps[i].hash & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = (uint32_t)i + 1;
	}
	free(pm->map_slots);
	pm->map_slots = slots;
	pm->nr_slots = n;
	return 0;
}

/* The mapping index + 1 for key, added if new; 0 on ENOMEM. */
static uint32_t mapping_get(struct pp_maps *pm, const struct pp_mapping *key)
{
	size_t j;

	if ((pm->nr_maps + 1) * 2 > pm->nr_slots && slots_grow(pm))
		return 0;
	for (j = key->hash & (pm->nr_slots - 1); pm->map_slots[j]; j = (j + 1) & (pm->nr_slots - 1)) {
		if (mapping_key_eq(&pm->maps[pm->map_slots[j] - 1], key))
			return pm->map_slots[j];
	}
	if (pm->nr_maps >= UINT32_MAX - 1 ||
	    util__grow((void **)&pm->maps, &pm->cap_maps, pm->nr_maps + 1, sizeof(*pm->maps)))
		return 0;
	pm->maps[pm->nr_maps] = *key;
	pm->map_slots[j] = (uint32_t)++pm->nr_maps;
	return (uint32_t)pm->nr_maps;
}

int pp_map__assign(struct pp_maps *pm, const struct profile *p, const struct prof_frame *fr,
		   uint32_t nfr)
{
	const struct profile_meta *meta = profile__meta(p);
	uint32_t target = meta->main_pid ? meta->main_pid : meta->target_pid, main = 0, next_id = 2;
	uint64_t cursor = 1ull << 32;

	pm->frame_map = calloc(nfr ? nfr : 1, sizeof(*pm->frame_map));
	pm->frame_rel = calloc(nfr ? nfr : 1, sizeof(*pm->frame_rel));
	if (!pm->frame_map || !pm->frame_rel)
		return -ENOMEM;
	for (uint32_t i = 0; i < nfr; i++) {
		const struct prof_frame *f = &fr[i];
		struct pp_mapping key, *mp;
		uint32_t m;

		if (f->kind == PROFILE_FRAME_MARKER ||
		    (!f->dso && !frame_kernel(f) && f->kind != PROFILE_FRAME_PYTHON))
			continue; /* no mapping */
		frame_mapping_key(f, &key);
		m = mapping_get(pm, &key);
		if (!m)
			return -ENOMEM;
		mp = &pm->maps[m - 1];
		/* a Python frame is one (code object, line): the next address */
		pm->frame_rel[i] = mp->python ? mp->nr_py++ : f->rel_addr;
		if (pm->frame_rel[i] > mp->max_rel)
			mp->max_rel = pm->frame_rel[i];
		if (pm->frame_rel[i] < mp->min_rel)
			mp->min_rel = pm->frame_rel[i];
		mp->nr_locs++;
		mp->unnamed += (uint32_t)pp_frame_unnamed(f, m);
		mp->made_up += (uint32_t)frame_made_up(p, f);
		mp->with_file += f->file != 0;
		mp->with_line += f->line != 0;
		/* the target's own executable, else the first one seen */
		if (mp->exec && (!main || (target && f->pid == target &&
					   pm->maps[main - 1].pid != target)))
			main = m;
		pm->frame_map[i] = m;
	}
	pm->main = main;
	for (size_t m = 0; m < pm->nr_maps; m++) {
		struct pp_mapping *mp = &pm->maps[m];

		mp->id = !main ? (uint32_t)m + 1 : m + 1 == main ? 1 : next_id++;
		if (!mp->synthetic)
			continue;
		/* kernel-like addresses (a module's, or garbage) keep their own */
		if (mp->kernel || (!mp->python && mp->max_rel >= 1ull << 47)) {
			mp->identity = 1;
			mp->start = mp->min_rel & ~0xfffull;
			mp->limit = (mp->max_rel | 0xfff) + 1;
			if (!mp->limit)
				mp->limit = UINT64_MAX;
			continue;
		}
		mp->start = cursor;
		mp->limit = cursor + ((mp->max_rel | 0xfff) + 1);
		/* next range on a 4 GiB boundary past this one */
		cursor = (mp->limit + (1ull << 32)) & ~((1ull << 32) - 1);
	}
	return 0;
}

void pp_map__free(struct pp_maps *pm)
{
	free(pm->maps);
	free(pm->map_slots);
	free(pm->frame_map);
	free(pm->frame_rel);
	*pm = (struct pp_maps){ 0 };
}
