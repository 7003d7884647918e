/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_groups.h: `sketch count --by FIELDS` and `--time FIELD --every D`:
 * a distinct count per group, per time window, or per group within each
 * window, in one pass over the input, on every core (count_groups.c).
 */
#ifndef SKETCH_CLI_COUNT_GROUPS_H
#define SKETCH_CLI_COUNT_GROUPS_H

#include <stdint.h>

#include "group_keys.h"
#include "lines.h"

/* Reads the inputs and prints a count per group; returns the exit status. */
int count_groups(struct input *inputs, int count, int threads, const struct group_options *o,
                 struct progress *progress);

#endif
