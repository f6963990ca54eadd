// SPDX-License-Identifier: MIT
/*
 * HotSpot's vmstructs parser and code reader (hotspot.h) over the
 * synthetic images of tests/fuzz/gen_hotspot_corpus.py (run from the
 * repository's root, as tests/run-tests.sh does): what they name, and
 * what a damaged image must not name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"
#include "testlib.h"

#define CORPUS "tests/fuzz/corpus/hotspot/"
#define HDR 16

static uint8_t img[64 << 10];
static size_t img_len;
static uint64_t img_base, img_pc;

static int read_img(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < img_base || addr - img_base > img_len || len > img_len - (addr - img_base))
		return -EFAULT;
	memcpy(buf, img + (addr - img_base), len);
	return 0;
}

/* The seed `name` into img: 0, or -ENOENT. */
static int load(const char *name)
{
	char path[256];
	uint8_t hdr[HDR];
	FILE *f;

	snprintf(path, sizeof(path), CORPUS "%s", name);
	f = fopen(path, "rb");
	if (!f)
		return -ENOENT;
	if (fread(hdr, 1, HDR, f) != HDR) {
		fclose(f);
		return -ENOENT;
	}
	memcpy(&img_base, hdr, 8);
	memcpy(&img_pc, hdr + 8, 8);
	img_len = fread(img, 1, sizeof(img), f);
	fclose(f);
	return 0;
}

static void syms_of(struct hotspot_syms *s)
{
	uint64_t *f = &s->structs;

	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		f[i] = img_base + 8 * i;
}

static int layout(struct hotspot_layout *l)
{
	struct hotspot_syms s;

	syms_of(&s);
	return hotspot__layout(&s, read_img, NULL, l);
}

TEST(hotspot_should_name_an_nmethod_from_its_constant_pool)
{
	struct hotspot_layout l;
	struct hotspot_code c;

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS " (run from the repository's root)");
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	CHECK_INT(c.kind, HOTSPOT_NMETHOD);
	CHECK_MSG(!strcmp(c.name, "java.lang.Demo.run"), "name %.100s", c.name);
	CHECK_U64(c.start, img_base + 0x8100);
	CHECK_U64(c.end, img_base + 0x8800);
	CHECK_INT(c.frame_size, 6);
	CHECK_U64(c.frame_complete, img_base + 0x8110);
	/* without its name: the same blob, no Method read */
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, false, &c), 0);
	CHECK_MSG(!strcmp(c.name, ""), "name %.100s", c.name);
}

TEST(hotspot_should_name_a_hidden_class_as_java_prints_it)
{
	struct hotspot_layout l;
	struct hotspot_code c;

	if (load("hidden_class"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	CHECK_MSG(!strcmp(c.name, "Demo$$Lambda$1/0x0000000800c0b000.test"), "name %.100s", c.name);
}

TEST(hotspot_should_tell_the_interpreter)
{
	struct hotspot_layout l;
	struct hotspot_code c;

	if (load("interpreter"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	CHECK_INT(c.kind, HOTSPOT_INTERPRETER);
	CHECK_MSG(!strcmp(c.name, "[interpreter]"), "name %.100s", c.name);
}

TEST(hotspot_should_not_name_a_pc_outside_the_code)
{
	struct hotspot_layout l;
	struct hotspot_code c;

	if (load("header_pc"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	/* the blob's header, then outside every heap */
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), -ENOENT);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_base + 0x100, true, &c), -ENOENT);
}

TEST(hotspot_should_refuse_damaged_memory)
{
	struct hotspot_layout l;
	struct hotspot_code c;

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	/* a free segment; a step back past the map's start */
	img[0x4000 + 0x30] = 0xff;
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_base + 0x8000 + 0x30 * 64, true, &c),
		  -ENOENT);
	img[0x4000 + 0x30] = 0x40;
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_base + 0x8000 + 0x30 * 64, true, &c),
		  -EINVAL);
	img[0x4000 + 0x30] = 0x30;
	/* a control byte in the method's Symbol: no name rather than a wrong one */
	img[0x5600 + 6] = '\n';
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), -EINVAL);
	img[0x5600 + 6] = 'r';
	/* a name index past the pool's length */
	img[0x5110] = 9;
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), -EINVAL);
	img[0x5110] = 2;
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
}

TEST(hotspot_should_refuse_bad_tables)
{
	struct hotspot_layout l;

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	/* a stride too small for its offsets */
	img[7 * 8] = 4;
	CHECK_INT(layout(&l), -EINVAL);
	img[7 * 8] = 40;
	/* a field this reader needs missing: not a VM it knows */
	img[0x1000 + 40 * 23 + 32] ^= 0xff; /* Symbol::_body marked static */
	img[0x1000 + 40 * 23 + 16] = 1;
	CHECK_INT(layout(&l), -ENOENT);
	img[0x1000 + 40 * 23 + 16] = 0;
	img[0x1000 + 40 * 23 + 32] ^= 0xff;
	CHECK_INT(layout(&l), 0);
	/* variables at addresses the target does not map */
	CHECK_INT(hotspot__layout(&(struct hotspot_syms){ 0 }, read_img, NULL, &l), -EFAULT);
}

TEST(hotspot_should_read_the_interpreter_frame_layout_from_the_int_constants)
{
	struct hotspot_syms sy;
	struct hotspot_layout l;

	if (load("interpreter"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK(l.has_interp);
	CHECK(l.has_lines);
	CHECK_INT(l.fp_method, -24);
	CHECK_INT(l.fp_bcp, -64);
	CHECK_INT(l.cm_sizeof, 48);
	/* a VM without its int constants: compiled frames only */
	syms_of(&sy);
	sy.ints = 0;
	CHECK_INT(hotspot__layout(&sy, read_img, NULL, &l), 0);
	CHECK(!l.has_interp);
	/* another frame layout than x86-64's: no interpreted names */
	img[0x2800 + 16 * 3 + 8] = 0xfd; /* last_sp -3 */
	CHECK_INT(layout(&l), 0);
	CHECK(!l.has_interp);
}

static uint64_t img_fp(void)
{
	uint64_t fp;

	memcpy(&fp, img + 120, 8);
	return fp;
}

TEST(hotspot_should_name_an_interpreted_frame_and_its_line)
{
	struct hotspot_layout l;
	struct hotspot_method m;

	if (load("interpreter"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run"), "name %.100s", m.name);
	CHECK_MSG(!strcmp(m.file, "Demo.java"), "file %.100s", m.file);
	CHECK_INT(m.line, 12); /* bci 5 */
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), false, &m), 0);
	CHECK_INT(m.line, 0);
	/* bci 8: the pair before it (5, 12); bci 9: its own (9, 40) */
	img[img_fp() - img_base - 64] += 3;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
	CHECK_INT(m.line, 12);
	img[img_fp() - img_base - 64] += 1;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
	CHECK_INT(m.line, 40);
	/* a method without a line-number table: named, no line */
	img[0x511c] = 0;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
	CHECK_INT(m.line, 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run"), "name %.100s", m.name);
}

TEST(hotspot_should_not_name_a_frame_whose_method_does_not_check_out)
{
	struct hotspot_layout l;
	struct hotspot_method m;
	uint64_t fp, v;

	if (load("interpreter"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	fp = img_fp() - img_base;
	/* a bcp past the method's bytecodes: a stale slot, not this method's */
	v = img_base + 0x5130 + 16;
	memcpy(img + fp - 64, &v, 8);
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), -EINVAL);
	v = img_base + 0x5130 + 15;
	memcpy(img + fp - 64, &v, 8);
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
	/* a Method* that is its ConstMethod (another metadata object) */
	v = img_base + 0x5100;
	memcpy(img + fp - 24, &v, 8);
	CHECK(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m) != 0);
	CHECK_MSG(!m.name[0], "name %.100s", m.name);
	v = img_base + 0x5000;
	memcpy(img + fp - 24, &v, 8);
	/* the name's pool entry tagged other than Utf8 */
	img[0x5700 + 4 + 2] = 7;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), -EINVAL);
	img[0x5700 + 4 + 2] = 1;
	/* a tag array of another length than the pool's */
	img[0x5700] = 5;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), -EINVAL);
	img[0x5700] = 4;
	/* a ConstMethod size its code does not fit in */
	img[0x5118] = 2;
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), -EINVAL);
	img[0x5118] = 16;
	/* an unaligned or unmapped fp */
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp() + 4, true, &m), -EINVAL);
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, 1ull << 40, true, &m), -EFAULT);
	CHECK_INT(hotspot__interp_frame(&l, read_img, NULL, img_fp(), true, &m), 0);
}

TEST(hotspot_should_read_a_compiled_frames_scopes_at_its_pc)
{
	struct hotspot_scope sc[HOTSPOT_SCOPES_MAX];
	struct hotspot_layout l;
	struct hotspot_method m;
	uint64_t blob = img_base + 0x8010, code = img_base + 0x8100;

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK(l.has_scopes);
	/* a return address with a PcDesc: the inlined method, then its own */
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, code + 0x100, true, sc), 2);
	CHECK_U64(sc[0].method, img_base + 0x5a00);
	CHECK_INT(sc[0].bci, 9);
	CHECK_U64(sc[1].method, img_base + 0x5000);
	CHECK_INT(sc[1].bci, 5);
	CHECK_INT(hotspot__method(&l, read_img, NULL, sc[1].method, sc[1].bci, &m), 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run"), "name %.100s", m.name);
	CHECK_INT(m.line, 12);
	/* its own scope only; none at an address without a PcDesc, exact;
	 * the next one's, near */
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, code + 0x200, true, sc), 1);
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, code + 0x101, true, sc), -ENOENT);
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, code + 0x101, false, sc), 1);
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, code + 0x201, false, sc), -ENOENT);
}

TEST(hotspot_should_refuse_scopes_that_do_not_check_out)
{
	struct hotspot_scope sc[HOTSPOT_SCOPES_MAX];
	struct hotspot_layout l;
	uint64_t blob = img_base + 0x8010, code = img_base + 0x8100, pc = code + 0x100;

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	/* a sender at or after its scope: a loop */
	img[0x8074] = 4;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), -EINVAL);
	img[0x8074] = 1;
	/* a metadata index past the table */
	img[0x8075] = 5;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), -EINVAL);
	img[0x8075] = 2;
	/* the outermost scope not the nmethod's own method */
	img[0x8072] = 2;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), -EINVAL);
	img[0x8072] = 1;
	/* a scope offset past the scopes data; PcDescs ending before they start */
	img[0x80a4] = 0x40;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), -EINVAL);
	img[0x80a4] = 4;
	img[0x8010 + 52] = 0x70;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), -EINVAL);
	img[0x8010 + 52] = 0xb0;
	CHECK_INT(hotspot__scopes(&l, read_img, NULL, blob, code, pc, true, sc), 2);
}

/* Another Java method in the image, at Method* img_base + at: a copy
 * of the seed's ConstMethod (its code and lines), pool and Klass at
 * img_base + b, the Klass named `klass` (its method the seed's name). */
static void put_method(uint64_t at, uint64_t b, const char *klass)
{
	uint16_t len = (uint16_t)strlen(klass);
	uint64_t v;

	memcpy(img + b, img + 0x5100, 0x60);	   /* ConstMethod, code, lines */
	memcpy(img + b + 0x100, img + 0x5200, 0x40); /* its pool */
	v = img_base + b;
	memcpy(img + at + 8, &v, 8);
	v = img_base + b + 0x100;
	memcpy(img + b + 8, &v, 8);
	v = img_base + b + 0x200;
	memcpy(img + b + 0x108, &v, 8);
	v = img_base + b + 0x300;
	memcpy(img + b + 0x210, &v, 8);
	memcpy(img + b + 0x300, &len, 2);
	memcpy(img + b + 0x306, klass, len);
}

/* Three scopes at code offset 0x100: the nmethod's own method (bci 5),
 * the one at Method* 0x5a00 inlined there (bci 9), the one at `inner`
 * inlined into that (bci 1). */
static void three_scopes(uint64_t inner)
{
	uint64_t v = img_base + inner;

	memcpy(img + 0x8060, &v, 8); /* metadata[2] */
	memcpy(img + 0x8077, (const uint8_t[]){ 4, 3, 2 }, 3);
	img[0x80a4] = 7;
}

#define MARK HOTSPOT_UNREADABLE "\t\t0\n"

TEST(a_compiled_caller_should_give_its_inlined_methods_though_its_own_has_no_line)
{
	struct hotspot_layout l;
	struct hotspot_method m;
	struct hotspot_code c;
	char inl[1024];

	/* a lambda's hidden class: no source file, no line-number table */
	if (load("hidden_class"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	put_method(0x5a00, 0x5b00, "HsChain");
	img[0x511c] = 0;
	img[0x5214] = 0;
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(m.name, "Demo$$Lambda$1/0x0000000800c0b000.test"), "name %.100s", m.name);
	CHECK_MSG(!m.file[0] && !m.line, "file %.100s line %u", m.file, m.line);
	CHECK_MSG(!strcmp(inl, "HsChain.test\tDemo.java\t40\n"), "inl %.200s", inl);
}

TEST(a_compiled_caller_should_mark_an_inlined_method_that_does_not_read_in_its_place)
{
	struct hotspot_layout l;
	struct hotspot_method m;
	struct hotspot_code c;
	char inl[1024];

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	/* the seed's inlined Method* 0x5a00 is no Method */
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run") && m.line == 12, "%.100s:%u", m.name,
		  m.line);
	CHECK_MSG(!strcmp(inl, MARK), "inl %.200s", inl);
	/* one inlined into it that reads: kept, under the marker */
	put_method(0x5a80, 0x6b00, "HsChain");
	three_scopes(0x5a80);
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(inl, MARK "HsChain.run\tDemo.java\t10\n"), "inl %.200s", inl);
	/* the middle one reads, the innermost not */
	put_method(0x5a00, 0x5b00, "HsChain");
	memset(img + 0x5a80, 0, 16);
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(inl, "HsChain.run\tDemo.java\t40\n" MARK), "inl %.200s", inl);
}

TEST(a_compiled_callers_inlined_methods_that_do_not_fit_should_end_in_a_marker)
{
	struct hotspot_layout l;
	struct hotspot_method m;
	struct hotspot_code c;
	char inl[64];

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	put_method(0x5a00, 0x5b00, "HsChain");
	put_method(0x5a80, 0x6b00, "HsChainWithALongerName");
	three_scopes(0x5a80);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	/* (room for the marker alone; for one line and it, not two lines) */
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl, 40), 0);
	CHECK_MSG(!strcmp(inl, MARK), "inl %.200s", inl);
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl, 60), 0);
	CHECK_MSG(!strcmp(inl, "HsChain.run\tDemo.java\t40\n" MARK), "inl %.200s", inl);
}

TEST(a_compiled_caller_whose_scopes_do_not_read_should_be_its_method_under_a_marker)
{
	struct hotspot_layout l;
	struct hotspot_method m;
	struct hotspot_code c;
	char inl[1024];

	if (load("nmethod"))
		SKIP("no seeds in " CORPUS);
	CHECK_INT(layout(&l), 0);
	CHECK_INT(hotspot__code(&l, read_img, NULL, img_pc, true, &c), 0);
	/* scopes data that do not check out; a Method that does not read */
	img[0x8074] = 4;
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run") && !m.line, "%.100s:%u", m.name, m.line);
	CHECK_MSG(!strcmp(inl, MARK), "inl %.200s", inl);
	img[0x8074] = 1;
	memset(img + 0x5008, 0, 8);
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(inl, MARK), "inl %.200s", inl);
	memcpy(img + 0x5008, (uint64_t[]){ img_base + 0x5100 }, 8);
	/* no PcDesc at the return address (a call to a stub, no Java frames
	 * inlined there known): the nmethod's name, unmarked */
	inl[0] = 'x';
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x101, &m, inl,
					sizeof(inl)), -ENOENT);
	CHECK_MSG(!inl[0], "inl %.200s", inl);
	/* its own scope alone: no marker */
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x200, &m, inl,
					sizeof(inl)), 0);
	CHECK_MSG(!strcmp(m.name, "java.lang.Demo.run") && !inl[0], "%.100s inl %.200s", m.name,
		  inl);
	/* a VM without the scopes' layout: none asked */
	l.has_scopes = false;
	CHECK_INT(hotspot__caller_frame(&l, read_img, NULL, &c, c.start + 0x100, &m, inl,
					sizeof(inl)), -ENOENT);
}

TEST(hotspot_should_decode_a_compressed_line_number_table)
{
	/* (0, 10), (5, 12), (9, 40), end; and a 2-byte int */
	static const uint8_t t[] = { 0xff, 0x00, 20, (5 << 3) | 2, 0xff, 8, 56, 0 };
	/* (0, 1000): zigzag 2000, UNSIGNED5 208 + 28 * 64 */
	static const uint8_t big[] = { 0xff, 0x00, 0xd0, 0x1c, 0 };
	uint32_t line;

	CHECK_INT(hotspot__line_of(t, sizeof(t), 0, &line), 0);
	CHECK_INT(line, 10);
	CHECK_INT(hotspot__line_of(t, sizeof(t), 7, &line), 0);
	CHECK_INT(line, 12);
	CHECK_INT(hotspot__line_of(t, sizeof(t), 200, &line), 0);
	CHECK_INT(line, 40);
	CHECK_INT(hotspot__line_of(big, sizeof(big), 0, &line), 0);
	CHECK_INT(line, 1000);
	/* no end within the bytes; a multi-byte int cut off */
	CHECK_INT(hotspot__line_of(t, sizeof(t) - 1, 200, &line), -EINVAL);
	CHECK_INT(hotspot__line_of(big, 3, 0, &line), -EINVAL);
	/* an empty table; a bci before the first pair */
	CHECK_INT(hotspot__line_of(t + 7, 1, 0, &line), -ENOENT);
	CHECK_INT(hotspot__line_of((const uint8_t[]){ 5 << 3 | 1, 0 }, 2, 2, &line), -ENOENT);
	/* a negative bci on the way: damaged */
	CHECK_INT(hotspot__line_of((const uint8_t[]){ 0xff, 3, 2, 0 }, 4, 2, &line), -EINVAL);
}

TEST_MAIN()
