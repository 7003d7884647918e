/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * top_groups.c: the top items per group and per time window (see
 * top_groups.h), each group's items in a frequent-items summary of the
 * library (sketch/frequent.h), which starts small and grows to its m
 * counters only if the group has that many distinct items.
 *
 * Each reading thread keeps a table of groups of its own, keyed as
 * group_keys.h says; at the end the tables are merged, summary by summary
 * (a merge keeps the summary's guarantee for the union of the streams).
 */
#define _GNU_SOURCE
#include "top_groups.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "line_batch.h"
#include "report.h"
#include "util.h"

/* ---- output ------------------------------------------------------------- */

void top_print_begin(const struct group_options *o, int grouped)
{
    if (grouped)
        print_group_header(o);
    if (o->format == FORMAT_CSV)
        printf("item,count,lower,upper\n");
    else if (o->format == FORMAT_JSON && !grouped)
        printf("[");
}

void top_print_end(const struct group_options *o, int first)
{
    if (o->format == FORMAT_JSON)
        printf("%s]\n", first ? "" : "\n");
}

void top_print(const struct group_options *o, const void *key, size_t key_len,
               const sk_frequent *f, int *first)
{
    size_t k = (size_t)o->top;
    sk_frequent_entry *top = calloc(k, sizeof *top);
    if (top == NULL)
        die("out of memory");
    int n = sk_frequent_list(f, top, k);
    if (n < 0)
        die("out of memory");
    for (int i = 0; i < n; i++) {
        const sk_frequent_entry *e = &top[i];
        unsigned long long c = e->count, lo = e->lower, hi = e->upper;
        if (o->format == FORMAT_JSON) {
            printf("%s\n  {", *first ? "" : ",");
            if (key != NULL)
                print_group_key(o, key, key_len);
            printf("\"item\": ");
            json_string(stdout, e->item, e->len);
            printf(", \"count\": %llu, \"lower\": %llu, \"upper\": %llu}", c, lo, hi);
        } else if (o->format == FORMAT_CSV) {
            if (key != NULL)
                print_group_key(o, key, key_len);
            put_csv_field(e->item, e->len);
            printf(",%llu,%llu,%llu\n", c, lo, hi);
        } else if (key != NULL) {
            print_group_key(o, key, key_len);
            if (o->bounds)
                printf("%llu\t%llu\t%llu\t", c, lo, hi);
            else
                printf("%llu\t", c);
            fwrite(e->item, 1, e->len, stdout);
            putchar('\n');
        } else {
            /* As uniq -c prints a count. */
            if (o->bounds)
                printf("%7llu %7llu %7llu ", c, lo, hi);
            else
                printf("%7llu ", c);
            fwrite(e->item, 1, e->len, stdout);
            putchar('\n');
        }
        *first = 0;
    }
    free(top);
}

_Noreturn void top_die(int status)
{
    if (status == SK_EINVAL)
        die("an item is longer than %lu bytes, or the total is past 2^64",
            (unsigned long)SK_FREQUENT_MAX_ITEM);
    die("out of memory");
}

/* ---- a table of groups ---------------------------------------------------- */

struct top_group {
    char *key;
    size_t key_len;
    uint64_t hash;
    sk_frequent *items;
};

struct group_table {
    struct top_group *groups;
    size_t count, cap;
    uint32_t *slots; /* group + 1, or 0 */
    size_t slot_count;
};

static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ len;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)key[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}

static int table_grow(struct group_table *t)
{
    size_t slots = t->slot_count ? t->slot_count * 2 : 64;
    uint32_t *s = calloc(slots, sizeof *s);
    struct top_group *g = realloc(t->groups, slots / 2 * sizeof *g);
    if (s == NULL || g == NULL) {
        free(s);
        if (g != NULL)
            t->groups = g;
        return SK_ENOMEM;
    }
    t->groups = g;
    t->cap = slots / 2;
    for (size_t i = 0; i < t->count; i++) {
        size_t j = (size_t)g[i].hash & (slots - 1);
        while (s[j] != 0)
            j = (j + 1) & (slots - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = s;
    t->slot_count = slots;
    return SK_OK;
}

/* The group of the key, made (with no summary yet) if it is new; or -1. */
static long table_find(struct group_table *t, const char *key, size_t len, uint64_t hash)
{
    if (t->count + 1 > t->cap && table_grow(t) != SK_OK)
        return -1;
    size_t mask = t->slot_count - 1, j = (size_t)hash & mask;
    for (; t->slots[j] != 0; j = (j + 1) & mask) {
        struct top_group *g = &t->groups[t->slots[j] - 1];
        if (g->hash == hash && g->key_len == len && memcmp(g->key, key, len) == 0)
            return (long)t->slots[j] - 1;
    }
    if (t->count >= UINT32_MAX - 1)
        return -1;
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, key, len);
    t->groups[t->count] = (struct top_group){copy, len, hash, NULL};
    t->slots[j] = (uint32_t)(t->count + 1);
    return (long)t->count++;
}

static void table_free(struct group_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        free(t->groups[i].key);
        sk_frequent_free(t->groups[i].items);
    }
    free(t->groups);
    free(t->slots);
}

/* ---- reading ------------------------------------------------------------ */

struct top_worker {
    const struct group_options *o;
    struct group_table table;
    struct group_split split;
    struct key_buffer key;
    int error;
};

static void *top_worker_init(void *shared, int thread)
{
    (void)thread;
    struct top_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        die("out of memory");
    w->o = shared;
    group_split_init(&w->split, w->o);
    return w;
}

static inline int top_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct top_worker *w = ctx;
    size_t key_len, item_len;
    const char *item;
    int rc = group_split_line(&w->split, line, len, &w->key, &key_len, &item, &item_len);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    long g = table_find(&w->table, w->key.data, key_len, key_hash(w->key.data, key_len));
    if (g < 0)
        return SK_ENOMEM;
    struct top_group *group = &w->table.groups[g];
    if (group->items == NULL && sk_frequent_new(&group->items, w->o->counters) != SK_OK)
        return SK_ENOMEM;
    return sk_frequent_add(group->items, item, item_len, 1);
}

static int top_lines(void *ctx, const char *data, size_t len)
{
    struct top_worker *w = ctx;
    int rc = line_each(data, len, top_take, w);
    if (rc != 0 && w->error == 0)
        w->error = rc;
    return rc != 0;
}

static int compare_groups(const void *pa, const void *pb)
{
    const struct top_group *a = *(const struct top_group *const *)pa;
    const struct top_group *b = *(const struct top_group *const *)pb;
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    return c != 0 ? c : (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

int top_groups(struct input *inputs, int count, int threads, const struct group_options *o,
               struct progress *progress)
{
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, threads, top_worker_init, (void *)o,
                                  top_lines, progress, &run);
    struct top_worker *all = run.contexts[0];
    struct group_split **splits = calloc((size_t)run.threads, sizeof *splits);
    if (splits == NULL)
        die("out of memory");
    int rc = SK_OK;
    uint64_t lines = 0;
    for (int t = 0; t < run.threads; t++) {
        struct top_worker *w = run.contexts[t];
        if (w->error != 0 && rc == SK_OK)
            rc = w->error;
        /* Each thread's groups go into the first's as soon as they are in. */
        for (size_t i = 0; t > 0 && rc == SK_OK && err == 0 && i < w->table.count; i++) {
            struct top_group *g = &w->table.groups[i];
            long into = table_find(&all->table, g->key, g->key_len, g->hash);
            if (into < 0) {
                rc = SK_ENOMEM;
            } else if (all->table.groups[into].items == NULL) {
                all->table.groups[into].items = g->items;
                g->items = NULL;
            } else {
                rc = sk_frequent_merge(all->table.groups[into].items, g->items);
            }
        }
        if (t > 0)
            table_free(&w->table);
        lines += w->split.lines;
        splits[t] = &w->split;
    }
    if (rc != SK_OK)
        top_die(rc);
    if (err != 0)
        die("%s: %s", run.failed_input, lines_strerror(err));
    group_split_warn(o, splits, run.threads);
    free(splits);

    size_t n = all->table.count;
    struct top_group **order = malloc((n ? n : 1) * sizeof *order);
    if (order == NULL)
        die("out of memory");
    uint64_t threshold = 0;
    for (size_t i = 0; i < n; i++) {
        order[i] = &all->table.groups[i];
        sk_frequent_info info;
        sk_frequent_get_info(order[i]->items, &info);
        threshold = info.threshold > threshold ? info.threshold : threshold;
    }
    qsort(order, n, sizeof *order, compare_groups);
    top_print_begin(o, 1);
    int first = 1;
    for (size_t i = 0; i < n; i++)
        top_print(o, order[i]->key, order[i]->key_len, order[i]->items, &first);
    top_print_end(o, first);
    if (o->verbose)
        fprintf(stderr, "lines: %llu\ngroups: %zu\ncounters per group: %u\n"
                "largest threshold of a group: %llu\n", (unsigned long long)lines, n,
                o->counters, (unsigned long long)threshold);
    free(order);
    for (int t = 0; t < run.threads; t++) {
        struct top_worker *w = run.contexts[t];
        if (t == 0)
            table_free(&w->table);
        free(w->key.data);
        group_split_free(&w->split);
        free(w);
    }
    free(run.contexts);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
    return EXIT_OK;
}
