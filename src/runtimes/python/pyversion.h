/* SPDX-License-Identifier: MIT */
/*
 * Is this binary CPython, and which version? Decided from one ELF image
 * (the main executable, or libpython3.X.so) through the ELF layer:
 *
 *  - it defines `_PyRuntime` (dynamic symbols, else .symtab): CPython's
 *    one _PyRuntimeState, the root of the thread-state walk. A binary
 *    that only references it (UND: a program linked with libpython) is
 *    not the interpreter; the libpython it maps is.
 *  - the version: 3.11+ export `Py_Version` (const unsigned long =
 *    PY_VERSION_HEX, in .rodata), read from the file's bytes. Without it
 *    (older versions, or a symbol outside the file's bytes), the soname
 *    or file name "libpython3.X" / "python3.X" says major.minor.
 *  - 3.12+: `_Py_tss_tstate`, the __thread PyThreadState * (a LOCAL
 *    STT_TLS symbol, only in an unstripped .symtab), with the PT_TLS
 *    segment, so the BPF side can find it from the thread pointer
 *    (src/runtimes/python/pyoffsets.h, method b).
 *
 * The image is hostile: every symbol value and segment is checked against
 * the image before a byte is read. Addresses are ELF virtual addresses
 * (st_value): at run time, add the mapping's load bias
 * (elfread__mapping_bias()).
 */
#ifndef SFPROF_PYVERSION_H
#define SFPROF_PYVERSION_H

#include <stdint.h>

struct elfread;
struct pyoffsets;

enum pyversion_flag {
	PYVERSION_F_PY_VERSION = 1u << 0, /* the version came from Py_Version */
	PYVERSION_F_NAME = 1u << 1,	  /* ... from the soname or file name */
	PYVERSION_F_TLS = 1u << 2,	  /* tss_tstate_tls and tls_* are valid */
	PYVERSION_F_TLS_STATIC = 1u << 3, /* ... and the image is the executable:
					     tls_tp_offset is valid */
	PYVERSION_F_EXECUTABLE = 1u << 4, /* the image is a program, not a library */
};

struct pyversion_info {
	uint32_t major, minor, micro; /* micro: 0 when only the name said */
	uint32_t hexversion;	      /* PY_VERSION_HEX, 0 without Py_Version */
	uint32_t flags;		      /* enum pyversion_flag */
	uint64_t runtime_addr;	      /* ELF vaddr of _PyRuntime */
	uint64_t runtime_size;	      /* its st_size */
	/* ELF vaddrs of the type objects, to check a pointer's ob_type
	 * (pyreader.h); 0 when the symbol is absent */
	uint64_t code_type_addr;      /* PyCode_Type */
	uint64_t unicode_type_addr;   /* PyUnicode_Type */
	uint64_t bytes_type_addr;     /* PyBytes_Type */
	/* _Py_tss_tstate (PYVERSION_F_TLS) */
	uint64_t tss_tstate_tls;      /* st_value: offset in the PT_TLS block */
	uint64_t tls_memsz, tls_align; /* the PT_TLS segment */
	int64_t tls_tp_offset;	      /* PYVERSION_F_TLS_STATIC: the variable is
					 at thread pointer + this (negative) */
	/* The offset table of this version; NULL when unsupported. */
	const struct pyoffsets *offsets;
};

/* Whether a file may be CPython by its name (the last component of
 * path): python3.X or libpython3.X.so..., the only images searched. */
int pyversion_name_is_python(const char *path);

/*
 * Fills *out. `path` (may be NULL) is the file's name, the last fallback
 * for the version. Returns:
 *   0                 CPython of a supported version (out->offsets set)
 *   -EPROTONOSUPPORT  CPython, but a version without offsets (out->major,
 *                     minor say which, when known; offsets NULL)
 *   -ENOENT           not CPython (no _PyRuntime definition)
 *   -EINVAL           e or out NULL
 */
int pyversion_detect(const struct elfread *e, const char *path,
		     struct pyversion_info *out);

/* "CPython 3.11.2", "CPython 3.10", "not CPython": for messages. Returns buf. */
char *pyversion_describe(const struct pyversion_info *v, int ret, char *buf,
			 unsigned len);

#endif
