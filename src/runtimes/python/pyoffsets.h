/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Per-version CPython struct offsets and sizes, shared by the BPF walk of
 * _PyInterpreterFrame chains and the user-space code-object reader
 * (src/runtimes/python/pyreader.h). A POD of __u32 only, no pointers: user space may
 * copy one into a BPF map as is. Includable from BPF (vmlinux.h first, as
 * with sfprof_event.h) and from user space.
 *
 * All offsets are bytes from the start of the named struct; 64-bit
 * little-endian x86_64 only. PYOFF_NONE marks a field a version does not
 * have. Values come from the DWARF of the interpreters named in
 * src/runtimes/python/pyoffsets.c; tests/unit/test_pyoffsets.c checks the
 * 3.11 table and the glibc fields against python3.11-dbg and libc6-dbg.
 *
 * Finding a thread's PyThreadState (the BPF side), two ways:
 *
 *  a) Through the GIL-state TSS key (3.11, also valid 3.12/3.13 for
 *     threads that hold or last held the GIL via PyGILState / threading):
 *       rt  = load bias + pyversion_info.runtime_addr        (&_PyRuntime)
 *       if *(s32 *)(rt + rt_tss_initialized) == 0: not initialised yet
 *       key = *(u32 *)(rt + rt_tss_key)                      (a pthread_key_t)
 *       tp  = task->thread.fsbase  (x86_64: tp == struct pthread *)
 *       if key < glibc_key_2ndlevel_size (32):
 *         tstate = *(u64 *)(tp + glibc_specific_1stblock
 *                               + key * glibc_key_data_size
 *                               + glibc_key_data_data)
 *       else: two-level: blk = *(u64 *)(tp + glibc_specific + (key/32)*8),
 *         tstate = *(u64 *)(blk + (key%32) * key_data_size + key_data_data)
 *       (CPython allocates its key at startup: in practice key < 32.)
 *     tests/unit/test_pywalk.c checks this against method c on live 3.11,
 *     3.12 and 3.13 threads (threading.Thread), with tp = pthread_self().
 *
 *  b) 3.12+: _Py_tss_tstate, a __thread PyThreadState * in libpython or
 *     the executable (a LOCAL TLS symbol: only in .symtab, so only when the
 *     binary is not stripped of it; pyversion.h reports it when found).
 *     Its st_value is the offset inside the module's PT_TLS block. For
 *     the main executable (static TLS, variant II): the variable is at
 *       tp - round_up(PT_TLS p_memsz, PT_TLS p_align) + st_value
 *     (pyversion_info.tls_tp_offset, negative, precomputed). For a shared
 *     libpython the block is wherever ld.so put it: read tp->dtv (tp + 8),
 *     dtv[l_tls_modid].pointer + st_value; the modid is the link_map's,
 *     not in the file: method a) is simpler there.
 *
 *  c) Every thread, without glibc: _PyRuntime + rt_interp_head ->
 *     PyInterpreterState; + interp_threads_head -> first PyThreadState;
 *     follow ts_next; pick the one whose ts_native_thread_id == tid.
 *
 * The current frame of a PyThreadState (the whole walk below, methods a
 * and c, is done from user space on live interpreters by test_pywalk.c,
 * frame by frame against the child's sys._current_frames()):
 *   flags & PYOFF_F_CFRAME (3.11, 3.12):
 *     cf = *(u64 *)(ts + ts_frame); frame = *(u64 *)(cf + cframe_current_frame)
 *   else (3.13): frame = *(u64 *)(ts + ts_frame)
 *
 * One _PyInterpreterFrame:
 *   code  = *(u64 *)(frame + frame_code)    (3.13: f_executable, a PyObject
 *           that is a PyCodeObject for Python frames; check its ob_type)
 *   instr = *(u64 *)(frame + frame_instr)   (3.11/3.12 prev_instr: the
 *           last instruction started; 3.13 instr_ptr: the current one)
 *   the instruction's byte offset in the bytecode, as `dis` prints it:
 *     instr_offset = instr - (code + code_adaptive)    (a multiple of 2)
 *   previous = *(u64 *)(frame + frame_previous)
 *   entry marker (one C-level _PyEval_EvalFrameDefault call ends here):
 *     flags & PYOFF_F_IS_ENTRY (3.11): *(u8 *)(frame + frame_is_entry) != 0
 *       marks the frame the C call started with (the oldest of that run).
 *     else (3.12+): a frame with *(u8 *)(frame + frame_owner) ==
 *       frame_owner_cstack is the C call's own shim frame: it is not a
 *       Python function, skip it; the frame above it began the C call.
 *
 * Strings (PyUnicodeObject, for co_qualname/co_name/co_filename):
 *   length = *(s64 *)(u + unicode_length)  (code points)
 *   state  = *(u32 *)(u + unicode_state):
 *     kind = (state >> unicode_kind_shift) & 7  (1: latin1, 2: UCS2, 4: UCS4)
 *     compact = state bit unicode_compact_bit, ascii = bit unicode_ascii_bit
 *   compact && ascii: the characters follow at u + unicode_ascii_data
 *   compact && !ascii: at u + unicode_compact_data, kind bytes each; the
 *     cached UTF-8 form (may be NULL) at *(u64 *)(u + unicode_utf8),
 *     length *(s64 *)(u + unicode_utf8_length) bytes
 * Bytes (co_linetable): size = *(s64 *)(b + var_size), bytes at b + bytes_sval.
 */
#ifndef SFPROF_PYOFFSETS_H
#define SFPROF_PYOFFSETS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PYOFF_NONE 0xffffffffu

enum pyoffsets_flag {
	PYOFF_F_CFRAME = 1u << 0,   /* ts_frame is a _PyCFrame * (3.11, 3.12) */
	PYOFF_F_IS_ENTRY = 1u << 1, /* frame_is_entry is valid (3.11) */
	PYOFF_F_OWNER_CSTACK = 1u << 2, /* shim entry frames, owner == frame_owner_cstack (3.12+) */
	PYOFF_F_EXECUTABLE = 1u << 3, /* frame_code is f_executable: may be a non-code object (3.13) */
};

struct pyoffsets {
	__u32 major, minor;	  /* 3, 11 */
	__u32 flags;		  /* enum pyoffsets_flag */

	/* _PyRuntimeState */
	__u32 rt_tss_initialized; /* gilstate.autoTSSkey._is_initialized (int); 3.12+: autoTSSkey */
	__u32 rt_tss_key;	  /* ... ._key (pthread_key_t, u32) */
	__u32 rt_interp_head;	  /* interpreters.head (PyInterpreterState *) */

	/* PyInterpreterState */
	__u32 interp_threads_head; /* threads.head (PyThreadState *) */

	/* PyThreadState */
	__u32 ts_next;		   /* next (PyThreadState *) */
	__u32 ts_native_thread_id; /* native_thread_id (unsigned long): the TID */
	__u32 ts_frame;		   /* cframe (_PyCFrame *), or 3.13 current_frame */
	__u32 cframe_current_frame; /* _PyCFrame.current_frame; PYOFF_NONE on 3.13 */

	/* _PyInterpreterFrame */
	__u32 frame_code;	  /* f_code (3.11, 3.12) / f_executable (3.13) */
	__u32 frame_previous;	  /* previous */
	__u32 frame_instr;	  /* prev_instr (3.11, 3.12) / instr_ptr (3.13) */
	__u32 frame_is_entry;	  /* is_entry (_Bool); PYOFF_NONE on 3.12+ */
	__u32 frame_owner;	  /* owner (char) */
	__u32 frame_owner_cstack; /* FRAME_OWNED_BY_CSTACK; PYOFF_NONE on 3.11 */

	/* PyCodeObject */
	__u32 code_adaptive;	  /* co_code_adaptive: the bytecode */
	__u32 code_qualname;	  /* co_qualname (PyUnicodeObject *) */
	__u32 code_name;	  /* co_name */
	__u32 code_filename;	  /* co_filename */
	__u32 code_firstlineno;	  /* co_firstlineno (int) */
	__u32 code_linetable;	  /* co_linetable (PyBytesObject *) */

	/* PyObject / PyVarObject */
	__u32 obj_type;		  /* ob_type */
	__u32 var_size;		  /* ob_size */

	/* PyASCIIObject / PyCompactUnicodeObject */
	__u32 unicode_length;	  /* length (Py_ssize_t) */
	__u32 unicode_state;	  /* state (the bit-field word, u32) */
	__u32 unicode_kind_shift; /* bit of state.kind (3 bits) */
	__u32 unicode_compact_bit;
	__u32 unicode_ascii_bit;
	__u32 unicode_ascii_data;  /* sizeof(PyASCIIObject) */
	__u32 unicode_compact_data; /* sizeof(PyCompactUnicodeObject) */
	__u32 unicode_utf8_length; /* PyCompactUnicodeObject.utf8_length */
	__u32 unicode_utf8;	   /* PyCompactUnicodeObject.utf8 (char *) */

	/* PyBytesObject */
	__u32 bytes_sval;	   /* ob_sval */

	/* glibc 2.36 x86_64 struct pthread (not Python's: same in every entry) */
	__u32 glibc_specific_1stblock; /* specific_1stblock[32] */
	__u32 glibc_specific;	       /* specific[32] (second level) */
	__u32 glibc_key_data_size;     /* sizeof(struct pthread_key_data) */
	__u32 glibc_key_data_data;     /* pthread_key_data.data */
	__u32 glibc_key_2ndlevel_size; /* PTHREAD_KEY_2NDLEVEL_SIZE */
};

#ifndef __bpf__
/*
 * The table for CPython major.minor: 0, or -EPROTONOSUPPORT for a version
 * without one (the caller says "unsupported CPython X.Y" once and keeps
 * the native stacks). *out points into static storage: never freed.
 */
int pyoffsets_for_version(int major, int minor, const struct pyoffsets **out);
#endif

#endif
