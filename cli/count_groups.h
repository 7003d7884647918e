/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_groups.h: `sketch count --by FIELDS` and `--time FIELD --every D`:
 * a distinct count per group, per time window, or per group within each
 * window, in one pass over the input, on every core (count_groups.c).
 */
#ifndef SKETCH_CLI_COUNT_GROUPS_H
#define SKETCH_CLI_COUNT_GROUPS_H

#include <stdint.h>

#include "fields.h"
#include "lines.h"

#define MAX_BY_FIELDS 16

enum group_sort { SORT_GROUP, SORT_COUNT };
enum group_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

struct group_options {
    unsigned precision;
    struct field_spec split;    /* the delimiter or -w; split.field is what is counted */
    unsigned by[MAX_BY_FIELDS]; /* fields from 1 */
    unsigned nby;
    unsigned time_field;        /* 0: no windows */
    int64_t every;              /* seconds */
    enum group_sort sort;
    uint64_t top;               /* 0: every group */
    enum group_format format;
    int verbose;
    const char *output;         /* -o: the group file to save, or NULL */
};

/* Parses the list of --by ("1,3"); dies on a bad one. */
void parse_by_fields(const char *text, struct group_options *o);

/* Reads the inputs and prints a count per group; returns the exit status. */
int count_groups(struct input *inputs, int count, int threads, const struct group_options *o,
                 struct progress *progress);

#endif
