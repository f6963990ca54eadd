// SPDX-License-Identifier: MIT
/* DWARF expressions of CFI (dwexpr.h): evaluation over registers and
 * memory, the bounds, the validity check, the intern table, the text. */
#include <errno.h>

#include "unwind/dwexpr.h"
#include "testlib.h"

TEST_MAIN();

static uint64_t mem_base = 0x1000, mem[8];

static int mem_read(void *ctx, uint64_t addr, uint64_t *val)
{
	(void)ctx;
	if (addr < mem_base || addr + 8 > mem_base + sizeof(mem) || (addr & 7))
		return -1;
	*val = mem[(addr - mem_base) / 8];
	return 0;
}

static uint64_t regs[DWEXPR_NR_REGS];
static const struct dwexpr_env ENV = { regs, (1u << 7) | (1u << 9), mem_read, NULL };

#define EVAL(push, want_rc, want, ...)                                                  \
	do {                                                                            \
		static const uint8_t e_[] = { __VA_ARGS__ };                            \
		uint64_t v_ = 0;                                                        \
		CHECK_INT(dwexpr__eval(e_, sizeof(e_), &ENV, push, &v_), want_rc);      \
		if (!(want_rc))                                                         \
			CHECK_U64(v_, want);                                            \
	} while (0)

TEST(dwexpr_should_compute_openssls_cfa_expressions)
{
	regs[7] = 0x1000; /* rsp */
	regs[9] = 2;	  /* r9 */
	mem[5] = 0x7ffe0000; /* *(rsp+40) */
	mem[3] = 0x7ffd0000; /* *(rsp+8+8*2) */
	/* breg7 40; deref; plus_uconst 8 */
	EVAL(NULL, 0, 0x7ffe0008, 0x77, 0x28, 0x06, 0x23, 0x08);
	/* breg7 8; breg9 0; lit8; mul; plus; deref; plus_uconst 8 */
	EVAL(NULL, 0, 0x7ffd0008, 0x77, 0x08, 0x79, 0x00, 0x38, 0x1e, 0x22, 0x06, 0x23, 0x08);
}

TEST(dwexpr_should_start_from_the_pushed_cfa_and_do_arithmetic)
{
	uint64_t cfa = 0x2000;

	EVAL(&cfa, 0, 0x1ff8, 0x38, 0x1c);		  /* lit8; minus */
	EVAL(&cfa, 0, 0x2000, 0x12, 0x38, 0x1c, 0x13); /* dup; lit8; minus; drop */
	EVAL(NULL, 0, (uint64_t)-3, 0x11, 0x7d);	  /* consts -3 */
	EVAL(NULL, 0, 3, 0x11, 0x7d, 0x19);		  /* consts -3; abs */
	EVAL(NULL, 0, 1, 0x31, 0x32, 0x2d);		  /* lit1; lit2; lt */
	EVAL(NULL, 0, 0x100, 0x31, 0x08, 8, 0x24);	  /* lit1; const1u 8; shl */
	EVAL(NULL, 0, 7, 0x0a, 0x07, 0x00);		  /* const2u 7 */
	/* lit1; bra +1; lit5; lit7: the branch skips lit5 */
	EVAL(NULL, 0, 7, 0x31, 0x28, 0x01, 0x00, 0x35, 0x37);
	EVAL(NULL, 0, 2, 0x31, 0x32, 0x33, 0x17);	  /* lit1 lit2 lit3; rot: 3 1 2 */
	EVAL(NULL, 0, 3, 0x31, 0x32, 0x33, 0x17, 0x13, 0x13); /* and two dropped */
}

TEST(dwexpr_should_refuse_what_it_cannot_know)
{
	uint64_t v;
	static const uint8_t unknown_reg[] = { 0x73, 0x00 }; /* breg3: rbx not known */
	static const uint8_t bad_read[] = { 0x77, 0x40, 0x06 }; /* *(rsp+64): outside */
	static const uint8_t div0[] = { 0x31, 0x30, 0x1b };
	static const uint8_t empty_pop[] = { 0x22 };
	static const uint8_t call_cfa[] = { 0x9c };
	static const uint8_t truncated[] = { 0x77 };
	static const uint8_t loop[] = { 0x2f, 0xfd, 0xff }; /* skip -3: itself */
	uint8_t deep[64];

	regs[7] = 0x1000;
	CHECK_INT(dwexpr__eval(unknown_reg, 2, &ENV, NULL, &v), -ENOENT);
	CHECK_INT(dwexpr__eval(bad_read, 3, &ENV, NULL, &v), -EFAULT);
	CHECK_INT(dwexpr__eval(div0, 3, &ENV, NULL, &v), -EINVAL);
	CHECK_INT(dwexpr__eval(empty_pop, 1, &ENV, NULL, &v), -EINVAL);
	CHECK_INT(dwexpr__eval(call_cfa, 1, &ENV, NULL, &v), -EINVAL);
	CHECK_INT(dwexpr__eval(truncated, 1, &ENV, NULL, &v), -EINVAL);
	CHECK_INT(dwexpr__eval(loop, 3, &ENV, NULL, &v), -E2BIG);
	memset(deep, 0x30, sizeof(deep)); /* 64 x lit0: past the stack */
	CHECK_INT(dwexpr__eval(deep, sizeof(deep), &ENV, NULL, &v), -E2BIG);
	CHECK(dwexpr__valid(loop, 3));
	CHECK(!dwexpr__valid(call_cfa, 1));
	CHECK(!dwexpr__valid(truncated, 1));
	static const uint8_t into_operand[] = { 0x2f, 0xfe, 0xff }; /* skip -2 */
	CHECK(!dwexpr__valid(into_operand, 3));
}

TEST(dwexpr_intern_should_number_equal_bytes_alike_and_keep_them)
{
	static const uint8_t a[] = { 0x77, 0x28, 0x06, 0x23, 0x08 };
	static const uint8_t b[] = { 0x77, 0x28, 0x06, 0x23, 0x10 };
	uint8_t copy[sizeof(a)];
	const uint8_t *e;
	size_t len;
	uint32_t ia, ib;
	char text[128];

	memcpy(copy, a, sizeof(a));
	ia = dwexpr__intern(a, sizeof(a));
	ib = dwexpr__intern(b, sizeof(b));
	CHECK(ia && ib && ia != ib);
	CHECK_INT(dwexpr__intern(copy, sizeof(copy)), ia);
	CHECK_INT(dwexpr__intern((const uint8_t *)"\x9c", 1), 0);
	CHECK_INT(dwexpr__get(ia, &e, &len), 0);
	CHECK_INT(len, sizeof(a));
	CHECK(!memcmp(e, a, len));
	CHECK_INT(dwexpr__get(0, &e, &len), -ENOENT);
	CHECK_INT(dwexpr__get(1u << 30, &e, &len), -ENOENT);
	dwexpr__format(e, len, text, sizeof(text));
	CHECK_STR(text, "breg7 +40; deref; plus_uconst 8");
}
