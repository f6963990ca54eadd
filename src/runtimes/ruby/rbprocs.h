/* SPDX-License-Identifier: MIT */
/*
 * Which processes run CRuby, and what the BPF walk (bpf/ruby.bpf.h)
 * needs of each: a process is classified once, at its first event or
 * when attached, from the images it maps whose name starts with ruby or
 * libruby: the one exporting ruby_current_ec (a TLS symbol) and
 * ruby_version is the VM. Its version picks the offsets
 * (rboffsets.h); its dynamic relocations of ruby_current_ec (DTPMOD64 /
 * DTPOFF64, or TPOFF64) and the GOT slot they filled in the process tell
 * the walk where each thread's execution context is. A process named
 * like Ruby without that VM (no symbol, a version without offsets, a GOT
 * that cannot be read) keeps native stacks, counted by reason.
 *
 * Ownership: rbprocs__info() pointers live until the process is
 * forgotten (exec, exit) or rbprocs__free(). Single-threaded.
 */
#ifndef SFPROF_RBPROCS_H
#define SFPROF_RBPROCS_H

#include <stdint.h>
#include <stdio.h>

#include "sfprof_event.h"

struct elfread;
struct rboffsets;

/* p NULL: forget tgid. 0 or -errno. */
typedef int (*rbprocs_set_fn)(void *ctx, uint32_t tgid, const struct sfprof_rb_proc *p);

struct rbprocs_stats {
	uint64_t classified;  /* processes looked at */
	uint64_t ruby;	      /* ... running a supported CRuby */
	uint64_t no_vm;	      /* ... mapping a ruby-named image without a VM */
	uint64_t unsupported; /* ... a CRuby version without offsets */
	uint64_t no_tls;      /* ... whose ruby_current_ec could not be located */
	uint64_t no_symbols;  /* ... without a symbol table found: C methods unnamed */
	uint64_t set_errors;  /* the BPF map refused an entry */
};

struct rbproc_info {
	const struct rboffsets *o;
	uint32_t major, minor, patch;
	uint64_t symbols; /* &ruby_global_symbols in the process, or 0 */
	struct sfprof_rb_proc bpf;
};

/* What an image says of its VM (rbprocs__image). */
struct rbimage {
	uint32_t major, minor, patch;
	uint64_t tls_value;	/* ruby_current_ec's st_value in the TLS block */
	uint64_t got_module;	/* vaddr of its DTPMOD64 slot, or 0 */
	uint64_t got_offset;	/* ... of its DTPOFF64 slot, or 0 */
	int64_t dtpoff_addend;
	uint64_t got_tpoff;	/* ... of its TPOFF64 slot (initial-exec), or 0 */
	/* vaddr of ruby_global_symbols (C methods' names), or 0: from the
	 * symbol table, or, Debian's libruby having only dynamic symbols,
	 * from the code of rb_id2str (rbprocs__find_symbols) */
	uint64_t symbols;
};

/*
 * ruby_global_symbols from the code of rb_id2str at vaddr fn (code[0,
 * len) its bytes): rb_id2str (3.x) goes, directly or through one jmp,
 * into get_id_serial_entry, which compares the serial with
 * symbols.last_id (a 32-bit cmp with a RIP-relative operand) and then
 * loads symbols.ids (a 64-bit mov, RIP-relative) sym_ids bytes further:
 * the first such pair names the struct. 0 when the code does not say.
 * The process's own memory then has to agree (rbsession checks).
 */
uint64_t rbprocs__find_symbols(const uint8_t *code, size_t len, uint64_t fn, uint32_t sym_ids,
			       const uint8_t *(*at)(void *ctx, uint64_t vaddr, size_t n), void *ctx);

/* ruby_version and the TLS relocations of an image: 0, -ENOENT (no
 * Ruby VM in it), -EINVAL (a malformed version or table). */
int rbprocs__image(const struct elfread *e, struct rbimage *out);

/* Whether a mapped file's name looks like Ruby's (ruby*, libruby*). */
int rbprocs__name_is_ruby(const char *path);

struct rbprocs;

struct rbprocs *rbprocs__new(rbprocs_set_fn set, void *ctx); /* NULL + errno */
void rbprocs__free(struct rbprocs *rp);			      /* NULL is a no-op */

/* Classify pid unless done: the info of a supported CRuby, else NULL. */
const struct rbproc_info *rbprocs__check(struct rbprocs *rp, uint32_t pid);
const struct rbproc_info *rbprocs__info(const struct rbprocs *rp, uint32_t pid);
void rbprocs__exec(struct rbprocs *rp, uint32_t pid);
void rbprocs__fork(struct rbprocs *rp, uint32_t ppid, uint32_t pid);
void rbprocs__exit(struct rbprocs *rp, uint32_t pid);

void rbprocs__stats(const struct rbprocs *rp, struct rbprocs_stats *out);

#endif
