/* SPDX-License-Identifier: MIT */
/*
 * A flat memory image for the fuzz targets of readers that take a read
 * callback (fuzz_rbiseq.c, fuzz_phpframe.c, fuzz_hotspot.c): the input's
 * bytes after its header stand at `base` in a target's address space,
 * nothing else is mapped; and the check of a string a reader returned
 * (terminated within its buffer, no control bytes).
 */
#ifndef SFPROF_FLAT_IMAGE_H
#define SFPROF_FLAT_IMAGE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct flat_image {
	uint64_t base;
	const uint8_t *mem;
	size_t len;
};

static volatile uint64_t flat_sink;

/* A reader's callback: exactly len bytes at addr, or -EFAULT. */
static inline int flat_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct flat_image *m = ctx;

	if (addr < m->base || addr - m->base > m->len || len > m->len - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->mem + (addr - m->base), len);
	return 0;
}

/* Abort unless s is terminated within cap bytes and has no control byte. */
static inline void flat_check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n >= cap)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			abort();
	flat_sink += n;
}

#endif
