/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c: the sketch command: probabilistic data structures from the shell.
 * Each subcommand lives in a cmd_*.c file of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "util.h"

static const char usage[] =
    "Usage: sketch COMMAND [ARGS]...\n"
    "Fast probabilistic data structures: count distinct items and test set\n"
    "membership in little memory.\n"
    "\n"
    "Commands:\n"
    "  count [FILE]...   estimated number of distinct lines (or fields) of the FILEs\n"
    "  top [FILE]...     the most frequent lines (or fields) of the FILEs, with counts\n"
    "  hll COMMAND       HyperLogLog sketch files: add, count, merge, info, export, fold\n"
    "  bloom COMMAND     Bloom filter files: create, add, check, info, merge\n"
    "\n"
    "Run 'sketch COMMAND --help' for more. Exit status: 0 on success, 2 on bad\n"
    "usage or bad input.\n";

/* Output that could not be written is an error, whichever command wrote it:
 * checked once, at exit, after every path that prints (gnulib's close_stdout). */
static void close_stdout(void)
{
    if (fclose(stdout) != 0) {
        fprintf(stderr, "sketch: standard output: %s\n", strerror(errno));
        _exit(EXIT_FAILURE_USAGE);
    }
}

int main(int argc, char **argv)
{
    atexit(close_stdout);
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_FAILURE_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("sketch %s\n", sk_version());
        return EXIT_OK;
    }
    if (strcmp(command, "count") == 0)
        return cmd_count(argc - 1, argv + 1);
    if (strcmp(command, "top") == 0)
        return cmd_top(argc - 1, argv + 1);
    if (strcmp(command, "hll") == 0)
        return cmd_hll(argc - 1, argv + 1);
    if (strcmp(command, "bloom") == 0)
        return cmd_bloom(argc - 1, argv + 1);
    die("unknown command '%s' (see 'sketch --help')", command);
}
