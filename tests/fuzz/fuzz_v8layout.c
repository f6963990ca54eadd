// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: V8's layout from a binary's v8dbg_* constants
 * (v8layout__from_elf()): the binary is the target's, so its symbols and
 * values are hostile. Input: an ELF image. A layout it accepts must hold
 * the bounds the reader relies on (the interpreter frame's too, when it
 * takes them).
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/elfread.h"
#include "runtimes/v8/v8reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfread *e = elfread__open_mem(data, size);
	struct v8_layout l;

	if (!e)
		return 0;
	if (v8layout__from_elf(e, &l) == 0 &&
	    (l.fp_function % 8 || l.fp_function < -256 || l.fp_function > 256 ||
	     l.heap_tag_mask > 7 || l.map > 4096 || l.str_len > 4096 || l.smi_shift != 32 ||
	     (l.has_interp &&
	      (l.fp_context >= 0 || l.fp_context < -256 || l.fp_context % 8 ||
	       l.fp_bytecode_array >= 0 || l.fp_bytecode_array < -256 || l.fp_bytecode_array % 8 ||
	       l.fp_bytecode_offset >= 0 || l.fp_bytecode_offset < -256 ||
	       l.fp_bytecode_offset % 8 || l.sfi_data > 4096 || l.code_bytecode > 4096 ||
	       l.array_len > 4096 || l.bytecode_data > 4096 || l.bytecode_data <= l.array_len))))
		abort();
	elfread__free(e);
	return 0;
}
