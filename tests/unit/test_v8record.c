// SPDX-License-Identifier: MIT
/*
 * V8's capture records (runtimes/v8/v8record.h) and what report makes of
 * them (v8replay.h): each kind round-trips, a bad length or field is
 * refused on both sides, record writes the layout once and a function's
 * record again only when it changed, a newer record of one JSFunction
 * replaces the older, and an interpreted frame is named from its slots in
 * the snapshot only when they agree with a record (its function, its
 * BytecodeArray, the offset within it, an object as its context), else
 * not at all (never another function); the capfile seed of
 * tests/fuzz/gen_v8record_corpus.py carries records that decode (run from
 * the repository's root).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "runtimes/runtime.h"
#include "runtimes/v8/v8reader.h"
#include "runtimes/v8/v8record.h"
#include "runtimes/v8/v8replay.h"
#include "testlib.h"

static uint8_t buf[V8REC_BYTES_MAX];

static int enc(const struct v8rec *r)
{
	return v8rec__encode(r, buf, sizeof(buf));
}

/* node 20's interpreter frame (x64): slots below fp */
static struct v8rec layout_rec(void)
{
	struct v8rec r = { .kind = V8REC_LAYOUT };

	r.layout.fp_function = -16;
	r.layout.fp_context = -8;
	r.layout.fp_bytecode_array = -24;
	r.layout.fp_bytecode_offset = -32;
	r.layout.heap_tag = 1;
	r.layout.heap_tag_mask = 3;
	r.layout.smi_shift = 32;
	r.layout.offset_bias = 53; /* BytecodeArray::data 54, tag 1 */
	return r;
}

static struct v8rec func_rec(uint64_t fn, uint64_t ba, uint32_t len, const char *name)
{
	struct v8rec r = { .kind = V8REC_FUNC };

	r.func.fn = fn;
	r.func.bytecode = ba;
	r.func.length = len;
	r.func.name = name;
	r.func.name_len = strlen(name);
	return r;
}

TEST(each_v8_record_kind_should_round_trip)
{
	struct v8rec r = layout_rec(), d;
	int n;

	CHECK((n = enc(&r)) > 0);
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), 0);
	CHECK_INT(d.kind, V8REC_LAYOUT);
	CHECK_INT(d.layout.fp_function, -16);
	CHECK_INT(d.layout.fp_context, -8);
	CHECK_INT(d.layout.fp_bytecode_array, -24);
	CHECK_INT(d.layout.fp_bytecode_offset, -32);
	CHECK_U64(d.layout.heap_tag, 1);
	CHECK_U64(d.layout.heap_tag_mask, 3);
	CHECK_INT(d.layout.smi_shift, 32);
	CHECK_INT(d.layout.offset_bias, 53);

	r = func_rec(0x2a0000101, 0x2a0002001, 77, "outerJS /tmp/app.js");
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), 0);
	CHECK_INT(d.kind, V8REC_FUNC);
	CHECK_U64(d.func.fn, 0x2a0000101);
	CHECK_U64(d.func.bytecode, 0x2a0002001);
	CHECK_INT(d.func.length, 77);
	CHECK_INT((int)d.func.name_len, (int)strlen("outerJS /tmp/app.js"));
	CHECK(!memcmp(d.func.name, "outerJS /tmp/app.js", d.func.name_len));
}

TEST(a_v8_record_with_a_bad_length_or_field_should_be_refused)
{
	struct v8rec r = func_rec(0x2a0000101, 0x2a0002001, 77, "innerJS"), d;
	char big[V8REC_NAME_MAX + 2];
	int n;

	CHECK((n = enc(&r)) > 0);
	CHECK_INT(v8rec__decode(buf, 3, &d), -EINVAL);
	CHECK_INT(v8rec__decode(buf, (size_t)n - 1, &d), -EINVAL); /* name cut */
	buf[0] = 2;
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -ENOTSUP);
	buf[0] = V8REC_VERSION;
	buf[3] = 1; /* the reserved half-word */
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);
	buf[3] = 0;
	buf[1] = 9; /* no such kind */
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);
	buf[1] = V8REC_FUNC;
	buf[n - 2] = 0; /* a NUL in the name */
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);
	CHECK_INT(enc(&r), n);
	buf[4 + 16] = 0xff; /* the array's length over 2^28 */
	buf[4 + 19] = 0xff;
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);

	/* the encoder refuses what the decoder would */
	CHECK_INT(enc(&(struct v8rec){ .kind = 9 }), -EINVAL);
	r.func.fn = 8; /* not a heap address */
	CHECK_INT(enc(&r), -EINVAL);
	r = func_rec(0x2a0000101, 0x2a0002001, 77, "");
	CHECK_INT(enc(&r), -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	r = func_rec(0x2a0000101, 0x2a0002001, 77, big);
	CHECK_INT(enc(&r), -EINVAL);
	r = layout_rec();
	r.layout.fp_function = -12; /* not a slot */
	CHECK_INT(enc(&r), -EINVAL);
	r = layout_rec();
	r.layout.heap_tag = 4; /* outside its mask */
	CHECK_INT(enc(&r), -EINVAL);
	r = layout_rec();
	r.layout.fp_context = 8192;
	CHECK_INT(enc(&r), -EINVAL);
	r = layout_rec();
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(v8rec__decode(buf, (size_t)n + 1, &d), -EINVAL);
	buf[4 + 32] = 64; /* the Smi shift */
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);
	CHECK_INT(enc(&r), n);
	buf[4 + 36] = 0xff; /* the offset's bias */
	buf[4 + 37] = 0xff;
	CHECK_INT(v8rec__decode(buf, (size_t)n, &d), -EINVAL);
}

#define STACK_LO 0x7ffd00001000ull
#define FP (STACK_LO + 128)
static uint8_t stack[256];

static uint64_t fp_of(void *walk, size_t i)
{
	(void)walk;
	return i == 0 ? FP : 0;
}

/* the interpreted frame's slots at FP (layout_rec()'s) */
static void slots(uint64_t cx, uint64_t fn, uint64_t ba, int64_t off)
{
	uint64_t smi = (uint64_t)(off + 53) << 32;

	memcpy(stack + 128 - 8, &cx, 8);
	memcpy(stack + 128 - 16, &fn, 8);
	memcpy(stack + 128 - 24, &ba, 8);
	memcpy(stack + 128 - 32, &smi, 8);
}

static int name_of(const struct v8_offline *o, size_t stack_len, char *name, size_t size)
{
	struct runtime_frame f = { .pc = 0x55550000, .stack = stack,
				   .stack_lo = STACK_LO, .stack_len = stack_len,
				   .frame_fp = fp_of, .sym = "Builtins_InterpreterEntryTrampoline" };

	name[0] = 0;
	return v8_off__interp_name(o, 7, &f, FP, name, size);
}

static void add(struct v8_offline *o, const struct v8rec *r)
{
	int n = enc(r);

	CHECK(n > 0);
	CHECK_INT(v8_off__record(o, 7, buf, (size_t)n), 0);
}

TEST(an_interpreted_frame_should_be_named_only_when_its_slots_agree_with_a_record)
{
	struct v8_offline o = { 0 };
	struct v8rec r = func_rec(0x2a0000101, 0x2a0002001, 77, "outerJS /tmp/app.js");
	char name[64];

	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 10);
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ESRCH);
	add(&o, &r);
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT); /* no layout */
	r = layout_rec();
	add(&o, &r);
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), 0);
	CHECK_STR(name, "outerJS /tmp/app.js");
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, -1); /* at its entry */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), 0);
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 76); /* its last byte */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), 0);
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 77); /* past its bytecodes */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2a0000401, 0x2a0000101, 0x2a0003001, 10); /* another array */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2a0000401, 0x2a0000201, 0x2a0002001, 10); /* another function */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2400000000, 0x2a0000101, 0x2a0002001, 10); /* a typed frame's marker */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 10);
	memset(stack + 128 - 32, 0x01, 1); /* the offset not a Smi */
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 10);
	/* the snapshot ends below the context slot */
	CHECK_INT(name_of(&o, 128 - 24, name, sizeof(name)), -ENOENT);
	CHECK_INT(name_of(&o, sizeof(stack), name, 8), -ENAMETOOLONG);
	/* a newer record of the same JSFunction replaces it */
	r = func_rec(0x2a0000101, 0x2a0003001, 20, "innerJS /tmp/app.js");
	add(&o, &r);
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), -ENOENT);
	slots(0x2a0000401, 0x2a0000101, 0x2a0003001, 10);
	CHECK_INT(name_of(&o, sizeof(stack), name, sizeof(name)), 0);
	CHECK_STR(name, "innerJS /tmp/app.js");
	CHECK_INT(v8_off__record(&o, 7, buf, 3), -EINVAL);
	v8_off__free(&o);
}

/* runtime_proc.write: the records into a store, counted */
struct sink {
	struct v8_offline o;
	int n, layouts;
};

static int to_sink(void *ctx, unsigned type, uint32_t pid, const uint8_t *d, size_t len)
{
	struct sink *s = ctx;

	if (type != RUNTIME_REC_V8 || pid != 7)
		return -EINVAL;
	s->n++;
	s->layouts += d[1] == V8REC_LAYOUT;
	return v8_off__record(&s->o, pid, d, len);
}

TEST(record_should_write_the_layout_once_and_a_function_again_only_when_it_changed)
{
	struct sink s = { 0 };
	struct runtime_proc p = { .write = to_sink, .write_ctx = &s };
	struct v8_layout l = { .fp_function = -16, .fp_context = -8, .fp_bytecode_array = -24,
			       .fp_bytecode_offset = -32, .heap_tag = 1, .heap_tag_mask = 3,
			       .smi_shift = 32, .bytecode_data = 54, .has_interp = 1 };
	struct v8_rec_state rs = { 0 };
	char name[64];

	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2a0000101, 0x2a0002001, 77, "outerJS"), 0);
	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2a0000101, 0x2a0002001, 77, "outerJS"), 0);
	CHECK_INT(s.n, 2);
	CHECK_INT(s.layouts, 1);
	slots(0x2a0000401, 0x2a0000101, 0x2a0002001, 10);
	CHECK_INT(name_of(&s.o, sizeof(stack), name, sizeof(name)), 0);
	CHECK_STR(name, "outerJS");
	/* (the GC moved another function's objects there: written again) */
	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2a0000101, 0x2a0002001, 77, "innerJS"), 0);
	CHECK_INT(s.n, 3);
	CHECK_INT(name_of(&s.o, sizeof(stack), name, sizeof(name)), 0);
	CHECK_STR(name, "innerJS");
	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2a0000101, 0x2a0004001, 77, "innerJS"), 0);
	CHECK_INT(s.n, 4);
	for (uint64_t k = 0; k < 1000; k++) /* (the table grows) */
		CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2b0000001 + 8 * k, 0x2a0002001, 9, "f"), 0);
	CHECK_INT(s.n, 1004);
	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2b0000001 + 8 * 999, 0x2a0002001, 9, "f"), 0);
	CHECK_INT(s.n, 1004);
	CHECK_INT(v8_rec__func(&rs, &p, 7, &l, 0x2b0000001, 0x2a0002001, 9, ""), -EINVAL);
	CHECK_INT(s.layouts, 1);
	v8_rec__free(&rs);
	v8_off__free(&s.o);
}

TEST(the_capfile_seed_should_carry_v8_records_that_decode)
{
	struct capfile_reader *cr;
	struct capfile_record rec;
	struct v8rec d;
	int err = 0, rc, n = 0;

	cr = capfile_reader__open("tests/fuzz/corpus/capfile/runtime_v8.cap", &err);
	CHECK(cr);
	while ((rc = capfile_reader__next(cr, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_RUNTIME)
			continue;
		CHECK_INT(rec.runtime.kind, RUNTIME_REC_V8);
		CHECK_INT(v8rec__decode(rec.runtime.data, rec.runtime.len, &d), 0);
		n++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 3);
	capfile_reader__free(cr);
}

TEST_MAIN()
