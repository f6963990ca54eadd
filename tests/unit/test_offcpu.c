// SPDX-License-Identifier: MIT
/* The user-space side of -e offcpu: its options, per-event output names,
 * its profile unit, and the waker table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "opts_parse.h"
#include "profile/profile.h"
#include "session/report.h"
#include "sfprof_event.h"
#include "testlib.h"
#include "stacks/wakers.h"

TEST(offcpu_options_should_default_to_10us_every_state_no_wakers)
{
	struct sfprof_opts o;
	char *av[] = { "sfprof", "-e", "offcpu", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av), 0);
	CHECK_INT(o.event, SFPROF_SEL_OFFCPU);
	CHECK_U64(o.min_block_us, 10);
	CHECK_INT(o.offcpu_states, SFPROF_OFFCPU_ALL);
	CHECK_INT(o.wakers, 0);
}

TEST(offcpu_options_should_land_in_their_fields)
{
	struct sfprof_opts o;
	char *av[] = { "sfprof", "-e", "offcpu", "--min-block", "1000", "--state", "D,R",
		       "--wakers", "-p", "1", NULL };
	char *s[] = { "sfprof", "-e", "offcpu", "--state", "S", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av), 0);
	CHECK_U64(o.min_block_us, 1000);
	CHECK_INT(o.offcpu_states, SFPROF_OFFCPU_D | SFPROF_OFFCPU_R);
	CHECK_INT(o.wakers, 1);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, s), 0);
	CHECK_INT(o.offcpu_states, SFPROF_OFFCPU_S);
}

TEST(bad_offcpu_options_should_be_rejected_with_one_line)
{
	char *bad[][8] = {
		{ "sfprof", "-e", "offcpu", "--state", "X", "-p", "1", NULL },
		{ "sfprof", "-e", "offcpu", "--state", "S,", "-p", "1", NULL },
		{ "sfprof", "-e", "offcpu", "--state", "SD", "-p", "1", NULL },
		{ "sfprof", "-e", "offcpu", "--min-block", "-1", "-p", "1", NULL },
		{ "sfprof", "-e", "cpu", "--wakers", "-p", "1", NULL },
		{ "sfprof", "-e", "futex", "--state", "D", "-p", "1", NULL },
		{ "sfprof", "--min-block", "100", "-p", "1", NULL },
		{ "sfprof", "-e", "cpu,", "-o", "x", "-p", "1", NULL },
		{ "sfprof", "-e", "cpu,bogus", "-o", "x", "-p", "1", NULL },
		{ "sfprof", "-e", "wall,cpu", "-o", "x", "-p", "1", NULL },
		/* several events need -o: one output each */
		{ "sfprof", "-e", "cpu,offcpu", "-p", "1", NULL },
	};
	struct sfprof_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(parse(&o, SFPROF_CMD_LIVE, bad[i]) == -EINVAL, "case %zu accepted", i);
		CHECK_MSG(strncmp(err_buf, "sfprof: ", 8) == 0 && strchr(err_buf, '\n') ==
			  strrchr(err_buf, '\n'), "case %zu: message %.200s", i, err_buf);
	}
}

TEST(event_lists_should_select_several_events)
{
	struct sfprof_opts o;
	char *av[] = { "sfprof", "-e", "cpu,futex,offcpu", "-o", "p.svg", "-p", "1", NULL };
	char *dup[] = { "sfprof", "-e", "offcpu,offcpu", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av), 0);
	CHECK_INT(o.event, SFPROF_SEL_CPU | SFPROF_SEL_FUTEX | SFPROF_SEL_OFFCPU);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, dup), 0);
	CHECK_INT(o.event, SFPROF_SEL_OFFCPU);
	CHECK_INT(report__event_sel("cpu,futex,offcpu"), 7);
	CHECK_INT(report__event_sel("offcpu"), SFPROF_SEL_OFFCPU);
	CHECK_INT(report__event_sel("cpu,nope"), 0);
	CHECK_INT(report__event_sel("wall"), SFPROF_SEL_WALL);
	CHECK_INT(report__profile_kind(SFPROF_SEL_WALL), PROFILE_WALL);
	CHECK_STR(report__event_name(SFPROF_SEL_WALL), "wall");
}

TEST(event_table_should_route_each_record_to_its_events_profile)
{
	struct sfprof_event e;
	uint32_t all = SFPROF_SEL_CPU | SFPROF_SEL_FUTEX | SFPROF_SEL_OFFCPU;

	memset(&e, 0, sizeof(e));
	e.kind = SFPROF_EV_CPU;
	CHECK_INT(report__event_index(&e, all), 0);
	CHECK_INT(report__event_index(&e, SFPROF_SEL_WALL), 3);
	e.kind = SFPROF_EV_FUTEX;
	CHECK_INT(report__event_index(&e, all), 1);
	e.kind = SFPROF_EV_OFFCPU;
	CHECK_INT(report__event_index(&e, all), 2);
	CHECK_INT(report__event_index(&e, SFPROF_SEL_WALL), 3);
	/* a waker goes with the block it ended */
	e.kind = SFPROF_EV_WAKER;
	e.waker.of_kind = SFPROF_EV_FUTEX;
	CHECK_INT(report__event_index(&e, all), 1);
	e.waker.of_kind = SFPROF_EV_OFFCPU;
	CHECK_INT(report__event_index(&e, all), 2);
	CHECK_INT(report__profile_kind(SFPROF_SEL_FUTEX), PROFILE_FUTEX);
	CHECK_INT(report__profile_kind(all), PROFILE_CPU); /* not one event: cpu's */
	CHECK_STR(report__event_name(SFPROF_SEL_OFFCPU), "offcpu");
	CHECK_STR(report__counted(PROFILE_CPU), "samples");
	CHECK_STR(report__counted(PROFILE_FUTEX), "waits");
	CHECK_STR(report__counted(PROFILE_OFFCPU), "blocks");
	CHECK_STR(report__counted(PROFILE_WALL), "events");
	CHECK(report__event_per_thread(SFPROF_SEL_WALL));
	CHECK(!report__event_per_thread(SFPROF_SEL_CPU));
	CHECK(!report__event_per_thread(SFPROF_SEL_OFFCPU));
}

TEST(event_outputs_should_be_named_after_o_before_the_extension)
{
	static const char *const cases[][3] = {
		{ "prof.svg", "cpu", "prof.cpu.svg" },
		{ "out/prof.pb.gz", "futex", "out/prof.futex.pb.gz" },
		{ "prof.folded", "offcpu", "prof.offcpu.folded" },
		{ "prof", "cpu", "prof.cpu" },
		{ "dir.svg/prof", "cpu", "dir.svg/prof.cpu" },
		{ "/tmp/.svg", "cpu", "/tmp/.svg.cpu" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(report__event_path(buf, sizeof(buf), cases[i][0], cases[i][1]) > 0);
		CHECK_STR(buf, cases[i][2]);
	}
	CHECK_INT(report__event_path(buf, 8, "prof.svg", "offcpu"), -ENAMETOOLONG);
}

TEST(offcpu_profile_should_fold_in_microseconds)
{
	struct profile_meta m = { .kind = PROFILE_OFFCPU };
	struct profile *p = profile__new(&m);
	struct profile_frame f = { .name = "read", .kind = PROFILE_FRAME_USER };
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(p != NULL);
	CHECK_STR(profile__meta(p)->unit, "nanoseconds");
	CHECK_INT(profile__add(p, "t", &f, 1, 2500400), 0);
	out = open_memstream(&buf, &len);
	CHECK_INT(profile__write_folded(p, out), 0);
	fclose(out);
	CHECK_STR(buf, "t;read 2500\n");
	free(buf);
	profile__free(p);
}

TEST(wakers_should_hand_each_stack_to_its_block_once)
{
	struct wakers *w = wakers__new();
	uint32_t a[] = { 1, 2, 3 }, b[] = { 9 }, out[8];

	CHECK(w != NULL);
	CHECK_INT(wakers__put(w, 100, 5000, a, 3), 0);
	CHECK_INT(wakers__put(w, 101, 5000, b, 1), 0);
	CHECK_U64(wakers__take(w, 100, 4999, out, 8), 0); /* another block */
	CHECK_U64(wakers__take(w, 100, 5000, out, 8), 3);
	CHECK(out[0] == 1 && out[2] == 3);
	CHECK_U64(wakers__take(w, 100, 5000, out, 8), 0); /* taken */
	CHECK_U64(wakers__take(w, 101, 5000, out, 8), 1);
	CHECK_U64(wakers__take(w, 0, 0, out, 8), 0);
	wakers__free(w);
	wakers__free(NULL);
}

TEST_MAIN()
