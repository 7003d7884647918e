/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_groups.c: `sketch hll` on group files (see hll_groups.h): the
 * sketches of many groups in one file, read and written by the library's
 * sk_hll_map calls, counted, merged group by group, and exported as Redis
 * commands.
 */
#define _GNU_SOURCE
#include "hll_groups.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "util.h"

#define GROUP_MAGIC "SKHG"

int is_group_file(const char *path)
{
    return file_starts_with(path, GROUP_MAGIC);
}

static unsigned map_precision(const sk_hll_map *m)
{
    sk_hll_map_info info;
    sk_hll_map_get_info(m, &info);
    return info.precision;
}

static sk_hll_map *load_one(const char *path)
{
    sk_hll_map *m;
    size_t len;
    const uint8_t *stream = stream_contents(path, &len);
    int rc = stream != NULL ? sk_hll_map_deserialize(&m, stream, len, NULL)
                            : sk_hll_map_open(&m, path, NULL);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc == SK_ENOMEM)
        die("%s: out of memory", path);
    if (rc != SK_OK)
        die("%s: not a valid group file: %s%s", path, sk_strerror(rc), file_hint(path));
    return m;
}

sk_hll_map *load_groups_or_die(char **paths, int count)
{
    unsigned precision = SK_HLL_MAX_PRECISION;
    if (count <= 0)
        die("missing FILE");
    for (int i = 0; i < count; i++) {
        if (!is_group_file(paths[i]))
            die("%s: not a group file, and %s is: a group file merges with group files only",
                paths[i], paths[0]);
    }
    sk_hll_map **maps = calloc((size_t)count, sizeof *maps);
    if (maps == NULL)
        die("out of memory");
    for (int i = 0; i < count; i++) {
        maps[i] = load_one(paths[i]);
        if (map_precision(maps[i]) < precision)
            precision = map_precision(maps[i]);
    }
    sk_hll_map *all;
    if (sk_hll_map_new(&all, precision) != SK_OK)
        die("out of memory");
    /* Group by group, so that files of higher precisions fold to the
     * smallest, as sketches do. */
    for (int i = 0; i < count; i++) {
        for (size_t g = 0; g < sk_hll_map_size(maps[i]); g++) {
            sk_hll_map_entry e;
            sk_hll *h;
            sk_hll_map_get(maps[i], g, &e);
            if (sk_hll_map_sketch(maps[i], g, &h) != SK_OK ||
                sk_hll_map_merge_sketch(all, e.key, e.key_len, h) != SK_OK)
                die("out of memory");
            sk_hll_free(h);
        }
        sk_hll_map_free(maps[i]);
    }
    free(maps);
    return all;
}

void save_groups_or_die(const sk_hll_map *m, const char *path)
{
    int rc = sk_hll_map_save(m, path);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
}

struct group_row *group_rows(const sk_hll_map *m)
{
    size_t n = sk_hll_map_size(m);
    struct group_row *rows = malloc((n ? n : 1) * sizeof *rows);
    if (rows == NULL)
        die("out of memory for %zu groups", n);
    for (size_t i = 0; i < n; i++) {
        sk_hll_map_entry e;
        sk_hll_map_get(m, i, &e);
        rows[i] = (struct group_row){e.key, e.key_len, e.estimate.count};
    }
    return rows;
}

int group_key_order(const struct group_row *a, const struct group_row *b)
{
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    return c != 0 ? c : (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

static int compare_group_rows(const void *a, const void *b)
{
    return group_key_order(a, b);
}

void print_group_counts(const sk_hll_map *m, const char *group, int json)
{
    if (group != NULL) {
        int64_t g = sk_hll_map_find(m, group, strlen(group));
        sk_hll *h = NULL;
        if (g >= 0 ? sk_hll_map_sketch(m, (size_t)g, &h) != SK_OK
                   : sk_hll_new(&h, map_precision(m)) != SK_OK)
            die("out of memory");
        if (json) {
            struct report r;
            report_begin(&r, stdout, 1);
            report_string(&r, "group", group);
            report_uint(&r, "count", sk_hll_count(h));
            report_estimate(&r, h);
            report_end(&r);
        } else {
            printf("%llu\n", (unsigned long long)sk_hll_count(h));
        }
        sk_hll_free(h);
        return;
    }
    size_t n = sk_hll_map_size(m);
    struct group_row *rows = group_rows(m);
    qsort(rows, n, sizeof *rows, compare_group_rows);
    if (json)
        printf("[");
    for (size_t i = 0; i < n; i++) {
        if (json) {
            printf("%s\n  {\"group\": ", i ? "," : "");
            json_string(stdout, (const char *)rows[i].key, rows[i].key_len);
            printf(", \"count\": %llu}", (unsigned long long)rows[i].count);
        } else {
            fwrite(rows[i].key, 1, rows[i].key_len, stdout);
            printf("\t%llu\n", (unsigned long long)rows[i].count);
        }
    }
    if (json)
        printf("%s]\n", n ? "\n" : "");
    free(rows);
}

/* The group's sketch as a Redis string, in a buffer of *len bytes. */
static uint8_t *redis_string(const sk_hll_map *m, size_t g, size_t *len)
{
    sk_hll *h;
    if (sk_hll_map_sketch(m, g, &h) != SK_OK)
        die("out of memory");
    uint64_t cap;
    uint8_t *buf = sk_hll_serialized_size(h, SK_HLL_REDIS, &cap) == SK_OK ? malloc(cap) : NULL;
    if (buf == NULL || sk_hll_serialize(h, SK_HLL_REDIS, buf, cap, len) != SK_OK)
        die("out of memory");
    sk_hll_free(h);
    return buf;
}

static void put_bulk(FILE *out, const void *a, size_t a_len, const void *b, size_t b_len)
{
    fprintf(out, "$%zu\r\n", a_len + b_len);
    fwrite(a, 1, a_len, out);
    fwrite(b, 1, b_len, out);
    fputs("\r\n", out);
}

void export_groups(const sk_hll_map *m, const char *prefix, const char *group, const char *out)
{
    if (map_precision(m) < SK_HLL_REDIS_PRECISION)
        die("a Redis HyperLogLog needs precision 14 or more; these groups have %u",
            map_precision(m));
    if (out != NULL && strcmp(out, "-") != 0)
        die_usage("hll export", "a group file is exported to standard output (for "
                                "redis-cli --pipe), not to -o FILE");
    if (isatty(STDOUT_FILENO))
        die_usage("hll export", "refusing to write binary data to a terminal; use a pipe");
    if (group != NULL) {
        int64_t g = sk_hll_map_find(m, group, strlen(group));
        if (g < 0)
            die("no group '%s'", group);
        size_t len;
        uint8_t *buf = redis_string(m, (size_t)g, &len);
        write_stdout_or_die(buf, len);
        free(buf);
        return;
    }
    size_t prefix_len = prefix != NULL ? strlen(prefix) : 0;
    for (size_t g = 0; g < sk_hll_map_size(m); g++) {
        sk_hll_map_entry e;
        sk_hll_map_get(m, g, &e);
        size_t len;
        uint8_t *buf = redis_string(m, g, &len);
        fputs("*3\r\n$3\r\nSET\r\n", stdout);
        put_bulk(stdout, prefix, prefix_len, e.key, e.key_len);
        put_bulk(stdout, buf, len, "", 0);
        free(buf);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
}

void print_groups_info(const sk_hll_map *m, const char *path, int json)
{
    uint64_t size;
    if (sk_hll_map_serialized_size(m, &size) != SK_OK)
        die("out of memory");
    struct report r;
    report_begin(&r, stdout, json);
    report_string(&r, "format", "sketch groups 1");
    report_string(&r, "file", path);
    report_uint(&r, "precision", map_precision(m));
    report_uint(&r, "groups", sk_hll_map_size(m));
    report_uint(&r, "size bytes", size);
    report_end(&r);
}
