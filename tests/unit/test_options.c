// SPDX-License-Identifier: MIT
/* The command-line contract: struct sfprof_opts from argv. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "sfprof_event.h"
#include "testlib.h"

/* Parse a NULL-terminated argv; the error line (if any) lands in err_buf. */
static char err_buf[512];

static int parse(struct sfprof_opts *o, enum sfprof_subcmd cmd, char **argv)
{
	int argc = 0, ret;
	FILE *err = fmemopen(err_buf, sizeof(err_buf), "w");
	FILE *out = fopen("/dev/null", "w");

	while (argv[argc])
		argc++;
	sfprof_opts__init(o, cmd);
	ret = sfprof_opts__parse(o, argc, argv, out, err);
	fclose(err);
	fclose(out);
	return ret;
}

TEST(defaults_should_be_cpu_at_99hz_with_16k_stacks)
{
	struct sfprof_opts o;
	char *av1[] = { "sfprof", "-p", "42", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av1), 0);
	CHECK_INT(o.nr_pids, 1);
	CHECK_INT(o.pids[0], 42);
	CHECK(!o.all && !o.cgroup && !o.no_inherit && !o.per_process);
	CHECK_INT(o.event, SFPROF_SEL_CPU);
	CHECK_INT(o.freq, 99);
	CHECK_U64(o.duration_ns, 0);
	CHECK_INT(o.stack_size, SFPROF_STACK_DEFAULT);
	CHECK_U64(o.min_wait_us, SFPROF_DEFAULT_MIN_WAIT_US);
	CHECK(o.output == NULL);
	CHECK_INT(o.format, PROFILE_FMT_AUTO);
	CHECK(o.command == NULL);
}

TEST(every_option_should_land_in_its_field)
{
	struct sfprof_opts o;
	char *av2[] = { "sfprof", "-e", "futex", "-F", "999", "-d", "2.5", "--min-wait", "1000",
			"--stack-size", "65528", "-o", "x.svg", "-f", "pprof", "--stats",
			"--kernel", "--no-demangle", "--by-lock", "--per-thread", "--quiet",
			"--cpu-event", "cpu-clock", "-p", "7", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av2), 0);
	CHECK_INT(o.event, SFPROF_SEL_FUTEX);
	CHECK_INT(o.freq, 999);
	CHECK_U64(o.duration_ns, 2500000000ull);
	CHECK_U64(o.min_wait_us, 1000);
	CHECK_INT(o.stack_size, 65528);
	CHECK_STR(o.output, "x.svg");
	CHECK_INT(o.format, PROFILE_FMT_PPROF);
	CHECK(o.stats && o.kernel && o.no_demangle && o.by_lock && o.per_thread && o.quiet);
	CHECK_INT(o.nr_pids, 1);
	CHECK_INT(o.pids[0], 7);
	CHECK_INT(o.cpu_event, SFPROF_CPU_EVENT_CPU_CLOCK);
}

TEST(cpu_event_should_default_to_auto_and_take_cycles)
{
	struct sfprof_opts o;
	char *a[] = { "sfprof", "-p", "7", NULL };
	char *b[] = { "sfprof", "--cpu-event", "cycles", "-p", "7", NULL };
	char *c[] = { "sfprof", "--cpu-event", "cpu", "-p", "7", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, a), 0);
	CHECK_INT(o.cpu_event, SFPROF_CPU_EVENT_AUTO);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, b), 0);
	CHECK_INT(o.cpu_event, SFPROF_CPU_EVENT_CYCLES);
	CHECK(parse(&o, SFPROF_CMD_LIVE, c) != 0);
}

TEST(command_after_double_dash_should_keep_its_own_options)
{
	struct sfprof_opts o;
	char *av3[] = { "sfprof", "-F", "49", "--", "ls", "-l", "-p", "3", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av3), 0);
	CHECK_INT(o.command_argc, 4);
	CHECK_STR(o.command[0], "ls");
	CHECK_STR(o.command[1], "-l");
	CHECK_STR(o.command[3], "3");
	CHECK(o.command[4] == NULL);
	CHECK_INT(o.nr_pids, 0);
	CHECK_INT(o.freq, 49);
}

TEST(bad_values_should_be_rejected_with_one_line)
{
	static char *bad[][6] = {
		{ "sfprof", "-p", "0", NULL },
		{ "sfprof", "-p", "abc", NULL },
		{ "sfprof", "-p", "12x", NULL },
		{ "sfprof", "-p", "-3", NULL },
		{ "sfprof", "-F", "0", "-p", "1", NULL },
		{ "sfprof", "-F", "100001", "-p", "1", NULL },
		{ "sfprof", "-d", "0", "-p", "1", NULL },
		{ "sfprof", "-d", "-1", "-p", "1", NULL },
		{ "sfprof", "-e", "cycles", "-p", "1", NULL },
		{ "sfprof", "--stack-size", "65529", "-p", "1", NULL },
		{ "sfprof", "-f", "json", "-p", "1", NULL },
		{ "sfprof", "--bogus", "-p", "1", NULL },
		{ "sfprof", "-p", NULL },
		{ "sfprof", NULL },
		{ "sfprof", "-p", "1", "--", "ls", NULL },
		{ "sfprof", "-p", "1,", NULL },
		{ "sfprof", "-p", ",1", NULL },
		{ "sfprof", "-p", "1,,2", NULL },
		{ "sfprof", "-p", "1,x", NULL },
		{ "sfprof", "-a", "-p", "1", NULL },
		{ "sfprof", "-a", "--", "ls", NULL },
		{ "sfprof", "--cgroup", "/x", "-p", "1", NULL },
		{ "sfprof", "--cgroup", "/x", "--", "ls", NULL },
		{ "sfprof", "--cgroup", "", NULL },
		{ "sfprof", "--per-thread", "--per-process", "-a", NULL },
		{ "sfprof", "--no-inherit", "-a", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sfprof_opts o;
		char *nl;

		CHECK_MSG(parse(&o, SFPROF_CMD_LIVE, bad[i]) == -EINVAL, "case %zu (%s %s) accepted",
			  i, bad[i][1] ? bad[i][1] : "", bad[i][1] && bad[i][2] ? bad[i][2] : "");
		CHECK_MSG(!strncmp(err_buf, "sfprof: ", 8), "case %zu: message %.80s", i, err_buf);
		nl = strchr(err_buf, '\n');
		CHECK_MSG(nl && nl[1] == 0, "case %zu: not exactly one line: %.80s", i, err_buf);
	}
}

TEST(help_should_set_help_and_succeed)
{
	struct sfprof_opts o;
	char *av4[] = { "sfprof", "--help", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av4), 0);
	CHECK(o.help);
}

TEST(record_should_need_an_output_file)
{
	struct sfprof_opts o;
	char *av5[] = { "sfprof", "-p", "5", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, av5), -EINVAL);
	char *av6[] = { "sfprof", "-o", "cap", "-p", "5", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, av6), 0);
	CHECK_STR(o.output, "cap");
}

TEST(interval_should_take_seconds_and_need_an_output_template)
{
	struct sfprof_opts o;
	char *ok[] = { "sfprof", "--interval", "60", "-o", "cpu-%p-%t.pb.gz", "-p", "5", NULL };
	char *frac[] = { "sfprof", "--interval", "0.5", "-o", "x%%.folded", "-p", "5", NULL };
	static char *bad[][8] = {
		{ "sfprof", "--interval", "60", "-p", "5", NULL },		    /* stdout */
		{ "sfprof", "--interval", "60", "-o", "-", "-p", "5", NULL },
		{ "sfprof", "--interval", "0.4", "-o", "x", "-p", "5", NULL },	    /* too short */
		{ "sfprof", "--interval", "abc", "-o", "x", "-p", "5", NULL },
		{ "sfprof", "--interval", "60", "-o", "x-%d", "-p", "5", NULL },   /* unknown %d */
	};

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, ok), 0);
	CHECK_U64(o.interval_ns, 60000000000ull);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, frac), 0);
	CHECK_U64(o.interval_ns, 500000000ull);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(parse(&o, SFPROF_CMD_LIVE, bad[i]) == -EINVAL, "case %zu accepted", i);
		CHECK_MSG(!strncmp(err_buf, "sfprof: ", 8), "case %zu: %.80s", i, err_buf);
	}
	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, ok), -EINVAL); /* live runs only */
	CHECK(strstr(err_buf, "live"));
}

TEST(report_should_take_one_file)
{
	struct sfprof_opts o;
	char *av7[] = { "sfprof", "-e", "futex", "cap.sfp", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, av7), 0);
	CHECK_STR(o.input, "cap.sfp");
	CHECK_INT(o.event, SFPROF_SEL_FUTEX);
	char *av8[] = { "sfprof", "-e", "futex", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, av8), -EINVAL);
}

TEST(parsing_twice_should_start_afresh)
{
	struct sfprof_opts o;
	char *av9[] = { "sfprof", "-F", "10", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av9), 0);
	char *av10[] = { "sfprof", "-p", "2", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av10), 0);
	CHECK_INT(o.freq, 99);
	CHECK_INT(o.nr_pids, 1);
	CHECK_INT(o.pids[0], 2);
}

TEST(pid_lists_should_take_commas_and_repeats_in_order_once_each)
{
	struct sfprof_opts o;
	char *a[] = { "sfprof", "-p", "5,3", "-p", "9", "--pid", "3,11", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, a), 0);
	CHECK_INT(o.nr_pids, 4);
	CHECK_INT(o.pids[0], 5);
	CHECK_INT(o.pids[1], 3);
	CHECK_INT(o.pids[2], 9);
	CHECK_INT(o.pids[3], 11);
}

TEST(pid_lists_should_stop_at_the_limit_with_a_hint)
{
	struct sfprof_opts o;
	char list[SFPROF_MAX_PIDS * 8];
	char *a[] = { "sfprof", "-p", list, NULL };
	size_t n = 0;

	for (int i = 1; i <= SFPROF_MAX_PIDS + 1; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%d", i > 1 ? "," : "", i);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, a), -EINVAL);
	CHECK(strstr(err_buf, "--cgroup") != NULL);
}

TEST(scopes_should_parse_alone_and_cgroup_with_all)
{
	struct sfprof_opts o;
	char *a[] = { "sfprof", "-a", NULL };
	char *b[] = { "sfprof", "--cgroup", "/sys/fs/cgroup/x", NULL };
	char *c[] = { "sfprof", "-a", "--cgroup", "/sys/fs/cgroup/x", "--per-process", NULL };
	char *d[] = { "sfprof", "--no-inherit", "-p", "4", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, a), 0);
	CHECK(o.all && !o.cgroup && o.nr_pids == 0 && !o.command);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, b), 0);
	CHECK(!o.all);
	CHECK_STR(o.cgroup, "/sys/fs/cgroup/x");
	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, c), -EINVAL); /* record needs -o */
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, c), 0);
	CHECK(o.all && o.cgroup && o.per_process);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, d), 0);
	CHECK(o.no_inherit);
	CHECK_INT(o.pids[0], 4);
}

TEST_MAIN()
