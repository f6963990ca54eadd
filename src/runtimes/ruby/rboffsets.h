/* SPDX-License-Identifier: MIT */
/*
 * Per-version CRuby struct offsets and constants for the BPF walk of
 * control frames (bpf/ruby.bpf.h) and the user-space iseq reader
 * (rbreader.h). libruby carries no DWARF, so each value comes from the
 * source of the version it describes (Debian's source package: the
 * .orig tarball of `apt-get source rubyX.Y`); rboffsets_sources[] names,
 * for every field of every table, the declaration it was read from, and
 * tests/unit/test_rboffsets.c fails on a field without one, then checks
 * the values it can against a live interpreter (strings, arrays, iseqs
 * and their line tables, through addresses the interpreter itself
 * reports with Fiddle).
 *
 * Offsets are bytes from the start of the named struct, x86-64 only.
 *
 * The walk, for a thread (as bpf/ruby.bpf.h does it):
 *   ec   = ruby_current_ec (TLS; see sfprof_rb_proc)
 *   cfp  = *(ec + ec_cfp); end = *(ec + ec_vm_stack) + 8 * *(ec + ec_vm_stack_size)
 *   while cfp + cfp_size <= end: frame (cfp_pc, cfp_iseq, cfp_ep), cfp += cfp_size
 * and for an iseq frame (ep[0] not a C frame's magic) its name:
 *   body = *(iseq + iseq_body)
 *   label  = RString at *(body + loc_label); path: *(body + loc_pathobj),
 *            an RString or an RArray [path, realpath]
 *   first  = FIX2INT(*(body + loc_first_lineno))
 *   line   = the insns_info entry at pos = pc index - 1 (the pc points
 *            past the instruction running: vm_backtrace.c calc_pos)
 * and for a C method's frame (ep[0]'s magic VM_FRAME_MAGIC_CFUNC) the
 * name of its method entry's called_id:
 *   serial = id > last_op_id ? id >> id_scope_shift : id
 *   ary    = RArray *(symbols + sym_ids), element serial / id_entry_unit
 *   name   = RString: element (serial % id_entry_unit) * id_entry_size of it
 * and the class of a frame's method entry me (bpf/ruby.bpf.h finds it):
 *   klass  = *(me + me_defined_class); an ICLASS: *(klass + basic_klass)
 *   a singleton (flags & fl_singleton): its ivar __attached__ instead
 *   path   = its ivar __classpath__ (an RString), the ivars the entries
 *            [entries_start, entries_bound) of the st_table at
 *            *(*(klass + class_ext) + ext_iv_tbl), keyed by ID
 */
#ifndef SFPROF_RBOFFSETS_H
#define SFPROF_RBOFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* How an iseq maps a position to its insns_info entry (vm_core.h
 * VM_INSN_INFO_TABLE_IMPL). */
enum rboff_lines {
	RBOFF_LINES_SUCC = 2,	   /* succinct bit-vector (iseq.c succ_index_table) */
	RBOFF_LINES_POSITIONS = 1, /* sorted positions[] (binary search) */
};

struct rboffsets {
	uint32_t major, minor;
	/* rb_execution_context_t */
	uint32_t ec_vm_stack, ec_vm_stack_size, ec_cfp;
	/* rb_control_frame_t */
	uint32_t cfp_size, cfp_pc, cfp_iseq, cfp_ep;
	/* rb_iseq_t */
	uint32_t iseq_body;
	/* rb_iseq_constant_body */
	uint32_t body_type, body_iseq_size, body_encoded;
	uint32_t loc_pathobj, loc_base_label, loc_label, loc_first_lineno;
	uint32_t insns_body, insns_positions, insns_size, insns_succ;
	uint32_t body_window; /* bytes of the body that hold all of the above */
	/* struct iseq_insn_info_entry */
	uint32_t entry_size, entry_line;
	/* struct succ_index_table */
	uint32_t lines;	       /* enum rboff_lines */
	uint32_t succ_imm_size; /* IMMEDIATE_TABLE_SIZE */
	uint32_t succ_part;     /* succ_part[] */
	uint32_t succ_block_size, succ_block_rank, succ_block_small, succ_block_bits;
	/* RBasic / value types */
	uint32_t t_mask, t_string, t_array, t_imemo;
	uint32_t fl_ushift, imemo_mask, imemo_iseq;
	/* RString */
	uint32_t str_len, str_ptr, str_embed, str_noembed, str_embed_shift, str_embed_mask;
	/* RArray */
	uint32_t ary_len, ary_ptr, ary_embed, ary_embed_flag, ary_embed_shift, ary_embed_mask;
	/* C methods: rb_callable_method_entry_t, and an ID's name through
	 * the global symbol table (rb_symbols_t ruby_global_symbols) */
	uint32_t me_called_id, imemo_ment;
	uint32_t sym_last_id, sym_ids, id_entry_unit, id_entry_size, last_op_id, id_scope_shift;
	/* A method entry's class, as rb_profile_frame_classpath finds it:
	 * defined_class (an ICLASS stands for its module: RBasic.klass; a
	 * singleton class for its __attached__ object), then its
	 * __classpath__ ivar, both in the class's ivar st_table */
	uint32_t me_defined_class, imemo_svar, svar_cref_or_me;
	uint32_t t_class, t_module, t_iclass, fl_singleton, basic_klass;
	uint32_t class_ext, ext_iv_tbl;
	uint32_t st_entries_start, st_entries_bound, st_entries;
	uint32_t st_entry_size, st_entry_hash, st_entry_key, st_entry_record;
};

#define RBOFF_NFIELDS (sizeof(struct rboffsets) / sizeof(uint32_t))

/* Where a field's value was read: field index (uint32_t words from the
 * start of struct rboffsets), and the declaration. */
struct rboff_source {
	uint32_t major, minor;
	uint32_t field;
	const char *where;
};

extern const struct rboffsets rboffsets_table[];
extern const size_t rboffsets_count;
extern const struct rboff_source rboffsets_sources[];
extern const size_t rboffsets_sources_count;

/* The table of version major.minor, or NULL. */
const struct rboffsets *rboffsets__find(uint32_t major, uint32_t minor);

#endif
