// SPDX-License-Identifier: MIT
/*
 * Process address-space model, live against this test's own process (and
 * a forked child), and offline from recorded mappings.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "model/proc.h"
#include "model/procmaps.h"
#include "unwind/sframe.h"
#include "testlib.h"

/* A shared library built for this run: path in buf. */
static int build_lib(const char *name, char *buf, size_t cap)
{
	const char *dir = test_tmpdir("proctest");

	if (!dir)
		return -1;
	snprintf(buf, cap, "%s/%s", dir, name);
	return test_sh("printf '%%s\\n' "
		       "'__attribute__((noinline)) int sfprof_dl_fn(int x) "
		       "{ return x * 5 + 3; }' > '%s.c' && "
		       "gcc -O1 -shared -fPIC -o '%s' '%s.c'",
		       buf, buf, buf);
}

__attribute__((noinline)) int sfprof_test_target(int x)
{
	return x * 7 + 1;
}

/* libc's own definition (not a sanitizer's interceptor of it). */
static void *libc_sym(const char *name)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *s = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);
	return s;
}

static struct proc_cache *new_cache(uint32_t reread_ms)
{
	struct proc_cache_opts o = { .reread_interval_ms = reread_ms,
				     .quiet = 1 };

	return proc_cache__new(&o);
}

TEST(symbolize_should_name_a_function_of_this_process)
{
	struct proc_cache *pc = new_cache(0);
	struct proc *p;
	struct sym_result r;
	uint64_t pcv = (uint64_t)(uintptr_t)&sfprof_test_target + 3;

	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, pcv, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	CHECK_U64(r.offset, 3);
	CHECK_STR(r.dso_name, "test_proc");
	CHECK(r.has_elf);
	CHECK(strlen(r.build_id) == 40);
	proc_cache__free(pc);
}

TEST(symbolize_should_name_libc_functions_through_debug_files_or_dynsym)
{
	struct proc_cache *pc = new_cache(0);
	void *q = libc_sym("qsort");
	struct sym_result r;
	struct proc *p;

	CHECK(pc && q);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)q + 1, &r), 0);
	CHECK_STR(r.name, "qsort");
	CHECK_U64(r.offset, 1);
	CHECK_STR(r.dso_name, "libc.so.6");
	proc_cache__free(pc);
}

TEST(symbolize_should_give_file_relative_address_without_symbol)
{
	struct proc_cache *pc = new_cache(0);
	struct sym_result r;
	struct proc *p;

	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	/* Address 0x10 is never mapped. */
	CHECK_INT(proc__symbolize(p, 0x10, &r), -ENOENT);
	CHECK(!r.name && !r.dso_path);
	proc_cache__free(pc);
}

TEST(vdso_should_be_read_from_memory_and_symbolized)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), va;
	struct procmaps *m = NULL;
	const struct procmaps_entry *e;
	struct proc_cache *pc;
	struct elfread *elf;
	struct sym_result r;
	struct proc *p;

	if (!base)
		SKIP("no vdso in this process");
	CHECK_INT(procmaps__read_file("/proc/self/maps", &m), 0);
	e = procmaps__find(m, base);
	CHECK(e);
	CHECK_STR(e->path, "[vdso]");
	/* The image in memory is an ELF with its load at the mapping. */
	elf = elfread__open_mem((void *)(uintptr_t)base, e->end - e->start);
	CHECK(elf);
	{
		int64_t bias;

		CHECK_INT(elfread__mapping_bias(elf, e->start, e->offset, &bias),
			  0);
		CHECK_U64((uint64_t)bias, e->start);
	}
	elfread__free(elf);
	pc = new_cache(0);
	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	/* Some function in the vdso's code: scan for the first named one. */
	for (va = e->start; va < e->end; va += 4) {
		if (proc__symbolize(p, va, &r) == 0 && r.name)
			break;
	}
	CHECK_STR(r.dso_path, "[vdso]");
	CHECK(r.name != NULL);
	CHECK(strstr(r.name, "vdso") || strstr(r.name, "time") ||
	      strstr(r.name, "cpu"));
	CHECK(strlen(r.build_id) > 0);
	{
		struct proc_stats st;

		proc_cache__stats(pc, &st);
		CHECK_INT(st.vdso_reads, 1);
	}
	proc_cache__free(pc);
	procmaps__free(m);
}

TEST(miss_should_reread_maps_and_find_a_dlopened_library)
{
	char lib[200];
	struct proc_cache *pc = new_cache(100000); /* only invalidate re-reads */
	struct proc_stats st;
	struct sym_result r;
	struct proc *p;
	void *h, *fn;

	CHECK(pc);
	CHECK_INT(build_lib("libdl1.so", lib, sizeof(lib)), 0);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	h = dlopen(lib, RTLD_NOW);
	CHECK(h);
	fn = dlsym(h, "sfprof_dl_fn");
	CHECK(fn);
	/* Rate limited: the first miss right after the first read waits. */
	CHECK_INT(proc__symbolize(p, (uintptr_t)fn, &r), -ENOENT);
	proc_cache__stats(pc, &st);
	CHECK_INT(st.rereads_limited, 1);
	proc__invalidate(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)fn, &r), 0);
	CHECK_STR(r.name, "sfprof_dl_fn");
	CHECK_STR(r.dso_name, "libdl1.so");
	proc_cache__stats(pc, &st);
	CHECK_INT(st.maps_rereads, 1);
	CHECK(proc__generation(p) >= 2);
	dlclose(h);
	proc_cache__free(pc);
}

TEST(deleted_library_should_open_through_map_files)
{
	char lib[200];
	struct proc_cache *pc;
	struct proc_stats st;
	struct sym_result r;
	struct proc *p;
	void *h, *fn;

	CHECK_INT(build_lib("libdel.so", lib, sizeof(lib)), 0);
	h = dlopen(lib, RTLD_NOW);
	CHECK(h);
	fn = dlsym(h, "sfprof_dl_fn");
	CHECK(fn);
	{
		/* Opening map_files needs CAP_SYS_ADMIN (or CHECKPOINT_RESTORE). */
		struct procmaps *m = NULL;
		const struct procmaps_entry *me;
		char mf[128];
		int fd;

		CHECK_INT(procmaps__read_file("/proc/self/maps", &m), 0);
		me = procmaps__find(m, (uintptr_t)fn);
		CHECK(me);
		snprintf(mf, sizeof(mf), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)me->start,
			 (unsigned long long)me->end);
		procmaps__free(m);
		fd = open(mf, O_RDONLY);
		if (fd < 0) {
			dlclose(h);
			SKIP("cannot open %s (%s): needs root", mf,
			     strerror(errno));
		}
		close(fd);
	}
	CHECK_INT(unlink(lib), 0);
	pc = new_cache(0);
	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)fn + 2, &r), 0);
	CHECK_STR(r.name, "sfprof_dl_fn");
	CHECK_U64(r.offset, 2);
	CHECK_STR(r.dso_path, lib);
	proc_cache__stats(pc, &st);
	CHECK(st.open_map_files > 0);
	dlclose(h);
	proc_cache__free(pc);
}

TEST(exited_process_should_keep_its_last_maps)
{
	struct proc_cache *pc = new_cache(1);
	struct proc_stats st;
	struct sym_result r;
	struct proc *p;
	int fds[2], status;
	pid_t child;
	char c;

	CHECK(pc);
	CHECK_INT(pipe(fds), 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1); /* until the parent closes */
		_exit(0);
	}
	close(fds[0]);
	p = proc_cache__get(pc, child);
	CHECK(p);
	close(fds[1]);
	CHECK_INT(waitpid(child, &status, 0), child);
	usleep(2000);
	/* The child had this binary mapped where we have it (fork). */
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	/* A miss tries one re-read, finds the process gone, keeps maps. */
	CHECK_INT(proc__symbolize(p, 0x10, &r), -ENOENT);
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	usleep(2000);
	CHECK_INT(proc__symbolize(p, 0x10, &r), -ENOENT);
	proc_cache__stats(pc, &st);
	CHECK_INT(st.maps_rereads, 1); /* exited: no second re-read */
	proc_cache__free(pc);
}

TEST(offline_should_rebuild_a_process_from_recorded_mappings)
{
	struct proc_cache *live = new_cache(0), *off;
	struct proc_mapping_rec *recs = NULL;
	struct proc_cache_opts oo = { .offline = 1, .quiet = 1 };
	struct sym_result r;
	struct proc *p, *q;
	size_t nr = 0, i;

	CHECK(live);
	p = proc_cache__get(live, getpid());
	CHECK(p);
	CHECK_INT(proc__snapshot_maps(p, &recs, &nr), 0);
	CHECK(nr >= 2);
	for (i = 0; i < nr; i++)
		CHECK(recs[i].prot & PROCMAPS_PROT_EXEC);
	off = proc_cache__new(&oo);
	CHECK(off);
	/* Any order. */
	for (i = nr; i-- > 0;)
		CHECK_INT(proc_cache__add_mapping(off, 4242, &recs[i]), 0);
	q = proc_cache__lookup(off, 4242);
	CHECK(q);
	CHECK_INT(proc__symbolize(q, (uintptr_t)&sfprof_test_target + 1, &r),
		  0);
	CHECK_STR(r.name, "sfprof_test_target");
	CHECK_INT(proc__symbolize(q, (uintptr_t)libc_sym("qsort"),
				  &r), 0);
	CHECK_STR(r.name, "qsort");
	free(recs);
	proc_cache__free(off);
	proc_cache__free(live);
}

TEST(evict_unused_should_free_only_the_binaries_no_process_maps)
{
	struct proc_cache *pc = new_cache(0);
	struct proc_mapping_rec *recs = NULL;
	struct dso_stats ds;
	struct sym_result r;
	size_t nr = 0, loads;
	struct proc *p;

	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_INT(proc__snapshot_maps(p, &recs, &nr), 0);
	free(recs);
	/* all mapped: nothing goes */
	CHECK_U64(proc_cache__evict_unused(pc), 0);
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	dso_cache__stats(proc_cache__dsos(pc), &ds);
	loads = ds.loads;
	CHECK(loads >= 2);
	/* the process is gone: so are its binaries */
	CHECK_INT(proc_cache__remove(pc, getpid()), 0);
	CHECK_U64(proc_cache__evict_unused(pc), loads);
	dso_cache__stats(proc_cache__dsos(pc), &ds);
	CHECK_U64(ds.evicted, loads);
	/* and they come back when needed */
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	proc_cache__free(pc);
}

struct problem_seen {
	int n;
	char what[64];
};

static void on_problem(void *ctx, const char *path, const char *what,
		       const char *detail)
{
	struct problem_seen *s = ctx;

	(void)path;
	(void)detail;
	s->n++;
	snprintf(s->what, sizeof(s->what), "%s", what);
}

TEST(offline_should_refuse_a_binary_whose_build_id_differs)
{
	struct proc_cache_opts oo = { .offline = 1, .quiet = 1 };
	struct proc_cache *live = new_cache(0), *off;
	struct proc_mapping_rec *recs = NULL, *mine = NULL;
	struct problem_seen seen = { 0 };
	uint64_t addr = (uintptr_t)&sfprof_test_target;
	struct sframe_row row;
	struct proc_stats st;
	struct sym_result r;
	size_t nr = 0, i;
	struct proc *q;

	CHECK(live);
	CHECK_INT(proc__snapshot_maps(proc_cache__get(live, getpid()), &recs,
				      &nr), 0);
	for (i = 0; i < nr; i++)
		if (addr >= recs[i].start && addr < recs[i].end)
			mine = &recs[i];
	CHECK(mine);
	CHECK(mine->build_id_len > 0);
	mine->build_id[0] ^= 0xff; /* the file "changed" since the capture */
	off = proc_cache__new(&oo);
	CHECK(off);
	CHECK_INT(proc_cache__add_mapping(off, 7, mine), 0);
	q = proc_cache__lookup(off, 7);
	CHECK(q);
	CHECK_INT(proc__symbolize(q, addr, &r), 0);
	CHECK(r.name == NULL);
	CHECK(!r.has_elf);
	CHECK_U64(r.rel_addr, addr - mine->start + mine->offset);
	CHECK_INT(proc__find_row(q, addr, &row, NULL, NULL), -ESRCH);
	proc_cache__stats(off, &st);
	CHECK_INT(st.buildid_mismatch, 1);
	proc_cache__for_each_problem(off, on_problem, &seen);
	CHECK_INT(seen.n, 1);
	CHECK_STR(seen.what, "build-id mismatch");
	free(recs);
	proc_cache__free(off);
	proc_cache__free(live);
}

TEST(find_row_should_cover_a_libc_function)
{
	struct proc_cache *pc = new_cache(0);
	void *q = libc_sym("qsort");
	uint64_t rt_start = 0;
	struct sframe_func fn;
	struct sframe_row row;
	struct sym_result r;
	struct proc *p;
	int err;

	CHECK(pc && q);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__find_row(p, 0x10, &row, &fn, &rt_start), -ENOENT);
	err = proc__find_row(p, (uintptr_t)q + 1, &row, &fn, &rt_start);
	if (err == -ESRCH) {
		struct dso_cache *dc = proc_cache__dsos(pc);
		struct dso_stats st;

		dso_cache__stats(dc, &st);
		if (st.tables_none && !st.tables_derived)
			SKIP("no SFrame table for libc: derivation from "
			     ".eh_frame (cfi) unavailable in this build");
	}
	CHECK_INT(err, 0);
	CHECK(rt_start <= (uintptr_t)q + 1);
	CHECK((uintptr_t)q + 1 < rt_start + fn.size);
	/* The function the row belongs to is the one the symbols name. */
	CHECK_INT(proc__symbolize(p, rt_start, &r), 0);
	CHECK_STR(r.name, "qsort");
	CHECK_U64(r.offset, 0);
	CHECK_INT(row.cfa.kind, SFRAME_RULE_REG);
	proc_cache__free(pc);
}

TEST(read_code_should_copy_the_mapped_binarys_bytes)
{
	struct proc_cache *pc = new_cache(0);
	uint8_t *q = libc_sym("qsort");
	uint8_t buf[16];
	struct proc *p;

	CHECK(pc && q);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__read_code(p, (uintptr_t)&sfprof_test_target, buf,
				  sizeof(buf)), 0);
	CHECK(!memcmp(buf, (const void *)&sfprof_test_target, sizeof(buf)));
	CHECK_INT(proc__read_code(p, (uintptr_t)q, buf, sizeof(buf)), 0);
	CHECK(!memcmp(buf, q, sizeof(buf)));
	CHECK_INT(proc__read_code(p, 0x10, buf, sizeof(buf)), -ENOENT);
	proc_cache__free(pc);
}

TEST(offline_should_use_a_sysroot_and_match_the_vdso_by_build_id)
{
	struct proc_cache *live = new_cache(0), *off;
	struct proc_mapping_rec *recs = NULL, *mine = NULL, *vdso = NULL;
	uint64_t addr = (uintptr_t)&sfprof_test_target, va;
	const char *dir = test_tmpdir("proctest");
	char root[300];
	struct sym_result r, lr;
	struct proc *p, *q;
	size_t nr = 0, i;

	CHECK(live);
	p = proc_cache__get(live, getpid());
	CHECK(p);
	CHECK_INT(proc__snapshot_maps(p, &recs, &nr), 0);
	for (i = 0; i < nr; i++) {
		if (addr >= recs[i].start && addr < recs[i].end)
			mine = &recs[i];
		if (!strcmp(recs[i].path, "[vdso]"))
			vdso = &recs[i];
	}
	CHECK(mine);
	/* Recorded under a path that exists only in the sysroot. */
	mine->path = "/sfprof-sysroot-only/bin/test_proc";
	CHECK(dir);
	snprintf(root, sizeof(root), "%s/sysroot", dir);
	CHECK_INT(test_sh("mkdir -p '%s'\"$(dirname '%s')\" && cp /proc/%d/exe '%s%s'",
		     root, mine->path, getpid(), root, mine->path), 0);
	off = proc_cache__new(&(struct proc_cache_opts){
		.offline = 1, .quiet = 1, .sysroot = root });
	CHECK(off);
	CHECK_INT(proc_cache__add_mapping(off, 9, mine), 0);
	if (vdso)
		CHECK_INT(proc_cache__add_mapping(off, 9, vdso), 0);
	q = proc_cache__lookup(off, 9);
	CHECK(q);
	CHECK_INT(proc__symbolize(q, addr + 2, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	CHECK_STR(r.dso_path, mine->path); /* the recorded path */
	if (vdso) {
		for (va = vdso->start; va < vdso->end; va += 4)
			if (!proc__symbolize(p, va, &lr) && lr.name)
				break;
		CHECK(va < vdso->end);
		CHECK_INT(proc__symbolize(q, va, &r), 0);
		CHECK_STR(r.name, lr.name);
	}
	free(recs);
	proc_cache__free(off);
	proc_cache__free(live);
}

struct find_sym {
	const char *name;
	uint64_t value;
};

static int find_sym_cb(void *ctx, const struct elfread_sym *s)
{
	struct find_sym *f = ctx;

	if (strcmp(s->name, f->name))
		return 0;
	f->value = s->value;
	return 1;
}

TEST(dso_with_own_sframe_should_fill_gaps_from_eh_frame)
{
	struct find_sym st = { "_start" }, mn = { "main" };
	struct dso_cache *dc;
	struct sframe_func fn;
	struct sframe_row row;
	struct dso_stats ds;
	const char *dir = test_tmpdir("proctest");
	char exe[300];
	struct dso *d;

	CHECK(dir);
	snprintf(exe, sizeof(exe), "%s/gsframe", dir);
	if (test_sh("printf 'int main(void) { return 0; }\\n' > '%s.c' && "
	       "gcc -O2 -Wa,--gsframe -o '%s' '%s.c' 2>/dev/null",
	       exe, exe, exe))
		SKIP("this assembler cannot emit .sframe (-Wa,--gsframe)");
	dc = dso_cache__new(NULL);
	CHECK(dc);
	d = dso_cache__open_path(dc, exe);
	CHECK(d);
	elfread__for_each_symbol(dso__elf(d), SHT_SYMTAB, find_sym_cb, &st);
	elfread__for_each_symbol(dso__elf(d), SHT_SYMTAB, find_sym_cb, &mn);
	CHECK(st.value && mn.value);
	CHECK_INT(dso__table_source(d), DSO_TABLE_OWN);
	CHECK_INT(dso__find_row(d, mn.value, &row, &fn), 0);
	CHECK_U64(fn.start, mn.value);
	/* crt1.o's _start has CFI but no .sframe: the derived rows cover
	 * it, and say the return address is undefined (outermost frame). */
	CHECK_INT(dso__find_row(d, st.value + 1, &row, &fn), 0);
	CHECK_U64(fn.start, st.value);
	CHECK_INT(row.ra.kind, SFRAME_RULE_UNDEFINED);
	dso_cache__stats(dc, &ds);
	CHECK_INT(ds.tables_own, 1);
	CHECK_INT(ds.row_misses, 0);
	dso_cache__free(dc);
}

/*
 * Every address of path's PLT sections (and 64 bytes around each): the
 * lazily derived table (blocks through .eh_frame_hdr) and the whole
 * derived table give the same answer. 0, or the first differing vaddr.
 */
static uint64_t plt_rows_differ(const char *path, int *nr_rows, int *whole)
{
	static const char *const secs[] = { ".plt", ".plt.sec", ".plt.got" };
	struct dso_cache_opts o = { .no_demangle = 1, .no_debug_files = 1 };
	struct dso_cache *lazy = dso_cache__new(&o), *full = dso_cache__new(&o);
	struct dso *dl = lazy ? dso_cache__open_path(lazy, path) : NULL;
	struct dso *df = full ? dso_cache__open_path(full, path) : NULL;
	struct dso_stats st;
	uint64_t bad = 0;

	*nr_rows = 0;
	if (!dl || !df) {
		bad = 1;
		goto out;
	}
	dso__sframe(df); /* the whole table, at once */
	for (size_t k = 0; k < sizeof(secs) / sizeof(secs[0]) && !bad; k++) {
		struct elfread_section sec;

		if (elfread__section(dso__elf(dl), secs[k], &sec) || !sec.size)
			continue;
		for (uint64_t va = sec.vaddr - 64; va < sec.vaddr + sec.size + 64; va++) {
			struct sframe_row r1, r2;
			struct sframe_func f1, f2;
			int e1, e2;

			memset(&r1, 0, sizeof(r1));
			memset(&r2, 0, sizeof(r2));
			memset(&f1, 0, sizeof(f1));
			memset(&f2, 0, sizeof(f2));
			e1 = dso__find_row(dl, va, &r1, &f1);
			e2 = dso__find_row(df, va, &r2, &f2);
			if (e1 != e2 ||
			    (!e1 && (memcmp(&r1, &r2, sizeof(r1)) ||
				     f1.start != f2.start || f1.size != f2.size ||
				     f1.flags != f2.flags))) {
				bad = va;
				break;
			}
			*nr_rows += !e1;
		}
	}
	dso_cache__stats(lazy, &st);
	*whole = (int)st.tables_whole;
out:
	dso_cache__free(lazy);
	dso_cache__free(full);
	return bad;
}

TEST(plt_rows_should_be_derived_lazily_as_the_whole_table_gives_them)
{
	static const char *const variants[] = {
		"",					   /* FDEs cover the PLT */
		"-Wl,--no-ld-generated-unwind-info",	   /* synthesized rows */
		"-fcf-protection=full -Wl,-z,ibtplt",	   /* .plt + .plt.sec */
		"-fcf-protection=full -Wl,-z,ibtplt -Wl,--no-ld-generated-unwind-info",
	};
	const char *dir = test_tmpdir("proctest");
	char exe[300];
	uint64_t bad;
	int rows, whole;

	CHECK(dir);
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		snprintf(exe, sizeof(exe), "%s/plt%zu", dir, i);
		if (test_sh("printf '#include <stdio.h>\\n#include <stdlib.h>\\n"
		       "int main(int c, char **v) { printf(\"%%d\", atoi(v[0]) + c); "
		       "puts(v[0]); return 0; }\\n' > '%s.c' && "
		       "gcc -O2 %s -o '%s' '%s.c' 2>/dev/null",
		       exe, variants[i], exe, exe))
			continue; /* an option this toolchain lacks */
		bad = plt_rows_differ(exe, &rows, &whole);
		if (bad)
			TEST__FAIL("%s (%s): lazy and whole rows differ at 0x%" PRIx64,
				   exe, variants[i], bad);
		CHECK(rows > 0);
		CHECK_INT(whole, 0);
	}
	/* libc calls its own IFUNCs through .plt, covered by FDEs */
	if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0) {
		bad = plt_rows_differ("/lib/x86_64-linux-gnu/libc.so.6", &rows, &whole);
		if (bad)
			TEST__FAIL("libc: lazy and whole rows differ at 0x%" PRIx64, bad);
		CHECK_INT(whole, 0);
	}
}

TEST(dso_should_derive_rows_from_debug_frame_in_a_debug_file)
{
	struct find_sym fs = { "sfprof_nounwind" };
	const char *dir = test_tmpdir("proctest");
	char exe[300], root[300];
	int rc;
	struct sframe_func fn;
	struct sframe_row row;
	struct dso_cache *dc;
	struct dso *d;

	CHECK(dir);
	snprintf(exe, sizeof(exe), "%s/nounwind", dir);
	snprintf(root, sizeof(root), "%s/dbgroot", dir);
	/* CFI only in .debug_frame for this function; strip moves it out. */
	rc = test_sh("cd '%s' && printf '%%s\\n' "
		     "'int sfprof_nounwind(int x) { return x + 1; }' > nu.c && "
		     "printf '%%s\\n' 'int sfprof_nounwind(int);' "
		     "'int main(int c, char **v) { (void)v; return sfprof_nounwind(c); }' > nm.c && "
		     "gcc -O1 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -c nu.c && "
		     "gcc -O1 -Wl,--build-id=0xfeedfacefeedfacefeedfacefeedfacefeedface "
		     "-o '%s' nu.o nm.c && "
		     "mkdir -p '%s/usr/lib/debug/.build-id/fe' && "
		     "objcopy --only-keep-debug '%s' "
		     "'%s/usr/lib/debug/.build-id/fe/edfacefeedfacefeedfacefeedfacefeedface.debug' && "
		     "strip -g '%s'",
		     dir, exe, root, exe, root, exe);
	CHECK_INT(rc, 0);
	dc = dso_cache__new(&(struct dso_cache_opts){ .debug_root = root });
	CHECK(dc);
	d = dso_cache__open_path(dc, exe);
	CHECK(d);
	elfread__for_each_symbol(dso__elf(d), SHT_SYMTAB, find_sym_cb, &fs);
	CHECK(fs.value);
	CHECK_INT(dso__find_row(d, fs.value, &row, &fn), 0);
	CHECK_U64(fn.start, fs.value);
	dso_cache__free(dc);
	/* Without the debug file there is no row for it. */
	dc = dso_cache__new(&(struct dso_cache_opts){ .debug_root = "/nonexistent" });
	CHECK(dc);
	d = dso_cache__open_path(dc, exe);
	CHECK(d);
	CHECK_INT(dso__find_row(d, fs.value, &row, &fn), -ESRCH);
	dso_cache__free(dc);
}

TEST(exec_note_should_reread_before_the_next_lookup)
{
	struct proc_cache *pc = new_cache(100000);
	struct proc_stats st;
	struct sym_result r;
	struct proc *p;

	CHECK(pc);
	p = proc_cache__get(pc, getpid());
	CHECK(p);
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	proc_cache__note_exec(pc, getpid());
	CHECK_INT(proc__symbolize(p, (uintptr_t)&sfprof_test_target, &r), 0);
	CHECK_STR(r.name, "sfprof_test_target");
	proc_cache__stats(pc, &st);
	CHECK_INT(st.maps_reads, 2);
	CHECK_INT(proc_cache__remove(pc, getpid()), 0);
	CHECK(!proc_cache__lookup(pc, getpid()));
	CHECK_INT(proc_cache__remove(pc, getpid()), -ENOENT);
	proc_cache__free(pc);
}

TEST(stats_should_print_name_value_lines)
{
	struct proc_cache *pc = new_cache(0);
	struct proc_stats st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(pc);
	CHECK(proc_cache__get(pc, getpid()));
	proc_cache__stats(pc, &st);
	CHECK_INT(st.maps_reads, 1);
	CHECK(st.dso.loads >= 2);
	f = open_memstream(&buf, &len);
	CHECK(f);
	proc_stats__print(&st, f);
	fclose(f);
	CHECK(strstr(buf, "maps_reads: 1\n"));
	CHECK(strstr(buf, "dso_loads: "));
	free(buf);
	proc_cache__free(pc);
}

TEST_MAIN()
