// SPDX-License-Identifier: MIT
/* Aggregation, the folded format, root names and output dispatch. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"
#include "testlib.h"

TEST_MAIN();

#define U(n) { .name = (n), .dso = "/usr/bin/app", .kind = PROFILE_FRAME_USER }

static struct profile *cpu_profile(void)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 42,
				  .target_comm = "app" };

	return profile__new(&m);
}

/* Folded text of p in a malloc'd string (caller frees). */
static char *folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (profile__write_folded(p, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

TEST(profile_new_should_reject_an_unknown_kind)
{
	struct profile_meta m = { .kind = 7 };

	errno = 0;
	CHECK(profile__new(&m) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(profile__new(NULL) == NULL);
	profile__free(NULL); /* no-op */
}

TEST(profile_add_should_merge_identical_stacks_and_sum_weights)
{
	struct profile *p = cpu_profile();
	struct profile_frame a[] = { U("main"), U("work"), U("leaf") };
	struct profile_frame b[] = { U("main"), U("work") };

	CHECK(p);
	CHECK_INT(profile__add(p, "app", a, 3, 1), 0);
	CHECK_INT(profile__add(p, "app", a, 3, 2), 0);
	CHECK_INT(profile__add(p, "app", b, 2, 5), 0);
	CHECK_INT(profile__add(p, "other", b, 2, 1), 0); /* different root */
	CHECK_INT(profile__nr_stacks(p), 3);
	CHECK_U64(profile__total_weight(p), 9);
	CHECK_U64(profile__nr_events(p), 4);
	profile__free(p);
}

TEST(profile_add_should_ignore_zero_weight_and_reject_null_frames)
{
	struct profile *p = cpu_profile();
	struct profile_frame a[] = { U("main") };

	CHECK_INT(profile__add(p, "app", a, 1, 0), 0);
	CHECK_INT(profile__nr_stacks(p), 0);
	CHECK_INT(profile__add(p, "app", NULL, 2, 1), -EINVAL);
	CHECK_INT(profile__add(p, "app", NULL, 0, 1), 0); /* root only */
	CHECK_INT(profile__nr_stacks(p), 1);
	profile__free(p);
}

TEST(add_ids_should_equal_add_with_frames_and_reject_unknown_ids)
{
	struct profile *p = cpu_profile(), *q = cpu_profile();
	struct profile_frame a[] = { U("main"), U("work"), U("leaf") };
	uint32_t ids[3];
	char *fp, *fq;

	CHECK(p && q);
	for (int i = 0; i < 3; i++) {
		int64_t id = profile__frame_id(q, &a[i]);

		CHECK(id >= 0);
		ids[i] = (uint32_t)id;
	}
	/* interned once: the same frame, the same id */
	CHECK_U64((uint64_t)profile__frame_id(q, &a[1]), ids[1]);
	CHECK_INT(profile__add(p, "app", a, 3, 2), 0);
	CHECK_INT(profile__add(p, "app", a, 2, 1), 0);
	CHECK_INT(profile__add_ids(q, "app", ids, 3, 2), 0);
	CHECK_INT(profile__add_ids(q, "app", ids, 2, 1), 0);
	CHECK_INT(profile__add_ids(q, "app", ids, 3, 0), 0); /* ignored */
	fp = folded(p);
	fq = folded(q);
	CHECK(fp && fq);
	CHECK_STR(fq, fp);
	CHECK_STR(fq, "app;main;work 1\napp;main;work;leaf 2\n");
	ids[2] = 3; /* no frame 3 */
	CHECK_INT(profile__add_ids(q, "app", ids, 3, 1), -EINVAL);
	CHECK_INT(profile__add_ids(q, "app", NULL, 1, 1), -EINVAL);
	CHECK_U64(profile__nr_events(q), 2);
	free(fp);
	free(fq);
	profile__free(p);
	profile__free(q);
}

TEST(folded_should_print_root_first_sorted_and_independent_of_insertion_order)
{
	struct profile_frame s1[] = { U("main"), U("b") };
	struct profile_frame s2[] = { U("main"), U("a"), U("x") };
	struct profile_frame s3[] = { U("main"), U("a") };
	struct profile *p = cpu_profile(), *q = cpu_profile();
	char *fp, *fq;

	profile__add(p, "app", s1, 2, 3);
	profile__add(p, "app", s2, 3, 1);
	profile__add(p, "app", s3, 2, 2);
	profile__add(q, "app", s3, 2, 2);
	profile__add(q, "app", s2, 3, 1);
	profile__add(q, "app", s1, 2, 3);
	fp = folded(p);
	fq = folded(q);
	CHECK_STR(fp, "app;main;a 2\napp;main;a;x 1\napp;main;b 3\n");
	CHECK_STR(fq, fp);
	free(fp);
	free(fq);
	profile__free(p);
	profile__free(q);
}

TEST(folded_should_merge_frames_of_one_function_at_different_addresses)
{
	struct profile *p = cpu_profile();
	struct profile_frame a[] = { U("main"), { .name = "f", .dso = "/bin/x", .rel_addr = 0x10 } };
	struct profile_frame b[] = { U("main"), { .name = "f", .dso = "/bin/x", .rel_addr = 0x20 } };
	char *s;

	profile__add(p, "app", a, 2, 1);
	profile__add(p, "app", b, 2, 1);
	CHECK_INT(profile__nr_stacks(p), 2); /* two pprof locations */
	s = folded(p);
	CHECK_STR(s, "app;main;f 2\n");
	free(s);
	profile__free(p);
}

TEST(folded_should_name_unsymbolized_frames_by_binary_and_offset)
{
	struct profile *p = cpu_profile();
	struct profile_frame a[] = {
		{ .dso = "/usr/lib/x86_64-linux-gnu/libc.so.6", .rel_addr = 0x29d90 },
		{ .rel_addr = 0x1234 },
		{ .name = "do_syscall_64", .kind = PROFILE_FRAME_KERNEL },
		{ .rel_addr = 0xffffffff81000000ull, .kind = PROFILE_FRAME_KERNEL },
		{ .name = "[truncated]", .kind = PROFILE_FRAME_MARKER },
	};
	char *s;

	profile__add(p, "app", a, 5, 1);
	s = folded(p);
	CHECK_STR(s, "app;libc.so.6+0x29d90;[unknown]+0x1234;do_syscall_64_[k];"
		     "[kernel.kallsyms]+0xffffffff81000000_[k];[truncated] 1\n");
	CHECK(!strstr(s, ";[unknown];"));
	free(s);
	profile__free(p);
}

TEST(folded_should_keep_lines_parseable_when_names_hold_separators)
{
	struct profile *p = cpu_profile();
	struct profile_frame a[] = { U("operator;()"), U("two\nlines") };
	char *s;

	profile__add(p, "my;comm", a, 2, 4);
	s = folded(p);
	CHECK_STR(s, "my_comm;operator_();two lines 4\n");
	free(s);
	profile__free(p);
}

TEST(folded_futex_should_print_microseconds_rounded_and_never_zero)
{
	struct profile_meta m = { .kind = PROFILE_FUTEX };
	struct profile *p = profile__new(&m);
	struct profile_frame a[] = { U("a") }, b[] = { U("b") }, c[] = { U("c") };
	char *s;

	CHECK(p);
	CHECK_STR(profile__meta(p)->unit, "nanoseconds");
	profile__add(p, "app", a, 1, 1499);	/* 1.499 us -> 1 */
	profile__add(p, "app", b, 1, 2500);	/* 2.5 us -> 3 */
	profile__add(p, "app", c, 1, 10);	/* 0.01 us -> 1, not 0 */
	profile__add(p, "app", c, 1, 10);
	s = folded(p);
	CHECK_STR(s, "app;a 1\napp;b 3\napp;c 1\n");
	free(s);
	profile__free(p);
}

TEST(read_folded_should_round_trip_the_folded_writer)
{
	const char *in = "app;main;work 7\n"
			 "\n"
			 "app;main 3\r\n"
			 "other;x;y;z 1\n"
			 "app;main;work 2\n";
	struct profile *p = cpu_profile();
	FILE *f = fmemopen((void *)in, strlen(in), "r");
	size_t bad = 0;
	char *s;

	CHECK(f);
	CHECK_INT(profile__read_folded(p, f, &bad), 0);
	fclose(f);
	CHECK_U64(profile__total_weight(p), 13);
	s = folded(p);
	CHECK_STR(s, "app;main 3\napp;main;work 9\nother;x;y;z 1\n");
	free(s);
	profile__free(p);
}

TEST(read_folded_futex_should_convert_microseconds_to_nanoseconds)
{
	const char *in = "app;lock 250\n";
	struct profile_meta m = { .kind = PROFILE_FUTEX };
	struct profile *p = profile__new(&m);
	FILE *f = fmemopen((void *)in, strlen(in), "r");

	CHECK_INT(profile__read_folded(p, f, NULL), 0);
	fclose(f);
	CHECK_U64(profile__total_weight(p), 250000);
	profile__free(p);
}

TEST(read_folded_should_reject_bad_lines_with_their_number)
{
	static const char *const bad[] = {
		"a;b 1\nno_count\n", "a;b 1\na;b x\n", "a;b 1\na;;b 1\n",
		"a;b 1\na;b 99999999999999999999999\n", "a;b 1\na;b -1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct profile *p = cpu_profile();
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");
		size_t line = 0;

		CHECK_INT(profile__read_folded(p, f, &line), -EINVAL);
		CHECK_INT(line, 2);
		fclose(f);
		profile__free(p);
	}
}

TEST(read_folded_should_stop_at_an_endless_line)
{
	struct profile *p = cpu_profile();
	FILE *f = fopen("/dev/zero", "r");
	size_t line = 0;

	CHECK(f);
	/* /dev/zero has no newline: before, getline() ate all memory */
	CHECK_INT(profile__read_folded(p, f, &line), -EINVAL);
	CHECK_INT(line, 1);
	fclose(f);
	profile__free(p);
}

TEST(profile_should_stay_correct_across_table_growth)
{
	struct profile *p = cpu_profile();
	char names[4][32];
	struct profile_frame fr[4];

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 20000; i++) {
			for (int k = 0; k < 4; k++) {
				snprintf(names[k], sizeof(names[k]), "fn_%d_%d", k, (i >> (k * 3)) & 0xfff);
				fr[k] = (struct profile_frame){ .name = names[k], .dso = "/bin/x",
								.rel_addr = (uint64_t)i };
			}
			CHECK_INT(profile__add(p, "app", fr, 4, 1 + round), 0);
		}
	}
	CHECK_INT(profile__nr_stacks(p), 20000);
	CHECK_U64(profile__total_weight(p), 60000);
	CHECK_U64(profile__nr_events(p), 40000);
	profile__free(p);
}

TEST(root_thread_should_use_flamegraph_comm_pid_tid)
{
	char buf[PROFILE_ROOT_MAX], small[8];

	CHECK_INT(profile_root__thread(buf, sizeof(buf), "worker", 1234, 1240), 16);
	CHECK_STR(buf, "worker-1234/1240");
	CHECK_INT(profile_root__thread(small, sizeof(small), "worker", 1234, 1240), -ENOSPC);
	CHECK_INT(strlen(small), 7);
}

TEST(root_lock_should_name_the_symbol_else_the_address)
{
	char buf[PROFILE_ROOT_MAX];

	CHECK(profile_root__lock(buf, sizeof(buf), "big_lock", 0, 0x4040) > 0);
	CHECK_STR(buf, "lock:big_lock");
	CHECK(profile_root__lock(buf, sizeof(buf), "locks", 0x28, 0x4068) > 0);
	CHECK_STR(buf, "lock:locks+0x28");
	CHECK(profile_root__lock(buf, sizeof(buf), NULL, 0, 0x7ffd1234abc0ull) > 0);
	CHECK_STR(buf, "lock:0x7ffd1234abc0");
	CHECK(profile_root__lock(buf, sizeof(buf), "", 0, 0x10) > 0);
	CHECK_STR(buf, "lock:0x10");
}

TEST(format_should_parse_names_and_extensions)
{
	CHECK_INT(profile_format__parse("folded"), PROFILE_FMT_FOLDED);
	CHECK_INT(profile_format__parse("svg"), PROFILE_FMT_SVG);
	CHECK_INT(profile_format__parse("pprof"), PROFILE_FMT_PPROF);
	CHECK_INT(profile_format__parse("png"), -EINVAL);
	CHECK_INT(profile_format__parse(NULL), -EINVAL);
	CHECK_INT(profile_format__from_path("out.svg"), PROFILE_FMT_SVG);
	CHECK_INT(profile_format__from_path("OUT.SVG"), PROFILE_FMT_SVG);
	CHECK_INT(profile_format__from_path("cpu.pb.gz"), PROFILE_FMT_PPROF);
	CHECK_INT(profile_format__from_path("cpu.folded"), PROFILE_FMT_FOLDED);
	CHECK_INT(profile_format__from_path("cpu.txt"), PROFILE_FMT_FOLDED);
	CHECK_INT(profile_format__from_path("noext"), PROFILE_FMT_FOLDED);
	CHECK_INT(profile_format__from_path(NULL), PROFILE_FMT_FOLDED);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int file_starts_with(const char *path, const void *magic, size_t n)
{
	unsigned char buf[64];
	FILE *f = fopen(path, "rb");
	size_t got;

	if (!f)
		return 0;
	got = fread(buf, 1, n, f);
	fclose(f);
	return got == n && !memcmp(buf, magic, n);
}

TEST(write_should_choose_the_format_by_extension_and_leave_no_temp_file)
{
	char dir[] = "/tmp/sfprof-test-XXXXXX", path[256];
	struct profile *p = cpu_profile();
	struct profile_frame a[] = { U("main"), U("leaf") };

	CHECK(mkdtemp(dir));
	profile__add(p, "app", a, 2, 3);

	snprintf(path, sizeof(path), "%s/out.svg", dir);
	CHECK_INT(profile__write(p, PROFILE_FMT_AUTO, path), 0);
	CHECK(file_starts_with(path, "<?xml", 5));
	unlink(path);

	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	CHECK_INT(profile__write(p, PROFILE_FMT_AUTO, path), 0);
	CHECK(file_starts_with(path, "\x1f\x8b", 2));
	CHECK_INT(count_entries(dir), 1); /* no temporary file left */
	unlink(path);

	/* a device is written in place, never renamed over */
	CHECK_INT(profile__write(p, PROFILE_FMT_FOLDED, "/dev/null"), 0);
	{
		struct stat st;

		CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	}

	snprintf(path, sizeof(path), "%s/out.txt", dir);
	CHECK_INT(profile__write(p, PROFILE_FMT_AUTO, path), 0);
	CHECK(file_starts_with(path, "app;main;leaf 3\n", 16));
	unlink(path);

	/* -f wins over the extension */
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	CHECK_INT(profile__write(p, PROFILE_FMT_SVG, path), 0);
	CHECK(file_starts_with(path, "<?xml", 5));
	unlink(path);

	snprintf(path, sizeof(path), "%s/no/such/dir/out.svg", dir);
	CHECK_INT(profile__write(p, PROFILE_FMT_AUTO, path), -ENOENT);
	rmdir(dir);
	profile__free(p);
}

static struct profile *cpu_profile_of(const char *folded_text)
{
	struct profile *p = cpu_profile();
	FILE *f = fmemopen((void *)folded_text, strlen(folded_text), "r");

	if (!p || !f || profile__read_folded(p, f, NULL)) {
		if (f)
			fclose(f);
		profile__free(p);
		return NULL;
	}
	fclose(f);
	return p;
}

/* The writer is the caller's pick (output.h): the profile's own folded
 * writer knows nothing of sfprof diff. */
TEST(write_should_pick_the_folded_diff_writer_for_a_diff_profile)
{
	/* "stack BASE NEW", BASE scaled to NEW's total (6 of 12: half) */
	static const char want[] = "app;main;gc 2 0\napp;main;io 0 3\napp;main;work 4 3\n";
	char dir[] = "/tmp/sfprof-test-XXXXXX", path[256];
	struct profile *base = cpu_profile_of("app;main;work 8\napp;main;gc 4\n");
	struct profile *cur = cpu_profile_of("app;main;work 3\napp;main;io 3\n");
	struct profile_render r = { .diff_base = base };
	struct stat st;
	char *s;

	CHECK(base && cur);
	CHECK(mkdtemp(dir));
	CHECK_INT(profile__set_render(cur, &r), 0);
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	CHECK_INT(profile__write(cur, PROFILE_FMT_AUTO, path), 0);
	CHECK(stat(path, &st) == 0 && (size_t)st.st_size == strlen(want));
	CHECK_MSG(file_starts_with(path, want, strlen(want)), "%s is not: %s", path, want);
	unlink(path);
	rmdir(dir);
	s = folded(cur);
	CHECK_STR(s, "app;main;io 3\napp;main;work 3\n");
	free(s);
	profile__free(cur);
	profile__free(base);
}

TEST(profile_add_should_copy_names_so_callers_may_reuse_their_buffers)
{
	struct profile *p = cpu_profile();
	char name[32], dso[32];
	struct profile_frame fr[] = { { .name = name, .dso = dso, .rel_addr = 0x10 } };
	char *s;

	/* same pointers, same address, different contents: different frames */
	strcpy(name, "alpha");
	strcpy(dso, "/bin/a");
	CHECK_INT(profile__add(p, "app", fr, 1, 1), 0);
	strcpy(name, "beta");
	CHECK_INT(profile__add(p, "app", fr, 1, 2), 0);
	strcpy(dso, "/bin/b");
	CHECK_INT(profile__add(p, "app", fr, 1, 4), 0); /* beta in another binary */
	strcpy(name, "alpha");
	strcpy(dso, "/bin/a");
	CHECK_INT(profile__add(p, "app", fr, 1, 8), 0);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	CHECK_INT(profile__nr_stacks(p), 3);
	s = folded(p);
	CHECK_STR(s, "app;alpha 9\napp;beta 6\n");
	free(s);
	profile__free(p);
}

TEST(frames_differing_only_by_source_position_should_be_distinct)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame a = { .name = "f", .dso = "/bin/x", .rel_addr = 0x10,
				   .file = "/src/f.c", .line = 3 };
	struct profile_frame b = a, c = a;
	int64_t ia, ib, ic;

	CHECK(p);
	b.line = 4;
	c.file = "/src/g.h";
	ia = profile__frame_id(p, &a);
	ib = profile__frame_id(p, &b);
	ic = profile__frame_id(p, &c);
	CHECK(ia >= 0 && ib >= 0 && ic >= 0);
	CHECK(ia != ib && ia != ic && ib != ic);
	CHECK_INT(profile__frame_id(p, &a), ia);
	profile__free(p);
}
