/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_window.c: `sketch hll` on window sketch files (see hll_window.h):
 * read and written whole by the library (sk_window_hll_open and _save,
 * which replaces the file atomically), under the file lock every writer
 * of the command takes (file_lock.h).
 *
 * Lines with times are split as `sketch count --time` splits them
 * (group_keys.h), asked for windows of one second, whose start is the
 * line's time.
 */
#define _GNU_SOURCE
#include "hll_window.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_lock.h"
#include "group_keys.h"
#include "line_batch.h"
#include "lines.h"
#include "report.h"
#include "timestamps.h"
#include "util.h"

#define WINDOW_MAGIC "SKWH"

int is_window_file(const char *path)
{
    return file_starts_with(path, WINDOW_MAGIC);
}

static sk_window_hll *load_window_or_die(const char *path)
{
    sk_window_hll *w;
    size_t len;
    const uint8_t *stream = stream_contents(path, &len);
    int rc = stream != NULL ? sk_window_hll_deserialize(&w, stream, len, NULL)
                            : sk_window_hll_open(&w, path, NULL);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc == SK_ENOMEM)
        die("%s: out of memory", path);
    if (rc != SK_OK)
        die("%s: not a valid window sketch: %s%s", path, sk_strerror(rc), file_hint(path));
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    if (info.resolution != 1)
        die("%s: a window sketch of %" PRIu64 " time units a slot; sketch hll reads those of "
            "one second a slot (of sketch hll add --time)", path, info.resolution);
    return w;
}

static void save_window_or_die(const sk_window_hll *w, const char *path)
{
    if (strcmp(path, "-") == 0) {
        uint64_t size;
        uint8_t *buf = NULL;
        size_t len;
        int rc = sk_window_hll_serialized_size(w, &size);
        if (rc == SK_OK && (buf = malloc(size ? size : 1)) == NULL)
            rc = SK_ENOMEM;
        if (rc == SK_OK)
            rc = sk_window_hll_serialize(w, buf, size, &len);
        if (rc != SK_OK)
            die("standard output: %s", sk_strerror(rc));
        write_stdout_or_die(buf, len);
        free(buf);
        return;
    }
    int rc = sk_window_hll_save(w, path);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
}

/* ---- add ----------------------------------------------------------------- */

struct window_add {
    sk_window_hll *w;
    uint64_t horizon;
    int64_t newest; /* -1: nothing added yet */
    int64_t at;     /* --at: the time of every item */
    struct group_split split;
    struct key_buffer keys;
    uint64_t late, before_epoch;
    int error;
};

/* Adds an item at time t, unless it is older than the horizon before the
 * newest time (which the library would drop) or before the epoch (which
 * its unsigned times cannot hold): those are counted, to be reported. */
static int add_at(struct window_add *a, const char *item, size_t len, int64_t t)
{
    if (t < 0) {
        a->before_epoch++;
        return 0;
    }
    if (a->newest >= 0 && (uint64_t)t + a->horizon <= (uint64_t)a->newest) {
        a->late++;
        return 0;
    }
    int rc = sk_window_hll_add(a->w, item, len, (uint64_t)t);
    if (rc < 0) {
        a->error = rc;
        return rc;
    }
    if (t > a->newest)
        a->newest = t;
    return 0;
}

static inline int timed_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct window_add *a = ctx;
    size_t key_len, item_len;
    const char *item;
    int rc = group_split_line(&a->split, line, len, &a->keys, &key_len, &item, &item_len);
    if (rc != 0) {
        if (rc < 0)
            a->error = rc;
        return rc < 0 ? rc : 0;
    }
    return add_at(a, item, item_len, key_window(a->keys.data));
}

static int timed_lines(void *ctx, const char *data, size_t len)
{
    return line_each(data, len, timed_take, ctx) != 0;
}

static inline int at_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct window_add *a = ctx;
    return add_at(a, line, len, a->at);
}

static int at_lines(void *ctx, const char *data, size_t len)
{
    return line_each(data, len, at_take, ctx) != 0;
}

static void *shared_add(void *shared, int thread)
{
    (void)thread;
    return shared;
}

/* The window sketch at path, or a new one with the options' parameters;
 * the parameters given must match an existing one's. */
static sk_window_hll *open_for_add(const char *path, int exists,
                                   const struct window_file_options *o)
{
    sk_window_hll *w;
    if (!exists) {
        sk_window_hll_options opts = {
            .precision = o->precision ? o->precision : SK_HLL_DEFAULT_PRECISION,
            .horizon = (uint64_t)(o->horizon ? o->horizon : DEFAULT_HORIZON_SECONDS),
            .resolution = 1};
        if (sk_window_hll_create(&w, &opts) != SK_OK)
            die("out of memory");
        return w;
    }
    if (!is_window_file(path))
        die("%s: not a window sketch (it is no file of sketch hll add --time): --time, "
            "--at and --horizon add to window sketches only%s", path, file_hint(path));
    w = load_window_or_die(path);
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    if (o->precision != 0 && o->precision != info.precision)
        die("%s: the window sketch has precision %u, not %u", path, info.precision,
            o->precision);
    if (o->horizon != 0 && (uint64_t)o->horizon != info.horizon)
        die("%s: the window sketch has a horizon of %" PRIu64 " seconds, not %s", path,
            info.horizon, o->horizon_text);
    return w;
}

int window_file_add(const char *path, const struct window_file_options *o, char **args,
                    int nargs)
{
    if (o->time_field == 0 && !o->at_given)
        die("%s: a window sketch: give the items' times with --time N (lines of input) "
            "or --at TIME (see 'sketch hll add --help')", path);
    int exists, lock = lock_for_writing(path, 1, &exists);
    struct window_add a = {.newest = -1, .at = o->at};
    a.w = open_for_add(path, exists, o);
    sk_window_hll_info info;
    sk_window_hll_get_info(a.w, &info);
    a.horizon = info.horizon;
    if (!info.empty)
        a.newest = (int64_t)info.newest;

    int err = 0;
    const char *failed = "standard input";
    struct group_options split_options = {0};
    if (o->time_field != 0) {
        split_options.split = o->fields;
        split_options.time_field = o->time_field;
        split_options.every = 1; /* a key's window start is the line's time */
        group_split_init(&a.split, &split_options);
        int count;
        struct input *inputs = inputs_open(args, nargs, &count);
        struct progress progress;
        progress_init(&progress, 0, 0);
        progress.enabled = 0;
        struct lines_run run;
        /* In order, so that what is dropped as late is what came late. */
        err = lines_read_parallel(inputs, count, 1, shared_add, &a, timed_lines, &progress,
                                  &run);
        failed = run.failed_input;
        free(run.contexts);
        inputs_close(inputs, count);
    } else if (nargs > 0) {
        for (int i = 0; i < nargs && a.error == 0; i++)
            add_at(&a, args[i], strlen(args[i]), o->at);
    } else {
        err = lines_read_stdin(at_lines, &a);
    }
    if (a.error == SK_ENOMEM || a.error == SK_EBUDGET)
        die("out of memory");
    if (a.error != 0)
        die("adding an item: %s", sk_strerror(a.error));
    if (err != 0)
        die("%s: %s", failed, lines_strerror(err));
    save_window_or_die(a.w, path);
    unlock_file(lock);
    if (o->time_field != 0) {
        struct group_split *splits[1] = {&a.split};
        group_split_warn(&split_options, splits, 1);
        group_split_free(&a.split);
        free(a.keys.data);
    }
    if (a.late != 0)
        warn("%llu items are older than the horizon (%" PRIu64 " seconds) before the newest "
             "time; they are not counted", (unsigned long long)a.late, a.horizon);
    if (a.before_epoch != 0)
        warn("%llu items have times before 1970, which a window sketch cannot hold; they are "
             "not counted", (unsigned long long)a.before_epoch);
    sk_window_hll_free(a.w);
    return EXIT_OK;
}

/* ---- count, merge, info ------------------------------------------------------ */

/* The union of the window sketches paths[0..count). */
static sk_window_hll *load_window_union(char **paths, int count)
{
    if (count <= 0)
        die("missing FILE");
    for (int i = 1; i < count; i++)
        if (!is_window_file(paths[i]))
            die("%s: not a window sketch, and %s is: a window sketch merges with window "
                "sketches only%s", paths[i], paths[0], file_hint(paths[i]));
    sk_window_hll *all = load_window_or_die(paths[0]);
    for (int i = 1; i < count; i++) {
        sk_window_hll *w = load_window_or_die(paths[i]);
        int rc = sk_window_hll_merge(all, w);
        if (rc == SK_EINCOMPAT)
            die("%s: its precision or horizon differs from %s's: window sketches merge only "
                "with alike ones", paths[i], paths[0]);
        if (rc != SK_OK)
            die("%s: %s", paths[i], sk_strerror(rc));
        sk_window_hll_free(w);
    }
    return all;
}

int window_file_count(char **paths, int count, const struct window_file_options *o)
{
    sk_window_hll *w = load_window_union(paths, count);
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    uint64_t window = o->window != 0 ? (uint64_t)o->window : info.horizon;
    if (window > info.horizon)
        die("--window %s is longer than the horizon of %s, %" PRIu64 " seconds: the window "
            "sketch keeps no more", o->window_text, paths[0], info.horizon);
    int64_t at = o->at_given ? o->at : info.empty ? 0 : (int64_t)info.newest + 1;
    if (!info.empty && at <= (int64_t)info.newest) {
        char newest[TIME_TEXT_SIZE];
        format_time((int64_t)info.newest, newest);
        die("--at %s is not after the newest time in %s, %s: a window sketch counts the "
            "windows that end after its newest time", o->at_text, paths[0], newest);
    }
    sk_hll *h;
    if (sk_hll_new(&h, info.precision) != SK_OK)
        die("out of memory");
    /* The window's items as a plain HyperLogLog: its count, and the bounds
     * that -v and --json print. */
    if (!info.empty && at > 0) {
        int rc = sk_window_hll_snapshot(w, window, (uint64_t)(at - 1), h);
        if (rc != SK_OK)
            die("counting the window: %s", sk_strerror(rc));
    }
    uint64_t n = sk_hll_count(h);
    char from[TIME_TEXT_SIZE], until[TIME_TEXT_SIZE];
    format_time(at - (int64_t)window, from);
    format_time(at, until);
    struct report r;
    if (o->json) {
        report_begin(&r, stdout, 1);
        report_uint(&r, "count", n);
        report_uint(&r, "window seconds", window);
        report_string(&r, "from", from);
        report_string(&r, "until", until);
        report_estimate(&r, h);
        report_end(&r);
    } else {
        printf("%llu\n", (unsigned long long)n);
    }
    if (o->verbose && !o->json) {
        report_begin(&r, stderr, 0);
        fprintf(stderr, "window: from %s until %s (not included)\n", from, until);
        report_estimate(&r, h);
        report_end(&r);
    }
    sk_hll_free(h);
    sk_window_hll_free(w);
    return EXIT_OK;
}

int window_file_merge(const char *out, char **paths, int count)
{
    int exists, lock = lock_for_writing(out, 1, &exists);
    sk_window_hll *w = load_window_union(paths, count);
    save_window_or_die(w, out);
    unlock_file(lock);
    sk_window_hll_free(w);
    return EXIT_OK;
}

int window_file_info(const char *path, int json)
{
    sk_window_hll *w = load_window_or_die(path);
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    uint64_t size, count = 0;
    if (sk_window_hll_serialized_size(w, &size) != SK_OK)
        die("out of memory");
    if (!info.empty && sk_window_hll_count(w, info.horizon, info.newest, &count) != SK_OK)
        die("%s: cannot count its horizon", path);
    char newest[TIME_TEXT_SIZE] = "none";
    if (!info.empty)
        format_time((int64_t)info.newest, newest);
    struct report r;
    report_begin(&r, stdout, json);
    report_string(&r, "format", "sketch window 1");
    report_uint(&r, "precision", info.precision);
    report_uint(&r, "registers", UINT64_C(1) << info.precision);
    report_uint(&r, "horizon seconds", info.horizon);
    report_uint(&r, "resolution seconds", info.resolution);
    report_string(&r, "newest", newest);
    report_uint(&r, "pairs", info.pairs);
    report_uint(&r, "memory bytes", info.memory);
    report_uint(&r, "size bytes", size);
    report_uint(&r, "count over the horizon", count);
    report_end(&r);
    sk_window_hll_free(w);
    return EXIT_OK;
}
