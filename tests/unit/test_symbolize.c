// SPDX-License-Identifier: MIT
/*
 * ELF access and symbolization, on binaries built here with gcc:
 * symbols, build-id, load bias (PIE, non-PIE, shared library), separate
 * debug files (build-id path under a test root, .gnu_debuglink),
 * MiniDebugInfo (.gnu_debugdata), C++ demangling, hostile headers.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/elfread.h"
#include "model/procmaps.h"
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

static const char cxx_cc[] =
	"namespace sfprof { struct Box { int v; int get(int k) const; };\n"
	"__attribute__((noinline)) int Box::get(int k) const { return v + k; } }\n"
	"int main(int argc, char **) { sfprof::Box b{argc}; return b.get(1); }\n";

/* Every fixture, once (test_fixtures). 0 when all were built. */
static int build_fixtures(const char *d)
{
	dir = d;
	if (test_write_file(dir, "prog.c", prog_c) || test_write_file(dir, "lib.c", lib_c) ||
	    test_write_file(dir, "cxx.cc", cxx_cc))
		return -1;
	if (test_sh("cd '%s' && gcc -O1 -fPIE -pie -Wl,--build-id=0x%s -o pie prog.c",
	       dir, BUILD_ID_HEX) ||
	    test_sh("cd '%s' && gcc -O1 -fno-pie -no-pie -o nopie prog.c", dir) ||
	    test_sh("cd '%s' && gcc -O1 -shared -fPIC -o libfix.so lib.c", dir) ||
	    test_sh("cd '%s' && g++ -O1 -o cxx cxx.cc", dir) ||
	    test_sh("cd '%s' && gcc -O1 -fcf-protection=full -Wl,-z,ibtplt "
		    "-Wl,-z,lazy -o ibt prog.c", dir))
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

/* ELF vaddr of a named symbol, by iterating .symtab. */
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

static uint64_t sym_value(const char *file, const char *name, uint64_t *size)
{
	struct elfread *e = open_fix(file);
	struct find_ctx c = { .name = name };

	if (!e)
		return 0;
	elfread__for_each_symbol(e, SHT_SYMTAB, find_cb, &c);
	elfread__free(e);
	if (size)
		*size = c.size;
	return c.value;
}

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

/* Every "<name@plt>" objdump shows must be named the same here. */
static int check_plt_names(const char *file, int *count)
{
	char cmd[600], line[512], want[256];
	struct symtab *s = load_fix(file, "/nonexistent");
	const char *name;
	unsigned long long a;
	uint64_t off;
	FILE *f;
	int bad = 0;

	*count = 0;
	if (!s)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "objdump -d -j .plt -j .plt.sec -j .plt.got '%s/%s'", dir,
		 file);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx <%255[^>]>:", &a, want) != 2 ||
		    !strstr(want, "@plt") || strchr(want, '-') ||
		    strchr(want, '+'))
			continue;
		(*count)++;
		if (symtab__lookup(s, a, &name, &off, NULL) ||
		    strcmp(name, want) || off) {
			fprintf(stderr, "%s: 0x%llx: want %s, got %s\n", file,
				a, want, name);
			bad = 1;
		}
	}
	if (f)
		pclose(f);
	symtab__free(s);
	return bad ? -1 : 0;
}

TEST(symtab_should_name_plt_stubs_like_objdump)
{
	int n = 0;

	NEED_FIXTURES();
	CHECK_INT(check_plt_names("pie", &n), 0);
	CHECK(n >= 3); /* printf, fopen, fread, fwrite */
	CHECK_INT(check_plt_names("ibt", &n), 0);
	CHECK(n >= 3);
	CHECK_INT(check_plt_names("libfix.so", &n), 0);
}

TEST(demangle_should_turn_itanium_names_into_cxx)
{
	char *d = symbolize__demangle("_ZNK6sfprof3Box3getEi");

	CHECK_STR(d, "sfprof::Box::get(int) const");
	free(d);
	CHECK(!symbolize__demangle("main"));
	CHECK(!symbolize__demangle("_Zbogus!"));
}

TEST(symtab_should_demangle_cxx_unless_turned_off)
{
	struct elfread *e;
	struct symtab *s, *raw;
	const char *name;
	uint64_t off, a;

	NEED_FIXTURES();
	a = sym_value("cxx", "_ZNK6sfprof3Box3getEi", NULL);
	CHECK(a);
	e = open_fix("cxx");
	CHECK(e);
	s = symtab__load(e, NULL, &(struct symtab_opts){ .no_debug_files = 1 });
	raw = symtab__load(e, NULL,
			   &(struct symtab_opts){ .no_demangle = 1 });
	elfread__free(e);
	CHECK(s && raw);
	CHECK_INT(symtab__lookup(s, a, &name, &off, NULL), 0);
	/* as perf script prints it; --full-names keeps the signature */
	CHECK_STR(name, "sfprof::Box::get");
	symtab__set_full_names(s, 1);
	CHECK_INT(symtab__lookup(s, a, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof::Box::get(int) const");
	CHECK_INT(symtab__lookup(raw, a, &name, &off, NULL), 0);
	CHECK_STR(name, "_ZNK6sfprof3Box3getEi");
	symtab__free(s);
	symtab__free(raw);
}

TEST(symtab_should_give_the_mangled_name_beside_a_demangled_one)
{
	struct symtab *s = symtab__new(0), *raw = symtab__new(1);
	const char *name, *sys;
	uint64_t off;

	CHECK(s && raw);
	CHECK_INT(symtab__add(s, "_ZNK6sfprof3Box3getEi", 0x1000, 0x40, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__add(s, "plain_c", 0x2000, 0x40, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__finish(s), 0);
	CHECK_INT(symtab__lookup_sys(s, 0x1008, &name, &sys, &off, NULL), 0);
	CHECK_STR(name, "sfprof::Box::get");
	CHECK_STR(sys, "_ZNK6sfprof3Box3getEi");
	/* asked again (the name made once): the same */
	CHECK_INT(symtab__lookup_sys(s, 0x1010, &name, &sys, &off, NULL), 0);
	CHECK_STR(sys, "_ZNK6sfprof3Box3getEi");
	/* a C name is the binary's own */
	CHECK_INT(symtab__lookup_sys(s, 0x2008, &name, &sys, &off, NULL), 0);
	CHECK_STR(name, "plain_c");
	CHECK(sys == NULL);
	/* demangling off: the name shown is the mangled one */
	CHECK_INT(symtab__add(raw, "_ZNK6sfprof3Box3getEi", 0x1000, 0x40, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__finish(raw), 0);
	CHECK_INT(symtab__lookup_sys(raw, 0x1008, &name, &sys, &off, NULL), 0);
	CHECK_STR(name, "_ZNK6sfprof3Box3getEi");
	CHECK(sys == NULL);
	symtab__free(s);
	symtab__free(raw);
}

TEST(symtab_should_pick_one_alias_like_perf)
{
	struct symtab *s = symtab__new(0);
	const char *name;
	uint64_t off;

	CHECK(s);
	CHECK_INT(symtab__add(s, "__libc_fn", 0x1000, 0x40, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__add(s, "fn", 0x1000, 0x40, 0, STB_WEAK), 0);
	CHECK_INT(symtab__add(s, "fn_global", 0x1000, 0x40, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__add(s, "nosize", 0x1000, 0, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__finish(s), 0);
	CHECK_INT(symtab__nr(s), 1);
	CHECK_INT(symtab__lookup(s, 0x1010, &name, &off, NULL), 0);
	/* sized > non-weak > global > fewer underscores */
	CHECK_STR(name, "fn_global");
	symtab__free(s);
}

TEST(symtab_should_prefer_public_names_over_glibc_internal_aliases)
{
	static const struct {
		const char *name;
		uint64_t addr;
		uint8_t bind;
	} syms[] = {
		/* libc6-dbg's .symtab: both local */
		{ "__GI___lll_lock_wait", 0x1000, STB_LOCAL },
		{ "__lll_lock_wait", 0x1000, STB_LOCAL },
		{ "__libc_recv", 0x2000, STB_LOCAL },
		{ "__GI___recv", 0x2000, STB_LOCAL },
		{ "__recv", 0x2000, STB_WEAK },
		{ "recv", 0x2000, STB_WEAK },
		{ "_IO_fwrite", 0x3000, STB_GLOBAL },
		{ "fwrite", 0x3000, STB_WEAK },
		{ "local_fn", 0x4000, STB_LOCAL },
		{ "weak_fn", 0x4000, STB_WEAK },
		/* no public alias: the internal name stays */
		{ "__libc_start_main_impl", 0x5000, STB_LOCAL },
		{ "__libc_start_main", 0x5000, STB_GLOBAL },
	};
	static const char *want[] = { "__lll_lock_wait", "recv", "fwrite",
				      "weak_fn", "__libc_start_main" };
	struct symtab *s = symtab__new(0);
	const char *name;
	uint64_t off;

	CHECK(s);
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		CHECK_INT(symtab__add(s, syms[i].name, syms[i].addr, 0x40, 0,
				      syms[i].bind), 0);
	CHECK_INT(symtab__finish(s), 0);
	for (size_t i = 0; i < 5; i++) {
		CHECK_INT(symtab__lookup(s, 0x1000 * (i + 1) + 8, &name, &off, NULL), 0);
		CHECK_STR(name, want[i]);
	}
	symtab__free(s);
}

/* Address of `name` in the .symtab of `path` (0: none). */
static uint64_t file_sym(const char *path, const char *name)
{
	struct elfread *e = elfread__open(path);
	struct find_ctx c = { .name = name };

	if (!e)
		return 0;
	elfread__for_each_symbol(e, SHT_SYMTAB, find_cb, &c);
	elfread__free(e);
	return c.value;
}

TEST(symtab_should_name_libc_aliases_by_their_public_names)
{
	static const char *const pairs[][2] = {
		{ "__GI___lll_lock_wait", "__lll_lock_wait" },
		{ "__GI___recv", "recv" },
		{ "_IO_fwrite", "fwrite" },
		{ "__GI___clock_gettime", "clock_gettime" },
	};
	char dbg[4096];
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct elfread *e = elfread__open(libc);
	struct symtab *s;
	unsigned how;
	const char *name;
	uint64_t off;

	if (!e)
		SKIP("no %s", libc);
	if (symbolize__find_debug_file(e, libc, NULL, dbg, sizeof(dbg), &how)) {
		elfread__free(e);
		SKIP("no debug file for libc (libc6-dbg)");
	}
	s = symtab__load(e, libc, NULL);
	elfread__free(e);
	CHECK(s);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		uint64_t a = file_sym(dbg, pairs[i][0]);

		CHECK_MSG(a, "%s not in the debug file", pairs[i][0]);
		CHECK_INT(symtab__lookup(s, a, &name, &off, NULL), 0);
		CHECK_STR(name, pairs[i][1]);
	}
	symtab__free(s);
}

static const char labels_s[] =
	"\t.text\n"
	"\t.globl main\n\t.type main,@function\nmain:\n"
	"\tcall sfprof_label_a\n\txor %eax,%eax\n\tret\n"
	"\t.size main, .-main\n"
	/* labels of hand-written assembly: STT_NOTYPE, size 0 */
	"\t.globl sfprof_label_a\nsfprof_label_a:\n\tnop\n\tnop\n"
	"sfprof_label_b:\n\tnop\n\tnop\n\tret\n"
	"\t.globl sfprof_sized\n\t.type sfprof_sized,@function\n"
	"sfprof_sized:\n\tnop\nsfprof_inner_label:\n\tnop\n\tret\n"
	"\t.size sfprof_sized, .-sfprof_sized\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

TEST(symtab_should_name_code_labels_up_to_the_next_symbol)
{
	struct symtab *s;
	uint64_t a, b, z, in, off;
	const char *name;

	NEED_FIXTURES();
	CHECK(!test_write_file(dir, "labels.s", labels_s));
	CHECK(!test_sh("cd '%s' && gcc -no-pie -o labels labels.s", dir));
	a = sym_value("labels", "sfprof_label_a", NULL);
	b = sym_value("labels", "sfprof_label_b", NULL);
	z = sym_value("labels", "sfprof_sized", NULL);
	in = sym_value("labels", "sfprof_inner_label", NULL);
	CHECK(a && b == a + 2 && z && in == z + 1);
	s = load_fix("labels", NULL);
	CHECK(s);
	CHECK_INT(symtab__lookup(s, a + 1, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_label_a");
	CHECK_U64(off, 1);
	CHECK_INT(symtab__lookup(s, b + 2, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_label_b");
	CHECK_U64(off, 2);
	/* a label inside a sized function does not cut it short */
	CHECK_INT(symtab__lookup(s, in + 1, &name, &off, NULL), 0);
	CHECK_STR(name, "sfprof_sized");
	CHECK_U64(off, 2);
	symtab__free(s);
}

TEST(symtab_should_name_ld_so_start_user)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	char dbg[4096];
	struct elfread *e = elfread__open(ld);
	struct symtab *s;
	unsigned how;
	const char *name;
	uint64_t a, off;

	if (!e)
		SKIP("no %s", ld);
	if (symbolize__find_debug_file(e, ld, NULL, dbg, sizeof(dbg), &how)) {
		elfread__free(e);
		SKIP("no debug file for ld.so (libc6-dbg)");
	}
	s = symtab__load(e, ld, NULL);
	elfread__free(e);
	CHECK(s);
	a = file_sym(dbg, "_dl_start_user");
	CHECK(a);
	CHECK_INT(symtab__lookup(s, a + 4, &name, &off, NULL), 0);
	CHECK_STR(name, "_dl_start_user");
	a = file_sym(dbg, "_start");
	CHECK(a);
	CHECK_INT(symtab__lookup(s, a, &name, &off, NULL), 0);
	CHECK_STR(name, "_start");
	symtab__free(s);
}

TEST(cxx_short_names_should_be_what_perf_script_prints)
{
	static const char *const cases[][2] = {
		{ "sfprof::Box::get(int) const", "sfprof::Box::get" },
		{ "sfprof::Acc<unsigned long>::step(unsigned long) const [clone .isra.0]",
		  "sfprof::Acc<unsigned long>::step" },
		{ "unsigned long sfprof::mix<unsigned long>(std::vector<unsigned long, "
		  "std::allocator<unsigned long> >&, unsigned long)",
		  "sfprof::mix<unsigned long>" },
		{ "(anonymous namespace)::hidden(unsigned long)",
		  "(anonymous namespace)::hidden" },
		{ "main::{lambda(unsigned long)#1}::operator()(unsigned long) const "
		  "[clone .constprop.0]",
		  "main::{lambda(unsigned long)#1}::operator()" },
		{ "operator new(unsigned long)", "operator new" },
		{ "operator delete[](void*)", "operator delete[]" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		  "<std::char_traits<char> >(std::basic_ostream<char, "
		  "std::char_traits<char> >&, char const*)",
		  "std::operator<< <std::char_traits<char> >" },
		{ "bool sfprof::operator< <int>(sfprof::P<int> const&, sfprof::P<int> const&)",
		  "sfprof::operator< <int>" },
		{ "sfprof::X::operator unsigned long() const", "sfprof::X::operator unsigned long" },
		{ "sfprof::X::f() &&", "sfprof::X::f" },
		{ "std::__cxx11::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> >::_M_create[abi:cxx11](unsigned long&, unsigned long)",
		  "std::__cxx11::basic_string<char, std::char_traits<char>, "
		  "std::allocator<char> >::_M_create[abi:cxx11]" },
		{ "vtable for sfprof::Box", "vtable for sfprof::Box" },
		{ "main", "main" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		size_t n;

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		n = symbolize__cxx_short(buf);
		CHECK_MSG(!strcmp(buf, cases[i][1]), "case %zu: expected \"%.200s\", got \"%.200s\"",
			  i, cases[i][1], buf);
		CHECK_INT(n, strlen(cases[i][1]));
	}
}

TEST(symtab_should_bound_symbols_by_size_section_and_nesting)
{
	struct symtab *s = symtab__new(0);
	const char *name;
	uint64_t off;

	CHECK(s);
	CHECK_INT(symtab__add(s, "big", 0x1000, 0x400, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__add(s, "inner", 0x1100, 0x10, 0, STB_LOCAL), 0);
	CHECK_INT(symtab__add(s, "asm_nosize", 0x2000, 0, 0x2100, STB_GLOBAL),
		  0);
	CHECK_INT(symtab__add(s, "after", 0x3000, 0x10, 0, STB_GLOBAL), 0);
	CHECK_INT(symtab__finish(s), 0);
	CHECK_INT(symtab__lookup(s, 0x1105, &name, &off, NULL), 0);
	CHECK_STR(name, "inner");
	CHECK_INT(symtab__lookup(s, 0x1200, &name, &off, NULL), 0);
	CHECK_STR(name, "big");
	CHECK_U64(off, 0x200);
	CHECK_INT(symtab__lookup(s, 0x1400, &name, &off, NULL), -ENOENT);
	CHECK_INT(symtab__lookup(s, 0x20ff, &name, &off, NULL), 0);
	CHECK_STR(name, "asm_nosize");
	/* Past its section's end: not attributed to the size-0 symbol. */
	CHECK_INT(symtab__lookup(s, 0x2100, &name, &off, NULL), -ENOENT);
	CHECK_INT(symtab__lookup(s, 0x3010, &name, &off, NULL), -ENOENT);
	symtab__free(s);
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
