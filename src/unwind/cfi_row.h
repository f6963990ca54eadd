/* SPDX-License-Identifier: MIT */
/*
 * One DWARF row -> one SFrame row (x86-64), as cfi_row.c compiles it and
 * the table builder (cfi_sframe.c) uses it. Private to src/unwind/.
 */
#ifndef SFPROF_CFI_ROW_H
#define SFPROF_CFI_ROW_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/cfi_int.h"

#define REG_FP SFRAME_REG_AMD64_BP
#define REG_SP SFRAME_REG_AMD64_SP
#define REG_RA SFRAME_REG_AMD64_RA

/* The x86-64 PLT CFA expression, decoded (see expr_plt in cfi_row.c). */
struct plt_shape {
	int64_t base;	  /* CFA = sp + base ...          */
	unsigned rep;	  /* ... + add when pc % rep >= at */
	unsigned at, add;
};

enum { ROW_NORMAL = 0, ROW_PLT = 1 };

static inline struct sframe_rule rule(uint8_t kind, uint64_t reg, int64_t off)
{
	return (struct sframe_rule){ .kind = kind, .reg = (uint8_t)reg,
				     .off = (int32_t)off };
}

/*
 * Convert g into *out. Returns ROW_NORMAL or ROW_PLT (with *ps), and sets
 * *nr to a CFI_NR_* reason (out all NO_RULE) or -1.
 */
int cfi_row__convert(const struct cfi_fde_info *fde, const struct cfi_regs *g,
		     struct sframe_row *out, struct plt_shape *ps, int *nr);

/* True when r needs SFrame v3's flexible FDEs. */
bool cfi_row__is_flex(const struct sframe_row *r);
/* True when a rule of r is a DWARF expression (only derived tables). */
bool cfi_row__has_expr(const struct sframe_row *r);

#endif
