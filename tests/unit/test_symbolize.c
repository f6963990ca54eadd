// SPDX-License-Identifier: MIT
/*
 * ELF access and where symbols come from, on binaries built here with
 * gcc: sections, build-id, debuglink, load bias (PIE, non-PIE, a
 * dlopened shared library), separate debug files (build-id path under a
 * test root, .gnu_debuglink), MiniDebugInfo (.gnu_debugdata), hostile
 * headers. Which name a symbol gets: test_symbol_names.c.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "symbols/symbolize.h"
#include "symbols/symtab_int.h"
#include "testlib.h"
#include "symfix.h"

/* symfix.h's, then a non-PIE build, separate debug files and
 * MiniDebugInfo (test_fixtures). 0 when all were built. */
static int build_fixtures(const char *d)
{
	if (symfix_build_common(d) ||
	    test_sh("cd '%s' && gcc -O1 -fno-pie -no-pie -o nopie prog.c", dir))
		return -1;
	/* Separate debug file by build-id under a test root. */
	if (test_split_debug_by_build_id(dir, "pie", BUILD_ID_HEX))
		return -1;
	/* .gnu_debuglink, with no build-id (CRC checked), debug file in
	 * .debug/ next to the binary. */
	if (test_sh("cd '%s' && mkdir -p dl/.debug && cd dl && "
	       "gcc -O1 -Wl,--build-id=none -o prog ../prog.c && "
	       "objcopy --only-keep-debug prog .debug/prog.dbg && "
	       "strip -s prog && "
	       "objcopy --add-gnu-debuglink=.debug/prog.dbg prog",
	       dir))
		return -1;
	/* A wrong debug file with the right name: must be refused. */
	if (test_sh("cd '%s' && mkdir -p bad/.debug && "
	       "gcc -O1 -Wl,--build-id=none -o bad/prog prog.c && "
	       "objcopy --only-keep-debug bad/prog bad/.debug/prog.dbg && "
	       "strip -s bad/prog && "
	       "objcopy --add-gnu-debuglink=bad/.debug/prog.dbg bad/prog && "
	       "gcc -O1 -Wl,--build-id=none -DX=1 -o bad/other lib.c -shared -fPIC && "
	       "objcopy --only-keep-debug bad/other bad/.debug/prog.dbg",
	       dir))
		return -1;
	/* MiniDebugInfo the way Fedora makes it (find-debuginfo.sh). */
	if (test_sh("cd '%s' && cp nopie mini && "
	       "nm -D mini --format=posix --defined-only | awk '{print $1}' | sort > dynsyms && "
	       "nm mini --format=posix --defined-only | awk '$2 == \"T\" || $2 == \"t\" {print $1}' | sort > funcsyms && "
	       "comm -13 dynsyms funcsyms > keep && "
	       "objcopy --only-keep-debug mini mini.dbg && "
	       "objcopy -S --remove-section .gdb_index --remove-section .comment "
	       "--keep-symbols=keep mini.dbg mini_debuginfo && "
	       "strip --strip-all -R .comment mini && "
	       "xz -f mini_debuginfo && "
	       "objcopy --add-section .gnu_debugdata=mini_debuginfo.xz mini",
	       dir))
		return -1;
	return 0;
}

#define NEED_FIXTURES() NEED_FIXTURES_OF("symtest", build_fixtures)

TEST(elf_should_expose_sections_loads_and_type)
{
	struct elfread_section s;
	struct elfread_load l;
	struct elfread *e;
	uint64_t va;

	NEED_FIXTURES();
	e = open_fix("pie");
	CHECK(e);
	CHECK_INT(elfread__type(e), ET_DYN);
	CHECK_INT(elfread__machine(e), EM_X86_64);
	CHECK_INT(elfread__section(e, ".text", &s), 0);
	CHECK_STR(s.name, ".text");
	CHECK(s.data != NULL && s.size > 0);
	CHECK(s.flags & SHF_EXECINSTR);
	CHECK_INT(elfread__section(e, ".no-such", &s), -ENOENT);
	CHECK(elfread__nr_loads(e) >= 2);
	CHECK_INT(elfread__load(e, 0, &l), 0);
	CHECK_INT(elfread__section(e, ".text", &s), 0);
	CHECK_INT(elfread__offset_to_vaddr(e, s.offset, &va), 0);
	CHECK_U64(va, s.vaddr);
	elfread__free(e);
	e = open_fix("nopie");
	CHECK(e);
	CHECK_INT(elfread__type(e), ET_EXEC);
	elfread__free(e);
}

TEST(elf_should_read_the_build_id_note)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	struct elfread *e;
	size_t len = 0;

	NEED_FIXTURES();
	e = open_fix("pie");
	CHECK(e);
	CHECK_INT(elfread__build_id(e, id, &len), 0);
	CHECK_INT(len, 20);
	CHECK_STR(elfread__hex(id, len, hex), BUILD_ID_HEX);
	elfread__free(e);
	e = open_fix("dl/prog");
	CHECK(e);
	CHECK_INT(elfread__build_id(e, id, &len), -ENOENT);
	elfread__free(e);
}

TEST(elf_should_read_the_debuglink)
{
	struct elfread *e;
	const char *name = NULL;
	uint32_t crc = 0;

	NEED_FIXTURES();
	e = open_fix("dl/prog");
	CHECK(e);
	CHECK_INT(elfread__debuglink(e, &name, &crc), 0);
	CHECK_STR(name, "prog.dbg");
	CHECK(crc != 0);
	elfread__free(e);
}

TEST(symtab_should_find_global_and_local_functions)
{
	struct symtab *s;
	uint64_t g, gsz, l, off, start;
	const char *name;

	NEED_FIXTURES();
	g = sym_value("pie", "sfprof_fix_global", &gsz);
	l = sym_value("pie", "sfprof_fix_local", NULL);
	CHECK(g && l && gsz);
	s = load_fix("pie", NULL);
	CHECK(s);
	CHECK(symtab__sources(s) & SYMSRC_SYMTAB);
	CHECK_INT(symtab__lookup(s, g, &name, &off, &start), 0);
	CHECK_STR(name, "sfprof_fix_global");
	CHECK_U64(off, 0);
	CHECK_U64(start, g);
	CHECK_INT(symtab__lookup(s, g + gsz - 1, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_global");
	CHECK_U64(off, gsz - 1);
	CHECK_INT(symtab__lookup(s, l + 1, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_local");
	CHECK_U64(off, 1);
	CHECK_INT(symtab__lookup(s, 0x10, &name, &off, NULL), -ENOENT);
	symtab__free(s);
}

/* A name the raw table gives a function starting at v (an alias's too). */
static int raw_func_named(const struct elfread_symtab *t, uint64_t v, const char *name)
{
	struct elfread_raw_sym r;

	for (uint64_t i = 0; i < t->nr; i++) {
		elfread_raw_sym__read(t->is_64, t->syms, i, &r);
		if (r.value == v && r.name < t->strs_len && !strcmp(t->strs + r.name, name))
			return 1;
	}
	return 0;
}

TEST(symtab_should_keep_only_the_names_of_its_functions)
{
	/* this test binary: -g, its .symtab full of objects, locals, files */
	struct elfread *e = elfread__open("/proc/self/exe");
	struct elfread_symtab t;
	struct elfread_raw_sym r;
	struct symtab *s;
	size_t funcs = 0, named = 0;

	CHECK(e);
	CHECK_INT(elfread__symbol_table(e, SHT_SYMTAB, &t), 0);
	s = symtab__load(e, "/proc/self/exe", NULL);
	CHECK(s);
	/* the strings kept are the functions' names, not the whole table */
	CHECK(s->strs_len < t.strs_len);
	CHECK(s->strs_cap == s->strs_len && s->cap == s->nr);
	for (uint64_t i = 0; i < t.nr; i++) {
		const char *name;
		uint64_t off, start;

		elfread_raw_sym__read(t.is_64, t.syms, i, &r);
		if (ELF64_ST_TYPE(r.info) != STT_FUNC || !r.value || !r.size ||
		    r.shndx == SHN_UNDEF)
			continue;
		funcs++;
		if (!symtab__lookup(s, r.value, &name, &off, &start) && off == 0 &&
		    start == r.value && raw_func_named(&t, r.value, name))
			named++;
	}
	CHECK(funcs > 100);
	CHECK_U64(named, funcs);
	symtab__free(s);
	elfread__free(e);
}

TEST(symtab_should_use_debug_file_by_build_id_under_root)
{
	char root[512], path[1024];
	struct symtab *s;
	struct elfread *e;
	const char *name;
	uint64_t l, off;
	unsigned how = 0;

	NEED_FIXTURES();
	snprintf(root, sizeof(root), "%s/root", dir);
	l = sym_value("pie", "sfprof_fix_local", NULL);
	/* Stripped: only .dynsym, which has no local function. */
	s = load_fix("pie-stripped", "/nonexistent");
	CHECK(s);
	CHECK(!(symtab__sources(s) & SYMSRC_DEBUG_BUILDID));
	CHECK_INT(symtab__lookup(s, l, &name, &off, NULL), -ENOENT);
	symtab__free(s);
	s = load_fix("pie-stripped", root);
	CHECK(s);
	CHECK(symtab__sources(s) & SYMSRC_DEBUG_BUILDID);
	CHECK_INT(symtab__lookup(s, l + 2, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_local");
	CHECK_U64(off, 2);
	symtab__free(s);
	e = open_fix("pie-stripped");
	CHECK(e);
	CHECK_INT(symbolize__find_debug_file(e, NULL, root, path, sizeof(path),
					     &how), 0);
	CHECK(strstr(path, "/usr/lib/debug/.build-id/00/"
			   "112233445566778899aabbccddeeff01234567.debug"));
	CHECK_INT(how, SYMSRC_DEBUG_BUILDID);
	elfread__free(e);
}

TEST(symtab_should_use_debuglink_with_crc_check)
{
	struct symtab *s;
	const char *name;
	uint64_t off, l;

	NEED_FIXTURES();
	l = sym_value("dl/.debug/prog.dbg", "sfprof_fix_local", NULL);
	CHECK(l);
	s = load_fix("dl/prog", "/nonexistent");
	CHECK(s);
	CHECK(symtab__sources(s) & SYMSRC_DEBUGLINK);
	CHECK_INT(symtab__lookup(s, l, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_local");
	symtab__free(s);
	/* Same debuglink name, wrong contents: refused. */
	s = load_fix("bad/prog", "/nonexistent");
	CHECK(s);
	CHECK(!(symtab__sources(s) & SYMSRC_DEBUGLINK));
	symtab__free(s);
}

TEST(symtab_should_read_minidebuginfo)
{
	struct elfread *e, *mini;
	struct symtab *s;
	const char *name;
	uint64_t off, l, g;

	NEED_FIXTURES();
	l = sym_value("nopie", "sfprof_fix_local", NULL);
	g = sym_value("nopie", "sfprof_fix_global", NULL);
	e = open_fix("mini");
	CHECK(e);
	CHECK_INT(elfread__section(e, ".symtab", &(struct elfread_section){}),
		  -ENOENT);
	mini = elfread__open_gnu_debugdata(e, 0);
	CHECK(mini);
	elfread__free(mini);
	/* A cap below the real size is refused, not truncated. */
	errno = 0;
	CHECK(!elfread__open_gnu_debugdata(e, 64));
	CHECK_INT(errno, EFBIG);
	elfread__free(e);
	s = load_fix("mini", "/nonexistent");
	CHECK(s);
	CHECK(symtab__sources(s) & SYMSRC_MINIDEBUG);
	CHECK_INT(symtab__lookup(s, l, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_local");
	CHECK_INT(symtab__lookup(s, g + 1, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_fix_global");
	symtab__free(s);
}

/* Run a fixture that prints its functions' addresses and its maps. */
static int run_and_translate(const char *file, const char *fn_name,
			     int which, uint64_t *vaddr_out)
{
	char cmd[600], *text = NULL;
	size_t len = 0, cap = 0, n;
	void *addrs[2];
	struct procmaps *m = NULL;
	const struct procmaps_entry *me;
	struct elfread *e = NULL;
	int64_t bias;
	FILE *f;
	int ret = -1;

	(void)fn_name;
	snprintf(cmd, sizeof(cmd), "%s/%s", dir, file);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			text = realloc(text, cap);
		}
		n = fread(text + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	pclose(f);
	text[len] = 0;
	if (sscanf(text, "%p %p", &addrs[0], &addrs[1]) != 2)
		goto out;
	if (procmaps__parse(strchr(text, '\n') + 1,
			    len - (strchr(text, '\n') + 1 - text), &m, NULL))
		goto out;
	me = procmaps__find(m, (uint64_t)(uintptr_t)addrs[which]);
	if (!me)
		goto out;
	e = elfread__open(me->path);
	if (!e || elfread__mapping_bias(e, me->start, me->offset, &bias))
		goto out;
	*vaddr_out = (uint64_t)(uintptr_t)addrs[which] - bias;
	ret = 0;
out:
	elfread__free(e);
	procmaps__free(m);
	free(text);
	return ret;
}

TEST(bias_should_translate_runtime_addresses_of_pie_and_non_pie)
{
	static const char *files[] = { "pie", "nopie" };
	int i;

	NEED_FIXTURES();
	for (i = 0; i < 2; i++) {
		uint64_t va = 0;

		CHECK_INT(run_and_translate(files[i], NULL, 0, &va), 0);
		CHECK_U64(va, sym_value(files[i], "sfprof_fix_global", NULL));
		CHECK_INT(run_and_translate(files[i], NULL, 1, &va), 0);
		CHECK_U64(va, sym_value(files[i], "sfprof_fix_local", NULL));
	}
}

TEST(bias_should_translate_a_dlopened_shared_library)
{
	char p[512];
	void *h, *fn, *local;
	void *(*get_local)(void);
	struct procmaps *m = NULL;
	const struct procmaps_entry *me;
	struct elfread *e;
	struct symtab *s;
	const char *name;
	uint64_t off;
	int64_t bias;

	NEED_FIXTURES();
	snprintf(p, sizeof(p), "%s/libfix.so", dir);
	h = dlopen(p, RTLD_NOW);
	CHECK(h);
	fn = dlsym(h, "sfprof_lib_fn");
	get_local = (void *(*)(void))dlsym(h, "sfprof_lib_local_addr");
	CHECK(fn && get_local);
	local = get_local();
	CHECK_INT(procmaps__read_file("/proc/self/maps", &m), 0);
	me = procmaps__find(m, (uint64_t)(uintptr_t)fn);
	CHECK(me);
	CHECK(strstr(me->path, "libfix.so"));
	e = elfread__open(me->path);
	CHECK(e);
	CHECK_INT(elfread__mapping_bias(e, me->start, me->offset, &bias), 0);
	s = symtab__load(e, me->path, NULL);
	CHECK(s);
	CHECK_INT(symtab__lookup(s, (uintptr_t)fn - bias, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_lib_fn");
	CHECK_U64(off, 0);
	CHECK_INT(symtab__lookup(s, (uintptr_t)local - bias + 1, &name, &off,
				 NULL), 0);
	CHECK_STR(name, "sfprof_lib_local");
	CHECK_U64(off, 1);
	symtab__free(s);
	elfread__free(e);
	procmaps__free(m);
	dlclose(h);
}

TEST(elf_should_refuse_headers_pointing_outside_the_image)
{
	struct elfread_section sec;
	struct elfread *e;
	const uint8_t *img;
	uint8_t *copy;
	size_t len, i;
	Elf64_Ehdr eh;

	NEED_FIXTURES();
	e = open_fix("pie");
	CHECK(e);
	img = elfread__image(e, &len);
	copy = malloc(len);
	CHECK(copy);
	memcpy(copy, img, len);
	CHECK_INT(elfread__section(e, ".text", &sec), 0);
	i = sec.index;
	elfread__free(e);
	/* Point .text's sh_offset past the end. */
	memcpy(&eh, copy, sizeof(eh));
	{
		Elf64_Shdr sh;
		size_t at = eh.e_shoff + i * sizeof(sh);

		memcpy(&sh, copy + at, sizeof(sh));
		sh.sh_offset = len - 16;
		memcpy(copy + at, &sh, sizeof(sh));
	}
	e = elfread__open_mem(copy, len);
	CHECK(e);
	CHECK_INT(elfread__section(e, ".text", &sec), -EINVAL);
	elfread__free(e);
	/* Truncated to its ELF header: opens or fails, never crashes. */
	e = elfread__open_mem(copy, 64);
	if (e) {
		CHECK_INT(elfread__section(e, ".text", &sec), -ENOENT);
		elfread__free(e);
	}
	/* Big-endian images are refused. */
	copy[EI_DATA] = ELFDATA2MSB;
	CHECK(!elfread__open_mem(copy, len));
	free(copy);
	CHECK(!elfread__open_mem("\177ELF", 4));
}

TEST_MAIN()
