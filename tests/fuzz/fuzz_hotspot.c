// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: HotSpot's vmstructs parser and code reader
 * (hotspot.h) over a hostile memory image. Input: base address (u64), a
 * PC (u64), then the memory at base, whose first 11 u64 are the exported
 * variables (struct hotspot_syms' order: gHotSpotVMStructs, ...Types, the
 * entry offsets and strides). Names must come back terminated, in bounds
 * and without control bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flat_image.h"
#include "hotspot.h"

#define HDR 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_syms syms;
	struct hotspot_layout l;
	struct hotspot_code c;
	struct flat_image m;
	uint64_t pc, *f = &syms.structs;
	size_t n;

	if (size < HDR)
		return 0;
	memcpy(&m.base, data, 8);
	memcpy(&pc, data + 8, 8);
	m.mem = data + HDR;
	m.len = size - HDR;
	for (size_t i = 0; i < sizeof(syms) / sizeof(uint64_t); i++)
		f[i] = m.base + 8 * i;
	if (hotspot__layout(&syms, flat_read, &m, &l))
		return 0;
	for (int name = 0; name < 2; name++) {
		if (hotspot__code(&l, flat_read, &m, pc, name, &c))
			continue;
		n = strnlen(c.name, sizeof(c.name));
		if (n >= sizeof(c.name) || c.start > pc || pc >= c.end)
			abort();
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c.name[i] < 0x20)
				abort();
		flat_sink += n + c.frame_size;
	}
	return 0;
}
