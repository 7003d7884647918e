/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_window.h: what `sketch hll` does with window sketch files, the
 * sliding-window HyperLogLogs (sketch/window_hll.h) that `hll add --time`
 * or `--at` keeps adding to, for cron jobs (hll_window.c).
 *
 * Their times are epoch seconds, one second a slot. A window of W seconds
 * at T holds the items whose times t have T - W <= t < T, as a row of
 * `sketch count --window` at step T does; by default T is the end of the
 * newest second in the file, so the window holds the newest items. A
 * window sketch answers for windows that end after its newest time only
 * (the library's rule: an older window has lost items that newer ones
 * outranked), and keeps items up to its horizon before the newest time:
 * an older one is dropped when it is added, and reported.
 */
#ifndef SKETCH_CLI_HLL_WINDOW_H
#define SKETCH_CLI_HLL_WINDOW_H

#include <stdint.h>

#include "fields.h"

/* The horizon of a new window sketch without --horizon: a day. */
#define DEFAULT_HORIZON_SECONDS 86400

/* What the options of hll add, count, merge and info set for window files. */
struct window_file_options {
    unsigned precision;      /* 0: not given */
    int64_t horizon;         /* seconds; 0: not given */
    const char *horizon_text;
    unsigned time_field;     /* --time N; 0: not given */
    struct field_spec fields; /* -f, -d, -w: the item of a line with --time */
    int at_given;            /* --at TIME: every item's time (add), the window's end (count) */
    int64_t at;
    const char *at_text;
    int64_t window;          /* count --window, seconds; 0: the horizon */
    const char *window_text;
    int json, verbose;
};

/* Whether the file at path starts as a window sketch does. */
int is_window_file(const char *path);

/* hll add to a window sketch at path, created if missing: the items of
 * args[0..nargs) (with --at), or the lines of the input files args (with
 * --time; none: standard input). Returns the exit status, or dies. */
int window_file_add(const char *path, const struct window_file_options *o, char **args,
                    int nargs);

/* hll count of the union of window sketches: the count of one window. */
int window_file_count(char **paths, int count, const struct window_file_options *o);

/* hll merge of window sketches into out ("-": standard output). */
int window_file_merge(const char *out, char **paths, int count);

/* hll info of a window sketch. */
int window_file_info(const char *path, int json);

#endif
