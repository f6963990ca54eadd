// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: CPython's perf trampoline template (pytrampoline.h)
 * found in hostile ELF images: whatever the bytes, a template found is a
 * known one, and every offset of it has a row that steps the CFA up by 8
 * or 16. Seeds (tests/fuzz/corpus/pytramp/): shared objects with the
 * symbols CPython's Python/asm_trampoline.S defines, built by
 *   printf '.text\n.globl _Py_trampoline_func_start\n_Py_trampoline_func_start:\n
 *           sub $8,%%rsp\ncall *%%rcx\nadd $8,%%rsp\nret\n
 *           .globl _Py_trampoline_func_end\n_Py_trampoline_func_end:\nnop\n' > sub8.s
 *   gcc -shared -nostdlib -Wl,-z,noseparate-code -Wl,--build-id=none sub8.s -o sub8.so
 *   (fp-endbr.so: endbr64; push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp;
 *   ret; sub8-stripped.so: strip -s, .dynsym only)
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "runtimes/python/pytrampoline.h"
#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfread *e = elfread__open_mem(data, size);
	struct pytramp t, again;
	struct sframe_row row;
	int r;

	if (!e)
		return 0;
	r = pytramp__from_elf(e, &t);
	elfread__free(e);
	if (r != 0 && r != -ENOENT && r != -EINVAL && r != -ENOTSUP)
		abort();
	if (r)
		return 0;
	if (t.len == 0 || t.len > PYTRAMP_MAX || pytramp__match(t.code, t.len, &again) ||
	    again.shape != t.shape)
		abort();
	for (uint32_t off = 0; off < t.len; off++)
		if (pytramp__row(&t, off, &row) || row.cfa.reg != UNWIND_REG_RSP ||
		    (row.cfa.off != 8 && row.cfa.off != 16) || row.start > off)
			abort();
	if (pytramp__row(&t, t.len, &row) != -ESRCH)
		abort();
	return 0;
}
