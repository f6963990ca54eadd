/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the sfprof binary. src/cli/main.c dispatches
 *   sfprof [options] ...        -> cmd_live     (src/cli/main.c)
 *   sfprof record ...           -> cmd_record   (src/cli/main.c)
 *   sfprof report ...           -> cmd_report   (src/cli/cmd_report.c)
 *   sfprof sframe-dump ...      -> cmd_sframe_dump (src/cli/cmd_sframe_dump.c)
 *   sfprof diff BASE NEW        -> cmd_diff     (src/cli/cmd_diff.c)
 * Each takes argv with argv[0] the subcommand name and returns the
 * process exit status (0 ok, 2 bad usage, 1 other failures).
 */
#ifndef SFPROF_CMD_H
#define SFPROF_CMD_H

int cmd_live(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sframe_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
