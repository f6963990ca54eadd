// SPDX-License-Identifier: MIT
/*
 * The V8 reader (src/runtimes/v8/v8reader.h) over memory images laid out as node
 * 20 lays out its objects: a JSFunction's name from its SharedFunctionInfo
 * (a String, or a ScopeInfo's function variable once compiled) with its
 * script's name; one-byte, two-byte, cons, thin and sliced strings; and
 * hostile images (wrong maps, cycles, huge lengths) refused, never named.
 */
#include "model/elfread.h"
#include "testlib.h"
#include "../fuzz/v8mem_image.h"

#define BASE 0x100000000ull
#define SZ 0x4000

static uint8_t mem[SZ];
static size_t top;
static const struct v8_layout *L = &v8img_node20;

static void put64(size_t off, uint64_t v) { memcpy(mem + off, &v, 8); }
static uint64_t tagged(size_t off) { return BASE + off + 1; }
static uint64_t smi(int64_t v) { return (uint64_t)v << 32; }

/* A map of instance type t: its tagged pointer. */
static uint64_t map_of(unsigned t)
{
	size_t off = top;
	uint16_t t16 = (uint16_t)t;

	top += 32;
	memcpy(mem + off + 12, &t16, 2);
	return tagged(off);
}

static uint64_t obj(unsigned type, size_t size)
{
	size_t off = top;

	top += (size + 7) & ~7ul;
	put64(off, map_of(type));
	return tagged(off);
}

static size_t at(uint64_t t) { return (size_t)(t - 1 - BASE); }

static uint64_t str1(const char *s)
{
	int32_t n = (int32_t)strlen(s);
	uint64_t o = obj(8 /* one-byte seq */, 16 + (size_t)n);

	memcpy(mem + at(o) + 12, &n, 4);
	memcpy(mem + at(o) + 16, s, (size_t)n);
	return o;
}

static uint64_t str2(const uint16_t *s, int32_t n)
{
	uint64_t o = obj(0 /* two-byte seq */, 16 + 2 * (size_t)n);

	memcpy(mem + at(o) + 12, &n, 4);
	memcpy(mem + at(o) + 16, s, 2 * (size_t)n);
	return o;
}

static uint64_t cons(uint64_t a, uint64_t b, int32_t n)
{
	uint64_t o = obj(9 /* one-byte cons */, 32);

	memcpy(mem + at(o) + 12, &n, 4);
	put64(at(o) + 16, a);
	put64(at(o) + 24, b);
	return o;
}

static uint64_t function(uint64_t name, uint64_t script)
{
	uint64_t sfi = obj(262, 48), fn = obj(2066, 64);

	put64(at(sfi) + 16, name);
	put64(at(sfi) + 32, script);
	put64(at(fn) + 24, sfi);
	return fn;
}

static uint64_t script(const char *name)
{
	uint64_t s = obj(167, 48);

	put64(at(s) + 16, str1(name));
	return s;
}

static int name_of(uint64_t fn, char *buf, size_t size)
{
	struct v8img m = { BASE, mem, SZ };

	return v8reader__function_name(L, v8img_read, &m, fn, buf, size);
}

static void reset(void)
{
	memset(mem, 0, sizeof(mem));
	top = 64;
}

TEST(v8_name_from_string_and_script)
{
	char buf[256];

	reset();
	CHECK_INT(name_of(function(str1("innerJS"), script("/app/x.js")), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:innerJS /app/x.js");
}

TEST(v8_name_from_scope_info_function_variable)
{
	uint64_t si;
	char buf[256];

	reset();
	/* flags: function_variable UNUSED (3 << 12), saved class variable
	 * (1 << 10); two context locals: names, infos, then the saved class
	 * variable, then the function variable's name */
	si = obj(261, 8 + 8 * 10);
	put64(at(si) + 8, smi((3 << 12) | (1 << 10)));
	put64(at(si) + 24, smi(2));
	put64(at(si) + 32, str1("a"));
	put64(at(si) + 40, str1("b"));
	put64(at(si) + 48, smi(0));
	put64(at(si) + 56, smi(0));
	put64(at(si) + 64, str1("Klass"));
	put64(at(si) + 72, str1("method"));
	CHECK_INT(name_of(function(si, smi(0)), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:method");
	/* no function variable: an anonymous function */
	put64(at(si) + 8, smi(0));
	CHECK_INT(name_of(function(si, smi(0)), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:(anonymous)");
}

TEST(v8_name_strings_two_byte_cons_thin_sliced)
{
	static const uint16_t u[] = { 'f', 0xe9, 0x4e2d };
	uint64_t thin, sl;
	char buf[256];

	reset();
	CHECK_INT(name_of(function(str2(u, 3), smi(0)), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:f\xc3\xa9\xe4\xb8\xad");
	CHECK_INT(name_of(function(cons(str1("outer"), str1("JS"), 7), smi(0)), buf, sizeof(buf)),
		  0);
	CHECK_STR(buf, "JS:outerJS");
	thin = obj(13 /* one-byte thin */, 24);
	memcpy(mem + at(thin) + 12, &(int32_t){ 4 }, 4);
	put64(at(thin) + 16, str1("thin"));
	CHECK_INT(name_of(function(thin, smi(0)), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:thin");
	sl = obj(11 /* one-byte sliced */, 32);
	memcpy(mem + at(sl) + 12, &(int32_t){ 3 }, 4);
	put64(at(sl) + 16, str1("abcdef"));
	put64(at(sl) + 24, smi(2));
	CHECK_INT(name_of(function(sl, smi(0)), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:cde");
}

TEST(v8_hostile_images_refused)
{
	uint64_t fn, c, sfi;
	char buf[64];

	reset();
	/* not a JSFunction, an SFI of the wrong type, a Smi, a wild pointer */
	CHECK_INT(name_of(str1("x"), buf, sizeof(buf)), -EINVAL);
	fn = function(str1("x"), smi(0));
	sfi = 0;
	memcpy(&sfi, mem + at(fn) + 24, 8);
	put64(at(sfi), map_of(261));
	CHECK_INT(name_of(fn, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(name_of(smi(5), buf, sizeof(buf)), -EINVAL);
	CHECK(name_of(BASE + SZ * 4 + 1, buf, sizeof(buf)) != 0);
	/* a cons string that is its own first half: bounded, refused */
	c = cons(0, str1("y"), 2);
	put64(at(c) + 16, c);
	memcpy(mem + at(c) + 12, &(int32_t){ 0x7fffffff }, 4);
	CHECK(name_of(function(c, smi(0)), buf, sizeof(buf)) != 0);
	/* a length past the image: refused, not read past */
	c = str1("zz");
	memcpy(mem + at(c) + 12, &(int32_t){ 0x7ffffff0 }, 4);
	CHECK(name_of(function(c, smi(0)), buf, sizeof(buf)) != 0);
	/* a name longer than the buffer: cut, terminated */
	{
		char longname[600];

		memset(longname, 'q', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		CHECK_INT(name_of(function(str1(longname), smi(0)), buf, sizeof(buf)), 0);
		CHECK(strlen(buf) < sizeof(buf));
	}
}

/* An interpreted frame at fp (in the image): context, function, bytecode
 * array and offset slots at node 20's places. */
static uint64_t interp_frame(size_t fp, uint64_t cx, uint64_t fn, uint64_t ba, int64_t off)
{
	put64(fp - 8, cx);
	put64(fp - 16, fn);
	put64(fp - 32, ba);
	put64(fp - 40, smi(off + 53)); /* (header-relative, from the tagged pointer) */
	return BASE + fp;
}

static uint64_t bytecode_array(int64_t len)
{
	uint64_t ba = obj(191, 56 + (size_t)len);

	put64(at(ba) + 8, smi(len));
	return ba;
}

static int interp(uint64_t fp, uint64_t *fn, int32_t *off)
{
	struct v8img m = { BASE, mem, SZ };

	return v8reader__interp_frame(L, v8img_read, &m, fp, fn, off);
}

TEST(v8_interpreted_frame_function_by_its_bytecode)
{
	uint64_t fn, got, ba, fp, idata, code, sfi = 0;
	int32_t off;
	char buf[256];

	reset();
	fn = function(str1("innerJS"), script("/app/x.js"));
	memcpy(&sfi, mem + at(fn) + 24, 8);
	ba = bytecode_array(40);
	put64(at(sfi) + 8, ba); /* function_data: the bytecode */
	fp = interp_frame(0x3000, obj(150 /* a Context */, 32), fn, ba, 7);
	CHECK_INT(interp(fp, &got, &off), 0);
	CHECK(got == fn);
	CHECK_INT(off, 7);
	CHECK_INT(name_of(got, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "JS:innerJS /app/x.js");
	/* at the function's entry: offset -1 */
	fp = interp_frame(0x3000, obj(150, 32), fn, ba, -1);
	CHECK_INT(interp(fp, &got, &off), 0);
	CHECK_INT(off, -1);
	/* the bytecode through an InterpreterData, or baseline Code's */
	idata = obj(159, 24);
	put64(at(sfi) + 8, idata);
	CHECK_INT(interp(fp, &got, &off), 0);
	code = obj(245, 64);
	put64(at(code) + 16, ba);
	put64(at(sfi) + 8, code);
	CHECK_INT(interp(fp, &got, &off), 0);
	put64(at(code) + 16, idata);
	CHECK_INT(interp(fp, &got, &off), 0);
}

TEST(v8_interpreted_frame_that_does_not_check_out_refused)
{
	uint64_t fn, got, ba, other, fp, cx, sfi = 0;
	struct v8_layout nol = *L;
	struct v8img m = { BASE, mem, SZ };
	int32_t off;

	reset();
	fn = function(str1("f"), smi(0));
	memcpy(&sfi, mem + at(fn) + 24, 8);
	ba = bytecode_array(16);
	other = bytecode_array(16);
	put64(at(sfi) + 8, ba);
	cx = obj(150, 32);
	/* a typed frame: a Smi marker where the context is */
	fp = interp_frame(0x3000, smi(13), fn, ba, 0);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	/* the function's bytecode is another array (a stale slot) */
	fp = interp_frame(0x3000, cx, fn, other, 0);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	/* not a BytecodeArray; not a JSFunction */
	fp = interp_frame(0x3000, cx, fn, str1("x"), 0);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	fp = interp_frame(0x3000, cx, sfi, ba, 0);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	/* an offset past the bytecode, a length no array has */
	fp = interp_frame(0x3000, cx, fn, ba, 16);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	fp = interp_frame(0x3000, cx, fn, ba, -2);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	put64(at(ba) + 8, smi(-4));
	fp = interp_frame(0x3000, cx, fn, ba, 0);
	CHECK_INT(interp(fp, &got, &off), -EINVAL);
	put64(at(ba) + 8, smi(16));
	CHECK_INT(interp(fp, &got, &off), 0);
	/* a frame pointer off the image, unaligned, or null */
	CHECK(interp(BASE + SZ * 4, &got, &off) != 0);
	CHECK_INT(interp(fp + 4, &got, &off), -EINVAL);
	CHECK_INT(interp(0, &got, &off), -EINVAL);
	/* a binary without the interpreter's layout */
	nol.has_interp = 0;
	CHECK_INT(v8reader__interp_frame(&nol, v8img_read, &m, fp, &got, &off), -ENOENT);
}

/* node 20's v8dbg_* constants as a shared object exports them (one of
 * them 0 in .bss, as node's SeqStringTag is); ptr: SystemPointerSize;
 * interp: the interpreter frame's too. */
static int build_consts(const char *dir, const char *so, int ptr, int fp_function, int interp)
{
	return test_sh("cd '%s' && cat > c.c <<'EOF'\n"
		       "int v8dbg_off_fp_function = %d, v8dbg_HeapObjectTag = 1,\n"
		       " v8dbg_HeapObjectTagMask = 3, v8dbg_SmiShiftSize = 31,\n"
		       " v8dbg_SystemPointerSize = %d,\n"
		       " v8dbg_class_HeapObject__map__Map = 0,\n"
		       " v8dbg_class_Map__instance_type__uint16_t = 12,\n"
		       " v8dbg_class_JSFunction__shared__SharedFunctionInfo = 24,\n"
		       " v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object = 16,\n"
		       " v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject = 32,\n"
		       " v8dbg_class_Script__name__Object = 16, v8dbg_class_String__length__int32_t = 12,\n"
		       " v8dbg_class_SeqOneByteString__chars__char = 16,\n"
		       " v8dbg_class_SeqTwoByteString__chars__char = 16,\n"
		       " v8dbg_class_ConsString__first__String = 16,\n"
		       " v8dbg_class_ConsString__second__String = 24,\n"
		       " v8dbg_class_ThinString__actual__String = 16,\n"
		       " v8dbg_class_SlicedString__parent__String = 16,\n"
		       " v8dbg_class_SlicedString__offset__SMI = 24,\n"
		       " v8dbg_type_JSFunction__JS_FUNCTION_TYPE = 2066,\n"
		       " v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE = 262,\n"
		       " v8dbg_type_Script__SCRIPT_TYPE = 167, v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE = 261,\n"
		       " v8dbg_FirstNonstringType = 128, v8dbg_StringRepresentationMask = 7,\n"
		       " v8dbg_StringEncodingMask = 8, v8dbg_ConsStringTag = 1, v8dbg_ThinStringTag = 5,\n"
		       " v8dbg_SlicedStringTag = 3, v8dbg_OneByteStringTag = 8,\n"
		       " v8dbg_scopeinfo_idx_ncontextlocals = 2, v8dbg_scopeinfo_idx_first_vars = 3;\n"
		       "int v8dbg_SeqStringTag;\n"
		       "%s"
		       "EOF\n"
		       "gcc -shared -fPIC -o '%s' c.c",
		       dir, fp_function, ptr,
		       interp ? "int v8dbg_off_fp_context = -8, v8dbg_off_fp_bytecode_array = -32,\n"
				" v8dbg_off_fp_bytecode_offset = -40,\n"
				" v8dbg_class_SharedFunctionInfo__function_data__Object = 8,\n"
				" v8dbg_class_Code__bytecode_or_interpreter_data__HeapObject = 16,\n"
				" v8dbg_class_FixedArrayBase__length__SMI = 8,\n"
				" v8dbg_class_BytecodeArray__data__uintptr_t = 54,\n"
				" v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE = 191,\n"
				" v8dbg_type_InterpreterData__INTERPRETER_DATA_TYPE = 159,\n"
				" v8dbg_type_Code__CODE_TYPE = 245;\n"
			      : "",
		       so);
}

TEST(v8_layout_from_the_binarys_constants)
{
	const char *dir = test_tmpdir("v8reader");
	char path[512];
	struct elfread *e;
	struct v8_layout l;

	CHECK(dir != NULL);
	snprintf(path, sizeof(path), "%s/v8.so", dir);
	CHECK_INT(build_consts(dir, path, 8, -16, 1), 0);
	CHECK((e = elfread__open(path)) != NULL);
	CHECK_INT(v8layout__from_elf(e, &l), 0);
	elfread__free(e);
	/* the values node 20 has, the .bss one 0 */
	CHECK(memcmp(&l, &v8img_node20, sizeof(l)) == 0);
	/* without the interpreter frame's: compiled frames only */
	CHECK_INT(build_consts(dir, path, 8, -16, 0), 0);
	CHECK((e = elfread__open(path)) != NULL);
	CHECK_INT(v8layout__from_elf(e, &l), 0);
	elfread__free(e);
	CHECK_INT(l.has_interp, 0);
	CHECK_INT((int)l.fn_shared, 24);
	/* pointer compression (4-byte slots): not read */
	CHECK_INT(build_consts(dir, path, 4, -16, 1), 0);
	CHECK((e = elfread__open(path)) != NULL);
	CHECK_INT(v8layout__from_elf(e, &l), -ENOENT);
	elfread__free(e);
	/* a frame slot no V8 has: refused */
	CHECK_INT(build_consts(dir, path, 8, -12, 1), 0);
	CHECK((e = elfread__open(path)) != NULL);
	CHECK_INT(v8layout__from_elf(e, &l), -EINVAL);
	elfread__free(e);
	/* a binary without them: not V8 */
	CHECK((e = elfread__open("/proc/self/exe")) != NULL);
	CHECK_INT(v8layout__from_elf(e, &l), -ENOENT);
	elfread__free(e);
}

TEST_MAIN()
