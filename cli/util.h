/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util.h: what every subcommand of the sketch command shares: one-line
 * errors with the documented exit codes, one option-parsing skeleton,
 * strict number parsing, sketch files loaded and saved through the library,
 * and a progress bar.
 */
#ifndef SKETCH_CLI_UTIL_H
#define SKETCH_CLI_UTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sketch.h"

/* Exit codes shared by every subcommand. */
enum { EXIT_OK = 0, EXIT_NO_MATCH = 1, EXIT_FAILURE_USAGE = 2 };

/* Prints "sketch: <message>" on stderr and exits with status 2. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "sketch: <message>" on stderr and goes on. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "sketch CMD: <message> (see 'sketch CMD --help')" and exits 2. */
_Noreturn void die_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A subcommand's options: getopt_long's optstring (starting with ':', and
 * '+' first to stop at the first operand) and long options, the name its
 * errors use ("bloom add") and the usage -h and --help print. */
struct option;
/* --no-wait, taken by the subcommands that write files (the option code
 * 'W' in their tables): a file another command is writing is an error
 * instead of a wait (file_lock.h). */
extern int option_no_wait;
/* --raw, taken by the subcommands that read lines (the code 'R'): gzip,
 * zstd and xz input is read as its bytes, not decompressed (lines.h). */
extern int option_raw;
/* --max-line-length BYTES, taken by the subcommands that read lines (the
 * code 'L'): a longer line is an error (lines.h), so that one endless line
 * (/dev/zero, a decompression bomb) cannot take all memory. The default is
 * in every such subcommand's --help, as "default 256M". */
#define DEFAULT_MAX_LINE (256ull << 20)
#define MAX_LINE_LIMIT (1ull << 40)
extern uint64_t option_max_line;
/* The code of --version in every subcommand's table of long options. */
#define OPTION_VERSION 0x100
struct cli_spec {
    const char *cmd;
    const char *usage;
    const char *optstring;
    const struct option *longopts;
};

/* Calls handle(ctx, option, its value, the long name the user wrote or
 * NULL) for each option of argv, in order, and returns the index of the
 * first operand. The subcommand's table of long options leaves out
 * --no-wait, --raw, --max-line-length, --help and --version, which are
 * added here (each taken where its letter, W, R, L or h, is in optstring). Every subcommand treats alike what is handled here: -h
 * and --help print the usage and exit 0; an option the subcommand does not
 * take, or one missing its value, exits 2 naming it as the user wrote it
 * ("-x" even inside a bundle such as -vx, "--name" for a long one). */
int parse_options(const struct cli_spec *spec, int argc, char **argv,
                  void (*handle)(void *ctx, int option, const char *value,
                                 const char *long_name),
                  void *ctx);

/* Parses a whole decimal number in [min, max] or dies naming the option. */
unsigned long long parse_uint(const char *text, const char *what,
                              unsigned long long min, unsigned long long max);

/* Parses a number of bytes in [min, max], "1000" or with K, M or G for
 * KiB, MiB, GiB ("256M"), or dies naming the option. */
unsigned long long parse_bytes(const char *text, const char *what,
                               unsigned long long min, unsigned long long max);

/* Parses -p: an integer from 4 to 18. */
unsigned parse_precision(const char *text);

/* Dies with a usage error unless argv[first..argc) names a FILE, and with
 * `one`, no more than one. */
void require_files(const char *cmd, int first, int argc, int one);

/* Dies naming the first of the paths that cannot be read. */
void require_readable(char **paths, int count);

/* Dies if path exists and is not a regular file: a file that is mapped, or
 * read and written back, cannot be a FIFO (opening one would wait for a
 * writer), a device or a directory. */
void require_regular_file(const char *path);

/* What a file that shrank or was rewritten while it was read says. */
#define CHANGED_WHILE_READ "changed while being read (truncated or rewritten in place)"

/* A progress bar on stderr, drawn only when stderr is a terminal. */
struct progress {
    _Atomic uint64_t done;
    uint64_t total; /* 0 when unknown */
    int enabled;
};
void progress_init(struct progress *p, uint64_t total, uint64_t min_total);
void progress_draw(struct progress *p);
void progress_finish(struct progress *p);

/* A hint for a file that is not a valid sketch or filter, to follow the
 * reason in a message: compressed, or a Redis string with the newline
 * redis-cli --raw adds; "" when there is none. */
const char *file_hint(const char *path);

/* The bytes of a sketch or group file that is not a regular file (a pipe,
 * /dev/stdin, <(...), a device), read whole on the first call and kept,
 * since a stream cannot be read again from its start; NULL for a regular
 * file, a directory or a path that does not exist, which are opened by
 * name. Dies if the stream cannot be read or holds more than any sketch
 * (SK_HLL_MAX_SERIALIZED_SIZE) or, for a group file or a window sketch,
 * 1 GiB. */
const uint8_t *stream_contents(const char *path, size_t *len);

/* 1 if the file (or stream: stream_contents) starts with the 4 bytes of
 * magic, the format's mark; 0 if not, or if it cannot be read. */
int file_starts_with(const char *path, const char *magic);

/* Loads a sketch file in either format, or dies with a one-line message. */
sk_hll *load_hll_or_die(const char *path, sk_hll_format *format);

/* Writes h atomically to path (sk_hll_save), or to standard output for
 * "-", or dies. */
void save_hll_or_die(const sk_hll *h, sk_hll_format format, const char *path);

/* Writes all of data to standard output, or dies; returns 0. */
int write_stdout_or_die(const void *data, size_t len);

/* A command of a group such as `sketch hll`: its name and entry point. */
struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
};

/* Runs the subcommand named by argv[1] with the arguments after the group's
 * name; with no argument, or --help, prints the group's usage. */
int run_subcommand(const char *group, const char *usage, const struct subcommand *table,
                   size_t count, int argc, char **argv);


#endif
