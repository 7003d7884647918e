/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_window.c: the sliding distinct count of count_window.h.
 *
 * Each group has a window HyperLogLog of its own (sketch/window_hll.h) with
 * the window as its horizon and one second a slot, found by its --by key
 * in an open-addressing table; the key is made as count --by makes it
 * (group_keys.h), and so is the line's time: the split is asked for
 * windows of one second, whose start is the time itself.
 *
 * The library counts the ceil(w / resolution) slots that end with the
 * slot of `now`, so the window T - W <= t < T is the count of W seconds at
 * now = T - 1, and it may only be asked at a `now` no earlier than the
 * newest time added: hence a step prints before the line that passes it
 * is added, which keeps every time added below the next step.
 *
 * The library's times are unsigned and the input's may precede 1970, so
 * times are passed as offsets from a base: the first step's window start.
 * No line older than that is ever added (it is older than the window of
 * every step to print).
 */
#define _GNU_SOURCE
#include "count_window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hll_groups.h"
#include "line_batch.h"
#include "lines.h"
#include "timestamps.h"
#include "util.h"

struct wgroup {
    char *key; /* the --by fields joined as group_keys.h joins them */
    size_t len;
    uint64_t hash;
    sk_window_hll *sketch;
    int64_t newest; /* the newest time added */
};

struct window_run {
    const struct group_options *o;
    struct group_options key_options; /* o, with no time: how a row's fields print */
    int64_t window, every;
    struct group_split split;
    struct key_buffer keys;
    struct wgroup *groups;
    size_t ngroups, cap;
    uint32_t *index; /* a group's position + 1, or 0 for a free slot */
    size_t index_size; /* a power of two, at least twice ngroups */
    int started;
    int64_t next, base; /* the next step to print; times are added as t - base */
    uint64_t too_old, steps, lines_counted;
    size_t peak_groups, peak_memory, group_memory;
    struct group_row *rows;
    size_t rows_cap;
    int error; /* a library status that stopped the reading */
};

/* ---- the groups ------------------------------------------------------------ */

static void index_rebuild(struct window_run *r, size_t size)
{
    free(r->index);
    r->index = calloc(size, sizeof *r->index);
    if (r->index == NULL)
        die("out of memory after %zu groups", r->ngroups);
    r->index_size = size;
    for (size_t g = 0; g < r->ngroups; g++) {
        size_t s = r->groups[g].hash & (size - 1);
        while (r->index[s] != 0)
            s = (s + 1) & (size - 1);
        r->index[s] = (uint32_t)(g + 1);
    }
}

/* The group of key, created empty if it is new; NULL (r->error set) when
 * memory runs out. */
static struct wgroup *group_of(struct window_run *r, const char *key, size_t len)
{
    uint64_t hash = sk_hll_hash(key, len);
    size_t s = hash & (r->index_size - 1);
    for (; r->index[s] != 0; s = (s + 1) & (r->index_size - 1)) {
        struct wgroup *g = &r->groups[r->index[s] - 1];
        if (g->hash == hash && g->len == len && memcmp(g->key, key, len) == 0)
            return g;
    }
    if (r->ngroups == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct wgroup *grown = cap < UINT32_MAX / 4 ? realloc(r->groups, cap * sizeof *grown)
                                                    : NULL;
        if (grown == NULL) {
            r->error = SK_ENOMEM;
            return NULL;
        }
        r->groups = grown;
        r->cap = cap;
    }
    struct wgroup *g = &r->groups[r->ngroups];
    sk_window_hll_options opts = {.precision = r->o->precision,
                                  .horizon = (uint64_t)r->window,
                                  .resolution = 1};
    g->key = malloc(len ? len : 1);
    int rc = g->key == NULL ? SK_ENOMEM : sk_window_hll_create(&g->sketch, &opts);
    if (rc != SK_OK) {
        free(g->key);
        r->error = rc;
        return NULL;
    }
    memcpy(g->key, key, len);
    g->len = len;
    g->hash = hash;
    g->newest = INT64_MIN;
    if (r->group_memory == 0) {
        sk_window_hll_info info;
        sk_window_hll_get_info(g->sketch, &info);
        r->group_memory = info.memory;
    }
    r->ngroups++;
    if (r->ngroups * 2 > r->index_size)
        index_rebuild(r, r->index_size * 2);
    else
        r->index[s] = (uint32_t)r->ngroups;
    return g;
}

/* Frees the groups that hold nothing newer than `cutoff`: no window still
 * to print reaches back to them, and a late line of theirs makes them
 * again. */
static void drop_groups_before(struct window_run *r, int64_t cutoff)
{
    size_t kept = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        if (r->groups[g].newest < cutoff) {
            sk_window_hll_free(r->groups[g].sketch);
            free(r->groups[g].key);
        } else {
            r->groups[kept++] = r->groups[g];
        }
    }
    if (kept != r->ngroups) {
        r->ngroups = kept;
        index_rebuild(r, r->index_size);
    }
}

/* ---- the rows ------------------------------------------------------------- */

static int compare_rows(const void *a, const void *b)
{
    return group_key_order(a, b);
}

/* Prints step T's rows: every group with a count, in group order; without
 * --by, the one count, 0 included. */
static void print_step(struct window_run *r, int64_t t)
{
    const struct group_options *o = r->o;
    if (r->rows_cap < r->ngroups + 1) {
        r->rows_cap = (r->ngroups + 1) * 2;
        free(r->rows);
        r->rows = malloc(r->rows_cap * sizeof *r->rows);
        if (r->rows == NULL)
            die("out of memory after %zu groups", r->ngroups);
    }
    size_t n = 0, memory = 0;
    for (size_t g = 0; g < r->ngroups; g++) {
        uint64_t count;
        int rc = sk_window_hll_count(r->groups[g].sketch, (uint64_t)r->window,
                                     (uint64_t)(t - 1 - r->base), &count);
        if (rc != SK_OK)
            die("counting a window: %s", sk_strerror(rc));
        sk_window_hll_info info;
        sk_window_hll_get_info(r->groups[g].sketch, &info);
        memory += info.memory;
        if (count > 0 || o->nby == 0)
            r->rows[n++] = (struct group_row){(const uint8_t *)r->groups[g].key,
                                              r->groups[g].len, count};
    }
    if (o->nby == 0 && n == 0)
        r->rows[n++] = (struct group_row){(const uint8_t *)"", 0, 0};
    if (n > 1)
        qsort(r->rows, n, sizeof *r->rows, compare_rows);
    char when[TIME_TEXT_SIZE];
    format_time(t, when);
    char sep = o->format == FORMAT_CSV ? ',' : '\t';
    for (size_t i = 0; i < n; i++) {
        printf("%s%c", when, sep);
        print_group_key(&r->key_options, r->rows[i].key, r->rows[i].key_len);
        printf("%llu\n", (unsigned long long)r->rows[i].count);
    }
    r->steps++;
    if (r->ngroups > r->peak_groups)
        r->peak_groups = r->ngroups;
    if (memory > r->peak_memory)
        r->peak_memory = memory;
}

/* Prints every step up to the one that time t has reached, then makes t's
 * line part of the steps to come. */
static void advance_to(struct window_run *r, int64_t t)
{
    if (!r->started) {
        r->started = 1;
        r->next = window_start(t, r->every) + r->every;
        r->base = r->next - r->window;
        return;
    }
    while (r->next <= t) {
        print_step(r, r->next);
        r->next += r->every;
        drop_groups_before(r, r->next - r->window);
    }
}

/* ---- reading ------------------------------------------------------------- */

static inline int window_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct window_run *r = ctx;
    size_t key_len, item_len;
    const char *item;
    int rc = group_split_line(&r->split, line, len, &r->keys, &key_len, &item, &item_len);
    if (rc != 0) {
        if (rc < 0)
            r->error = rc;
        return rc < 0 ? rc : 0;
    }
    int64_t t = key_window(r->keys.data);
    advance_to(r, t);
    if (t < r->next - r->window) {
        r->too_old++;
        return 0;
    }
    struct wgroup *g = group_of(r, r->keys.data + WINDOW_BYTES, key_len - WINDOW_BYTES);
    if (g == NULL)
        return r->error;
    rc = sk_window_hll_add(g->sketch, item, item_len, (uint64_t)(t - r->base));
    if (rc < 0) {
        r->error = rc;
        return rc;
    }
    if (t > g->newest)
        g->newest = t;
    r->lines_counted++;
    return 0;
}

/* A block of lines, then what it printed goes out at once: a `tail -f`
 * pipe gets each step's rows when its lines arrive. */
static int window_lines(void *ctx, const char *data, size_t len)
{
    int rc = line_each(data, len, window_take, ctx);
    if (fflush(stdout) != 0)
        die("standard output: %s", strerror(errno));
    return rc != 0;
}

static void *shared_run(void *shared, int thread)
{
    (void)thread;
    return shared;
}

int count_window(struct input *inputs, int count, const struct group_options *o, int64_t window)
{
    struct window_run r = {.o = o, .window = window, .every = o->every};
    r.key_options = *o;
    r.key_options.time_field = 0;
    /* Windows of one second: a key's window start is the line's time. */
    struct group_options split_options = *o;
    split_options.every = 1;
    group_split_init(&r.split, &split_options);
    index_rebuild(&r, 64);
    if (o->format == FORMAT_CSV) {
        printf("time,");
        print_group_header(&r.key_options);
        printf("count\n");
    }

    struct progress progress;
    progress_init(&progress, 0, 0);
    progress.enabled = 0; /* rows go to the terminal as they come */
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, 1, shared_run, &r, window_lines, &progress,
                                  &run);
    free(run.contexts);
    if (r.error == SK_ENOMEM || r.error == SK_EBUDGET)
        die("out of memory after %zu groups (each group's window sketch takes %.1f KiB or "
            "more at -p %u; a lower -p takes less)", r.ngroups,
            (double)r.group_memory / 1024, o->precision);
    if (r.error != 0)
        die("counting a line: %s", sk_strerror(r.error));
    if (err != 0)
        die("%s: %s", run.failed_input, lines_strerror(err));
    if (r.started)
        print_step(&r, r.next); /* the step the newest lines are in */

    struct group_split *splits[1] = {&r.split};
    group_split_warn(&split_options, splits, 1);
    if (r.too_old != 0)
        warn("%llu of %llu lines are older than the window of the next step to print "
             "(before T - W for that step T); they are not counted",
             (unsigned long long)r.too_old, (unsigned long long)r.split.lines);
    if (o->verbose)
        fprintf(stderr, "lines: %llu\nlines counted: %llu\nsteps: %llu\ngroups at most: "
                "%zu\nmemory at most: %.1f MiB\n", (unsigned long long)r.split.lines,
                (unsigned long long)r.lines_counted, (unsigned long long)r.steps,
                r.peak_groups, (double)r.peak_memory / (1 << 20));
    for (size_t g = 0; g < r.ngroups; g++) {
        sk_window_hll_free(r.groups[g].sketch);
        free(r.groups[g].key);
    }
    free(r.groups);
    free(r.index);
    free(r.rows);
    free(r.keys.data);
    group_split_free(&r.split);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
    return EXIT_OK;
}
