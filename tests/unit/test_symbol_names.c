// SPDX-License-Identifier: MIT
/*
 * Which name a symbol gets, on binaries built here with gcc and on
 * tables made by hand: PLT stubs, C++ demangling and perf's short names,
 * one of several aliases (glibc's public one), code labels, symbols'
 * bounds. Where the symbols come from: test_symbolize.c.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>

#include "model/elfread.h"
#include "symbols/symbolize.h"
#include "testlib.h"
#include "symfix.h"

static const char cxx_cc[] =
	"namespace sfprof { struct Box { int v; int get(int k) const; };\n"
	"__attribute__((noinline)) int Box::get(int k) const { return v + k; } }\n"
	"int main(int argc, char **) { sfprof::Box b{argc}; return b.get(1); }\n";

/* symfix.h's, then a C++ program and an IBT build with .plt.sec
 * (test_fixtures). 0 when all were built. */
static int build_fixtures(const char *d)
{
	if (symfix_build_common(d) || test_write_file(dir, "cxx.cc", cxx_cc))
		return -1;
	if (test_sh("cd '%s' && g++ -O1 -o cxx cxx.cc", dir) ||
	    test_sh("cd '%s' && gcc -O1 -fcf-protection=full -Wl,-z,ibtplt "
		    "-Wl,-z,lazy -o ibt prog.c", dir))
		return -1;
	return 0;
}

#define NEED_FIXTURES() NEED_FIXTURES_OF("symnames", build_fixtures)

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
		uint64_t a = file_sym(dbg, pairs[i][0], NULL);

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
	a = file_sym(dbg, "_dl_start_user", NULL);
	CHECK(a);
	CHECK_INT(symtab__lookup(s, a + 4, &name, &off, NULL), 0);
	CHECK_STR(name, "_dl_start_user");
	a = file_sym(dbg, "_start", NULL);
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

TEST_MAIN()
