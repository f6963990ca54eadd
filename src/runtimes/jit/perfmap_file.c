// SPDX-License-Identifier: MIT
/* The I/O edge of perfmap.h: open a JIT's map file safely, read what it appended. */
#include "perfmap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)

/* The target writes this file: no symlink, no FIFO that blocks. */
#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* fd if it is a regular file (else closed: -EINVAL). */
static int regular(int fd)
{
	struct stat st;
	int err;

	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int perfmap__open_file(const char *path)
{
	int fd = open(path, OPEN_FLAGS);

	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	return regular(fd);
}

int perfmap__open_file_in(const char *root, const char *rel)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		/* every "/" and ".." (symlinks included) stays inside root */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int dfd, fd, err;

	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	err = errno;
	close(dfd);
	if (fd < 0) {
		if (err == ENOSYS)
			return -EOPNOTSUPP;
		return err == ELOOP ? -EINVAL : -err;
	}
	return regular(fd);
}

int perfmap__read_fd(struct perfmap *m, int fd, uint64_t max_size)
{
	uint64_t end;
	char *buf = NULL;
	int err = util__regular_end(fd, max_size, &end);

	if (err && err != -EFBIG)
		return err;
	if (perfmap__offset(m) >= end)
		return err; /* nothing new (or a shorter file: keep what we have) */
	buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (perfmap__offset(m) < end) {
		uint64_t off = perfmap__offset(m);
		size_t want = end - off < READ_CHUNK ? (size_t)(end - off) : READ_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		long used;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
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
	free(buf);
	return err;
}

int perfmap__open_read(struct perfmap *m, const char *path, uint64_t max_size)
{
	int fd = perfmap__open_file(path), err;

	if (fd < 0)
		return fd;
	err = perfmap__read_fd(m, fd, max_size);
	close(fd);
	return err;
}

int perfmap__open_read_in(struct perfmap *m, const char *root, const char *rel,
			  uint64_t max_size)
{
	int fd = perfmap__open_file_in(root, rel), err;

	if (fd < 0)
		return fd;
	err = perfmap__read_fd(m, fd, max_size);
	close(fd);
	return err;
}
