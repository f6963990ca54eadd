/* SPDX-License-Identifier: MIT */
/*
 * The runtime interface: one ops table per language runtime (Go's
 * .gopclntab, CPython's perf trampolines, CPython's, CRuby's and PHP's
 * sessions, ...), every hook optional, NULL meaning "not mine" or "the
 * default". The core (model/dso.c, symbols/symbolize.c, stacks/,
 * cli/cmd_report.c) calls the runtimes only through the loops below,
 * never by name: a runtime plugs in with its folder under
 * src/runtimes/ and one line of the table in runtime.c. A test adds one of
 * its own with runtime__register() (tests/unit/test_runtime.c).
 *
 * Per binary (a dso of model/, shared by every process that maps it):
 *  - probe(d): the runtime's state for binary d (its slot in the dso,
 *    asked once, on the first row lookup or table derivation), NULL when
 *    d is not the runtime's; release() frees it with the dso;
 *  - special_row(): a row that overrides the binary's own at vaddr (Go's
 *    stack switches): 1 with *row (and *fn when not NULL), else 0;
 *  - find_row(): a row for a vaddr the binary's own tables miss: 0 or
 *    -ESRCH;
 *  - derive_table(): the whole table of a binary that has no CFI at all
 *    (-ENOENT from .eh_frame/.debug_frame): 0 with *out or an error;
 * Per symbol table (symbolize.c, which knows the ELF file but not the dso):
 *  - add_symbols(s, e, have_full): names for e's functions the ELF symbol
 *    tables lack (have_full: a full .symtab was found); how many were
 *    added (their source is the table's symsrc bit), or -ENOMEM.
 *
 * Per process (stacks/), state per stacks instance made by attach() on
 * first use and freed by detach():
 *  - proc_row(): a row for a PC of the current process that no binary
 *    has (JIT code): 0 with *row, -ESRCH when the process is not the
 *    runtime's (a miss the caches keep), -EAGAIN when it is but pc is not
 *    known yet (ask again: not cached);
 *  - is_proc(): any frame of the current process may be the runtime's
 *    JIT code (record keeps their names);
 *  - on_jit_record(): before process pid's JIT entry (name, size) goes to
 *    a capture: what the runtime must write first (its error, else 0);
 *  - jit_name(): live, at its sample, a PC of the current process's
 *    anonymous code: the runtime may give the name of the code holding it
 *    to p->jitmaps (jitmaps__add(): the newest entry wins, record carries
 *    it like a perf map's): 1 added, 0 not (not its process, named
 *    already, not readable), or -ENOMEM;
 *  - on_capture_record(): a runtime record of a capture (report), of
 *    type `type`: 0, -ENOENT (not the runtime's type), -EINVAL, -ENOMEM.
 *    Records come in the capture's order, each before the events that
 *    need it: a later one replaces an earlier one for later events.
 *    With frames_offline, report asks frame_name() (and proc_row(),
 *    is_proc()) with runtime_proc.offline: they answer from those
 *    records, never from the process (gone, or its pid another's).
 *  - frame_name(): live, close to the sample, the name of a JIT frame no
 *    JIT map names, from the VM's own objects (V8's JSFunction slot of
 *    the frame): 0 with the name in buf (its source in f->file, f->line
 *    and the frames inlined at it in f->inl, when known), -ESRCH when
 *    the process is not the runtime's, another error when the frame cannot be named (it
 *    stays anonymous: never a guessed name). stacks/ keeps the name as a
 *    JIT entry of pc, so record writes it and report names it (its
 *    source and inlined frames live only: a capture's JIT records carry
 *    names), unless the runtime's own records carry it (f->carried).
 *    With
 *    frame_sources, it is asked for callers' frames a sized JIT entry
 *    names as well (their lines and the frames inlined at them), first.
 *  - names_native(sym): frame_name() is asked for frames in native
 *    function sym as well (V8's interpreter builtins, which every
 *    interpreted JS function runs in: f->sym is the symbol), live, and
 *    in record and report only with frames_offline (their PCs are shared
 *    by every function: a capture's entry by PC could name one only, and
 *    record writes none for a native frame; the runtime's own records
 *    must carry what names them); its name is the sample's own.
 *
 * Per run (an interpreter's session, made by session/pipeline.c; fed by
 * session/report_sink.c live and in record, cli/cmd_report.c offline),
 * called in the table's order:
 *  - enabled(o): the run names this runtime's frames (not --no-X); NULL:
 *    always. Live, one it turns off is never attached per process either
 *    (stacks_opts.runtimes_off): none of its per-process hooks is asked
 *    (HotSpot's --no-jvm, V8's --no-v8: no VM read);
 *  - session_new(live): the run's state, 0 with *out (NULL: nothing of
 *    its own in this run), or -ENOMEM; session_free() frees it;
 *  - session_set_capture(), session_set_writer(): the live capture (NULL
 *    once gone) and, in record, the capture file its frame names go to;
 *  - session_attach(pid): a target; session_event(e): a sample event;
 *    session_task(e): a FORK or EXIT; session_exec(pid): an exec;
 *    session_starting(file): the started COMMAND's file, before its exec
 *    (its image can be read before the first sample); session_started(pid):
 *    that COMMAND has exec'd;
 *    session_reap(before): drop what exited at or before `before`;
 *  - session_print_stats(): --stats lines;
 *  - session_record(): offline, an interpreter-frame (PYFRAME) record of
 *    the capture: 0 or -ENOMEM;
 *  - session_namer(): the namer stacks/ merges this runtime's sections
 *    with (stacks__set_namer);
 *  - names_from: offline, the name of the runtime whose session names
 *    this one's frames (the capture's PYFRAME records are shared);
 *  - section_flag: the SFPROF_PYS_* bit of this runtime's interpreter
 *    sections (0: the sections with none of the others' bits, CPython's);
 *    is_eval(name): a native frame the section's frames replace.
 *  - capture_bit: the runtime's BPF walk, its enum sfprof_runtime_bit
 *    (SFPROF_RT_*; 0: none): the live capture runs it when enabled(o)
 *    (runtime__capture_bits). Its session fills its own BPF map (named by
 *    bpf/<runtime>.bpf.h) with capture__set_runtime_proc(c, capture_bit,
 *    "its map", ...) and reads its rings with capture__runtime_map(); the
 *    capture names no runtime. BPF dispatches on the bit in one place,
 *    emit_record() of bpf/stack_copy.bpf.h.
 */
#ifndef SFPROF_RUNTIME_H
#define SFPROF_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct capfile_record;
struct capfile_writer;
struct capture;
struct dso;
struct elfread;
struct jitmaps;
struct proc;
struct sframe_func;
struct sframe_row;
struct sframe_table;
struct sframe_encode_opts;
struct sfprof_event;
struct sfprof_opts;
struct symtab;

/* A namer of interpreter frames (pymerge.h's pyname_fn). */
typedef int (*runtime_name_fn)(void *ctx, uint32_t pid, uint64_t code, int32_t instr,
			       const char **qualname, const char **file, uint32_t *line,
			       uint32_t *firstlineno);

/* A JIT frame of a sample (frame_name()): its pc (the call's, for a
 * caller) and the event's stack snapshot, user memory [stack_lo,
 * stack_lo + stack_len) (stack_lo: the sampled SP). leaf: pc is where
 * the frame was stopped, not a return address (the sampled frame, index
 * 0, or one a signal interrupted): it may be in its prologue or epilogue,
 * its frame pointer still the caller's. frame_fp(walk, index): its frame pointer as the
 * walk restored it, 0 when not known (found on first call: ask it only
 * for a process of the runtime's). */
struct runtime_frame {
	uint64_t pc;
	bool leaf;
	const uint8_t *stack;
	uint64_t stack_lo;
	size_t stack_len;
	uint64_t (*frame_fp)(void *walk, size_t index);
	void *walk;
	size_t index;
	/* out, optional: the frame's source file (file[0..file_size), "" on
	 * entry) and line (0 on entry) where the VM says */
	char *file;
	size_t file_size;
	uint32_t *line;
	/* out, optional: the frames inlined at it (inl[0..inl_size), "" on
	 * entry): lines of "name\tfile\tline\n", outermost first */
	char *inl;
	size_t inl_size;
	/* the native function pc is in (names_native()), NULL for JIT code */
	const char *sym;
	/* out, optional (false on entry): the runtime's own capture records
	 * carry this frame's name (HotSpot's and V8's interpreted frames,
	 * named by their slots in the stack: their PC is every method's), so
	 * record writes no JIT entry of its PC for it */
	bool *carried;
};

/* What stacks/ lends a runtime for the process being walked. */
struct runtime_proc {
	struct proc *proc;	/* the current process */
	/* the JIT maps (jitmap.h), made when `make` and the options allow
	 * them; NULL without */
	struct jitmaps *(*jitmaps)(void *ctx, bool make);
	void *ctx;
	uint64_t *rows;		/* counts rows proc_row() gave */
	/* record: writes a runtime record of process pid to the capture,
	 * of type `type` (enum runtime_record_type) */
	int (*write)(void *ctx, unsigned type, uint32_t pid, const uint8_t *data, size_t len);
	void *write_ctx;
	/* report: the process is a capture's (no memory to read: what its
	 * runtime records gave on_capture_record() only) */
	bool offline;
};

struct runtime_ops {
	const char *name;
	unsigned symsrc; /* SYMSRC_* (symbolize.h) of add_symbols' names */

	void *(*probe)(struct dso *d);
	void (*release)(void *bin);
	int (*special_row)(void *bin, uint64_t vaddr, struct sframe_row *row,
			   struct sframe_func *fn);
	int (*find_row)(struct dso *d, void *bin, uint64_t vaddr,
			struct sframe_row *row, struct sframe_func *fn);
	int (*derive_table)(struct dso *d, void *bin, struct sframe_encode_opts *o,
			    struct sframe_table **out);
	int (*add_symbols)(struct symtab *s, const struct elfread *e, int have_full);

	void *(*attach)(void);
	void (*detach)(void *state);
	int (*proc_row)(void *state, const struct runtime_proc *p, uint64_t pc,
			struct sframe_row *row);
	bool (*is_proc)(void *state, const struct runtime_proc *p);
	int (*on_jit_record)(void *state, const struct runtime_proc *p, uint32_t pid,
			     const char *name, uint64_t size);
	int (*jit_name)(void *state, const struct runtime_proc *p, uint64_t pc);
	int (*on_capture_record)(void *state, unsigned type, uint32_t pid,
				 const uint8_t *data, size_t len);

	bool (*enabled)(const struct sfprof_opts *o);
	int (*session_new)(int live, void **out);
	void (*session_free)(void *ss);
	void (*session_set_capture)(void *ss, struct capture *c);
	void (*session_set_writer)(void *ss, struct capfile_writer *w);
	void (*session_attach)(void *ss, uint32_t pid);
	void (*session_event)(void *ss, const struct sfprof_event *e);
	void (*session_task)(void *ss, const struct sfprof_event *e);
	void (*session_exec)(void *ss, uint32_t pid);
	void (*session_starting)(void *ss, const char *file);
	void (*session_started)(void *ss, uint32_t pid);
	void (*session_reap)(void *ss, uint64_t before);
	void (*session_print_stats)(const void *ss, FILE *f);
	int (*session_record)(void *ss, const struct capfile_record *rec);
	runtime_name_fn (*session_namer)(void *ss, void **ctx);
	const char *names_from;
	uint32_t section_flag;
	int (*is_eval)(const char *name);
	uint32_t capture_bit;

	int (*frame_name)(void *state, const struct runtime_proc *p,
			  const struct runtime_frame *f, char *buf, size_t size);
	/* frame_name() is asked for a caller's frame a JIT entry names too:
	 * it gives the frame's source line there (-ENOENT: the entry's name) */
	bool frame_sources;
	bool (*names_native)(const char *sym);
	/* frame_name() is asked in report too (runtime_proc.offline): it
	 * names frames from what the capture's runtime records gave */
	bool frames_offline;
};

/* on_capture_record()'s types: the capture's runtime records (capfile.h) */
enum runtime_record_type {
	RUNTIME_REC_PYTRAMP = 1, /* a CPython trampoline template */
	RUNTIME_REC_HOTSPOT = 2, /* HotSpot's code, frames, Methods (hsrecord.h) */
	RUNTIME_REC_V8 = 3,	 /* V8's interpreted frames' functions (v8record.h) */
};

/* At most this many runtimes, built in and registered together. */
#define RUNTIME_MAX 16

/* The runtimes: built in first (runtime.c's table), then registered. */
size_t runtime__count(void);
const struct runtime_ops *runtime__get(size_t i);

/* Add a runtime (a test's): its index, or -ENOSPC / -EEXIST. A dso or
 * stacks made before asks it on its next lookup. Single-threaded. */
int runtime__register(const struct runtime_ops *ops);
/* Drop the runtimes runtime__register() added: only once no dso or stacks
 * made since they were registered lives (their slots hold the dropped
 * runtimes' state). */
void runtime__unregister_all(void);

/* capture_opts.runtimes for a run with options o: the capture_bit of
 * every runtime that has one and is enabled(o). */
uint32_t runtime__capture_bits(const struct sfprof_opts *o);

/* The index of the runtime named `name`, or -ENOENT. */
int runtime__find(const char *name);
/* The runtime whose interpreter sections carry `flags` (SFPROF_PYS_*):
 * the one whose section_flag is among them, else the first with
 * is_eval and no section_flag; its index, or -ENOENT. */
int runtime__section(uint32_t flags);

#endif
