/* SPDX-License-Identifier: MIT */
/*
 * CPython for the tests that run one: an interpreter of a given minor
 * version on this machine, and the CPython image of a live child, as
 * sfprof would find it. Static: include it once per test.
 */
#ifndef SFPROF_TEST_PYIMAGE_H
#define SFPROF_TEST_PYIMAGE_H

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/python/pyversion.h"

/* The first CPython 3.minor here into out: pyenv's build, else
 * /usr/bin's. 0, or -ENOENT when there is none. */
static int find_python(unsigned minor, char *out, size_t len)
{
	char pat[128];
	glob_t g;

	snprintf(pat, sizeof(pat), "/root/.pyenv/versions/3.%u.*/bin/python3.%u", minor, minor);
	if (glob(pat, 0, NULL, &g) != 0) {
		snprintf(pat, sizeof(pat), "/usr/bin/python3.%u", minor);
		if (glob(pat, 0, NULL, &g) != 0)
			return -ENOENT;
	}
	snprintf(out, len, "%s", g.gl_pathv[0]);
	globfree(&g);
	return 0;
}

/* The mapped file (the executable, or libpython) that pyversion_detect()
 * accepts in a live child, and its load bias from /proc/PID/maps. */
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
