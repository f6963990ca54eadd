/* SPDX-License-Identifier: MIT */
/*
 * CPython str objects as bytes of a target's memory -> UTF-8. Private to
 * src/runtimes/python/ (pycode.c); tests include it for its cases.
 */
#ifndef SFPROF_PYSTR_H
#define SFPROF_PYSTR_H

#include <stddef.h>
#include <stdint.h>

struct pyoffsets;

struct pystr_shape {
	uint64_t length;   /* code points */
	uint32_t kind;	   /* bytes per code point: 1, 2, 4 */
	uint32_t ascii;	   /* 1: 7-bit data at unicode_ascii_data */
	uint32_t data_off; /* where the characters start in the object */
};

/*
 * The shape of a str from its first hdr_len bytes (at least
 * o->unicode_ascii_data). 0, or -EINVAL: not compact (the characters are
 * elsewhere; code objects never hold such strings), not ready (3.11), a
 * kind not 1/2/4, ascii with a kind not 1, a negative length.
 */
int pystr_shape(const struct pyoffsets *o, const uint8_t *hdr, size_t hdr_len,
		struct pystr_shape *out);

/*
 * nchars code points of `kind` bytes each (ascii: 7-bit) -> UTF-8 in
 * buf[len], NUL-terminated (len >= 1); stops before a character that does
 * not fit and sets *truncated. Lone surrogates become U+FFFD. Returns the
 * UTF-8 length, or -EINVAL: a NUL, an ascii byte >= 0x80, a code point
 * past U+10FFFF.
 */
int pystr_utf8(const uint8_t *chars, size_t nchars, uint32_t kind, int ascii,
	       char *buf, size_t len, int *truncated);

#endif
