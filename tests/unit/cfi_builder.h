// SPDX-License-Identifier: MIT
/*
 * The CFI unit tests' fixtures: a tiny .eh_frame / .debug_frame writer,
 * and rows printed as text (test_cfi.c says the format).
 */
#ifndef SFPROF_TEST_CFI_BUILDER_H
#define SFPROF_TEST_CFI_BUILDER_H

#include <stdio.h>
#include <string.h>

#include "unwind/cfi.h"
#include "unwind/dwexpr.h"
#include "testlib.h"

/* ---- a tiny .eh_frame / .debug_frame writer --------------------------- */

struct sec {
	uint8_t b[8192];
	size_t n;
	uint64_t vaddr;
};

static inline void put(struct sec *s, const void *p, size_t n)
{
	if (n)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}
static inline void u8(struct sec *s, uint8_t v) { put(s, &v, 1); }
static inline void uN(struct sec *s, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		u8(s, (uint8_t)(v >> (8 * i)));
}
static inline void uleb(struct sec *s, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		u8(s, b | (v ? 0x80 : 0));
	} while (v);
}
static inline void sleb(struct sec *s, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			u8(s, b);
			return;
		}
		u8(s, b | 0x80);
	}
}

/* Start an entry: length placeholder (64-bit form when is64). */
static inline size_t begin(struct sec *s, int is64)
{
	size_t at = s->n;
	if (is64) {
		uN(s, 0xffffffffu, 4);
		uN(s, 0, 8);
	} else {
		uN(s, 0, 4);
	}
	return at;
}
static int no_pad __attribute__((unused)); /* truncation tests: the entry ends right after its bytes */

static inline void end(struct sec *s, size_t at, int is64)
{
	/* pad with DW_CFA_nop to 8 bytes, as assemblers do */
	size_t hdr = is64 ? 12 : 4;
	while (!no_pad && (s->n - at) % 8)
		u8(s, 0);
	uint64_t len = s->n - at - hdr;
	struct sec tmp = { .n = 0 };
	uN(&tmp, len, is64 ? 8 : 4);
	memcpy(s->b + at + (is64 ? 4 : 0), tmp.b, is64 ? 8 : 4);
}

/* Default x86-64 CIE instructions: CFA = rsp+8, RA at CFA-8. */
static const uint8_t cie_init[] __attribute__((unused)) = { 0x0c, 7, 8, 0x90, 1 };

/* .eh_frame CIE, version 1, caf 1, daf -8, RA column 16. */
static inline size_t eh_cie_full(struct sec *s, const char *aug, const uint8_t *augdata,
			  size_t alen, const uint8_t *ins, size_t ilen, uint64_t caf)
{
	size_t at = begin(s, 0);
	uN(s, 0, 4); /* CIE id */
	u8(s, 1);
	put(s, aug, strlen(aug) + 1);
	uleb(s, caf);
	sleb(s, -8);
	u8(s, 16);
	if (aug[0] == 'z') {
		uleb(s, alen);
		put(s, augdata, alen);
	}
	put(s, ins, ilen);
	end(s, at, 0);
	return at;
}

static inline size_t eh_cie(struct sec *s)
{
	static const uint8_t enc = 0x1b; /* pcrel | sdata4 */
	return eh_cie_full(s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
}

/* Write an encoded pointer the way rd_encoded reads it. */
static inline void put_enc(struct sec *s, uint8_t enc, uint64_t v, uint64_t base_text,
		    uint64_t base_data, uint64_t base_func)
{
	uint64_t field = s->vaddr + s->n;
	switch (enc & 0x70) {
	case 0x10: v -= field; break;
	case 0x20: v -= base_text; break;
	case 0x30: v -= base_data; break;
	case 0x40: v -= base_func; break;
	case 0x50:
		while ((s->vaddr + s->n) % 8)
			u8(s, 0);
		break;
	}
	switch (enc & 0x0f) {
	case 0x00: uN(s, v, 8); break;
	case 0x01: uleb(s, v); break;
	case 0x02: case 0x0a: uN(s, v, 2); break;
	case 0x03: case 0x0b: uN(s, v, 4); break;
	case 0x04: case 0x0c: uN(s, v, 8); break;
	case 0x09: sleb(s, (int64_t)v); break;
	}
}

/* .eh_frame FDE for a CIE using pcrel|sdata4 and 'z'. */
static inline void eh_fde(struct sec *s, size_t cie, uint64_t pc, uint64_t range,
		   const uint8_t *ins, size_t ilen)
{
	size_t at = begin(s, 0);
	uN(s, s->n - cie, 4);
	put_enc(s, 0x1b, pc, 0, 0, 0);
	uN(s, range, 4);
	uleb(s, 0);
	put(s, ins, ilen);
	end(s, at, 0);
}

static inline struct cfi_input eh_input(const struct sec *s)
{
	struct cfi_input in = { 0 };
	in.eh_frame = s->b;
	in.eh_frame_len = s->n;
	in.eh_frame_vaddr = s->vaddr;
	return in;
}

/* ---- rows as text ------------------------------------------------------ */

static inline const char *regname(unsigned r)
{
	static char buf[8][8];
	static int k;
	if (r == 7)
		return "sp";
	if (r == 6)
		return "fp";
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "r%u", r);
	return buf[k];
}

static inline int rule_str(char *p, size_t n, const struct sframe_rule *r, int is_cfa)
{
	switch (r->kind) {
	case SFRAME_RULE_NONE:
		return snprintf(p, n, "-");
	case SFRAME_RULE_CFA_DEREF:
		return snprintf(p, n, "c%+d", r->off);
	case SFRAME_RULE_REG:
		return snprintf(p, n, is_cfa ? "%s%+d" : "=%s%+d", regname(r->reg), r->off);
	case SFRAME_RULE_REG_DEREF:
		return snprintf(p, n, "*(%s%+d)", regname(r->reg), r->off);
	case SFRAME_RULE_UNDEFINED:
		return snprintf(p, n, "undef");
	case SFRAME_RULE_VAL_EXPR:
	case SFRAME_RULE_EXPR: {
		const uint8_t *e;
		size_t len;
		char x[160];

		if (dwexpr__get((uint32_t)r->off, &e, &len))
			return snprintf(p, n, "x#%d?", r->off);
		dwexpr__format(e, len, x, sizeof(x));
		return snprintf(p, n, "%sx[%s]", r->kind == SFRAME_RULE_EXPR ? "*" : "", x);
	}
	default:
		return snprintf(p, n, "?%u", r->kind);
	}
}

/* Rows of function i of t, as text. */
static __attribute__((noinline, unused)) const char *rows_of(const struct cfi_table *t, size_t i)
{
	static char buf[2048];
	size_t r = 0, n = 0;
	for (size_t k = 0; k < i && k < t->nr_funcs; k++)
		r += t->funcs[k].num_rows;
	buf[0] = 0;
	if (i >= t->nr_funcs)
		return "(no such function)";
	for (size_t j = 0; j < t->funcs[i].num_rows; j++) {
		const struct sframe_row *w = &t->rows[r + j];
		n += snprintf(buf + n, sizeof(buf) - n, "%s@%u ", j ? "; " : "", w->start);
		if (w->cfa.kind == SFRAME_RULE_NO_RULE) {
			n += snprintf(buf + n, sizeof(buf) - n, "norule");
			continue;
		}
		n += rule_str(buf + n, sizeof(buf) - n, &w->cfa, 1);
		n += snprintf(buf + n, sizeof(buf) - n, " ");
		n += rule_str(buf + n, sizeof(buf) - n, &w->ra, 0);
		n += snprintf(buf + n, sizeof(buf) - n, " ");
		n += rule_str(buf + n, sizeof(buf) - n, &w->fp, 0);
	}
	return buf;
}

/* Derive from one FDE's instructions under the default CIE. */
static inline int derive_one(const uint8_t *ins, size_t ilen, uint64_t range,
		      struct cfi_table *t, struct cfi_stats *st)
{
	static struct sec s;
	memset(&s, 0, sizeof(s));
	s.vaddr = 0x2000;
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, range, ins, ilen);
	struct cfi_input in = eh_input(&s);
	return cfi_derive(&in, t, st);
}

#define DERIVE(t, st, range, ...)                                              \
	do {                                                                   \
		static const uint8_t ins_[] = { __VA_ARGS__ };                 \
		CHECK_INT(derive_one(ins_, sizeof(ins_), range, t, st), 0);    \
	} while (0)

/* ---- tests --------------------------------------------------------------- */


#endif
