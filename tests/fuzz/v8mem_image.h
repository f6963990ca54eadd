/* SPDX-License-Identifier: MIT */
/*
 * V8 objects laid out as node 20 (V8 11.3, x86-64, no pointer
 * compression) lays them out, in a memory image for the V8 reader's
 * tests (tests/unit/test_v8reader.c, tests/fuzz/fuzz_v8string.c): node
 * 20's v8dbg_* values (with the interpreter frame's), and a reader over
 * [base, base + len).
 */
#ifndef SFPROF_V8MEM_IMAGE_H
#define SFPROF_V8MEM_IMAGE_H

#include <stdint.h>
#include <string.h>

#include "runtimes/v8/v8reader.h"

static const struct v8_layout v8img_node20 = {
	.fp_function = -16, .heap_tag = 1, .heap_tag_mask = 3, .smi_shift = 32,
	.map = 0, .map_type = 12, .fn_shared = 24, .sfi_name = 16, .sfi_script = 32,
	.script_name = 16, .str_len = 12, .seq1_chars = 16, .seq2_chars = 16,
	.cons_first = 16, .cons_second = 24, .thin_actual = 16, .sliced_parent = 16,
	.sliced_offset = 24, .t_function = 2066, .t_sfi = 262, .t_script = 167,
	.t_scope_info = 261, .first_nonstring = 128, .repr_mask = 7, .enc_mask = 8,
	.seq_tag = 0, .cons_tag = 1, .thin_tag = 5, .sliced_tag = 3, .one_byte_tag = 8,
	.si_ncontextlocals = 2, .si_first_vars = 3,
	.has_interp = 1, .fp_context = -8, .fp_bytecode_array = -32, .fp_bytecode_offset = -40,
	.sfi_data = 8, .code_bytecode = 16, .array_len = 8, .bytecode_data = 54,
	.t_bytecode = 191, .t_interp_data = 159, .t_code = 245,
};

struct v8img {
	uint64_t base;
	const uint8_t *mem;
	size_t len;
};

static inline int v8img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct v8img *m = ctx;

	if (addr < m->base || addr - m->base > m->len || len > m->len - (addr - m->base))
		return -14; /* -EFAULT */
	memcpy(buf, m->mem + (addr - m->base), len);
	return 0;
}

#endif
