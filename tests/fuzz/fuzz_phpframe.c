// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the PHP frame reader (phpreader.h) over a hostile
 * memory image, with PHP 8.2's offsets. Input: base address (u64),
 * zend_function address (u64), opline index (s32), 4 bytes of padding,
 * then the memory at base. Names must come back terminated, in bounds
 * and without control bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phpreader.h"

#define HDR 24

struct image {
	uint64_t base;
	const uint8_t *mem;
	size_t len;
};

static volatile uint64_t sink;

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = ctx;

	if (addr < m->base || addr - m->base > m->len || len > m->len - (addr - m->base))
		return -14; /* -EFAULT */
	memcpy(buf, m->mem + (addr - m->base), len);
	return 0;
}

static void check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n >= cap)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			abort();
	sink += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct phpoffsets *o = phpoffsets__find(20220829);
	struct phpframe_name nm;
	struct image m;
	uint64_t func;
	int32_t instr;
	char small[8];

	if (!o || size < HDR)
		return 0;
	memcpy(&m.base, data, 8);
	memcpy(&func, data + 8, 8);
	memcpy(&instr, data + 16, 4);
	m.mem = data + HDR;
	m.len = size - HDR;
	struct phpreader_src src = { o, read_image, &m };

	if (phpreader__frame(&src, func, instr, &nm) == 0) {
		check_str(nm.name, sizeof(nm.name));
		check_str(nm.file, sizeof(nm.file));
		sink += nm.line + nm.line_start;
	}
	for (size_t off = 0; off + 8 <= m.len && off < 4096; off += 8)
		if (phpreader__string(&src, m.base + off, small, sizeof(small)) >= 0)
			check_str(small, sizeof(small));
	return 0;
}
