// SPDX-License-Identifier: MIT
/*
 * A Java method from its Method* (hotspot.h): Method -> ConstMethod ->
 * ConstantPool -> the pool holder Klass's name Symbol, and the method's
 * name Symbol by index; the source file by the pool's index too; a line
 * from the ConstMethod's compressed line-number table (after its
 * bytecodes). And an interpreted frame's Method* and bcp from its fixed
 * slots. Every pointer comes from the target and is checked before use:
 * a Method* that is not one gives no name, never another's.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"

#define CM_WORDS_MAX (1u << 20) /* ConstMethod::_constMethod_size, words */

static int rd64(hotspot_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

/* A pointer field: non-NULL, 8-aligned, in user space. */
static int rdptr(hotspot_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	int err = rd64(read, ctx, addr, v);

	if (err)
		return err;
	return *v && !(*v & 7) && *v < (1ull << 56) ? 0 : -EINVAL;
}

/* A Symbol's bytes appended to out (of size `size`, len so far *n), a
 * class's as Java prints it (its '/' as '.', a hidden class's '+' as
 * '/'), a byte below ' ' (never in a class or method name) refused. */
static int symbol_append(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			 uint64_t sym, bool klass, char *out, size_t size, size_t *n)
{
	uint16_t len;
	int err;

	if ((err = read(ctx, sym + l->sym_length, &len, sizeof(len))))
		return err;
	if (!len || *n + len >= size)
		return -EINVAL;
	if ((err = read(ctx, sym + l->sym_body, out + *n, len)))
		return err;
	for (size_t i = *n; i < *n + len; i++) {
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			return -EINVAL;
		if (klass && out[i] == '/')
			out[i] = '.';
		else if (klass && out[i] == '+')
			out[i] = '/';
	}
	*n += len;
	out[*n] = 0;
	return 0;
}

/* The pool's Symbol at idx (a Utf8 entry when the VM says how to tell). */
static int pool_symbol(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		       uint64_t cp, int32_t cp_len, uint16_t idx, uint64_t *sym)
{
	int err;

	if (!idx || idx >= cp_len)
		return -EINVAL;
	if (l->has_interp) {
		uint64_t tags;
		int32_t tlen;
		uint8_t tag;

		if ((err = rdptr(read, ctx, cp + l->cp_tags, &tags)) ||
		    (err = read(ctx, tags + l->arr_len, &tlen, sizeof(tlen))))
			return err;
		if (tlen != cp_len)
			return -EINVAL;
		if ((err = read(ctx, tags + l->arr_data + idx, &tag, 1)))
			return err;
		if (tag != l->tag_utf8)
			return -EINVAL;
	}
	/* (a Symbol* entry of the pool, tagged in its low bits in old JDKs) */
	if ((err = rd64(read, ctx, cp + l->cp_size + (uint64_t)idx * 8, sym)))
		return err;
	*sym &= ~7ull;
	return *sym && *sym < (1ull << 56) ? 0 : -EINVAL;
}

/* The ConstMethod's bytecodes [*code, *code + *size) and its end. */
static int bytecodes(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		     uint64_t cm, uint64_t *code, uint16_t *size, uint64_t *end)
{
	int32_t words;
	int err;

	if ((err = read(ctx, cm + l->cm_size, &words, sizeof(words))) ||
	    (err = read(ctx, cm + l->cm_code_size, size, sizeof(*size))))
		return err;
	if (words <= 0 || (uint32_t)words > CM_WORDS_MAX)
		return -EINVAL;
	*code = cm + l->cm_sizeof;
	*end = cm + (uint64_t)words * 8;
	return *code + *size <= *end ? 0 : -EINVAL;
}

/* UNSIGNED5 (CompressedReadStream::read_int): 1 to 5 bytes, a byte below
 * 192 the last; then zigzag for a signed one. */
int hotspot__read_u5(const uint8_t *t, size_t len, size_t *pos, uint32_t *v)
{
	uint32_t sum = 0;

	for (unsigned i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint32_t b;

		if (*pos >= len)
			return -EINVAL;
		b = t[(*pos)++];
		sum += b << shift;
		if (b < 192 || i == 4)
			break;
	}
	*v = sum;
	return 0;
}

static int read_s5(const uint8_t *t, size_t len, size_t *pos, int32_t *v)
{
	uint32_t u = 0;
	int err = hotspot__read_u5(t, len, pos, &u);

	*v = (int32_t)((u >> 1) ^ (0u - (u & 1)));
	return err;
}

int hotspot__line_of(const uint8_t *t, size_t len, uint32_t bci, uint32_t *line)
{
	int64_t cur_bci = 0, cur_line = 0, best_bci = -1, best_line = 0;
	size_t pos = 0;

	/* (a table's pairs are at most one per byte) */
	for (size_t pairs = 0; pairs <= len; pairs++) {
		uint8_t b;
		int err;

		if (pos >= len)
			return -EINVAL; /* no end in the bytes */
		b = t[pos++];
		if (!b)
			break;
		if (b != 0xff) {
			cur_bci += b >> 3;
			cur_line += b & 7;
		} else {
			int32_t db, dl;

			if ((err = read_s5(t, len, &pos, &db)) || (err = read_s5(t, len, &pos, &dl)))
				return err;
			cur_bci += db;
			cur_line += dl;
		}
		if (cur_bci < 0 || cur_bci > 0xffff || cur_line < 0 || cur_line > 0xffffff)
			return -EINVAL;
		if (cur_bci == bci) {
			*line = (uint32_t)cur_line;
			return cur_line ? 0 : -ENOENT;
		}
		if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	if (best_bci < 0 || !best_line)
		return -ENOENT;
	*line = (uint32_t)best_line;
	return 0;
}

/* bci's line from cm's table, 0 when it has none or it does not say. */
static uint32_t line_at(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			uint64_t cm, uint32_t bci)
{
	uint8_t t[256];
	uint64_t code, end, at;
	uint16_t size, flags;
	uint32_t line;
	size_t len;

	if (!l->has_lines || bytecodes(l, read, ctx, cm, &code, &size, &end) || bci >= size ||
	    read(ctx, cm + l->cm_flags, &flags, sizeof(flags)) || !(flags & l->has_lnt))
		return 0;
	/* (the table follows the bytecodes; read a window of it, longer
	 * ones stepped through to HOTSPOT_LNT_MAX) */
	at = code + size;
	len = end - at < sizeof(t) ? (size_t)(end - at) : sizeof(t);
	if (!len || read(ctx, at, t, len))
		return 0;
	if (!hotspot__line_of(t, len, bci, &line))
		return line;
	/* (a window too short for the table: read it whole, bounded) */
	if (len == sizeof(t) && end - at > sizeof(t)) {
		static __thread uint8_t big[HOTSPOT_LNT_MAX];

		len = end - at < sizeof(big) ? (size_t)(end - at) : sizeof(big);
		if (!read(ctx, at, big, len) && !hotspot__line_of(big, len, bci, &line))
			return line;
	}
	return 0;
}

static int method_cm(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		     uint64_t method, uint64_t *cm)
{
	if (method & 7 || !method || method >= (1ull << 56))
		return -EINVAL;
	return rdptr(read, ctx, method + l->m_const, cm);
}

static int method_of(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		     uint64_t method, uint64_t cm, int32_t bci, struct hotspot_method *out)
{
	uint64_t cp, holder, ksym, msym, fsym;
	uint16_t idx, fidx;
	int32_t cp_len;
	size_t n = 0;
	int err;

	(void)method;
	out->name[0] = out->file[0] = 0;
	out->line = 0;
	if ((err = rdptr(read, ctx, cm + l->cm_constants, &cp)) ||
	    (err = read(ctx, cm + l->cm_name_index, &idx, sizeof(idx))) ||
	    (err = read(ctx, cp + l->cp_length, &cp_len, sizeof(cp_len))) ||
	    (err = rdptr(read, ctx, cp + l->cp_holder, &holder)) ||
	    (err = rdptr(read, ctx, holder + l->k_name, &ksym)))
		return err;
	if (cp_len <= 0 || cp_len > 0xffff)
		return -EINVAL;
	if ((err = pool_symbol(l, read, ctx, cp, cp_len, idx, &msym)) ||
	    (err = symbol_append(l, read, ctx, ksym, true, out->name, sizeof(out->name), &n)))
		return err;
	out->name[n++] = '.';
	if ((err = symbol_append(l, read, ctx, msym, false, out->name, sizeof(out->name), &n)))
		return err;
	/* the source file and line: where they read, else none */
	if (l->has_interp && !read(ctx, cp + l->cp_source, &fidx, sizeof(fidx)) &&
	    !pool_symbol(l, read, ctx, cp, cp_len, fidx, &fsym)) {
		size_t fn = 0;

		if (symbol_append(l, read, ctx, fsym, false, out->file, sizeof(out->file), &fn))
			out->file[0] = 0;
	}
	if (bci >= 0)
		out->line = line_at(l, read, ctx, cm, (uint32_t)bci);
	return 0;
}

int hotspot__method(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t method, int32_t bci, struct hotspot_method *out)
{
	uint64_t cm;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = method_cm(l, read, ctx, method, &cm)))
		return err;
	out->method = method;
	err = method_of(l, read, ctx, method, cm, bci, out);
	out->method = method;
	return err;
}

int hotspot__lnt_len(const uint8_t *t, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		uint8_t b = t[pos++];
		uint32_t v;

		if (!b)
			return pos <= 0x7fffffff ? (int)pos : -EINVAL;
		if (b == 0xff && (hotspot__read_u5(t, len, &pos, &v) ||
				  hotspot__read_u5(t, len, &pos, &v)))
			return -EINVAL;
	}
	return -EINVAL;
}

int hotspot__method_rec(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			uint64_t method, struct hotspot_method_rec *out)
{
	uint64_t cm, end, at;
	uint16_t flags;
	size_t len;
	int err, n;

	out->lnt_len = 0;
	out->code_size = 0;
	if ((err = hotspot__method(l, read, ctx, method, -1, &out->m)) ||
	    (err = method_cm(l, read, ctx, method, &cm)) ||
	    (err = bytecodes(l, read, ctx, cm, &out->code, &out->code_size, &end)))
		return err;
	/* the table, where the method has one and it ends within the bound
	 * (else report gives its frames no line) */
	if (!l->has_lines || read(ctx, cm + l->cm_flags, &flags, sizeof(flags)) ||
	    !(flags & l->has_lnt))
		return 0;
	at = out->code + out->code_size;
	len = end - at < sizeof(out->lnt) ? (size_t)(end - at) : sizeof(out->lnt);
	if (!len || read(ctx, at, out->lnt, len) || (n = hotspot__lnt_len(out->lnt, len)) < 0)
		return 0;
	out->lnt_len = (size_t)n;
	return 0;
}

int hotspot__interp_frame(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			  uint64_t fp, bool with_line, struct hotspot_method *out)
{
	uint64_t method, bcp, cm, code, end;
	uint16_t size;
	int err;

	memset(out, 0, sizeof(*out));
	if (!l->has_interp)
		return -ENOENT;
	if (fp & 7 || fp < 4096 || fp >= (1ull << 56))
		return -EINVAL;
	if ((err = rd64(read, ctx, fp + (uint64_t)(int64_t)l->fp_method, &method)) ||
	    (err = rd64(read, ctx, fp + (uint64_t)(int64_t)l->fp_bcp, &bcp)) ||
	    (err = method_cm(l, read, ctx, method, &cm)) ||
	    (err = bytecodes(l, read, ctx, cm, &code, &size, &end)))
		return err;
	/* the frame's bcp in its method's bytecodes (a native method's, with
	 * none, is 0): the Method* is this frame's, not a stale word */
	if (bcp ? bcp < code || bcp >= code + size : size != 0)
		return -EINVAL;
	err = method_of(l, read, ctx, method, cm,
			bcp && with_line ? (int32_t)(bcp - code) : -1, out);
	out->method = method;
	return err;
}
