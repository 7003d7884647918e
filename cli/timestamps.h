/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timestamps.h: the times that `sketch count --time` reads from a field,
 * and the windows of `--every` they fall in.
 *
 * A time is one of:
 *  - epoch seconds, digits with an optional fraction: 1700000000, 1700000000.25;
 *    values of 10^11 and more are epoch milliseconds (10^11 seconds is the
 *    year 5138): 1700000000123;
 *  - ISO 8601: 2023-11-14, 2023-11-14T22:13:20, with a space instead of the
 *    T, seconds optional, a fraction after them, and a zone Z, +HH, +HH:MM or
 *    +HHMM (or -); no zone is UTC;
 *  - the common and combined log formats of Apache and nginx:
 *    [10/Oct/2000:13:55:36 -0700], brackets optional.
 * A log split on spaces puts the zone of a log time, or the clock time of
 * an ISO 8601 date written with a space, in the next field: when the field
 * ends where such a time is not complete and the next field completes it,
 * the next field is read too.
 */
#ifndef SKETCH_CLI_TIMESTAMPS_H
#define SKETCH_CLI_TIMESTAMPS_H

#include <stddef.h>
#include <stdint.h>

/* Seconds since 1970-01-01T00:00:00Z (rounded down) of the time in
 * [field, field + len), completed by [next, next + next_len) if need be
 * (next may be NULL): 1, or 0 if it is no time. */
int parse_time(const char *field, size_t len, const char *next, size_t next_len,
               int64_t *seconds);

/* A duration of --every: a positive number and a unit, s, m, h or d
 * ("30s", "5m", "1h", "1d"); 0 if it is not one. */
int64_t parse_duration(const char *text);

/* The start of the window of `every` seconds that t falls in, windows being
 * aligned to the epoch (days start at 00:00 UTC). */
int64_t window_start(int64_t t, int64_t every);

/* t as ISO 8601 in UTC, "2000-10-10T20:55:00Z", into buf of at least
 * TIME_TEXT_SIZE bytes. */
#define TIME_TEXT_SIZE 64
void format_time(int64_t t, char *buf);

#endif
