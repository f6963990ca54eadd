/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the SFrame decoder (sframe.c), encoder
 * (sframe_encode.c) and dump (sframe_dump.c). Not a public interface.
 *
 * On-disk layout (binutils SFrame spec, versions 1 to 3):
 *   header (28 bytes) + auxiliary header (sfh_auxhdr_len bytes), then the
 *   FDE and FRE sub-sections at sfh_fdeoff / sfh_freoff from the end of
 *   the (auxiliary) header.
 *   v1 FDE 17 bytes: i32 start, u32 size, u32 fre_off, u32 num_fres, u8 info
 *   v2 FDE 20 bytes: v1 + u8 rep_size + u16 padding
 *   v3 FDE index 16 bytes: i64 start, u32 size, u32 fre_off; its attribute
 *      record (u16 num_fres, u8 info, u8 info2, u8 rep_size) opens the
 *      function's FRE data in the FRE sub-section.
 *   FRE: u8/u16/u32 start (per the FDE's fre_type), u8 info, then
 *      count x size data words (signed offsets; flexible FDEs: pairs of an
 *      unsigned control word and a signed offset).
 */
#ifndef SFPROF_SFRAME_INT_H
#define SFPROF_SFRAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/sframe.h"

#define SFRAME_MAGIC 0xdee2
#define SFRAME_HDR_LEN 28
#define SFRAME_V1_FDE_LEN 17
#define SFRAME_V2_FDE_LEN 20
#define SFRAME_V3_FDE_LEN 16
#define SFRAME_V3_ATTR_LEN 5

/* sfp_flags */
#define SFRAME_F_FDE_SORTED 0x1
#define SFRAME_F_FRAME_POINTER 0x2
#define SFRAME_F_FDE_FUNC_START_PCREL 0x4
/* Not SFrame's: a table sfprof derived whose flexible rules may name its
 * DWARF expressions (SFRAME_FLEX_EXPR_P). Never in a file. */
#define SFRAME_F_SFPROF_EXPR 0x80

/* FDE info byte: fre_type bits 0-3, pctype bit 4, pauth key bit 5,
 * signal bit 7 (v3). info2 (v3): fde_type bits 0-4. */
#define SFRAME_INFO_FRE_TYPE(i) ((i) & 0xf)
#define SFRAME_INFO_PCTYPE(i) (((i) >> 4) & 1)
#define SFRAME_INFO_PAUTH_B(i) (((i) >> 5) & 1)
#define SFRAME_INFO_SIGNAL(i) (((i) >> 7) & 1)
#define SFRAME_INFO2_FDE_TYPE(i) ((i) & 0x1f)
#define SFRAME_FDE_TYPE_DEFAULT 0
#define SFRAME_FDE_TYPE_FLEX 1

/* FRE info byte: base reg bit 0 (1 = SP), count bits 1-4, size bits 5-6,
 * mangled RA bit 7. */
#define SFRAME_FRE_BASE_SP(i) ((i) & 1)
#define SFRAME_FRE_COUNT(i) (((i) >> 1) & 0xf)
#define SFRAME_FRE_SIZE_CODE(i) (((i) >> 5) & 3)
#define SFRAME_FRE_MANGLED(i) (((i) >> 7) & 1)

/* Flexible FDE control word: reg_p bit 0, deref_p bit 1, regnum bits 3+. */
#define SFRAME_FLEX_REG_P(c) ((c) & 1)
#define SFRAME_FLEX_DEREF_P(c) (((c) >> 1) & 1)
#define SFRAME_FLEX_REGNUM(c) ((c) >> 3)
/*
 * Bit 2, reserved in SFrame v3, in sfprof's own derived tables only (a
 * table it encoded, never a file's .sframe): the rule is DWARF expression
 * number REGNUM (dwexpr.h), its value dereferenced when deref_p.
 */
#define SFRAME_FLEX_EXPR_P(c) (((c) >> 2) & 1)

/* s390x default FDEs (v2): CFA offsets are stored scaled and adjusted; an
 * odd RA/FP offset encodes a DWARF register number. */
#define SFRAME_S390X_CFA_ADJ (-160)
#define SFRAME_S390X_CFA_ALIGN 8

/* One FDE as stored, in file order. */
struct sframe_fde_raw {
	uint64_t start;	   /* virtual address */
	uint32_t size;
	uint32_t nfres;
	uint32_t fre_pos;  /* section offset of the first FRE */
	uint32_t row0;	   /* index of its first row in table->rows */
	uint8_t info;
	uint8_t info2;	   /* v3 only, else 0 */
	uint8_t rep_size;
	uint8_t pad;
};

/* One FDE in ascending start order: what the lookup touches. */
struct sframe_fn {
	uint32_t size;
	uint32_t row0;
	uint32_t nrows;
	uint8_t pc_type;
	uint8_t rep_size;
	uint8_t flags; /* SFRAME_FUNC_* */
	uint8_t pad;
};

struct sframe_table {
	const uint8_t *data;
	size_t len;
	void *owned;
	uint64_t vaddr;
	size_t hdr_len; /* header + auxiliary header */
	uint32_t num_fdes, num_fres, fre_len, fdeoff, freoff;
	uint8_t version, flags, abi, be;
	int8_t fixed_fp, fixed_ra;

	struct sframe_fde_raw *raw; /* num_fdes, file order */
	uint64_t *starts;	    /* num_fdes, ascending */
	struct sframe_fn *fns;	    /* num_fdes, ascending */
	uint32_t *row_starts;	    /* num_fres */
	struct sframe_row *rows;    /* num_fres */

	/* Coarse index over starts[]: bucket b covers PCs
	 * [lo + (b << shift), lo + ((b + 1) << shift)); bucket_first[b] is the
	 * first function that may cover a PC in it, bucket_first[b + 1] + 1
	 * bounds the search. NULL when not built. */
	uint32_t *bucket_first;
	uint64_t bucket_lo;
	uint64_t nr_buckets;
	unsigned bucket_shift;
};

/* One FRE as stored. */
struct sframe_fre_raw {
	uint32_t start;
	uint8_t info;
	uint8_t count;	     /* data words */
	int32_t word[15];    /* sign-extended */
	uint32_t uword[15];  /* zero-extended (flex control words) */
};

static inline uint16_t sframe_rd16(const uint8_t *p, int be)
{
	return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t sframe_rd32(const uint8_t *p, int be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
			    (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
			    (uint32_t)p[1] << 8 | p[0];
}

static inline uint64_t sframe_rd64(const uint8_t *p, int be)
{
	uint64_t a = sframe_rd32(p, be), b = sframe_rd32(p + 4, be);
	return be ? a << 32 | b : b << 32 | a;
}

/*
 * Read the FRE at *pos (a section offset), which must end at or before
 * `end`, for an FDE whose fre_type is `fre_type`. Advances *pos.
 * Returns 0 or -SFRAME_E_FRE.
 */
int sframe_raw_fre_read(const struct sframe_table *t, size_t *pos, size_t end,
			unsigned fre_type, struct sframe_fre_raw *out);

/* DWARF register numbers of the ABI's stack and frame pointers. */
unsigned sframe_abi_sp(int abi);
unsigned sframe_abi_fp(int abi);

#endif
