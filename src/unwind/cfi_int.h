/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between the CFI walk (cfi_parse.c, cfi_exec.c) and the
 * SFrame conversion (cfi_row.c, cfi_sframe.c). Not installed, not a contract.
 */
#ifndef SFPROF_CFI_INT_H
#define SFPROF_CFI_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/cfi.h"

/* A register's rule in the DWARF sense (DWARF 5, section 6.4.1). */
enum cfi_rule {
	CFI_RULE_UNSET = 0, /* no rule given: same value, for callee-saved rbp */
	CFI_RULE_UNDEFINED,
	CFI_RULE_SAME,
	CFI_RULE_OFFSET,     /* saved at CFA + off */
	CFI_RULE_VAL_OFFSET, /* value is CFA + off */
	CFI_RULE_REGISTER,   /* value is in register `reg` */
	CFI_RULE_EXPR,	     /* saved at the address expr computes */
	CFI_RULE_VAL_EXPR,   /* value is what expr computes */
};

struct cfi_reg_state {
	uint8_t rule; /* enum cfi_rule */
	uint64_t reg;
	int64_t off;
	const uint8_t *expr; /* points into the input section */
	uint32_t expr_len;
};

enum { CFI_CFA_UNSET = 0, CFI_CFA_REG, CFI_CFA_EXPR };

struct cfi_cfa_state {
	uint8_t kind;
	uint64_t reg;
	int64_t off;
	const uint8_t *expr;
	uint32_t expr_len;
};

/* The part of a DWARF row an SFrame row can use, and one more register
 * a lookup asked for (cfi__reg_rule(); not tracked when deriving). */
struct cfi_regs {
	struct cfi_cfa_state cfa;
	struct cfi_reg_state fp; /* rbp, DWARF register 6 */
	struct cfi_reg_state ra; /* the CIE's return address column */
	struct cfi_reg_state xr; /* the register of exec.xr_reg1 - 1 */
};

struct cfi_fde_info {
	uint64_t pc_begin, pc_range;
	uint64_t ra_column;
	bool signal;
};

/*
 * Callbacks of cfi__walk, in order per FDE: begin, row* (ascending loc,
 * loc < pc_range), end(ok). After end(ok=false) the FDE's rows must be
 * dropped (its reason is already counted). A callback returning nonzero
 * (-ENOMEM) stops the walk with that value.
 */
struct cfi_walk_ops {
	int (*fde_begin)(void *ctx, const struct cfi_fde_info *fde);
	int (*row)(void *ctx, uint64_t loc, const struct cfi_regs *regs);
	int (*fde_end)(void *ctx, bool ok);
};

/* Walk .eh_frame then .debug_frame of `in`. 0 or the callbacks' error. */
int cfi__walk(const struct cfi_input *in, struct cfi_stats *st,
	      const struct cfi_walk_ops *ops, void *ctx);

/*
 * LEB128 readers shared by the CFI parser and the expression matcher:
 * advance *p, never past end; false when truncated or when the value has
 * significant bits beyond 64 (no producer emits those, and truncating
 * them would let a crafted register number alias a real one).
 */
static inline bool cfi__uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64) {
			if (shift == 63 && (b & 0x7e))
				return false;
			x |= (uint64_t)(b & 0x7f) << shift;
		} else if (b & 0x7f) {
			return false;
		}
		shift += 7;
	} while (b & 0x80);
	*v = x;
	return true;
}

static inline bool cfi__sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		x |= ~(uint64_t)0 << shift;
	*v = (int64_t)x;
	return true;
}

#endif
