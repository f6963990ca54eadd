// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: DWARF expressions of CFI (dwexpr.h). The first byte
 * says which registers are known and whether the CFA is pushed, the next
 * eight bytes hold rsp; then the expression (at most DWEXPR_LEN_MAX
 * bytes); what follows is the memory it may read, at rsp. Evaluation must
 * stay within its bounds and read only that memory, fail with one of its
 * errors, never give a value for an expression that starts with an
 * operation CFI may not use (call_frame_cfa, reg0, an unknown one), and
 * an expression it interns must come back with the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/dwexpr.h"

struct mem {
	const uint8_t *p;
	size_t len;
	uint64_t base;
};

static int mem_read(void *ctx, uint64_t addr, uint64_t *val)
{
	const struct mem *m = ctx;

	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < 8)
		return -1;
	memcpy(val, m->p + (addr - m->base), 8);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t regs[DWEXPR_NR_REGS], v, cfa = 0x7ffd1234;
	struct mem m;
	struct dwexpr_env env = { regs, 0, mem_read, &m };
	size_t elen;
	const uint8_t *e, *back;
	size_t blen;
	uint32_t id;
	int rc;

	if (size < 10)
		return 0;
	for (unsigned i = 0; i < DWEXPR_NR_REGS; i++)
		regs[i] = 0x1000 * i;
	memcpy(&regs[7], data + 1, 8);
	env.known = (data[0] & 0x7f) * 0x2491u; /* a spread of bits */
	e = data + 9;
	elen = size - 9 < 64 ? size - 9 : 64;
	if (data[0] & 1)
		elen = elen > 16 ? 16 : elen;
	m.p = e + elen;
	m.len = size - 9 - elen;
	m.base = regs[7];
	rc = dwexpr__eval(e, elen, &env, (data[0] & 0x80) ? &cfa : NULL, &v);
	if (rc != 0 && rc != -EINVAL && rc != -ENOENT && rc != -EFAULT && rc != -E2BIG)
		abort();
	/* an operation CFI may not use, first: never a value */
	if (rc == 0 && elen && (e[0] == 0x9c || e[0] == 0xff || e[0] == 0x50))
		abort();
	id = dwexpr__intern(e, elen);
	if (id) {
		if (!dwexpr__valid(e, elen) || dwexpr__get(id, &back, &blen) || blen != elen ||
		    memcmp(back, e, elen))
			abort();
	}
	return 0;
}
