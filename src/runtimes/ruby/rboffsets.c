// SPDX-License-Identifier: MIT
/*
 * CRuby offset tables (src/runtimes/ruby/rboffsets.h), read from the source of
 * each version: 3.1 is Debian bookworm's ruby3.1 3.1.2 (the
 * 3.1.7+really3.1.2 build installs that source), built with its
 * defaults (USE_RVARGC 0, VM_DEBUG_BP_CHECK 0, USE_ISEQ_NODE_ID 1,
 * VM_INSN_INFO_TABLE_IMPL 2, VM_CHECK_MODE 0: positions[] is freed once
 * the succinct table exists).
 */
#include "runtimes/ruby/rboffsets.h"

const struct rboffsets rboffsets_table[] = {
	{
		.major = 3, .minor = 1,
		.ec_vm_stack = 0, .ec_vm_stack_size = 8, .ec_cfp = 16,
		/* pc, sp, iseq, self, ep, block_code, __bp__, jit_return */
		.cfp_size = 64, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32,
		/* flags, wrapper, body */
		.iseq_body = 16,
		/* type, iseq_size, iseq_encoded, param (48 bytes from 16),
		 * location (from 64: pathobj, base_label, label, first_lineno,
		 * node_id, code_location), insns_info (from 120: body,
		 * positions, size, succ_index_table) */
		.body_type = 0, .body_iseq_size = 4, .body_encoded = 8,
		.loc_pathobj = 64, .loc_base_label = 72, .loc_label = 80, .loc_first_lineno = 88,
		.insns_body = 120, .insns_positions = 128, .insns_size = 136, .insns_succ = 144,
		.body_window = 152,
		/* line_no, node_id, events */
		.entry_size = 12, .entry_line = 0,
		.lines = RBOFF_LINES_SUCC,
		/* imm_part[54 / 9] u64, then succ_dict_block { rank (u32),
		 * small_block_ranks (u64), bits[8] (u64) } */
		.succ_imm_size = 54, .succ_part = 48,
		.succ_block_size = 80, .succ_block_rank = 0, .succ_block_small = 8,
		.succ_block_bits = 16,
		.t_mask = 0x1f, .t_string = 0x05, .t_array = 0x07, .t_imemo = 0x1a,
		.fl_ushift = 12, .imemo_mask = 0x0f, .imemo_iseq = 7,
		/* basic (16), then heap { len, ptr, aux } or embed.ary[24] */
		.str_len = 16, .str_ptr = 24, .str_embed = 16,
		.str_noembed = 1u << 13, .str_embed_shift = 14, .str_embed_mask = 0x1f,
		/* basic (16), then heap { len, aux, ptr } or embed ary[3] */
		.ary_len = 16, .ary_ptr = 32, .ary_embed = 16,
		.ary_embed_flag = 1u << 13, .ary_embed_shift = 15, .ary_embed_mask = 0x3,
		/* flags, defined_class, def, called_id, owner */
		.me_called_id = 24, .imemo_ment = 6,
		/* last_id (u32), str_sym, ids, dsymbol_fstr_hash */
		.sym_last_id = 0, .sym_ids = 16, .id_entry_unit = 512, .id_entry_size = 2,
		.last_op_id = 169, .id_scope_shift = 4,
		.me_defined_class = 8, .imemo_svar = 2, .svar_cref_or_me = 8,
		.t_class = 0x02, .t_module = 0x03, .t_iclass = 0x1c, .fl_singleton = 1u << 12,
		.basic_klass = 8,
		/* basic (16), super, ptr (USE_RVARGC 0); ext: iv_index_tbl, iv_tbl */
		.class_ext = 24, .ext_iv_tbl = 8,
		/* entry_power.. (3 bytes), rebuilds_num, type, num_entries, bins,
		 * entries_start, entries_bound, entries; entry: hash, key, record */
		.st_entries_start = 32, .st_entries_bound = 40, .st_entries = 48,
		.st_entry_size = 24, .st_entry_hash = 0, .st_entry_key = 8, .st_entry_record = 16,
	},
};
const size_t rboffsets_count = sizeof(rboffsets_table) / sizeof(rboffsets_table[0]);

#define F(name) (uint32_t)(offsetof(struct rboffsets, name) / sizeof(uint32_t))
#define S31(name, where) { 3, 1, F(name), "ruby-3.1.2/" where }

const struct rboff_source rboffsets_sources[] = {
	S31(major, "version.h RUBY_VERSION_MAJOR; libruby's ruby_version \"3.1.2\""),
	S31(minor, "version.h RUBY_VERSION_MINOR"),
	S31(ec_vm_stack, "vm_core.h:912 struct rb_execution_context_struct.vm_stack"),
	S31(ec_vm_stack_size, "vm_core.h:913 .vm_stack_size (size_t, in words)"),
	S31(ec_cfp, "vm_core.h:914 .cfp"),
	S31(cfp_size, "vm_core.h:827-841 rb_control_frame_t: 8 words (VM_DEBUG_BP_CHECK 0, vm_core.h:787)"),
	S31(cfp_pc, "vm_core.h:828 .pc (cfp[0])"),
	S31(cfp_iseq, "vm_core.h:830 .iseq (cfp[2])"),
	S31(cfp_ep, "vm_core.h:832 .ep (cfp[4])"),
	S31(iseq_body, "vm_core.h:500-504 struct rb_iseq_struct: flags, wrapper, body"),
	S31(body_type, "vm_core.h:352 rb_iseq_constant_body.type (enum iseq_type)"),
	S31(body_iseq_size, "vm_core.h:364 .iseq_size"),
	S31(body_encoded, "vm_core.h:365 .iseq_encoded"),
	S31(loc_pathobj, "vm_core.h:390-437 param (48 bytes at 16), vm_core.h:309 location.pathobj at 64"),
	S31(loc_base_label, "vm_core.h:310 location.base_label"),
	S31(loc_label, "vm_core.h:311 location.label"),
	S31(loc_first_lineno, "vm_core.h:312 location.first_lineno (a Fixnum)"),
	S31(insns_body, "vm_core.h:308-315 location is 56 bytes; vm_core.h:442-448 insns_info.body at 120"),
	S31(insns_positions, "vm_core.h:444 insns_info.positions (NULL after iseq.c:680)"),
	S31(insns_size, "vm_core.h:445 insns_info.size"),
	S31(insns_succ, "vm_core.h:447 insns_info.succ_index_table (VM_INSN_INFO_TABLE_IMPL 2, vm_core.h:94)"),
	S31(body_window, "vm_core.h:448 the end of insns_info"),
	S31(entry_size, "iseq.h:228-234 struct iseq_insn_info_entry: line_no, node_id (USE_ISEQ_NODE_ID 1, iseq.h:21), events"),
	S31(entry_line, "iseq.h:229 .line_no"),
	S31(lines, "vm_core.h:94 VM_INSN_INFO_TABLE_IMPL 2; iseq.c:1779 get_insn_info_succinct_bitvector"),
	S31(succ_imm_size, "iseq.c:3648 IMMEDIATE_TABLE_SIZE 54"),
	S31(succ_part, "iseq.c:3650-3657 struct succ_index_table: imm_part[6]"),
	S31(succ_block_size, "iseq.c:3652-3656 struct succ_dict_block: rank, small_block_ranks, bits[8]"),
	S31(succ_block_rank, "iseq.c:3653 .rank"),
	S31(succ_block_small, "iseq.c:3654 .small_block_ranks (9 bits x 7)"),
	S31(succ_block_bits, "iseq.c:3655 .bits[512/64]"),
	S31(t_mask, "include/ruby/internal/value_type.h:144 RUBY_T_MASK"),
	S31(t_string, "include/ruby/internal/value_type.h:119 RUBY_T_STRING"),
	S31(t_array, "include/ruby/internal/value_type.h:121 RUBY_T_ARRAY"),
	S31(t_imemo, "include/ruby/internal/value_type.h:138 RUBY_T_IMEMO"),
	S31(fl_ushift, "include/ruby/internal/fl_type.h:167 RUBY_FL_USHIFT"),
	S31(imemo_mask, "internal/imemo.h:22 IMEMO_MASK"),
	S31(imemo_iseq, "internal/imemo.h:41 imemo_iseq"),
	S31(str_len, "include/ruby/internal/core/rstring.h:250 as.heap.len"),
	S31(str_ptr, "include/ruby/internal/core/rstring.h:258 as.heap.ptr"),
	S31(str_embed, "include/ruby/internal/core/rstring.h:299 as.embed.ary (USE_RVARGC 0)"),
	S31(str_noembed, "include/ruby/internal/core/rstring.h:163 RSTRING_NOEMBED = RUBY_FL_USER1"),
	S31(str_embed_shift, "include/ruby/internal/core/rstring.h:212 RSTRING_EMBED_LEN_SHIFT"),
	S31(str_embed_mask, "include/ruby/internal/core/rstring.h:176 RSTRING_EMBED_LEN_MASK: USER2..USER6"),
	S31(ary_len, "include/ruby/internal/core/rarray.h:181 as.heap.len"),
	S31(ary_ptr, "include/ruby/internal/core/rarray.h:184-206 as.heap.aux, then .ptr"),
	S31(ary_embed, "include/ruby/internal/core/rarray.h as.ary (embedded elements)"),
	S31(ary_embed_flag, "include/ruby/internal/core/rarray.h:119 RARRAY_EMBED_FLAG = RUBY_FL_USER1"),
	S31(ary_embed_shift, "include/ruby/internal/core/rarray.h:159 RARRAY_EMBED_LEN_SHIFT"),
	S31(ary_embed_mask, "include/ruby/internal/core/rarray.h:133 RARRAY_EMBED_LEN_MASK: USER3|USER4"),
	S31(me_called_id, "method.h:62-68 rb_callable_method_entry_t: flags, defined_class, def, called_id"),
	S31(imemo_ment, "internal/imemo.h:40 imemo_ment"),
	S31(sym_last_id, "symbol.h:61-66 rb_symbols_t.last_id (rb_id_serial_t, u32)"),
	S31(sym_ids, "symbol.h:64 rb_symbols_t.ids (after str_sym)"),
	S31(id_entry_unit, "symbol.c:68 ID_ENTRY_UNIT 512"),
	S31(id_entry_size, "symbol.c:70-74 ID_ENTRY_STR, ID_ENTRY_SYM, ID_ENTRY_SIZE"),
	S31(last_op_id, "id.h:111-131,289 tLAST_OP_ID = tPRESERVED_ID_END - 1 = 150 + 19; rb_id2str's cmp $0xa9"),
	S31(id_scope_shift, "id.h:26 RUBY_ID_SCOPE_SHIFT; symbol.h:69-76 rb_id_to_serial"),
	S31(me_defined_class, "method.h:62-68 rb_callable_method_entry_t.defined_class (after flags); "
	    "vm_backtrace.c frame2klass"),
	S31(imemo_svar, "internal/imemo.h enum imemo_type: imemo_svar 2 (env, cref, svar)"),
	S31(svar_cref_or_me, "internal/imemo.h struct vm_svar: flags, cref_or_me; vm_insnhelper.c "
	    "check_method_entry"),
	S31(t_class, "include/ruby/internal/value_type.h:116 RUBY_T_CLASS"),
	S31(t_module, "include/ruby/internal/value_type.h:117 RUBY_T_MODULE"),
	S31(t_iclass, "include/ruby/internal/value_type.h:140 RUBY_T_ICLASS"),
	S31(fl_singleton, "include/ruby/internal/fl_type.h:430 RUBY_FL_SINGLETON = RUBY_FL_USER0"),
	S31(basic_klass, "include/ruby/internal/core/rbasic.h struct RBasic: flags, klass"),
	S31(class_ext, "internal/class.h struct RClass: basic, super, ptr (USE_RVARGC 0)"),
	S31(ext_iv_tbl, "internal/class.h struct rb_classext_struct: iv_index_tbl, iv_tbl; "
	    "variable.c rb_ivar_lookup (T_CLASS: RCLASS_IV_TBL, st_lookup)"),
	S31(st_entries_start, "include/ruby/st.h:79-92 struct st_table .entries_start"),
	S31(st_entries_bound, "include/ruby/st.h:92 .entries_bound"),
	S31(st_entries, "include/ruby/st.h:94 .entries"),
	S31(st_entry_size, "st.c struct st_table_entry: hash, key, record"),
	S31(st_entry_hash, "st.c st_table_entry.hash (RESERVED_HASH_VAL ~0: deleted)"),
	S31(st_entry_key, "st.c st_table_entry.key (an ID for ivars)"),
	S31(st_entry_record, "st.c st_table_entry.record"),
};
const size_t rboffsets_sources_count = sizeof(rboffsets_sources) / sizeof(rboffsets_sources[0]);

const struct rboffsets *rboffsets__find(uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < rboffsets_count; i++)
		if (rboffsets_table[i].major == major && rboffsets_table[i].minor == minor)
			return &rboffsets_table[i];
	return NULL;
}
