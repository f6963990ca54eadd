// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the SFrame library: the input is a .sframe
 * section. Decode it; if it is accepted, dump it, look up PCs at and
 * around every function and row boundary (and a few taken from the
 * input), read every function and row back, and re-encode the decoded
 * rows as v3 and v2: whatever the encoder writes must decode again.
 * tests/fuzz/replay.c turns this into a plain program over the corpus.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/sframe.h"

#define SECTION_VADDR 0x400000ull
#define MAX_LOOKUPS 4096

static FILE *devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void lookup(const struct sframe_table *t, uint64_t pc, unsigned *budget)
{
	struct sframe_row row;
	struct sframe_func fn;
	int err;

	if (!*budget)
		return;
	(*budget)--;
	err = sframe_table__find(t, pc, &row, &fn);
	if (err == 0) {
		/* the function found must cover pc */
		if (pc < fn.start || pc - fn.start >= fn.size)
			__builtin_trap();
	} else if (err != -ENOENT && err != -ESRCH) {
		__builtin_trap();
	}
}

static void reencode(const struct sframe_table *t, int version)
{
	size_t nf = sframe_table__nr_funcs(t), nr = sframe_table__nr_rows(t);
	struct sframe_func *funcs = calloc(nf ? nf : 1, sizeof(*funcs));
	struct sframe_row *rows = calloc(nr ? nr : 1, sizeof(*rows));
	struct sframe_encode_opts o = {
		.version = version,
		.abi = sframe_table__abi(t),
		.fixed_ra_offset = sframe_table__fixed_ra_offset(t),
		.fixed_fp_offset = sframe_table__fixed_fp_offset(t),
		.section_vaddr = SECTION_VADDR,
	};
	struct sframe_table *t2 = NULL;
	size_t k = 0, len = 0;
	void *out = NULL;
	int err;

	if (!funcs || !rows)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		if (sframe_table__func(t, i, &funcs[i]))
			__builtin_trap();
		for (uint32_t j = 0; j < funcs[i].num_rows; j++)
			if (k >= nr || sframe_table__row(t, i, j, &rows[k++]))
				__builtin_trap();
	}
	if (k != nr)
		__builtin_trap();
	err = sframe_encode(&o, funcs, nf, rows, nr, &out, &len);
	if (err == 0) {
		err = sframe_table__new(out, len, SECTION_VADDR, &t2);
		if (err)
			__builtin_trap(); /* the encoder wrote something invalid */
		sframe_table__dump(t2, NULL, devnull());
		sframe_table__free(t2);
		free(out);
	} else if (err != -EINVAL && err != -ERANGE && err != -E2BIG &&
		   err != -ENOMEM) {
		__builtin_trap();
	}
out:
	free(funcs);
	free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sframe_table *t = NULL;
	unsigned budget = MAX_LOOKUPS;
	int err;

	err = sframe_table__new(data, size, SECTION_VADDR, &t);
	if (err) {
		if (t || err >= 0 || !sframe_strerror(err))
			__builtin_trap();
		return 0;
	}
	sframe_table__dump(t, "fuzz", devnull());
	for (size_t i = 0; i < sframe_table__nr_funcs(t); i++) {
		struct sframe_func fn;
		struct sframe_row row;

		if (sframe_table__func(t, i, &fn))
			__builtin_trap();
		lookup(t, fn.start - 1, &budget);
		lookup(t, fn.start, &budget);
		lookup(t, fn.start + fn.size - 1, &budget);
		lookup(t, fn.start + fn.size, &budget);
		for (uint32_t j = 0; j < fn.num_rows; j++) {
			if (sframe_table__row(t, i, j, &row))
				__builtin_trap();
			lookup(t, fn.start + row.start, &budget);
			lookup(t, fn.start + row.start - 1, &budget);
		}
		if (sframe_table__row(t, i, fn.num_rows, &row) != -ENOENT)
			__builtin_trap();
	}
	/* PCs taken from the input itself */
	for (size_t off = 0; off + 8 <= size && budget; off += 8) {
		uint64_t pc;

		memcpy(&pc, data + off, 8);
		lookup(t, pc, &budget);
		lookup(t, SECTION_VADDR + (pc & 0xffff), &budget);
	}
	if (size < 64 * 1024) {
		reencode(t, 3);
		reencode(t, 2);
	}
	sframe_table__free(t);
	return 0;
}
