// SPDX-License-Identifier: MIT
/* Per-process JIT perf maps, read as they grow (include/jitmap.h). */
#include "jitmap.h"

#include <stdio.h>
#include <stdlib.h>

#include "perfmap.h"
#include "util.h"

#define SLOTS 16

struct jitmaps {
	struct {
		uint32_t pid;
		uint64_t read_ns; /* last read, 0 = never */
		struct perfmap *map;
	} slot[SLOTS];
};

struct jitmaps *jitmaps__new(void)
{
	return calloc(1, sizeof(struct jitmaps));
}

void jitmaps__free(struct jitmaps *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < SLOTS; i++)
		perfmap__free(j->slot[i].map);
	free(j);
}

const char *jitmaps__name(struct jitmaps *j, uint32_t pid, uint64_t pc)
{
	unsigned k = pid % SLOTS;
	const char *name;
	char path[96];
	uint64_t now;

	if (j->slot[k].pid != pid || !j->slot[k].map) {
		perfmap__free(j->slot[k].map);
		j->slot[k].map = perfmap__new();
		j->slot[k].pid = pid;
		j->slot[k].read_ns = 0;
		if (!j->slot[k].map)
			return NULL;
	}
	if (!perfmap__lookup(j->slot[k].map, pc, &name, NULL))
		return name;
	now = util__now_ns();
	if (j->slot[k].read_ns && now - j->slot[k].read_ns < JITMAP_REREAD_NS)
		return NULL;
	j->slot[k].read_ns = now;
	snprintf(path, sizeof(path), "/proc/%u/root/tmp/perf-%u.map", pid, pid);
	/* (errors leave the map as it was: no file yet is the usual one) */
	perfmap__open_read(j->slot[k].map, path, JITMAP_MAX_SIZE);
	return perfmap__lookup(j->slot[k].map, pc, &name, NULL) ? NULL : name;
}
