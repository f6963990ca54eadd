// SPDX-License-Identifier: MIT
/* The I/O edge of perfmap.h: read what a JIT appended to its map file. */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)

int perfmap__open_read(struct perfmap *m, const char *path, uint64_t max_size)
{
	struct stat st;
	uint64_t end;
	char *buf = NULL;
	int fd, err = 0;

	/* the target writes this file: no symlink, no FIFO that blocks */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	end = (uint64_t)st.st_size;
	if (end > max_size) {
		end = max_size;
		err = -EFBIG;
	}
	if (perfmap__offset(m) >= end)
		goto out; /* nothing new (or a shorter file: keep what we have) */
	buf = malloc(READ_CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (perfmap__offset(m) < end) {
		uint64_t off = perfmap__offset(m);
		size_t want = end - off < READ_CHUNK ? (size_t)(end - off) : READ_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		long used;

		if (n < 0) {
			err = errno == EINTR ? 0 : -errno;
			if (err)
				break;
			continue;
		}
		if (n == 0)
			break;
		used = perfmap__feed(m, buf, (size_t)n);
		if (used < 0) {
			err = (int)used;
			break;
		}
		if (used == 0)
			break; /* a partial last line: the JIT is still writing it */
	}
out:
	free(buf);
	close(fd);
	return err;
}
