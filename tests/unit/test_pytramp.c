// SPDX-License-Identifier: MIT
/*
 * CPython perf trampolines (pytrampoline.h): the template recognised by
 * its bytes in a synthetic ELF and in pyenv's real libpython when there,
 * refused when it differs by a byte or its symbols lie; its rows at every
 * offset; and a walk through a copy of it, whose rows the memo never keeps.
 */
#include <elf.h>
#include <errno.h>
#include <unistd.h>

#include "model/elfread.h"
#include "runtimes/python/pytrampoline.h"
#include "testlib.h"
#include "unwind/unwind.h"

static const uint8_t SUB8[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t FP[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };
static const uint8_t FP_ENDBR[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48,
				    0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };

#define VBASE 0x400000ull
#define CODE_OFF 0x100u

/*
 * A minimal ELF64 executable: one PT_LOAD (R+X) over the whole file, the
 * code at CODE_OFF, a .symtab with _Py_trampoline_func_start at the code
 * and _end at start_sym + end_delta (both as values, unchecked here).
 */
static uint8_t *make_elf(const uint8_t *code, size_t len, uint64_t start_val,
			 uint64_t end_val, int with_syms, size_t *out_len)
{
	static const char strtab[] = "\0_Py_trampoline_func_start\0_Py_trampoline_func_end";
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t sym_off = CODE_OFF + 64, str_off = sym_off + 3 * sizeof(Elf64_Sym);
	size_t shstr_off = str_off + sizeof(strtab);
	size_t sh_off = (shstr_off + sizeof(shstr) + 7) & ~7ul;
	size_t total = sh_off + 5 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, total);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));
	Elf64_Sym *sy = (Elf64_Sym *)(img + sym_off);
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + sh_off);

	if (!img)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_vaddr = VBASE;
	ph->p_filesz = ph->p_memsz = total;
	ph->p_align = 0x1000;
	memcpy(img + CODE_OFF, code, len);
	if (with_syms) {
		sy[1].st_name = 1;
		sy[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sy[1].st_shndx = 1;
		sy[1].st_value = start_val;
		sy[2].st_name = 1 + sizeof("_Py_trampoline_func_start");
		sy[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sy[2].st_shndx = 1;
		sy[2].st_value = end_val;
	}
	memcpy(img + str_off, strtab, sizeof(strtab));
	memcpy(img + shstr_off, shstr, sizeof(shstr));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = VBASE + CODE_OFF, .sh_offset = CODE_OFF,
			      .sh_size = 64, .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
			      .sh_size = 3 * sizeof(Elf64_Sym), .sh_link = 3, .sh_info = 1,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = str_off,
			      .sh_size = sizeof(strtab), .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	*out_len = total;
	return img;
}

/* pytramp__from_elf() on a synthetic image; *t filled when 0. */
static int from_synthetic(const uint8_t *code, size_t len, uint64_t start_val,
			  uint64_t end_val, int with_syms, struct pytramp *t)
{
	size_t n;
	uint8_t *img = make_elf(code, len, start_val, end_val, with_syms, &n);
	struct elfread *e;
	int rc;

	if (!img)
		return -ENOMEM;
	e = elfread__open_mem_owned(img, n);
	if (!e) {
		free(img);
		return -EBADF;
	}
	rc = pytramp__from_elf(e, t);
	elfread__free(e);
	return rc;
}

TEST(match_known_templates)
{
	struct pytramp t;
	uint8_t bad[sizeof(SUB8)];

	CHECK_INT(pytramp__match(SUB8, sizeof(SUB8), &t), 0);
	CHECK_INT(t.shape, PYTRAMP_SUB8);
	CHECK_INT(t.len, 11);
	CHECK_STR(pytramp__shape_name(t.shape), "sub8");
	CHECK_INT(pytramp__match(FP, sizeof(FP), &t), 0);
	CHECK_INT(t.shape, PYTRAMP_FP);
	CHECK_INT(pytramp__match(FP_ENDBR, sizeof(FP_ENDBR), &t), 0);
	CHECK_INT(t.shape, PYTRAMP_FP_ENDBR);
	CHECK_INT(t.len, 12);
	/* one byte off, one byte short, one byte more: not a template */
	memcpy(bad, SUB8, sizeof(bad));
	bad[3] = 0x10; /* sub $16,%rsp */
	CHECK_INT(pytramp__match(bad, sizeof(bad), &t), -ENOENT);
	CHECK_INT(pytramp__match(SUB8, sizeof(SUB8) - 1, &t), -ENOENT);
	CHECK_INT(pytramp__match(FP_ENDBR + 4, sizeof(FP_ENDBR) - 3, &t), -ENOENT);
}

TEST(rows_of_sub8)
{
	struct pytramp t;
	struct sframe_row row;
	/* CFA = RSP + this at each offset: before sub, after it (the call's
	 * return address is at 6), after add (ret) */
	static const int cfa[11] = { 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 8 };

	CHECK_INT(pytramp__match(SUB8, sizeof(SUB8), &t), 0);
	for (unsigned off = 0; off < 11; off++) {
		CHECK_INT(pytramp__row(&t, off, &row), 0);
		CHECK_INT(row.cfa.kind, SFRAME_RULE_REG);
		CHECK_INT(row.cfa.reg, UNWIND_REG_RSP);
		CHECK_INT(row.cfa.off, cfa[off]);
		CHECK_INT(row.ra.kind, SFRAME_RULE_CFA_DEREF);
		CHECK_INT(row.ra.off, -8);
		CHECK_INT(row.fp.kind, SFRAME_RULE_NONE); /* RBP untouched */
	}
	CHECK_INT(pytramp__row(&t, 11, &row), -ESRCH);
	CHECK_INT(pytramp__row(&t, UINT64_MAX, &row), -ESRCH);
	t.shape = PYTRAMP_NONE;
	CHECK_INT(pytramp__row(&t, 0, &row), -ESRCH);
}

TEST(rows_of_fp)
{
	struct pytramp t;
	struct sframe_row row;

	CHECK_INT(pytramp__match(FP_ENDBR, sizeof(FP_ENDBR), &t), 0);
	CHECK_INT(pytramp__row(&t, 4, &row), 0); /* at the push */
	CHECK_INT(row.cfa.off, 8);
	CHECK_INT(row.fp.kind, SFRAME_RULE_NONE);
	CHECK_INT(pytramp__row(&t, 9, &row), 0); /* the call: ra - 1 */
	CHECK_INT(row.cfa.off, 16);
	CHECK_INT(row.fp.kind, SFRAME_RULE_CFA_DEREF);
	CHECK_INT(row.fp.off, -16);
	CHECK_INT(pytramp__row(&t, 11, &row), 0); /* after the pop */
	CHECK_INT(row.cfa.off, 8);
	CHECK_INT(row.fp.kind, SFRAME_RULE_NONE);
}

TEST(from_synthetic_elf)
{
	struct pytramp t;
	uint64_t s = VBASE + CODE_OFF;
	uint8_t bad[sizeof(SUB8)];

	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), s, s + 11, 1, &t), 0);
	CHECK_INT(t.shape, PYTRAMP_SUB8);
	CHECK_INT(t.len, 11);
	CHECK(!memcmp(t.code, SUB8, sizeof(SUB8)));
	CHECK_INT(from_synthetic(FP, sizeof(FP), s, s + 8, 1, &t), 0);
	CHECK_INT(t.shape, PYTRAMP_FP);
	/* another shape: not guessed at */
	memcpy(bad, SUB8, sizeof(bad));
	bad[5] = 0xd0; /* call *%rax */
	CHECK_INT(from_synthetic(bad, sizeof(bad), s, s + 11, 1, &t), -ENOTSUP);
	/* a range one byte long than the template */
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), s, s + 12, 1, &t), -ENOTSUP);
	/* symbols that lie: reversed, empty, huge, outside the file */
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), s + 11, s, 1, &t), -EINVAL);
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), s, s, 1, &t), -EINVAL);
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), s, s + 4096, 1, &t), -EINVAL);
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), VBASE + (1u << 20),
				 VBASE + (1u << 20) + 11, 1, &t), -EINVAL);
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), UINT64_MAX - 4, UINT64_MAX, 1, &t),
		  -EINVAL);
	/* no symbols: not CPython */
	CHECK_INT(from_synthetic(SUB8, sizeof(SUB8), 0, 0, 0, &t), -ENOENT);
}

TEST(real_libpython)
{
	static const char *const libs[] = {
		"/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0",
		"/root/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0",
	};
	int found = 0;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		struct elfread *e;
		struct pytramp t;

		if (access(libs[i], R_OK))
			continue;
		found++;
		e = elfread__open(libs[i]);
		CHECK_MSG(e, "%s: does not open", libs[i]);
		CHECK_INT(pytramp__from_elf(e, &t), 0);
		elfread__free(e);
		CHECK_INT(t.shape, PYTRAMP_SUB8);
		CHECK_INT(t.len, 11);
	}
	if (!found)
		SKIP("no CPython 3.12 or 3.13 under /root/.pyenv/versions");
}

/* ---- a walk through a copy ---- */

#define SP0 0x7ffd0000ull
#define EVAL 0x1000ull		/* the evaluator: CFA = RSP + 16 */
#define TRAMP 0x7f0000002000ull /* a copy of the template */
#define CALLER 0x3000ull	/* the outermost function */

static struct pytramp T;
static unsigned tramp_asked, other_asked;

static int find(void *ctx, uint64_t pc, struct sframe_row *row, struct sframe_func *fn)
{
	(void)ctx;
	memset(fn, 0, sizeof(*fn));
	if (pc >= TRAMP && pc < TRAMP + T.len) {
		tramp_asked++;
		fn->flags = UNWIND_FUNC_NO_MEMO;
		return pytramp__row(&T, pc - TRAMP, row);
	}
	other_asked++;
	memset(row, 0, sizeof(*row));
	if (pc >= EVAL && pc < EVAL + 0x100) {
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, UNWIND_REG_RSP, 16);
		row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
		return 0;
	}
	if (pc >= CALLER && pc < CALLER + 0x100) {
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, UNWIND_REG_RSP, 8);
		row->ra = sframe_rule__make(SFRAME_RULE_UNDEFINED, 0, 0);
		return 0;
	}
	return -ENOENT;
}

TEST(walk_through_copy)
{
	uint64_t stack[8] = { 0 };
	struct unwind_cache_entry memo[64];
	struct unwind_cache c = { memo, 6, 1, 0, 0 };
	const struct unwind_ops ops = { find, NULL, NULL, &c, NULL };
	struct unwind_frame fr[8];
	struct sfprof_regs r;
	int stop;
	size_t n;

	CHECK_INT(pytramp__match(SUB8, sizeof(SUB8), &T), 0);
	memset(memo, 0, sizeof(memo));
	/* evaluator at SP0 (its RA at SP0 + 8: into the copy, after the call),
	 * the copy's frame (8 bytes of padding, then its RA into the caller) */
	stack[1] = TRAMP + 6;
	stack[3] = CALLER + 0x10;
	for (int pass = 0; pass < 2; pass++) {
		memset(&r, 0, sizeof(r));
		r.ip = EVAL + 0x20;
		r.sp = SP0;
		r.bp = 0x1234; /* garbage: no frame pointer anywhere */
		tramp_asked = other_asked = 0;
		n = unwind_stack(&r, stack, sizeof(stack), &ops, fr, 8, &stop, NULL, NULL);
		CHECK_INT(stop, UNWIND_STOP_COMPLETE);
		CHECK_INT(n, 3);
		CHECK_U64(fr[1].pc, TRAMP + 6);
		CHECK_U64(fr[2].pc, CALLER + 0x10);
		CHECK(!(fr[1].flags & UNWIND_FRAME_FP) && !(fr[2].flags & UNWIND_FRAME_FP));
		/* the copy's row is asked every walk; the others come from
		 * the memo once kept */
		CHECK_INT(tramp_asked, 1);
		CHECK_INT(other_asked, pass == 0 ? 2 : 0);
	}
	/* a sample at the copy's first byte (RA at SP), and after its add */
	stack[0] = CALLER + 0x10;
	for (unsigned off = 0; off <= 10; off += 10) {
		memset(&r, 0, sizeof(r));
		r.ip = TRAMP + off;
		r.sp = SP0;
		n = unwind_stack(&r, stack, sizeof(stack), &ops, fr, 8, &stop, NULL, NULL);
		CHECK_INT(stop, UNWIND_STOP_COMPLETE);
		CHECK_INT(n, 2);
		CHECK_U64(fr[1].pc, CALLER + 0x10);
	}
}

TEST_MAIN()
