// SPDX-License-Identifier: MIT
/*
 * .gopclntab (Go 1.18+): header, functab, _func records, names and
 * PC-value tables, every read bounds-checked (src/runtimes/go/gopclntab.h).
 *
 * Layout, from Go's runtime/symtab.go (pcHeader, _func, step) and
 * cmd/link/internal/ld/pcln.go, which writes the sub-tables in this
 * order: header, funcnametab, cutab, filetab, pctab, then the functab
 * followed by the _func records it points to.
 */
#include "runtimes/go/gopclntab.h"

#include <errno.h>
#include <string.h>

/* pcHeader: magic, pad1, pad2, minLC, ptrSize, then 8 words */
#define HDR_WORDS 8
#define W_NFUNC 0
#define W_TEXT 2
#define W_FUNCNAME 3
#define W_CU 4
#define W_FILETAB 5
#define W_PCTAB 6
#define W_PCLN 7

/* _func: entryoff, nameoff, args, deferreturn, pcsp, pcfile, pcln,
 * npcdata, cuOffset (+ startLine from 1.20), funcID, flag, pad,
 * nfuncdata */
#define FUNC_PCSP 16
#define FUNC_TAIL_118 36
#define FUNC_TAIL_120 40

/* functab entry: entryoff, funcoff (both uint32) */
#define FTAB_ENT 8

/* A varint longer than this cannot be a uint32 */
#define VARINT_MAX 5

static const char *const errs[] = {
	[GOPCLNTAB_E_TRUNCATED - 3000] = "table or record past the end of .gopclntab",
	[GOPCLNTAB_E_MAGIC - 3000] = "not a Go pclntab (bad magic)",
	[GOPCLNTAB_E_VERSION - 3000] = "pclntab of Go before 1.18 (not supported)",
	[GOPCLNTAB_E_HEADER - 3000] = "bad pclntab header (pointer size, quantum or offsets)",
	[GOPCLNTAB_E_ORDER - 3000] = "pclntab functab not sorted",
	[GOPCLNTAB_E_FUNC - 3000] = "pclntab function record disagrees with its functab entry",
	[GOPCLNTAB_E_NAME - 3000] = "pclntab name not terminated inside its table",
	[GOPCLNTAB_E_PCVALUE - 3000] = "pclntab PC-value table runs past its end",
};

const char *gopclntab__strerror(int err)
{
	int i = -err - 3000;

	if (i >= 0 && i < (int)(sizeof(errs) / sizeof(errs[0])) && errs[i])
		return errs[i];
	return strerror(-err);
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4); /* little-endian targets only (x86-64) */
	return v;
}

static uint64_t rdword(const uint8_t *p, unsigned size)
{
	uint64_t v;

	if (size == 4)
		return rd32(p);
	memcpy(&v, p, 8);
	return v;
}

int gopclntab__parse(const void *data, size_t len, uint64_t text_vaddr,
		     struct gopclntab *t)
{
	const uint8_t *b = data;
	uint64_t w[HDR_WORDS], prev, entry, last_entry = 0;
	unsigned ps;
	size_t hdr;

	memset(t, 0, sizeof(*t));
	if (!b || len < 8)
		return -GOPCLNTAB_E_TRUNCATED;
	t->magic = rd32(b);
	if (t->magic == 0xfffffffbu || t->magic == 0xfffffffau)
		return -GOPCLNTAB_E_VERSION; /* Go 1.2-1.15, 1.16-1.17 */
	if (t->magic != GOPCLNTAB_MAGIC_118 && t->magic != GOPCLNTAB_MAGIC_120)
		return -GOPCLNTAB_E_MAGIC;
	ps = b[7];
	t->quantum = b[6];
	if (b[4] || b[5] || (ps != 4 && ps != 8) ||
	    (t->quantum != 1 && t->quantum != 2 && t->quantum != 4))
		return -GOPCLNTAB_E_HEADER;
	hdr = 8 + (size_t)HDR_WORDS * ps;
	if (len < hdr)
		return -GOPCLNTAB_E_TRUNCATED;
	for (unsigned i = 0; i < HDR_WORDS; i++)
		w[i] = rdword(b + 8 + i * ps, ps);
	/* the sub-tables follow the header in the linker's order */
	prev = hdr;
	for (unsigned i = W_FUNCNAME; i <= W_PCLN; i++) {
		if (w[i] < prev)
			return -GOPCLNTAB_E_HEADER;
		if (w[i] > len)
			return -GOPCLNTAB_E_TRUNCATED;
		prev = w[i];
	}
	t->data = b;
	t->len = len;
	t->nfunc = w[W_NFUNC];
	t->text = w[W_TEXT] ? w[W_TEXT] : text_vaddr;
	t->names_off = w[W_FUNCNAME];
	t->names_end = w[W_CU];
	t->pctab_off = w[W_PCTAB];
	t->pctab_end = w[W_PCLN];
	t->ftab_off = w[W_PCLN];
	t->func_size = t->magic == GOPCLNTAB_MAGIC_118 ? FUNC_TAIL_118 + 4
						       : FUNC_TAIL_120 + 4;
	/* nfunc + 1 entries must fit (the last one is the end of text) */
	if (t->nfunc >= (len - t->ftab_off) / FTAB_ENT)
		return -GOPCLNTAB_E_TRUNCATED;
	/*
	 * Check the functab once: entries sorted, every _func record inside
	 * the table. Lookups then binary-search it without re-checking the
	 * order, and only re-read the record they land on.
	 */
	for (uint64_t i = 0; i <= t->nfunc; i++) {
		const uint8_t *e = b + t->ftab_off + i * FTAB_ENT;
		uint64_t foff = rd32(e + 4);

		entry = rd32(e);
		if (i && entry < last_entry)
			return -GOPCLNTAB_E_ORDER;
		last_entry = entry;
		if (i < t->nfunc &&
		    (foff > len - t->ftab_off ||
		     t->func_size > len - t->ftab_off - foff))
			return -GOPCLNTAB_E_TRUNCATED;
	}
	if (t->text > UINT64_MAX - last_entry)
		return -GOPCLNTAB_E_HEADER;
	t->text_end = t->text + last_entry;
	return 0;
}

int gopclntab__func(const struct gopclntab *t, uint64_t i,
		    struct gopclntab_func *f)
{
	const uint8_t *e, *r, *name;
	uint64_t foff;
	size_t tail;
	int32_t nameoff;

	if (i >= t->nfunc)
		return -ENOENT;
	e = t->data + t->ftab_off + i * FTAB_ENT;
	foff = rd32(e + 4);
	/* (checked in parse; again, as this is a separate entry point) */
	if (foff > t->len - t->ftab_off ||
	    t->func_size > t->len - t->ftab_off - foff)
		return -GOPCLNTAB_E_TRUNCATED;
	r = t->data + t->ftab_off + foff;
	if (rd32(r) != rd32(e))
		return -GOPCLNTAB_E_FUNC;
	f->start = t->text + rd32(e);
	f->end = t->text + rd32(e + FTAB_ENT);
	if (f->end < f->start)
		return -GOPCLNTAB_E_ORDER;
	memcpy(&nameoff, r + 4, 4);
	/* (offset 0 is the first name, not "no name") */
	if (nameoff < 0 || (uint64_t)nameoff >= t->names_end - t->names_off)
		return -GOPCLNTAB_E_NAME;
	name = t->data + t->names_off + nameoff;
	if (!memchr(name, 0, t->names_end - t->names_off - (size_t)nameoff))
		return -GOPCLNTAB_E_NAME;
	f->name = (const char *)name;
	f->pcsp = rd32(r + FUNC_PCSP);
	tail = t->magic == GOPCLNTAB_MAGIC_118 ? FUNC_TAIL_118 : FUNC_TAIL_120;
	f->func_id = r[tail];
	f->flag = r[tail + 1];
	return 0;
}

int gopclntab__find(const struct gopclntab *t, uint64_t vaddr,
		    struct gopclntab_func *f)
{
	uint64_t lo = 0, hi = t->nfunc, off;

	if (!t->data || vaddr < t->text || vaddr >= t->text_end)
		return -ENOENT;
	off = vaddr - t->text;
	/* the last entry with entryoff <= off (parse checked the order) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (rd32(t->data + t->ftab_off + mid * FTAB_ENT) <= off)
			lo = mid;
		else
			hi = mid;
	}
	if (t->nfunc == 0 || rd32(t->data + t->ftab_off + lo * FTAB_ENT) > off)
		return -ENOENT;
	return gopclntab__func(t, lo, f);
}

/* An unsigned LEB128 of at most 32 bits at *off, below `end`. */
static int uvarint(const uint8_t *b, size_t *off, size_t end, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < VARINT_MAX; i++) {
		uint8_t c;

		if (*off >= end)
			return -GOPCLNTAB_E_PCVALUE;
		c = b[(*off)++];
		if (i == VARINT_MAX - 1 && c > 0x0f)
			return -GOPCLNTAB_E_PCVALUE; /* more than 32 bits */
		v |= (uint32_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -GOPCLNTAB_E_PCVALUE;
}

int gopclntab__pcvalue_start(const struct gopclntab *t,
			     const struct gopclntab_func *f, uint32_t table_off,
			     struct gopclntab_pcvalue *it)
{
	memset(it, 0, sizeof(*it));
	if (!table_off)
		return -ENOENT;
	if (table_off >= t->pctab_end - t->pctab_off)
		return -GOPCLNTAB_E_PCVALUE;
	it->t = t;
	it->off = t->pctab_off + table_off;
	it->pc = f->start;
	it->end = f->end;
	it->val = -1; /* Go's pcvalue starts from -1 */
	it->first = 1;
	return 0;
}

int gopclntab__pcvalue_next(struct gopclntab_pcvalue *it, uint64_t *pc_lo,
			    uint64_t *pc_hi, int32_t *val)
{
	const struct gopclntab *t = it->t;
	uint32_t uv, pcd;
	int err;

	if (!t || it->pc >= it->end)
		return 0; /* the function is covered: nothing follows */
	if (it->off >= t->pctab_end)
		return -GOPCLNTAB_E_PCVALUE;
	if (t->data[it->off] == 0 && !it->first)
		return 0; /* the table's end marker */
	err = uvarint(t->data, &it->off, t->pctab_end, &uv);
	if (!err)
		err = uvarint(t->data, &it->off, t->pctab_end, &pcd);
	if (err)
		return err;
	/* zig-zag: the low bit is the sign */
	it->val = (int32_t)((uint32_t)it->val +
			    ((uv & 1) ? ~(uv >> 1) : (uv >> 1)));
	it->first = 0;
	if ((uint64_t)pcd * t->quantum > it->end - it->pc)
		return -GOPCLNTAB_E_PCVALUE; /* a run past the function */
	*pc_lo = it->pc;
	it->pc += (uint64_t)pcd * t->quantum;
	*pc_hi = it->pc;
	*val = it->val;
	return 1;
}

int gopclntab__spdelta(const struct gopclntab *t,
		       const struct gopclntab_func *f, uint64_t pc,
		       int32_t *delta)
{
	struct gopclntab_pcvalue it;
	uint64_t lo, hi;
	int32_t v;
	int rc;

	if (pc < f->start || pc >= f->end)
		return -ENOENT;
	rc = gopclntab__pcvalue_start(t, f, f->pcsp, &it);
	if (rc)
		return rc;
	while ((rc = gopclntab__pcvalue_next(&it, &lo, &hi, &v)) == 1) {
		if (pc >= lo && pc < hi) {
			*delta = v;
			return 0;
		}
	}
	return rc ? rc : -ENOENT;
}
