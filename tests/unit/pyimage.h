/* SPDX-License-Identifier: MIT */
/*
 * The CPython image of a live child, as sfprof would find it: the mapped
 * file (the executable, or libpython) that pyversion_detect() accepts,
 * and its load bias from /proc/PID/maps. Static: include it once per test.
 */
#ifndef SFPROF_TEST_PYIMAGE_H
#define SFPROF_TEST_PYIMAGE_H

#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include "elfread.h"
#include "procmaps.h"
#include "pyversion.h"

static int find_python_image(pid_t pid, struct pyversion_info *v, int64_t *bias)
{
	struct procmaps *m;
	int ret = -ENOENT;

	if (procmaps__read((uint32_t)pid, &m) < 0)
		return -ESRCH;
	for (size_t i = 0; i < m->nr && ret == -ENOENT; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		struct elfread *e;

		if (!me->path[0] || me->pseudo || !strstr(me->path, "python"))
			continue;
		e = elfread__open(me->path);
		if (!e)
			continue;
		if (pyversion_detect(e, me->path, v) == 0 &&
		    elfread__mapping_bias(e, me->start, me->offset, bias) == 0)
			ret = 0;
		elfread__free(e);
	}
	procmaps__free(m);
	return ret;
}

#endif
