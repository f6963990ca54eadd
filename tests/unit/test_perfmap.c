// SPDX-License-Identifier: MIT
/* perf-PID.map parsing (perfmap.h): fields, bad lines, growth, lookups,
 * and the safe file read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtimes/jit/perfmap.h"
#include "testlib.h"

TEST_MAIN();

static long feed(struct perfmap *m, const char *s)
{
	return perfmap__feed(m, s, strlen(s));
}

TEST(perfmap_should_parse_node_lines_and_find_by_address)
{
	struct perfmap *m = perfmap__new();
	const char *name;
	uint64_t start;
	const char *text = "7f0528005e80 1e0 JS:*sfprofHotInner /tmp/hot.js:1:24\n"
			   "0x7f05280060c0 0x354 JS:*outer with spaces\n";

	CHECK(m);
	CHECK_INT(feed(m, text), strlen(text));
	CHECK_INT(perfmap__nr(m), 2);
	CHECK_INT(perfmap__lookup(m, 0x7f0528005e80, &name, &start), 0);
	CHECK_STR(name, "JS:*sfprofHotInner /tmp/hot.js:1:24");
	CHECK_U64(start, 0x7f0528005e80);
	CHECK_INT(perfmap__lookup(m, 0x7f0528005e80 + 0x1df, &name, NULL), 0);
	CHECK_INT(perfmap__lookup(m, 0x7f0528005e80 + 0x1e0, &name, NULL), -ENOENT);
	CHECK_INT(perfmap__lookup(m, 0x7f05280060c0 + 0x10, &name, NULL), 0);
	CHECK_STR(name, "JS:*outer with spaces");
	CHECK_INT(perfmap__lookup(m, 0x10, &name, NULL), -ENOENT);
	CHECK_U64(perfmap__bad_lines(m), 0);
	perfmap__free(m);
}

TEST(perfmap_should_skip_and_count_every_kind_of_bad_line)
{
	static const char *const bad[] = {
		"zz 10 name\n",			    /* not hex */
		"1000 10\n",			    /* no name */
		"1000 10 \n",			    /* empty name */
		"1000 0 zero\n",		    /* size 0 */
		"ffffffffffffff00 200 wraps\n",	    /* start + size wraps */
		"11112222333344445 10 long\n",	    /* 17 digits */
		"1000  10 two spaces\n",	    /* empty size field */
		" 1000 10 leading space\n",
		"0x 10 no digits\n",
		"1000 10g x\n",
	};
	struct perfmap *m = perfmap__new();
	const char *name;
	char nul[] = "2000 10 a\0b\n";

	CHECK(m);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(feed(m, bad[i]), strlen(bad[i]));
	CHECK_INT(perfmap__feed(m, nul, sizeof(nul) - 1), sizeof(nul) - 1);
	CHECK_INT(feed(m, "\n3000 10 good\r\n"), 15);
	CHECK_INT(perfmap__nr(m), 1);
	CHECK_U64(perfmap__bad_lines(m), sizeof(bad) / sizeof(bad[0]) + 1);
	CHECK_INT(perfmap__lookup(m, 0x3005, &name, NULL), 0);
	CHECK_STR(name, "good");
	CHECK_INT(perfmap__lookup(m, 0x1005, &name, NULL), -ENOENT);
	perfmap__free(m);
}

TEST(perfmap_should_wait_for_a_partial_line_and_drop_overlong_ones)
{
	struct perfmap *m = perfmap__new();
	char big[PERFMAP_LINE_MAX + 64];
	const char *name;

	CHECK(m);
	CHECK_INT(feed(m, "1000 10 first\n2000 10 sec"), 14);
	CHECK_U64(perfmap__offset(m), 14);
	CHECK_INT(perfmap__nr(m), 1);
	/* the caller feeds again from the offset, with the rest appended */
	CHECK_INT(feed(m, "2000 10 second\n"), 15);
	CHECK_U64(perfmap__offset(m), 29);
	CHECK_INT(perfmap__lookup(m, 0x2001, &name, NULL), 0);
	CHECK_STR(name, "second");
	/* a line over the limit, in two feeds, then a good one */
	memset(big, 'x', sizeof(big));
	memcpy(big, "4000 10 ", 8);
	CHECK_INT(perfmap__feed(m, big, sizeof(big)), sizeof(big));
	CHECK_INT(feed(m, "xxxx\n5000 10 after\n"), 19);
	CHECK_INT(perfmap__lookup(m, 0x4001, &name, NULL), -ENOENT);
	CHECK_INT(perfmap__lookup(m, 0x5001, &name, NULL), 0);
	CHECK_STR(name, "after");
	CHECK_U64(perfmap__bad_lines(m), 1);
	perfmap__free(m);
}

TEST(perfmap_later_entries_should_win_where_code_was_reused)
{
	struct perfmap *m = perfmap__new();
	const char *name, *kept;

	CHECK(m);
	CHECK_INT(feed(m, "1000 100 old_big\n1040 10 old_small\n"), 35);
	CHECK_INT(perfmap__lookup(m, 0x1042, &name, NULL), 0);
	CHECK_STR(name, "old_small");
	kept = name;
	CHECK_INT(feed(m, "1000 80 new\n"), 12);
	CHECK_INT(perfmap__lookup(m, 0x1042, &name, NULL), 0);
	CHECK_STR(name, "new");
	CHECK_INT(perfmap__lookup(m, 0x10f0, &name, NULL), 0);
	CHECK_STR(name, "old_big");
	CHECK_STR(kept, "old_small"); /* names do not move */
	perfmap__free(m);
}

TEST(perfmap_lookup_at_a_time_should_name_by_the_entry_valid_then)
{
	struct perfmap *m = perfmap__new();
	struct perfmap_hit h, alpha;

	CHECK(m);
	perfmap__set_time(m, 100);
	CHECK_INT(feed(m, "1000 20 jit_alpha\n"), 18);
	perfmap__set_time(m, 200);
	CHECK_INT(feed(m, "1000 20 jit_beta\n"), 17);
	perfmap__set_time(m, 150); /* (a time never goes back) */
	CHECK_INT(feed(m, "1010 4 jit_gamma\n"), 17);
	/* before the newer line: the older name, with its own seq */
	CHECK_INT(perfmap__lookup_at(m, 0x1004, 150, &alpha), 0);
	CHECK_STR(alpha.name, "jit_alpha");
	CHECK_INT(alpha.seq, 1);
	CHECK_INT(perfmap__lookup_at(m, 0x1004, 200, &h), 0);
	CHECK_STR(h.name, "jit_beta");
	CHECK_INT(h.seq, 2);
	CHECK_INT(perfmap__lookup_at(m, 0x1004, UINT64_MAX, &h), 0);
	CHECK_STR(h.name, "jit_beta");
	/* before any line covering it was read: the first name it had */
	CHECK_INT(perfmap__lookup_at(m, 0x1004, 50, &h), 0);
	CHECK_STR(h.name, "jit_alpha");
	CHECK_INT(perfmap__lookup_at(m, 0x1011, 199, &h), 0);
	CHECK_STR(h.name, "jit_alpha");
	CHECK_INT(perfmap__lookup_at(m, 0x1011, 200, &h), 0);
	CHECK_STR(h.name, "jit_gamma");
	/* the plain lookup is the newest */
	CHECK_INT(perfmap__lookup_range(m, 0x1004, &h.name, &h.start, &h.end), 0);
	CHECK_STR(h.name, "jit_beta");
	/* an entry by its seq, as a tagged frame names it later */
	CHECK_INT(perfmap__entry(m, alpha.seq, &h), 0);
	CHECK_STR(h.name, "jit_alpha");
	CHECK_U64(h.start, 0x1000);
	CHECK_U64(h.end, 0x1020);
	CHECK_INT(perfmap__entry(m, 0, &h), -ENOENT);
	CHECK_INT(perfmap__entry(m, 4, &h), -ENOENT);
	CHECK_INT(perfmap__lookup_at(m, 0x2000, 300, &h), -ENOENT);
	perfmap__free(m);
}

TEST(perfmap_file_should_follow_growth_and_refuse_links_fifos_and_big_files)
{
	char dir[] = "/tmp/sfprof-perfmap.XXXXXX", p[256], l[256], fifo[256];
	struct perfmap *m = perfmap__new();
	const char *name;
	FILE *f;

	CHECK(m && mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/perf-1.map", dir);
	snprintf(l, sizeof(l), "%s/link.map", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.map", dir);
	f = fopen(p, "w");
	CHECK(f);
	fputs("1000 10 one\n2000 10 tw", f);
	fflush(f);
	CHECK_INT(perfmap__open_read(m, p, 1 << 20), 0);
	CHECK_INT(perfmap__nr(m), 1);
	fputs("o\n3000 10 three\n", f);
	fclose(f);
	CHECK_INT(perfmap__open_read(m, p, 1 << 20), 0);
	CHECK_INT(perfmap__nr(m), 3);
	CHECK_INT(perfmap__lookup(m, 0x2001, &name, NULL), 0);
	CHECK_STR(name, "two");
	CHECK_INT(perfmap__open_read(m, p, 1 << 20), 0); /* nothing new */
	CHECK_INT(perfmap__nr(m), 3);
	perfmap__free(m);

	m = perfmap__new();
	CHECK(m);
	CHECK_INT(perfmap__open_read(m, p, 20), -EFBIG); /* only what fits */
	CHECK_INT(perfmap__nr(m), 1);
	CHECK(!symlink(p, l));
	CHECK_INT(perfmap__open_read(m, l, 1 << 20), -EINVAL);
	CHECK(!mkfifo(fifo, 0600));
	CHECK_INT(perfmap__open_read(m, fifo, 1 << 20), -EINVAL); /* and did not block */
	CHECK_INT(perfmap__open_read(m, dir, 1 << 20), -EINVAL);
	snprintf(p, sizeof(p), "%s/none.map", dir);
	CHECK_INT(perfmap__open_read(m, p, 1 << 20), -ENOENT);
	perfmap__free(m);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(!system(p));
}

TEST(perfmap_in_root_should_resolve_a_planted_absolute_symlink_inside_the_root)
{
	char dir[] = "/var/tmp/sfprof-perfroot.XXXXXX", p[512], root[300];
	struct perfmap *m = perfmap__new();
	const char *name;
	FILE *f;
	int rc;

	CHECK(m && mkdtemp(dir));
	/* outside/perf-1.map on the host; the root's tmp -> /var/tmp/DIR/outside
	 * (not under /tmp: inside the root that would loop through tmp) */
	snprintf(p, sizeof(p), "mkdir -p '%s/outside' '%s/root' '%s/root/real' && "
		 "ln -s '%s/outside' '%s/root/tmp' && ln -s /real '%s/root/tmp2'",
		 dir, dir, dir, dir, dir, dir);
	CHECK(!system(p));
	snprintf(p, sizeof(p), "%s/outside/perf-1.map", dir);
	f = fopen(p, "w");
	CHECK(f);
	fputs("1000 10 host_file\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/root/real/perf-1.map", dir);
	f = fopen(p, "w");
	CHECK(f);
	fputs("1000 10 in_root\n", f);
	fclose(f);
	snprintf(root, sizeof(root), "%s/root", dir);
	rc = perfmap__open_read_in(m, root, "tmp/perf-1.map", 1 << 20);
	if (rc == -EOPNOTSUPP)
		SKIP("no openat2 on this kernel");
	/* the absolute link is taken inside the root, where it names nothing */
	CHECK_INT(rc, -ENOENT);
	CHECK_INT(perfmap__nr(m), 0);
	/* an absolute link that exists inside the root is followed there */
	CHECK_INT(perfmap__open_read_in(m, root, "tmp2/perf-1.map", 1 << 20), 0);
	CHECK_INT(perfmap__lookup(m, 0x1001, &name, NULL), 0);
	CHECK_STR(name, "in_root");
	perfmap__free(m);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(!system(p));
}

TEST(perfmap_add_src_should_keep_a_copy_of_the_source_and_inlined_frames_with_the_entry)
{
	struct perfmap *m = perfmap__new();
	struct perfmap_hit h;
	char file[] = "HsChain.java", big[PERFMAP_LINE_MAX + 2];

	CHECK(m != NULL);
	char inl[] = "HsChain.inner\tHsChain.java\t7\n";

	CHECK_INT(perfmap__add_src(m, 0x1000, 1, "HsChain.main", 12, file, 46, inl), 0);
	inl[0] = 'X';
	CHECK_INT(perfmap__add(m, 0x2000, 16, "plain", 5), 0);
	file[0] = 'X'; /* (copied) */
	CHECK_INT(perfmap__lookup_at(m, 0x1000, UINT64_MAX, &h), 0);
	CHECK_STR(h.name, "HsChain.main");
	CHECK_STR(h.file, "HsChain.java");
	CHECK_INT(h.line, 46);
	CHECK_STR(h.inl, "HsChain.inner\tHsChain.java\t7\n");
	CHECK_INT(perfmap__lookup_at(m, 0x2004, UINT64_MAX, &h), 0);
	CHECK(h.file == NULL && h.line == 0 && h.inl == NULL);
	/* a source file longer than a line: refused */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_INT(perfmap__add_src(m, 0x3000, 1, "x", 1, big, 1, NULL), -EINVAL);
	CHECK_INT(perfmap__add_src(m, 0x3000, 1, "x", 1, NULL, 0, big), -EINVAL);
	CHECK_INT(perfmap__nr(m), 2);
	perfmap__free(m);
}

/* Entries added between lookups (a VM's live names, one per lookup) are
 * merged into the index: every address must name what a map indexed once
 * after all the adds names, ties of a start and reused code included. */
TEST(perfmap_lookups_between_adds_should_name_as_one_index_after_all_adds)
{
	struct perfmap *inc = perfmap__new(), *once = perfmap__new();
	struct perfmap_hit a, b;
	uint32_t x = 12345;
	char name[16];

	CHECK(inc && once);
	for (int i = 0; i < 400; i++) {
		uint64_t start, size;

		x = x * 1103515245u + 12345u;
		start = 0x1000 + (x >> 16) % 256; /* (many ties and overlaps) */
		size = 1 + (x >> 8) % 8;
		snprintf(name, sizeof(name), "e%d", i);
		CHECK_INT(perfmap__add(inc, start, size, name, strlen(name)), 0);
		CHECK_INT(perfmap__add(once, start, size, name, strlen(name)), 0);
		/* (a lookup after each add of the first map: an index merge) */
		(void)perfmap__lookup_at(inc, start + (x % 3), UINT64_MAX, &a);
	}
	for (uint64_t addr = 0xff0; addr < 0x1110; addr++) {
		int ra = perfmap__lookup_at(inc, addr, UINT64_MAX, &a);
		int rb = perfmap__lookup_at(once, addr, UINT64_MAX, &b);

		CHECK_INT(ra, rb);
		if (!ra && !rb) {
			CHECK_STR(a.name, b.name);
			CHECK_INT(a.seq, b.seq);
		}
	}
	perfmap__free(inc);
	perfmap__free(once);
}
