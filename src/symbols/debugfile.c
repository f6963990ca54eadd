// SPDX-License-Identifier: MIT
/*
 * Separate debug files of a binary: by build-id under
 * <root>/usr/lib/debug/.build-id, or by .gnu_debuglink (next to the
 * binary, in its .debug/ directory, under <root>/usr/lib/debug/<dir>/),
 * each candidate checked by build-id or CRC32. See src/symbols/symbolize.h.
 */
#include "symbols/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/elfread.h"

static int same_build_id(const struct elfread *a, const struct elfread *b)
{
	uint8_t ia[ELFREAD_BUILD_ID_MAX], ib[ELFREAD_BUILD_ID_MAX];
	size_t la, lb;

	if (elfread__build_id(a, ia, &la) || elfread__build_id(b, ib, &lb))
		return -ENOENT; /* cannot tell */
	return la == lb && !memcmp(ia, ib, la);
}

static int file_crc32(const char *path, uint32_t *out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, n);
	close(fd);
	if (n < 0)
		return -EIO;
	*out = crc;
	return 0;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b || stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Does candidate `cand` hold the debug info of `e`? */
static int debug_file_matches(const struct elfread *e, const char *cand,
			      int have_crc, uint32_t crc)
{
	struct elfread *d = elfread__open(cand);
	int same;

	if (!d)
		return 0;
	same = same_build_id(e, d);
	elfread__free(d);
	if (same >= 0)
		return same;
	if (have_crc) {
		uint32_t got;

		return !file_crc32(cand, &got) && got == crc;
	}
	return 0;
}

int symbolize__find_debug_file(const struct elfread *e, const char *path,
			       const char *debug_root, char *buf, size_t cap,
			       unsigned *how)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	const char *root = debug_root && strcmp(debug_root, "/") ? debug_root
								 : "";
	const char *link = NULL;
	uint32_t crc = 0;
	size_t id_len;
	int n;

	if (!elfread__build_id(e, id, &id_len) && id_len >= 2) {
		elfread__hex(id, id_len, hex);
		n = snprintf(buf, cap, "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			     root, hex, hex + 2);
		if (n > 0 && (size_t)n < cap && !access(buf, R_OK) &&
		    debug_file_matches(e, buf, 0, 0) == 1) {
			*how = SYMSRC_DEBUG_BUILDID;
			return 0;
		}
	}
	if (!elfread__debuglink(e, &link, &crc) && !strchr(link, '/')) {
		char dir[PATH_MAX];
		const char *slash = path ? strrchr(path, '/') : NULL;
		const char *fmts[3] = { "%s/%s", "%s/.debug/%s",
					"%s/usr/lib/debug%s/%s" };
		int i;

		if (slash) {
			size_t dl = slash - path;

			if (dl >= sizeof(dir))
				return -ENOENT;
			memcpy(dir, path, dl);
			dir[dl] = '\0';
		} else {
			strcpy(dir, ".");
		}
		for (i = 0; i < 3; i++) {
			if (i < 2)
				n = snprintf(buf, cap, fmts[i], dir, link);
			else if (dir[0] == '/')
				n = snprintf(buf, cap, fmts[i], root, dir, link);
			else
				continue;
			if (n <= 0 || (size_t)n >= cap || access(buf, R_OK))
				continue;
			if (same_file(buf, path))
				continue;
			if (debug_file_matches(e, buf, 1, crc) == 1) {
				*how = SYMSRC_DEBUGLINK;
				return 0;
			}
		}
	}
	return -ENOENT;
}

