// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bytes as a .gopclntab section (gopclntab.h). A table
 * that parses is read through every entry point: each function record,
 * lookups at its edges, its whole SP-delta table, the rows the Go room
 * derives (goruntime.h). Everything returned must lie inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/go/goruntime.h"
#include "unwind/sframe.h"

#define MAX_FUNCS 2048

static volatile uint64_t sink;

static void inside(const uint8_t *data, size_t size, const char *name)
{
	const uint8_t *p = (const uint8_t *)name;

	if (p < data || p >= data + size || !memchr(p, 0, (size_t)(data + size - p)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sframe_encode_opts o = { .version = 3, .abi = SFRAME_ABI_AMD64_LE,
					.fixed_ra_offset = -8 };
	struct sframe_table *st = NULL;
	struct gopclntab t;

	if (gopclntab__parse(data, size, 0x401000, &t))
		return 0;
	for (uint64_t i = 0; i < t.nfunc && i < MAX_FUNCS; i++) {
		struct gopclntab_func f, g;
		struct gopclntab_pcvalue it;
		struct sframe_row row;
		struct sframe_func fn;
		uint64_t lo, hi, prev;
		int32_t v;
		int rc;

		if (gopclntab__func(&t, i, &f))
			continue;
		inside(data, size, f.name);
		if (f.end < f.start || f.start < t.text || f.end > t.text_end)
			abort();
		if (f.end > f.start) {
			if (gopclntab__find(&t, f.start, &g) == 0 &&
			    (g.start > f.start || g.end <= f.start))
				abort();
			if (gopclntab__find(&t, f.end - 1, &g) == 0 &&
			    (g.start > f.end - 1 || g.end <= f.end - 1))
				abort();
		}
		sink += (uint64_t)go_runtime__special_row(&t, f.start, &row, &fn);
		sink += (uint64_t)go_runtime__special_row(&t, f.start - 1, &row, NULL);
		if (gopclntab__pcvalue_start(&t, &f, f.pcsp, &it))
			continue;
		prev = f.start;
		while ((rc = gopclntab__pcvalue_next(&it, &lo, &hi, &v)) == 1) {
			/* runs follow each other inside the function */
			if (lo != prev || hi < lo || hi > f.end)
				abort();
			prev = hi;
			sink += (uint64_t)v;
		}
		if (gopclntab__spdelta(&t, &f, f.start, &v) == 0)
			sink += (uint64_t)v;
	}
	if (t.nfunc <= MAX_FUNCS && go_runtime__derive_table(&t, &o, &st) == 0) {
		struct sframe_row row;
		struct sframe_func fn;

		if (sframe_table__find(st, t.text, &row, &fn) == 0)
			sink += fn.start;
		sframe_table__free(st);
	}
	return 0;
}
