/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_groups.c: a distinct count per group and per time window (see
 * count_groups.h), each group's HyperLogLog kept by the library's
 * sk_hll_map, which starts every group small.
 *
 * Each reading thread keeps a map of its own; the maps are merged at the
 * end. A group's key is made and printed as group_keys.h says.
 */
#define _GNU_SOURCE
#include "count_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_lock.h"
#include "hll_groups.h"
#include "line_batch.h"
#include "report.h"
#include "sketch.h"
#include "timestamps.h"
#include "util.h"

struct group_worker {
    sk_hll_map *map;
    struct group_split split;
    struct key_buffer keys; /* the keys of the batch's items, one after another */
    size_t key_at[LINE_BATCH_MAX], key_lens[LINE_BATCH_MAX];
    struct line_batch batch; /* the counted items (lines or fields); its error, a status */
};

static void *group_worker_init(void *shared, int thread)
{
    (void)thread;
    const struct group_options *o = shared;
    struct group_worker *w = calloc(1, sizeof *w);
    if (w == NULL || sk_hll_map_new(&w->map, o->precision) != SK_OK)
        die("out of memory");
    group_split_init(&w->split, o);
    w->batch.size = LINE_BATCH_MAX;
    return w;
}

/* Adds the batch's items to the map under their keys. */
static int group_flush(void *ctx, struct line_batch *b)
{
    struct group_worker *w = ctx;
    const void *keys[LINE_BATCH_MAX];
    for (size_t i = 0; i < b->count; i++)
        keys[i] = w->keys.data + w->key_at[i];
    int rc = sk_hll_map_add_batch(w->map, keys, w->key_lens, b->items, b->lens, b->count);
    w->keys.used = 0;
    return rc < 0 ? rc : 0;
}

/* Pushes the line's item with its group's key; a line without all the
 * fields, or without a time that can be read, is skipped and counted as
 * such (group_split_line). */
static inline int group_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    struct group_worker *w = ctx;
    size_t key_len, item_len;
    const char *item;
    int rc = group_split_line(&w->split, line, len, &w->keys, &key_len, &item, &item_len);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (key_len > SK_HLL_MAP_MAX_KEY)
        return SK_EINVAL;
    w->key_at[b->count] = w->keys.used;
    w->key_lens[b->count] = key_len;
    w->keys.used += key_len;
    line_batch_push(b, item, item_len);
    return 0;
}

static int group_lines(void *ctx, const char *data, size_t len)
{
    struct group_worker *w = ctx;
    return line_batch_block(&w->batch, data, len, group_take, group_flush, w) != 0;
}

/* ---- output ------------------------------------------------------------- */

static const struct group_options *sort_options;

static int compare_windows(const struct group_row *a, const struct group_row *b)
{
    if (sort_options->time_field == 0)
        return 0;
    return memcmp(a->key, b->key, WINDOW_BYTES);
}

static enum group_sort sort_by;

/* Window first, then count (largest first) or key. */
static int compare_rows(const void *pa, const void *pb)
{
    const struct group_row *a = pa, *b = pb;
    int c = compare_windows(a, b);
    if (c != 0)
        return c;
    if (sort_by == SORT_COUNT && a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return group_key_order(a, b);
}

static void print_row(const struct group_options *o, const struct group_row *r, int first)
{
    if (o->format == FORMAT_JSON) {
        printf("%s\n  {", first ? "" : ",");
        print_group_key(o, r->key, r->key_len);
        printf("\"count\": %llu}", (unsigned long long)r->count);
        return;
    }
    print_group_key(o, r->key, r->key_len);
    printf("%llu\n", (unsigned long long)r->count);
}

static void print_groups(const sk_hll_map *map, const struct group_options *o)
{
    size_t n = sk_hll_map_size(map);
    struct group_row *rows = group_rows(map);
    sort_options = o;
    if (o->top != 0) {
        /* The K largest of each window, then in the order asked for. */
        sort_by = SORT_COUNT;
        qsort(rows, n, sizeof *rows, compare_rows);
        size_t kept = 0;
        uint64_t in_window = 0;
        for (size_t i = 0; i < n; i++) {
            in_window = i > 0 && compare_windows(&rows[i - 1], &rows[i]) == 0 ? in_window + 1 : 0;
            if (in_window < o->top)
                rows[kept++] = rows[i];
        }
        n = kept;
    }
    sort_by = o->sort;
    qsort(rows, n, sizeof *rows, compare_rows);
    print_group_header(o);
    if (o->format == FORMAT_CSV)
        printf("count\n");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        print_row(o, &rows[i], first);
        first = 0;
    }
    if (o->format == FORMAT_JSON)
        printf("%s]\n", first ? "" : "\n");
    free(rows);
}

/* The groups under the keys they print as (window, tab, fields joined by
 * tabs), which is how a group file names them. */
static sk_hll_map *printed_keys(const sk_hll_map *map, const struct group_options *o)
{
    sk_hll_map *out;
    if (sk_hll_map_new(&out, o->precision) != SK_OK)
        die("out of memory");
    char *key = NULL;
    size_t cap = 0;
    for (size_t g = 0; g < sk_hll_map_size(map); g++) {
        sk_hll_map_entry e;
        sk_hll_map_get(map, g, &e);
        const uint8_t *p = e.key;
        size_t len = e.key_len, k = 0;
        if (cap < len + TIME_TEXT_SIZE + 1) {
            cap = (len + TIME_TEXT_SIZE + 1) * 2;
            key = realloc(key, cap);
            if (key == NULL)
                die("out of memory");
        }
        if (o->time_field != 0) {
            format_time(key_window(p), key);
            k = strlen(key);
            if (o->nby != 0)
                key[k++] = '\t';
            p += WINDOW_BYTES;
            len -= WINDOW_BYTES;
        }
        for (size_t i = 0; i < len; i++)
            key[k++] = p[i] == (uint8_t)group_separator(o) ? '\t' : (char)p[i];
        sk_hll *h;
        if (sk_hll_map_sketch(map, g, &h) != SK_OK ||
            sk_hll_map_merge_sketch(out, key, k, h) != SK_OK)
            die("out of memory");
        sk_hll_free(h);
    }
    free(key);
    return out;
}

/* ---- the command ----------------------------------------------------------- */

int count_groups(struct input *inputs, int count, int threads, const struct group_options *o,
                 struct progress *progress)
{
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, threads, group_worker_init, (void *)o,
                                  group_lines, progress, &run);
    struct group_worker *all = run.contexts[0];
    struct group_split **splits = calloc((size_t)run.threads, sizeof *splits);
    if (splits == NULL)
        die("out of memory");
    uint64_t lines = 0;
    int rc = SK_OK;
    for (int t = 0; t < run.threads; t++) {
        struct group_worker *w = run.contexts[t];
        if (w->batch.error != 0 && rc == SK_OK)
            rc = w->batch.error;
        if (t > 0 && rc == SK_OK && err == 0)
            rc = sk_hll_map_merge(all->map, w->map);
        if (t > 0) { /* each thread's groups go as soon as they are in */
            sk_hll_map_free(w->map);
            w->map = NULL;
        }
        lines += w->split.lines;
        splits[t] = &w->split;
    }
    if (rc == SK_ENOMEM)
        die("out of memory after %zu groups (each group takes about 60 bytes and its key "
            "while it is small, up to 12 KB at -p 14)", sk_hll_map_size(all->map));
    if (rc == SK_EFULL)
        die("more than %lu groups", (unsigned long)SK_HLL_MAP_MAX_GROUPS);
    if (rc == SK_EINVAL)
        die("a group key is longer than %d bytes", SK_HLL_MAP_MAX_KEY);
    if (err != 0)
        die("%s: %s", run.failed_input, lines_strerror(err));
    group_split_warn(o, splits, run.threads);
    free(splits);
    if (o->output != NULL) {
        int exists, lock = lock_for_writing(o->output, 1, &exists);
        sk_hll_map *saved = printed_keys(all->map, o);
        save_groups_or_die(saved, o->output);
        unlock_file(lock);
        sk_hll_map_free(saved);
    }
    print_groups(all->map, o);
    if (o->verbose) {
        sk_hll_map_info info;
        sk_hll_map_get_info(all->map, &info);
        fprintf(stderr, "lines: %llu\ngroups: %zu\nmemory: %.1f MiB\n",
                (unsigned long long)lines, info.groups, (double)info.memory / (1 << 20));
    }
    for (int t = 0; t < run.threads; t++) {
        struct group_worker *w = run.contexts[t];
        sk_hll_map_free(w->map);
        free(w->keys.data);
        group_split_free(&w->split);
        free(w);
    }
    free(run.contexts);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
    return EXIT_OK;
}
