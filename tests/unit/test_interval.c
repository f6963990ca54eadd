// SPDX-License-Identifier: MIT
/* Continuous mode: output names from the -o template. */
#include <errno.h>
#include <string.h>

#include "output/interval.h"
#include "testlib.h"

TEST_MAIN();

/* 2026-12-01 08:00:00 UTC, plus 0.75 s */
#define T0 (1796112000ull * 1000000000ull + 750000000ull)

TEST(template_should_put_the_utc_start_for_t_and_the_pid_for_p)
{
	char buf[128];

	CHECK_INT(interval__expand_path(buf, sizeof(buf), "/var/prof/app-%p-%t.pb.gz", T0, 4242), 0);
	CHECK_STR(buf, "/var/prof/app-4242-20261201T080000Z.pb.gz");
}

TEST(template_without_escapes_should_stay_as_it_is)
{
	char buf[64];

	CHECK_INT(interval__expand_path(buf, sizeof(buf), "out.folded", T0, 1), 0);
	CHECK_STR(buf, "out.folded");
	CHECK_INT(interval__expand_path(buf, sizeof(buf), "100%%-%t", T0, 1), 0);
	CHECK_STR(buf, "100%-20261201T080000Z");
}

TEST(template_should_refuse_unknown_escapes_and_names_that_do_not_fit)
{
	char buf[16];

	CHECK_INT(interval__expand_path(buf, sizeof(buf), "a-%d", T0, 1), -EINVAL);
	CHECK_INT(interval__expand_path(buf, sizeof(buf), "a-%", T0, 1), -EINVAL);
	CHECK_INT(interval__expand_path(buf, sizeof(buf), "prof-%t", T0, 1), -ENAMETOOLONG);
	CHECK_INT(interval__check_template("x-%t-%p.pb.gz"), 0);
	CHECK_INT(interval__check_template("x-%q"), -EINVAL);
}

TEST(intervals_in_one_second_should_get_numbers_before_the_extension)
{
	char a[64] = "cpu-20261201T080000Z.pb.gz", b[64] = "cpu-%t", c[16] = "0123456789.svg";

	CHECK_INT(interval__number_path(a, sizeof(a), 2), 0);
	CHECK_STR(a, "cpu-20261201T080000Z-2.pb.gz");
	CHECK_INT(interval__number_path(b, sizeof(b), 13), 0);
	CHECK_STR(b, "cpu-%t-13");
	CHECK_INT(interval__number_path(c, sizeof(c), 2), -ENAMETOOLONG);
}
