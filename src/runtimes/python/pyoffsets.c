// SPDX-License-Identifier: MIT
/*
 * The per-version CPython offset tables (src/runtimes/python/pyoffsets.h).
 *
 * 3.11: Debian 12's /usr/bin/python3.11 (3.11.2), from python3.11-dbg's
 *       DWARF; tests/unit/test_pyoffsets.c checks every field against it.
 * 3.12, 3.13: CPython 3.12.1 and 3.13.0 release builds (default
 *       configure: no --with-pydebug, --with-trace-refs or
 *       --disable-gil, which change these layouts), read from their DWARF
 *       with gdb. Release builds of one minor version share the layout.
 * glibc: 2.36 x86_64 (Debian 12), from libc6-dbg; checked by the test.
 */
#include "runtimes/python/pyoffsets.h"

#include <errno.h>
#include <stddef.h>

#define GLIBC_2_36                                                          \
	.glibc_specific_1stblock = 0x310, .glibc_specific = 0x510,          \
	.glibc_key_data_size = 16, .glibc_key_data_data = 8,                \
	.glibc_key_2ndlevel_size = 32

/* The PyObject header and PyBytesObject are the same in 3.11 to 3.13. */
#define OBJECT_COMMON                                                       \
	.obj_type = 0x8, .var_size = 0x10, .bytes_sval = 0x20,              \
	.unicode_length = 0x10, .unicode_state = 0x20,                      \
	.unicode_kind_shift = 2, .unicode_compact_bit = 5,                  \
	.unicode_ascii_bit = 6

static const struct pyoffsets py311 = {
	.major = 3, .minor = 11,
	.flags = PYOFF_F_CFRAME | PYOFF_F_IS_ENTRY,
	.rt_tss_initialized = 0x250, .rt_tss_key = 0x254,
	.rt_interp_head = 0x28,
	.interp_threads_head = 0x10,
	.ts_next = 0x8, .ts_native_thread_id = 0xa0, .ts_frame = 0x38,
	.cframe_current_frame = 0x8,
	.frame_code = 0x20, .frame_previous = 0x30, .frame_instr = 0x38,
	.frame_is_entry = 0x44, .frame_owner = 0x45,
	.frame_owner_cstack = PYOFF_NONE,
	.code_adaptive = 0xb8, .code_qualname = 0x80, .code_name = 0x78,
	.code_filename = 0x70, .code_firstlineno = 0x48,
	.code_linetable = 0x88,
	OBJECT_COMMON,
	/* 3.11 still has PyASCIIObject.wstr */
	.unicode_ascii_data = 48, .unicode_compact_data = 72,
	.unicode_utf8_length = 0x30, .unicode_utf8 = 0x38,
	GLIBC_2_36,
};

static const struct pyoffsets py312 = {
	.major = 3, .minor = 12,
	.flags = PYOFF_F_CFRAME | PYOFF_F_OWNER_CSTACK,
	.rt_tss_initialized = 0x608, .rt_tss_key = 0x60c,
	.rt_interp_head = 0x28,
	.interp_threads_head = 0x48,
	.ts_next = 0x8, .ts_native_thread_id = 0x90, .ts_frame = 0x38,
	.cframe_current_frame = 0x0,
	.frame_code = 0x0, .frame_previous = 0x8, .frame_instr = 0x38,
	.frame_is_entry = PYOFF_NONE, .frame_owner = 0x46,
	.frame_owner_cstack = 3,
	.code_adaptive = 0xc0, .code_qualname = 0x80, .code_name = 0x78,
	.code_filename = 0x70, .code_firstlineno = 0x44,
	.code_linetable = 0x88,
	OBJECT_COMMON,
	.unicode_ascii_data = 40, .unicode_compact_data = 56,
	.unicode_utf8_length = 0x28, .unicode_utf8 = 0x30,
	GLIBC_2_36,
};

static const struct pyoffsets py313 = {
	.major = 3, .minor = 13,
	.flags = PYOFF_F_OWNER_CSTACK | PYOFF_F_EXECUTABLE,
	.rt_tss_initialized = 0x870, .rt_tss_key = 0x874,
	.rt_interp_head = 0x278,
	.interp_threads_head = 0x1cb0,
	.ts_next = 0x8, .ts_native_thread_id = 0xa0, .ts_frame = 0x48,
	.cframe_current_frame = PYOFF_NONE,
	.frame_code = 0x0, .frame_previous = 0x8, .frame_instr = 0x38,
	.frame_is_entry = PYOFF_NONE, .frame_owner = 0x46,
	.frame_owner_cstack = 3,
	.code_adaptive = 0xc8, .code_qualname = 0x80, .code_name = 0x78,
	.code_filename = 0x70, .code_firstlineno = 0x44,
	.code_linetable = 0x88,
	OBJECT_COMMON,
	.unicode_ascii_data = 40, .unicode_compact_data = 56,
	.unicode_utf8_length = 0x28, .unicode_utf8 = 0x30,
	GLIBC_2_36,
};

_Static_assert(sizeof(struct pyoffsets) % 8 == 0, "pyoffsets: map value padding");
_Static_assert(sizeof(struct pyoffsets) == 40 * 4, "pyoffsets: layout changed");

int pyoffsets_for_version(int major, int minor, const struct pyoffsets **out)
{
	static const struct pyoffsets *const tables[] = { &py311, &py312, &py313 };

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if ((int)tables[i]->major == major && (int)tables[i]->minor == minor) {
			*out = tables[i];
			return 0;
		}
	}
	*out = NULL;
	return -EPROTONOSUPPORT;
}
