// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the V8 object and string reader (v8reader.h) over a
 * hostile memory image, with node 20's layout. Input: base address
 * (u64), the JSFunction's tagged pointer (u64; also taken as an
 * interpreted frame's frame pointer), then the memory at base. Names must
 * come back terminated, in bounds and without control bytes; a frame's
 * bytecode offset within its array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "v8mem_image.h"

#define HDR 16

static volatile uint64_t sink;

static void check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n >= cap)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == ';')
			abort();
	sink += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8img m;
	uint64_t fn, f;
	int32_t off;
	char name[2048], small[16];

	if (size < HDR)
		return 0;
	memcpy(&m.base, data, 8);
	memcpy(&fn, data + 8, 8);
	m.mem = data + HDR;
	m.len = size - HDR;
	if (v8reader__function_name(&v8img_node20, v8img_read, &m, fn, name, sizeof(name)) == 0)
		check_str(name, sizeof(name));
	if (v8reader__interp_frame(&v8img_node20, v8img_read, &m, fn, &f, &off) == 0) {
		if (off < -1)
			abort();
		if (v8reader__function_name(&v8img_node20, v8img_read, &m, f, name,
					    sizeof(name)) == 0)
			check_str(name, sizeof(name));
	}
	for (size_t off = 0; off + 8 <= m.len && off < 2048; off += 8)
		if (v8reader__string(&v8img_node20, v8img_read, &m, m.base + off + 1, small,
				     sizeof(small)) == 0)
			check_str(small, sizeof(small));
	return 0;
}
