/* SPDX-License-Identifier: MIT */
/*
 * Go's own function table (.gopclntab), as the Go 1.18+ linker writes it:
 * a header (magic 0xfffffff0 for Go 1.18/1.19, 0xfffffff1 for 1.20+), the
 * function names (funcnametab), the PC-value tables (pctab) and the
 * function table (functab: nfunc+1 {entry offset, _func offset} pairs,
 * sorted by entry; the last entry is the end of the text), each function
 * described by a _func record. Go's runtime unwinds and names its own
 * frames from it, so it is present even in binaries linked with -s (no
 * .symtab, no DWARF).
 *
 * What sfprof reads from it:
 *  - function names and ranges (to name stripped Go binaries);
 *  - each function's flags: TOPFRAME (the outermost frame of a stack:
 *    runtime.goexit, mstart, rt0_go) and SPWRITE (writes SP with a value
 *    its SP-delta table does not describe: the stack switches
 *    runtime.systemstack, mcall, morestack, asmcgocall, gogo...);
 *  - the SP-delta table (pcsp) of each function, which gives the CFA at
 *    every PC exactly (Go's own traceback uses nothing else).
 *
 * The bytes are hostile input. gopclntab__parse() checks the header, the
 * order and bounds of the sub-tables, and that every functab entry is
 * sorted and points inside the table; every later read (a _func record,
 * a name, a pcsp varint) is bounds-checked again when made. Older
 * formats (Go 1.2-1.17) are refused with GOPCLNTAB_E_VERSION.
 *
 * Ownership: a struct gopclntab borrows the section bytes; names returned
 * point into them and live as long as they do. No allocation.
 */
#ifndef SFPROF_GOPCLNTAB_H
#define SFPROF_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

enum {
	GOPCLNTAB_MAGIC_118 = 0xfffffff0u,
	GOPCLNTAB_MAGIC_120 = 0xfffffff1u,
};

/* _func.flag bits (Go's runtime/symtab.go funcFlag) */
enum {
	GOPCLNTAB_FLAG_TOPFRAME = 1u << 0,
	GOPCLNTAB_FLAG_SPWRITE = 1u << 1,
};

/* Errors (negative returns), besides -ENOENT. */
enum gopclntab_error {
	GOPCLNTAB_E_TRUNCATED = 3000, /* a table or record past the end */
	GOPCLNTAB_E_MAGIC,	      /* not a pclntab */
	GOPCLNTAB_E_VERSION,	      /* a pclntab of Go < 1.18 */
	GOPCLNTAB_E_HEADER,	      /* bad pointer size, quantum or offsets */
	GOPCLNTAB_E_ORDER,	      /* functab not sorted */
	GOPCLNTAB_E_FUNC,	      /* a _func record that disagrees */
	GOPCLNTAB_E_NAME,	      /* a name not NUL-terminated in its table */
	GOPCLNTAB_E_PCVALUE,	      /* a PC-value table that runs off */
};
const char *gopclntab__strerror(int err);

struct gopclntab {
	const uint8_t *data;
	size_t len;
	uint32_t magic;
	uint8_t quantum; /* PC step of the PC-value tables (1 on x86) */
	uint64_t nfunc;
	uint64_t text;	 /* vaddr function entry offsets are relative to */
	uint64_t text_end; /* vaddr where the last function ends */
	size_t names_off, names_end; /* funcnametab */
	size_t pctab_off, pctab_end; /* pctab */
	size_t ftab_off;	     /* functab, then _func records, to len */
	size_t func_size;	     /* bytes of a _func record */
};

/* One function, as its _func record says. */
struct gopclntab_func {
	uint64_t start, end; /* vaddr [start, end) */
	const char *name;    /* into the section, NUL-terminated */
	uint32_t pcsp;	     /* offset of its SP-delta table in pctab (0: none) */
	uint8_t func_id;
	uint8_t flag;	     /* GOPCLNTAB_FLAG_* */
};

/*
 * Validate the table `data[0..len)` and fill *t (which borrows data).
 * `text_vaddr` is the vaddr of .text, used when the header's textStart
 * is 0 (position-independent builds leave it to a relocation). 0 or a
 * negative GOPCLNTAB_E_* / -EINVAL.
 */
int gopclntab__parse(const void *data, size_t len, uint64_t text_vaddr,
		     struct gopclntab *t);

/* Function i of t->nfunc: 0 or a negative error (the record is bad). */
int gopclntab__func(const struct gopclntab *t, uint64_t i,
		    struct gopclntab_func *f);

/* The function holding vaddr: 0, -ENOENT (none), or an error. */
int gopclntab__find(const struct gopclntab *t, uint64_t vaddr,
		    struct gopclntab_func *f);

/*
 * A PC-value table walked run by run: each call gives the next run
 * [*pc_lo, *pc_hi) over which the value is *val. 1 for a run, 0 at the
 * end, or a negative error (a varint or run past the table or function).
 */
struct gopclntab_pcvalue {
	const struct gopclntab *t;
	size_t off;	/* next byte in the section */
	uint64_t pc;	/* start of the next run */
	uint64_t end;	/* the function's end */
	int32_t val;
	int first;
};
int gopclntab__pcvalue_start(const struct gopclntab *t,
			     const struct gopclntab_func *f, uint32_t table_off,
			     struct gopclntab_pcvalue *it);
int gopclntab__pcvalue_next(struct gopclntab_pcvalue *it, uint64_t *pc_lo,
			    uint64_t *pc_hi, int32_t *val);

/* SP delta of f at vaddr pc (bytes SP moved down since the entry):
 * 0 or a negative error (-ENOENT: no table or no run holds pc). */
int gopclntab__spdelta(const struct gopclntab *t,
		       const struct gopclntab_func *f, uint64_t pc,
		       int32_t *delta);

#endif
