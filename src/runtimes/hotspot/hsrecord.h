/* SPDX-License-Identifier: MIT */
/*
 * HotSpot's runtime records in a capture (capfile.h RUNTIME, kind
 * RUNTIME_REC_HOTSPOT): what record resolved from a live JVM's memory and
 * report needs once the JVM is gone, to step and name its frames as live
 * mode does (hsruntime.c writes them, hsoffline.c keeps them):
 *  - JVM: the interpreter frame's layout (its Method* and bcp slots);
 *  - CODE: a CodeBlob a recorded stack ran in: its code [start, end), its
 *    kind, frame size (words) and where its frame is complete;
 *  - FRAME: a compiled caller's frame at a return address: the method,
 *    its source file and line at the call, the frames inlined there (no
 *    name: the frame there no longer reads, an earlier record's is void);
 *  - METHOD: a Method* an interpreted frame ran: its name and file, its
 *    bytecodes' address and size (a frame's bcp must lie in them) and its
 *    compressed line-number table.
 * Layout (little-endian): u8 version (HSREC_VERSION), u8 kind, u16 0, then
 * the kind's fixed fields and its strings (no NUL in them, each bounded).
 * Each record is written once per capture (hsruntime.c's dedupe); a later
 * one for the same code, pc or Method* replaces it for later samples.
 * The bytes are untrusted: hsrec__decode() checks every length and field.
 */
#ifndef SFPROF_HSRECORD_H
#define SFPROF_HSRECORD_H

#include <stddef.h>
#include <stdint.h>

#define HSREC_VERSION 1u
#define HSREC_INL_MAX 1023u	/* FRAME's inlined frames, bytes */
#define HSREC_LNT_MAX 4096u	/* METHOD's line-number table, bytes */
#define HSREC_CODE_MAX (1ull << 31) /* a blob's code, bytes */
#define HSREC_FRAME_WORDS 65536u /* a compiled frame's size, words */

enum hsrec_kind {
	HSREC_JVM = 1,
	HSREC_CODE = 2,
	HSREC_FRAME = 3,
	HSREC_METHOD = 4,
};

/* A decoded record; strings point into the bytes (len given, not NUL
 * terminated). */
struct hsrec {
	uint8_t kind;
	union {
		struct {
			int32_t fp_method, fp_bcp; /* bytes from fp */
			uint32_t has_interp;	   /* 0 or 1 */
		} jvm;
		struct {
			uint64_t start, end, frame_complete;
			uint32_t frame_size; /* words, 0 unknown */
			uint32_t kind;	     /* enum hotspot_kind */
		} code;
		struct {
			uint64_t pc;
			uint32_t line;
			const char *name, *file, *inl;
			size_t name_len, file_len, inl_len;
		} frame;
		struct {
			uint64_t method, code;
			uint32_t code_size;
			const char *name, *file;
			size_t name_len, file_len;
			const uint8_t *lnt;
			size_t lnt_len;
		} method;
	};
};

/* The size of r's bytes at most (a buffer this long always holds one). */
#define HSREC_BYTES_MAX (64u + 512u + 128u + HSREC_INL_MAX + HSREC_LNT_MAX)

/* r's bytes into buf[0..size): their length, or -EINVAL (a field out of
 * its bounds: the same checks as hsrec__decode()), -E2BIG. */
int hsrec__encode(const struct hsrec *r, uint8_t *buf, size_t size);
/* The record in data[0..len): 0 with *out, -ENOTSUP (another version),
 * -EINVAL (a length or field that does not hold). */
int hsrec__decode(const uint8_t *data, size_t len, struct hsrec *out);

#endif
