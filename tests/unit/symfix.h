/* SPDX-License-Identifier: MIT */
/*
 * The fixtures test_symbolize.c and test_symbol_names.c share: a small C
 * program (prog.c, built as "pie" with a known build-id) and a shared
 * library (lib.c, "libfix.so"), compiled with gcc into the test's
 * directory; each test adds its own fixtures in the build function it
 * hands NEED_FIXTURES_OF(). Static: include it once per test.
 */
#ifndef SFPROF_TEST_SYMFIX_H
#define SFPROF_TEST_SYMFIX_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/elfread.h"
#include "symbols/symbolize.h"
#include "testlib.h"

#define BUILD_ID_HEX "00112233445566778899aabbccddeeff01234567"

/* The fixtures' directory (test_tmpdir), once NEED_FIXTURES() passed. */
static const char *dir = "";

static const char prog_c[] =
	"#include <stdio.h>\n"
	"__attribute__((noinline)) int sfprof_fix_global(int x)\n"
	"{ return x * 3 + 1; }\n"
	"__attribute__((noinline)) static int sfprof_fix_local(int x)\n"
	"{ return x ^ 0x55; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"  char b[4096]; size_t n; FILE *f;\n"
	"  (void)argv;\n"
	"  printf(\"%p %p\\n\", (void *)sfprof_fix_global,\n"
	"         (void *)sfprof_fix_local);\n"
	"  f = fopen(\"/proc/self/maps\", \"r\");\n"
	"  while ((n = fread(b, 1, sizeof b, f)) > 0) fwrite(b, 1, n, stdout);\n"
	"  return sfprof_fix_global(argc) + sfprof_fix_local(argc) == 0;\n"
	"}\n";

static const char lib_c[] =
	"__attribute__((noinline)) static int sfprof_lib_local(int x)\n"
	"{ return x + 7; }\n"
	"int sfprof_lib_fn(int x) { return sfprof_lib_local(x) * 2; }\n"
	"void *sfprof_lib_local_addr(void) { return (void *)sfprof_lib_local; }\n";

/* Into d (dir from now on): prog.c, lib.c, "pie" and "libfix.so". 0
 * when all were made. */
static int symfix_build_common(const char *d)
{
	dir = d;
	if (test_write_file(dir, "prog.c", prog_c) || test_write_file(dir, "lib.c", lib_c))
		return -1;
	if (test_sh("cd '%s' && gcc -O1 -fPIE -pie -Wl,--build-id=0x%s -o pie prog.c",
	       dir, BUILD_ID_HEX) ||
	    test_sh("cd '%s' && gcc -O1 -shared -fPIC -o libfix.so lib.c", dir))
		return -1;
	return 0;
}

static struct elfread *open_fix(const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return elfread__open(p);
}

static struct symtab *load_fix(const char *name, const char *root)
{
	struct symtab_opts o = { .debug_root = root };
	struct elfread *e = open_fix(name);
	struct symtab *s;
	char p[512];

	if (!e)
		return NULL;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	s = symtab__load(e, p, &o);
	elfread__free(e);
	return s;
}

/* A named symbol's ELF vaddr and size, by iterating .symtab. */
struct find_ctx {
	const char *name;
	uint64_t value, size;
};

static int find_cb(void *ctx, const struct elfread_sym *s)
{
	struct find_ctx *c = ctx;

	if (strcmp(s->name, c->name))
		return 0;
	c->value = s->value;
	c->size = s->size;
	return 1;
}

/* Address of `name` in the .symtab of `path` (0: none); its size into
 * *size unless NULL. */
static uint64_t file_sym(const char *path, const char *name, uint64_t *size)
{
	struct elfread *e = elfread__open(path);
	struct find_ctx c = { .name = name };

	if (!e)
		return 0;
	elfread__for_each_symbol(e, SHT_SYMTAB, find_cb, &c);
	elfread__free(e);
	if (size)
		*size = c.size;
	return c.value;
}

/* The same in the fixture `file`. */
static uint64_t sym_value(const char *file, const char *name, uint64_t *size)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return file_sym(p, name, size);
}

#endif
