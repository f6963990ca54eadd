/* SPDX-License-Identifier: MIT */
/* What the capture writer (capfile_write.c) and reader (capfile.c) share. */
#ifndef SFPROF_CAPFILE_INT_H
#define SFPROF_CAPFILE_INT_H

#include <stddef.h>

#define SFPROF_VERSION_STR "0.1"
#define MAPPING_FIXED 64u  /* MAPPING: bytes before the build-id */
#define PATH_MAX_LEN 4096u /* MAPPING path, KSYM name */
#define TASK_SIZE 24u     /* TASK payload */
#define JIT_FIXED 24u     /* JIT: pid, 0, start, size, then the name */
#define PYTRAMP_FIXED 8u  /* PYTRAMP: pid, length, then the code */
#define RUNTIME_FIXED 16u /* RUNTIME: kind, pid, length, 0, then the bytes */

/* Zero bytes that pad a record of n bytes to a multiple of 8. */
static inline size_t pad8(size_t n)
{
	return (8 - (n & 7)) & 7;
}

#endif
