// SPDX-License-Identifier: MIT
/* Per-process JIT perf maps, read as they grow (include/jitmap.h). */
#include "jitmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfmap.h"
#include "util.h"

#define SLOTS 16

struct jitmaps {
	struct {
		uint32_t pid;
		int fd;		  /* the map file, once opened (else -1) */
		uint64_t try_ns;  /* last open or read attempt, 0 = never */
		struct perfmap *map;
	} slot[SLOTS];
};

struct jitmaps *jitmaps__new(void)
{
	struct jitmaps *j = calloc(1, sizeof(*j));

	if (j)
		for (unsigned i = 0; i < SLOTS; i++)
			j->slot[i].fd = -1;
	return j;
}

void jitmaps__free(struct jitmaps *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < SLOTS; i++) {
		perfmap__free(j->slot[i].map);
		if (j->slot[i].fd >= 0)
			close(j->slot[i].fd);
	}
	free(j);
}

/* The map file of pid, in its mount namespace. fd or -errno. */
static int open_map(uint32_t pid)
{
	char root[48], rel[48], path[96];
	int fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	snprintf(rel, sizeof(rel), "tmp/perf-%u.map", pid);
	fd = perfmap__open_file_in(root, rel);
	if (fd != -EOPNOTSUPP)
		return fd;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return perfmap__open_file(path);
}

const char *jitmaps__name(struct jitmaps *j, uint32_t pid, uint64_t pc, int now_or_never)
{
	unsigned k = pid % SLOTS;
	const char *name;
	uint64_t now;

	if (j->slot[k].pid != pid || !j->slot[k].map) {
		perfmap__free(j->slot[k].map);
		if (j->slot[k].fd >= 0)
			close(j->slot[k].fd);
		j->slot[k].fd = -1;
		j->slot[k].map = perfmap__new();
		j->slot[k].pid = pid;
		j->slot[k].try_ns = 0;
		if (!j->slot[k].map)
			return NULL;
	}
	if (!perfmap__lookup(j->slot[k].map, pc, &name, NULL))
		return name;
	now = util__now_ns();
	if (!now_or_never && j->slot[k].try_ns && now - j->slot[k].try_ns < JITMAP_REREAD_NS)
		return NULL;
	j->slot[k].try_ns = now;
	if (j->slot[k].fd < 0) {
		int fd = open_map(pid);

		if (fd < 0)
			return NULL; /* not written yet, usually */
		j->slot[k].fd = fd;
	}
	/* (an error keeps what was read) */
	perfmap__read_fd(j->slot[k].map, j->slot[k].fd, JITMAP_MAX_SIZE);
	return perfmap__lookup(j->slot[k].map, pc, &name, NULL) ? NULL : name;
}
