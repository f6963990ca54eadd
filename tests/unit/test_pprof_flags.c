// SPDX-License-Identifier: MIT
/*
 * The pprof writer's Mapping flags and Function names, as profile.proto
 * and pprof's own symbolizer mean them: has_inline_frames where a
 * Location has inline Lines; has_filenames / has_line_numbers when any
 * Location has one; has_functions off where a name was made up
 * (binary+0xSTART), so backends re-symbolize; system_name never a
 * demangled name, the mangled one where the frame carries it; the kernel mapping's build-id. Decoded here
 * (pprof_decode.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/elfread.h"
#include "symbols/ksyms.h"
#include "output/output.h"
#include "profile/profile.h"
#include "testlib.h"
#include "pprof_decode.h"

TEST_MAIN();

/* One binary, mapped once: main (with a file and line), helper (none). */
static const struct profile_frame app[] = {
	{ .name = "main", .dso = "/bin/app", .build_id = "a1", .rel_addr = 0x1150, .pid = 7,
	  .addr = 0x555555555150ull, .map_start = 0x555555555000ull, .map_end = 0x555555556000ull,
	  .map_offset = 0x1000, .map_exec = 1, .file = "app.c", .line = 12 },
	{ .name = "helper", .dso = "/bin/app", .build_id = "a1", .rel_addr = 0x1300, .pid = 7,
	  .addr = 0x555555555300ull, .map_start = 0x555555555000ull, .map_end = 0x555555556000ull,
	  .map_offset = 0x1000, .map_exec = 1 },
};

static const struct dec_map *map_named(const struct decoded *d, const char *file)
{
	for (int i = 0; i < d->nmaps; i++)
		if (!strcmp(str(d, d->maps[i].filename), file))
			return &d->maps[i];
	return NULL;
}

TEST(pprof_mapping_should_have_filenames_and_lines_when_any_location_has_them)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7 };
	struct profile *p = profile__new(&m);
	struct decoded d;
	const struct dec_map *mp;

	profile__add(p, NULL, app, 2, 3);
	CHECK_INT(decode(p, &d), 0);
	mp = map_named(&d, "/bin/app");
	CHECK(mp);
	if (mp) {
		CHECK_U64(mp->has_functions, 1);
		CHECK_U64(mp->has_filenames, 1);
		CHECK_U64(mp->has_line_numbers, 1);
		CHECK_U64(mp->has_inline_frames, 0);
	}
	release(&d);
	profile__free(p);
}

TEST(pprof_mapping_should_say_inline_frames_where_a_location_has_several_lines)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { app[0], app[0] };
	struct decoded d;
	const struct dec_map *mp;

	fr[1].name = "inlined_leaf"; /* a frame of its own at main's PC */
	profile__add(p, NULL, fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	CHECK_INT(d.nlocs, 1);
	CHECK_INT(d.nlocs ? d.locs[0].nlines : 0, 2);
	mp = map_named(&d, "/bin/app");
	CHECK(mp && mp->has_inline_frames == 1);
	release(&d);
	profile__free(p);
}

TEST(pprof_made_up_names_should_leave_has_functions_off_so_backends_resymbolize)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { app[0], app[1] };
	struct decoded d;
	const struct dec_map *mp;

	fr[0].file = NULL, fr[0].line = 0;
	fr[1].name = "app+0x1300"; /* stacks_names.c's name for stripped code */
	profile__add(p, NULL, fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	mp = map_named(&d, "/bin/app");
	CHECK(mp);
	if (mp) {
		CHECK_U64(mp->has_functions, 0);
		CHECK_U64(mp->has_filenames, 0);
		CHECK_U64(mp->has_line_numbers, 0);
	}
	/* the Line still names it for a reader without the binary */
	for (int i = 0; i < d.nlocs; i++)
		if (d.locs[i].address == app[1].addr)
			CHECK_STR(loc_name(&d, d.locs[i].id), "app+0x1300");
	release(&d);
	/* a real symbol that only looks alike is a function */
	profile__free(p);
	p = profile__new(&m);
	fr[1].name = "app+0x13zz";
	profile__add(p, NULL, fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	mp = map_named(&d, "/bin/app");
	CHECK(mp && mp->has_functions == 1);
	release(&d);
	profile__free(p);
}

TEST(pprof_system_name_should_be_the_symbol_never_a_demangled_name)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { app[0], app[1] };
	struct decoded d;
	int seen = 0;

	fr[1].name = "std::vector<int>::push_back(int&&)";
	profile__add(p, NULL, fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	for (int i = 0; i < d.nfuncs; i++) {
		const char *name = str(&d, d.funcs[i].name);

		if (!strcmp(name, "main")) {
			CHECK_STR(str(&d, d.funcs[i].system_name), "main");
			seen++;
		} else if (!strcmp(name, fr[1].name)) {
			CHECK_U64(d.funcs[i].system_name, 0); /* unknown, not the demangled one */
			seen++;
		}
	}
	CHECK_INT(seen, 2);
	release(&d);
	profile__free(p);
}

TEST(pprof_system_name_should_be_the_mangled_name_the_frame_carries)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { app[0], app[1] };
	struct decoded d;
	int seen = 0;

	fr[0].sys_name = "main"; /* the same as the name: not stored twice */
	fr[1].name = "sfprof::Box::get";
	fr[1].sys_name = "_ZNK6sfprof3Box3getEi";
	CHECK_INT(profile__add(p, NULL, fr, 2, 1), 0);
	CHECK_INT(decode(p, &d), 0);
	for (int i = 0; i < d.nfuncs; i++) {
		const char *name = str(&d, d.funcs[i].name);

		if (!strcmp(name, "main")) {
			CHECK_STR(str(&d, d.funcs[i].system_name), "main");
			seen++;
		} else if (!strcmp(name, fr[1].name)) {
			CHECK_STR(str(&d, d.funcs[i].system_name), "_ZNK6sfprof3Box3getEi");
			seen++;
		}
	}
	CHECK_INT(seen, 2);
	release(&d);
	profile__free(p);
}

TEST(pprof_kernel_mapping_should_carry_the_kernel_build_id)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99, .target_pid = 7,
				  .kernel_build_id = "24a3598fd700114d0a1b1a4871badcee75d0acac" };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { app[0],
		{ .name = "do_syscall_64", .kind = PROFILE_FRAME_KERNEL,
		  .rel_addr = 0xffffffff81000100ull, .addr = 0xffffffff81000100ull } };
	struct decoded d;
	const struct dec_map *mp;

	profile__add(p, NULL, fr, 2, 1);
	CHECK_INT(decode(p, &d), 0);
	mp = map_named(&d, "[kernel.kallsyms]");
	CHECK(mp);
	if (mp)
		CHECK_STR(str(&d, mp->build_id), m.kernel_build_id);
	release(&d);
	profile__free(p);
}

TEST(notes_build_id_should_read_a_bare_note_run_like_sys_kernel_notes)
{
	/* a Xen note first, then GNU build-id (type 3), 4-aligned */
	static const uint8_t notes[] = {
		4, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 'X', 'e', 'n', 0, 1, 2, 3, 4,
		4, 0, 0, 0, 6, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0, 0,
	};
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	size_t len = 0;
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1];
	int err;

	CHECK_INT(elfread__notes_build_id(notes, sizeof(notes), id, &len), 0);
	CHECK_INT((int)len, 6);
	CHECK(len == 6 && !memcmp(id, "\xde\xad\xbe\xef\x01\x02", 6));
	CHECK_INT(elfread__notes_build_id(notes, 30, id, &len), -ENOENT); /* cut short */
	/* the running kernel's, when it has notes: 40 hex digits (SHA-1) */
	err = ksyms__running_build_id(hex, sizeof(hex));
	if (err == -ENOENT || err == -EACCES) {
		printf("SKIP running kernel build-id: /sys/kernel/notes: %s\n", strerror(-err));
	} else {
		CHECK_INT(err, 0);
		CHECK(!err && strlen(hex) >= 16 && strspn(hex, "0123456789abcdef") == strlen(hex));
	}
}
