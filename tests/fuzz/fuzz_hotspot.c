// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: HotSpot's vmstructs parser and code reader
 * (hotspot.h) over a hostile memory image. Input: base address (u64), a
 * PC (u64), then the memory at base, whose first 15 u64 are the exported
 * variables (struct hotspot_syms' order: gHotSpotVMStructs, ...Types, the
 * entry offsets and strides, the int constants' table and its entry
 * layout), the 16th an interpreted frame's fp. Names must come back
 * terminated, in bounds and without control bytes. The input after its
 * header is also a line-number table (hotspot__line_of()); an nmethod's
 * PC also has its scopes read (hotspot__scopes()), and its caller's
 * frame there (hotspot__caller_frame()).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flat_image.h"
#include "runtimes/hotspot/hotspot.h"

#define HDR 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_syms syms;
	struct hotspot_layout l;
	struct hotspot_code c;
	struct hotspot_method hm;
	struct flat_image m;
	uint64_t pc, fp, *f = &syms.structs;
	uint32_t line;

	if (size < HDR)
		return 0;
	memcpy(&m.base, data, 8);
	memcpy(&pc, data + 8, 8);
	m.mem = data + HDR;
	m.len = size - HDR;
	if (!hotspot__line_of(m.mem, m.len, (uint32_t)pc & 0xffff, &line)) {
		if (!line)
			abort();
		flat_sink += line;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(uint64_t); i++)
		f[i] = m.base + 8 * i;
	if (hotspot__layout(&syms, flat_read, &m, &l))
		return 0;
	for (int name = 0; name < 2; name++) {
		if (hotspot__code(&l, flat_read, &m, pc, name, &c))
			continue;
		flat_check_str(c.name, sizeof(c.name));
		if (c.start > pc || pc >= c.end)
			abort();
		flat_sink += c.frame_size;
		for (int exact = 0; name && c.kind == HOTSPOT_NMETHOD && exact < 2; exact++) {
			struct hotspot_scope sc[HOTSPOT_SCOPES_MAX];
			int n = hotspot__scopes(&l, flat_read, &m, c.blob, c.start, pc, exact, sc);

			if (n > (int)HOTSPOT_SCOPES_MAX)
				abort();
			for (int k = 0; k < n; k++)
				if (!hotspot__method(&l, flat_read, &m, sc[k].method, sc[k].bci, &hm))
					flat_check_str(hm.name, sizeof(hm.name));
		}
		/* a caller's frame there: its inlined frames' lines within the
		 * buffer, each "name\tfile\tline\n" */
		for (size_t cap = 40; name && c.kind == HOTSPOT_NMETHOD && cap <= 1024; cap *= 5) {
			char inl[1024];

			memset(inl, 'x', sizeof(inl));
			if (hotspot__caller_frame(&l, flat_read, &m, &c, pc, &hm, inl, cap))
				continue;
			flat_check_str(hm.name, sizeof(hm.name));
			if (!hm.name[0] || strnlen(inl, cap) >= cap)
				abort();
			for (const char *p = inl; *p;) {
				const char *nl = strchr(p, '\n');
				size_t tabs = 0;

				if (!nl)
					abort();
				for (; p < nl; p++)
					tabs += *p == '\t';
				if (tabs != 2)
					abort();
				p = nl + 1;
			}
		}
	}
	if (flat_read(&m, m.base + 120, &fp, sizeof(fp)))
		return 0;
	for (int with_line = 0; with_line < 2; with_line++) {
		if (hotspot__interp_frame(&l, flat_read, &m, fp, with_line, &hm))
			continue;
		flat_check_str(hm.name, sizeof(hm.name));
		flat_check_str(hm.file, sizeof(hm.file));
		if (!hm.name[0] || (!with_line && hm.line))
			abort();
		flat_sink += hm.line;
	}
	return 0;
}
