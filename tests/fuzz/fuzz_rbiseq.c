// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the CRuby iseq and string readers (rbreader.h) over
 * a hostile memory image, with Ruby 3.1's offsets (and the C method
 * reader, the image's base taken as the global symbol table; the class
 * path reader, the iseq address taken as a method entry, base + 0x3800
 * as the symbol table, and the label qualifier). Input: base address
 * (u64), iseq address (u64), pc index (s32), 4 bytes of padding, then
 * the memory at base. Every result is checked: strings terminated, in
 * bounds and without control bytes, lines not negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flat_image.h"
#include "runtimes/ruby/rboffsets.h"
#include "runtimes/ruby/rbreader.h"

#define HDR 24
#define SYMBOLS 0x3800 /* gen_rbiseq_corpus.py: a class path's symbol table */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct rboffsets *o = rboffsets__find(3, 1);
	struct rbiseq_name nm;
	struct flat_image m;
	uint64_t iseq;
	int32_t instr;
	char small[8];
	int cut = 0;

	if (!o || size < HDR)
		return 0;
	memcpy(&m.base, data, 8);
	memcpy(&iseq, data + 8, 8);
	memcpy(&instr, data + 16, 4);
	m.mem = data + HDR;
	m.len = size - HDR;
	struct rbreader_src src = { o, flat_read, &m };

	if (rbreader__iseq(&src, iseq, instr, &nm) == 0) {
		flat_check_str(nm.label, sizeof(nm.label));
		flat_check_str(nm.path, sizeof(nm.path));
		if (nm.line < 0)
			abort();
		flat_sink += (uint64_t)nm.line + (uint64_t)nm.first_lineno;
	}
	/* the iseq address as a C method's entry, the base as the symbols */
	if (rbreader__cfunc(&src, m.base, iseq, small, sizeof(small), &cut) >= 0)
		flat_check_str(small, sizeof(small));
	/* the iseq address as a method entry: its class path, the label
	 * qualified by it */
	char cls[RBREADER_STR_MAX], full[2 * RBREADER_STR_MAX];
	int singleton = 0;

	if (rbreader__class_path(&src, m.base + SYMBOLS, iseq, cls, sizeof(cls), &singleton,
				 &cut) >= 0) {
		flat_check_str(cls, sizeof(cls));
		if (singleton != 0 && singleton != 1)
			abort();
		size_t n = rbreader__full_label(nm.label, nm.base_label, cls, singleton, full,
						sizeof(full));

		flat_check_str(full, sizeof(full));
		if (n != strlen(full))
			abort();
		flat_sink += n;
	}
	/* every word of the image as a string, into a small buffer */
	for (size_t off = 0; off + 8 <= m.len && off < 4096; off += 8) {
		uint64_t v;

		memcpy(&v, m.mem + off, 8);
		if (rbreader__string(&src, v, small, sizeof(small), &cut) >= 0)
			flat_check_str(small, sizeof(small));
	}
	return 0;
}
