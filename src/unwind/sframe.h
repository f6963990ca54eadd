/* SPDX-License-Identifier: MIT */
/*
 * SFrame: decode (v1, v2, v3), look up, encode and dump .sframe sections.
 *
 * Pure code: bytes in, results out, no I/O except the dump, which writes
 * to a caller's FILE. Every section is hostile input: every count, offset
 * and length is checked against the section's bounds before use.
 *
 * One in-memory row format (struct sframe_row) serves every version and
 * also the tables derived from .eh_frame (cfi.h), so the unwinder reads
 * exactly one thing.
 *
 * sframe_table__new() validates the whole section once and decodes it
 * into flat arrays (function starts, descriptors, rows: about 60 bytes per
 * function and 36 per row), so the lookup does no parsing and no bounds
 * checks; it is a bucketed binary search over the functions, then over the
 * function's rows. The section bytes are still borrowed (the dump prints
 * them as stored). A table is immutable: concurrent lookups are safe.
 */
#ifndef SFPROF_SFRAME_H
#define SFPROF_SFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ABI/arch identifiers (sframe_header.sfh_abi_arch). */
enum {
	SFRAME_ABI_AARCH64_BE = 1,
	SFRAME_ABI_AARCH64_LE = 2,
	SFRAME_ABI_AMD64_LE = 3,
	SFRAME_ABI_S390X_BE = 4,
};

/* DWARF register numbers used by rules on AMD64. */
enum {
	SFRAME_REG_AMD64_BP = 6,
	SFRAME_REG_AMD64_SP = 7,
	SFRAME_REG_AMD64_RA = 16,
};

/*
 * How one value (CFA, RA or FP) is recovered in a row.
 *  NONE      the row says nothing: FP unchanged (callee did not save it);
 *            for RA, only on ABIs where RA lives in a register.
 *  CFA_DEREF value = *(CFA + off)                 (default FDEs: RA, FP)
 *  REG       value = reg + off                    (CFA = SP/FP + off)
 *  REG_DEREF value = *(reg + off)                 (v3 flexible only)
 *  UNDEFINED RA undefined: this is the outermost frame
 *  VAL_EXPR  value = what DWARF expression number `off` computes
 *  EXPR      value = *(what DWARF expression number `off` computes)
 *            (dwexpr.h; RA and FP with the CFA pushed first): only in
 *            tables sfprof derives from .eh_frame, where SFrame has no
 *            way to say them (OpenSSL's CFA = *(rsp+40)+8)
 *  NO_RULE   the source could not express this here (derived tables;
 *            also a v3 flexible rule "value = CFA + off", which has no
 *            kind here): the unwinder must fall back (frame pointer) or stop
 *
 * An "RA undefined" row (outermost frame) decodes as ra = UNDEFINED with
 * cfa and fp NONE. AMD64 default rows decode RA as CFA_DEREF(fixed RA
 * offset, -8); AArch64 rows without an RA slot as RA NONE (still in LR).
 */
enum sframe_rule_kind {
	SFRAME_RULE_NONE = 0,
	SFRAME_RULE_CFA_DEREF,
	SFRAME_RULE_REG,
	SFRAME_RULE_REG_DEREF,
	SFRAME_RULE_UNDEFINED,
	SFRAME_RULE_NO_RULE,
	SFRAME_RULE_VAL_EXPR,
	SFRAME_RULE_EXPR,
};

struct sframe_rule {
	uint8_t kind; /* enum sframe_rule_kind */
	uint8_t reg;  /* DWARF register number, for REG and REG_DEREF */
	uint16_t pad;
	int32_t off;
};

/* A rule by value (pad zeroed). */
static inline struct sframe_rule sframe_rule__make(unsigned kind, unsigned reg,
						   int32_t off)
{
	return (struct sframe_rule){ .kind = (uint8_t)kind, .reg = (uint8_t)reg,
				     .off = off };
}

/* sframe_row.flags */
enum {
	SFRAME_ROW_MANGLED_RA = 1u << 0, /* AArch64 PAC-signed RA (B key: see func) */
	/* never encoded: a lookup's answer for a function that switches
	 * stacks (goruntime.h); the walk ends there, truncated */
	SFRAME_ROW_STACK_SWITCH = 1u << 1,
	/* never encoded: the return address this row finds is no call's but
	 * the PC a signal interrupted (Go's asyncPreempt, goruntime.h): the
	 * caller's row is looked up at it, not at it - 1 */
	SFRAME_ROW_EXACT_RA = 1u << 2,
};

/*
 * One frame row entry (FRE). `start` is the row's first PC as an offset
 * from its function's start (PCINC FDEs), or from the start of the
 * repeating block (PCMASK FDEs: the row applies where (pc % rep_size) >=
 * start).
 */
struct sframe_row {
	uint32_t start;
	uint32_t flags;
	struct sframe_rule cfa; /* REG (or REG_DEREF in flexible FDEs) */
	struct sframe_rule ra;
	struct sframe_rule fp;
};

/* sframe_func.pc_type */
enum { SFRAME_PC_INC = 0, SFRAME_PC_MASK = 1 };

/* sframe_func.flags */
enum {
	SFRAME_FUNC_SIGNAL = 1u << 0,  /* v3 signal frame (e.g. __restore_rt) */
	SFRAME_FUNC_FLEX = 1u << 1,    /* v3 flexible FDE */
	SFRAME_FUNC_PAUTH_B = 1u << 2, /* AArch64 B key */
};

/* One function descriptor, decoded. */
struct sframe_func {
	uint64_t start; /* virtual address, in the section's address space */
	uint32_t size;
	uint32_t num_rows;
	uint8_t pc_type;  /* SFRAME_PC_INC or SFRAME_PC_MASK */
	uint8_t rep_size; /* PCMASK block size in bytes */
	uint8_t flags;
	uint8_t pad;
};

/* Errors (negative returns). -ENOMEM and -ENOENT are used as well. */
enum sframe_error {
	SFRAME_E_TRUNCATED = 1000, /* header or sub-section past the end */
	SFRAME_E_MAGIC,		   /* bad magic */
	SFRAME_E_VERSION,	   /* unsupported version */
	SFRAME_E_ABI,		   /* unknown ABI/arch */
	SFRAME_E_HEADER,	   /* inconsistent header fields */
	SFRAME_E_FDE,		   /* malformed function descriptor */
	SFRAME_E_FRE,		   /* malformed frame row */
	SFRAME_E_UNSORTED,	   /* FREs not ascending, or FDEs flagged
				      sorted and not sorted */
	SFRAME_E_OVERLAP,	   /* sub-sections or functions overlap */
	SFRAME_E_COUNT,		   /* absurd count */
	SFRAME_E_EMPTY,		   /* zero-length section */
};

/* A human-readable reason for a negative return of this module. */
const char *sframe_strerror(int err);

struct sframe_table;

/*
 * Validate and index a section. `data` must stay valid and unchanged for
 * the table's life (it is not copied; the table borrows it). `section_vaddr`
 * is the section's virtual address in its ELF file (function starts are
 * relative to it, or to the FDE field itself with the PCREL flag).
 * Returns 0 and *out, or a negative error (sframe_strerror()): a
 * zero-length section is -SFRAME_E_EMPTY; on error *out is NULL.
 * An unsorted function index (SFRAME_F_FDE_SORTED clear) gets a sorted
 * index built here, once; one that claims to be sorted and is not is
 * rejected (-SFRAME_E_UNSORTED), as are overlapping functions.
 */
int sframe_table__new(const void *data, size_t len, uint64_t section_vaddr,
		      struct sframe_table **out);
/* Same, but the table owns `data` and free()s it in sframe_table__free(),
 * or here when this fails. */
int sframe_table__new_owned(void *data, size_t len, uint64_t section_vaddr,
			    struct sframe_table **out);
void sframe_table__free(struct sframe_table *t); /* NULL is a no-op */

/* Header facts, for the dump and the tests. */
int sframe_table__version(const struct sframe_table *t);
int sframe_table__abi(const struct sframe_table *t);
unsigned sframe_table__flags(const struct sframe_table *t);
int sframe_table__fixed_ra_offset(const struct sframe_table *t);
int sframe_table__fixed_fp_offset(const struct sframe_table *t);
size_t sframe_table__nr_funcs(const struct sframe_table *t);
size_t sframe_table__nr_rows(const struct sframe_table *t);

/* Function i, in ascending start order. 0 or -ENOENT. */
int sframe_table__func(const struct sframe_table *t, size_t i,
		       struct sframe_func *f);
/* Row j of function i. 0 or -ENOENT. */
int sframe_table__row(const struct sframe_table *t, size_t i, size_t j,
		      struct sframe_row *r);

/*
 * The hot path: the row that applies at `pc` (section address space).
 * Returns 0 with *row (and *func when non-NULL), -ENOENT when no function
 * covers pc, or -ESRCH when the function has no row for pc (pc before its
 * first row).
 */
int sframe_table__find(const struct sframe_table *t, uint64_t pc,
		       struct sframe_row *row, struct sframe_func *func);

/*
 * Print the table the way binutils `objdump --sframe` does (the header
 * block, the function index, one line per row), using the layout of the
 * binutils release that emits this version: v1 as 2.40, v2/v3 as 2.45+.
 * `name` is the file name objdump prints in its first line (with a file
 * format named after the ABI); NULL prints only from "Contents of the
 * SFrame section" on. Functions come in the order the section stores
 * them, as objdump prints them. 0, or -EIO when writing failed.
 */
int sframe_table__dump(const struct sframe_table *t, const char *name,
		       FILE *out);

/*
 * Encoder: write a valid section from functions and their rows.
 * funcs[i].num_rows rows for function i follow each other in `rows`.
 * `version` is 2 (written with SFRAME_F_FDE_FUNC_START_PCREL) or 3.
 * Functions need not be sorted; the output is sorted. On success *out is
 * a malloc()ed buffer of *out_len bytes that the caller frees.
 * Rows v2 cannot express (REG_DEREF, a CFA not from SP/FP) return -EINVAL;
 * v3 writes them as flexible FDEs. NO_RULE rows, in either version, end
 * the function's FDE: their PC range is left uncovered (the function is
 * split into several FDEs around it), so a lookup there returns -ENOENT
 * and the unwinder falls back. UNDEFINED RA rows are written as SFrame's
 * "RA undefined" FREs (no data words, in both versions).
 * ABIs: AMD64 and AArch64 (either endianness); s390x returns -EINVAL.
 * Also -EINVAL for overlapping functions, rows out of order or past the
 * function's size, and counts that do not add up; -ERANGE when a v2
 * function start is more than 2 GiB from the section. v3 functions with
 * more than 65535 rows are split into several FDEs.
 */
struct sframe_encode_opts {
	int version;		 /* 2 or 3 */
	int abi;		 /* SFRAME_ABI_* */
	int fixed_ra_offset;	 /* AMD64: -8 */
	int fixed_fp_offset;	 /* 0: none */
	uint64_t section_vaddr;	 /* address the section will be read at */
};
int sframe_encode(const struct sframe_encode_opts *opts,
		  const struct sframe_func *funcs, size_t nr_funcs,
		  const struct sframe_row *rows, size_t nr_rows, void **out,
		  size_t *out_len);

#endif
