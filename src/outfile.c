// SPDX-License-Identifier: MIT
/*
 * Output files of profiles (include/profile.h): the pre-flight check run
 * before profiling starts.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"

int profile__check_output(const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!path[0])
		return -ENOENT;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		/* a device or FIFO is written in place: it must be writable */
		if (!S_ISREG(st.st_mode))
			return access(path, W_OK) ? -errno : 0;
	}
	/* a regular file is written beside itself and renamed: its
	 * directory must exist and be writable */
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return -errno;
	return 0;
}
