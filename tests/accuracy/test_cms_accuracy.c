/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cms_accuracy.c: the count-min sketch against its theory, with cmocka.
 *
 * - Each row spreads items evenly: the counts of a row, after n distinct
 *   items, pass a chi-square test of uniformity (w - 1 degrees of freedom,
 *   within 5 standard deviations of its mean).
 * - The rows are independent: an item never added reads 0 unless the cell
 *   of every row is occupied, which for independent rows happens with
 *   probability the product of the rows' occupied fractions. Over 200,000
 *   such items the share that reads more than 0 is within 5 binomial
 *   standard deviations of that product; rows sharing a hash would give
 *   one row's fraction, tens of deviations away.
 * - The guarantee: on a Zipf stream (s = 1, 100,000 items, 1,000,000
 *   adds), no estimate is below the truth, and with w and d from
 *   (error, delta) the share of items whose estimate passes the truth by
 *   more than error x N is at most delta (with 5 binomial deviations of
 *   slack). One row alone fails for several percent of the items here, so
 *   rows that were not independent would fail it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

static size_t item_name(char *buf, const char *prefix, uint64_t i)
{
    return (size_t)snprintf(buf, 32, "%s%llu", prefix, (unsigned long long)i);
}

/* The sketch's counters, read from its serialized form. */
static uint8_t *counters_of(const sk_cms *c, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_cms_serialized_size(c, &size), SK_OK);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(sk_cms_serialize(c, buf, (size_t)size, len), SK_OK);
    return buf;
}

static sk_cms *sketch_of_distinct(uint32_t width, uint32_t depth, uint64_t distinct)
{
    sk_cms *c;
    assert_int_equal(sk_cms_new(&c, width, depth), SK_OK);
    char name[32];
    for (uint64_t i = 0; i < distinct; i++)
        assert_int_equal(sk_cms_add(c, name, item_name(name, "in", i), 1, NULL), SK_OK);
    return c;
}

static uint32_t counter(const uint8_t *buf, uint32_t width, uint32_t row, uint32_t i)
{
    return sk_load_le32(buf + SK_CMS_HEADER_SIZE + ((size_t)row * width + i) * 4);
}

/* 20 items per counter, where the chi-square statistic is near its
 * asymptotic law. */
static void test_rows_uniform(void **state)
{
    const uint32_t width = 1000, depth = 4;
    const uint64_t distinct = 20000;
    sk_cms *c = sketch_of_distinct(width, depth, distinct);
    size_t len;
    uint8_t *buf = counters_of(c, &len);
    for (uint32_t r = 0; r < depth; r++) {
        double expected = (double)distinct / width, chi2 = 0, dof = width - 1;
        for (uint32_t i = 0; i < width; i++) {
            double v = counter(buf, width, r, i);
            chi2 += (v - expected) * (v - expected) / expected;
        }
        printf("row %u: chi-square %.1f (mean %.0f, sd %.1f)\n", r, chi2, dof, sqrt(2 * dof));
        assert_true(fabs(chi2 - dof) < 5 * sqrt(2 * dof));
    }
    free(buf);
    sk_cms_free(c);
}

/* One item per counter on average, where about 63% of a row's cells are
 * occupied and the product over rows is far from any single row's. */
static void test_rows_independent(void **state)
{
    const uint32_t width = 1000, depth = 4;
    sk_cms *c = sketch_of_distinct(width, depth, 1000);
    size_t len;
    uint8_t *buf = counters_of(c, &len);
    double predicted = 1;
    for (uint32_t r = 0; r < depth; r++) {
        uint32_t occupied = 0;
        for (uint32_t i = 0; i < width; i++)
            occupied += counter(buf, width, r, i) > 0;
        predicted *= (double)occupied / width;
    }
    free(buf);

    const uint64_t absent = 200000;
    uint64_t nonzero = 0;
    char name[32];
    for (uint64_t i = 0; i < absent; i++)
        nonzero += sk_cms_count(c, name, item_name(name, "out", i)) > 0;
    double share = (double)nonzero / absent;
    double sd = sqrt(predicted * (1 - predicted) / absent);
    printf("items never added that read > 0: %.4f, independent rows predict %.4f (sd %.4f)\n",
           share, predicted, sd);
    assert_true(fabs(share - predicted) < 5 * sd);
    sk_cms_free(c);
}

/* Draws of a Zipf(1) distribution over n items, by its inverse CDF. */
static uint32_t zipf_draw(const double *cdf, uint32_t n, uint64_t *seed)
{
    double u = (double)(splitmix64(seed) >> 11) * 0x1p-53;
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double share_past_bound(const sk_cms *c, const uint32_t *truth, uint32_t n, double bound,
                               uint64_t *below)
{
    char name[32];
    uint64_t past = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t estimate = sk_cms_count(c, name, item_name(name, "z", i));
        *below += estimate < truth[i];
        past += estimate > truth[i] + bound;
    }
    return (double)past / n;
}

static void test_guarantee_on_a_zipf_stream(void **state)
{
    const uint32_t n = 100000;
    const uint64_t adds = 1000000;
    const double error = 0.01, delta = 0.01;
    double *cdf = malloc(n * sizeof *cdf);
    uint32_t *truth = calloc(n, sizeof *truth);
    assert_non_null(cdf);
    assert_non_null(truth);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        cdf[i] = sum += 1.0 / (i + 1);
    for (uint32_t i = 0; i < n; i++)
        cdf[i] /= sum;

    sk_cms *c, *one_row;
    assert_int_equal(sk_cms_create(&c, &(sk_cms_options){.error = error, .delta = delta}), SK_OK);
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    assert_int_equal(sk_cms_new(&one_row, info.width, 1), SK_OK);
    uint64_t seed = 42;
    char name[32];
    for (uint64_t a = 0; a < adds; a++) {
        uint32_t i = zipf_draw(cdf, n, &seed);
        size_t len = item_name(name, "z", i);
        truth[i]++;
        assert_int_equal(sk_cms_add(c, name, len, 1, NULL), SK_OK);
        assert_int_equal(sk_cms_add(one_row, name, len, 1, NULL), SK_OK);
    }

    uint64_t below = 0;
    double bound = error * (double)adds;
    double share = share_past_bound(c, truth, n, bound, &below);
    double single = share_past_bound(one_row, truth, n, bound, &below);
    double slack = 5 * sqrt(delta * (1 - delta) / n);
    printf("w = %u, d = %u: share past error x N = %.5f (delta %.2f); one row: %.4f\n",
           info.width, info.depth, share, delta, single);
    assert_int_equal(below, 0);
    assert_true(share <= delta + slack);
    /* The stream is hard enough that the test could fail: one row alone
     * passes the bound for more than delta of the items. */
    assert_true(single > delta + slack);
    sk_cms_free(c);
    sk_cms_free(one_row);
    free(cdf);
    free(truth);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_uniform),
        cmocka_unit_test(test_rows_independent),
        cmocka_unit_test(test_guarantee_on_a_zipf_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
