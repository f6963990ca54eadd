/* SPDX-License-Identifier: MIT */
/*
 * The Go runtime's room: what sfprof needs to know about Go binaries,
 * read from their .gopclntab (gopclntab.h).
 *
 *  - Names: a Go binary linked with -s has no .symtab (and no DWARF), but
 *    its pclntab names every function; symbolize.c adds them, through the
 *    runtime table, when it found no full symbol table.
 *  - Stack switches: a function flagged SPWRITE (runtime.systemstack,
 *    mcall, morestack, asmcgocall, gogo, nanotime1, clone...) moves SP to
 *    another stack (g0's, gsignal's, the goroutine's) in a way its SP-delta
 *    table does not describe. Its frame is real, but the words above it on
 *    the current stack are not its caller's: go_runtime__special_row()
 *    gives a row that ends the walk there (UNWIND_STOP_STACK_SWITCH, the
 *    stack marked truncated), as Go's own traceback stops at SPWRITE
 *    functions; on g0 the walk goes on from the goroutine's saved context
 *    (src/stacks/stacks_go.c). runtime.asyncPreempt gets its SP-delta
 *    row flagged SFRAME_ROW_EXACT_RA: its return address is the PC the
 *    preemption signal interrupted, not one after a call, so its
 *    caller's row is looked up at that PC, not at it - 1. TOPFRAME functions (goexit, mstart, rt0_go) are the
 *    outermost frame of their stack (runtime.sigtramp, also TOPFRAME to
 *    Go, is not: the signal frame is its caller).
 *  - Unwind rows: a binary with no .eh_frame/.debug_frame (go build
 *    -ldflags=-s) gets rows derived from each function's SP-delta table:
 *    CFA = SP + delta + 8, the return address at CFA - 8 (Go's own
 *    traceback rule; the Go linker derives .debug_frame from the same
 *    table), the return address undefined in TOPFRAME functions.
 *
 * No allocation except the derived table, which the caller owns. The core
 * calls none of these by name: go_runtime_ops (goruntime.c), Go's line of
 * the runtime table (runtimes/runtime.h), does, for each binary that has
 * a pclntab.
 */
#ifndef SFPROF_GORUNTIME_H
#define SFPROF_GORUNTIME_H

#include <stdint.h>

#include "runtimes/go/gopclntab.h"

struct elfread;
struct symtab;
struct sframe_row;
struct sframe_func;
struct sframe_table;
struct sframe_encode_opts;

/* The pclntab of e (borrowing e's bytes): .gopclntab, or in a PIE
 * .data.rel.ro.gopclntab (whose textStart is left to a relocation: .text's
 * address stands in). 0, -ENOENT (not a Go binary) or a parse error
 * (gopclntab__strerror). */
int go_runtime__open(const struct elfread *e, struct gopclntab *t);

/*
 * The rows the SP-delta table cannot give, at lookup address vaddr:
 *  - in a TOPFRAME function but runtime.sigtramp (goexit, mstart,
 *    rt0_go): an "RA undefined" row, the outermost frame;
 *  - in a stack-switching (SPWRITE, not TOPFRAME) function: a row flagged
 *    SFRAME_ROW_STACK_SWITCH;
 *  - in runtime.asyncPreempt: its SP-delta row, flagged
 *    SFRAME_ROW_EXACT_RA;
 *  - one byte before runtime.sigreturn (a signal handler's return
 *    address, looked up at - 1): the function flagged SFRAME_FUNC_SIGNAL,
 *    so the walk continues from the ucontext.
 * 1 with *row and *fn (may be NULL) filled, else 0.
 */
int go_runtime__special_row(const struct gopclntab *t, uint64_t vaddr,
			    struct sframe_row *row, struct sframe_func *fn);

/* Rows for every function from its SP-delta table, encoded with *o (its
 * section_vaddr is set here). 0 with *out, or a negative error. */
int go_runtime__derive_table(const struct gopclntab *t,
			     struct sframe_encode_opts *o,
			     struct sframe_table **out);

/* Add every pclntab function of e to s: how many, or -ENOMEM (0 for a
 * binary that is not Go or whose table is bad). */
int go_runtime__add_symbols(struct symtab *s, const struct elfread *e);

#endif
