/* SPDX-License-Identifier: MIT */
/*
 * PHP support: the per-version offsets of the engine's structs (checked
 * against the source of the version, Debian's php8.2 source package, and
 * the code of the binary: phpoffsets_sources[] names each field's
 * declaration; tests/unit/test_phpoffsets.c fails on a field without
 * one), and the reader of a frame's names from the target's memory: a
 * zend_function's name (Class::method, or the function's; "{main}" for
 * the script's top level, "{closure}" as PHP names closures), its file,
 * and the line of an opline from the op_array's opcodes.
 *
 * The target's memory is hostile input: every read goes through one
 * callback, strings are capped at PHPREADER_STR_MAX, a function's type
 * is checked, an opline index against the op_array's count.
 */
#ifndef SFPROF_PHPREADER_H
#define SFPROF_PHPREADER_H

#include <stddef.h>
#include <stdint.h>

#define PHPREADER_STR_MAX 512

struct phpoffsets {
	uint32_t api;	       /* ZEND_MODULE_API_NO */
	uint32_t zts;	       /* 0: NTS (the only kind walked) */
	/* zend_executor_globals */
	uint32_t eg_current_execute_data;
	/* zend_execute_data */
	uint32_t ex_opline, ex_func, ex_call_info, ex_prev;
	/* zend_function / zend_op_array */
	uint32_t fn_type, fn_name, fn_scope, op_last, op_opcodes, op_filename, op_line_start;
	uint32_t user_function; /* ZEND_USER_FUNCTION */
	/* zend_op */
	uint32_t op_size, op_lineno;
	/* zend_class_entry, zend_string */
	uint32_t ce_name, str_h, str_len, str_val;
};

#define PHPOFF_NFIELDS (sizeof(struct phpoffsets) / sizeof(uint32_t))

struct phpoff_source {
	uint32_t api;
	uint32_t field;
	const char *where;
};

extern const struct phpoffsets phpoffsets_table[];
extern const size_t phpoffsets_count;
extern const struct phpoff_source phpoffsets_sources[];
extern const size_t phpoffsets_sources_count;

/* The table of ZEND_MODULE_API_NO api (NTS), or NULL. */
const struct phpoffsets *phpoffsets__find(uint32_t api);

struct sfprof_php_proc;
/* The BPF walk's offsets from o (all but current_ex): 0, or -ERANGE when
 * a field lies outside the windows the walk reads (sfprof_event.h). */
int phpoffsets__bpf(const struct phpoffsets *o, struct sfprof_php_proc *out);

typedef int (*phpreader_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct phpreader_src {
	const struct phpoffsets *o;
	phpreader_read_fn read;
	void *ctx;
};

struct phpframe_name {
	char name[PHPREADER_STR_MAX];	/* Class::method, function, {main} */
	char file[PHPREADER_STR_MAX];	/* "" for an internal function */
	uint32_t line, line_start;
};

/* The zend_string at addr into buf (NUL-terminated, control bytes as
 * '?'): its length in buf, or -errno. */
int phpreader__string(const struct phpreader_src *s, uint64_t addr, char *buf, size_t size);

/* Names of the frame running zend_function func at opline index instr
 * (-1: none). 0 or -errno. */
int phpreader__frame(const struct phpreader_src *s, uint64_t func, int32_t instr,
		     struct phpframe_name *out);

/* Whether a native symbol is the engine's loop (execute_ex). */
int phpmerge__is_eval(const char *name);

#endif
