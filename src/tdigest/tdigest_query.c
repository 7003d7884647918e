/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_query.c: what a t-digest answers: quantiles, the CDF, ranks,
 * values by rank and trimmed means, each read off the centroids of a
 * compressed digest (tdigest.c explains them).
 *
 * A centroid of weight w is taken to spread its weight evenly over half
 * the distance to each neighbour's mean, except that a centroid of weight 1
 * is one value exactly at its mean, and that one value lies exactly at the
 * minimum and one at the maximum. Ranks between two means are then a
 * linear interpolation, and quantiles its inverse. Every formula, branch
 * and rounding is RedisBloom's, in its order, so that both answer the same
 * to the bit: its TDIGEST.QUANTILE reads through td_quantiles (no special
 * case below rank 1), its BYRANK through td_quantile (the minimum there),
 * and this file keeps both.
 */
#include <math.h>

#include "tdigest_internal.h"

/* The comparisons of RedisBloom's max and min macros, which differ from
 * fmax and fmin on NaN and signed zeros. */
static double larger(double x, double y)
{
    return x > y ? x : y;
}

static double smaller(double x, double y)
{
    return x < y ? x : y;
}

/* x1 and x2 weighted, kept within [x1, x2] against rounding. */
static double weighted_average_sorted(double x1, double w1, double x2, double w2)
{
    double x = (x1 * w1 + x2 * w2) / (w1 + w2);
    return larger(x1, smaller(x, x2));
}

static double weighted_average(double x1, double w1, double x2, double w2)
{
    return x1 <= x2 ? weighted_average_sorted(x1, w1, x2, w2)
                    : weighted_average_sorted(x2, w2, x1, w1);
}

/* ---- the CDF -------------------------------------------------------------- */

/* The fraction of the weight below x plus half of that at x. */
static double cdf_of(const sk_tdigest *t, double x)
{
    uint32_t n = t->merged;
    if (n == 0)
        return NAN;
    if (x < t->min)
        return 0;
    if (x > t->max)
        return 1;
    if (n == 1)
        return x - t->min <= t->max - t->min ? 0.5 : (x - t->min) / (t->max - t->min);
    double total = (double)t->merged_weight;
    double first_mean = t->mean[0], first_weight = (double)t->weight[0];
    if (x < first_mean) {
        /* between the minimum (one value) and the first mean */
        double width = first_mean - t->min;
        if (width <= 0)
            return 0;
        if (x == t->min)
            return 0.5 / total;
        return (1 + (x - t->min) / width * (first_weight / 2 - 1)) / total;
    }
    double last_mean = t->mean[n - 1], last_weight = (double)t->weight[n - 1];
    if (x > last_mean) {
        double width = t->max - last_mean;
        if (width <= 0)
            return 1;
        if (x == t->max)
            return 1 - 0.5 / total;
        return 1 - (1 + (t->max - x) / width * (last_weight / 2 - 1)) / total;
    }
    double before = 0; /* the weight of the centroids left of i */
    for (uint32_t i = 0; i < n - 1; i++) {
        if (t->mean[i] == x) {
            double at = 0; /* centroids exactly at x count as one */
            while (i < n && t->mean[i] == x)
                at += (double)t->weight[i++];
            return (before + at / 2) / total;
        }
        if (t->mean[i] <= x && x < t->mean[i + 1]) {
            double w = (double)t->weight[i], w_next = (double)t->weight[i + 1];
            double m = t->mean[i], m_next = t->mean[i + 1];
            if (m_next - m <= 0)
                return (before + (w + w_next) / 2) / total;
            /* a singleton's weight sits at its mean, outside the span */
            double left_out = 0, right_out = 0;
            if (w == 1) {
                if (w_next == 1)
                    return (before + 1) / total;
                left_out = 0.5;
            } else if (w_next == 1) {
                right_out = 0.5;
            }
            double span = (w + w_next) / 2 - left_out - right_out;
            double base = before + w / 2 + left_out;
            return (base + span * (x - m) / (m_next - m)) / total;
        }
        before += (double)t->weight[i];
    }
    return 1 - 0.5 / total;
}

/* ---- quantiles ------------------------------------------------------------ */

/* Where the walk between centroids stands: the weight up to the middle of
 * centroid *pos. Sorted indexes continue from where the last one stopped. */
struct cursor {
    double before;
    uint32_t pos;
};

static void cursor_start(const sk_tdigest *t, struct cursor *c)
{
    c->before = (double)t->weight[0] / 2;
    c->pos = 0;
}

/* The value at rank `index` (0..total) of a digest of two centroids or more. */
static double value_at(const sk_tdigest *t, double index, struct cursor *c)
{
    uint32_t n = t->merged;
    double total = (double)t->merged_weight;
    double first_weight = (double)t->weight[0];
    if (first_weight > 1 && index < first_weight / 2)
        return t->min + (index - 1) / (first_weight / 2 - 1) * (t->mean[0] - t->min);
    if (index > (double)(t->merged_weight - 1))
        return t->max;
    double last_weight = (double)t->weight[n - 1], last_mean = t->mean[n - 1];
    if (last_weight > 1 && total - index <= last_weight / 2)
        return t->max - (total - index - 1) / (last_weight / 2 - 1) * (t->max - last_mean);
    for (; c->pos < n - 1; c->pos++) {
        uint32_t i = c->pos;
        double w = (double)t->weight[i], w_next = (double)t->weight[i + 1];
        double half_span = (w + w_next) / 2;
        if (c->before + half_span > index) {
            double left_unit = 0, right_unit = 0;
            if (w == 1) {
                if (index - c->before < 0.5)
                    return t->mean[i];
                left_unit = 0.5;
            }
            if (w_next == 1) {
                if (c->before + half_span - index <= 0.5)
                    return t->mean[i + 1];
                right_unit = 0.5;
            }
            double z1 = index - c->before - left_unit;
            double z2 = c->before + half_span - index - right_unit;
            return weighted_average(t->mean[i], z2, t->mean[i + 1], z1);
        }
        c->before += half_span;
    }
    double z1 = index - total - last_weight / 2.0;
    double z2 = last_weight / 2 - z1;
    return weighted_average(last_mean, z1, t->max, z2);
}

/* td_quantile: below rank 1, the minimum. */
static double quantile_single(const sk_tdigest *t, double q)
{
    if (q < 0 || q > 1 || t->merged == 0)
        return NAN;
    if (t->merged == 1)
        return t->mean[0];
    double index = q * (double)t->merged_weight;
    if (index < 1)
        return t->min;
    struct cursor c;
    cursor_start(t, &c);
    return value_at(t, index, &c);
}

int sk_tdigest_quantiles(const sk_tdigest *t, const double *q, double *out, size_t n)
{
    if (t == NULL || (n > 0 && (q == NULL || out == NULL)))
        return SK_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(q[i] >= 0 && q[i] <= 1))
            return SK_EINVAL;
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    struct cursor c = {0};
    for (size_t i = 0; i < n; i++) {
        if (v->merged == 0) {
            out[i] = NAN;
        } else if (v->merged == 1) {
            out[i] = v->mean[0];
        } else {
            if (i == 0 || q[i] < q[i - 1])
                cursor_start(v, &c);
            out[i] = value_at(v, q[i] * (double)v->merged_weight, &c);
        }
    }
    sk_tdigest_free(copy);
    return SK_OK;
}

int sk_tdigest_cdf(const sk_tdigest *t, const double *x, double *out, size_t n)
{
    if (t == NULL || (n > 0 && (x == NULL || out == NULL)))
        return SK_EINVAL;
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        out[i] = cdf_of(v, x[i]);
    sk_tdigest_free(copy);
    return SK_OK;
}

/* ---- ranks ---------------------------------------------------------------- */

/* Rounds halves toward zero, as TDIGEST.RANK does. */
static double round_half_down(double f)
{
    double whole;
    double fraction = modf(f, &whole);
    if (fabs(fraction) <= 0.5)
        return whole;
    return whole >= 0.0 ? whole + 1.0 : whole - 1.0;
}

/* A rank as TDIGEST.RANK replies it: NaN (a lone value of weight 1 has no
 * CDF) and ranks past 2^63 (of a corrupt digest whose centroids outweigh
 * its total) as x86 converts them, INT64_MIN, where C leaves it undefined. */
static int64_t rank_to_int(double rank)
{
    return rank >= -9223372036854775808.0 && rank < 9223372036854775808.0 ? (int64_t)rank
                                                                          : INT64_MIN;
}

int sk_tdigest_rank(const sk_tdigest *t, const double *x, int64_t *out, size_t n, int reverse)
{
    if (t == NULL || (n > 0 && (x == NULL || out == NULL)))
        return SK_EINVAL;
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    double size = (double)(t->merged_weight + t->unmerged_weight);
    for (size_t i = 0; i < n; i++) {
        double rank;
        if (size == 0) {
            rank = -2;
        } else if (x[i] < t->min) {
            rank = reverse ? size : -1;
        } else if (x[i] > t->max) {
            rank = reverse ? -1 : size;
        } else {
            double below = cdf_of(v, x[i]) * size;
            rank = reverse ? round(size - round(below)) : round_half_down(below);
        }
        out[i] = rank_to_int(rank);
    }
    sk_tdigest_free(copy);
    return SK_OK;
}

int sk_tdigest_by_rank(const sk_tdigest *t, const int64_t *r, double *out, size_t n, int reverse)
{
    if (t == NULL || (n > 0 && (r == NULL || out == NULL)))
        return SK_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (r[i] < 0)
            return SK_EINVAL;
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    double size = (double)(t->merged_weight + t->unmerged_weight);
    for (size_t i = 0; i < n; i++) {
        double rank = (double)r[i];
        if (size == 0)
            out[i] = NAN;
        else if (rank == 0)
            out[i] = reverse ? t->max : t->min;
        else if (rank >= size)
            out[i] = reverse ? -INFINITY : INFINITY;
        else
            out[i] = quantile_single(v, (reverse ? size - rank - 1 : rank) / size);
    }
    sk_tdigest_free(copy);
    return SK_OK;
}

/* ---- trimmed means -------------------------------------------------------- */

int sk_tdigest_trimmed_mean(const sk_tdigest *t, double lo, double hi, double *out)
{
    if (t == NULL || out == NULL || !(lo >= 0 && lo < hi && hi <= 1))
        return SK_EINVAL;
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    if (v->merged == 0) {
        *out = NAN;
    } else if (v->merged == 1) {
        *out = v->mean[0];
    } else {
        double from = floor((double)v->merged_weight * lo);
        double to = ceil((double)v->merged_weight * hi);
        double done = 0, sum = 0, count = 0;
        for (uint32_t i = 0; i < v->merged; i++) {
            double w = (double)v->weight[i];
            double in = w - smaller(larger(0, from - done), w); /* the part past the low cut */
            in = smaller(larger(0, to - done), in);             /* and before the high one */
            done += w;
            sum += v->mean[i] * in;
            count += in;
            if (done >= to)
                break;
        }
        *out = sum / count;
    }
    sk_tdigest_free(copy);
    return SK_OK;
}
