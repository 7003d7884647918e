/* SPDX-License-Identifier: BSD-3-Clause */
/* commands.h: the subcommands of the sketch command, each taking the
 * arguments after its name (argv[0] is the subcommand) and returning an exit
 * status, or exiting with 2 through die(). */
#ifndef SKETCH_CLI_COMMANDS_H
#define SKETCH_CLI_COMMANDS_H

int cmd_count(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_hll(int argc, char **argv);
int cmd_bloom(int argc, char **argv);

#endif
