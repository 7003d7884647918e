/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hll_compare_accuracy.c: the joint estimate of two sketches
 * (sk_hll_compare) against the truth and against inclusion–exclusion.
 *
 * On a grid of set sizes (|A|, |B| from 10^3 to 10^7, equal and unequal)
 * and Jaccard indices J from 0.001 to 1, each trial builds A and B from
 * fresh random hashes with exactly |A n B| = J (|A| + |B|) / (1 + J) in
 * common, and compares them. Over the T trials of a point:
 *
 *   bias:      |mean error of |A n B|| <= SE/2 + 4 sd / sqrt(T), where SE
 *              is the mean standard error the estimate reports and sd the
 *              spread of its errors: unbiased within its standard error
 *              (an estimate held at 0 or above is biased upwards by a
 *              fraction of SE where the truth is near 0);
 *   coverage:  the truth lies within k reported standard errors (k = 1, 2,
 *              3) in at least the normal fraction of trials less four
 *              binomial standard deviations and 3 points (normal bounds on
 *              a few discrete registers);
 *   calibration: where J >= 0.01 the mean reported standard error is
 *              within [2/3, 3/2] of the RMSE (smaller J puts the estimate
 *              at its floor of 0 often enough to shrink the RMSE);
 *   precision: where |A n B| is below a tenth of the union, the RMSE of
 *              |A| + |B| - |A u B| on the same sketches is at least 1.3
 *              times the joint estimate's, and elsewhere the joint RMSE is
 *              at most 1.1 times inclusion–exclusion's (the same within the
 *              noise of T trials). One set inside the other counts as
 *              elsewhere: there A u B has the larger set's very registers,
 *              so inclusion–exclusion is the smaller set's own estimate,
 *              as good as any. The same bound holds for |A \ B| against
 *              |A u B| - |B|.
 *
 * An estimator that is inclusion–exclusion underneath fails the precision
 * bound; one whose likelihood has a wrong term is biased at the small
 * intersections; wrong curvature breaks the coverage or the calibration
 * (the Poisson model's own variance of the set sizes, left in, makes the
 * errors of sets small against m several times too wide). Trials are seeded, so
 * a failure reproduces exactly.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../common/test_util.h"

#include "sketch.h"

struct point {
    double a, b; /* |A|, |B| */
    int trials;
};

static const double JACCARD[] = {0.001, 0.01, 0.1, 0.5, 1};

struct tally {
    double err, err2, se, ie2, a_only2, a_only_ie2;
    int covered[3];
};

static void trial(unsigned p, uint64_t seed, double na, double nb, double nx, struct tally *t)
{
    sk_hll *a = NULL, *b = NULL, *u = NULL;
    assert_int_equal(sk_hll_new(&a, p), SK_OK);
    assert_int_equal(sk_hll_new(&b, p), SK_OK);
    /* ids [0, na) are A, [na - nx, na - nx + nb) are B */
    uint64_t base = splitmix64_of(seed) & ~((UINT64_C(1) << 32) - 1);
    uint64_t first_b = (uint64_t)(na - nx), end_b = (uint64_t)(na - nx + nb);
    for (uint64_t i = 0; i < end_b; i++) {
        uint64_t h = splitmix64_of(base + i);
        if (i < (uint64_t)na)
            assert_true(sk_hll_add_hash(a, h) >= 0);
        if (i >= first_b)
            assert_true(sk_hll_add_hash(b, h) >= 0);
    }
    sk_hll_comparison c;
    assert_int_equal(sk_hll_compare(a, b, &c), SK_OK);
    assert_int_equal(sk_hll_copy(&u, a), SK_OK);
    assert_int_equal(sk_hll_merge(u, b), SK_OK);
    double ca = (double)sk_hll_count(a), cb = (double)sk_hll_count(b);
    double cu = (double)sk_hll_count(u);
    double e = c.both.estimate - nx;
    t->err += e;
    t->err2 += e * e;
    t->se += c.both.standard_error;
    t->ie2 += (ca + cb - cu - nx) * (ca + cb - cu - nx);
    double ao = c.a_only.estimate - (na - nx), ao_ie = cu - cb - (na - nx);
    t->a_only2 += ao * ao;
    t->a_only_ie2 += ao_ie * ao_ie;
    for (int k = 0; k < 3; k++)
        t->covered[k] += c.both.lower[k] <= nx && nx <= c.both.upper[k];
    sk_hll_free(a);
    sk_hll_free(b);
    sk_hll_free(u);
}

static void check_point(unsigned p, const struct point *pt, double jaccard)
{
    double nx = floor(jaccard * (pt->a + pt->b) / (1 + jaccard) + 0.5);
    if (nx > pt->a || nx > pt->b)
        return; /* no such overlap */
    struct tally t = {0};
    int n = pt->trials;
    for (int i = 0; i < n; i++)
        trial(p, (uint64_t)i * 7919 + (uint64_t)(pt->a * 3 + pt->b) + (uint64_t)(jaccard * 1e6),
              pt->a, pt->b, nx, &t);
    double bias = t.err / n, rmse = sqrt(t.err2 / n), se = t.se / n;
    double sd = sqrt(fmax(t.err2 / n - bias * bias, 0));
    double ie = sqrt(t.ie2 / n);
    double a_only = sqrt(t.a_only2 / n), a_only_ie = sqrt(t.a_only_ie2 / n);
    print_message("p=%u |A|=%.0f |B|=%.0f J=%.3f |AnB|=%.0f: bias %+.1f, RMSE %.1f, "
                  "inclusion-exclusion %.1f (%.2fx), SE %.1f, coverage %d %d %d of %d; "
                  "A only %.1f vs %.1f\n",
                  p, pt->a, pt->b, jaccard, nx, bias, rmse, ie, rmse > 0 ? ie / rmse : 0, se,
                  t.covered[0], t.covered[1], t.covered[2], n, a_only, a_only_ie);
    if (!(fabs(bias) <= se / 2 + 4 * sd / sqrt(n) + 0.5))
        fail_msg("biased: %+.1f against SE %.1f", bias, se);
    static const double nominal[3] = {0.6827, 0.9545, 0.9973};
    for (int k = 0; k < 3; k++) {
        double floor_k = nominal[k] - 4 * sqrt(nominal[k] * (1 - nominal[k]) / n) - 0.03;
        if (!((double)t.covered[k] / n >= floor_k))
            fail_msg("bounds at %d SE cover %d of %d trials, below %.3f", k + 1, t.covered[k],
                     n, floor_k);
    }
    if (jaccard >= 0.01 && !(se >= rmse / 1.5 && se <= 1.5 * rmse + 0.5))
        fail_msg("reported standard error %.1f against an RMSE of %.1f", se, rmse);
    double union_size = pt->a + pt->b - nx;
    if (nx < 0.1 * union_size && nx < fmin(pt->a, pt->b)) {
        if (!(ie >= 1.3 * rmse))
            fail_msg("RMSE %.1f not 1.3x below inclusion-exclusion's %.1f", rmse, ie);
    } else if (!(rmse <= 1.1 * ie + 0.5)) {
        fail_msg("RMSE %.1f above inclusion-exclusion's %.1f", rmse, ie);
    }
    if (pt->a > nx && !(a_only <= 1.1 * a_only_ie + 0.5))
        fail_msg("A-only RMSE %.1f above inclusion-exclusion's %.1f", a_only, a_only_ie);
}

static void check_grid(unsigned p, const struct point *points, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sizeof JACCARD / sizeof *JACCARD; j++)
            check_point(p, &points[i], JACCARD[j]);
}

static void test_small_and_unequal_sets(void **state)
{
    static const struct point points[] = {
        {1e3, 1e3, 200}, {1e3, 1e4, 200}, {1e4, 1e5, 100}, {1e5, 1e5, 100}};
    check_grid(14, points, sizeof points / sizeof *points);
}

static void test_large_sets(void **state)
{
    static const struct point points[] = {{1e6, 1e6, 60}, {1e7, 1e5, 20}, {1e7, 1e7, 16}};
    check_grid(14, points, sizeof points / sizeof *points);
}

/* Other precisions hold to the same bounds at their own error. */
static void test_precisions_12_and_16(void **state)
{
    static const struct point points[] = {{1e5, 1e5, 60}, {1e6, 1e5, 40}};
    check_grid(12, points, sizeof points / sizeof *points);
    check_grid(16, points, sizeof points / sizeof *points);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_and_unequal_sets),
        cmocka_unit_test(test_large_sets),
        cmocka_unit_test(test_precisions_12_and_16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
