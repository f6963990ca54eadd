// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: V8's capture records (v8record.h) as report reads
 * them. Input: records, each a u16 length then its bytes, then (after a
 * zero length) a stack snapshot. Each record v8rec__decode() accepts must
 * encode back to the same bytes and goes to an offline store
 * (v8replay.h), whose FUNC must then be found by its JSFunction with that
 * record's array and name; then an interpreted frame at every 8 bytes of
 * the snapshot is named from the store: a name it gives must be a
 * record's whose array and function are the frame's slots.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/runtime.h"
#include "runtimes/v8/v8record.h"
#include "runtimes/v8/v8replay.h"

#define PID 7
#define STACK_LO 0x7ffd00001000ull

static uint64_t fp_none(void *walk, size_t i)
{
	(void)walk;
	(void)i;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8_offline o = { 0 };
	static uint8_t buf[V8REC_BYTES_MAX];
	size_t at = 0;

	while (at + 2 <= size) {
		size_t len = data[at] | (size_t)data[at + 1] << 8;
		const uint8_t *d = data + at + 2;
		const struct v8_off_proc *p;
		const struct v8_off_func *f;
		struct v8rec r;
		int n;

		at += 2;
		if (!len)
			break; /* (the snapshot follows) */
		if (len > size - at)
			len = size - at;
		at += len;
		if (v8rec__decode(d, len, &r))
			continue;
		n = v8rec__encode(&r, buf, sizeof(buf));
		if (n < 0 || (size_t)n != len || memcmp(buf, d, len))
			abort(); /* (what decodes encodes back the same) */
		if (v8_off__record(&o, PID, d, len))
			break;
		if (!(p = v8_off__proc(&o, PID)))
			abort();
		if (r.kind == V8REC_FUNC) {
			f = v8_off__func(p, r.func.fn);
			if (!f || f->bytecode != r.func.bytecode || f->length != r.func.length ||
			    strlen(f->name) != r.func.name_len ||
			    memcmp(f->name, r.func.name, r.func.name_len))
				abort(); /* (the newest record of fn is this one) */
		}
	}
	if (at < size) {
		const struct v8_off_proc *p = v8_off__proc(&o, PID);
		struct runtime_frame fr = { .stack = data + at, .stack_lo = STACK_LO,
					    .stack_len = size - at, .frame_fp = fp_none,
					    .sym = "Builtins_InterpreterEntryTrampoline" };
		char name[V8REC_NAME_MAX + 1];

		for (size_t k = 0; k <= size - at + 16; k += 8) {
			uint64_t fp = STACK_LO + k, fn, ba;
			const struct v8_off_func *f;

			if (v8_off__interp_name(&o, PID, &fr, fp, name, sizeof(name)))
				continue;
			/* (a name only from a record its slots agree with) */
			memcpy(&fn, fr.stack + k + p->layout.layout.fp_function, 8);
			memcpy(&ba, fr.stack + k + p->layout.layout.fp_bytecode_array, 8);
			if (!(f = v8_off__func(p, fn)) || f->bytecode != ba || strcmp(f->name, name))
				abort();
		}
	}
	v8_off__free(&o);
	return 0;
}
