/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * group_keys.h: what the commands that report per group and per time
 * window (`count --by/--time`, count_groups.c; `top --by/--time`,
 * top_groups.c) share (group_keys.c): the options, the parsing of --by,
 * the one key a line's group is known by, and how a key prints.
 *
 * A group's key is the window's start, when there are windows, as 8 bytes
 * in an order memcmp sorts by time (big-endian, sign bit flipped),
 * followed by the --by fields joined by the delimiter, which no field can
 * contain, so that two different groups never share a key; so keys sort
 * by window, then by group, bytewise.
 */
#ifndef SKETCH_CLI_GROUP_KEYS_H
#define SKETCH_CLI_GROUP_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "fields.h"

#define MAX_BY_FIELDS 16
#define WINDOW_BYTES 8
#define BAD_SAMPLE 60

enum group_sort { SORT_GROUP, SORT_COUNT };
enum group_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

struct group_options {
    unsigned precision;         /* count: of each group's HyperLogLog */
    struct field_spec split;    /* the delimiter or -w; split.field is what is counted */
    unsigned by[MAX_BY_FIELDS]; /* fields from 1 */
    unsigned nby;
    unsigned time_field;        /* 0: no windows */
    int64_t every;              /* seconds */
    enum group_sort sort;
    uint64_t top;               /* count: 0, every group; top: items per group */
    uint32_t counters;          /* top: of each group's summary */
    int bounds;                 /* top: lower and upper in the text */
    enum group_format format;
    int verbose;
    const char *output;         /* -o: the group file to save, or NULL */
};

/* Parses the list of --by ("1,3") for the subcommand cmd; dies on a bad one. */
void parse_by_fields(const char *cmd, const char *text, struct group_options *o);

/* A growing buffer of keys, one after another. */
struct key_buffer {
    char *data;
    size_t used, cap;
};

/* One thread's splitting of lines into (key, item), and what it skipped. */
struct group_split {
    const struct group_options *o;
    unsigned need; /* fields a line is split into */
    const char **at;
    size_t *lens;
    uint64_t lines, missing, bad_time;
    char bad_sample[BAD_SAMPLE + 1];
};
void group_split_init(struct group_split *s, const struct group_options *o); /* dies if OOM */
void group_split_free(struct group_split *s);

/* The line's key, written at keys->data + keys->used (which is not
 * advanced) with its length in *key_len, and its item (the line, or field
 * split.field): 0; 1 if the line lacks a field or a time and is skipped
 * (and counted as such); or SK_ENOMEM. */
int group_split_line(struct group_split *s, const char *line, size_t len,
                     struct key_buffer *keys, size_t *key_len, const char **item,
                     size_t *item_len);

/* The warnings of the skipped lines of every thread's split, summed. */
void group_split_warn(const struct group_options *o, struct group_split *const *splits,
                      int count);

/* Output: the columns of a group before its values. For text and CSV,
 * the window and fields, each followed by a tab or comma; for JSON, the
 * "window" and "group" members, each followed by ", ". The header prints
 * the CSV header's first columns, or JSON's '['. */
void print_group_header(const struct group_options *o);
void print_group_key(const struct group_options *o, const void *key, size_t key_len);
/* A CSV field, quoted when it must be. */
void put_csv_field(const char *s, size_t n);
/* The byte the fields of a key are joined by. */
char group_separator(const struct group_options *o);
/* The window's start of a key. */
int64_t key_window(const void *key);

#endif
