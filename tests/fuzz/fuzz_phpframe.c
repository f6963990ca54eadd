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

#include "flat_image.h"
#include "runtimes/php/phpreader.h"

#define HDR 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct phpoffsets *o = phpoffsets__find(20220829);
	struct phpframe_name nm;
	struct flat_image m;
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
	struct phpreader_src src = { o, flat_read, &m };

	if (phpreader__frame(&src, func, instr, &nm) == 0) {
		flat_check_str(nm.name, sizeof(nm.name));
		flat_check_str(nm.file, sizeof(nm.file));
		flat_sink += nm.line + nm.line_start;
	}
	for (size_t off = 0; off + 8 <= m.len && off < 4096; off += 8)
		if (phpreader__string(&src, m.base + off, small, sizeof(small)) >= 0)
			flat_check_str(small, sizeof(small));
	return 0;
}
