// SPDX-License-Identifier: MIT
/*
 * CPython's perf trampoline: the template, recognised by its bytes, and
 * its unwind rows (src/runtimes/python/pytrampoline.h).
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "model/elfread.h"
#include "runtimes/python/pytrampoline.h"
#include "unwind/unwind.h"

#define ENDBR64 0xf3, 0x0f, 0x1e, 0xfa

/* One row of a template: from byte `start` on, CFA = reg + cfa_off, RA at
 * CFA - 8, the caller's RBP at CFA + fp_off (0: RBP is not saved). */
struct tramp_row {
	uint8_t start, reg;
	int8_t cfa_off, fp_off;
};

struct tramp_shape {
	const char *name;
	uint8_t len;
	uint8_t code[PYTRAMP_MAX];
	uint8_t nr_rows;
	struct tramp_row rows[5];
};

#define RSP UNWIND_REG_RSP

static const struct tramp_shape shapes[PYTRAMP__NR] = {
	[PYTRAMP_SUB8] = {
		"sub8", 11,
		{ 0x48, 0x83, 0xec, 0x08,   /* sub $8,%rsp */
		  0xff, 0xd1,		    /* call *%rcx */
		  0x48, 0x83, 0xc4, 0x08,   /* add $8,%rsp */
		  0xc3 },		    /* ret */
		3, { { 0, RSP, 8, 0 }, { 4, RSP, 16, 0 }, { 10, RSP, 8, 0 } },
	},
	[PYTRAMP_FP] = {
		"fp", 8,
		{ 0x55,			    /* push %rbp */
		  0x48, 0x89, 0xe5,	    /* mov %rsp,%rbp */
		  0xff, 0xd1,		    /* call *%rcx */
		  0x5d,			    /* pop %rbp */
		  0xc3 },		    /* ret */
		/* (mov and call leave RSP where the push put it) */
		3, { { 0, RSP, 8, 0 }, { 1, RSP, 16, -16 }, { 7, RSP, 8, 0 } },
	},
	[PYTRAMP_SUB8_ENDBR] = {
		"endbr-sub8", 15,
		{ ENDBR64, 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
		  0x48, 0x83, 0xc4, 0x08, 0xc3 },
		3, { { 0, RSP, 8, 0 }, { 8, RSP, 16, 0 }, { 14, RSP, 8, 0 } },
	},
	[PYTRAMP_FP_ENDBR] = {
		"endbr-fp", 12,
		{ ENDBR64, 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 },
		3, { { 0, RSP, 8, 0 }, { 5, RSP, 16, -16 }, { 11, RSP, 8, 0 } },
	},
};

const char *pytramp__shape_name(uint32_t shape)
{
	return shape > PYTRAMP_NONE && shape < PYTRAMP__NR ? shapes[shape].name : "none";
}

int pytramp__match(const uint8_t *code, size_t len, struct pytramp *t)
{
	for (uint32_t i = PYTRAMP_NONE + 1; i < PYTRAMP__NR; i++)
		if (len == shapes[i].len && !memcmp(code, shapes[i].code, len)) {
			memset(t, 0, sizeof(*t));
			t->shape = i;
			t->len = (uint32_t)len;
			memcpy(t->code, code, len);
			return 0;
		}
	return -ENOENT;
}

struct find_syms {
	uint64_t start, end;
	int have_start, have_end;
};

static int sym_cb(void *ctx, const struct elfread_sym *s)
{
	struct find_syms *f = ctx;

	if (s->shndx == SHN_UNDEF)
		return 0;
	if (!f->have_start && !strcmp(s->name, "_Py_trampoline_func_start")) {
		f->start = s->value;
		f->have_start = 1;
	} else if (!f->have_end && !strcmp(s->name, "_Py_trampoline_func_end")) {
		f->end = s->value;
		f->have_end = 1;
	}
	return f->have_start && f->have_end;
}

/* The file bytes of ELF vaddr range [start, end), in an executable
 * PT_LOAD's file part: NULL when not all of it is there. */
static const uint8_t *vaddr_bytes(const struct elfread *e, uint64_t start, uint64_t end)
{
	size_t img_len, n = elfread__nr_loads(e);
	const uint8_t *img = elfread__image(e, &img_len);

	for (size_t i = 0; i < n; i++) {
		struct elfread_load l;
		uint64_t off;

		if (elfread__load(e, i, &l) || !(l.flags & PF_X) || start < l.vaddr ||
		    end - l.vaddr > l.filesz)
			continue;
		off = l.offset + (start - l.vaddr);
		if (off < l.offset || off > img_len || end - start > img_len - off)
			return NULL;
		return img + off;
	}
	return NULL;
}

int pytramp__from_elf(const struct elfread *e, struct pytramp *t)
{
	struct find_syms f = { 0 };
	const uint8_t *code;

	if (elfread__machine(e) != EM_X86_64)
		return -ENOTSUP; /* (the templates are x86-64 code) */
	if (elfread__for_each_symbol(e, SHT_DYNSYM, sym_cb, &f) != 1) {
		memset(&f, 0, sizeof(f));
		if (elfread__for_each_symbol(e, SHT_SYMTAB, sym_cb, &f) != 1)
			return -ENOENT;
	}
	if (f.end <= f.start || f.end - f.start > PYTRAMP_MAX)
		return -EINVAL;
	code = vaddr_bytes(e, f.start, f.end);
	if (!code)
		return -EINVAL;
	return pytramp__match(code, f.end - f.start, t) ? -ENOTSUP : 0;
}

int pytramp__row(const struct pytramp *t, uint64_t off, struct sframe_row *row)
{
	const struct tramp_shape *s;
	const struct tramp_row *r = NULL;

	if (t->shape <= PYTRAMP_NONE || t->shape >= PYTRAMP__NR || off >= t->len)
		return -ESRCH;
	s = &shapes[t->shape];
	for (unsigned i = 0; i < s->nr_rows && s->rows[i].start <= off; i++)
		r = &s->rows[i];
	memset(row, 0, sizeof(*row));
	row->start = r->start;
	row->cfa = sframe_rule__make(SFRAME_RULE_REG, r->reg, r->cfa_off);
	row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
	row->fp = r->fp_off ? sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, r->fp_off)
			    : sframe_rule__make(SFRAME_RULE_NONE, 0, 0);
	return 0;
}
