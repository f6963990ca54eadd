// SPDX-License-Identifier: MIT
/* V8's runtime records' bytes (v8record.h): written and checked. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "runtimes/v8/v8record.h"

#define HDR 4u
#define LAYOUT_FIXED (HDR + 40u)
#define FUNC_FIXED (HDR + 24u)

static void put32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static bool slot_ok(int32_t s)
{
	return s >= -V8REC_SLOT_MAX && s <= V8REC_SLOT_MAX && !(s % 8);
}

static bool layout_ok(const struct v8rec *r)
{
	/* (a tag within its mask, a mask of the low bits; the offset's bias
	 * a header's size) */
	return slot_ok(r->layout.fp_function) && slot_ok(r->layout.fp_context) &&
	       slot_ok(r->layout.fp_bytecode_array) && slot_ok(r->layout.fp_bytecode_offset) &&
	       r->layout.heap_tag && r->layout.heap_tag_mask < 16 &&
	       !(r->layout.heap_tag & ~r->layout.heap_tag_mask) && r->layout.smi_shift &&
	       r->layout.smi_shift < 64 && r->layout.offset_bias < 4096;
}

static bool func_ok(const struct v8rec *r)
{
	return r->func.fn > 4096 && r->func.bytecode > 4096 &&
	       r->func.length <= V8REC_BYTECODE_MAX && r->func.name_len &&
	       r->func.name_len <= V8REC_NAME_MAX && r->func.name &&
	       !memchr(r->func.name, 0, r->func.name_len);
}

int v8rec__encode(const struct v8rec *r, uint8_t *buf, size_t size)
{
	size_t n;

	switch (r->kind) {
	case V8REC_LAYOUT:
		if (!layout_ok(r))
			return -EINVAL;
		if ((n = LAYOUT_FIXED) > size)
			return -E2BIG;
		put32(buf + HDR, (uint32_t)r->layout.fp_function);
		put32(buf + HDR + 4, (uint32_t)r->layout.fp_context);
		put32(buf + HDR + 8, (uint32_t)r->layout.fp_bytecode_array);
		put32(buf + HDR + 12, (uint32_t)r->layout.fp_bytecode_offset);
		put64(buf + HDR + 16, r->layout.heap_tag);
		put64(buf + HDR + 24, r->layout.heap_tag_mask);
		put32(buf + HDR + 32, r->layout.smi_shift);
		put32(buf + HDR + 36, r->layout.offset_bias);
		break;
	case V8REC_FUNC:
		if (!func_ok(r))
			return -EINVAL;
		if ((n = FUNC_FIXED + r->func.name_len) > size)
			return -E2BIG;
		put64(buf + HDR, r->func.fn);
		put64(buf + HDR + 8, r->func.bytecode);
		put32(buf + HDR + 16, r->func.length);
		put32(buf + HDR + 20, (uint32_t)r->func.name_len);
		memcpy(buf + FUNC_FIXED, r->func.name, r->func.name_len);
		break;
	default:
		return -EINVAL;
	}
	buf[0] = V8REC_VERSION;
	buf[1] = r->kind;
	buf[2] = buf[3] = 0;
	return (int)n;
}

int v8rec__decode(const uint8_t *d, size_t len, struct v8rec *out)
{
	memset(out, 0, sizeof(*out));
	if (len < HDR)
		return -EINVAL;
	if (d[0] != V8REC_VERSION)
		return -ENOTSUP;
	if (d[2] || d[3])
		return -EINVAL;
	out->kind = d[1];
	switch (out->kind) {
	case V8REC_LAYOUT:
		if (len != LAYOUT_FIXED)
			return -EINVAL;
		out->layout.fp_function = (int32_t)get32(d + HDR);
		out->layout.fp_context = (int32_t)get32(d + HDR + 4);
		out->layout.fp_bytecode_array = (int32_t)get32(d + HDR + 8);
		out->layout.fp_bytecode_offset = (int32_t)get32(d + HDR + 12);
		out->layout.heap_tag = get64(d + HDR + 16);
		out->layout.heap_tag_mask = get64(d + HDR + 24);
		out->layout.smi_shift = get32(d + HDR + 32);
		out->layout.offset_bias = get32(d + HDR + 36);
		return layout_ok(out) ? 0 : -EINVAL;
	case V8REC_FUNC:
		if (len < FUNC_FIXED)
			return -EINVAL;
		out->func.fn = get64(d + HDR);
		out->func.bytecode = get64(d + HDR + 8);
		out->func.length = get32(d + HDR + 16);
		out->func.name_len = get32(d + HDR + 20);
		if (out->func.name_len != len - FUNC_FIXED)
			return -EINVAL;
		out->func.name = (const char *)d + FUNC_FIXED;
		return func_ok(out) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}
