/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * timestamps.c: times of log lines and the windows they fall in (see
 * timestamps.h).
 *
 * Calendar dates become days since the epoch by the proleptic Gregorian
 * calendar, counted in eras of 400 years (146097 days), which repeat
 * exactly: within an era, with the year starting in March so that the leap
 * day comes last, the day of the year is (153 m + 2) / 5 + d - 1 for month
 * m counted from March = 0.
 */
#include "timestamps.h"

#include <stdio.h>
#include <string.h>

/* Days from 1970-01-01 to the date (month 1..12). */
static int64_t days_from_civil(int64_t y, unsigned month, unsigned day)
{
    y -= month <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);                       /* 0..399 */
    unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* 0..146096 */
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *month, unsigned *day)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *day = doy - (153 * mp + 2) / 5 + 1;
    *month = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*month <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned month)
{
    static const unsigned days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(y) ? 29 : days[month - 1];
}

/* A cursor over the bytes of a field. */
struct text {
    const char *p, *end;
};

static int digits(struct text *t, unsigned n, unsigned *out)
{
    if (t->end - t->p < (ptrdiff_t)n)
        return 0;
    unsigned v = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t->p[i] < '0' || t->p[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(t->p[i] - '0');
    }
    t->p += n;
    *out = v;
    return 1;
}

static int take(struct text *t, char c)
{
    if (t->p < t->end && *t->p == c) {
        t->p++;
        return 1;
    }
    return 0;
}

static int at_end(const struct text *t)
{
    return t->p == t->end;
}

/* Z, +HH, +HH:MM or +HHMM (or -): the zone's offset east of UTC in seconds. */
static int zone(struct text *t, int64_t *offset)
{
    if (take(t, 'Z')) {
        *offset = 0;
        return 1;
    }
    int sign = take(t, '+') ? 1 : take(t, '-') ? -1 : 0;
    unsigned h, m = 0;
    if (sign == 0 || !digits(t, 2, &h))
        return 0;
    if (take(t, ':')) {
        if (!digits(t, 2, &m))
            return 0;
    } else if (!at_end(t) && *t->p != ']') {
        if (!digits(t, 2, &m))
            return 0;
    }
    if (h > 23 || m > 59)
        return 0;
    *offset = sign * (int64_t)(h * 3600 + m * 60);
    return 1;
}

/* HH:MM[:SS[.fraction]]: seconds since midnight. */
static int clock_time(struct text *t, int64_t *seconds)
{
    unsigned h, m, s = 0;
    if (!digits(t, 2, &h) || !take(t, ':') || !digits(t, 2, &m))
        return 0;
    if (take(t, ':')) {
        if (!digits(t, 2, &s))
            return 0;
        if (take(t, '.') || take(t, ',')) {
            unsigned d;
            if (!digits(t, 1, &d))
                return 0;
            while (!at_end(t) && *t->p >= '0' && *t->p <= '9')
                t->p++;
        }
    }
    if (h > 23 || m > 59 || s > 60)
        return 0;
    *seconds = (int64_t)h * 3600 + m * 60 + s;
    return 1;
}

static int epoch(struct text t, int64_t *seconds)
{
    uint64_t v = 0;
    unsigned n = 0;
    for (; !at_end(&t) && *t.p >= '0' && *t.p <= '9'; t.p++, n++) {
        if (n == 18)
            return 0;
        v = v * 10 + (uint64_t)(*t.p - '0');
    }
    if (n == 0)
        return 0;
    if (take(&t, '.')) {
        unsigned frac = 0;
        while (!at_end(&t) && *t.p >= '0' && *t.p <= '9')
            t.p++, frac++;
        if (frac == 0)
            return 0;
    }
    if (!at_end(&t))
        return 0;
    *seconds = (int64_t)(v >= UINT64_C(100000000000) ? v / 1000 : v);
    return 1;
}

/* YYYY-MM-DD[(T| )time[zone]]; the clock time may be in `next`. */
static int iso8601(struct text t, struct text next, int64_t *seconds)
{
    unsigned y, mo, d;
    if (!digits(&t, 4, &y) || !take(&t, '-') || !digits(&t, 2, &mo) || !take(&t, '-') ||
        !digits(&t, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return 0;
    int64_t day = days_from_civil(y, mo, d) * 86400, clock = 0, offset = 0;
    if (at_end(&t)) {
        /* A date alone, or a date whose clock time the split put next. */
        struct text n = next;
        if (n.p != NULL && clock_time(&n, &clock) && (at_end(&n) || zone(&n, &offset)) &&
            at_end(&n)) {
            *seconds = day + clock - offset;
            return 1;
        }
        *seconds = day;
        return 1;
    }
    if (!take(&t, 'T') && !take(&t, 't') && !take(&t, ' '))
        return 0;
    if (!clock_time(&t, &clock))
        return 0;
    if (!at_end(&t) && !zone(&t, &offset))
        return 0;
    if (!at_end(&t))
        return 0;
    *seconds = day + clock - offset;
    return 1;
}

/* [DD/Mon/YYYY:HH:MM:SS ±HHMM]; the zone may be in `next`. */
static int log_time(struct text t, struct text next, int64_t *seconds)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int bracket = take(&t, '[');
    unsigned d, y, mo = 0;
    if (!digits(&t, 2, &d) || !take(&t, '/') || t.end - t.p < 4)
        return 0;
    for (unsigned i = 0; i < 12; i++)
        if (memcmp(t.p, months + 3 * i, 3) == 0)
            mo = i + 1;
    if (mo == 0)
        return 0;
    t.p += 3;
    int64_t clock, offset = 0;
    if (!take(&t, '/') || !digits(&t, 4, &y) || !take(&t, ':') || !clock_time(&t, &clock) ||
        d < 1 || d > days_in_month(y, mo))
        return 0;
    if (take(&t, ' ')) {
        if (!zone(&t, &offset))
            return 0;
    } else if (at_end(&t) && next.p != NULL) {
        /* Split on spaces: the zone and the closing bracket are next. */
        struct text n = next;
        if (zone(&n, &offset) && (!bracket || take(&n, ']')) && at_end(&n))
            bracket = 0;
        else
            offset = 0;
    }
    if (bracket)
        take(&t, ']');
    if (!at_end(&t))
        return 0;
    *seconds = days_from_civil(y, mo, d) * 86400 + clock - offset;
    return 1;
}

int parse_time(const char *field, size_t len, const char *next, size_t next_len,
               int64_t *seconds)
{
    struct text t = {field, field + len};
    struct text n = {next, next != NULL ? next + next_len : NULL};
    if (len == 0)
        return 0;
    if (field[0] == '[')
        return log_time(t, n, seconds);
    if (len >= 10 && field[4] == '-')
        return iso8601(t, n, seconds);
    if (len >= 11 && field[2] == '/')
        return log_time(t, n, seconds);
    return epoch(t, seconds);
}

int64_t parse_duration(const char *text)
{
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > UINT64_C(1) << 40)
            return 0;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == text || v == 0 || *p == '\0' || p[1] != '\0')
        return 0;
    switch (*p) {
    case 's': return (int64_t)v;
    case 'm': return (int64_t)v * 60;
    case 'h': return (int64_t)v * 3600;
    case 'd': return (int64_t)v * 86400;
    default: return 0;
    }
}

int64_t window_start(int64_t t, int64_t every)
{
    int64_t q = t / every;
    if (t % every != 0 && t < 0)
        q--;
    return q * every;
}

void format_time(int64_t t, char *buf)
{
    int64_t days = window_start(t, 86400) / 86400, rest = t - days * 86400, y;
    unsigned month, day;
    civil_from_days(days, &y, &month, &day);
    snprintf(buf, TIME_TEXT_SIZE, "%04lld-%02u-%02uT%02u:%02u:%02uZ", (long long)y, month, day,
             (unsigned)(rest / 3600), (unsigned)(rest / 60 % 60), (unsigned)(rest % 60));
}
