// SPDX-License-Identifier: MIT
/*
 * Text dump of an SFrame section in the layout of binutils
 * `objdump --sframe`, so the two can be compared with diff(1).
 *
 * The layout follows the binutils release that emits each version: v1 as
 * 2.40 prints it (no "CFA fixed" header lines, an AMD64 return address
 * shown as "u"), v2 and v3 as 2.45 and later print them (flags one per
 * line, "f" for a return address at the fixed offset, flexible-FDE rules
 * such as "(fp-8)" or "r10+0", "RA undefined" rows). Functions are printed
 * in the order the section stores them, as objdump does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unwind/dwexpr.h"
#include "unwind/sframe.h"
#include "unwind/sframe_int.h"

static const char *abi_file_format(int abi)
{
	switch (abi) {
	case SFRAME_ABI_AARCH64_BE:
		return "elf64-bigaarch64";
	case SFRAME_ABI_AARCH64_LE:
		return "elf64-littleaarch64";
	case SFRAME_ABI_S390X_BE:
		return "elf64-s390";
	default:
		return "elf64-x86-64";
	}
}

static void flags_string(const struct sframe_table *t, char *buf, size_t sz)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{ SFRAME_F_FDE_SORTED, "SFRAME_F_FDE_SORTED" },
		{ SFRAME_F_FRAME_POINTER, "SFRAME_F_FRAME_POINTER" },
		{ SFRAME_F_FDE_FUNC_START_PCREL, "SFRAME_F_FDE_FUNC_START_PCREL" },
		/* (sfprof's derived tables only: x[...] rules below are DWARF
		 * expressions SFrame cannot say, kept beside its rows) */
		{ SFRAME_F_SFPROF_EXPR, "SFPROF_DWARF_EXPRESSIONS" },
	};
	size_t used = 0;

	buf[0] = 0;
	if (!t->flags) {
		snprintf(buf, sz, "NONE");
		return;
	}
	if (t->version == 1) {
		/* binutils 2.40 overwrote the sorted flag's name with the
		 * frame-pointer one instead of appending it. */
		snprintf(buf, sz, "%s",
			 t->flags & SFRAME_F_FRAME_POINTER ? names[1].name
			 : t->flags & SFRAME_F_FDE_SORTED  ? names[0].name
							   : "");
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(t->flags & names[i].bit))
			continue;
		used += snprintf(buf + used, sz - used, "%s%s",
				 used ? ",\n           " : "", names[i].name);
		if (used >= sz)
			return;
	}
}

static const char *reg_name(const struct sframe_table *t, unsigned reg,
			    char *buf, size_t sz)
{
	if (reg == sframe_abi_sp(t->abi))
		return "sp";
	if (reg == sframe_abi_fp(t->abi))
		return "fp";
	snprintf(buf, sz, "r%u", reg);
	return buf;
}

/* One flexible-FDE rule: "sp+8", "(fp-8)", "r10+0", "c-16"; in a table
 * sfprof derived, a DWARF expression SFrame cannot say, kept beside its
 * rows: "x[breg7 +40; deref; plus_uconst 8]" (its value), "*x[...]"
 * (saved at the address it computes). */
static void flex_string(const struct sframe_table *t, uint32_t ctrl,
			int32_t off, char *buf, size_t sz)
{
	char rb[16];
	const uint8_t *e;
	size_t len;

	if (SFRAME_FLEX_EXPR_P(ctrl) && (t->flags & SFRAME_F_SFPROF_EXPR) &&
	    !dwexpr__get(SFRAME_FLEX_REGNUM(ctrl), &e, &len)) {
		char x[160];

		dwexpr__format(e, len, x, sizeof(x));
		snprintf(buf, sz, "%sx[%s] ", SFRAME_FLEX_DEREF_P(ctrl) ? "*" : "", x);
	} else if (!SFRAME_FLEX_REG_P(ctrl))
		snprintf(buf, sz, "c%+d", off);
	else if (SFRAME_FLEX_DEREF_P(ctrl))
		snprintf(buf, sz, "(%s%+d)",
			 reg_name(t, SFRAME_FLEX_REGNUM(ctrl), rb, sizeof(rb)),
			 off);
	else
		snprintf(buf, sz, "%s%+d",
			 reg_name(t, SFRAME_FLEX_REGNUM(ctrl), rb, sizeof(rb)),
			 off);
}

/* A default-FDE RA/FP slot word: "c-8", or on s390x v2 "r14" (register). */
static void slot_string(const struct sframe_table *t, int32_t w, char *buf,
			size_t sz)
{
	if (t->abi == SFRAME_ABI_S390X_BE && t->version == 2 && (w & 1))
		snprintf(buf, sz, "r%d", (int)((uint32_t)w >> 1 & 0xff));
	else
		snprintf(buf, sz, "c%+d", w);
}

static void row_strings_flex(const struct sframe_table *t,
			     const struct sframe_fre_raw *f, char *cfa,
			     char *fp, char *ra, size_t sz)
{
	unsigned i = 2, n = f->count;

	flex_string(t, f->uword[0], f->word[1], cfa, sz);
	snprintf(ra, sz, "%s", t->fixed_ra ? "f" : "u");
	snprintf(fp, sz, "u");
	if (i < n) {
		if (f->uword[i] == 0) {
			snprintf(ra, sz, "U");
			i++;
		} else {
			flex_string(t, f->uword[i], f->word[i + 1], ra, sz);
			i += 2;
		}
	}
	if (i < n) {
		if (f->uword[i] == 0)
			snprintf(fp, sz, "U");
		else
			flex_string(t, f->uword[i], f->word[i + 1], fp, sz);
	}
}

static void row_strings_default(const struct sframe_table *t,
				const struct sframe_fre_raw *f, char *cfa,
				char *fp, char *ra, size_t sz)
{
	unsigned n = f->count, fp_idx = t->fixed_ra ? 1 : 2;
	int32_t cfa_off = f->word[0];

	if (t->abi == SFRAME_ABI_S390X_BE)
		cfa_off = (int32_t)((int64_t)cfa_off * SFRAME_S390X_CFA_ALIGN -
				    SFRAME_S390X_CFA_ADJ);
	snprintf(cfa, sz, "%s+%d", SFRAME_FRE_BASE_SP(f->info) ? "sp" : "fp",
		 cfa_off);

	if (t->fixed_fp)
		snprintf(fp, sz, "c%+d", t->fixed_fp);
	else if (n > fp_idx)
		slot_string(t, f->word[fp_idx], fp, sz);
	else
		snprintf(fp, sz, "u");

	if (t->fixed_ra)
		/* 2.40 had no "fixed" column value and printed "u". */
		snprintf(ra, sz, "%s", t->version == 1 ? "u" : "f");
	else if (n > 1 && !(t->abi == SFRAME_ABI_S390X_BE && f->word[1] == 0))
		slot_string(t, f->word[1], ra, sz);
	else
		snprintf(ra, sz, "u");
}

static void dump_func(const struct sframe_table *t, uint32_t idx, FILE *out)
{
	const struct sframe_fde_raw *f = &t->raw[idx];
	int mask = SFRAME_INFO_PCTYPE(f->info) == SFRAME_PC_MASK;
	int flex = SFRAME_INFO2_FDE_TYPE(f->info2) == SFRAME_FDE_TYPE_FLEX;
	size_t pos = f->fre_pos;
	size_t end = t->hdr_len + t->freoff + (size_t)t->fre_len;
	char attr[8];
	size_t na = 0;

	fprintf(out, "\n    func idx [%" PRIu32 "]: pc = 0x%" PRIx64
		     ", size = %" PRIu32 " bytes",
		idx, f->start, f->size);
	if (t->version == 3) {
		if (SFRAME_INFO_SIGNAL(f->info))
			attr[na++] = 'S';
		if (flex)
			attr[na++] = 'F';
	}
	attr[na] = 0;
	if (na)
		fprintf(out, ", attr = \"%s\"", attr);
	if ((t->abi == SFRAME_ABI_AARCH64_BE ||
	     t->abi == SFRAME_ABI_AARCH64_LE) &&
	    SFRAME_INFO_PAUTH_B(f->info))
		fprintf(out, ", pauth = B key");
	fprintf(out, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC",
		mask ? "[m]" : "   ", "CFA", "FP", "RA");

	for (uint32_t j = 0; j < f->nfres; j++) {
		struct sframe_fre_raw fre;
		char cfa[200], fp[200], ra[200];
		uint64_t pc;

		/* Validated in sframe_table__new(): cannot fail here. */
		if (sframe_raw_fre_read(t, &pos, end,
					SFRAME_INFO_FRE_TYPE(f->info), &fre))
			return;
		pc = mask ? fre.start : f->start + fre.start;
		if (fre.count == 0) {
			fprintf(out, "\n    %016" PRIx64 "  RA undefined", pc);
			continue;
		}
		if (flex)
			row_strings_flex(t, &fre, cfa, fp, ra, 190);
		else
			row_strings_default(t, &fre, cfa, fp, ra, 190);
		strcat(ra, SFRAME_FRE_MANGLED(fre.info) ? "[s]" : "   ");
		fprintf(out, "\n    %016" PRIx64 "  %-10s%-10s%-13s", pc, cfa,
			fp, ra);
	}
}

int sframe_table__dump(const struct sframe_table *t, const char *name,
		       FILE *out)
{
	char flags[128];

	if (!t || !out)
		return -EINVAL;
	if (name)
		fprintf(out, "\n%s:     file format %s\n\n", name,
			abi_file_format(t->abi));
	flags_string(t, flags, sizeof(flags));
	fprintf(out, "Contents of the SFrame section .sframe:\n");
	fprintf(out, "  Header :\n\n");
	fprintf(out, "    Version: SFRAME_VERSION_%u\n", t->version);
	fprintf(out, "    Flags: %s\n", flags);
	if (t->version != 1) {
		if (t->fixed_fp)
			fprintf(out, "    CFA fixed FP offset: %d\n", t->fixed_fp);
		if (t->fixed_ra)
			fprintf(out, "    CFA fixed RA offset: %d\n", t->fixed_ra);
	}
	fprintf(out, "    Num FDEs: %" PRIu32 "\n", t->num_fdes);
	fprintf(out, "    Num FREs: %" PRIu32 "\n", t->num_fres);
	fprintf(out, "\n  Function Index :\n");
	for (uint32_t i = 0; i < t->num_fdes; i++) {
		dump_func(t, i, out);
		fprintf(out, "\n");
	}
	return ferror(out) ? -EIO : 0;
}
