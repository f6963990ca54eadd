// SPDX-License-Identifier: MIT
/*
 * The PHP offset tables (phpreader.h): every field of every table names
 * the source declaration it was read from (a field without one fails);
 * Debian's /usr/bin/php8.2 (required) is found as an NTS engine of the
 * table's API, and the code of its own zend_get_executed_lineno reads
 * current_execute_data, func, prev_execute_data and opline->lineno at
 * the table's offsets (the names and lines those offsets give are
 * checked against debug_backtrace() by tests/e2e/php_chain.py).
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "model/elfread.h"
#include "runtimes/php/phpreader.h"
#include "runtimes/php/phpsession.h"
#include "sfprof_event.h"
#include "testlib.h"

#define PHP82 "/usr/bin/php8.2"
/* (CHECK_STR's message would not fit a long name) */
#define SAME(got, want) \
	CHECK_MSG(!strcmp(got, want), "%s: got \"%.80s\", want \"%.80s\"", #got, got, want)

TEST(every_field_has_its_source)
{
	for (size_t t = 0; t < phpoffsets_count; t++) {
		for (uint32_t f = 0; f < PHPOFF_NFIELDS; f++) {
			int found = 0;

			for (size_t i = 0; i < phpoffsets_sources_count; i++)
				found += phpoffsets_sources[i].api == phpoffsets_table[t].api &&
					 phpoffsets_sources[i].field == f && phpoffsets_sources[i].where &&
					 *phpoffsets_sources[i].where;
			CHECK_MSG(found == 1, "API %u: field %u has %d sources", phpoffsets_table[t].api,
				  f, found);
		}
	}
	for (size_t i = 0; i < phpoffsets_sources_count; i++)
		CHECK(phpoffsets_sources[i].field < PHPOFF_NFIELDS &&
		      phpoffsets__find(phpoffsets_sources[i].api));
}

struct fn_find {
	const char *name;
	uint64_t value, size;
};

static int on_sym(void *ctx, const struct elfread_sym *s)
{
	struct fn_find *f = ctx;

	if (s->type == STT_FUNC && !strcmp(s->name, f->name)) {
		f->value = s->value;
		f->size = s->size;
	}
	return 0;
}

/* Whether code has a load `mov disp8/disp32(%reg), %reg` of displacement d. */
static int has_load(const uint8_t *code, size_t n, uint32_t d)
{
	for (size_t i = 0; i + 3 <= n; i++) {
		/* (REX) 8b modrm: mod 01 disp8, mod 10 disp32 (rm not 100/101) */
		if (code[i] != 0x8b)
			continue;
		uint8_t m = code[i + 1], mod = m >> 6, rm = m & 7;

		if (rm == 4 || rm == 5)
			continue;
		if (mod == 1 && code[i + 2] == d)
			return 1;
		if (mod == 2 && i + 6 <= n) {
			uint32_t v;

			memcpy(&v, code + i + 2, 4);
			if (v == d)
				return 1;
		}
		if (mod == 0 && d == 0)
			return 1;
	}
	return 0;
}

TEST(debian_php82_is_an_nts_engine_at_these_offsets)
{
	struct elfread *e = elfread__open(PHP82);
	const struct phpoffsets *o;
	struct phpimage im;
	struct fn_find f = { "zend_get_executed_lineno", 0, 0 };
	struct elfread_load l;
	size_t len;

	CHECK_MSG(e, "%s: %s (tests/install-deps.sh installs php8.2-cli)", PHP82, strerror(errno));
	if (!e)
		return;
	CHECK_INT(phpsession__image(e, &im), 0);
	CHECK_INT(im.zts, 0);
	o = phpoffsets__find(im.api);
	CHECK_MSG(o, "API %u has no table", im.api);
	elfread__for_each_symbol(e, SHT_DYNSYM, on_sym, &f);
	CHECK(f.value && f.size > 16 && f.size < 4096);
	const uint8_t *img = elfread__image(e, &len), *code = NULL;

	for (size_t i = 0; i < elfread__nr_loads(e) && f.value; i++)
		if (!elfread__load(e, i, &l) && f.value >= l.vaddr &&
		    f.value + f.size <= l.vaddr + l.filesz && l.offset + (f.value - l.vaddr) + f.size <= len)
			code = img + l.offset + (f.value - l.vaddr);
	CHECK(code != NULL);
	if (o && code) {
		CHECK_MSG(has_load(code, f.size, o->eg_current_execute_data),
			  "no load of EG + %#x", o->eg_current_execute_data);
		CHECK_MSG(has_load(code, f.size, o->ex_func), "no load of ex + %u", o->ex_func);
		CHECK_MSG(has_load(code, f.size, o->ex_prev), "no load of ex + %u", o->ex_prev);
		CHECK_MSG(has_load(code, f.size, o->op_lineno), "no load of opline + %u", o->op_lineno);
		CHECK_MSG(has_load(code, f.size, o->op_opcodes), "no load of op_array + %u",
			  o->op_opcodes);
	}
	elfread__free(e);
}

TEST(every_table_fits_the_bpf_walks_reads)
{
	struct phpoffsets bad;
	struct sfprof_php_proc b;

	for (size_t i = 0; i < phpoffsets_count; i++) {
		const struct phpoffsets *o = &phpoffsets_table[i];

		CHECK_MSG(phpoffsets__bpf(o, &b) == 0, "API %u", o->api);
		CHECK_INT(b.op_win, o->op_last);
		CHECK_INT(b.fn_scope, o->fn_scope);
		CHECK_INT(b.op_filename, o->op_filename);
	}
	/* a field past a window is refused, not read as garbage */
	bad = phpoffsets_table[0];
	bad.op_line_start = bad.op_last + SFPROF_PY_WIN;
	CHECK_INT(phpoffsets__bpf(&bad, &b), -ERANGE);
	bad = phpoffsets_table[0];
	bad.fn_scope = SFPROF_PHP_FN_HEAD;
	CHECK_INT(phpoffsets__bpf(&bad, &b), -ERANGE);
	bad = phpoffsets_table[0];
	bad.op_opcodes = bad.op_last - 8;
	CHECK_INT(phpoffsets__bpf(&bad, &b), -ERANGE);
}

static uint8_t mem[4096];

/* phpreader_read_fn over mem, mapped at *(uint64_t *)ctx */
static int test_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = *(const uint64_t *)ctx;

	if (addr < base || addr - base > sizeof(mem) || len > sizeof(mem) - (addr - base))
		return -EFAULT;
	memcpy(buf, mem + (addr - base), len);
	return 0;
}

TEST(names_come_from_a_frame_image)
{
	/* a user function "leafWork" of class "Chain" in "/srv/c.php",
	 * opcodes whose third op is on line 15, as a process would hold them */
	const struct phpoffsets *o = phpoffsets__find(20220829);
	uint64_t base = 0x7f0000000000ull, v;
	struct phpframe_name nm;
	uint32_t u;

	CHECK(o != NULL);
	if (!o)
		return;
	memset(mem, 0, sizeof(mem));
	mem[o->fn_type] = (uint8_t)o->user_function;
#define PUT64(off, x) (v = (x), memcpy(mem + (off), &v, 8))
#define PUT32(off, x) (u = (x), memcpy(mem + (off), &u, 4))
#define STR(off, s) (PUT64((off) + o->str_len, strlen(s)), memcpy(mem + (off) + o->str_val, s, strlen(s)))
	PUT64(o->fn_name, base + 0x400);
	STR(0x400, "leafWork");
	PUT64(o->fn_scope, base + 0x500);
	PUT64(0x500 + o->ce_name, base + 0x600);
	STR(0x600, "Chain");
	PUT64(o->op_filename, base + 0x700);
	STR(0x700, "/srv/c.php");
	PUT32(o->op_line_start, 11);
	PUT32(o->op_last, 4);
	PUT64(o->op_opcodes, base + 0x800);
	PUT32(0x800 + 2 * o->op_size + o->op_lineno, 15);

	struct phpreader_src s = { o, test_read, &base };

	CHECK_INT(phpreader__frame(&s, base, 2, &nm), 0);
	SAME(nm.name, "Chain::leafWork");
	SAME(nm.file, "/srv/c.php");
	CHECK_INT(nm.line, 15);
	CHECK_INT(nm.line_start, 11);
	/* past the op_array's last op: its first line */
	CHECK_INT(phpreader__frame(&s, base, 9, &nm), 0);
	CHECK_INT(nm.line, 11);
	/* not a function */
	mem[o->fn_type] = 7;
	CHECK(phpreader__frame(&s, base, 2, &nm) < 0);
}

TEST_MAIN()
