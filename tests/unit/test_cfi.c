// SPDX-License-Identifier: MIT
/*
 * CFI interpreter and SFrame conversion on hand-written .eh_frame and
 * .debug_frame bytes: every instruction, every pointer encoding, PLT,
 * signal frames, remember/restore state, gas's row rules, malformed input.
 *
 * Rows are compared as text: "@START CFA RA FP" per row, "; " between
 * rows, where CFA is sp+N / fp+N / rN+M / *(reg+N), RA and FP are c+N
 * (saved at CFA+N), *(reg+N), undef, or - (none), and a NO_RULE row is
 * "@START norule".
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "cfi.h"
#include "dwexpr.h"
#include "testlib.h"

/* ---- a tiny .eh_frame / .debug_frame writer --------------------------- */

struct sec {
	uint8_t b[8192];
	size_t n;
	uint64_t vaddr;
};

static void put(struct sec *s, const void *p, size_t n)
{
	if (n)
		memcpy(s->b + s->n, p, n);
	s->n += n;
}
static void u8(struct sec *s, uint8_t v) { put(s, &v, 1); }
static void uN(struct sec *s, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		u8(s, (uint8_t)(v >> (8 * i)));
}
static void uleb(struct sec *s, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		u8(s, b | (v ? 0x80 : 0));
	} while (v);
}
static void sleb(struct sec *s, int64_t v)
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
static size_t begin(struct sec *s, int is64)
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
static int no_pad; /* truncation tests: the entry ends right after its bytes */

static void end(struct sec *s, size_t at, int is64)
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
static const uint8_t cie_init[] = { 0x0c, 7, 8, 0x90, 1 };

/* .eh_frame CIE, version 1, caf 1, daf -8, RA column 16. */
static size_t eh_cie_full(struct sec *s, const char *aug, const uint8_t *augdata,
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

static size_t eh_cie(struct sec *s)
{
	static const uint8_t enc = 0x1b; /* pcrel | sdata4 */
	return eh_cie_full(s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
}

/* Write an encoded pointer the way rd_encoded reads it. */
static void put_enc(struct sec *s, uint8_t enc, uint64_t v, uint64_t base_text,
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
static void eh_fde(struct sec *s, size_t cie, uint64_t pc, uint64_t range,
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

static struct cfi_input eh_input(const struct sec *s)
{
	struct cfi_input in = { 0 };
	in.eh_frame = s->b;
	in.eh_frame_len = s->n;
	in.eh_frame_vaddr = s->vaddr;
	return in;
}

/* ---- rows as text ------------------------------------------------------ */

static const char *regname(unsigned r)
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

static int rule_str(char *p, size_t n, const struct sframe_rule *r, int is_cfa)
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
static const char *rows_of(const struct cfi_table *t, size_t i)
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
static int derive_one(const uint8_t *ins, size_t ilen, uint64_t range,
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

TEST(cfi_push_rbp_frame_gives_sp_then_fp_rows)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* push %rbp; mov %rsp,%rbp; ...; leave; ret */
	DERIVE(&t, &st, 32, 0x41, 0x0e, 16, 0x86, 2, /* @1 cfa+16, rbp at c-16 */
	       0x43, 0x0d, 6,			       /* @4 cfa = rbp+16 */
	       0x4a, 0x0c, 7, 8);		       /* @14 cfa = rsp+8 */
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x1000);
	CHECK_INT(t.funcs[0].size, 32);
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @4 fp+16 c-8 c-16; @14 sp+8 c-8 c-16");
	CHECK_INT(st.fdes, 1);
	CHECK_INT(st.fdes_converted, 1);
	CHECK_INT(st.cies, 1);
	CHECK_INT(st.rows, 4);
	cfi_table__release(&t);
}

TEST(cfi_changes_to_other_registers_do_not_start_rows)
{
	struct cfi_table t;
	/* push %rbx at 1 (rows), then only rbx/r12 rules change: no new row;
	 * the pending row is still written at the end, as gas does. */
	DERIVE(&t, NULL, 32, 0x41, 0x0e, 16, 0x83, 2, 0x42, 0x8c, 3, 0x42, 0xc3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @5 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_every_advance_form_moves_the_location)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 0x20000,
	       0x02, 3, 0x0e, 16,		/* advance_loc1 3 */
	       0x03, 0x00, 0x01, 0x0e, 24,	/* advance_loc2 256 -> 259 */
	       0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 32, /* advance_loc4 65536 */
	       0x1d, 1, 0, 0, 0, 0, 0, 0, 0, 0x0e, 40); /* MIPS_advance_loc8 1 */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @3 sp+16 c-8 -; @259 sp+24 c-8 -; @65795 sp+32 c-8 -; "
		  "@65796 sp+40 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_code_alignment_factor_scales_advances)
{
	static struct sec s;
	struct cfi_table t;
	static const uint8_t enc = 0x1b, ins[] = { 0x42, 0x0e, 16 };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 4);
	eh_fde(&s, c, 0x1000, 64, ins, sizeof(ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, NULL), 0);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @8 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_reads_every_pointer_encoding)
{
	static const uint8_t encs[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a,
					0x0b, 0x0c, 0x10, 0x12, 0x13, 0x1b, 0x1c,
					0x19, 0x20, 0x23, 0x30, 0x3b, 0x50 };
	for (size_t k = 0; k < sizeof(encs); k++) {
		static struct sec s;
		struct cfi_table t;
		struct cfi_stats st;
		uint8_t enc = encs[k];
		memset(&s, 0, sizeof(s));
		s.vaddr = 0x400000;
		size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
		size_t at = begin(&s, 0);
		uN(&s, s.n - c, 4);
		uint64_t pc = (enc & 0x0f) == 0x02 || (enc & 0x0f) == 0x0a ? 0x401000 : 0x401000;
		if ((enc & 0x70) == 0 && ((enc & 0x0f) == 0x02 || (enc & 0x0f) == 0x0a))
			pc = 0x7000; /* must fit 16 bits absolute */
		put_enc(&s, enc, pc, 0x400800, 0x600000, 0);
		put_enc(&s, enc & 0x0f, 0x40, 0, 0, 0); /* range: format only */
		uleb(&s, 0);
		/* set_loc in the same encoding, to pc+0x10 */
		u8(&s, 0x01);
		put_enc(&s, enc, pc + 0x10, 0x400800, 0x600000, pc);
		u8(&s, 0x0e);
		u8(&s, 16);
		end(&s, at, 0);
		struct cfi_input in = eh_input(&s);
		in.text_vaddr = 0x400800;
		in.got_vaddr = 0x600000;
		CHECK_INT(cfi_derive(&in, &t, &st), 0);
		CHECK_MSG(t.nr_funcs == 1 && t.funcs[0].start == pc && t.funcs[0].size == 0x40,
			  "encoding 0x%02x: %zu funcs, start 0x%llx (want 0x%llx), rejects %llu",
			  enc, t.nr_funcs, t.nr_funcs ? (unsigned long long)t.funcs[0].start : 0ull,
			  (unsigned long long)pc, (unsigned long long)st.fdes_rejected);
		CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @16 sp+16 c-8 -");
		cfi_table__release(&t);
	}
}

TEST(cfi_funcrel_set_loc_is_relative_to_the_fde_start)
{
	struct cfi_table t;
	/* set_loc with the CIE's encoding (pcrel|sdata4) is covered above;
	 * here DW_EH_PE_funcrel|udata4 through a CIE that uses it. */
	static struct sec s;
	static const uint8_t enc = 0x43;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
	size_t at = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x5000, 4); /* funcrel base is 0 for the start itself */
	uN(&s, 0x40, 4);
	uleb(&s, 0);
	u8(&s, 0x01);
	uN(&s, 0x20, 4); /* set_loc funcrel: start + 0x20 */
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, at, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, NULL), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x5000);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @32 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_rejects_indirect_and_baseless_pointers)
{
	static const uint8_t encs[] = { 0x9b, 0x23, 0x33 };
	for (size_t k = 0; k < sizeof(encs); k++) {
		static struct sec s;
		struct cfi_table t;
		struct cfi_stats st;
		uint8_t enc = encs[k];
		memset(&s, 0, sizeof(s));
		size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
		eh_fde(&s, c, 0x1000, 16, NULL, 0);
		struct cfi_input in = eh_input(&s); /* text/got bases unknown */
		CHECK_INT(cfi_derive(&in, &t, &st), 0);
		CHECK_INT(t.nr_funcs, 0);
		CHECK_INT(st.reject[CFI_REJ_POINTER], 1);
		cfi_table__release(&t);
	}
}

TEST(cfi_reads_64bit_lengths_and_stops_at_a_zero_terminator)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	static const uint8_t enc = 0x1b;
	memset(&s, 0, sizeof(s));
	/* 64-bit CIE and FDE: CIE pointer is 8 bytes */
	size_t c = begin(&s, 1);
	uN(&s, 0, 8);
	u8(&s, 1);
	put(&s, "zR", 3);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	uleb(&s, 1);
	u8(&s, enc);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 1);
	size_t f = begin(&s, 1);
	uN(&s, s.n - c, 8);
	put_enc(&s, 0x1b, 0x3000, 0, 0, 0);
	uN(&s, 0x10, 4);
	uleb(&s, 0);
	end(&s, f, 1);
	uN(&s, 0, 4); /* terminator */
	eh_fde(&s, c, 0x4000, 0x10, NULL, 0); /* never read */
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.fdes, 1);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x3000);
	cfi_table__release(&t);
}

TEST(cfi_skips_personality_and_lsda_and_flags_signal_frames)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	/* zPLRS: personality indirect|pcrel|sdata4, LSDA pcrel|sdata4 */
	static const uint8_t aug[] = { 0x9b, 1, 2, 3, 4, 0x1b, 0x1b };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zPLRS", aug, sizeof(aug), cie_init, sizeof(cie_init), 1);
	size_t at = begin(&s, 0);
	uN(&s, s.n - c, 4);
	put_enc(&s, 0x1b, 0x1000, 0, 0, 0);
	uN(&s, 0x20, 4);
	uleb(&s, 4);
	uN(&s, 0x12345678, 4); /* LSDA */
	u8(&s, 0x41);
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, at, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK(t.funcs[0].flags & SFRAME_FUNC_SIGNAL);
	CHECK_INT(st.signal_funcs, 1);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_reads_old_eh_augmentation_and_rejects_unknown_ones)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	/* "eh": an 8-byte pointer follows; FDE pointers are absptr */
	size_t c = begin(&s, 0);
	uN(&s, 0, 4);
	u8(&s, 1);
	put(&s, "eh", 3);
	uN(&s, 0xdead, 8);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	size_t c2 = eh_cie_full(&s, "xyz", NULL, 0, cie_init, sizeof(cie_init), 1);
	f = begin(&s, 0);
	uN(&s, s.n - c2, 4);
	uN(&s, 0x2000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x1000);
	CHECK_INT(st.reject[CFI_REJ_AUGMENTATION], 1);
	cfi_table__release(&t);
}

TEST(cfi_reads_debug_frame_versions_1_3_4_and_64bit)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	/* v4 CIE with address_size 8, segment size 0, uleb RA column */
	size_t c = begin(&s, 0);
	uN(&s, 0xffffffffu, 4);
	u8(&s, 4);
	u8(&s, 0);
	u8(&s, 8);
	u8(&s, 0);
	uleb(&s, 1);
	sleb(&s, -8);
	uleb(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, c, 4); /* section offset of the CIE */
	uN(&s, 0x7000, 8);
	uN(&s, 0x20, 8);
	u8(&s, 0x44);
	u8(&s, 0x0e);
	u8(&s, 16);
	end(&s, f, 0);
	/* 64-bit v3 CIE and FDE */
	size_t c3 = begin(&s, 1);
	uN(&s, ~0ull, 8);
	u8(&s, 3);
	u8(&s, 0);
	uleb(&s, 1);
	sleb(&s, -8);
	uleb(&s, 16);
	put(&s, cie_init, sizeof(cie_init));
	end(&s, c3, 1);
	f = begin(&s, 1);
	uN(&s, c3, 8);
	uN(&s, 0x8000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 1);
	struct cfi_input in = { 0 };
	in.debug_frame = s.b;
	in.debug_frame_len = s.n;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.cies, 2);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[0].start, 0x7000);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @4 sp+16 c-8 -");
	CHECK_U64(t.funcs[1].start, 0x8000);
	CHECK_INT(st.debug_frame_bytes, s.n);
	cfi_table__release(&t);
}

TEST(cfi_remember_and_restore_state_bring_back_the_rows)
{
	struct cfi_table t;
	/* push rbx; ... remember; pop rbx (cfa 8); ret; restore (cfa 16); pop; ret */
	DERIVE(&t, NULL, 40, 0x41, 0x0e, 16, 0x83, 2,
	       0x49, 0x0a, 0x0e, 8,   /* @10 remember, cfa 8 */
	       0x41, 0x0b,	      /* @11 restore_state */
	       0x45, 0x0e, 8);	      /* @16 cfa 8 */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @10 sp+8 c-8 -; @11 sp+16 c-8 -; @16 sp+8 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_restore_brings_rbp_back_to_the_first_row_rule_like_gas)
{
	struct cfi_table t;
	/* restore rbp in an FDE whose first row has no rbp rule: none */
	DERIVE(&t, NULL, 16, 0x41, 0x0e, 16, 0x86, 2, 0x42, 0x0e, 8, 0xc6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @3 sp+8 c-8 -");
	cfi_table__release(&t);
	/* a .cold part: rbp saved from the first row on; restore_extended
	 * keeps gas's view (the first row's rule) */
	DERIVE(&t, NULL, 16, 0x0e, 16, 0x86, 2, 0x42, 0x0e, 8, 0x06, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 c-16; @2 sp+8 c-8 c-16");
	cfi_table__release(&t);
}

/*
 * Where gas 2.40's gen-sframe.c is wrong, DWARF wins: it remembers the last
 * *finished* row (not the current state) and def_cfa_register takes the
 * last finished row's offset. gcc never emits these shapes (the oracle
 * matches gas on 100% of its functions); hand-written assembly can.
 */
TEST(cfi_remember_state_keeps_changes_made_at_the_same_address)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 8, 0x41, 0x0e, 16, 0x0a, 0x41, 0x0e, 8, 0x41, 0x0b);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @2 sp+8 c-8 -; @3 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_def_cfa_register_keeps_an_offset_set_at_the_same_address)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 8, 0x41, 0x0e, 16, 0x41, 0x0e, 32, 0x0d, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+16 c-8 -; @2 fp+32 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_sf_and_extended_forms_use_the_data_alignment_factor)
{
	struct cfi_table t;
	DERIVE(&t, NULL, 32,
	       0x41, 0x13, 0x7e,	/* def_cfa_offset_sf -2 * -8 = 16 */
	       0x11, 6, 0x02,		/* offset_extended_sf rbp 2 * -8 = -16 */
	       0x41, 0x12, 7, 0x7d,	/* def_cfa_sf rsp, -3 * -8 = 24 */
	       0x05, 6, 4,		/* offset_extended rbp 4 * -8 = -32 */
	       0x41, 0x2f, 6, 3,	/* GNU_negative_offset_extended rbp: +24 */
	       0x2e, 16, 0x00);		/* GNU_args_size, nop */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 sp+16 c-8 c-16; @2 sp+24 c-8 c-32; @3 sp+24 c-8 c+24");
	cfi_table__release(&t);
}

TEST(cfi_ra_rules_map_to_sframe_or_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* RA undefined (outermost frame): the SFrame "RA undefined" row */
	DERIVE(&t, &st, 16, 0x07, 16);
	CHECK_STR(rows_of(&t, 0), "@0 - undef -");
	CHECK_INT(st.rows_ra_undefined, 1);
	cfi_table__release(&t);
	/* RA saved at CFA-16: not SFrame's fixed CFA-8, a flexible rule */
	DERIVE(&t, &st, 16, 0x41, 0x90, 2);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+8 c-16 -");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_flex, 1);
	cfi_table__release(&t);
	/* RA in a register: a flexible REG rule; a register past r15: none */
	DERIVE(&t, &st, 16, 0x41, 0x09, 16, 1, 0x41, 0x09, 16, 40);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 sp+8 =r1+0 -; @2 norule");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.no_rule[CFI_NR_RA_RULE], 1);
	CHECK_INT(st.rows_no_rule, 1);
	cfi_table__release(&t);
	/* RA by val_offset, same_value */
	DERIVE(&t, &st, 16, 0x41, 0x14, 16, 1, 0x41, 0x08, 16);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 norule");
	cfi_table__release(&t);
}

TEST(cfi_fp_rules_map_to_sframe_or_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* same_value / undefined rbp: nothing to restore */
	DERIVE(&t, &st, 16, 0x86, 2, 0x41, 0x08, 6, 0x41, 0x07, 6);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 c-16; @1 sp+8 c-8 -; @2 sp+8 c-8 -");
	cfi_table__release(&t);
	/* rbp by val_offset: none; in a register: a flexible REG rule */
	DERIVE(&t, &st, 16, 0x41, 0x14, 6, 2, 0x41, 0x09, 6, 3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 sp+8 c-8 =r3+0");
	CHECK_INT(st.no_rule[CFI_NR_FP_RULE], 1);
	cfi_table__release(&t);
}

TEST(cfi_drap_expressions_become_flexible_rules)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* gcc's DRAP prologue: cfa = r10+0; rbp saved at *(rbp+0);
	 * cfa = *(rbp-8) */
	DERIVE(&t, &st, 64,
	       0x45, 0x0c, 10, 0,			  /* @5 def_cfa r10, 0 */
	       0x4b, 0x10, 6, 2, 0x76, 0x00,		  /* @16 expression rbp: breg6 0 */
	       0x42, 0x0f, 3, 0x76, 0x78, 0x06);	  /* @18 def_cfa_expression breg6 -8; deref */
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @5 r10+0 c-8 -; @16 r10+0 c-8 *(fp+0); @18 *(fp-8) c-8 *(fp+0)");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_flex, 3);
	cfi_table__release(&t);
}

TEST(cfi_signal_frame_expressions_become_flexible_rules)
{
	struct cfi_table t;
	/* glibc __restore_rt: cfa = *(rsp+160); rbp, rip saved at rsp+120, rsp+168 */
	DERIVE(&t, NULL, 16,
	       0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06,
	       0x10, 6, 3, 0x77, 0xf8, 0x00,
	       0x10, 16, 3, 0x77, 0xa8, 0x01);
	CHECK_STR(rows_of(&t, 0), "@0 *(sp+160) *(sp+168) *(sp+120)");
	cfi_table__release(&t);
}

TEST(cfi_unknown_expressions_and_cfa_registers_fall_back)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* def_cfa_expression: DW_OP_call_frame_cfa, which CFI may not use */
	DERIVE(&t, &st, 16, 0x41, 0x0f, 1, 0x9c, 0x41, 0x0c, 40, 8, 0x41, 0x0c, 7, 8);
	CHECK_STR(rows_of(&t, 0), "@0 sp+8 c-8 -; @1 norule; @2 norule; @3 sp+8 c-8 -");
	CHECK_INT(st.no_rule[CFI_NR_CFA_EXPRESSION], 1);
	CHECK_INT(st.no_rule[CFI_NR_CFA_REGISTER], 1);
	cfi_table__release(&t);
}

TEST(cfi_other_dwarf_expressions_become_expression_rules)
{
	struct cfi_table t;
	struct cfi_stats st;
	/* OpenSSL's bignum assembly: cfa = *(rsp+40)+8; then
	 * cfa = *(rsp+8+8*r9)+8; then rbp saved at CFA-8 by an expression
	 * (DW_CFA_expression), then rbp's value CFA-8 (DW_CFA_val_expression) */
	DERIVE(&t, &st, 16,
	       0x41, 0x0f, 5, 0x77, 0x28, 0x06, 0x23, 0x08,
	       0x41, 0x0f, 10, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08,
	       0x41, 0x10, 6, 3, 0x12, 0x38, 0x1c,
	       0x41, 0x16, 6, 2, 0x38, 0x1c);
	CHECK_STR(rows_of(&t, 0),
		  "@0 sp+8 c-8 -; @1 x[breg7 +40; deref; plus_uconst 8] c-8 -; "
		  "@2 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 -; "
		  "@3 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 "
		  "*x[dup; lit8; minus]; "
		  "@4 x[breg7 +8; breg9 +0; lit8; mul; plus; deref; plus_uconst 8] c-8 x[lit8; minus]");
	CHECK(t.funcs[0].flags & SFRAME_FUNC_FLEX);
	CHECK_INT(st.rows_expr, 4);
	CHECK_INT(st.rows_no_rule, 0);
	cfi_table__release(&t);
}

TEST(cfi_reg_rule_should_give_a_callee_saved_registers_rule_at_each_address)
{
	static struct sec s;
	struct cfi_reg_rule r;
	/* push %rbx (@1: cfa+16, rbx at c-16); push %r12 (@2: cfa+24, r12 at
	 * c-24); @8 rbx restored; @9 r12 by an expression */
	static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x83, 2, 0x41, 0x0e, 24, 0x8c, 3,
				       0x46, 0xc3, 0x41, 0x10, 12, 2, 0x38, 0x1c };
	static const uint8_t other[] = { 0x41, 0x0e, 16, 0x83, 2 };

	memset(&s, 0, sizeof(s));
	s.vaddr = 0x2000;
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 16, ins, sizeof(ins));
	eh_fde(&s, c, 0x1100, 8, other, sizeof(other));
	struct cfi_input in = eh_input(&s);

	CHECK_INT(cfi__reg_rule(&in, 0x1000, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_SAME);
	CHECK_INT(cfi__reg_rule(&in, 0x1001, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(r.off, -16);
	CHECK_INT(cfi__reg_rule(&in, 0x1005, 12, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(r.off, -24);
	CHECK_INT(cfi__reg_rule(&in, 0x1008, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_SAME);
	CHECK_INT(cfi__reg_rule(&in, 0x1009, 12, &r), 0);
	CHECK_INT(r.kind, CFI_REG_OTHER);
	CHECK_INT(cfi__reg_rule(&in, 0x1102, 3, &r), 0);
	CHECK_INT(r.kind, CFI_REG_AT_CFA);
	CHECK_INT(cfi__reg_rule(&in, 0x1010, 3, &r), -ENOENT);
	CHECK_INT(cfi__reg_rule(&in, 0x0fff, 3, &r), -ENOENT);
}

/* ld's .plt CFI: sp+16 at 0, sp+24 at 6, the PLT expression from 16. */
static const uint8_t plt_ins[] = { 0x0e, 16, 0x46, 0x0e, 24, 0x4a, 0x0f, 11,
				   0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a,
				   0x33, 0x24, 0x22 };

TEST(cfi_plt_expression_becomes_a_pcmask_function)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1020, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[0].start, 0x1020);
	CHECK_INT(t.funcs[0].size, 16);
	CHECK_INT(t.funcs[0].pc_type, SFRAME_PC_INC);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -");
	CHECK_U64(t.funcs[1].start, 0x1030);
	CHECK_INT(t.funcs[1].size, 0x30);
	CHECK_INT(t.funcs[1].pc_type, SFRAME_PC_MASK);
	CHECK_INT(t.funcs[1].rep_size, 16);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @11 sp+16 c-8 -");
	CHECK_INT(st.pcmask_funcs, 1);
	cfi_table__release(&t);
}

TEST(cfi_misaligned_plt_expression_falls_back)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1024, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -; @16 norule");
	CHECK_INT(st.no_rule[CFI_NR_PLT_ALIGN], 1);
	cfi_table__release(&t);
}

TEST(cfi_plt_sections_without_cfi_get_known_rows)
{
	struct cfi_input in = { 0 };
	struct cfi_table t;
	struct cfi_stats st;
	in.plt[0] = (struct cfi_plt){ 0x1000, 0x40, 16, CFI_PLT_LAZY };
	in.plt[1] = (struct cfi_plt){ 0x1040, 0x20, 16, CFI_PLT_DIRECT };
	in.plt[2] = (struct cfi_plt){ 0x1060, 0x20, 8, CFI_PLT_UNKNOWN };
	in.nr_plt = 3;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 3);
	CHECK_STR(rows_of(&t, 0), "@0 sp+16 c-8 -; @6 sp+24 c-8 -");
	CHECK_INT(t.funcs[1].pc_type, SFRAME_PC_MASK);
	CHECK_U64(t.funcs[1].start, 0x1010);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @11 sp+16 c-8 -");
	CHECK_U64(t.funcs[2].start, 0x1040);
	CHECK_STR(rows_of(&t, 2), "@0 sp+8 c-8 -");
	CHECK_INT(st.plt_synthesized, 2);
	cfi_table__release(&t);
	/* IBT layout: endbr64 first, the push ends at 9 */
	in.plt[0].kind = CFI_PLT_LAZY_IBT;
	in.nr_plt = 1;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_STR(rows_of(&t, 1), "@0 sp+8 c-8 -; @9 sp+16 c-8 -");
	cfi_table__release(&t);
}

TEST(cfi_plt_with_cfi_is_not_synthesized_again)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	in.plt[0] = (struct cfi_plt){ 0x1000, 0x40, 16, CFI_PLT_LAZY };
	in.nr_plt = 1;
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_INT(st.plt_synthesized, 0);
	cfi_table__release(&t);
}

/* One malformed FDE between two good ones: rejected with its reason. */
static void check_rejected(const uint8_t *ins, size_t ilen, int reason,
			   uint64_t range)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 16, NULL, 0);
	no_pad = 1;
	eh_fde(&s, c, 0x2000, range, ins, ilen);
	no_pad = 0;
	eh_fde(&s, c, 0x3000, 16, NULL, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_MSG(st.reject[reason] == 1, "reason %s: count %llu", cfi_reject__name(reason),
		  (unsigned long long)st.reject[reason]);
	CHECK_INT(st.fdes_rejected, 1);
	CHECK_INT(st.fdes_converted, 2);
	CHECK_INT(t.nr_funcs, 2);
	CHECK_U64(t.funcs[1].start, 0x3000);
	cfi_table__release(&t);
}

#define REJECTED(reason, range, ...)                                            \
	do {                                                                    \
		static const uint8_t b_[] = { __VA_ARGS__ };                    \
		check_rejected(b_, sizeof(b_), reason, range);                  \
		if (test__failed)                                               \
			return;                                                 \
	} while (0)

TEST(cfi_rejects_malformed_fdes_and_keeps_the_others)
{
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0e);			/* operand missing */
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0f, 9, 0x77);		/* block past the end */
	REJECTED(CFI_REJ_TRUNCATED, 16, 0x0e, 0x80);		/* LEB128 runs off */
	REJECTED(CFI_REJ_OPCODE, 16, 0x3f);			/* unknown opcode */
	REJECTED(CFI_REJ_OPCODE, 16, 0x2d);			/* GNU_window_save (SPARC) */
	REJECTED(CFI_REJ_STATE_STACK, 16, 0x0b);		/* restore_state, empty */
	REJECTED(CFI_REJ_LOCATION, 16, 0x51);			/* advance past the end */
	REJECTED(CFI_REJ_LOCATION, 16, 0x44, 0x01, 0xd8, 0xff, 0xff, 0xff); /* set_loc backwards */
	REJECTED(CFI_REJ_CFA, 16, 0x0f, 1, 0x31, 0x0e, 8);	/* offset on an expression */
	REJECTED(CFI_REJ_CFA, 16, 0x0f, 1, 0x31, 0x0d, 6);
}

TEST(cfi_rejects_ranges_over_4gib)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	static const uint8_t enc = 0x00; /* absptr: 8-byte start and range */
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie_full(&s, "zR", &enc, 1, cie_init, sizeof(cie_init), 1);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x100000000ull, 8);
	uleb(&s, 0);
	end(&s, f, 0);
	f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, ~0ull - 8, 8); /* wraps */
	uN(&s, 0x100, 8);
	uleb(&s, 0);
	end(&s, f, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.reject[CFI_REJ_RANGE], 2);
	CHECK_INT(t.nr_funcs, 0);
	cfi_table__release(&t);
}

TEST(cfi_rejects_deep_remember_state)
{
	uint8_t ins[40];
	memset(ins, 0x0a, sizeof(ins));
	check_rejected(ins, sizeof(ins), CFI_REJ_STATE_STACK, 16);
}

TEST(cfi_rejects_bad_entries_and_cies)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;

	/* CIE version 2, then an FDE using it: both counted on the FDE */
	memset(&s, 0, sizeof(s));
	size_t c = begin(&s, 0);
	uN(&s, 0, 4);
	u8(&s, 2);
	put(&s, "", 1);
	uleb(&s, 1);
	sleb(&s, -8);
	u8(&s, 16);
	end(&s, c, 0);
	size_t f = begin(&s, 0);
	uN(&s, s.n - c, 4);
	uN(&s, 0x1000, 8);
	uN(&s, 0x10, 8);
	end(&s, f, 0);
	/* FDE whose CIE pointer points before the section */
	f = begin(&s, 0);
	uN(&s, 0x10000, 4);
	end(&s, f, 0);
	/* FDE whose CIE pointer lands on an FDE */
	f = begin(&s, 0);
	uN(&s, s.n - (f - 8), 4);
	end(&s, f, 0);
	/* a length past the end of the section stops the walk */
	uN(&s, 0x1000, 4);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(t.nr_funcs, 0);
	CHECK_INT(st.reject[CFI_REJ_CIE_VERSION], 1);
	CHECK_INT(st.reject[CFI_REJ_CIE_POINTER], 2);
	CHECK_INT(st.reject[CFI_REJ_LENGTH], 1);
	CHECK_INT(st.fdes_rejected, 4);
	cfi_table__release(&t);
}

TEST(cfi_empty_fdes_and_overlaps_are_counted)
{
	static struct sec s;
	struct cfi_table t;
	struct cfi_stats st;
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0, NULL, 0);
	eh_fde(&s, c, 0x2000, 0x20, NULL, 0);
	eh_fde(&s, c, 0x2010, 0x20, NULL, 0);
	struct cfi_input in = eh_input(&s);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK_INT(st.fdes_empty, 1);
	CHECK_INT(st.funcs_overlap, 1);
	CHECK_INT(t.nr_funcs, 1);
	CHECK_U64(t.funcs[0].start, 0x2000);
	cfi_table__release(&t);
}

TEST(cfi_to_sframe_encodes_a_table_the_decoder_reads_back)
{
	static struct sec s;
	struct cfi_stats st;
	static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
	memset(&s, 0, sizeof(s));
	s.vaddr = 0x9000;
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x20, ins, sizeof(ins));
	eh_fde(&s, c, 0x1020, 0x40, plt_ins, sizeof(plt_ins));
	struct cfi_input in = eh_input(&s);
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0, 0x8000 };
	void *buf;
	size_t len;
	struct sframe_table *tab;
	struct sframe_row row;
	struct sframe_func fn;

	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__nr_funcs(tab), 3);
	CHECK_INT(sframe_table__find(tab, 0x1005, &row, &fn), 0);
	CHECK_INT(row.cfa.reg, 6);
	CHECK_INT(row.cfa.off, 16);
	CHECK_INT(row.fp.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(row.fp.off, -16);
	CHECK_INT(sframe_table__find(tab, 0x1030 + 16 * 2 + 12, &row, &fn), 0);
	CHECK_INT(fn.pc_type, SFRAME_PC_MASK);
	CHECK_INT(row.cfa.off, 16);
	sframe_table__free(tab);

	/* a section too far from the code for 32-bit starts: dropped, counted */
	o.section_vaddr = 0x100000000ull;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), -ENOENT);
	CHECK_INT(st.funcs_far, 3);
	o.section_vaddr = 0x8000;

	o.abi = SFRAME_ABI_AARCH64_LE;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, NULL), -EOPNOTSUPP);
	struct cfi_input none = { 0 };
	o.abi = SFRAME_ABI_AMD64_LE;
	CHECK_INT(cfi_to_sframe(&none, &o, &buf, &len, NULL), -ENOENT);
	CHECK_INT(cfi_to_sframe(NULL, &o, &buf, &len, NULL), -EINVAL);
}

TEST(cfi_to_sframe_v2_leaves_flexible_rows_to_the_fallback)
{
	static struct sec s;
	struct cfi_stats st;
	/* DRAP: cfa = r10+0 from 5 on, back to rsp+8 at 16 */
	static const uint8_t ins[] = { 0x45, 0x0c, 10, 0, 0x4b, 0x0c, 7, 8 };
	memset(&s, 0, sizeof(s));
	size_t c = eh_cie(&s);
	eh_fde(&s, c, 0x1000, 0x20, ins, sizeof(ins));
	struct cfi_input in = eh_input(&s);
	struct sframe_encode_opts o = { 2, SFRAME_ABI_AMD64_LE, -8, 0, 0x8000 };
	void *buf;
	size_t len;
	struct sframe_table *tab;
	struct sframe_row row;

	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(st.no_rule[CFI_NR_NEEDS_V3], 1);
	CHECK_INT(st.rows_flex, 0);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__version(tab), 2);
	CHECK_INT(sframe_table__find(tab, 0x1002, &row, NULL), 0);
	CHECK_INT(sframe_table__find(tab, 0x1008, &row, NULL), -ENOENT);
	CHECK_INT(sframe_table__find(tab, 0x1012, &row, NULL), 0);
	CHECK_INT(row.cfa.off, 8);
	sframe_table__free(tab);

	o.version = 3;
	CHECK_INT(cfi_to_sframe(&in, &o, &buf, &len, &st), 0);
	CHECK_INT(st.rows_flex, 1);
	CHECK_INT(sframe_table__new_owned(buf, len, o.section_vaddr, &tab), 0);
	CHECK_INT(sframe_table__find(tab, 0x1008, &row, NULL), 0);
	CHECK_INT(row.cfa.kind, SFRAME_RULE_REG);
	CHECK_INT(row.cfa.reg, 10);
	sframe_table__free(tab);
}

TEST(cfi_stats_print_names_every_counter)
{
	struct cfi_stats st = { 0 };
	char *text = NULL;
	size_t len = 0;
	st.fdes = 7;
	st.reject[CFI_REJ_OPCODE] = 2;
	st.no_rule[CFI_NR_RA_RULE] = 3;
	FILE *f = open_memstream(&text, &len);
	cfi_stats__print(&st, f);
	fclose(f);
	CHECK(strstr(text, "fdes: 7\n"));
	CHECK(strstr(text, "reject_opcode: 2\n"));
	CHECK(strstr(text, "no_rule_ra_rule: 3\n"));
	CHECK(!strstr(text, "reject_truncated"));
	free(text);
}

TEST(cfi_input_from_elf_finds_this_test_binarys_cfi)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct cfi_input in;
	struct cfi_table t;
	struct cfi_stats st;
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e);
	CHECK_INT(cfi_input_from_elf(e, &in), 0);
	CHECK(in.eh_frame && in.eh_frame_len > 0);
	CHECK(in.text_vaddr != 0);
	CHECK_INT(cfi_derive(&in, &t, &st), 0);
	CHECK(st.fdes > 10);
	CHECK_INT(st.fdes_rejected, 0);
	cfi_table__release(&t);
	elf_end(e);
	close(fd);
}

TEST_MAIN()

#include "unwind/cfi_int.h"

TEST(leb128_should_decode_edges_and_reject_bits_past_64)
{
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0x03 };
	/* rbp (6) with a 65th bit set: must not alias register 6 */
	static const uint8_t alias[] = { 0x86, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t neg[] = { 0x7f }, cut[] = { 0x80, 0x80 };
	const uint8_t *p;
	uint64_t u;
	int64_t s;

	p = max;
	CHECK(cfi__uleb(&p, max + sizeof(max), &u));
	CHECK_U64(u, UINT64_MAX);
	CHECK(p == max + sizeof(max));
	p = over;
	CHECK(!cfi__uleb(&p, over + sizeof(over), &u));
	p = alias;
	CHECK(!cfi__uleb(&p, alias + sizeof(alias), &u));
	p = cut;
	CHECK(!cfi__uleb(&p, cut + sizeof(cut), &u));
	p = neg;
	CHECK(cfi__sleb(&p, neg + 1, &s));
	CHECK_INT(s, -1);
	p = cut;
	CHECK(!cfi__sleb(&p, cut + sizeof(cut), &s));
}
