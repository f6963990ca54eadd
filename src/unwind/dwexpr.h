/* SPDX-License-Identifier: MIT */
/*
 * DWARF expressions of call frame information (DWARF 5, 2.5 and 6.4.2):
 * DW_CFA_def_cfa_expression, DW_CFA_expression, DW_CFA_val_expression.
 *
 * The evaluator is a bounded stack machine: at most DWEXPR_STEPS
 * operations run (a backward DW_OP_skip loops no further), the stack holds
 * at most DWEXPR_STACK values, and every read of memory or of a register
 * goes through the caller (the unwinder: a word of the stack snapshot, a
 * register it knows in this frame). Only the operations CFI may use are
 * known (no DW_OP_call*, no DW_OP_push_object_address, no DW_OP_regN
 * locations, no TLS); anything else fails the evaluation, never guesses.
 *
 * Rows are plain values copied through tables, memos and encodings
 * (sframe.h), so an expression is named there by a number: the intern
 * table below gives one per distinct expression, for the life of the
 * process (compilers emit a few shapes: a binary has a few dozen at most;
 * DWEXPR_INTERN_MAX bounds them all). It is the one global state of the
 * unwinder, locked.
 */
#ifndef SFPROF_DWEXPR_H
#define SFPROF_DWEXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DWEXPR_STEPS 256
#define DWEXPR_STACK 32
#define DWEXPR_LEN_MAX 255	  /* longer expressions are not kept */
#define DWEXPR_INTERN_MAX 65536u /* distinct expressions, process-wide */
#define DWEXPR_NR_REGS 17	  /* DWARF x86-64 0..16: the GPRs and rip */

struct dwexpr_env {
	const uint64_t *regs; /* by DWARF number, DWEXPR_NR_REGS of them */
	uint32_t known;	      /* bit r: regs[r] holds register r */
	/* one 8-byte word at addr: 0, or nonzero (not readable) */
	int (*read)(void *ctx, uint64_t addr, uint64_t *val);
	void *ctx;
};

/*
 * Evaluate e[0..len) with `push` (when non-NULL) on the stack first (the
 * CFA, for DW_CFA_expression and DW_CFA_val_expression). 0 with *out the
 * top of the stack; -EINVAL (malformed, an unknown operation, an empty
 * stack, a division by zero), -ENOENT (a register not known), -EFAULT (a
 * read failed), -E2BIG (over DWEXPR_STEPS or DWEXPR_STACK).
 */
int dwexpr__eval(const uint8_t *e, size_t len, const struct dwexpr_env *env,
		 const uint64_t *push, uint64_t *out);

/* The registers e[0..len) reads (DW_OP_bregN, DW_OP_bregx), a bit each
 * (those below DWEXPR_NR_REGS). */
uint32_t dwexpr__regs(const uint8_t *e, size_t len);

/* Whether e[0..len) only uses known operations with in-bounds operands
 * and branch targets (what dwexpr__eval() can run). */
int dwexpr__valid(const uint8_t *e, size_t len);

/*
 * The number of expression e[0..len) (copied), the same for equal bytes:
 * 1 .. DWEXPR_INTERN_MAX, or 0 (not valid, too long, the table full, no
 * memory). dwexpr__get(): its bytes, 0 with *e and *len, or -ENOENT.
 */
uint32_t dwexpr__intern(const uint8_t *e, size_t len);
int dwexpr__get(uint32_t id, const uint8_t **e, size_t *len);

/* The expression as readelf spells its operations ("breg7 +40; deref;
 * plus_uconst 8"), into buf (always terminated). */
void dwexpr__format(const uint8_t *e, size_t len, char *buf, size_t size);

#endif
