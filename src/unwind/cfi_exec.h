/* SPDX-License-Identifier: MIT */
/*
 * The CFA instruction interpreter (cfi_exec.c) as the entry parser
 * (cfi_parse.c) drives it: a CIE's parsed header, and the state of one
 * run over a CIE's initial instructions or an FDE's. Private to
 * src/unwind/.
 */
#ifndef SFPROF_CFI_EXEC_H
#define SFPROF_CFI_EXEC_H

#include "unwind/cfi_read.h"

/* Deep enough for any compiler; DWARF sets no limit. */
#define STATE_STACK_MAX 32

struct cie {
	uint64_t off; /* offset of the CIE in its section */
	int rej;      /* 0, or REJ() reason every FDE using it gets */
	bool has_z, signal;
	uint8_t fde_enc, lsda_enc, addr_size;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_col;
	struct cfi_regs init; /* after the initial instructions */
};

/* The instruction interpreter's state for one CIE or FDE. */
struct exec {
	const struct sec *sec;
	const struct cie *cie;
	const struct cfi_regs *init; /* CIE state, for DW_CFA_restore; NULL in a CIE */
	struct cfi_regs cur;
	struct cfi_regs stack[STATE_STACK_MAX];
	int depth;
	uint64_t pc_begin, pc_range;
	uint64_t loc, row_start;
	uint32_t nrows;
	/*
	 * A row is written at an advance only when an instruction since the
	 * last one set the CFA, FP or RA rule, as gas's gen-sframe.c starts
	 * a new FRE only then; the last pending row is always written.
	 */
	bool dirty;
	/*
	 * gas restores rbp (DW_CFA_restore) to its rule in the function's
	 * first FRE, not in the CIE: they differ in split-off .cold parts,
	 * whose first row already has rbp saved. Done the same here, so the
	 * rows equal gas's; the slot gas points at still holds the value.
	 */
	bool have_first;
	struct cfi_reg_state first_fp;
	uint64_t xr_reg1; /* the register tracked in cur.xr, + 1; 0: none */
	const struct cfi_walk_ops *ops;
	void *ctx;
};

/*
 * Start x on an FDE covering [pc_begin, pc_begin + pc_range) of CIE c:
 * its rows go to ops->row(ctx, ...).
 */
void cfi_exec__begin_fde(struct exec *x, const struct sec *s,
			 const struct cie *c, uint64_t pc_begin,
			 uint64_t pc_range, const struct cfi_walk_ops *ops,
			 void *ctx);

/*
 * Run CFA instructions [p, end). A CIE's initial instructions run with
 * x zeroed but for sec, cie and pc_range (no rows; advancing is an
 * error). 0, REJ(reason) or a callback error.
 */
int cfi_exec__run(struct exec *x, const uint8_t *p, const uint8_t *end);

/* Write the pending row (the last one of an FDE is always written). */
int cfi_exec__emit(struct exec *x);

#endif
