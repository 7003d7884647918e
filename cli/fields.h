/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fields.h: the field of a line that count, bloom add and bloom check read
 * with -f N, split by one delimiter byte (-d, default tab) or, with -w, by
 * runs of blanks as awk splits by default (leading blanks ignored).
 */
#ifndef SKETCH_CLI_FIELDS_H
#define SKETCH_CLI_FIELDS_H

#include <stddef.h>
#include <string.h>

#include "util.h"

struct field_spec {
    unsigned field; /* from 1; 0: the whole line */
    char delimiter;
    int whitespace;
};

static inline int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Narrows [*item, *item + *len) to the field; 0 if the line has fewer. */
static inline int select_field(const struct field_spec *fs, const char **item, size_t *len)
{
    if (fs->field == 0)
        return 1;
    const char *p = *item, *end = *item + *len;
    if (fs->whitespace) {
        for (unsigned i = 1;; i++) {
            while (p < end && is_blank(*p))
                p++;
            if (p == end)
                return 0;
            const char *q = p;
            while (q < end && !is_blank(*q))
                q++;
            if (i == fs->field) {
                *item = p;
                *len = (size_t)(q - p);
                return 1;
            }
            p = q;
        }
    }
    for (unsigned i = 1; i < fs->field; i++) {
        const char *d = memchr(p, fs->delimiter, (size_t)(end - p));
        if (d == NULL)
            return 0;
        p = d + 1;
    }
    const char *d = memchr(p, fs->delimiter, (size_t)(end - p));
    *item = p;
    *len = (size_t)((d != NULL ? d : end) - p);
    return 1;
}

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
