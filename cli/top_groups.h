/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * top_groups.h: `sketch top`'s output of a frequent-items summary, and its
 * --by FIELDS and --time FIELD --every D: the top items per group, per
 * time window, or per group within each window, in one pass over the
 * input, on every core (top_groups.c).
 */
#ifndef SKETCH_CLI_TOP_GROUPS_H
#define SKETCH_CLI_TOP_GROUPS_H

#include <stdint.h>

#include "group_keys.h"
#include "lines.h"
#include "sketch.h"

/* Starts and ends the output (CSV header, JSON brackets). */
void top_print_begin(const struct group_options *o, int grouped);
void top_print_end(const struct group_options *o, int first);

/* Prints the o->top heaviest items of f, after the group's key when key
 * is not NULL; *first is 1 before the first row of all, for JSON's commas. */
void top_print(const struct group_options *o, const void *key, size_t key_len,
               const sk_frequent *f, int *first);

/* Dies with the message for a status an add or a merge returned. */
_Noreturn void top_die(int status);

/* Reads the inputs and prints the top items per group; returns the exit
 * status. */
int top_groups(struct input *inputs, int count, int threads, const struct group_options *o,
               struct progress *progress);

#endif
