// SPDX-License-Identifier: MIT
/*
 * DWARF expressions of CFI: the bounded evaluator, the validity check and
 * the intern table (src/unwind/dwexpr.h). Operands are read with the
 * bounds-checked readers of cfi_read.h.
 */
#include "unwind/dwexpr.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_read.h"

/* DW_OP_* (DWARF 5, table 7.9): the ones CFI may use. */
enum {
	OP_addr = 0x03,
	OP_deref = 0x06,
	OP_const1u = 0x08,
	OP_const1s = 0x09,
	OP_const2u = 0x0a,
	OP_const2s = 0x0b,
	OP_const4u = 0x0c,
	OP_const4s = 0x0d,
	OP_const8u = 0x0e,
	OP_const8s = 0x0f,
	OP_constu = 0x10,
	OP_consts = 0x11,
	OP_dup = 0x12,
	OP_drop = 0x13,
	OP_over = 0x14,
	OP_pick = 0x15,
	OP_swap = 0x16,
	OP_rot = 0x17,
	OP_abs = 0x19,
	OP_and = 0x1a,
	OP_div = 0x1b,
	OP_minus = 0x1c,
	OP_mod = 0x1d,
	OP_mul = 0x1e,
	OP_neg = 0x1f,
	OP_not = 0x20,
	OP_or = 0x21,
	OP_plus = 0x22,
	OP_plus_uconst = 0x23,
	OP_shl = 0x24,
	OP_shr = 0x25,
	OP_shra = 0x26,
	OP_xor = 0x27,
	OP_bra = 0x28,
	OP_eq = 0x29,
	OP_ge = 0x2a,
	OP_gt = 0x2b,
	OP_le = 0x2c,
	OP_lt = 0x2d,
	OP_ne = 0x2e,
	OP_skip = 0x2f,
	OP_lit0 = 0x30,
	OP_lit31 = 0x4f,
	OP_breg0 = 0x70,
	OP_breg31 = 0x8f,
	OP_bregx = 0x92,
	OP_deref_size = 0x94,
	OP_nop = 0x96,
};

/* One operation's operands: false when truncated or unknown. */
struct op {
	uint8_t code;
	uint64_t u;   /* unsigned operand (constants, reg of bregx, sizes) */
	int64_t s;    /* signed operand (offsets, branch distances) */
};

static bool op_read(struct rd *r, struct op *o)
{
	uint8_t b;
	uint64_t u;

	if (!rd_u8(r, &o->code))
		return false;
	o->u = 0;
	o->s = 0;
	switch (o->code) {
	case OP_addr:
	case OP_const8u:
	case OP_const8s:
		return rd_uN(r, 8, &o->u);
	case OP_const1u:
	case OP_pick:
	case OP_deref_size:
		if (!rd_u8(r, &b))
			return false;
		o->u = b;
		return o->code != OP_deref_size || (b >= 1 && b <= 8);
	case OP_const1s:
		if (!rd_u8(r, &b))
			return false;
		o->u = (uint64_t)(int64_t)(int8_t)b;
		return true;
	case OP_const2u:
	case OP_const2s:
		if (!rd_uN(r, 2, &u))
			return false;
		o->u = o->code == OP_const2s ? (uint64_t)(int64_t)(int16_t)u : u;
		return true;
	case OP_const4u:
	case OP_const4s:
		if (!rd_uN(r, 4, &u))
			return false;
		o->u = o->code == OP_const4s ? (uint64_t)(int64_t)(int32_t)u : u;
		return true;
	case OP_constu:
	case OP_plus_uconst:
		return rd_uleb(r, &o->u);
	case OP_consts:
		if (!rd_sleb(r, &o->s))
			return false;
		o->u = (uint64_t)o->s;
		return true;
	case OP_bra:
	case OP_skip:
		if (!rd_uN(r, 2, &u))
			return false;
		o->s = (int16_t)u;
		return true;
	case OP_bregx:
		return rd_uleb(r, &o->u) && rd_sleb(r, &o->s);
	case OP_dup: case OP_drop: case OP_over: case OP_swap: case OP_rot:
	case OP_abs: case OP_and: case OP_div: case OP_minus: case OP_mod:
	case OP_mul: case OP_neg: case OP_not: case OP_or: case OP_plus:
	case OP_shl: case OP_shr: case OP_shra: case OP_xor: case OP_eq:
	case OP_ge: case OP_gt: case OP_le: case OP_lt: case OP_ne:
	case OP_deref: case OP_nop:
		return true;
	default:
		if (o->code >= OP_lit0 && o->code <= OP_lit31)
			return true;
		if (o->code >= OP_breg0 && o->code <= OP_breg31) {
			o->u = o->code - OP_breg0;
			return rd_sleb(r, &o->s);
		}
		return false;
	}
}

uint32_t dwexpr__regs(const uint8_t *e, size_t len)
{
	struct rd r = { e, e + len };
	uint32_t mask = 0;
	struct op o;

	while (e && r.p < r.end && op_read(&r, &o))
		if ((o.code == OP_bregx || (o.code >= OP_breg0 && o.code <= OP_breg31)) &&
		    o.u < DWEXPR_NR_REGS)
			mask |= 1u << o.u;
	return mask;
}

int dwexpr__valid(const uint8_t *e, size_t len)
{
	struct rd r = { e, e + len };
	uint8_t at[DWEXPR_LEN_MAX + 1] = { 0 }; /* operation starts */
	struct op o;

	if (!e || !len || len > DWEXPR_LEN_MAX)
		return 0;
	while (r.p < r.end) {
		at[r.p - e] = 1;
		if (!op_read(&r, &o))
			return 0;
	}
	at[len] = 1; /* a branch to the end ends the expression */
	r.p = e;
	while (r.p < r.end) {
		op_read(&r, &o);
		if (o.code == OP_bra || o.code == OP_skip) {
			int64_t to = (int64_t)(r.p - e) + o.s;

			if (to < 0 || to > (int64_t)len || !at[to])
				return 0;
		}
	}
	return 1;
}

/* Pop into *v: false when the stack is empty. */
#define POP(v)                              \
	do {                                \
		if (!n)                     \
			return -EINVAL;     \
		(v) = st[--n];              \
	} while (0)
#define PUSH(v)                             \
	do {                                \
		if (n >= DWEXPR_STACK)      \
			return -E2BIG;      \
		st[n++] = (v);              \
	} while (0)

static int reg_value(const struct dwexpr_env *env, uint64_t reg, uint64_t *v)
{
	if (reg >= DWEXPR_NR_REGS || !(env->known & (1u << reg)))
		return -ENOENT;
	*v = env->regs[reg];
	return 0;
}

/* A binary operation on (a = second, b = top). */
static int binop(uint8_t code, uint64_t a, uint64_t b, uint64_t *v)
{
	switch (code) {
	case OP_and: *v = a & b; return 0;
	case OP_or: *v = a | b; return 0;
	case OP_xor: *v = a ^ b; return 0;
	case OP_plus: *v = a + b; return 0;
	case OP_minus: *v = a - b; return 0;
	case OP_mul: *v = a * b; return 0;
	case OP_shl: *v = b >= 64 ? 0 : a << b; return 0;
	case OP_shr: *v = b >= 64 ? 0 : a >> b; return 0;
	case OP_shra:
		*v = (uint64_t)((int64_t)a >> (b >= 64 ? 63 : b));
		return 0;
	case OP_div:
		if (!b || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
			return -EINVAL;
		*v = (uint64_t)((int64_t)a / (int64_t)b);
		return 0;
	case OP_mod:
		if (!b)
			return -EINVAL;
		*v = a % b;
		return 0;
	case OP_eq: *v = a == b; return 0;
	case OP_ne: *v = a != b; return 0;
	case OP_ge: *v = (int64_t)a >= (int64_t)b; return 0;
	case OP_gt: *v = (int64_t)a > (int64_t)b; return 0;
	case OP_le: *v = (int64_t)a <= (int64_t)b; return 0;
	case OP_lt: *v = (int64_t)a < (int64_t)b; return 0;
	default: return -EINVAL;
	}
}

int dwexpr__eval(const uint8_t *e, size_t len, const struct dwexpr_env *env,
		 const uint64_t *push, uint64_t *out)
{
	uint64_t st[DWEXPR_STACK], a, b, c;
	struct rd r = { e, e + len };
	unsigned n = 0, steps = 0;
	struct op o;
	int err;

	if (!e || !len || len > DWEXPR_LEN_MAX)
		return -EINVAL;
	if (push)
		st[n++] = *push;
	while (r.p < r.end) {
		if (++steps > DWEXPR_STEPS)
			return -E2BIG;
		if (!op_read(&r, &o))
			return -EINVAL;
		switch (o.code) {
		case OP_nop:
			break;
		case OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case OP_drop:
			POP(a);
			break;
		case OP_over:
		case OP_pick:
			c = o.code == OP_over ? 1 : o.u;
			if (c >= n)
				return -EINVAL;
			a = st[n - 1 - c];
			PUSH(a);
			break;
		case OP_swap:
			POP(b);
			POP(a);
			PUSH(b);
			PUSH(a);
			break;
		case OP_rot: /* (a b c -> c a b, c the top) */
			POP(c);
			POP(b);
			POP(a);
			PUSH(c);
			PUSH(a);
			PUSH(b);
			break;
		case OP_deref:
		case OP_deref_size:
			POP(a);
			if (!env->read || env->read(env->ctx, a, &b))
				return -EFAULT;
			if (o.code == OP_deref_size && o.u < 8)
				b &= (1ull << (8 * o.u)) - 1;
			PUSH(b);
			break;
		case OP_abs:
			POP(a);
			PUSH((int64_t)a < 0 ? -a : a);
			break;
		case OP_neg:
			POP(a);
			PUSH(-a);
			break;
		case OP_not:
			POP(a);
			PUSH(~a);
			break;
		case OP_plus_uconst:
			POP(a);
			PUSH(a + o.u);
			break;
		case OP_skip:
		case OP_bra:
			if (o.code == OP_bra) {
				POP(a);
				if (!a)
					break;
			}
			/* (dwexpr__valid() checks targets; a bad one fails here) */
			if (o.s < e - r.p || o.s > r.end - r.p)
				return -EINVAL;
			r.p += o.s;
			break;
		case OP_bregx:
		default:
			if (o.code == OP_bregx ||
			    (o.code >= OP_breg0 && o.code <= OP_breg31)) {
				err = reg_value(env, o.u, &a);
				if (err)
					return err;
				PUSH(a + (uint64_t)o.s);
			} else if (o.code >= OP_lit0 && o.code <= OP_lit31) {
				PUSH((uint64_t)(o.code - OP_lit0));
			} else if (o.code == OP_addr || (o.code >= OP_const1u &&
							 o.code <= OP_consts)) {
				PUSH(o.u);
			} else {
				POP(b);
				POP(a);
				err = binop(o.code, a, b, &c);
				if (err)
					return err;
				PUSH(c);
			}
			break;
		}
	}
	if (!n)
		return -EINVAL;
	*out = st[n - 1];
	return 0;
}

/* ---- the intern table ------------------------------------------------ */

struct interned {
	uint8_t len;
	uint8_t bytes[DWEXPR_LEN_MAX];
};

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct interned **intern_v; /* [id - 1]; entries never move */
static uint32_t intern_nr, intern_cap;

uint32_t dwexpr__intern(const uint8_t *e, size_t len)
{
	uint32_t id = 0;

	if (!dwexpr__valid(e, len))
		return 0;
	pthread_mutex_lock(&intern_lock);
	/* (a linear search: a process has a few dozen distinct ones) */
	for (uint32_t i = 0; i < intern_nr; i++)
		if (intern_v[i]->len == len && !memcmp(intern_v[i]->bytes, e, len)) {
			id = i + 1;
			goto out;
		}
	if (intern_nr >= DWEXPR_INTERN_MAX)
		goto out;
	if (intern_nr == intern_cap) {
		uint32_t cap = intern_cap ? intern_cap * 2 : 64;
		struct interned **v = realloc(intern_v, cap * sizeof(*v));

		if (!v)
			goto out;
		intern_v = v;
		intern_cap = cap;
	}
	intern_v[intern_nr] = malloc(sizeof(struct interned));
	if (!intern_v[intern_nr])
		goto out;
	intern_v[intern_nr]->len = (uint8_t)len;
	memcpy(intern_v[intern_nr]->bytes, e, len);
	id = ++intern_nr;
out:
	pthread_mutex_unlock(&intern_lock);
	return id;
}

int dwexpr__get(uint32_t id, const uint8_t **e, size_t *len)
{
	int err = -ENOENT;

	pthread_mutex_lock(&intern_lock);
	if (id && id <= intern_nr) {
		*e = intern_v[id - 1]->bytes;
		*len = intern_v[id - 1]->len;
		err = 0;
	}
	pthread_mutex_unlock(&intern_lock);
	return err;
}

static const char *op_name(uint8_t code)
{
	static const char *const names[0x30] = {
		[OP_addr] = "addr", [OP_deref] = "deref", [OP_const1u] = "const1u",
		[OP_const1s] = "const1s", [OP_const2u] = "const2u", [OP_const2s] = "const2s",
		[OP_const4u] = "const4u", [OP_const4s] = "const4s", [OP_const8u] = "const8u",
		[OP_const8s] = "const8s", [OP_constu] = "constu", [OP_consts] = "consts",
		[OP_dup] = "dup", [OP_drop] = "drop", [OP_over] = "over", [OP_pick] = "pick",
		[OP_swap] = "swap", [OP_rot] = "rot", [OP_abs] = "abs", [OP_and] = "and",
		[OP_div] = "div", [OP_minus] = "minus", [OP_mod] = "mod", [OP_mul] = "mul",
		[OP_neg] = "neg", [OP_not] = "not", [OP_or] = "or", [OP_plus] = "plus",
		[OP_plus_uconst] = "plus_uconst", [OP_shl] = "shl", [OP_shr] = "shr",
		[OP_shra] = "shra", [OP_xor] = "xor", [OP_bra] = "bra", [OP_eq] = "eq",
		[OP_ge] = "ge", [OP_gt] = "gt", [OP_le] = "le", [OP_lt] = "lt",
		[OP_ne] = "ne", [OP_skip] = "skip",
	};

	if (code < 0x30 && names[code])
		return names[code];
	if (code == OP_deref_size)
		return "deref_size";
	if (code == OP_nop)
		return "nop";
	return NULL;
}

void dwexpr__format(const uint8_t *e, size_t len, char *buf, size_t size)
{
	struct rd r = { e, e + len };
	size_t pos = 0;
	struct op o;

	if (!size)
		return;
	buf[0] = 0;
	while (r.p < r.end && pos < size) {
		const char *sep = pos ? "; " : "";
		int k;

		if (!op_read(&r, &o)) {
			snprintf(buf + pos, size - pos, "%s?", sep);
			return;
		}
		if (o.code >= OP_lit0 && o.code <= OP_lit31)
			k = snprintf(buf + pos, size - pos, "%slit%d", sep, o.code - OP_lit0);
		else if (o.code >= OP_breg0 && o.code <= OP_breg31)
			k = snprintf(buf + pos, size - pos, "%sbreg%d %+lld", sep,
				     o.code - OP_breg0, (long long)o.s);
		else if (o.code == OP_bregx)
			k = snprintf(buf + pos, size - pos, "%sbregx %llu %+lld", sep,
				     (unsigned long long)o.u, (long long)o.s);
		else if (o.code == OP_bra || o.code == OP_skip)
			k = snprintf(buf + pos, size - pos, "%s%s %+lld", sep, op_name(o.code),
				     (long long)o.s);
		else if (o.code == OP_addr || (o.code >= OP_const1u && o.code <= OP_consts) ||
			 o.code == OP_plus_uconst || o.code == OP_pick ||
			 o.code == OP_deref_size)
			k = snprintf(buf + pos, size - pos, "%s%s %lld", sep, op_name(o.code),
				     (long long)o.u);
		else
			k = snprintf(buf + pos, size - pos, "%s%s", sep, op_name(o.code));
		if (k < 0)
			return;
		pos += (size_t)k;
	}
}
