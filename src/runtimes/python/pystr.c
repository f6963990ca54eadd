// SPDX-License-Identifier: MIT
/* CPython compact str bytes -> UTF-8 (pystr.h). */
#include "runtimes/python/pystr.h"

#include <errno.h>
#include <string.h>

#include "runtimes/python/pyoffsets.h"

int pystr_shape(const struct pyoffsets *o, const uint8_t *hdr, size_t hdr_len,
		struct pystr_shape *out)
{
	uint32_t state;
	int64_t length;

	if (hdr_len < o->unicode_ascii_data || o->unicode_length + 8 > hdr_len ||
	    o->unicode_state + 4 > hdr_len)
		return -EINVAL;
	memcpy(&length, hdr + o->unicode_length, sizeof(length));
	memcpy(&state, hdr + o->unicode_state, sizeof(state));
	uint32_t kind = (state >> o->unicode_kind_shift) & 7;
	uint32_t compact = (state >> o->unicode_compact_bit) & 1;
	uint32_t ascii = (state >> o->unicode_ascii_bit) & 1;
	/* 3.11's `ready` bit follows ascii; compact strings are always ready */
	if (o->major == 3 && o->minor == 11 && !((state >> (o->unicode_ascii_bit + 1)) & 1))
		return -EINVAL;
	if (length < 0 || !compact || (kind != 1 && kind != 2 && kind != 4) ||
	    (ascii && kind != 1))
		return -EINVAL;
	out->length = (uint64_t)length;
	out->kind = kind;
	out->ascii = ascii;
	out->data_off = ascii ? o->unicode_ascii_data : o->unicode_compact_data;
	return 0;
}

int pystr_utf8(const uint8_t *chars, size_t nchars, uint32_t kind, int ascii,
	       char *buf, size_t len, int *truncated)
{
	size_t n = 0;

	*truncated = 0;
	if (!len || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	for (size_t i = 0; i < nchars; i++) {
		uint32_t cp;
		uint8_t u[4];
		size_t w;

		if (kind == 1) {
			cp = chars[i];
		} else if (kind == 2) {
			uint16_t v;
			memcpy(&v, chars + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, chars + 4 * i, 4);
		}
		if (cp == 0 || cp > 0x10ffff || (ascii && cp >= 0x80)) {
			buf[0] = 0;
			return -EINVAL;
		}
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd; /* a lone surrogate (surrogateescape'd bytes) */
		if (cp < 0x80) {
			u[0] = (uint8_t)cp, w = 1;
		} else if (cp < 0x800) {
			u[0] = (uint8_t)(0xc0 | cp >> 6);
			u[1] = (uint8_t)(0x80 | (cp & 0x3f)), w = 2;
		} else if (cp < 0x10000) {
			u[0] = (uint8_t)(0xe0 | cp >> 12);
			u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			u[2] = (uint8_t)(0x80 | (cp & 0x3f)), w = 3;
		} else {
			u[0] = (uint8_t)(0xf0 | cp >> 18);
			u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
			u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			u[3] = (uint8_t)(0x80 | (cp & 0x3f)), w = 4;
		}
		if (n + w + 1 > len) {
			*truncated = 1;
			break;
		}
		memcpy(buf + n, u, w);
		n += w;
	}
	buf[n] = 0;
	return (int)n;
}
