/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fields.h: the one way the command splits a line into fields, for -f N
 * (count, bloom add, bloom check) and for --by and --time (count_groups.c):
 * by one delimiter byte (-d, default tab), or with -w by runs of blanks as
 * awk splits by default (leading and trailing blanks ignored).
 *
 * With a delimiter, every line has at least one field (an empty line, one
 * empty field) and n delimiters make n + 1 fields; with -w, a line of
 * blanks has none.
 */
#ifndef SKETCH_CLI_FIELDS_H
#define SKETCH_CLI_FIELDS_H

#include <getopt.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

struct field_spec {
    unsigned field; /* from 1; 0: the whole line */
    char delimiter;
    int whitespace;
};

/* Where the splitting of one line has got to. */
struct field_cursor {
    const char *p;   /* the start of the next field; NULL after the last (delimiter) */
    const char *end; /* of the line */
};

static inline int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static inline struct field_cursor fields_of(const char *line, size_t len)
{
    return (struct field_cursor){line, line + len};
}

/* The next field of a line split by runs of blanks: 1 with [*at, *at +
 * *len), or 0 past the last. Each field is found by a scan (or memchr,
 * below) of the bytes after the one before, so a line is read once however
 * many of its fields are wanted. */
static inline int next_blank_field(struct field_cursor *c, const char **at, size_t *len)
{
    const char *p = c->p, *end = c->end;
    while (p < end && is_blank(*p))
        p++;
    const char *q = p;
    while (q < end && !is_blank(*q))
        q++;
    c->p = q;
    *at = p;
    *len = (size_t)(q - p);
    return p < end;
}

/* The next field of a line split by the byte delim, as next_blank_field. */
static inline int next_delimited_field(char delim, struct field_cursor *c, const char **at,
                                       size_t *len)
{
    const char *p = c->p;
    if (p == NULL)
        return 0;
    const char *d = memchr(p, delim, (size_t)(c->end - p));
    *at = p;
    if (d != NULL) {
        *len = (size_t)(d - p);
        c->p = d + 1;
    } else {
        *len = (size_t)(c->end - p);
        c->p = NULL;
    }
    return 1;
}

/* Fields 1..n of a line into at[] and lens[]: how many there are, up to n.
 * (The way of splitting is chosen once a line, not once a field.) */
static inline unsigned split_fields(const struct field_spec *fs, const char *line, size_t len,
                                    unsigned n, const char **at, size_t *lens)
{
    struct field_cursor c = fields_of(line, len);
    unsigned i = 0;
    if (fs->whitespace)
        while (i < n && next_blank_field(&c, &at[i], &lens[i]))
            i++;
    else
        while (i < n && next_delimited_field(fs->delimiter, &c, &at[i], &lens[i]))
            i++;
    return i;
}

/* Narrows [*item, *item + *len) to field fs->field (the whole line for 0);
 * 0, leaving it as it was, if the line has fewer fields. */
static inline int select_field(const struct field_spec *fs, const char **item, size_t *len)
{
    unsigned left = fs->field;
    if (left == 0)
        return 1;
    struct field_cursor c = fields_of(*item, *len);
    const char *at;
    size_t n;
    if (fs->whitespace) {
        while (next_blank_field(&c, &at, &n))
            if (--left == 0)
                goto found;
    } else {
        while (next_delimited_field(fs->delimiter, &c, &at, &n))
            if (--left == 0)
                goto found;
    }
    return 0;
found:
    *item = at;
    *len = n;
    return 1;
}

/* The long names of -f, -d and -w, for a table of getopt_long's options. */
#define FIELD_LONG_OPTIONS                                                                        \
    {"field", required_argument, NULL, 'f'}, {"delimiter", required_argument, NULL, 'd'},        \
        {"whitespace", no_argument, NULL, 'w'}

/* Takes -f N, -d C and -w for the subcommand cmd; 1 if c was one of them. */
static inline int field_option(struct field_spec *fs, int c, const char *value, const char *cmd)
{
    switch (c) {
    case 'f':
        fs->field = (unsigned)parse_uint(value, "field", 1, 1u << 30);
        return 1;
    case 'd':
        if (strlen(value) != 1)
            die_usage(cmd, "the delimiter must be exactly one byte, not '%s'", value);
        fs->delimiter = value[0];
        return 1;
    case 'w':
        fs->whitespace = 1;
        return 1;
    }
    return 0;
}

#endif
