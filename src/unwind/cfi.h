/* SPDX-License-Identifier: MIT */
/*
 * cfi: derive SFrame tables from DWARF call frame information.
 *
 * A binary without .sframe still has .eh_frame (and, in separate debug
 * files, .debug_frame). This module interprets that CFI (CIEs, FDEs, every
 * pointer encoding and row instruction) and turns the rows SFrame can
 * express into SFrame rows, so the unwinder reads one format only.
 *
 * Pure code: bytes in, an SFrame section out. No I/O, no global state;
 * every call is reentrant (the dso cache calls it once per binary). Every
 * byte of the input is hostile: malformed CFI is rejected per FDE, with
 * the reason counted in struct cfi_stats, never a crash.
 *
 * x86-64 only (SFRAME_ABI_AMD64_LE); other ABIs return -EOPNOTSUPP.
 */
#ifndef SFPROF_CFI_H
#define SFPROF_CFI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "unwind/sframe.h"

/*
 * PLT sections. Their rows are known from the linker's stub layout, so
 * sections no FDE covers get them synthesized.
 *  LAZY    .plt: PLT0 (16 bytes: CFA sp+16, sp+24 after its push) then
 *          16-byte entries (CFA sp+8, sp+16 from offset 11: after the push)
 *  DIRECT  .plt.sec / .plt.got: every entry is a jump, CFA sp+8 throughout
 *  UNKNOWN nothing is synthesized (the default of a zeroed struct: a wrong
 *          guess would be worse than no rows)
 */
enum cfi_plt_kind {
	CFI_PLT_UNKNOWN = 0,
	CFI_PLT_LAZY,
	CFI_PLT_LAZY_IBT, /* .plt beside .plt.sec: endbr64 first, sp+16 from 9 */
	CFI_PLT_DIRECT,
};

struct cfi_plt {
	uint64_t vaddr, size;
	uint32_t entsize; /* 0: 16 */
	uint32_t kind;	  /* enum cfi_plt_kind */
};

/*
 * What to convert. The byte buffers are borrowed for the call only. Any
 * of them may be NULL/0. Addresses are ELF virtual addresses (the address
 * space the result's functions use).
 */
struct cfi_input {
	const uint8_t *eh_frame;
	size_t eh_frame_len;
	uint64_t eh_frame_vaddr; /* base of DW_EH_PE_pcrel in .eh_frame */
	const uint8_t *debug_frame; /* may be NULL */
	size_t debug_frame_len;
	const uint8_t *eh_frame_hdr; /* may be NULL; not needed */
	size_t eh_frame_hdr_len;
	uint64_t eh_frame_hdr_vaddr;
	uint64_t got_vaddr;  /* DW_EH_PE_datarel base, 0 if unknown */
	uint64_t text_vaddr; /* DW_EH_PE_textrel base, 0 if unknown */
	struct cfi_plt plt[4]; /* .plt/.plt.sec/.plt.got */
	int nr_plt;
};

/* Why an FDE (or a CIE and every FDE that uses it) was rejected. */
enum cfi_reject {
	CFI_REJ_TRUNCATED,	/* entry or field past the end of its entry */
	CFI_REJ_LENGTH,		/* entry length past the end of the section */
	CFI_REJ_CIE_POINTER,	/* FDE's CIE pointer names no CIE */
	CFI_REJ_CIE_VERSION,	/* unsupported CIE version */
	CFI_REJ_AUGMENTATION,	/* unknown augmentation without 'z' */
	CFI_REJ_ENCODING,	/* unknown or unusable pointer encoding */
	CFI_REJ_POINTER,	/* pointer needs a base we do not have (indirect, textrel/datarel at 0) */
	CFI_REJ_RANGE,		/* pc range wraps or is over 4 GiB */
	CFI_REJ_OPCODE,		/* unknown or misplaced CFA instruction */
	CFI_REJ_LOCATION,	/* location moves backwards or past the FDE */
	CFI_REJ_STATE_STACK,	/* remember_state too deep / restore_state empty */
	CFI_REJ_CFA,		/* def_cfa_offset/register on an expression CFA */
	CFI_REJ_ROWS,		/* absurd number of rows */
	CFI_REJ__COUNT
};

/* Why a row became NO_RULE (its range left for the unwinder's fallback). */
enum cfi_norule {
	CFI_NR_CFA_UNDEFINED,	/* no CFA rule at all */
	CFI_NR_CFA_EXPRESSION,	/* DW_CFA_def_cfa_expression of an unknown shape */
	CFI_NR_CFA_REGISTER,	/* CFA from a register SFrame cannot name */
	CFI_NR_OFFSET_RANGE,	/* offset does not fit 32 bits */
	CFI_NR_RA_COLUMN,	/* return address column is not rip (16) */
	CFI_NR_RA_OFFSET,	/* RA saved at a CFA offset past 32 bits */
	CFI_NR_RA_RULE,		/* RA by a value rule, other expression, high register */
	CFI_NR_FP_RULE,		/* rbp by a value rule, other expression, high register */
	CFI_NR_PLT_ALIGN,	/* PLT expression on a misaligned range */
	CFI_NR_NEEDS_V3,	/* flexible rule, but SFrame v2 was asked for */
	CFI_NR__COUNT
};

struct cfi_stats {
	uint64_t eh_frame_bytes, debug_frame_bytes;
	uint64_t cies;		 /* CIEs parsed */
	uint64_t fdes;		 /* FDEs seen */
	uint64_t fdes_converted; /* FDEs that became functions */
	uint64_t fdes_rejected;	 /* sum of reject[] */
	uint64_t fdes_empty;	 /* zero pc range: nothing to cover */
	uint64_t funcs;		 /* SFrame functions written */
	uint64_t funcs_overlap;	 /* dropped: overlapped a function before it */
	uint64_t funcs_far;	 /* dropped by cfi_to_sframe: over 1.75 GiB from
				    opts->section_vaddr, past SFrame's 32-bit
				    PC-relative function starts */
	uint64_t rows;		 /* rows derived (NO_RULE rows included) */
	uint64_t rows_flex;	 /* rows that need v3 flexible FDEs */
	uint64_t rows_expr;	 /* rows with a DWARF expression rule (dwexpr.h) */
	uint64_t rows_no_rule;	 /* sum of no_rule[] */
	uint64_t rows_ra_undefined; /* outermost-frame rows */
	uint64_t pcmask_funcs;	 /* PLT expressions turned into PCMASK FDEs */
	uint64_t plt_synthesized; /* PLT sections without CFI given known rows */
	uint64_t signal_funcs;	 /* CIE augmentation 'S' */
	uint64_t reject[CFI_REJ__COUNT];
	uint64_t no_rule[CFI_NR__COUNT];
};

/* Counter names as cfi_stats__print writes them. */
const char *cfi_reject__name(int reason);
const char *cfi_norule__name(int reason);

/* "name: value" lines, one per counter (zero reasons omitted). */
void cfi_stats__print(const struct cfi_stats *st, FILE *f);

/*
 * The derived rows, before encoding: one sframe_func per covered range
 * (sorted by start, non-overlapping), its num_rows rows following each
 * other in rows[]. NO_RULE rows are kept (all three rules NO_RULE).
 * Owned by the caller: release with cfi_table__release().
 */
struct cfi_table {
	struct sframe_func *funcs;
	size_t nr_funcs;
	struct sframe_row *rows;
	size_t nr_rows;
};

/*
 * Interpret the CFI of `in` into *out. `stats` may be NULL; when given it
 * is zeroed first and filled. Returns 0 (possibly with zero functions),
 * -EINVAL on bad arguments, -ENOMEM.
 */
int cfi_derive(const struct cfi_input *in, struct cfi_table *out,
	       struct cfi_stats *stats);
void cfi_table__release(struct cfi_table *t); /* NULL is a no-op */

/*
 * cfi_derive + sframe_encode: an SFrame section (opts->version, normally 3)
 * in a malloc()ed *out of *out_len bytes that the caller owns (typically
 * handed to sframe_table__new_owned(*out, *out_len, opts->section_vaddr)).
 * opts->section_vaddr should be near the code (e.g. in.eh_frame_vaddr):
 * functions too far from it for SFrame's 32-bit PC-relative starts are
 * dropped (counted in funcs_far), not encoded wrong.
 * With opts->version 2, rows that need v3's flexible FDEs become NO_RULE
 * (counted as no_rule_needs_v3), so the conversion still succeeds.
 * Returns 0, -EINVAL, -ENOMEM, -EOPNOTSUPP (ABI not AMD64), -ENOENT (no
 * function could be derived), or an sframe_encode() error.
 */
int cfi_to_sframe(const struct cfi_input *in,
		  const struct sframe_encode_opts *opts, void **out,
		  size_t *out_len, struct cfi_stats *stats);

/*
 * Fill *in from an ELF file opened with libelf: .eh_frame, .debug_frame
 * (decompressed when SHF_COMPRESSED), .eh_frame_hdr, .got, .text and the
 * PLT sections with their kinds. Pointers point into libelf's data for
 * `e` and live as long as `e`. Returns 0, -EINVAL (not an ELF we read),
 * -ENOENT (no CFI section at all).
 */
typedef struct Elf Elf;
int cfi_input_from_elf(Elf *e, struct cfi_input *in);

/*
 * One register's rule at one address, from the FDE that covers it (found
 * through .eh_frame_hdr's search table where there is one, else by a scan
 * of .eh_frame, then .debug_frame): what the unwinder needs where a row
 * takes the CFA or the return address from a callee-saved register that
 * SFrame rows do not describe (ld.so's _dl_runtime_resolve: CFA = rbx+N),
 * for each frame below it (dwarf register numbers; pc an ELF vaddr).
 */
enum cfi_reg_rule_kind {
	CFI_REG_SAME,	  /* unchanged by this frame (no rule, same value) */
	CFI_REG_AT_CFA,	  /* saved at CFA + off */
	CFI_REG_CFA_PLUS, /* value is CFA + off */
	CFI_REG_OTHER,	  /* any other rule: not known past this frame */
};

struct cfi_reg_rule {
	int kind;
	int64_t off;
};

/* 0 with *out, -ENOENT (no FDE covers pc), -ENOMEM, or another -errno. */
int cfi__reg_rule(const struct cfi_input *in, uint64_t pc, unsigned reg,
		  struct cfi_reg_rule *out);

#endif
