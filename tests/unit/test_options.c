// SPDX-License-Identifier: MIT
/* The command-line contract: struct sfprof_opts from argv. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/options.h"
#include "opts_parse.h"
#include "sfprof_event.h"
#include "testlib.h"

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
	/* -F and --cpu-event mean something for cpu only, --min-wait and
	 * --by-lock for futex only: two runs cover every option */
	char *av2[] = { "sfprof", "-e", "futex", "-d", "2.5", "--min-wait", "1000",
			"--stack-size", "65528", "-o", "x.pb.gz", "-f", "svg", "--stats",
			"--kernel", "--no-demangle", "--full-names", "--no-inline", "--by-lock",
			"--per-thread", "--quiet", "--title", "T", "--inverted", "--reverse", "-p", "7", NULL };
	char *av2b[] = { "sfprof", "-F", "999", "--cpu-event", "cpu-clock", "-p", "7", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av2), 0);
	CHECK_INT(o.event, SFPROF_SEL_FUTEX);
	CHECK_U64(o.duration_ns, 2500000000ull);
	CHECK_U64(o.min_wait_us, 1000);
	CHECK_INT(o.stack_size, 65528);
	CHECK_STR(o.output, "x.pb.gz");
	CHECK_INT(o.format, PROFILE_FMT_SVG);
	CHECK(o.stats && o.kernel && o.no_demangle && o.full_names && o.no_inline && o.by_lock &&
	      o.per_thread && o.quiet);
	CHECK_STR(o.title, "T");
	CHECK(o.inverted && o.reverse);
	CHECK_INT(o.nr_pids, 1);
	CHECK_INT(o.pids[0], 7);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av2b), 0);
	CHECK_INT(o.freq, 999);
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

/* The BPF ring: 16 MiB for a run that ends, 4 for one that stays up
 * (its double-mapped pages are RSS), --ring-mb over either. */
TEST(ring_should_be_16_mib_for_a_run_and_4_for_interval_unless_given)
{
	struct sfprof_opts o;
	char *run[] = { "sfprof", "-a", "-d", "5", NULL };
	char *iv[] = { "sfprof", "-a", "--interval", "10", "-o", "x-%t.pb.gz", NULL };
	char *iv8[] = { "sfprof", "-a", "--interval", "10", "-o", "x-%t.pb.gz", "--ring-mb", "8",
			NULL };
	char *run2[] = { "sfprof", "-a", "--ring-mb", "2", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, run), 0);
	CHECK_INT(sfprof_opts__ring_mb(&o), 16);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, iv), 0);
	CHECK_INT(sfprof_opts__ring_mb(&o), 4);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, iv8), 0);
	CHECK_INT(sfprof_opts__ring_mb(&o), 8);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, run2), 0);
	CHECK_INT(sfprof_opts__ring_mb(&o), 2);
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

/* one line "sfprof: ...", and it contains want */
static int one_line_with(const char *want)
{
	char *nl = strchr(err_buf, '\n');

	return !strncmp(err_buf, "sfprof: ", 8) && nl && nl[1] == 0 && strstr(err_buf, want);
}

TEST(report_should_reject_capture_only_options_in_one_line)
{
	static char *bad[][5] = {
		{ "report", "-p", "1", "cap", NULL },
		{ "report", "-F", "999", "cap", NULL },
		{ "report", "-d", "0.1", "cap", NULL },
		{ "report", "--kernel", "cap", NULL },
		{ "report", "--stack-size", "4096", "cap", NULL },
		{ "report", "--min-wait", "100000", "cap", NULL },
		{ "report", "-a", "cap", NULL },
		{ "report", "--cpu-event", "cycles", "cap", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sfprof_opts o;

		CHECK_MSG(parse(&o, SFPROF_CMD_REPORT, bad[i]) == -EINVAL, "report %s accepted",
			  bad[i][1]);
		CHECK_MSG(one_line_with("is not a report option"), "report %s: %.200s", bad[i][1],
			  err_buf);
	}
}

TEST(no_jvm_and_no_v8_should_each_turn_off_their_own_vm_only)
{
	struct sfprof_opts o;
	char *jvm[] = { "sfprof", "--no-jvm", "-p", "7", NULL };
	char *v8[] = { "sfprof", "--no-v8", "-p", "7", NULL };
	char *rec[] = { "record", "--no-jvm", "--no-v8", "-o", "cap", "-p", "7", NULL };
	char *rep[] = { "report", "--no-jvm", "cap", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, jvm), 0);
	CHECK(o.no_jvm && !o.no_v8);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, v8), 0);
	CHECK(o.no_v8 && !o.no_jvm);
	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, rec), 0);
	CHECK(o.no_jvm && o.no_v8);
	/* report: the capture holds the names record read (or did not) */
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, rep), -EINVAL);
	CHECK(one_line_with("is not a report option"));
}

TEST(record_should_reject_report_only_options_in_one_line)
{
	static char *bad[][9] = {
		{ "record", "-f", "svg", "-o", "c", "-p", "1", NULL },
		{ "record", "--by-lock", "-e", "futex", "-o", "c", "-p", "1", NULL },
		{ "record", "--per-thread", "-o", "c", "-p", "1", NULL },
		{ "record", "--no-demangle", "-o", "c", "-p", "1", NULL },
		{ "record", "--per-process", "-o", "c", "-p", "1", NULL },
		{ "record", "--title", "x", "-o", "c", "-p", "1", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sfprof_opts o;
		char **av = bad[i];

		CHECK_MSG(parse(&o, SFPROF_CMD_RECORD, av) == -EINVAL, "record %s accepted", av[1]);
		CHECK_MSG(one_line_with("is not a record option"), "record %s: %.200s", av[1], err_buf);
	}
}

TEST(record_should_refuse_a_profile_extension_and_suggest_sfcap)
{
	struct sfprof_opts o;
	char *a[] = { "record", "-o", "r3.svg", "-p", "1", NULL };
	char *b[] = { "record", "-o", "r3.pb.gz", "-p", "1", NULL };
	char *c[] = { "record", "-o", "r3.sfcap", "-p", "1", NULL };
	char *d[] = { "sfprof", "-o", "r3.sfcap", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, a), -EINVAL);
	CHECK_MSG(one_line_with("not a flame graph") && strstr(err_buf, ".sfcap"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, b), -EINVAL);
	CHECK_INT(parse(&o, SFPROF_CMD_RECORD, c), 0);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, d), -EINVAL);
	CHECK_MSG(one_line_with("sfprof record"), "%.200s", err_buf);
}

TEST(options_with_no_meaning_for_the_event_should_name_it)
{
	struct sfprof_opts o;
	char *a[] = { "sfprof", "--by-lock", "-e", "cpu", "-p", "1", NULL };
	char *b[] = { "sfprof", "--min-wait", "5", "-p", "1", NULL };
	char *c[] = { "sfprof", "-e", "futex", "-F", "5000", "-p", "1", NULL };
	char *d[] = { "sfprof", "-e", "futex", "--cpu-event", "cycles", "-p", "1", NULL };
	char *e[] = { "sfprof", "-e", "futex", "--kernel", "-p", "1", NULL };
	char *f[] = { "report", "--by-lock", "-e", "cpu", "cap", NULL };
	char *g[] = { "report", "--by-lock", "cap", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, a), -EINVAL);
	CHECK_MSG(one_line_with("--by-lock has no meaning for -e cpu"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, b), -EINVAL);
	CHECK_MSG(one_line_with("--min-wait has no meaning for -e cpu"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, c), -EINVAL);
	CHECK_MSG(one_line_with("-F has no meaning for -e futex"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, d), -EINVAL);
	CHECK_MSG(one_line_with("--cpu-event has no meaning for -e futex"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, e), 0); /* --kernel works with futex */
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, f), -EINVAL);
	/* report without -e: the capture decides, checked once it is open */
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, g), 0);
	o.event = SFPROF_SEL_CPU;
	{
		FILE *err = fmemopen(err_buf, sizeof(err_buf), "w");
		int ret = sfprof_opts__check_events(&o, err);

		fclose(err);
		CHECK_INT(ret, -EINVAL);
		CHECK_MSG(one_line_with("--by-lock has no meaning for -e cpu"), "%.200s", err_buf);
	}
}

TEST(svg_options_should_need_svg_output)
{
	struct sfprof_opts o;
	char *a[] = { "report", "--inverted", "-o", "x.folded", "cap", NULL };
	char *b[] = { "report", "--title", "T", "cap", NULL }; /* stdout: folded */
	char *c[] = { "report", "--reverse", "-f", "pprof", "-o", "x.svg", "cap", NULL };
	char *d[] = { "report", "--inverted", "--title", "T", "-o", "x.svg.gz", "cap", NULL };
	char *e[] = { "diff", "--reverse", "-f", "svg", "b", "n", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, a), -EINVAL);
	CHECK_MSG(one_line_with("--inverted has no meaning for folded output"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, b), -EINVAL);
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, c), -EINVAL);
	CHECK_MSG(one_line_with("for pprof output"), "%.200s", err_buf);
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, d), 0);
	CHECK_INT(parse(&o, SFPROF_CMD_DIFF, e), 0);
	CHECK_STR(o.diff_base, "b");
	CHECK_STR(o.input, "n");
}

TEST(report_should_take_options_after_the_file)
{
	struct sfprof_opts o;
	char *a[] = { "report", "run.sfcap", "--stats", "-o", "x.svg", NULL };
	char *b[] = { "report", "--", "-odd-name.sfcap", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, a), 0);
	CHECK_STR(o.input, "run.sfcap");
	CHECK(o.stats);
	CHECK_STR(o.output, "x.svg");
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, b), 0);
	CHECK_STR(o.input, "-odd-name.sfcap");
}

/* --help of cmd into a buffer */
static char help_buf[16384];

static void help_of(enum sfprof_subcmd cmd)
{
	FILE *f = fmemopen(help_buf, sizeof(help_buf), "w");

	sfprof_opts__usage(cmd, f);
	fclose(f);
}

TEST(each_help_should_list_only_its_own_options_with_defaults)
{
	help_of(SFPROF_CMD_REPORT);
	CHECK(strstr(help_buf, "--stats") && strstr(help_buf, "--by-lock"));
	CHECK_MSG(!strstr(help_buf, "--pid") && !strstr(help_buf, "--freq") &&
		  !strstr(help_buf, "--duration") && !strstr(help_buf, "--kernel") &&
		  !strstr(help_buf, "--stack-size") && !strstr(help_buf, "--min-wait"),
		  "report --help lists capture options:\n%.300s", help_buf);
	help_of(SFPROF_CMD_RECORD);
	CHECK(strstr(help_buf, "--pid") && strstr(help_buf, "--freq"));
	CHECK_MSG(!strstr(help_buf, "--format") && !strstr(help_buf, "--by-lock") &&
		  !strstr(help_buf, "--per-thread") && !strstr(help_buf, "--no-demangle") &&
		  !strstr(help_buf, "--per-process"), "record --help lists report options");
	CHECK_MSG(!strstr(help_buf, "stdout"), "record --help says -o defaults to stdout");
	CHECK(strstr(help_buf, "required"));
	help_of(SFPROF_CMD_LIVE);
	CHECK(strstr(help_buf, "Target") && strstr(help_buf, "What to measure") &&
	      strstr(help_buf, "Output:"));
	{
		char want[64];

		snprintf(want, sizeof(want), "(default: %u)", SFPROF_STACK_DEFAULT);
		CHECK_MSG(strstr(help_buf, want), "no %s in --help", want);
	}
	CHECK(strstr(help_buf, "(default: 99)") && strstr(help_buf, "(default: 10)") &&
	      strstr(help_buf, "(default: cpu)") && strstr(help_buf, "(default: stdout)"));
	help_of(SFPROF_CMD_SFRAME_DUMP);
	CHECK(strstr(help_buf, "--from-eh-frame") && strstr(help_buf, "--raw") &&
	      !strstr(help_buf, "--pid"));
}

TEST(sframe_dump_should_parse_its_own_options)
{
	struct sfprof_opts o;
	char *a[] = { "sframe-dump", "--raw", "f", "--base", "0x1000", NULL };
	char *b[] = { "sframe-dump", "--raw", "f", NULL };
	char *c[] = { "sframe-dump", "-p", "1", "f", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_SFRAME_DUMP, a), 0);
	CHECK(o.sframe_raw);
	CHECK_STR(o.sframe_base, "0x1000");
	CHECK_STR(o.input, "f");
	CHECK_INT(parse(&o, SFPROF_CMD_SFRAME_DUMP, b), -EINVAL);
	CHECK_INT(parse(&o, SFPROF_CMD_SFRAME_DUMP, c), -EINVAL);
}

TEST(version_should_print_and_exit_zero)
{
	struct sfprof_opts o;
	char *a[] = { "report", "--version", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, a), 0);
	CHECK(o.help && o.version);
}

TEST(repeated_e_should_accumulate_as_perfs_does)
{
	struct sfprof_opts o;
	char *av[] = { "sfprof", "-e", "cpu", "-e", "futex", "-o", "x.svg", "-p", "1", NULL };
	char *rep[] = { "report", "-e", "futex", "-e", "offcpu", "cap", NULL };
	char *wall[] = { "sfprof", "-e", "cpu", "-e", "wall", "-o", "x.svg", "-p", "1", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, av), 0);
	CHECK_INT((int)o.event, SFPROF_SEL_CPU | SFPROF_SEL_FUTEX);
	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, rep), 0);
	CHECK_INT((int)o.event, SFPROF_SEL_FUTEX | SFPROF_SEL_OFFCPU);
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, wall), -EINVAL); /* wall stays alone */
	CHECK(one_line_with("give it alone"));
}

TEST(out_of_range_values_should_say_the_limit)
{
	static const struct {
		char *av[6];
		const char *says;
	} cases[] = {
		{ { "sfprof", "--stack-size", "0", "-p", "1", NULL }, "from 512 to 65528" },
		{ { "sfprof", "--stack-size", "100", "-p", "1", NULL }, "from 512 to 65528" },
		{ { "sfprof", "-d", "1e8", "-p", "1", NULL }, "at most 10000000" },
		{ { "sfprof", "-F", "0", "-p", "1", NULL }, "from 1 to" },
		{ { "sfprof", "--min-wait", "-1", "-p", "1", NULL }, "from 0 to" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sfprof_opts o;

		CHECK_MSG(parse(&o, SFPROF_CMD_LIVE, (char **)cases[i].av) == -EINVAL,
			  "%s %s accepted", cases[i].av[1], cases[i].av[2]);
		CHECK_MSG(one_line_with(cases[i].says), "%s %s: %.200s", cases[i].av[1],
			  cases[i].av[2], err_buf);
	}
}

TEST(a_bare_first_word_should_need_double_dash_and_suggest_the_subcommand)
{
	struct sfprof_opts o;
	char *typo[] = { "sfprof", "recrod", "-o", "x.sfcap", "--", "ls", NULL };
	char *other[] = { "sfprof", "ls", "-l", NULL };
	char *dash[] = { "sfprof", "--", "ls", "-l", NULL };
	char *opts_dash[] = { "sfprof", "-F", "49", "-o", "x.svg", "--", "ls", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, typo), -EINVAL);
	CHECK(one_line_with("did you mean 'record'?"));
	CHECK(one_line_with("sfprof [OPTIONS] -- recrod"));
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, other), -EINVAL);
	CHECK(one_line_with("'ls' is not a subcommand (record, report"));
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, dash), 0);
	CHECK_STR(o.command[0], "ls");
	CHECK_INT(parse(&o, SFPROF_CMD_LIVE, opts_dash), 0);
	CHECK_STR(o.command[0], "ls");
	CHECK_INT(o.freq, 49);
}

TEST(report_and_diff_should_take_quiet)
{
	struct sfprof_opts o;
	char *rep[] = { "report", "--quiet", "cap", NULL };
	char *dif[] = { "diff", "--quiet", "a", "b", NULL };

	CHECK_INT(parse(&o, SFPROF_CMD_REPORT, rep), 0);
	CHECK_INT(o.quiet, 1);
	CHECK_INT(parse(&o, SFPROF_CMD_DIFF, dif), 0);
	CHECK_INT(o.quiet, 1);
}

TEST_MAIN()
