// SPDX-License-Identifier: MIT
/* Helpers shared by several modules. See src/util.h. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536

int util__read_file(const char *path, size_t limit, uint8_t **out,
		    size_t *out_len)
{
	uint8_t *buf = NULL, *nb;
	size_t len = 0, cap = READ_CHUNK;
	struct stat st;
	int fd, err;

	*out = NULL;
	*out_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A regular file says how big it is: one read, no regrowth. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (!limit || (uint64_t)st.st_size < limit))
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto err_out;
	}
	for (;;) {
		ssize_t n;

		if (limit && len >= limit) {
			err = -EFBIG;
			goto err_out;
		}
		if (len == cap) {
			if (__builtin_mul_overflow(cap, 2, &cap)) {
				err = -ENOMEM;
				goto err_out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto err_out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err_out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*out_len = len;
	return 0;

err_out:
	close(fd);
	free(buf);
	return err;
}

uint64_t util__clock_ns(int clk)
{
	struct timespec ts;

	clock_gettime((clockid_t)clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t util__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int util__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap, bytes;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (__builtin_mul_overflow(ncap, 2, &ncap))
			return -ENOMEM;
	}
	if (__builtin_mul_overflow(ncap, elem, &bytes))
		return -ENOMEM;
	n = realloc(*arr, bytes);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

void util__fmt_count(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}
