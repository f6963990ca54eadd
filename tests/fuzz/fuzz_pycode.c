// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the CPython code-object reader (pyreader.h) over a
 * hostile memory image (tests/fuzz/pymem_image.h): two lookups of each
 * code object (the second a re-validated cache hit), with every result
 * checked for sane UTF-8 and bounds; and the bytes after the header
 * straight through the line-table decoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pymem_image.h"
#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyreader.h"

static volatile uint64_t sink;

static void check_utf8(const char *s)
{
	size_t n = strlen(s);

	if (n >= PYREADER_STR_MAX)
		abort();
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t w = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

		if (!w || i + w > n)
			abort();
		for (size_t k = 1; k < w; k++)
			if (((unsigned char)s[i + k] >> 6) != 2)
				abort();
		i += w;
	}
	sink += n;
}

static void name_one(struct pyreader *r, uint64_t code, uint32_t instr)
{
	struct pycode_frame f;

	for (int round = 0; round < 2; round++) {
		if (pycode_name(r, 7, code, instr, &f) < 0)
			continue;
		if (!f.qualname || !f.name || !f.filename || f.line < 0)
			abort();
		check_utf8(f.qualname);
		check_utf8(f.name);
		check_utf8(f.filename);
		sink += (uint64_t)f.line + (uint64_t)f.firstlineno;
	}
}

static void decode_raw(const uint8_t *d, size_t n)
{
	struct pylinetable t;

	if (pylinetable_decode(d, n, (int32_t)(n * 7), &t) < 0)
		return;
	for (uint32_t i = 1; i < t.nr_runs; i++)
		if (t.runs[i].end <= t.runs[i - 1].end)
			abort();
	for (uint32_t off = 0; off < 64; off += 2)
		sink += (uint64_t)pylinetable_line(&t, off);
	pylinetable_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pymem_image m;
	const struct pyoffsets *o;
	struct pyreader *r;
	struct pyreader_stats st;

	if (size > PYMEM_HDR_LEN)
		decode_raw(data + PYMEM_HDR_LEN, size - PYMEM_HDR_LEN);
	if (pymem_parse(data, size, &m) < 0)
		return 0;
	if (pyoffsets_for_version(3, (int)m.minor, &o) < 0)
		pyoffsets_for_version(3, 11, &o);
	r = pyreader__new(2, ((m.flags & 2) ? PYREADER_F_TRUST_CACHE : 0) |
				     ((m.flags & 4) ? PYREADER_F_VERIFY_PER_TICK : 0));
	if (!r)
		return 0;
	struct pyreader_target t = { .offsets = o, .read = pymem_read, .read_ctx = &m };
	if (m.flags & 1) {
		t.code_type = m.code_type;
		t.unicode_type = m.unicode_type;
		t.bytes_type = m.bytes_type;
	}
	if (pyreader__add_target(r, 7, &t) == 0) {
		name_one(r, m.code_ptr, m.instr_offset);
		if (m.code_ptr2)
			name_one(r, m.code_ptr2, m.instr_offset + 2);
		pyreader__tick(r);
		name_one(r, m.code_ptr, m.instr_offset); /* maybe evicted by now */
		pyreader__stats(r, &st);
		if (st.hits + st.misses + st.err_read + st.err_type + st.err_string +
			    st.err_nomem + st.err_no_target > st.lookups)
			abort();
		pyreader__forget_pid(r, 7);
	}
	pyreader__free(r);
	return 0;
}
