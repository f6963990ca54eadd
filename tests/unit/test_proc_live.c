// SPDX-License-Identifier: MIT
/*
 * Address spaces changed in order (proc_live.c): the mapping live at a
 * sample's time wins, exec empties a process, fork copies it, exit frees
 * it later; and the side-band record parser (sideband.c).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "model/proc.h"
#include "capture/sideband.h"
#include "unwind/sframe.h"
#include "symbols/srcline.h"
#include "testlib.h"

/* lib_NAME.so with a function NAME_fn, built for this run. */
static int build_lib(const char *name, char *buf, size_t cap)
{
	const char *dir = test_tmpdir("livetest");

	if (!dir)
		return -1;
	snprintf(buf, cap, "%s/lib_%s.so", dir, name);
	return test_sh("printf 'int %s_fn(int x) { return x * 3 + %d; }\\n' > '%s.c' && "
		       "gcc -O1 -shared -fPIC -Wl,--build-id -o '%s' '%s.c'",
		       name, (int)name[0], buf, buf, buf);
}

static struct proc_mapping_rec rec_for(const char *path, uint64_t start)
{
	struct proc_mapping_rec r = { 0 };

	r.start = start;
	r.end = start + 0x1000;
	r.offset = 0;
	r.prot = PROT_READ | PROT_EXEC;
	r.path = path;
	return r;
}

struct seen {
	char log[160];
};

static void observe(void *ctx, uint32_t what, uint32_t pid, uint32_t ppid, uint64_t ts,
		    const struct proc_mapping_rec *m)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	(void)pid;
	snprintf(s->log + n, sizeof(s->log) - n, "%s%u@%llu%s ", what == PROC_CHANGE_RESET ? "R" :
		 what == PROC_CHANGE_MAPPING ? "M" : what == PROC_CHANGE_FORK ? "F" : "E",
		 what == PROC_CHANGE_FORK ? ppid : 0, (unsigned long long)ts,
		 m && strstr(m->path, "lib_b") ? "b" : m ? "a" : "");
}

static struct proc_cache *ordered_cache(void)
{
	struct proc_cache_opts o = { .quiet = 1, .reread_interval_ms = 1 };
	struct proc_cache *pc = proc_cache__new(&o);

	if (pc)
		proc_cache__set_ordered(pc, 1);
	return pc;
}

#define BASE 0x7a0000000000ull
#define FAKE_PID 4000000001u /* above pid_max: no process of that pid */

TEST(a_library_mapped_later_at_the_same_address_wins_from_then_on)
{
	char a[512], b[512];
	struct proc_mapping_rec ra, rb;
	struct proc_cache *pc;
	struct sym_result sr;
	struct proc_stats st;
	struct proc *p;

	if (build_lib("a", a, sizeof(a)) || build_lib("b", b, sizeof(b)))
		SKIP("gcc could not build the test libraries");
	pc = ordered_cache();
	CHECK(pc != NULL);
	ra = rec_for(a, BASE);
	rb = rec_for(b, BASE);
	/* a process that began under our eyes: empty, then its mappings */
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 2, &ra, 0), 0);
	p = proc_cache__lookup(pc, FAKE_PID);
	CHECK(p != NULL);
	CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_a.so");
	CHECK(sr.has_elf);
	/* dlclose(a), dlopen(b) at the same address */
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 3, &rb, 0), 0);
	CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_b.so");
	proc_cache__stats(pc, &st);
	CHECK_U64(st.changes_mappings, 2);
	CHECK_U64(st.maps_reads, 0); /* nothing came from /proc */
	proc_cache__free(pc);
}

TEST(exec_empties_a_process_and_a_miss_does_not_read_proc)
{
	char a[512];
	struct proc_mapping_rec ra;
	struct proc_cache *pc;
	struct sym_result sr;
	struct proc_stats st;
	struct proc *p;
	uint32_t self = (uint32_t)getpid();

	if (build_lib("a", a, sizeof(a)))
		SKIP("gcc could not build the test library");
	pc = ordered_cache();
	ra = rec_for(a, BASE);
	/* this very process, as one that existed before: read from /proc once */
	p = proc_cache__get(pc, self);
	CHECK(p != NULL);
	CHECK_INT(proc_cache__map(pc, self, 5, &ra, 0), 0);
	CHECK_INT(proc__symbolize(p, BASE, &sr), 0);
	CHECK_INT(proc_cache__reset(pc, self, 6, 0), 0);
	CHECK_INT(proc__symbolize(p, BASE, &sr), -ENOENT);
	/* libc is mapped in /proc, but not since the exec: still a miss */
	CHECK_INT(proc__symbolize(p, (uint64_t)(uintptr_t)&printf, &sr), -ENOENT);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.maps_reads, 1);
	CHECK_U64(st.maps_rereads, 0);
	/* lost changes make /proc the best guess again */
	proc_cache__changes_lost(pc, 3);
	usleep(2000); /* past the re-read rate limit */
	CHECK_INT(proc__symbolize(p, (uint64_t)(uintptr_t)&printf, &sr), 0);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.changes_lost, 3);
	CHECK_U64(st.maps_rereads, 1);
	proc_cache__free(pc);
}

TEST(fork_copies_the_parent_and_they_change_apart)
{
	char a[512], b[512];
	struct proc_mapping_rec ra, rb;
	struct proc_cache *pc;
	struct sym_result sr;
	struct seen seen = { "" };
	struct proc *child;

	if (build_lib("a", a, sizeof(a)) || build_lib("b", b, sizeof(b)))
		SKIP("gcc could not build the test libraries");
	pc = ordered_cache();
	proc_cache__set_observer(pc, observe, &seen);
	ra = rec_for(a, BASE);
	rb = rec_for(b, BASE);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 2, &ra, 0), 0);
	CHECK_INT(proc_cache__fork(pc, FAKE_PID, FAKE_PID + 1, 3), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 4, &rb, 0), 0);
	child = proc_cache__lookup(pc, FAKE_PID + 1);
	CHECK(child != NULL);
	CHECK_INT(proc__symbolize(child, BASE, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_a.so");
	CHECK_INT(proc__symbolize(proc_cache__lookup(pc, FAKE_PID), BASE, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_b.so");
	proc_cache__exit(pc, FAKE_PID + 1, 10);
	CHECK_STR(seen.log, "R0@1 M0@2a F4000000001@3 M0@4b E0@10 ");
	proc_cache__free(pc);
}

TEST(forks_share_the_parents_mappings_until_one_of_them_changes)
{
	char a[512], b[512];
	struct proc_mapping_rec ra, ra2, rb;
	struct proc_cache *pc;
	struct proc_stats st;
	struct sym_result sr;
	struct proc *c1, *c2;

	if (build_lib("a", a, sizeof(a)) || build_lib("b", b, sizeof(b)))
		SKIP("gcc could not build the test libraries");
	pc = ordered_cache();
	ra = rec_for(a, BASE);
	ra2 = rec_for(a, BASE + 0x10000);
	rb = rec_for(b, BASE);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 2, &ra, 0), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 2, &ra2, 0), 0);
	CHECK_INT(proc_cache__fork(pc, FAKE_PID, FAKE_PID + 1, 3), 0);
	CHECK_INT(proc_cache__fork(pc, FAKE_PID, FAKE_PID + 2, 3), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID + 1, 4, &rb, 0), 0);
	/* the parent goes first: its forks keep what they share */
	CHECK_INT(proc_cache__remove(pc, FAKE_PID), 0);
	CHECK_INT(proc_cache__evict_unused(pc), 0);
	c1 = proc_cache__lookup(pc, FAKE_PID + 1);
	c2 = proc_cache__lookup(pc, FAKE_PID + 2);
	CHECK(c1 && c2);
	CHECK_INT(proc__symbolize(c1, BASE, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_b.so");
	CHECK_INT(proc__symbolize(c1, BASE + 0x10000, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_a.so");
	CHECK_INT(proc__symbolize(c2, BASE, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_a.so");
	/* an exec of the last holder empties it alone */
	CHECK_INT(proc_cache__reset(pc, FAKE_PID + 2, 5, 0), 0);
	CHECK_INT(proc__symbolize(c2, BASE, &sr), -ENOENT);
	CHECK_INT(proc__symbolize(c1, BASE + 0x10000, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_a.so");
	CHECK_INT(proc_cache__map(pc, FAKE_PID + 2, 6, &rb, 0), 0);
	CHECK_INT(proc__symbolize(c2, BASE, &sr), 0);
	CHECK_STR(sr.dso_name, "lib_b.so");
	proc_cache__stats(pc, &st);
	CHECK_U64(st.maps_shared, 2);
	CHECK_U64(st.maps_unshared, 1);
	CHECK_U64(st.maps_over_bound, 0);
	proc_cache__free(pc);
}

/* Reaps that find none due yet skip the pass; each still reaps exactly the
 * processes due by then, in any order of exits, one exiting earlier than
 * the rest after a reap, and one alive again (a new image) included. */
TEST(reaps_free_exactly_the_processes_due_whatever_the_order_of_exits)
{
	struct proc_cache *pc = ordered_cache();

	for (uint32_t i = 0; i < 5; i++)
		CHECK_INT(proc_cache__reset(pc, FAKE_PID + i, 1, 1), 0);
	proc_cache__exit(pc, FAKE_PID, 300);
	proc_cache__exit(pc, FAKE_PID + 1, 100);
	proc_cache__exit(pc, FAKE_PID + 2, 200);
	CHECK_INT(proc_cache__reap(pc, 99), 0);
	CHECK_INT(proc_cache__reap(pc, 150), 1);
	CHECK(proc_cache__lookup(pc, FAKE_PID + 1) == NULL);
	CHECK_INT(proc_cache__reap(pc, 199), 0);
	proc_cache__exit(pc, FAKE_PID + 3, 50); /* (before the rest) */
	CHECK_INT(proc_cache__reap(pc, 60), 1);
	CHECK(proc_cache__lookup(pc, FAKE_PID + 3) == NULL);
	CHECK_INT(proc_cache__reap(pc, 250), 1);
	CHECK(proc_cache__lookup(pc, FAKE_PID + 2) == NULL);
	proc_cache__exit(pc, FAKE_PID + 4, 260);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID + 4, 270, 0), 0); /* alive again */
	CHECK_INT(proc_cache__reap(pc, 290), 0);
	CHECK_INT(proc_cache__reap(pc, 1000), 1);
	CHECK(proc_cache__lookup(pc, FAKE_PID) == NULL);
	CHECK(proc_cache__lookup(pc, FAKE_PID + 4) != NULL);
	CHECK_INT(proc_cache__count(pc), 1);
	proc_cache__exit(pc, FAKE_PID + 4, 2000);
	CHECK_INT(proc_cache__reap(pc, 2000), 1);
	CHECK_INT(proc_cache__count(pc), 0);
	proc_cache__free(pc);
}

TEST(an_exited_process_is_kept_for_its_late_events_then_reaped)
{
	struct proc_cache *pc = ordered_cache();
	struct proc_stats st;

	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID + 1, 1, 1), 0);
	proc_cache__exit(pc, FAKE_PID, 100);
	CHECK_INT(proc_cache__reap(pc, 99), 0);
	CHECK(proc_cache__lookup(pc, FAKE_PID) != NULL);
	CHECK_INT(proc_cache__reap(pc, 100), 1);
	CHECK(proc_cache__lookup(pc, FAKE_PID) == NULL);
	CHECK(proc_cache__lookup(pc, FAKE_PID + 1) != NULL);
	CHECK_INT(proc_cache__count(pc), 1);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.procs_reaped, 1);
	proc_cache__free(pc);
}

TEST(a_path_that_now_holds_another_file_is_not_used)
{
	char a[512];
	struct proc_mapping_rec ra;
	struct proc_cache *pc;
	struct sym_result sr;
	struct proc_stats st;
	struct stat fs;

	if (build_lib("a", a, sizeof(a)) || stat(a, &fs))
		SKIP("gcc could not build the test library");
	pc = ordered_cache();
	ra = rec_for(a, BASE);
	/* what the kernel saw mapped: this path's device, another inode */
	ra.dev_major = major(fs.st_dev);
	ra.dev_minor = minor(fs.st_dev);
	ra.inode = fs.st_ino + 1;
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 2, &ra, 0), 0);
	CHECK_INT(proc__symbolize(proc_cache__lookup(pc, FAKE_PID), BASE, &sr), 0);
	CHECK(!sr.has_elf && sr.name == NULL);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.open_replaced, 1);
	CHECK_U64(st.mappings_unopened, 1);
	/* the right inode: used */
	ra.inode = fs.st_ino;
	CHECK_INT(proc_cache__map(pc, FAKE_PID, 3, &ra, 0), 0);
	CHECK_INT(proc__symbolize(proc_cache__lookup(pc, FAKE_PID), BASE, &sr), 0);
	CHECK(sr.has_elf);
	proc_cache__free(pc);
}

TEST(a_pid_out_of_scope_is_ignored)
{
	struct proc_mapping_rec r = rec_for("/bin/true", BASE);
	struct proc_cache *pc = ordered_cache();

	CHECK_INT(proc_cache__map(pc, FAKE_PID, 1, &r, 0), 0);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 0), 0);
	CHECK(proc_cache__lookup(pc, FAKE_PID) == NULL);
	proc_cache__free(pc);
}

/* ---- side-band records ---- */

static size_t put_rec(uint8_t *buf, uint32_t type, uint16_t misc, const void *body, size_t n)
{
	uint16_t size = (uint16_t)(8 + n + 16);
	uint32_t pid = 42, tid = 43;
	uint64_t t = 123456789;

	memcpy(buf, &type, 4);
	memcpy(buf + 4, &misc, 2);
	memcpy(buf + 6, &size, 2);
	memcpy(buf + 8, body, n);
	memcpy(buf + 8 + n, &pid, 4);
	memcpy(buf + 12 + n, &tid, 4);
	memcpy(buf + 16 + n, &t, 8);
	return size;
}

TEST(sideband_parses_an_mmap2_in_the_inode_layout_whatever_its_misc_bits)
{
	uint8_t body[64 + 40] = { 0 }, buf[256];
	uint32_t pid = 42, tid = 43, prot = PROT_READ | PROT_EXEC, flags = MAP_PRIVATE;
	uint64_t addr = 0x7f0000001000ull, len = 0x3000, pgoff = 0x28000;
	struct sideband_rec r;
	size_t n;

	memcpy(body, &pid, 4);
	memcpy(body + 4, &tid, 4);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &len, 8);
	memcpy(body + 24, &pgoff, 8);
	{
		uint32_t maj = 8, min = 1;
		uint64_t ino = 123456;

		memcpy(body + 32, &maj, 4);
		memcpy(body + 36, &min, 4);
		memcpy(body + 40, &ino, 8);
	}
	memcpy(body + 56, &prot, 4);
	memcpy(body + 60, &flags, 4);
	strcpy((char *)body + 64, "/usr/lib/libfoo.so");
	n = put_rec(buf, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, 64 + 24);
	CHECK_INT(sideband__parse(buf, n, &r), 0);
	CHECK_INT(r.kind, SIDEBAND_MMAP);
	CHECK_INT(r.pid, 42);
	CHECK_U64(r.start, addr);
	CHECK_U64(r.len, len);
	CHECK_U64(r.pgoff, pgoff);
	/* the build-id bit may leak in from another event's record (kernel
	 * 6.18): the layout is the inode one all the same */
	CHECK_INT(r.dev_major, 8);
	CHECK_INT(r.dev_minor, 1);
	CHECK_U64(r.inode, 123456);
	CHECK_INT(r.prot, prot);
	CHECK_STR(r.path, "/usr/lib/libfoo.so");
	CHECK_U64(r.ts_ns, 123456789);
	/* a path without its NUL inside the record */
	memset(body + 64, 'x', 24);
	n = put_rec(buf, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, 64 + 24);
	CHECK_INT(sideband__parse(buf, n, &r), -EINVAL);
	/* a size field that disagrees with the record */
	CHECK_INT(sideband__parse(buf, n - 8, &r), -EINVAL);
}

TEST(sideband_tells_exec_from_a_comm_change)
{
	uint8_t body[16] = { 42, 0, 0, 0, 42, 0, 0, 0, 'x', 'z', 0 }, buf[64];
	struct sideband_rec r;
	size_t n;

	n = put_rec(buf, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 16);
	CHECK_INT(sideband__parse(buf, n, &r), 0);
	CHECK_INT(r.kind, SIDEBAND_EXEC);
	CHECK_STR(r.path, "xz");
	n = put_rec(buf, PERF_RECORD_COMM, 0, body, 16);
	CHECK_INT(sideband__parse(buf, n, &r), 0);
	CHECK_INT(r.kind, SIDEBAND_OTHER);
}

/* A copy of lib at path with its build-id's first bytes set to n: a new
 * binary each, as bench/interval_soak.py makes them. 0 or -1. */
static int copy_with_build_id(const char *lib, const char *path, uint32_t n)
{
	static const char note[] = "\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU";
	char buf[64 * 1024];
	size_t len;
	char *at;
	FILE *f = fopen(lib, "rb");

	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	at = len == sizeof(buf) ? NULL : memmem(buf, len, note, sizeof(note));
	if (!at || (size_t)(at - buf) + sizeof(note) + 20 > len)
		return -1;
	memcpy(at + sizeof(note), &n, sizeof(n));
	f = fopen(path, "wb");
	if (!f)
		return -1;
	if (fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/*
 * A long run that dlopen()s a new library and dlclose()s it, again and
 * again (bench/interval_soak.py): after each eviction only what is mapped
 * now is held, binaries and their interned paths alike, and once the
 * process is gone both counts are back where they began.
 */
TEST(evict_unused_should_bound_binaries_and_paths_over_a_library_churn)
{
	char a[512], path[600];
	struct proc_mapping_rec r;
	struct proc_cache *pc;
	struct proc_stats st;
	struct sym_result sr;
	size_t paths0, live;
	struct proc *p;

	if (build_lib("a", a, sizeof(a)))
		SKIP("gcc could not build the test library");
	pc = ordered_cache();
	CHECK(pc != NULL);
	paths0 = proc_cache__nr_paths(pc);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	for (int i = 0; i < 200; i++) {
		/* each library its own file, as the soak's copies are */
		snprintf(path, sizeof(path), "%s/libchurn%d.so", test_tmpdir("livetest"), i);
		CHECK_INT(copy_with_build_id(a, path, (uint32_t)i + 1), 0);
		r = rec_for(path, BASE);
		CHECK_INT(proc_cache__map(pc, FAKE_PID, 2 + (uint64_t)i, &r, 0), 0);
		p = proc_cache__lookup(pc, FAKE_PID);
		CHECK(p != NULL);
		CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
		CHECK(sr.has_elf);
		CHECK(strstr(sr.dso_path, "libchurn") != NULL);
		unlink(path);
		if (i % 10 == 9) {
			proc_cache__evict_unused(pc);
			proc_cache__stats(pc, &st);
			live = st.dso.loads - st.dso.evicted;
			/* the one mapped now */
			CHECK_U64(live, 1);
			CHECK_U64(proc_cache__nr_paths(pc), paths0 + 1);
		}
	}
	proc_cache__stats(pc, &st);
	CHECK(st.dso.loads >= 200);
	/* the last one is still mapped and still named */
	CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
	CHECK(strstr(sr.dso_path, "libchurn199.so") != NULL);
	CHECK_INT(proc_cache__remove(pc, FAKE_PID), 0);
	proc_cache__evict_unused(pc);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.dso.loads - st.dso.evicted, 0);
	CHECK_U64(proc_cache__nr_paths(pc), paths0);
	proc_cache__free(pc);
}

/*
 * A whole machine maps more binaries than the heap budget holds: the
 * least recently used one's symbols are freed while it stays mapped, the
 * binaries used since the clock taken are kept, and a later lookup in the
 * freed one makes its symbols again with the same answer.
 */
TEST(shed_oldest_should_free_the_least_recently_used_binary_and_remake_it)
{
	char a[512], path[600];
	struct proc_mapping_rec r;
	struct proc_cache *pc;
	struct dso_cache *dc;
	struct proc_stats st;
	struct sym_result sr;
	uint64_t clock0, clock3;
	struct proc *p;

	if (build_lib("a", a, sizeof(a)))
		SKIP("gcc could not build the test library");
	pc = ordered_cache();
	CHECK(pc != NULL);
	dc = proc_cache__dsos(pc);
	CHECK_INT(proc_cache__reset(pc, FAKE_PID, 1, 1), 0);
	clock0 = dso_cache__use_clock(dc);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/libshed%d.so", test_tmpdir("livetest"), i);
		CHECK_INT(copy_with_build_id(a, path, 100 + (uint32_t)i), 0);
		r = rec_for(path, BASE + (uint64_t)i * 0x100000);
		CHECK_INT(proc_cache__map(pc, FAKE_PID, 2 + (uint64_t)i, &r, 0), 0);
	}
	p = proc_cache__lookup(pc, FAKE_PID);
	CHECK(p != NULL);
	char name0[256] = "";

	for (int i = 0; i < 3; i++)
		CHECK_INT(proc__symbolize(p, BASE + (uint64_t)i * 0x100000 + 0x10, &sr), 0);
	CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
	snprintf(name0, sizeof(name0), "%s", sr.name ? sr.name : "(none)");
	for (int i = 1; i < 3; i++)
		CHECK_INT(proc__symbolize(p, BASE + (uint64_t)i * 0x100000 + 0x10, &sr), 0);
	clock3 = dso_cache__use_clock(dc);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.dso.loaded, 3);
	CHECK_U64(st.dso.symtabs, 3);
	/* everything was used after clock0: the working set stays */
	CHECK_INT(dso_cache__shed_oldest(dc, clock0, UINT64_MAX), 0);
	/* before clock3 all three are candidates: the oldest (libshed0) goes */
	CHECK_INT(dso_cache__shed_oldest(dc, clock3, UINT64_MAX), 1);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.dso.loaded, 2);
	CHECK_U64(st.dso.shed, 1);
	CHECK_U64(st.dso.shed_hot, 0);
	CHECK_INT(proc__symbolize(p, BASE + 0x10, &sr), 0);
	CHECK(strstr(sr.dso_path, "libshed0.so") != NULL);
	CHECK_STR(sr.name ? sr.name : "(none)", name0);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.dso.symtabs, 4); /* made again */
	CHECK_U64(st.dso.loaded, 3);
	/* now libshed1 is the oldest */
	CHECK_INT(dso_cache__shed_oldest(dc, dso_cache__use_clock(dc), UINT64_MAX), 1);
	CHECK_INT(proc__symbolize(p, BASE + 0x100000 + 0x10, &sr), 0);
	proc_cache__stats(pc, &st);
	CHECK_U64(st.dso.symtabs, 5);
	CHECK_INT(proc_cache__remove(pc, FAKE_PID), 0);
	proc_cache__free(pc);
}

/* lib_unw.so: 64 functions with frames of their own (so .eh_frame has
 * more FDEs than one lazy block) and DWARF lines. */
static int build_unwind_lib(char *buf, size_t cap)
{
	const char *dir = test_tmpdir("livetest");

	if (!dir)
		return -1;
	snprintf(buf, cap, "%s/lib_unw.so", dir);
	return test_sh("for i in $(seq 0 63); do printf 'int f%%d(volatile int *p, int n) "
		       "{ volatile int a[%%d]; for (int i = 0; i < n; i++) a[i %%%% %%d] = p[i]; "
		       "return a[0] + %%d; }\\n' $i $((i + 2)) $((i + 2)) $i; done > '%s.c' && "
		       "gcc -O1 -g -shared -fPIC -fasynchronous-unwind-tables -Wl,--build-id "
		       "-Wl,--eh-frame-hdr -o '%s' '%s.c'", buf, buf, buf);
}

#define UNW_STEP 3 /* every third byte of .text: every row of every FDE */

/* Each looked-up row of .text (0 when none), and the lookups that found one. */
static size_t unwind_rows(struct dso *d, const struct elfread_section *text,
			  struct sframe_row *rows, size_t cap)
{
	size_t found = 0;

	for (size_t i = 0; i < cap && i * UNW_STEP < text->size; i++) {
		struct sframe_func fn;

		memset(&rows[i], 0, sizeof(rows[i]));
		if (!dso__find_row(d, text->vaddr + i * UNW_STEP, &rows[i], &fn))
			found++;
		else
			memset(&rows[i], 0, sizeof(rows[i]));
	}
	return found;
}

/*
 * Shedding frees a mapped binary's unwind tables too (the lazy blocks
 * derived from its .eh_frame, read through the libelf handle the dso
 * owns, beside the symbols and the DWARF lines that read the same
 * handle): the next lookup makes them again and answers the same rows.
 */
TEST(shed_oldest_should_free_unwind_tables_and_remake_the_same_rows)
{
	enum { CAP = 4096 };
	char lib[512];
	struct dso_cache *dc;
	struct dso_stats st;
	struct elfread_section text;
	const struct srcline_level *lv;
	struct sframe_row *before, *after;
	const char *name;
	uint64_t off;
	size_t n, found;
	struct dso *d;

	if (build_unwind_lib(lib, sizeof(lib)))
		SKIP("gcc could not build the test library");
	dc = dso_cache__new(NULL);
	CHECK(dc != NULL);
	d = dso_cache__open_path(dc, lib);
	CHECK(d != NULL);
	CHECK_INT(elfread__section(dso__elf(d), ".text", &text), 0);
	before = calloc(CAP, sizeof(*before));
	after = calloc(CAP, sizeof(*after));
	CHECK(before && after);
	/* rows, symbols and lines: everything the agent makes of a binary */
	found = unwind_rows(d, &text, before, CAP);
	CHECK(found > 64);
	CHECK_INT(dso__table_source(d), DSO_TABLE_DERIVED);
	CHECK_INT(dso__symbolize(d, text.vaddr + text.size / 2, &name, NULL, &off), 0);
	CHECK_INT(dso__srcline(d, text.vaddr + text.size / 2, &lv, &n), 0);
	dso_cache__stats(dc, &st);
	CHECK_U64(st.loaded, 1);
	CHECK_U64(st.tables_whole, 0); /* lazily, a block at a time */
	for (int round = 0; round < 2; round++) {
		/* just used: the working set, freed and counted as such */
		CHECK_INT(dso_cache__shed_oldest(dc, dso_cache__use_clock(dc) + 1,
						 dso_cache__use_clock(dc)), 1);
		dso_cache__stats(dc, &st);
		CHECK_U64(st.loaded, 0);
		/* nothing left to free */
		CHECK_INT(dso_cache__shed_oldest(dc, dso_cache__use_clock(dc) + 1, UINT64_MAX), 0);
		CHECK_U64(unwind_rows(d, &text, after, CAP), found);
		for (size_t i = 0; i < CAP && i * UNW_STEP < text.size; i++)
			CHECK_MSG(!memcmp(&before[i], &after[i], sizeof(before[i])),
				  "round %d: row at +%zu differs after the remake", round,
				  i * UNW_STEP);
		CHECK_INT(dso__symbolize(d, text.vaddr + text.size / 2, &name, NULL, &off), 0);
		CHECK_INT(dso__srcline(d, text.vaddr + text.size / 2, &lv, &n), 0);
	}
	dso_cache__stats(dc, &st);
	CHECK_U64(st.shed, 2);
	CHECK_U64(st.shed_hot, 2);
	CHECK_U64(st.tables_derived, 3); /* made three times */
	free(before);
	free(after);
	dso_cache__free(dc);
}

TEST_MAIN()
