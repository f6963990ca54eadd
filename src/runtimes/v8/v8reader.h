/* SPDX-License-Identifier: MIT */
/*
 * V8's JS frames named from the VM's own objects (runtimes/v8/): the
 * layout comes from the v8dbg_* postmortem constants node exports
 * (v8layout__from_elf()), the objects from the target's memory through a
 * read callback (v8reader__frame_name()). The target is hostile: every
 * object's map is checked for the type the walk expects, every length and
 * depth is bounded, and any doubt gives an error, never a guessed name.
 */
#ifndef SFPROF_V8READER_H
#define SFPROF_V8READER_H

#include <stddef.h>
#include <stdint.h>

struct elfread;

struct v8_layout {
	int64_t fp_function;	    /* the JSFunction's slot, from fp */
	uint64_t heap_tag, heap_tag_mask;
	unsigned smi_shift;	    /* SmiShiftSize + the tag's bit */
	uint32_t map, map_type;	    /* HeapObject::map, Map::instance_type */
	uint32_t fn_shared;	    /* JSFunction::shared */
	uint32_t sfi_name, sfi_script; /* name_or_scope_info, script_or_debug_info */
	uint32_t script_name;
	uint32_t str_len, seq1_chars, seq2_chars;
	uint32_t cons_first, cons_second, thin_actual, sliced_parent, sliced_offset;
	uint32_t t_function, t_sfi, t_script, t_scope_info, first_nonstring;
	uint32_t repr_mask, enc_mask, seq_tag, cons_tag, thin_tag, sliced_tag, one_byte_tag;
	uint32_t si_ncontextlocals, si_first_vars; /* ScopeInfo slots (after the map) */
	/* interpreted frames (has_interp: all of these found) */
	int has_interp;
	int64_t fp_context, fp_bytecode_array, fp_bytecode_offset; /* slots, from fp */
	uint32_t sfi_data;	     /* SharedFunctionInfo::function_data */
	uint32_t code_bytecode;	     /* Code::bytecode_or_interpreter_data */
	uint32_t array_len;	     /* FixedArrayBase::length */
	uint32_t bytecode_data;	     /* BytecodeArray::data (its header's size) */
	uint32_t t_bytecode, t_interp_data, t_code;
};

/* The layout from binary e's v8dbg_* symbols: 0, -ENOENT (not V8, or one
 * this reader does not know: a 64-bit tagged heap without pointer
 * compression), -EINVAL (values out of range). */
int v8layout__from_elf(const struct elfread *e, struct v8_layout *l);

/* Reads len bytes at addr of the target: 0, or an error. */
typedef int (*v8_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define V8_NAME_MAX 256 /* characters kept of a name or a script's */

/*
 * The JSFunction fn's name into buf (NUL-terminated): "name script" when
 * its script has a name, "name" else, "(anonymous)" for a function with
 * none. 0, -EINVAL (not a JSFunction, a broken object), or rd's error.
 */
int v8reader__function_name(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fn,
			    char *buf, size_t size);

/*
 * An interpreted (Ignition) frame at frame pointer fp: *fn its JSFunction
 * and *offset its bytecode offset as the frame last saved it (-1: at the
 * function's entry). The frame's slots are read by rd (the sample's stack
 * snapshot first); the context slot must hold an object (a typed frame
 * has its marker there), the function a JSFunction whose
 * SharedFunctionInfo's bytecode (directly, through its InterpreterData or
 * its baseline Code) is the frame's BytecodeArray, and the offset within
 * it. 0, -ENOENT (no interpreter layout), -EINVAL, or rd's error.
 */
int v8reader__interp_frame(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fp,
			   uint64_t *fn, int32_t *offset);

/* v8reader__interp_frame()'s frame with its BytecodeArray (the frame's
 * slot, tagged) and that array's length (bytes, at most 2^28). */
struct v8_interp {
	uint64_t fn, bytecode;
	int32_t offset;
	uint32_t length;
};
int v8reader__interp(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t fp,
		     struct v8_interp *out);

/* A String object's characters (UTF-8, at most V8_NAME_MAX) into buf:
 * 0, -EINVAL, or rd's error. */
int v8reader__string(const struct v8_layout *l, v8_read_fn rd, void *ctx, uint64_t str,
		     char *buf, size_t size);

#endif
