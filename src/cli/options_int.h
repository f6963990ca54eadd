/* SPDX-License-Identifier: MIT */
/*
 * The option table behind src/cli/options.h, shared by the parser
 * (src/cli/options.c) and the table with its --help text (src/cli/options_table.c).
 */
#ifndef SFPROF_OPTIONS_INT_H
#define SFPROF_OPTIONS_INT_H

#include <stddef.h>
#include <stdio.h>

#include "cli/options.h"

/* Subcommand masks for sfprof_optdef.cmds */
#define OPT_LIVE (1u << SFPROF_CMD_LIVE)
#define OPT_RECORD (1u << SFPROF_CMD_RECORD)
#define OPT_REPORT (1u << SFPROF_CMD_REPORT)
#define OPT_SFRAME (1u << SFPROF_CMD_SFRAME_DUMP)
#define OPT_DIFF (1u << SFPROF_CMD_DIFF)
#define OPT_CAPTURING (OPT_LIVE | OPT_RECORD)	       /* they run BPF */
#define OPT_PROFILING (OPT_LIVE | OPT_REPORT | OPT_DIFF) /* they write profiles */
#define OPT_ALL_CMDS ((1u << SFPROF_CMD__COUNT) - 1)

/* --help groups, printed in this order */
enum sfprof_optgroup {
	OPTG_TARGET = 0,
	OPTG_MEASURE,
	OPTG_OUTPUT,
	OPTG_OTHER,
	OPTG__COUNT,
	OPTG_HIDDEN = OPTG__COUNT, /* for tests: parsed, never listed */
};

/* A value's setter: 0, or -EINVAL after one line "sfprof: ..." on err. */
typedef int (*sfprof_optset_fn)(struct sfprof_opts *o, const char *arg, FILE *err);

struct sfprof_optdef {
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: none */
	const char *arg;	/* NULL: a flag; else the value's name in --help */
	unsigned cmds;		/* OPT_LIVE | ...: the subcommands that take it */
	unsigned events;	/* SFPROF_SEL_* it has a meaning for; 0: any */
	enum sfprof_optgroup group;
	const char *help;	/* '\n' starts a continuation line */
	const char *def;	/* "(default: ...)" text; NULL: def_u, else none shown */
	sfprof_optset_fn set;	/* a value; or a flag with side effects */
	size_t flag_off;	/* a flag without set: offsetof its int field */
	unsigned formats;	/* 1 << PROFILE_FMT_*: outputs it means something for; 0: any */
	unsigned def_u;		/* def NULL: a numeric default, from its macro (0: none) */
};

#define OPT_FMT_SVG (1u << PROFILE_FMT_SVG)

/* One name may have several entries with disjoint cmds (different help
 * text per subcommand). At most 128 entries (sfprof_opts.given). */
extern const struct sfprof_optdef sfprof_optdefs[];
extern const size_t sfprof_nr_optdefs;

#endif
