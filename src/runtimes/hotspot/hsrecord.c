// SPDX-License-Identifier: MIT
/* HotSpot's runtime records' bytes (hsrecord.h): written and checked. */
#include <errno.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsrecord.h"

#define HDR 4u
#define JVM_FIXED (HDR + 12u)
#define CODE_FIXED (HDR + 32u)
#define FRAME_FIXED (HDR + 20u)
#define METHOD_FIXED (HDR + 28u)

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* n bytes of src (NULL when n is 0) at dst */
static void put_bytes(uint8_t *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

/* A name, file or inlined frames' text: no NUL, at most max bytes (and
 * at least one when it must have one). */
static bool text_ok(const char *s, size_t len, size_t max, bool need)
{
	return len <= max && (len || !need) && (!len || !memchr(s, 0, len));
}

static bool code_ok(const struct hsrec *r)
{
	return r->code.start < r->code.end && r->code.end - r->code.start <= HSREC_CODE_MAX &&
	       r->code.frame_complete >= r->code.start && r->code.frame_complete <= r->code.end &&
	       r->code.frame_size <= HSREC_FRAME_WORDS && r->code.kind >= HOTSPOT_NMETHOD &&
	       r->code.kind <= HOTSPOT_STUB;
}

static bool frame_ok(const struct hsrec *r)
{
	return r->frame.pc && text_ok(r->frame.name, r->frame.name_len, HOTSPOT_NAME_MAX - 1, false) &&
	       text_ok(r->frame.file, r->frame.file_len, HOTSPOT_FILE_MAX - 1, false) &&
	       text_ok(r->frame.inl, r->frame.inl_len, HSREC_INL_MAX, false) &&
	       r->frame.line <= 0xffffff;
}

static bool method_ok(const struct hsrec *r)
{
	return r->method.method && !(r->method.method & 7) && r->method.method < (1ull << 56) &&
	       r->method.code && r->method.code_size <= 0xffff &&
	       r->method.code < (1ull << 56) &&
	       text_ok(r->method.name, r->method.name_len, HOTSPOT_NAME_MAX - 1, true) &&
	       text_ok(r->method.file, r->method.file_len, HOTSPOT_FILE_MAX - 1, false) &&
	       r->method.lnt_len <= HSREC_LNT_MAX && (r->method.lnt || !r->method.lnt_len);
}

static bool jvm_ok(const struct hsrec *r)
{
	return r->jvm.has_interp <= 1 && r->jvm.fp_method >= -4096 && r->jvm.fp_method <= 4096 &&
	       r->jvm.fp_bcp >= -4096 && r->jvm.fp_bcp <= 4096;
}

int hsrec__encode(const struct hsrec *r, uint8_t *buf, size_t size)
{
	size_t n;

	switch (r->kind) {
	case HSREC_JVM:
		if (!jvm_ok(r))
			return -EINVAL;
		if ((n = JVM_FIXED) > size)
			return -E2BIG;
		put32(buf + HDR, (uint32_t)r->jvm.fp_method);
		put32(buf + HDR + 4, (uint32_t)r->jvm.fp_bcp);
		put32(buf + HDR + 8, r->jvm.has_interp);
		break;
	case HSREC_CODE:
		if (!code_ok(r))
			return -EINVAL;
		if ((n = CODE_FIXED) > size)
			return -E2BIG;
		put64(buf + HDR, r->code.start);
		put64(buf + HDR + 8, r->code.end);
		put64(buf + HDR + 16, r->code.frame_complete);
		put32(buf + HDR + 24, r->code.frame_size);
		put32(buf + HDR + 28, r->code.kind);
		break;
	case HSREC_FRAME:
		if (!frame_ok(r))
			return -EINVAL;
		n = FRAME_FIXED + r->frame.name_len + r->frame.file_len + r->frame.inl_len;
		if (n > size)
			return -E2BIG;
		put64(buf + HDR, r->frame.pc);
		put32(buf + HDR + 8, r->frame.line);
		put16(buf + HDR + 12, (uint16_t)r->frame.name_len);
		put16(buf + HDR + 14, (uint16_t)r->frame.file_len);
		put16(buf + HDR + 16, (uint16_t)r->frame.inl_len);
		put16(buf + HDR + 18, 0);
		put_bytes(buf + FRAME_FIXED, r->frame.name, r->frame.name_len);
		put_bytes(buf + FRAME_FIXED + r->frame.name_len, r->frame.file, r->frame.file_len);
		put_bytes(buf + FRAME_FIXED + r->frame.name_len + r->frame.file_len, r->frame.inl,
			  r->frame.inl_len);
		break;
	case HSREC_METHOD:
		if (!method_ok(r))
			return -EINVAL;
		n = METHOD_FIXED + r->method.name_len + r->method.file_len + r->method.lnt_len;
		if (n > size)
			return -E2BIG;
		put64(buf + HDR, r->method.method);
		put64(buf + HDR + 8, r->method.code);
		put32(buf + HDR + 16, r->method.code_size);
		put16(buf + HDR + 20, (uint16_t)r->method.name_len);
		put16(buf + HDR + 22, (uint16_t)r->method.file_len);
		put32(buf + HDR + 24, (uint32_t)r->method.lnt_len);
		put_bytes(buf + METHOD_FIXED, r->method.name, r->method.name_len);
		put_bytes(buf + METHOD_FIXED + r->method.name_len, r->method.file, r->method.file_len);
		put_bytes(buf + METHOD_FIXED + r->method.name_len + r->method.file_len,
			  r->method.lnt, r->method.lnt_len);
		break;
	default:
		return -EINVAL;
	}
	buf[0] = HSREC_VERSION;
	buf[1] = r->kind;
	put16(buf + 2, 0);
	return (int)n;
}

int hsrec__decode(const uint8_t *d, size_t len, struct hsrec *out)
{
	size_t n;

	memset(out, 0, sizeof(*out));
	if (len < HDR)
		return -EINVAL;
	if (d[0] != HSREC_VERSION)
		return -ENOTSUP;
	if (get16(d + 2))
		return -EINVAL;
	out->kind = d[1];
	switch (out->kind) {
	case HSREC_JVM:
		if (len != JVM_FIXED)
			return -EINVAL;
		out->jvm.fp_method = (int32_t)get32(d + HDR);
		out->jvm.fp_bcp = (int32_t)get32(d + HDR + 4);
		out->jvm.has_interp = get32(d + HDR + 8);
		return jvm_ok(out) ? 0 : -EINVAL;
	case HSREC_CODE:
		if (len != CODE_FIXED)
			return -EINVAL;
		out->code.start = get64(d + HDR);
		out->code.end = get64(d + HDR + 8);
		out->code.frame_complete = get64(d + HDR + 16);
		out->code.frame_size = get32(d + HDR + 24);
		out->code.kind = get32(d + HDR + 28);
		return code_ok(out) ? 0 : -EINVAL;
	case HSREC_FRAME:
		if (len < FRAME_FIXED || get16(d + HDR + 18))
			return -EINVAL;
		out->frame.pc = get64(d + HDR);
		out->frame.line = get32(d + HDR + 8);
		out->frame.name_len = get16(d + HDR + 12);
		out->frame.file_len = get16(d + HDR + 14);
		out->frame.inl_len = get16(d + HDR + 16);
		n = out->frame.name_len + out->frame.file_len + out->frame.inl_len;
		if (len - FRAME_FIXED != n)
			return -EINVAL;
		out->frame.name = (const char *)d + FRAME_FIXED;
		out->frame.file = out->frame.name + out->frame.name_len;
		out->frame.inl = out->frame.file + out->frame.file_len;
		return frame_ok(out) ? 0 : -EINVAL;
	case HSREC_METHOD:
		if (len < METHOD_FIXED)
			return -EINVAL;
		out->method.method = get64(d + HDR);
		out->method.code = get64(d + HDR + 8);
		out->method.code_size = get32(d + HDR + 16);
		out->method.name_len = get16(d + HDR + 20);
		out->method.file_len = get16(d + HDR + 22);
		out->method.lnt_len = get32(d + HDR + 24);
		if (out->method.lnt_len > HSREC_LNT_MAX)
			return -EINVAL;
		n = out->method.name_len + out->method.file_len + out->method.lnt_len;
		if (len - METHOD_FIXED != n)
			return -EINVAL;
		out->method.name = (const char *)d + METHOD_FIXED;
		out->method.file = out->method.name + out->method.name_len;
		out->method.lnt = (const uint8_t *)out->method.file + out->method.file_len;
		return method_ok(out) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}
