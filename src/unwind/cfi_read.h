/* SPDX-License-Identifier: MIT */
/*
 * The bounds-checked byte reader shared by the CFI entry parser
 * (cfi_parse.c) and the CFA instruction interpreter (cfi_exec.c): a
 * cursor that never passes its end, and the DW_EH_PE pointer decoder.
 * Private to src/unwind/.
 */
#ifndef SFPROF_CFI_READ_H
#define SFPROF_CFI_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_int.h"

/* DW_EH_PE_* (LSB, "DWARF Extensions": pointer encoding). */
enum {
	PE_absptr = 0x00,
	PE_uleb128 = 0x01,
	PE_udata2 = 0x02,
	PE_udata4 = 0x03,
	PE_udata8 = 0x04,
	PE_sleb128 = 0x09,
	PE_sdata2 = 0x0a,
	PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c,
	PE_pcrel = 0x10,
	PE_textrel = 0x20,
	PE_datarel = 0x30,
	PE_funcrel = 0x40,
	PE_aligned = 0x50,
	PE_indirect = 0x80,
	PE_omit = 0xff,
};

/* A positive return is a reject reason + 1; negative is a hard error. */
#define REJ(r) ((r) + 1)

/* The section being walked; `in` gives the text and GOT bases. */
struct sec {
	const uint8_t *base;
	size_t len;
	uint64_t vaddr;
	bool is_eh;
	const struct cfi_input *in;
};

struct rd {
	const uint8_t *p, *end;
};

static inline bool rd_u8(struct rd *r, uint8_t *v)
{
	if (r->p >= r->end)
		return false;
	*v = *r->p++;
	return true;
}

static inline bool rd_uN(struct rd *r, unsigned n, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	*v = x;
	return true;
}

static inline bool rd_uleb(struct rd *r, uint64_t *v)
{
	return cfi__uleb(&r->p, r->end, v);
}

static inline bool rd_sleb(struct rd *r, int64_t *v)
{
	return cfi__sleb(&r->p, r->end, v);
}

static inline bool rd_block(struct rd *r, const uint8_t **p, uint32_t *len)
{
	uint64_t n;
	if (!rd_uleb(r, &n) || n > (uint64_t)(r->end - r->p))
		return false;
	*p = r->p;
	*len = (uint32_t)n;
	r->p += n;
	return true;
}

/* Sign-extend the low n bytes of x. */
static inline int64_t sext(uint64_t x, unsigned n)
{
	unsigned s = 64 - 8 * n;
	return s ? (int64_t)(x << s) >> s : (int64_t)x;
}

/*
 * Read a DW_EH_PE-encoded pointer. `func` is the funcrel base (the FDE's
 * start, 0 while reading it). With need_value false the value is only
 * skipped, so an indirect personality pointer, say, costs nothing.
 * Returns 0 or a REJ() reason.
 */
static inline int rd_encoded(struct rd *r, const struct sec *s, uint8_t enc,
		      unsigned addr_size, uint64_t func, bool need_value,
		      uint64_t *out)
{
	uint64_t v = 0, base = 0;
	int64_t sv;

	if (enc == PE_omit)
		return REJ(CFI_REJ_ENCODING);
	if ((enc & 0x70) == PE_aligned) {
		/* Aligned to the address size in the section's address space. */
		uint64_t at = s->vaddr + (uint64_t)(r->p - s->base);
		uint64_t pad = (addr_size - (at % addr_size)) % addr_size;
		if ((uint64_t)(r->end - r->p) < pad)
			return REJ(CFI_REJ_TRUNCATED);
		r->p += pad;
		if ((enc & 0x0f) != PE_absptr)
			return REJ(CFI_REJ_ENCODING);
	}
	uint64_t field = s->vaddr + (uint64_t)(r->p - s->base);

	switch (enc & 0x0f) {
	case PE_absptr:
		if (!rd_uN(r, addr_size, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	case PE_uleb128:
		if (!rd_uleb(r, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	case PE_udata2:
	case PE_udata4:
	case PE_udata8: {
		unsigned n = 1u << (enc & 0x0f) >> 1; /* 2, 4, 8 */
		if (!rd_uN(r, n, &v))
			return REJ(CFI_REJ_TRUNCATED);
		break;
	}
	case PE_sleb128:
		if (!rd_sleb(r, &sv))
			return REJ(CFI_REJ_TRUNCATED);
		v = (uint64_t)sv;
		break;
	case PE_sdata2:
	case PE_sdata4:
	case PE_sdata8: {
		unsigned n = 1u << ((enc & 0x0f) - 8) >> 1;
		if (!rd_uN(r, n, &v))
			return REJ(CFI_REJ_TRUNCATED);
		v = (uint64_t)sext(v, n);
		break;
	}
	default:
		return REJ(CFI_REJ_ENCODING);
	}
	if (!need_value)
		return 0;

	switch (enc & 0x70) {
	case PE_absptr:
	case PE_aligned:
		break;
	case PE_pcrel:
		base = field;
		break;
	case PE_textrel:
		base = s->in->text_vaddr;
		if (!base)
			return REJ(CFI_REJ_POINTER);
		break;
	case PE_datarel:
		base = s->in->got_vaddr;
		if (!base)
			return REJ(CFI_REJ_POINTER);
		break;
	case PE_funcrel:
		base = func;
		break;
	default:
		return REJ(CFI_REJ_ENCODING);
	}
	/* The value would be a pointer read from the target's memory. */
	if (enc & PE_indirect)
		return REJ(CFI_REJ_POINTER);
	v += base;
	if (addr_size == 4)
		v &= 0xffffffffu;
	*out = v;
	return 0;
}

#endif
