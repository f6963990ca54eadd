/* SPDX-License-Identifier: MIT */
/*
 * V8's runtime records in a capture (capfile.h RUNTIME, kind
 * RUNTIME_REC_V8): what record read from a live node's memory and report
 * needs once node is gone, to name its interpreted (Ignition) frames as
 * live mode does. Those frames run in node's shared interpreter builtins
 * (every function's PCs), so a capture's JIT entries by PC cannot name
 * them; their frame's slots in each event's stack snapshot can:
 *  - LAYOUT: the interpreter frame's slots (function, context, bytecode
 *    array, bytecode offset, bytes from fp), the heap's tag and Smi shift,
 *    and the bytecode offset's bias (BytecodeArray::data from the tagged
 *    pointer);
 *  - FUNC: a JSFunction an interpreted frame ran (its tagged address),
 *    the BytecodeArray it ran then (tagged) and that array's length, and
 *    the function's name as live mode gives it ("name script").
 * Report names an interpreted frame only when its function slot is a
 * FUNC's, its bytecode array slot that FUNC's array, its offset within
 * the array and its context slot an object (v8replay.h); else the frame
 * stays the builtin, never another function.
 * Layout (little-endian): u8 version (V8REC_VERSION), u8 kind, u16 0, then
 * the kind's fixed fields and the name (no NUL, 1..V8REC_NAME_MAX bytes).
 * Compiled code keeps its JIT entries by PC (named live from its
 * JSFunction slot; a newer entry of the same code is written again).
 * The bytes are untrusted: v8rec__decode() checks every length and field.
 */
#ifndef SFPROF_V8RECORD_H
#define SFPROF_V8RECORD_H

#include <stddef.h>
#include <stdint.h>

#define V8REC_VERSION 1u
#define V8REC_NAME_MAX 2047u	      /* a FUNC's name, bytes */
#define V8REC_SLOT_MAX 4096	      /* a frame slot's distance from fp */
#define V8REC_BYTECODE_MAX (1u << 28) /* a BytecodeArray's length */

enum v8rec_kind {
	V8REC_LAYOUT = 1,
	V8REC_FUNC = 2,
};

/* A decoded record; the name points into the bytes (not NUL-terminated). */
struct v8rec {
	uint8_t kind;
	union {
		struct {
			int32_t fp_function, fp_context, fp_bytecode_array, fp_bytecode_offset;
			uint64_t heap_tag, heap_tag_mask;
			uint32_t smi_shift;
			uint32_t offset_bias; /* BytecodeArray::data - heap_tag */
		} layout;
		struct {
			uint64_t fn, bytecode; /* tagged */
			uint32_t length;
			const char *name;
			size_t name_len;
		} func;
	};
};

/* The size of r's bytes at most. */
#define V8REC_BYTES_MAX (32u + V8REC_NAME_MAX)

/* r's bytes into buf[0..size): their length, or -EINVAL (a field out of
 * its bounds: v8rec__decode()'s checks), -E2BIG. */
int v8rec__encode(const struct v8rec *r, uint8_t *buf, size_t size);
/* The record in data[0..len): 0 with *out, -ENOTSUP (another version),
 * -EINVAL (a length or field that does not hold). */
int v8rec__decode(const uint8_t *data, size_t len, struct v8rec *out);

#endif
