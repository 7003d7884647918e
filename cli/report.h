/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.h: what info, count -v and check -c print: "name: value" lines for
 * people, or with --json one JSON object on standard output for programs,
 * from the same calls, so that the two cannot say different things.
 */
#ifndef SKETCH_CLI_REPORT_H
#define SKETCH_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sketch.h"

struct report {
    FILE *out;
    int json;
    int fields; /* written so far, for JSON's commas */
};

/* Starts a report on out (JSON always goes to standard output). */
void report_begin(struct report *r, FILE *out, int json);
void report_end(struct report *r);

/* One field; its JSON name is the text name with blanks as '_'. `text` is
 * how people see the value when it differs from the number ("12.3 MiB"). */
void report_uint(struct report *r, const char *name, uint64_t value);
void report_double(struct report *r, const char *name, const char *text_format, double value);
void report_string(struct report *r, const char *name, const char *value);
void report_bytes(struct report *r, const char *name, double bytes);

/* Bytes as a JSON string, quotes, backslashes and control bytes escaped
 * (other bytes pass through: UTF-8 stays UTF-8). */
void json_string(FILE *out, const char *s, size_t n);

/* The estimate of h with its precision, standard error and bounds at 1, 2
 * and 3 standard deviations. */
void report_estimate(struct report *r, const sk_hll *h);

#endif
