// SPDX-License-Identifier: MIT
/*
 * PHP offsets and frame names (src/runtimes/php/phpreader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtimes/php/phpreader.h"
#include "sfprof_event.h"

/* php8.2 8.2.32 (Debian bookworm's source package; bookworm-security's
 * 8.2.36 binary, the same ZEND_MODULE_API_NO, runs these layouts), NTS. */
const struct phpoffsets phpoffsets_table[] = {
	{
		.api = 20220829, .zts = 0,
		.eg_current_execute_data = 0x1e8,
		.ex_opline = 0, .ex_func = 24, .ex_call_info = 40, .ex_prev = 48,
		.fn_type = 0, .fn_name = 8, .fn_scope = 16, .op_last = 80, .op_opcodes = 88,
		.op_filename = 152, .op_line_start = 160,
		.user_function = 2,
		.op_size = 32, .op_lineno = 24,
		.ce_name = 8, .str_h = 8, .str_len = 16, .str_val = 24,
	},
};
const size_t phpoffsets_count = sizeof(phpoffsets_table) / sizeof(phpoffsets_table[0]);

#define F(name) (uint32_t)(offsetof(struct phpoffsets, name) / sizeof(uint32_t))
#define S82(name, where) { 20220829, F(name), "php-8.2.32/" where }

const struct phpoff_source phpoffsets_sources[] = {
	S82(api, "Zend/zend_modules.h:34 ZEND_MODULE_API_NO; the binary's \"API20220829,NTS\""),
	S82(zts, "Zend/zend_build.h ZEND_BUILD_TS: \",NTS\" in the build id"),
	S82(eg_current_execute_data, "Zend/zend_globals.h struct _zend_executor_globals.current_execute_data; "
	    "php8.2's zend_get_executed_lineno: mov 0x1e8(&executor_globals)"),
	S82(ex_opline, "Zend/zend_compile.h:541 zend_execute_data.opline"),
	S82(ex_func, "Zend/zend_compile.h:544 .func (after call, return_value)"),
	S82(ex_call_info, "Zend/zend_compile.h:545,554 This (zval at 32): u1.type_info, top 16 bits call info"),
	S82(ex_prev, "Zend/zend_compile.h:546 .prev_execute_data"),
	S82(fn_type, "Zend/zend_compile.h:441 op_array.type (zend_uchar), common with internal functions"),
	S82(fn_name, "Zend/zend_compile.h:444 .function_name (after type, arg_flags[3], fn_flags)"),
	S82(fn_scope, "Zend/zend_compile.h:445 .scope"),
	S82(op_last, "Zend/zend_compile.h:446-457 prototype .. T, run_time_cache ptr, cache_size, last_var, last at 80"),
	S82(op_opcodes, "Zend/zend_compile.h:459 .opcodes"),
	S82(op_filename, "Zend/zend_compile.h:460-471 static_variables_ptr .. try_catch_array, filename at 152"),
	S82(op_line_start, "Zend/zend_compile.h:472 .line_start"),
	S82(user_function, "Zend/zend_compile.h:960 ZEND_USER_FUNCTION"),
	S82(op_size, "Zend/zend_compile.h:136-147 struct _zend_op: 32 bytes"),
	S82(op_lineno, "Zend/zend_compile.h:142 .lineno; zend_get_executed_lineno: mov 0x18(opline)"),
	S82(ce_name, "Zend/zend.h:147-149 zend_class_entry: type, name"),
	S82(str_h, "Zend/zend_types.h:353-356 zend_string: gc (8 bytes), h; zend_string.c "
	    "zend_new_interned_string: ZSTR_H set"),
	S82(str_len, "Zend/zend_types.h:353-358 zend_string: gc, h, len"),
	S82(str_val, "Zend/zend_types.h:357 .val"),
};
const size_t phpoffsets_sources_count = sizeof(phpoffsets_sources) / sizeof(phpoffsets_sources[0]);

const struct phpoffsets *phpoffsets__find(uint32_t api)
{
	for (size_t i = 0; i < phpoffsets_count; i++)
		if (phpoffsets_table[i].api == api)
			return &phpoffsets_table[i];
	return NULL;
}

int phpoffsets__bpf(const struct phpoffsets *o, struct sfprof_php_proc *out)
{
	/* (fields of 8 bytes; line_start's 8 hold line_end too) */
	uint32_t win = o->op_last, in_win[] = { o->op_opcodes, o->op_filename, o->op_line_start };

	memset(out, 0, sizeof(*out));
	if (o->ex_opline > SFPROF_PHP_EX_WIN - 8 || o->ex_func > SFPROF_PHP_EX_WIN - 8 ||
	    o->ex_call_info > SFPROF_PHP_EX_WIN - 8 || o->ex_prev > SFPROF_PHP_EX_WIN - 8 ||
	    o->fn_type != 0 || o->fn_name > SFPROF_PHP_FN_HEAD - 8 ||
	    o->fn_scope > SFPROF_PHP_FN_HEAD - 8 || !o->op_size || o->op_size > 0xffff ||
	    win > 0xffff || o->str_h > 0xffff)
		return -ERANGE;
	for (size_t i = 0; i < sizeof(in_win) / sizeof(in_win[0]); i++)
		if (in_win[i] < win || in_win[i] - win > SFPROF_PY_WIN - 8)
			return -ERANGE;
	out->ex_opline = (uint16_t)o->ex_opline;
	out->ex_func = (uint16_t)o->ex_func;
	out->ex_call_info = (uint16_t)o->ex_call_info;
	out->ex_prev = (uint16_t)o->ex_prev;
	out->fn_opcodes = (uint16_t)o->op_opcodes;
	out->op_size = (uint16_t)o->op_size;
	out->fn_name = (uint16_t)o->fn_name;
	out->fn_scope = (uint16_t)o->fn_scope;
	out->op_win = (uint16_t)win;
	out->op_last = (uint16_t)o->op_last;
	out->op_filename = (uint16_t)o->op_filename;
	out->op_line_start = (uint16_t)o->op_line_start;
	out->str_h = (uint16_t)o->str_h;
	return 0;
}

static int rd(const struct phpreader_src *s, uint64_t addr, void *buf, size_t len)
{
	if (addr < 4096 || addr >= (1ull << 47) || addr + len < addr)
		return -EFAULT;
	return s->read(s->ctx, addr, buf, len);
}

static int rd64(const struct phpreader_src *s, uint64_t addr, uint64_t *v)
{
	return rd(s, addr, v, sizeof(*v));
}

int phpreader__string(const struct phpreader_src *s, uint64_t addr, char *buf, size_t size)
{
	uint64_t len;
	size_t n;
	int err;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	if ((err = rd64(s, addr + s->o->str_len, &len)))
		return err;
	if (len > (1u << 30))
		return -EINVAL;
	n = len < size - 1 ? len : size - 1;
	if (n && (err = rd(s, addr + s->o->str_val, buf, n)))
		return err;
	buf[n] = 0;
	for (size_t i = 0; i < n; i++) {
		if (!buf[i]) {
			n = i;
			break;
		}
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = '?';
	}
	return (int)n;
}

int phpreader__frame(const struct phpreader_src *s, uint64_t func, int32_t instr,
		     struct phpframe_name *out)
{
	const struct phpoffsets *o = s->o;
	char fn[PHPREADER_STR_MAX], cls[PHPREADER_STR_MAX];
	uint64_t name, scope, file, ops, cname;
	uint32_t last, v;
	uint8_t type;
	int err, n;

	memset(out, 0, sizeof(*out));
	if ((err = rd(s, func + o->fn_type, &type, 1)))
		return err;
	if (type != 1 && type != o->user_function)
		return -EINVAL; /* ZEND_INTERNAL_FUNCTION or user: nothing else runs */
	if ((err = rd64(s, func + o->fn_name, &name)) || (err = rd64(s, func + o->fn_scope, &scope)))
		return err;
	fn[0] = cls[0] = 0;
	if (name && (n = phpreader__string(s, name, fn, sizeof(fn))) < 0)
		return n;
	if (!name)
		snprintf(fn, sizeof(fn), "%s", "{main}");
	if (scope && (err = rd64(s, scope + o->ce_name, &cname)) == 0 && cname &&
	    phpreader__string(s, cname, cls, sizeof(cls)) < 0)
		cls[0] = 0;
	if (cls[0])
		snprintf(out->name, sizeof(out->name), "%.250s::%.250s", cls, fn);
	else
		snprintf(out->name, sizeof(out->name), "%s", fn);
	if (type != o->user_function)
		return 0;
	if ((err = rd64(s, func + o->op_filename, &file)) ||
	    (err = rd(s, func + o->op_line_start, &out->line_start, 4)))
		return err;
	if (file && (n = phpreader__string(s, file, out->file, sizeof(out->file))) < 0)
		return n;
	out->line = out->line_start;
	if (instr < 0)
		return 0;
	if ((err = rd(s, func + o->op_last, &last, 4)) || (err = rd64(s, func + o->op_opcodes, &ops)))
		return err;
	if ((uint32_t)instr >= last)
		return 0;
	if ((err = rd(s, ops + (uint64_t)instr * o->op_size + o->op_lineno, &v, 4)))
		return err;
	out->line = v;
	return 0;
}

int phpmerge__is_eval(const char *name)
{
	size_t n = sizeof("execute_ex") - 1;

	return name && !strncmp(name, "execute_ex", n) && (!name[n] || name[n] == '.');
}
