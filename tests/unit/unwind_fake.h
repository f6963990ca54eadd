// SPDX-License-Identifier: MIT
/*
 * The unwinder tests' fixture (test_unwind.c, test_unwind_rules.c): a
 * hand-built snapshot at BASE, hand-made rows looked up by PC range, and
 * a walk into FR[].
 */
#ifndef SFPROF_TEST_UNWIND_FAKE_H
#define SFPROF_TEST_UNWIND_FAKE_H

#include <errno.h>
#include <string.h>

#include "testlib.h"
#include "unwind/unwind.h"

#define BASE 0x7ffd0000ull /* SP of the snapshot */

struct range {
	uint64_t lo, hi; /* [lo, hi) */
	int rc;		 /* 0, -ENOENT, -ESRCH */
	struct sframe_row row;
	uint8_t func_flags;
};

struct fake {
	uint8_t mem[16384];
	size_t len;
	struct range r[16];
	int nr;
	uint64_t lookups[64];
	int nlookups;
	uint64_t sigtramp; /* is_sigtramp() answers yes here */
	int sigtramp_asked;
};

static struct fake F __attribute__((unused));

static inline void fake_reset(size_t len)
{
	memset(&F, 0, sizeof(F));
	F.len = len;
}

static inline void put(uint64_t addr, uint64_t val)
{
	if (addr < BASE || addr + 8 > BASE + sizeof(F.mem))
		abort();
	memcpy(F.mem + (addr - BASE), &val, 8);
}

static inline struct sframe_rule R(int kind, int reg, int off)
{
	return (struct sframe_rule){ .kind = kind, .reg = reg, .off = off };
}

/* CFA = SP + cfa_off, RA at CFA-8, FP at CFA+fp_off (0: not saved). */
static inline void add_sp_row(uint64_t lo, uint64_t hi, int cfa_off, int fp_off)
{
	struct range *x = &F.r[F.nr++];
	x->lo = lo;
	x->hi = hi;
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, cfa_off);
	x->row.ra = R(SFRAME_RULE_CFA_DEREF, 0, -8);
	x->row.fp = fp_off ? R(SFRAME_RULE_CFA_DEREF, 0, fp_off)
			   : R(SFRAME_RULE_NONE, 0, 0);
}

static inline struct range *add_range(uint64_t lo, uint64_t hi, int rc)
{
	struct range *x = &F.r[F.nr++];
	x->lo = lo;
	x->hi = hi;
	x->rc = rc;
	return x;
}

/* the outermost function: RA undefined */
static inline void add_root(uint64_t lo, uint64_t hi)
{
	struct range *x = add_range(lo, hi, 0);
	x->row.cfa = R(SFRAME_RULE_REG, UNWIND_REG_RSP, 8);
	x->row.ra = R(SFRAME_RULE_UNDEFINED, 0, 0);
}

static inline int fake_find(void *ctx, uint64_t pc, struct sframe_row *row,
		     struct sframe_func *fn)
{
	(void)ctx;
	if (F.nlookups < 64)
		F.lookups[F.nlookups++] = pc;
	for (int i = 0; i < F.nr; i++) {
		if (pc >= F.r[i].lo && pc < F.r[i].hi) {
			if (F.r[i].rc)
				return F.r[i].rc;
			*row = F.r[i].row;
			fn->start = F.r[i].lo;
			fn->size = F.r[i].hi - F.r[i].lo;
			fn->flags = F.r[i].func_flags;
			return 0;
		}
	}
	return -ENOENT;
}

static inline bool fake_sigtramp(void *ctx, uint64_t pc)
{
	(void)ctx;
	F.sigtramp_asked++;
	return F.sigtramp && pc == F.sigtramp;
}

static const struct unwind_ops OPS __attribute__((unused)) = { fake_find, fake_sigtramp, NULL };

static inline struct sfprof_regs regs_at(uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct sfprof_regs r;
	memset(&r, 0, sizeof(r));
	r.ip = ip;
	r.sp = sp;
	r.bp = bp;
	return r;
}

static struct unwind_frame FR[512] __attribute__((unused));

static inline size_t walk(struct sfprof_regs *r, int *stop)
{
	return unwind_stack(r, F.mem, F.len, &OPS, FR, 512, stop, NULL, NULL);
}

/* main@0x3000 -> mid@0x2000 -> leaf@0x1000 with SP-based rows */
static inline void build_three_frames(void)
{
	fake_reset(4096);
	add_sp_row(0x1000, 0x1100, 16, 0); /* leaf: CFA = SP+16 */
	add_sp_row(0x2000, 0x2100, 32, 0); /* mid:  CFA = SP+32 */
	add_root(0x3000, 0x3100);
	/* leaf frame: SP=BASE, CFA=BASE+16, RA at BASE+8 */
	put(BASE + 8, 0x2050);
	/* mid: SP=BASE+16, CFA=BASE+48, RA at BASE+40 */
	put(BASE + 40, 0x3020);
}


#endif
