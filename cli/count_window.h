/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_window.h: `sketch count --time N --window W --every S`, a sliding
 * distinct count (count_window.c): at each step T, a multiple of S seconds
 * since the epoch, the distinct items of the lines whose time t has
 * T - W <= t < T, in whole seconds (times are read to the second, rounded
 * down), per group with --by.
 *
 * The input is read in order on one thread and rows print as its time
 * passes each step: step T prints when a line of time T or later is read
 * (before that line is counted), and at the end of the input the step
 * after the newest time prints too. A line read after its step printed (a
 * late line) still counts in the rows to come whose windows hold it; a
 * line older than the window of the next step to print, t < T - W, is in
 * no row still to print, is counted nowhere, and is reported at the end.
 */
#ifndef SKETCH_CLI_COUNT_WINDOW_H
#define SKETCH_CLI_COUNT_WINDOW_H

#include <stdint.h>

#include "group_keys.h"
#include "inputs.h"
#include "sketch.h"

/* The longest --window: the library's most slots, at one second each. */
#define MAX_WINDOW_SECONDS ((int64_t)SK_WINDOW_HLL_MAX_SLOTS)

/* Reads the inputs and prints the rows as they come; o->every is the step,
 * o->time_field the time's field, `window` the window in seconds (checked
 * by the caller: 1..MAX_WINDOW_SECONDS, no shorter than the step). Returns
 * the exit status, or dies. */
int count_window(struct input *inputs, int count, const struct group_options *o, int64_t window);

#endif
