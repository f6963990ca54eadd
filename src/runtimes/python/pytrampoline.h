/* SPDX-License-Identifier: MIT */
/*
 * CPython's perf trampoline (3.12+ `-X perf`, Python/asm_trampoline.S):
 * for every code object CPython copies the code between the symbols
 * `_Py_trampoline_func_start` and `_Py_trampoline_func_end` of its binary
 * (libpython3.X.so or a static python3.X) verbatim into anonymous
 * executable memory, and names each copy in /tmp/perf-PID.map as
 * "py::QUALNAME:FILE" with the template's size. The copies have no unwind
 * rows (no FDE covers them), and the template CPython 3.12 and 3.13 build
 * on x86-64 keeps no frame pointer:
 *     sub $8,%rsp; call *%rcx; add $8,%rsp; ret
 * so the frame-pointer fallback cannot cross them. This module recognises
 * the template by its exact bytes (no x86 decoder: a template of another
 * shape is not recognised, and the walk falls back to frame pointers as
 * before) and gives the unwind row at each offset of a copy.
 *
 * Known shapes (each also with a leading endbr64, as CET builds have):
 *  - PYTRAMP_SUB8: sub $8,%rsp; call *%rcx; add $8,%rsp; ret (11 bytes);
 *  - PYTRAMP_FP:   push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret.
 * Pure code; the ELF image is hostile and every symbol is checked
 * against it before a byte is read.
 */
#ifndef SFPROF_PYTRAMPOLINE_H
#define SFPROF_PYTRAMPOLINE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/sframe.h"

#define PYTRAMP_MAX 32u /* longest template accepted, in bytes */
#define PYTRAMP_NAME_PREFIX "py::"

enum pytramp_shape {
	PYTRAMP_NONE = 0,
	PYTRAMP_SUB8,
	PYTRAMP_FP,
	PYTRAMP_SUB8_ENDBR,
	PYTRAMP_FP_ENDBR,
	PYTRAMP__NR,
};

struct pytramp {
	uint32_t shape; /* enum pytramp_shape */
	uint32_t len;	/* template size = a perf-map entry's size */
	uint8_t code[PYTRAMP_MAX];
};

struct elfread;

/* Match code[0..len) against the known templates: 0 with *t, -ENOENT. */
int pytramp__match(const uint8_t *code, size_t len, struct pytramp *t);

/*
 * The template of a CPython binary: the bytes between its symbols
 * _Py_trampoline_func_start and _end (.dynsym, else .symtab), matched.
 * 0 with *t; -ENOENT: no such symbols (not CPython 3.12+, or stripped);
 * -EINVAL: the symbols lie outside the file's bytes or the range is
 * empty or longer than PYTRAMP_MAX; -ENOTSUP: a template of unknown shape
 * (or not an x86-64 image).
 */
int pytramp__from_elf(const struct elfread *e, struct pytramp *t);

/*
 * The row of a copy of t at byte offset off (the unwinder's lookup
 * address minus the copy's start): 0 with *row (its start is the
 * offset the row begins at), -ESRCH when off is not inside the template.
 */
int pytramp__row(const struct pytramp *t, uint64_t off, struct sframe_row *row);

const char *pytramp__shape_name(uint32_t shape); /* "sub8", "fp", ... */

#endif
