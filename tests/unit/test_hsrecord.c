// SPDX-License-Identifier: MIT
/*
 * HotSpot's capture records (runtimes/hotspot/hsrecord.h) and what report
 * makes of them (hsoffline.h, hsreplay.h): each kind round-trips, a bad
 * length or field is refused, a newer blob replaces the ones it overlaps,
 * a voiding frame record unnames its pc, and an interpreted frame is named
 * from its slots only when its bcp lies in its Method's recorded bytecodes
 * (else "[interpreter]", never another method). Run from the repository's
 * root (the capfile seed of tests/fuzz/gen_hsrecord_corpus.py).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsoffline.h"
#include "runtimes/hotspot/hsrecord.h"
#include "runtimes/hotspot/hsreplay.h"
#include "runtimes/runtime.h"
#include "testlib.h"

static uint8_t buf[HSREC_BYTES_MAX];

static int enc(const struct hsrec *r)
{
	return hsrec__encode(r, buf, sizeof(buf));
}

TEST(each_hotspot_record_kind_should_round_trip)
{
	static const uint8_t lnt[] = { 6, 4 << 3, (5 << 3) | 1, 0 };
	struct hsrec r = { .kind = HSREC_CODE }, d;
	int n;

	r.code.start = 0x7f0000001000;
	r.code.end = 0x7f0000001400;
	r.code.frame_complete = 0x7f0000001010;
	r.code.frame_size = 6;
	r.code.kind = HOTSPOT_NMETHOD;
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), 0);
	CHECK_INT(d.kind, HSREC_CODE);
	CHECK(d.code.start == r.code.start && d.code.end == r.code.end &&
	      d.code.frame_complete == r.code.frame_complete);
	CHECK_INT(d.code.frame_size, 6);

	r = (struct hsrec){ .kind = HSREC_FRAME };
	r.frame.pc = 0x7f0000001233;
	r.frame.line = 31;
	r.frame.name = "HsChain.outerLoop";
	r.frame.name_len = strlen(r.frame.name);
	r.frame.file = "HsChain.java";
	r.frame.file_len = strlen(r.frame.file);
	r.frame.inl = "HsChain.countPrimes\tHsChain.java\t25\n";
	r.frame.inl_len = strlen(r.frame.inl);
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), 0);
	CHECK_INT(d.frame.line, 31);
	CHECK(d.frame.name_len == r.frame.name_len &&
	      !memcmp(d.frame.name, r.frame.name, r.frame.name_len));
	CHECK(d.frame.inl_len == r.frame.inl_len &&
	      !memcmp(d.frame.inl, r.frame.inl, r.frame.inl_len));

	r = (struct hsrec){ .kind = HSREC_METHOD };
	r.method.method = 0x7f1000000008;
	r.method.code = 0x7f1000000100;
	r.method.code_size = 40;
	r.method.name = "HsChain.isPrime";
	r.method.name_len = strlen(r.method.name);
	r.method.lnt = lnt;
	r.method.lnt_len = sizeof(lnt);
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), 0);
	CHECK(d.method.method == r.method.method && d.method.code == r.method.code);
	CHECK_INT(d.method.code_size, 40);
	CHECK(d.method.lnt_len == sizeof(lnt) && !memcmp(d.method.lnt, lnt, sizeof(lnt)));

	r = (struct hsrec){ .kind = HSREC_JVM };
	r.jvm.fp_method = -24;
	r.jvm.fp_bcp = -56;
	r.jvm.has_interp = 1;
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), 0);
	CHECK_INT(d.jvm.fp_method, -24);
	CHECK_INT(d.jvm.fp_bcp, -56);
}

TEST(a_hotspot_record_with_a_bad_length_or_field_should_be_refused)
{
	struct hsrec r = { .kind = HSREC_FRAME }, d;
	int n;

	r.frame.pc = 0x1000;
	r.frame.name = "A.b";
	r.frame.name_len = 3;
	CHECK((n = enc(&r)) > 0);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), 0);
	/* a byte short or long, the name's length past the record */
	CHECK_INT(hsrec__decode(buf, (size_t)n - 1, &d), -EINVAL);
	CHECK_INT(hsrec__decode(buf, (size_t)n + 1, &d), -EINVAL);
	buf[4 + 12] = 200;
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -EINVAL);
	buf[4 + 12] = 3;
	/* a NUL in the name, another version, the reserved half-word set */
	buf[4 + 20 + 1] = 0;
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -EINVAL);
	buf[4 + 20 + 1] = '.';
	buf[0] = 2;
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -ENOTSUP);
	buf[0] = 1;
	buf[2] = 1;
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -EINVAL);
	CHECK_INT(hsrec__decode(buf, 3, &d), -EINVAL);

	/* a blob that is empty or wraps, of no kind, a frame too big */
	r = (struct hsrec){ .kind = HSREC_CODE };
	r.code.start = r.code.end = r.code.frame_complete = 0x1000;
	r.code.kind = HOTSPOT_NMETHOD;
	CHECK_INT(enc(&r), -EINVAL);
	r.code.end = 0x2000;
	r.code.kind = 9;
	CHECK_INT(enc(&r), -EINVAL);
	r.code.kind = HOTSPOT_NMETHOD;
	r.code.frame_size = HSREC_FRAME_WORDS + 1;
	CHECK_INT(enc(&r), -EINVAL);
	r.code.frame_size = 4;
	CHECK((n = enc(&r)) > 0);
	buf[4 + 8 + 7] = 0; /* end below start */
	memset(buf + 4 + 8, 0, 8);
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -EINVAL);

	/* a Method* not aligned, a line table longer than its bound */
	r = (struct hsrec){ .kind = HSREC_METHOD };
	r.method.method = 0x1001;
	r.method.code = 0x2000;
	r.method.name = "A.b";
	r.method.name_len = 3;
	CHECK_INT(enc(&r), -EINVAL);
	r.method.method = 0x1000;
	CHECK((n = enc(&r)) > 0);
	buf[4 + 24 + 1] = 0x10; /* lnt_len 4096 + ... */
	CHECK_INT(hsrec__decode(buf, (size_t)n, &d), -EINVAL);
}

static void add(struct hs_offline *o, const struct hsrec *r)
{
	int n = enc(r);

	CHECK(n > 0);
	CHECK_INT(hs_off__record(o, 7, buf, (size_t)n), 0);
}

static struct hsrec code_rec(uint64_t start, uint64_t end, uint32_t fs, uint32_t kind)
{
	struct hsrec r = { .kind = HSREC_CODE };

	r.code.start = r.code.frame_complete = start;
	r.code.end = end;
	r.code.frame_size = fs;
	r.code.kind = kind;
	return r;
}

TEST(a_newer_blob_should_replace_every_older_one_it_overlaps)
{
	struct hs_offline o = { 0 };
	struct hotspot_code c;
	struct hsrec r;

	r = code_rec(0x1000, 0x1400, 6, HOTSPOT_NMETHOD);
	add(&o, &r);
	r = code_rec(0x1800, 0x1c00, 8, HOTSPOT_NMETHOD);
	add(&o, &r);
	r = code_rec(0x3000, 0x3100, 2, HOTSPOT_NMETHOD);
	add(&o, &r);
	CHECK_INT(hs_off__code(&o, 7, 0x1200, &c), 0);
	CHECK_INT(c.frame_size, 6);
	CHECK_INT(hs_off__code(&o, 7, 0x1500, &c), -ENOENT);
	CHECK_INT(hs_off__code(&o, 8, 0x1200, &c), -ENOENT); /* (another pid) */
	/* one over both: the newest there */
	r = code_rec(0x1300, 0x1900, 10, HOTSPOT_NMETHOD);
	add(&o, &r);
	CHECK_INT(hs_off__code(&o, 7, 0x1200, &c), -ENOENT);
	CHECK_INT(hs_off__code(&o, 7, 0x1300, &c), 0);
	CHECK_INT(c.frame_size, 10);
	CHECK_INT(hs_off__code(&o, 7, 0x1a00, &c), -ENOENT);
	CHECK_INT(hs_off__code(&o, 7, 0x3000, &c), 0);
	CHECK_INT(c.frame_size, 2);
	CHECK_INT((int)hs_offline__proc(&o, 7)->nr_codes, 2);
	hs_offline__free(&o);
}

/* A stack snapshot whose frame at fp holds Method* and bcp in the slots. */
static uint8_t stack[256];
#define STACK_LO 0x7ffd00000000ull
#define FP (STACK_LO + 128)

static uint64_t fp_of(void *walk, size_t i)
{
	(void)walk;
	(void)i;
	return FP;
}

static void slots(uint64_t method, uint64_t bcp)
{
	memcpy(stack + 128 - 24, &method, 8);
	memcpy(stack + 128 - 56, &bcp, 8);
}

static int name_of(const struct hs_offline *o, uint64_t pc, bool leaf, char *name, size_t size,
		   uint32_t *line)
{
	char file[64] = "", inl[256] = "";
	struct runtime_frame f = { .pc = pc, .leaf = leaf, .stack = stack, .stack_lo = STACK_LO,
				   .stack_len = sizeof(stack), .frame_fp = fp_of,
				   .file = file, .file_size = sizeof(file), .line = line,
				   .inl = inl, .inl_size = sizeof(inl) };

	*line = 0;
	return hs_off__frame_name(o, 7, &f, name, size);
}

TEST(an_interpreted_frame_should_be_named_only_by_a_method_its_bcp_agrees_with)
{
	/* (bci, line) (0, 14) wide (zigzag 28), (4, 14), (9, 15), the end */
	static const uint8_t lnt[] = { 0xff, 0, 28, 4 << 3, (5 << 3) | 1, 0 };
	struct hs_offline o = { 0 };
	struct hsrec r = { .kind = HSREC_JVM };
	char name[256];
	uint32_t line;

	CHECK_INT(name_of(&o, 0x5000, false, name, sizeof(name), &line), -ESRCH);
	r.jvm.fp_method = -24;
	r.jvm.fp_bcp = -56;
	r.jvm.has_interp = 1;
	add(&o, &r);
	r = code_rec(0x5000, 0x6000, 0, HOTSPOT_INTERPRETER);
	add(&o, &r);
	r = (struct hsrec){ .kind = HSREC_METHOD };
	r.method.method = 0x7f1000000008;
	r.method.code = 0x7f1000000100;
	r.method.code_size = 40;
	r.method.name = "HsChain.isPrime";
	r.method.name_len = strlen(r.method.name);
	r.method.file = "HsChain.java";
	r.method.file_len = strlen(r.method.file);
	r.method.lnt = lnt;
	r.method.lnt_len = sizeof(lnt);
	add(&o, &r);

	slots(0x7f1000000008, 0x7f1000000100 + 10);
	CHECK_INT(name_of(&o, 0x5100, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "HsChain.isPrime");
	CHECK_INT(line, 15);
	/* a leaf: no line (its bcp slot is its last call's) */
	CHECK_INT(name_of(&o, 0x5100, true, name, sizeof(name), &line), 0);
	CHECK_STR(name, "HsChain.isPrime");
	CHECK_INT(line, 0);
	/* a bcp past its bytecodes, a Method* with no record: generic */
	slots(0x7f1000000008, 0x7f1000000100 + 40);
	CHECK_INT(name_of(&o, 0x5100, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "[interpreter]");
	slots(0x7f1000000010, 0x7f1000000100 + 10);
	CHECK_INT(name_of(&o, 0x5100, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "[interpreter]");
	/* the Method* reused by another method, its record newer: that one */
	r.method.code = 0x7f1000000800;
	r.method.name = "Other.run";
	r.method.name_len = strlen(r.method.name);
	add(&o, &r);
	slots(0x7f1000000008, 0x7f1000000100 + 10);
	CHECK_INT(name_of(&o, 0x5100, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "[interpreter]");
	slots(0x7f1000000008, 0x7f1000000800 + 10);
	CHECK_INT(name_of(&o, 0x5100, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "Other.run");
	/* pc in no blob of the records */
	CHECK_INT(name_of(&o, 0x9000, false, name, sizeof(name), &line), -ENOENT);
	hs_offline__free(&o);
}

TEST(a_compiled_callers_frame_should_be_named_at_its_pc_until_voided)
{
	struct hs_offline o = { 0 };
	struct hsrec r = code_rec(0x1000, 0x2000, 6, HOTSPOT_NMETHOD);
	char name[256];
	uint32_t line;

	add(&o, &r);
	r = (struct hsrec){ .kind = HSREC_FRAME };
	r.frame.pc = 0x1233;
	r.frame.line = 31;
	r.frame.name = "HsChain.outerLoop";
	r.frame.name_len = strlen(r.frame.name);
	r.frame.file = "HsChain.java";
	r.frame.file_len = strlen(r.frame.file);
	add(&o, &r);
	CHECK_INT(name_of(&o, 0x1233, false, name, sizeof(name), &line), 0);
	CHECK_STR(name, "HsChain.outerLoop");
	CHECK_INT(line, 31);
	/* the leaf is its JIT entry's; another pc is not this frame's */
	CHECK_INT(name_of(&o, 0x1233, true, name, sizeof(name), &line), -ENOENT);
	CHECK_INT(name_of(&o, 0x1234, false, name, sizeof(name), &line), -ENOENT);
	r.frame.name = r.frame.file = "";
	r.frame.name_len = r.frame.file_len = 0;
	r.frame.line = 0;
	add(&o, &r);
	CHECK_INT(name_of(&o, 0x1233, false, name, sizeof(name), &line), -ENOENT);
	hs_offline__free(&o);
}

TEST(the_capfile_seed_should_carry_hotspot_records_that_decode)
{
	struct capfile_reader *cr;
	struct capfile_record rec;
	struct hsrec d;
	int err = 0, rc, n = 0;

	cr = capfile_reader__open("tests/fuzz/corpus/capfile/runtime_hotspot.cap", &err);
	CHECK(cr);
	while ((rc = capfile_reader__next(cr, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_RUNTIME)
			continue;
		CHECK_INT(rec.runtime.kind, RUNTIME_REC_HOTSPOT);
		CHECK_INT(hsrec__decode(rec.runtime.data, rec.runtime.len, &d), 0);
		n++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 8);
	capfile_reader__free(cr);
}

TEST_MAIN()
