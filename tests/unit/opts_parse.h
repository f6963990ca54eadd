/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests of the command line (test_options.c, test_offcpu.c):
 * parse a NULL-terminated argv as sfprof does, help and version text
 * thrown away, the error line (if any) kept in err_buf.
 */
#ifndef SFPROF_TEST_OPTS_PARSE_H
#define SFPROF_TEST_OPTS_PARSE_H

#include <stdio.h>

#include "cli/options.h"

static char err_buf[512];

static inline int parse(struct sfprof_opts *o, enum sfprof_subcmd cmd, char **argv)
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

#endif
