// SPDX-License-Identifier: MIT
/*
 * V8 objects of a hostile target (src/runtimes/v8/v8reader.h): a JSFunction's
 * SharedFunctionInfo, its name (a String, or its ScopeInfo's function
 * name once compiled) and its Script's name. Each object is read by its
 * map's instance type first, so a stale slot or a freed object gives
 * -EINVAL rather than a name.
 */
#include "runtimes/v8/v8reader.h"

#include <errno.h>
#include <string.h>

#define V8_CONS_DEPTH 8	    /* cons/thin/sliced strings followed */
#define V8_STR_LEN_MAX (1u << 28) /* V8's String::kMaxLength is below */
/* ScopeInfo: local names kept inline below this many (kScopeInfoMaxInlinedLocalNamesSize) */
#define V8_SI_INLINE_NAMES 75
#define V8_SI_LOCALS_MAX 65536
/* ScopeFlags bits (scope-info.tq, V8 10-12) */
#define V8_SI_SAVED_CLASS_VAR (1u << 10)
#define V8_SI_FUNCTION_VAR_SHIFT 12 /* 2 bits: NONE, STACK, CONTEXT, UNUSED */

struct rd {
	const struct v8_layout *l;
	v8_read_fn fn;
	void *ctx;
};

static int word(const struct rd *r, uint64_t addr, uint64_t *out)
{
	if (addr > UINT64_MAX - 8)
		return -EINVAL;
	return r->fn(r->ctx, addr, out, 8);
}

static int is_heap(const struct rd *r, uint64_t v)
{
	return (v & r->l->heap_tag_mask) == r->l->heap_tag && v > 4096;
}

static int is_smi(const struct rd *r, uint64_t v)
{
	return (v & r->l->heap_tag_mask) == 0;
}

static int64_t smi(const struct rd *r, uint64_t v)
{
	return (int64_t)v >> r->l->smi_shift;
}

/* The object at tagged pointer v: its untagged address and instance type. */
static int object(const struct rd *r, uint64_t v, uint64_t *addr, unsigned *type)
{
	uint64_t a, map;
	uint16_t t;
	int err;

	if (!is_heap(r, v))
		return -EINVAL;
	a = v - r->l->heap_tag;
	if ((err = word(r, a + r->l->map, &map)))
		return err;
	if (!is_heap(r, map))
		return -EINVAL;
	if ((err = r->fn(r->ctx, map - r->l->heap_tag + r->l->map_type, &t, sizeof(t))))
		return err;
	*addr = a;
	*type = t;
	return 0;
}

struct out {
	char *buf;
	size_t size, n;
	unsigned chars;
};

static void put_char(struct out *o, uint32_t c)
{
	char u[3];
	size_t k;

	if (o->chars >= V8_NAME_MAX)
		return;
	o->chars++;
	if (c < 0x20 || c == 0x7f || c == ';')
		c = '?'; /* (no control bytes, no folded-stack separator) */
	if (c < 0x80) {
		u[0] = (char)c;
		k = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		k = 2;
	} else {
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd; /* a lone surrogate half */
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		k = 3;
	}
	if (o->n + k < o->size) {
		memcpy(o->buf + o->n, u, k);
		o->n += k;
	} else {
		o->chars = V8_NAME_MAX; /* full */
	}
}

/* Characters [from, from + len) of String v appended to o. */
static int string_part(const struct rd *r, uint64_t v, uint64_t from, uint64_t len,
		       struct out *o, unsigned depth)
{
	const struct v8_layout *l = r->l;
	uint64_t a, w, first;
	int32_t slen;
	unsigned type;
	int err;

	if (depth > V8_CONS_DEPTH)
		return -EINVAL;
	if ((err = object(r, v, &a, &type)))
		return err;
	if (type >= l->first_nonstring)
		return -EINVAL;
	if ((err = r->fn(r->ctx, a + l->str_len, &slen, sizeof(slen))))
		return err;
	if (slen < 0 || (uint64_t)slen > V8_STR_LEN_MAX || from > (uint64_t)slen ||
	    len > (uint64_t)slen - from)
		return -EINVAL;
	if ((type & l->repr_mask) == l->seq_tag) {
		int one = (type & l->enc_mask) == l->one_byte_tag;
		uint64_t base = a + (one ? l->seq1_chars : l->seq2_chars);
		uint8_t chunk[64];

		if (len > V8_NAME_MAX - o->chars)
			len = V8_NAME_MAX - o->chars;
		for (uint64_t i = 0; i < len;) {
			uint64_t k = len - i;

			if (!one)
				k = k > sizeof(chunk) / 2 ? sizeof(chunk) / 2 : k;
			else if (k > sizeof(chunk))
				k = sizeof(chunk);
			if ((err = r->fn(r->ctx, base + (from + i) * (one ? 1 : 2), chunk,
					 (size_t)(k * (one ? 1 : 2)))))
				return err;
			for (uint64_t j = 0; j < k; j++)
				put_char(o, one ? chunk[j]
						: (uint32_t)(chunk[2 * j] | (chunk[2 * j + 1] << 8)));
			i += k;
		}
		return 0;
	}
	if ((type & l->repr_mask) == l->cons_tag) {
		int32_t flen;
		uint64_t fa;
		unsigned ft;

		if ((err = word(r, a + l->cons_first, &first)) ||
		    (err = object(r, first, &fa, &ft)))
			return err;
		if (ft >= l->first_nonstring)
			return -EINVAL;
		if ((err = r->fn(r->ctx, fa + l->str_len, &flen, sizeof(flen))))
			return err;
		if (flen < 0 || flen > slen)
			return -EINVAL;
		if (from < (uint64_t)flen) {
			uint64_t k = (uint64_t)flen - from < len ? (uint64_t)flen - from : len;

			if ((err = string_part(r, first, from, k, o, depth + 1)))
				return err;
			from += k;
			len -= k;
		}
		if (!len || o->chars >= V8_NAME_MAX)
			return 0;
		if ((err = word(r, a + l->cons_second, &w)))
			return err;
		return string_part(r, w, from - (uint64_t)flen, len, o, depth + 1);
	}
	if ((type & l->repr_mask) == l->thin_tag) {
		if ((err = word(r, a + l->thin_actual, &w)))
			return err;
		return string_part(r, w, from, len, o, depth + 1);
	}
	if ((type & l->repr_mask) == l->sliced_tag) {
		uint64_t off;

		if ((err = word(r, a + l->sliced_offset, &off)) ||
		    (err = word(r, a + l->sliced_parent, &w)))
			return err;
		if (!is_smi(r, off) || smi(r, off) < 0 || smi(r, off) > (int64_t)V8_STR_LEN_MAX)
			return -EINVAL;
		return string_part(r, w, from + (uint64_t)smi(r, off), len, o, depth + 1);
	}
	return -EINVAL; /* external strings: in the embedder's memory */
}

static int string_out(const struct rd *r, uint64_t v, struct out *o)
{
	const struct v8_layout *l = r->l;
	uint64_t a;
	unsigned type;
	int32_t slen;
	int err;

	if ((err = object(r, v, &a, &type)))
		return err;
	if (type >= l->first_nonstring)
		return -EINVAL;
	if ((err = r->fn(r->ctx, a + l->str_len, &slen, sizeof(slen))))
		return err;
	if (slen < 0)
		return -EINVAL;
	return string_part(r, v, 0, (uint64_t)slen, o, 0);
}

int v8reader__string(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t str,
		     char *buf, size_t size)
{
	struct rd r = { l, rd, ctx };
	struct out o = { buf, size, 0, 0 };
	int err;

	if (!size)
		return -EINVAL;
	err = string_out(&r, str, &o);
	buf[err ? 0 : o.n] = '\0';
	return err;
}

/* The function name a ScopeInfo keeps (its function variable's): *name
 * the String's tagged pointer, 0 when the function has none. */
static int scope_info_name(const struct rd *r, uint64_t si, uint64_t *name)
{
	const struct v8_layout *l = r->l;
	uint64_t flags, count, slot;
	int64_t n;
	int err;

	if ((err = word(r, si + l->map + 8, &flags)) ||
	    (err = word(r, si + l->map + 8 + 8ull * l->si_ncontextlocals, &count)))
		return err;
	if (!is_smi(r, flags) || !is_smi(r, count))
		return -EINVAL;
	n = smi(r, count);
	if (n < 0 || n > V8_SI_LOCALS_MAX)
		return -EINVAL;
	if ((((uint64_t)smi(r, flags) >> V8_SI_FUNCTION_VAR_SHIFT) & 3) == 0) {
		*name = 0;
		return 0;
	}
	/* the local names (or their hash table), their infos, the saved
	 * class variable, then the function variable's name */
	slot = l->si_first_vars + (n < V8_SI_INLINE_NAMES ? (uint64_t)n : 1) + (uint64_t)n;
	if ((uint64_t)smi(r, flags) & V8_SI_SAVED_CLASS_VAR)
		slot++;
	if ((err = word(r, si + l->map + 8 + 8 * slot, name)))
		return err;
	if (is_smi(r, *name)) { /* (Smi 0: no name) */
		if (*name)
			return -EINVAL;
		return 0;
	}
	return 0;
}

int v8reader__function_name(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fn,
			    char *buf, size_t size)
{
	struct rd r = { l, rd, ctx };
	struct out o = { buf, size, 0, 0 };
	uint64_t a, sfi, name, script, sname;
	unsigned type;
	int err;

	if (size < 16)
		return -EINVAL;
	/* "JS:" as V8's own perf map spells a JS function (--perf-basic-prof) */
	memcpy(buf, "JS:", 4);
	o.buf += 3;
	o.size -= 3;
	if ((err = object(&r, fn, &a, &type)))
		return err;
	if (type != l->t_function)
		return -EINVAL;
	if ((err = word(&r, a + l->fn_shared, &sfi)) || (err = object(&r, sfi, &a, &type)))
		return err;
	if (type != l->t_sfi)
		return -EINVAL;
	if ((err = word(&r, a + l->sfi_name, &name)) ||
	    (err = word(&r, a + l->sfi_script, &script)))
		return err;
	if (is_heap(&r, name)) {
		uint64_t na;

		if ((err = object(&r, name, &na, &type)))
			return err;
		if (type == l->t_scope_info && (err = scope_info_name(&r, na, &name)))
			return err;
		else if (type != l->t_scope_info && type >= l->first_nonstring)
			return -EINVAL;
	} else if (name) {
		return -EINVAL; /* (Smi 0: no shared name) */
	}
	if (name && (err = string_out(&r, name, &o)))
		return err;
	if (!o.n) {
		static const char anon[] = "(anonymous)";

		memcpy(o.buf, anon, sizeof(anon));
		o.n = sizeof(anon) - 1;
	}
	/* the script's name, when it has one (not a DebugInfo, a String) */
	if (o.n + 2 < o.size && !object(&r, script, &a, &type) && type == l->t_script &&
	    !word(&r, a + l->script_name, &sname)) {
		struct out so = { o.buf + o.n + 1, o.size - o.n - 1, 0, 0 };

		if (!string_out(&r, sname, &so) && so.n) {
			o.buf[o.n] = ' ';
			o.n += 1 + so.n;
		}
	}
	o.buf[o.n] = '\0';
	return 0;
}

/* Whether the bytecode of SharedFunctionInfo sfi (its untagged address)
 * is BytecodeArray ba (tagged): its function data is ba, or the
 * InterpreterData or baseline Code holding it. */
static int sfi_has_bytecode(const struct rd *r, uint64_t sfi, uint64_t ba)
{
	const struct v8_layout *l = r->l;
	uint64_t data, a, inner;
	unsigned type;
	int err;

	if ((err = word(r, sfi + l->sfi_data, &data)))
		return err;
	if (data == ba)
		return 0;
	if ((err = object(r, data, &a, &type)))
		return err;
	/* (InterpreterData's fields are not in the layout: its type only) */
	if (type == l->t_interp_data)
		return 0;
	if (type != l->t_code)
		return -EINVAL;
	if ((err = word(r, a + l->code_bytecode, &inner)))
		return err;
	if (inner == ba)
		return 0;
	if ((err = object(r, inner, &a, &type)))
		return err;
	return type == l->t_interp_data ? 0 : -EINVAL;
}

int v8reader__interp_frame(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fp,
			   uint64_t *fn, int32_t *offset)
{
	struct v8_interp in;
	int err;

	if ((err = v8reader__interp(l, rd, ctx, fp, &in)))
		return err;
	*fn = in.fn;
	*offset = in.offset;
	return 0;
}

int v8reader__interp(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fp,
		     struct v8_interp *out)
{
	struct rd r = { l, rd, ctx };
	uint64_t cx, f, ba, off, a, sfi, len;
	unsigned type;
	int64_t o;
	int err;

	if (!l->has_interp)
		return -ENOENT;
	if (fp < 4096 || fp % 8 || fp > UINT64_MAX - 4096)
		return -EINVAL;
	if ((err = word(&r, fp + (uint64_t)l->fp_context, &cx)) ||
	    (err = word(&r, fp + (uint64_t)l->fp_function, &f)) ||
	    (err = word(&r, fp + (uint64_t)l->fp_bytecode_array, &ba)) ||
	    (err = word(&r, fp + (uint64_t)l->fp_bytecode_offset, &off)))
		return err;
	/* (a typed frame's marker, a Smi, where a JS frame has its context) */
	if (!is_heap(&r, cx) || !is_smi(&r, off))
		return -EINVAL;
	if ((err = object(&r, ba, &a, &type)))
		return err;
	if (type != l->t_bytecode)
		return -EINVAL;
	if ((err = word(&r, a + l->array_len, &len)))
		return err;
	if (!is_smi(&r, len) || smi(&r, len) < 0 || smi(&r, len) > (int64_t)V8_STR_LEN_MAX)
		return -EINVAL;
	/* the offset slot: header-relative, from the tagged pointer */
	o = smi(&r, off) - ((int64_t)l->bytecode_data - (int64_t)l->heap_tag);
	if (o < -1 || o >= smi(&r, len))
		return -EINVAL;
	if ((err = object(&r, f, &a, &type)))
		return err;
	if (type != l->t_function)
		return -EINVAL;
	if ((err = word(&r, a + l->fn_shared, &sfi)) || (err = object(&r, sfi, &a, &type)))
		return err;
	if (type != l->t_sfi)
		return -EINVAL;
	if ((err = sfi_has_bytecode(&r, a, ba)))
		return err;
	out->fn = f;
	out->offset = (int32_t)o;
	out->bytecode = ba;
	out->length = (uint32_t)smi(&r, len);
	return 0;
}
