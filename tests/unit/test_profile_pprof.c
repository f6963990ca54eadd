// SPDX-License-Identifier: MIT
/*
 * The pprof writer, checked by decoding its output here: gunzip with
 * zlib, then a small protobuf reader for the profile.proto fields the
 * writer emits (pprof_decode.h). (The end-to-end test reads the same
 * files with `go tool pprof`.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "profile/profile.h"
#include "testlib.h"
#include "pprof_decode.h"

TEST_MAIN();

TEST(pprof_cpu_should_have_sample_types_period_and_string_zero_empty)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .duration_ns = 5000000000ull,
				  .start_unix_ns = 1700000000000000000ull, .target_comm = "app" };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = { { .name = "main", .dso = "/bin/app" } };
	struct decoded d;

	profile__add(p, "app", fr, 1, 3);
	CHECK_INT(decode(p, &d), 0);
	CHECK(d.nstrs > 0);
	CHECK_STR(d.strs[0], "");
	/* count first, then the time, as Go's CPU profiles */
	CHECK_INT(d.nsample_types, 2);
	CHECK_STR(str(&d, d.st_types[0]), "samples");
	CHECK_STR(str(&d, d.st_units[0]), "count");
	CHECK_STR(str(&d, d.st_types[1]), "cpu");
	CHECK_STR(str(&d, d.st_units[1]), "nanoseconds");
	CHECK_STR(str(&d, d.pt_type), "cpu");
	CHECK_STR(str(&d, d.pt_unit), "nanoseconds");
	CHECK_U64(d.period, 1000000000ull / 99);
	CHECK_INT(d.nsamples, 1);
	CHECK_INT(d.samples[0].nvalues, 2);
	CHECK_U64(d.samples[0].values[0], 3);
	CHECK_U64(d.samples[0].values[1], 3 * (1000000000ull / 99));
	CHECK_U64(d.duration, 5000000000ull);
	CHECK_U64(d.time_nanos, 1700000000000000000ull);
	CHECK_STR(str(&d, d.default_type), "cpu");
	CHECK(strstr(str(&d, d.comment), "on-CPU samples of app at 99 Hz"));
	release(&d);
	profile__free(p);
}

TEST(pprof_futex_should_count_waits_then_wait_nanoseconds)
{
	struct profile_meta m = { .kind = PROFILE_FUTEX };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = { { .name = "pthread_mutex_lock", .dso = "/lib/libc.so.6" } };
	uint32_t id;
	struct decoded d;

	profile__add(p, "lock:big", fr, 1, 1500);
	profile__add(p, "lock:big", fr, 1, 2500);
	/* an aggregated caller: 5 waits of 1 us in one call */
	id = (uint32_t)profile__frame_id(p, &fr[0]);
	CHECK_INT(profile__add_sample(p, "lock:big", NULL, &id, 1, 5, 5000), 0);
	CHECK_U64(profile__nr_events(p), 7);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsample_types, 2);
	CHECK_STR(str(&d, d.st_types[0]), "waits");
	CHECK_STR(str(&d, d.st_units[0]), "count");
	CHECK_STR(str(&d, d.st_types[1]), "wait");
	CHECK_STR(str(&d, d.st_units[1]), "nanoseconds");
	CHECK_STR(str(&d, d.default_type), "wait");
	CHECK_INT(d.nsamples, 1);
	CHECK_INT(d.samples[0].nvalues, 2);
	CHECK_U64(d.samples[0].values[0], 7);
	CHECK_U64(d.samples[0].values[1], 9000);
	release(&d);
	profile__free(p);
}

TEST(pprof_samples_without_labels_should_list_locations_leaf_first_with_the_root_outermost)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = {
		{ .name = "main", .dso = "/bin/app", .build_id = "abcd", .rel_addr = 0x1100 },
		{ .name = "work", .dso = "/bin/app", .build_id = "abcd", .rel_addr = 0x1200 },
		{ .dso = "/lib/libz.so.1", .build_id = "ef01", .rel_addr = 0x10 },
	};
	struct decoded d;
	uint64_t total = 0;

	profile__add(p, "app-1/2", fr, 3, 7);
	profile__add(p, "app-1/3", fr, 2, 5);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsamples, 2);
	for (int i = 0; i < d.nsamples; i++) {
		const struct dec_sample *s = &d.samples[i];

		CHECK_INT(s->nvalues, 2);
		total += s->value;
		if (s->value == 7) {
			CHECK_INT(s->nlocs, 4);
			/* unsymbolized: no Line, for a symbolizer to fill in */
			CHECK(loc(&d, s->locs[0]) && loc(&d, s->locs[0])->nlines == 0);
			CHECK_STR(loc_name(&d, s->locs[1]), "work");
			CHECK_STR(loc_name(&d, s->locs[2]), "main");
			CHECK_STR(loc_name(&d, s->locs[3]), "app-1/2");
		} else {
			CHECK_INT(s->nlocs, 3);
			CHECK_STR(loc_name(&d, s->locs[2]), "app-1/3");
		}
	}
	CHECK_U64(total, 12);
	release(&d);
	profile__free(p);
}

TEST(pprof_mappings_should_carry_build_ids_and_contain_their_locations)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = {
		{ .name = "main", .dso = "/bin/app", .build_id = "abcd", .rel_addr = 0x1100 },
		{ .name = "inflate", .dso = "/lib/libz.so.1", .build_id = "ef01", .rel_addr = 0x2010 },
		{ .name = "do_syscall_64", .kind = PROFILE_FRAME_KERNEL, .rel_addr = 0xffffffff81001000ull },
		{ .name = "[truncated]", .kind = PROFILE_FRAME_MARKER },
	};
	struct decoded d;
	int seen = 0;

	profile__add(p, "app", fr, 4, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nmaps, 3);
	for (int i = 0; i < d.nmaps; i++) {
		const struct dec_map *mp = &d.maps[i];
		const char *fn = str(&d, mp->filename);

		CHECK(mp->has_functions);
		CHECK(!mp->has_filenames && !mp->has_line_numbers);
		if (!strcmp(fn, "/bin/app")) {
			CHECK_STR(str(&d, mp->build_id), "abcd");
			seen |= 1;
		} else if (!strcmp(fn, "/lib/libz.so.1")) {
			CHECK_STR(str(&d, mp->build_id), "ef01");
			seen |= 2;
		} else if (!strcmp(fn, "[kernel.kallsyms]")) {
			seen |= 4;
		}
	}
	CHECK_INT(seen, 7);
	for (int i = 0; i < d.nlocs; i++) {
		const struct dec_loc *l = &d.locs[i];
		const struct dec_map *mp = NULL;

		for (int k = 0; k < d.nmaps; k++)
			if (d.maps[k].id == l->mapping)
				mp = &d.maps[k];
		if (!l->mapping)
			continue; /* roots and markers */
		CHECK(mp);
		CHECK_MSG(l->address >= mp->start && l->address < mp->limit,
			  "location 0x%llx outside its mapping [0x%llx, 0x%llx)",
			  (unsigned long long)l->address, (unsigned long long)mp->start,
			  (unsigned long long)mp->limit);
		/* user addresses normalise back to the file-relative address */
		if (!strcmp(str(&d, mp->filename), "/lib/libz.so.1"))
			CHECK_U64(l->address - mp->start, 0x2010);
		if (!strcmp(str(&d, mp->filename), "[kernel.kallsyms]"))
			CHECK_U64(l->address, 0xffffffff81001000ull);
	}
	/* disjoint ranges */
	for (int i = 0; i < d.nmaps; i++)
		for (int k = i + 1; k < d.nmaps; k++)
			CHECK(d.maps[i].limit <= d.maps[k].start || d.maps[k].limit <= d.maps[i].start);
	release(&d);
	profile__free(p);
}

TEST(pprof_leaf_totals_should_equal_the_folded_leaf_totals)
{
	const char *folded = "app;main;a 30\napp;main;b 12\napp;main;a;b 8\napp;x 1\n";
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	FILE *f = fmemopen((void *)folded, strlen(folded), "r");
	uint64_t a = 0, b = 0, x = 0;
	struct decoded d;

	CHECK_INT(profile__read_folded(p, f, NULL), 0);
	fclose(f);
	CHECK_INT(decode(p, &d), 0);
	for (int i = 0; i < d.nsamples; i++) {
		const char *leaf = loc_name(&d, d.samples[i].locs[0]);

		if (!strcmp(leaf, "a"))
			a += d.samples[i].value;
		else if (!strcmp(leaf, "b"))
			b += d.samples[i].value;
		else if (!strcmp(leaf, "x"))
			x += d.samples[i].value;
	}
	CHECK_U64(a, 30);
	CHECK_U64(b, 20);
	CHECK_U64(x, 1);
	release(&d);
	profile__free(p);
}

TEST(pprof_should_keep_huge_addresses_inside_their_mapping)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = {
		{ .name = "ext4_read", .dso = "[ext4]", .kind = PROFILE_FRAME_KERNEL,
		  .rel_addr = 0xffffffffc0a01234ull },
		{ .dso = "/bin/app", .rel_addr = 0x7fffffff0000ull },
	};
	struct decoded d;

	profile__add(p, "app", fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nmaps, 2);
	for (int i = 0; i < d.nlocs; i++) {
		const struct dec_loc *l = &d.locs[i];

		for (int k = 0; k < d.nmaps; k++) {
			if (d.maps[k].id != l->mapping)
				continue;
			CHECK_MSG(d.maps[k].start < d.maps[k].limit && l->address >= d.maps[k].start &&
					  l->address < d.maps[k].limit,
				  "location 0x%llx outside [0x%llx, 0x%llx)",
				  (unsigned long long)l->address, (unsigned long long)d.maps[k].start,
				  (unsigned long long)d.maps[k].limit);
		}
	}
	release(&d);
	profile__free(p);
}

static const struct dec_map *map_of(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nmaps; i++)
		if (d->maps[i].id == id)
			return &d->maps[i];
	return NULL;
}

static const struct dec_label *label(const struct decoded *d, const struct dec_sample *s,
				     const char *key)
{
	for (int i = 0; i < s->nlabels; i++)
		if (!strcmp(str(d, s->labels[i].key), key))
			return &s->labels[i];
	return NULL;
}

/* Two processes of one PIE program at different bases, and libc. */
static const struct profile_frame pie_frames[] = {
	{ .name = "start_thread", .dso = "/lib/libc.so.6", .build_id = "c0", .rel_addr = 0x8a000,
	  .pid = 100, .addr = 0x7f0000028000ull + 0x62000, .map_start = 0x7f0000028000ull,
	  .map_end = 0x7f000017d000ull, .map_offset = 0x28000 },
	{ .name = "main", .dso = "/bin/app", .build_id = "a1", .rel_addr = 0x1150, .pid = 100,
	  .addr = 0x555555555150ull, .map_start = 0x555555555000ull, .map_end = 0x555555556000ull,
	  .map_offset = 0x1000, .map_exec = 1 },
	{ .dso = "/bin/app", .build_id = "a1", .rel_addr = 0x1200, .pid = 100,
	  .addr = 0x555555555200ull, .map_start = 0x555555555000ull, .map_end = 0x555555556000ull,
	  .map_offset = 0x1000, .map_exec = 1 },
	{ .name = "main", .dso = "/bin/app", .build_id = "a1", .rel_addr = 0x1150, .pid = 200,
	  .addr = 0x565555555150ull, .map_start = 0x565555555000ull, .map_end = 0x565555556000ull,
	  .map_offset = 0x1000, .map_exec = 1 },
};

TEST(pprof_mappings_should_be_the_real_ranges_with_the_target_binary_first)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 200 };
	struct profile *p = profile__new(&m);
	struct decoded d;
	int seen_app = 0;

	/* libc is met first, and pid 100's app before the target's */
	profile__add(p, NULL, &pie_frames[0], 3, 1);
	profile__add(p, NULL, &pie_frames[3], 1, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nmaps, 3);
	CHECK_U64(d.maps[0].id, 1);
	CHECK_STR(str(&d, d.maps[0].filename), "/bin/app");
	CHECK_U64(d.maps[0].start, 0x565555555000ull);
	for (int i = 0; i < d.nmaps; i++) {
		const struct dec_map *mp = &d.maps[i];

		if (!strcmp(str(&d, mp->filename), "/lib/libc.so.6")) {
			CHECK_U64(mp->start, 0x7f0000028000ull);
			CHECK_U64(mp->limit, 0x7f000017d000ull);
			CHECK_U64(mp->offset, 0x28000);
			CHECK_STR(str(&d, mp->build_id), "c0");
			CHECK(mp->has_functions);
		} else {
			CHECK_STR(str(&d, mp->filename), "/bin/app");
			CHECK_U64(mp->offset, 0x1000);
			CHECK_U64(mp->limit - mp->start, 0x1000);
			seen_app++;
		}
	}
	CHECK_INT(seen_app, 2);
	/* every location at its runtime address, inside its mapping */
	for (int i = 0; i < d.nlocs; i++) {
		const struct dec_loc *l = &d.locs[i];
		const struct dec_map *mp = map_of(&d, l->mapping);

		CHECK(mp);
		if (!mp)
			continue;
		CHECK(l->address >= mp->start && l->address < mp->limit);
		if (l->address == 0x555555555200ull) {
			CHECK_INT(l->nlines, 0);
			CHECK(!mp->has_functions); /* pid 100's app: one unnamed PC */
		} else {
			CHECK_INT(l->nlines, 1);
		}
	}
	CHECK(loc(&d, 4) && loc(&d, 4)->address == 0x565555555150ull &&
	      map_of(&d, loc(&d, 4)->mapping) == &d.maps[0]);
	release(&d);
	profile__free(p);
}

TEST(pprof_main_binary_should_be_the_first_targets_when_there_are_several)
{
	/* -p 100,200: no single target, the first one's executable first */
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .main_pid = 100 };
	struct profile *p = profile__new(&m);
	struct decoded d;

	profile__add(p, NULL, &pie_frames[3], 1, 1); /* pid 200's app */
	profile__add(p, NULL, &pie_frames[0], 2, 1); /* libc, pid 100's app */
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nmaps, 3);
	CHECK_U64(d.maps[0].id, 1);
	CHECK_STR(str(&d, d.maps[0].filename), "/bin/app");
	CHECK_U64(d.maps[0].start, 0x555555555000ull);
	release(&d);
	profile__free(p);
}

TEST(pprof_samples_with_labels_should_carry_them_and_no_root_location)
{
	struct profile_meta m = { .kind = PROFILE_FUTEX };
	struct profile *p = profile__new(&m);
	struct profile_labels l1 = { .pid = 100, .tid = 101, .thread = "worker", .lock = "big_lock",
				     .lock_addr = 0x555555558040ull };
	struct profile_labels l2 = l1;
	uint32_t ids[2];
	struct decoded d;
	char *folded = NULL;
	size_t len = 0;
	FILE *f;

	ids[0] = (uint32_t)profile__frame_id(p, &pie_frames[1]);
	ids[1] = (uint32_t)profile__frame_id(p, &pie_frames[0]);
	l2.tid = 102;
	CHECK_INT(profile__add_sample(p, "lock:big_lock", &l1, ids, 2, 1, 3000), 0);
	CHECK_INT(profile__add_sample(p, "lock:big_lock", &l2, ids, 2, 2, 5000), 0);
	CHECK_INT(profile__add_sample(p, "lock:big_lock", &l1, ids, 2, 1, 1000), 0);
	CHECK_U64(profile__nr_stacks(p), 2);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsamples, 2);
	for (int i = 0; i < d.nsamples; i++) {
		const struct dec_sample *s = &d.samples[i];
		const struct dec_label *tid = label(&d, s, "tid");

		CHECK_INT(s->nlocs, 2); /* no "lock:big_lock" location */
		CHECK_STR(loc_name(&d, s->locs[0]), "start_thread");
		CHECK(label(&d, s, "pid") && label(&d, s, "pid")->num == 100);
		CHECK(label(&d, s, "thread") && !strcmp(str(&d, label(&d, s, "thread")->str), "worker"));
		CHECK(label(&d, s, "lock") && !strcmp(str(&d, label(&d, s, "lock")->str), "big_lock"));
		CHECK(label(&d, s, "lock_addr") && label(&d, s, "lock_addr")->num == 0x555555558040ull);
		CHECK(tid);
		if (tid && tid->num == 101) {
			CHECK_U64(s->values[0], 2);
			CHECK_U64(s->values[1], 4000);
		} else {
			CHECK(tid && tid->num == 102);
			CHECK_U64(s->values[0], 2);
			CHECK_U64(s->values[1], 5000);
		}
	}
	/* folded keeps the root and merges the threads */
	f = open_memstream(&folded, &len);
	CHECK_INT(profile__write_folded(p, f), 0);
	fclose(f);
	CHECK_STR(folded, "lock:big_lock;main;start_thread 9\n");
	free(folded);
	release(&d);
	profile__free(p);
}

static int write_bytes(const struct profile *p, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int err;

	if (!f)
		return -ENOMEM;
	err = profile__write_pprof(p, f);
	fclose(f);
	return err;
}

TEST(pprof_should_be_byte_identical_for_the_same_events)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 100 };
	struct profile *a = profile__new(&m), *b = profile__new(&m);
	struct profile_labels l = { .pid = 100, .tid = 100, .thread = "app" };
	char *ba = NULL, *bb = NULL;
	size_t la = 0, lb = 0;

	for (int i = 0; i < 2; i++) {
		struct profile *p = i ? b : a;
		uint32_t ids[3];

		for (int k = 0; k < 3; k++)
			ids[k] = (uint32_t)profile__frame_id(p, &pie_frames[k]);
		profile__add_sample(p, "app", &l, ids, 3, 4, 4);
		profile__add_sample(p, "app", &l, ids, 2, 1, 1);
	}
	CHECK_INT(write_bytes(a, &ba, &la), 0);
	CHECK_INT(write_bytes(b, &bb, &lb), 0);
	CHECK(la == lb && la > 0 && !memcmp(ba, bb, la));
	free(ba);
	free(bb);
	profile__free(a);
	profile__free(b);
}

static const char *func_name(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].id == id)
			return str(d, d->funcs[i].name);
	return "<no function>";
}

TEST(pprof_inline_frames_at_one_pc_should_be_lines_of_one_location_innermost_first)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	/* outermost first: start_thread, then parse() with lex() inlined at
	 * its PC (a frame of its own at the same address), then recursion
	 * at one return address (same function twice: two locations) */
	struct profile_frame fr[5] = { pie_frames[0], pie_frames[1], pie_frames[1], pie_frames[1],
				       pie_frames[1] };
	struct decoded d;

	fr[1].name = "parse";
	fr[2].name = "lex";
	fr[3].name = "rec";
	fr[3].addr += 0x40, fr[3].rel_addr += 0x40;
	fr[4] = fr[3];
	profile__add(p, NULL, fr, 5, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsamples, 1);
	CHECK_INT(d.samples[0].nlocs, 4);
	CHECK_STR(loc_name(&d, d.samples[0].locs[0]), "rec");
	CHECK_STR(loc_name(&d, d.samples[0].locs[1]), "rec");
	CHECK_U64(d.samples[0].locs[0], d.samples[0].locs[1]); /* one PC: one location */
	{
		const struct dec_loc *l = loc(&d, d.samples[0].locs[2]);

		CHECK(l && l->nlines == 2);
		if (l && l->nlines == 2) {
			CHECK_STR(func_name(&d, l->functions[0]), "lex");   /* innermost */
			CHECK_STR(func_name(&d, l->functions[1]), "parse"); /* its caller */
			CHECK_U64(l->address, pie_frames[1].addr);
		}
	}
	CHECK_STR(loc_name(&d, d.samples[0].locs[3]), "start_thread");
	release(&d);
	profile__free(p);
}

TEST(pprof_vm_functions_at_one_shared_pc_should_be_a_location_each)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	/* outermost first: start_thread, then outerJS and innerJS, both
	 * interpreted: their frames at the interpreter's one return PC */
	struct profile_frame fr[3] = { pie_frames[0], pie_frames[1], pie_frames[1] };
	struct decoded d;

	fr[1].name = "JS:outerJS /a.js";
	fr[2].name = "JS:innerJS /a.js";
	fr[1].vm_shared = fr[2].vm_shared = 1;
	profile__add(p, NULL, fr, 3, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsamples, 1);
	CHECK_INT(d.samples[0].nlocs, 3);
	CHECK_STR(loc_name(&d, d.samples[0].locs[0]), "JS:innerJS /a.js");
	CHECK_STR(loc_name(&d, d.samples[0].locs[1]), "JS:outerJS /a.js");
	CHECK(d.samples[0].locs[0] != d.samples[0].locs[1]);
	{
		const struct dec_loc *l = loc(&d, d.samples[0].locs[1]);

		CHECK(l && l->nlines == 1 && l->address == pie_frames[1].addr);
	}
	release(&d);
	profile__free(p);
}

static const struct dec_func *func_of(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].id == id)
			return &d->funcs[i];
	return NULL;
}

/* The Function of the leaf location of the sample whose leaf is at addr. */
static const struct dec_func *leaf_func(const struct decoded *d, uint64_t addr, int line)
{
	for (int i = 0; i < d->nsamples; i++) {
		const struct dec_loc *l = loc(d, d->samples[i].locs[0]);

		if (l && l->address == addr && l->nlines > line)
			return func_of(d, l->functions[line]);
	}
	return NULL;
}

TEST(pprof_functions_should_be_one_per_name_file_and_start_line_and_carry_it)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame a = pie_frames[1], b, c, inl[2], out, py[3];
	const struct dec_func *fa, *fb, *fc, *fi, *fo, *f0, *f1, *f2;
	struct decoded d;

	/* two lines of one static init() in a.c, and another init() in b.c */
	a.name = "init", a.file = "/src/a.c", a.line = 12, a.start_line = 10;
	b = a, b.addr += 0x10, b.rel_addr += 0x10, b.line = 15;
	c = a, c.addr += 0x100, c.rel_addr += 0x100, c.file = "/src/b.c", c.line = 40,
	c.start_line = 38;
	/* helper() inlined into main at one PC (outermost first), and its
	 * out-of-line copy at another: one Function, its origin's start */
	inl[0] = a, inl[0].addr += 0x200, inl[0].rel_addr += 0x200, inl[0].name = "main",
	inl[0].line = 30, inl[0].start_line = 28;
	inl[1] = inl[0], inl[1].name = "helper", inl[1].line = 5, inl[1].start_line = 3;
	out = inl[1], out.addr += 0x40, out.rel_addr += 0x40, out.line = 6;
	/* Python: run() of two modules, one of them at two lines */
	for (int i = 0; i < 3; i++)
		py[i] = (struct profile_frame){ .name = "run", .kind = PROFILE_FRAME_PYTHON,
						.pid = 100, .file = i == 1 ? "/app/m2.py" : "/app/m1.py",
						.line = 20 + (uint32_t)i,
						.start_line = i == 1 ? 17 : 19 };
	CHECK(p);
	CHECK_INT(profile__add(p, NULL, &a, 1, 1), 0);
	CHECK_INT(profile__add(p, NULL, &b, 1, 1), 0);
	CHECK_INT(profile__add(p, NULL, &c, 1, 1), 0);
	CHECK_INT(profile__add(p, NULL, inl, 2, 1), 0);
	CHECK_INT(profile__add(p, NULL, &out, 1, 1), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(profile__add(p, "py", &py[i], 1, 1), 0);
	CHECK_INT(decode(p, &d), 0);
	fa = leaf_func(&d, a.addr, 0);
	fb = leaf_func(&d, b.addr, 0);
	fc = leaf_func(&d, c.addr, 0);
	fi = leaf_func(&d, inl[0].addr, 0); /* innermost Line: helper */
	fo = leaf_func(&d, out.addr, 0);
	CHECK(fa && fb && fc && fi && fo);
	if (fa && fb && fc && fi && fo) {
		CHECK_U64(fa->id, fb->id);
		CHECK(fa->id != fc->id);
		CHECK_STR(str(&d, fa->name), "init");
		CHECK_STR(str(&d, fc->name), "init");
		CHECK_STR(str(&d, fa->filename), "/src/a.c");
		CHECK_STR(str(&d, fc->filename), "/src/b.c");
		CHECK_U64(fa->start_line, 10);
		CHECK_U64(fc->start_line, 38);
		CHECK_U64(fi->id, fo->id);
		CHECK_STR(str(&d, fi->name), "helper");
		CHECK_U64(fi->start_line, 3);
		fi = leaf_func(&d, inl[0].addr, 1); /* its caller's Line */
		CHECK(fi && !strcmp(str(&d, fi->name), "main") && fi->start_line == 28);
	}
	/* Python frames have no mapping: found by their sample's leaf */
	f0 = f1 = f2 = NULL;
	for (int i = 0; i < d.nsamples; i++) {
		const struct dec_loc *l = loc(&d, d.samples[i].locs[0]);
		const struct dec_func *f = l ? func_of(&d, l->function) : NULL;

		if (!f || strcmp(str(&d, f->name), "run"))
			continue;
		if (!strcmp(str(&d, f->filename), "/app/m2.py"))
			f1 = f;
		else if (!f0)
			f0 = f;
		else
			f2 = f;
	}
	CHECK(f0 && f1 && f2);
	if (f0 && f1 && f2) {
		CHECK_U64(f0->id, f2->id); /* m1.run at two lines: one Function */
		CHECK(f0->id != f1->id);
		CHECK_U64(f0->start_line, 19);
		CHECK_U64(f1->start_line, 17);
	}
	release(&d);
	profile__free(p);
}

/*
 * Python frames: a synthetic mapping per interpreter, a Location per
 * (code object, line). run() of m1.py and run() of m2.py, both at line
 * 20, are two Locations at two addresses; the same code object at another
 * line a third; the same code address in another interpreter (pid) a
 * Location of that interpreter's own mapping.
 */
TEST(pprof_python_frames_should_be_a_location_per_code_object_and_line_in_a_mapping_per_interpreter)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame py[4];
	const struct dec_loc *l[4];
	const struct dec_map *mp[4];
	struct decoded d;

	for (int i = 0; i < 4; i++)
		py[i] = (struct profile_frame){ .name = "run", .kind = PROFILE_FRAME_PYTHON,
						.dso = "[python]", .pid = i == 3 ? 200 : 100,
						.file = i == 1 ? "/app/m2.py" : "/app/m1.py",
						.addr = i == 1 ? 0x7f0000002000 : 0x7f0000001000,
						.line = i == 2 ? 21 : 20, .start_line = 19 };
	CHECK(p);
	for (int i = 0; i < 4; i++)
		CHECK_INT(profile__add(p, "py", &py[i], 1, (uint64_t)i + 1), 0);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nsamples, 4);
	for (int i = 0; i < 4; i++) {
		l[i] = NULL;
		mp[i] = NULL;
		for (int s = 0; s < d.nsamples; s++)
			if (d.samples[s].value == (uint64_t)i + 1)
				l[i] = loc(&d, d.samples[s].locs[0]);
		if (l[i])
			mp[i] = map_of(&d, l[i]->mapping);
	}
	CHECK(l[0] && l[1] && l[2] && l[3] && mp[0] && mp[1] && mp[2] && mp[3]);
	if (l[0] && l[1] && l[2] && l[3] && mp[0] && mp[1] && mp[2] && mp[3]) {
		for (int i = 0; i < 4; i++) {
			CHECK(l[i]->address != 0);
			CHECK(l[i]->address >= mp[i]->start && l[i]->address < mp[i]->limit);
			CHECK_STR(str(&d, mp[i]->filename), "[python]");
			CHECK_U64(mp[i]->has_functions, 1);
		}
		/* one interpreter, one mapping; the other its own */
		CHECK_U64(mp[0]->id, mp[1]->id);
		CHECK_U64(mp[0]->id, mp[2]->id);
		CHECK(mp[3]->id != mp[0]->id);
		CHECK(mp[3]->start >= mp[0]->limit || mp[3]->limit <= mp[0]->start);
		/* same name, other file: another Location at another address */
		CHECK(l[0]->id != l[1]->id && l[0]->address != l[1]->address);
		CHECK(l[0]->id != l[2]->id && l[0]->address != l[2]->address);
		CHECK(l[1]->address != l[2]->address);
		CHECK(l[0]->function != l[1]->function);
	}
	release(&d);
	profile__free(p);
}
