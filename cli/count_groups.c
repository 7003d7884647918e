/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_groups.c: a distinct count per group and per time window (see
 * count_groups.h), each group's HyperLogLog kept by the library's
 * sk_hll_map, which starts every group small.
 *
 * Each reading thread keeps a map of its own; the maps are merged at the
 * end. A group's key is the window's start, when there are windows, as 8
 * bytes in an order memcmp sorts by time (big-endian, sign bit flipped),
 * followed by the --by fields joined by the delimiter, which no field can
 * contain, so that two different groups never share a key.
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

#define WINDOW_BYTES 8
#define BAD_SAMPLE 60

struct group_worker {
    const struct group_options *o;
    sk_hll_map *map;
    unsigned need; /* fields a line is split into */
    const char **at;
    size_t *lens;
    char *key; /* the keys of the batch's items, one after another */
    size_t key_used, key_cap;
    size_t key_at[LINE_BATCH_MAX], key_lens[LINE_BATCH_MAX];
    struct line_batch batch; /* the counted items (lines or fields); its error, a status */
    uint64_t lines, missing, bad_time;
    char bad_sample[BAD_SAMPLE + 1];
};

/* The highest field a line must be split up to. */
static unsigned fields_needed(const struct group_options *o)
{
    unsigned n = o->split.field;
    for (unsigned i = 0; i < o->nby; i++)
        n = o->by[i] > n ? o->by[i] : n;
    /* The field after the time, which may hold the rest of it. */
    if (o->time_field != 0 && o->time_field + 1 > n)
        n = o->time_field + 1;
    return n;
}

static char group_separator(const struct group_options *o)
{
    return o->split.whitespace ? '\t' : o->split.delimiter;
}

static void *group_worker_init(void *shared, int thread)
{
    (void)thread;
    const struct group_options *o = shared;
    struct group_worker *w = calloc(1, sizeof *w);
    if (w == NULL || sk_hll_map_new(&w->map, o->precision) != SK_OK)
        die("out of memory");
    w->o = o;
    w->need = fields_needed(o);
    w->at = calloc(w->need + 1, sizeof *w->at);
    w->lens = calloc(w->need + 1, sizeof *w->lens);
    w->batch.size = LINE_BATCH_MAX;
    if (w->at == NULL || w->lens == NULL)
        die("out of memory");
    return w;
}

static char *key_room(struct group_worker *w, size_t len)
{
    if (w->key_used + len > w->key_cap) {
        size_t cap = (w->key_used + len) * 2;
        char *key = realloc(w->key, cap);
        if (key == NULL)
            return NULL;
        w->key = key;
        w->key_cap = cap;
    }
    return w->key + w->key_used;
}

/* Adds the batch's items to the map under their keys. */
static int group_flush(void *ctx, struct line_batch *b)
{
    struct group_worker *w = ctx;
    const void *keys[LINE_BATCH_MAX];
    for (size_t i = 0; i < b->count; i++)
        keys[i] = w->key + w->key_at[i];
    int rc = sk_hll_map_add_batch(w->map, keys, w->key_lens, b->items, b->lens, b->count);
    w->key_used = 0;
    return rc < 0 ? rc : 0;
}

/* Pushes the line's item with its group's key (window, then the --by
 * fields); a line without all the fields, or without a time that can be
 * read, is skipped and counted as such. */
static inline int group_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    struct group_worker *w = ctx;
    const struct group_options *o = w->o;
    const char **at = w->at;
    size_t *lens = w->lens;
    unsigned have = w->need ? split_fields(&o->split, line, len, w->need, at, lens) : 0;
    w->lines++;

    size_t key_len = 0;
    for (unsigned i = 0; i < o->nby; i++) {
        if (o->by[i] > have) {
            w->missing++;
            return 0;
        }
        key_len += lens[o->by[i] - 1] + 1;
    }
    if (o->split.field > have) {
        w->missing++;
        return 0;
    }
    uint8_t window[WINDOW_BYTES];
    if (o->time_field != 0) {
        int64_t t;
        unsigned f = o->time_field;
        int ok = f <= have && parse_time(at[f - 1], lens[f - 1], f < have ? at[f] : NULL,
                                         f < have ? lens[f] : 0, &t);
        if (!ok) {
            if (w->bad_time++ == 0) {
                size_t n = f <= have ? lens[f - 1] : len;
                const char *s = f <= have ? at[f - 1] : line;
                n = n < BAD_SAMPLE ? n : BAD_SAMPLE;
                memcpy(w->bad_sample, s, n);
                w->bad_sample[n] = '\0';
            }
            return 0;
        }
        uint64_t u = (uint64_t)window_start(t, o->every) ^ (UINT64_C(1) << 63);
        for (int i = 0; i < WINDOW_BYTES; i++)
            window[i] = (uint8_t)(u >> (56 - 8 * i));
        key_len += WINDOW_BYTES;
    }
    char *key = key_room(w, key_len + 1);
    if (key == NULL)
        return SK_ENOMEM;
    size_t k = 0;
    if (o->time_field != 0) {
        memcpy(key, window, WINDOW_BYTES);
        k = WINDOW_BYTES;
    }
    for (unsigned i = 0; i < o->nby; i++) {
        if (i > 0)
            key[k++] = group_separator(o);
        memcpy(key + k, at[o->by[i] - 1], lens[o->by[i] - 1]);
        k += lens[o->by[i] - 1];
    }
    if (k > SK_HLL_MAP_MAX_KEY)
        return SK_EINVAL;
    w->key_at[b->count] = w->key_used;
    w->key_lens[b->count] = k;
    w->key_used += k;
    if (o->split.field != 0)
        line_batch_push(b, at[o->split.field - 1], lens[o->split.field - 1]);
    else
        line_batch_push(b, line, len);
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

static void put_csv_field(const char *s, size_t n)
{
    if (memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL && memchr(s, '\n', n) == NULL &&
        memchr(s, '\r', n) == NULL) {
        fwrite(s, 1, n, stdout);
        return;
    }
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            putchar('"');
        putchar(s[i]);
    }
    putchar('"');
}

static void print_header(const struct group_options *o)
{
    if (o->format == FORMAT_CSV) {
        if (o->time_field != 0)
            printf("window,");
        for (unsigned i = 0; i < o->nby; i++)
            printf("field%u,", o->by[i]);
        printf("count\n");
    } else if (o->format == FORMAT_JSON) {
        printf("[");
    }
}

static void print_row(const struct group_options *o, const struct group_row *r, int first)
{
    const char *p = (const char *)r->key, *end = p + r->key_len;
    char when[TIME_TEXT_SIZE] = "";
    if (o->time_field != 0) {
        uint64_t u = 0;
        for (int i = 0; i < WINDOW_BYTES; i++)
            u = u << 8 | (uint8_t)p[i];
        format_time((int64_t)(u ^ (UINT64_C(1) << 63)), when);
        p += WINDOW_BYTES;
    }
    char sep = group_separator(o);
    if (o->format == FORMAT_JSON) {
        printf("%s\n  {", first ? "" : ",");
        if (o->time_field != 0)
            printf("\"window\": \"%s\"%s", when, o->nby ? ", " : "");
        if (o->nby == 1) {
            printf("\"group\": ");
            json_string(stdout, p, (size_t)(end - p));
        } else if (o->nby > 1) {
            printf("\"group\": [");
            for (unsigned i = 0; i < o->nby; i++) {
                const char *q = i + 1 < o->nby ? memchr(p, sep, (size_t)(end - p)) : end;
                json_string(stdout, p, (size_t)(q - p));
                printf(i + 1 < o->nby ? ", " : "]");
                p = q + 1;
            }
        }
        printf(", \"count\": %llu}", (unsigned long long)r->count);
        return;
    }
    char field_sep = o->format == FORMAT_CSV ? ',' : '\t';
    if (o->time_field != 0)
        printf("%s%c", when, field_sep);
    for (unsigned i = 0; i < o->nby; i++) {
        const char *q = i + 1 < o->nby ? memchr(p, sep, (size_t)(end - p)) : end;
        if (o->format == FORMAT_CSV)
            put_csv_field(p, (size_t)(q - p));
        else
            fwrite(p, 1, (size_t)(q - p), stdout);
        putchar(field_sep);
        p = q + 1;
    }
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
    print_header(o);
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
            uint64_t u = 0;
            for (int i = 0; i < WINDOW_BYTES; i++)
                u = u << 8 | p[i];
            format_time((int64_t)(u ^ (UINT64_C(1) << 63)), key);
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

void parse_by_fields(const char *text, struct group_options *o)
{
    const char *p = text;
    o->nby = 0;
    for (;;) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno != 0 || v == 0 || v > (1u << 20) || (*end != ',' && *end != '\0'))
            die_usage("count", "--by takes field numbers from 1, separated by commas, not '%s'",
                      text);
        if (o->nby == MAX_BY_FIELDS)
            die_usage("count", "--by takes at most %d fields", MAX_BY_FIELDS);
        o->by[o->nby++] = (unsigned)v;
        if (*end == '\0')
            return;
        p = end + 1;
    }
}

int count_groups(struct input *inputs, int count, int threads, const struct group_options *o,
                 struct progress *progress)
{
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, threads, group_worker_init, (void *)o,
                                  group_lines, progress, &run);
    struct group_worker *all = run.contexts[0];
    uint64_t lines = 0, missing = 0, bad_time = 0;
    const char *sample = NULL;
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
        lines += w->lines;
        missing += w->missing;
        if (w->bad_time != 0 && sample == NULL)
            sample = w->bad_sample;
        bad_time += w->bad_time;
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
    if (bad_time != 0)
        warn("%llu of %llu lines have no time in field %u that can be read (for example "
             "'%s'); they are not counted", (unsigned long long)bad_time,
             (unsigned long long)lines, o->time_field, sample);
    if (missing != 0)
        warn("%llu of %llu lines have fewer fields than asked for; they are not counted",
             (unsigned long long)missing, (unsigned long long)lines);
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
        free(w->key);
        free(w->at);
        free(w->lens);
        free(w);
    }
    free(run.contexts);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
    return EXIT_OK;
}
