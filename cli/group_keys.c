/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group_keys.c: the group keys of lines and how they print, for count
 * --by/--time and top --by/--time (see group_keys.h).
 */
#define _GNU_SOURCE
#include "group_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "sketch.h"
#include "timestamps.h"
#include "util.h"

void parse_by_fields(const char *cmd, const char *text, struct group_options *o)
{
    const char *p = text;
    o->nby = 0;
    for (;;) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno != 0 || v == 0 || v > (1u << 20) || (*end != ',' && *end != '\0'))
            die_usage(cmd, "--by takes field numbers from 1, separated by commas, not '%s'",
                      text);
        if (o->nby == MAX_BY_FIELDS)
            die_usage(cmd, "--by takes at most %d fields", MAX_BY_FIELDS);
        o->by[o->nby++] = (unsigned)v;
        if (*end == '\0')
            return;
        p = end + 1;
    }
}

char group_separator(const struct group_options *o)
{
    return o->split.whitespace ? '\t' : o->split.delimiter;
}

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

void group_split_init(struct group_split *s, const struct group_options *o)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    s->need = fields_needed(o);
    s->at = calloc(s->need + 1, sizeof *s->at);
    s->lens = calloc(s->need + 1, sizeof *s->lens);
    if (s->at == NULL || s->lens == NULL)
        die("out of memory");
}

void group_split_free(struct group_split *s)
{
    free(s->at);
    free(s->lens);
}

static char *key_room(struct key_buffer *k, size_t len)
{
    if (k->used + len > k->cap) {
        size_t cap = (k->used + len) * 2;
        char *data = realloc(k->data, cap);
        if (data == NULL)
            return NULL;
        k->data = data;
        k->cap = cap;
    }
    return k->data + k->used;
}

int group_split_line(struct group_split *s, const char *line, size_t len,
                     struct key_buffer *keys, size_t *key_len, const char **item,
                     size_t *item_len)
{
    const struct group_options *o = s->o;
    const char **at = s->at;
    size_t *lens = s->lens;
    unsigned have = s->need ? split_fields(&o->split, line, len, s->need, at, lens) : 0;
    s->lines++;

    size_t need = 0;
    for (unsigned i = 0; i < o->nby; i++) {
        if (o->by[i] > have) {
            s->missing++;
            return 1;
        }
        need += lens[o->by[i] - 1] + 1;
    }
    if (o->split.field > have) {
        s->missing++;
        return 1;
    }
    uint8_t window[WINDOW_BYTES];
    if (o->time_field != 0) {
        int64_t t;
        unsigned f = o->time_field;
        int ok = f <= have && parse_time(at[f - 1], lens[f - 1], f < have ? at[f] : NULL,
                                         f < have ? lens[f] : 0, &t);
        if (!ok) {
            if (s->bad_time++ == 0) {
                size_t n = f <= have ? lens[f - 1] : len;
                const char *p = f <= have ? at[f - 1] : line;
                n = n < BAD_SAMPLE ? n : BAD_SAMPLE;
                memcpy(s->bad_sample, p, n);
                s->bad_sample[n] = '\0';
            }
            return 1;
        }
        uint64_t u = (uint64_t)window_start(t, o->every) ^ (UINT64_C(1) << 63);
        for (int i = 0; i < WINDOW_BYTES; i++)
            window[i] = (uint8_t)(u >> (56 - 8 * i));
        need += WINDOW_BYTES;
    }
    char *key = key_room(keys, need + 1);
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
    *key_len = k;
    if (o->split.field != 0) {
        *item = at[o->split.field - 1];
        *item_len = lens[o->split.field - 1];
    } else {
        *item = line;
        *item_len = len;
    }
    return 0;
}

void group_split_warn(const struct group_options *o, struct group_split *const *splits,
                      int count)
{
    uint64_t lines = 0, missing = 0, bad_time = 0;
    const char *sample = NULL;
    for (int t = 0; t < count; t++) {
        lines += splits[t]->lines;
        missing += splits[t]->missing;
        if (splits[t]->bad_time != 0 && sample == NULL)
            sample = splits[t]->bad_sample;
        bad_time += splits[t]->bad_time;
    }
    if (bad_time != 0)
        warn("%llu of %llu lines have no time in field %u that can be read (for example "
             "'%s'); they are not counted", (unsigned long long)bad_time,
             (unsigned long long)lines, o->time_field, sample);
    if (missing != 0)
        warn("%llu of %llu lines have fewer fields than asked for; they are not counted",
             (unsigned long long)missing, (unsigned long long)lines);
}

/* ---- output ------------------------------------------------------------- */

int64_t key_window(const void *key)
{
    const uint8_t *p = key;
    uint64_t u = 0;
    for (int i = 0; i < WINDOW_BYTES; i++)
        u = u << 8 | p[i];
    return (int64_t)(u ^ (UINT64_C(1) << 63));
}

void put_csv_field(const char *s, size_t n)
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

void print_group_header(const struct group_options *o)
{
    if (o->format == FORMAT_CSV) {
        if (o->time_field != 0)
            printf("window,");
        for (unsigned i = 0; i < o->nby; i++)
            printf("field%u,", o->by[i]);
    } else if (o->format == FORMAT_JSON) {
        printf("[");
    }
}

void print_group_key(const struct group_options *o, const void *key, size_t key_len)
{
    const char *p = key, *end = p + key_len;
    char when[TIME_TEXT_SIZE] = "";
    if (o->time_field != 0) {
        format_time(key_window(key), when);
        p += WINDOW_BYTES;
    }
    char sep = group_separator(o);
    if (o->format == FORMAT_JSON) {
        if (o->time_field != 0)
            printf("\"window\": \"%s\", ", when);
        if (o->nby == 1) {
            printf("\"group\": ");
            json_string(stdout, p, (size_t)(end - p));
            printf(", ");
        } else if (o->nby > 1) {
            printf("\"group\": [");
            for (unsigned i = 0; i < o->nby; i++) {
                const char *q = i + 1 < o->nby ? memchr(p, sep, (size_t)(end - p)) : end;
                json_string(stdout, p, (size_t)(q - p));
                printf(i + 1 < o->nby ? ", " : "], ");
                p = q + 1;
            }
        }
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
}
