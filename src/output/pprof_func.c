// SPDX-License-Identifier: MIT
/*
 * Function identity for pprof (pprof_func.h): the frames' indices sorted
 * by their function key, each run of equal keys one group.
 */
#include <errno.h>
#include <stdlib.h>

#include "output/pprof_func.h"
#include "profile/profile.h"

struct func_key {
	uint32_t kernel, name, file, start_line;
	uint32_t frame;
};

static int key_cmp(const void *a, const void *b)
{
	const struct func_key *x = a, *y = b;

	if (x->kernel != y->kernel)
		return x->kernel < y->kernel ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->start_line != y->start_line)
		return x->start_line < y->start_line ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int key_same(const struct func_key *x, const struct func_key *y)
{
	return x->kernel == y->kernel && x->name == y->name && x->file == y->file &&
	       x->start_line == y->start_line;
}

int64_t pp_func__groups(const struct prof_frame *fr, uint32_t nfr, uint32_t **group_out)
{
	struct func_key *k = malloc((nfr ? nfr : 1) * sizeof(*k));
	uint32_t *group = malloc((nfr ? nfr : 1) * sizeof(*group));
	int64_t ng = 0;

	if (!k || !group) {
		free(k);
		free(group);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nfr; i++)
		k[i] = (struct func_key){ .kernel = fr[i].kind == PROFILE_FRAME_KERNEL,
					  .name = pp_func_name(&fr[i]), .file = fr[i].file,
					  .start_line = fr[i].start_line, .frame = i };
	qsort(k, nfr, sizeof(*k), key_cmp);
	for (uint32_t i = 0; i < nfr; i++) {
		if (i && !key_same(&k[i - 1], &k[i]))
			ng++;
		group[k[i].frame] = (uint32_t)ng;
	}
	free(k);
	*group_out = group;
	return nfr ? ng + 1 : 0;
}
