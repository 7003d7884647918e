/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hll_compare.c: unit tests of sk_hll_compare, the joint estimate of
 * two sketches, at its extremes: empty sketches, equal ones, disjoint ones,
 * one inside the other, sparse against dense, different precisions,
 * saturated registers and bad arguments. The estimator's accuracy over a
 * grid of sizes and overlaps is accuracy/test_hll_compare_accuracy.c's.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/test_util.h"

#include "sketch.h"
#include "hll_test_util.h"

/* Adds the items of ids [from, to): the same id is the same item anywhere. */
static void add_ids(sk_hll *h, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++)
        assert_true(sk_hll_add_hash(h, splitmix64_of(i)) >= 0);
}

/* A new sketch at precision p of the ids [from, to). */
static sk_hll *hll_of_ids(unsigned p, uint64_t from, uint64_t to)
{
    sk_hll *h = new_hll(p);
    add_ids(h, from, to);
    return h;
}

static sk_hll_comparison compare(const sk_hll *a, const sk_hll *b)
{
    sk_hll_comparison c;
    assert_int_equal(sk_hll_compare(a, b, &c), SK_OK);
    return c;
}

/* Every part is a number, its bounds are ordered and widen with k, and the
 * fractions lie in [0, 1]. */
static void assert_well_formed(const sk_hll_comparison *c)
{
    const sk_hll_part *parts[] = {&c->either, &c->both,    &c->a_only,
                                  &c->b_only, &c->jaccard, &c->retained};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        const sk_hll_part *p = parts[i];
        assert_false(isnan(p->estimate));
        assert_false(isnan(p->standard_error));
        assert_true(p->estimate >= 0 && p->standard_error >= 0);
        for (int k = 0; k < 3; k++) {
            assert_true(p->lower[k] >= 0);
            assert_true(p->lower[k] <= p->estimate && p->estimate <= p->upper[k]);
            if (k > 0)
                assert_true(p->lower[k] <= p->lower[k - 1] && p->upper[k] >= p->upper[k - 1]);
        }
        if (i >= 4)
            assert_true(p->upper[2] <= 1);
    }
}

/* Within `slack` of want, absolutely. */
static void assert_near(double got, double want, double slack)
{
    if (!(fabs(got - want) <= slack))
        fail_msg("%.3f is not within %.3f of %.3f", got, slack, want);
}

static void test_empty_sketches(void **state)
{
    sk_hll *a = new_hll(14), *b = new_hll(14);
    sk_hll_comparison c = compare(a, b);
    assert_well_formed(&c);
    assert_int_equal(c.precision, 14);
    assert_true(c.either.estimate == 0 && c.both.estimate == 0);
    assert_true(c.a_only.estimate == 0 && c.b_only.estimate == 0);
    assert_true(c.jaccard.estimate == 0 && c.retained.estimate == 0);
    /* nothing is exactly nothing: a few items at most at 3 sigma */
    assert_true(c.both.upper[2] < 10);
    add_ids(b, 0, 5000);
    c = compare(a, b);
    assert_well_formed(&c);
    assert_true(c.both.estimate == 0 && c.a_only.estimate == 0);
    assert_near(c.b_only.estimate, 5000, 3 * c.b_only.standard_error + 1);
    assert_true(c.jaccard.estimate == 0);
    sk_hll_free(a);
    sk_hll_free(b);
}

/* A sketch against itself or its copy: all of it in both, nothing apart,
 * for sparse and dense sketches alike. */
static void test_equal_sets(void **state)
{
    const uint64_t sizes[] = {10, 1000, 200000};
    for (size_t i = 0; i < 3; i++) {
        sk_hll *a = hll_of_ids(14, 0, sizes[i]), *b = NULL;
        assert_int_equal(sk_hll_copy(&b, a), SK_OK);
        for (int self = 0; self < 2; self++) {
            sk_hll_comparison c = compare(a, self ? a : b);
            assert_well_formed(&c);
            assert_true(c.a_only.estimate == 0 && c.b_only.estimate == 0);
            assert_true(c.jaccard.estimate == 1 && c.retained.estimate == 1);
            assert_near(c.both.estimate, c.either.estimate, 1e-9 * c.either.estimate);
            /* the count of one sketch, to within the estimators' difference */
            assert_near(c.both.estimate, (double)sk_hll_count(a),
                        0.01 * (double)sk_hll_count(a) + 1);
            assert_near(c.both.estimate, (double)sizes[i], 3 * c.both.standard_error + 1);
        }
        sk_hll_free(a);
        sk_hll_free(b);
    }
}

/* Disjoint sets: an intersection near 0 whatever their sizes, with the
 * truth inside the bounds, and small ones (no register shared) exact. */
static void test_disjoint_sets(void **state)
{
    sk_hll *a = hll_of_ids(14, 0, 40), *b = hll_of_ids(14, 1000, 1030);
    sk_hll_comparison c = compare(a, b);
    assert_well_formed(&c);
    assert_near(c.both.estimate, 0, 0.5);
    assert_near(c.a_only.estimate, 40, 0.5);
    assert_near(c.b_only.estimate, 30, 0.5);
    assert_near(c.either.estimate, 70, 0.5);
    sk_hll_free(a);
    sk_hll_free(b);

    const uint64_t sizes[][2] = {{100000, 100000}, {1000000, 20000}, {20000, 1000000}};
    for (size_t i = 0; i < 3; i++) {
        a = hll_of_ids(14, 0, sizes[i][0]);
        b = hll_of_ids(14, 1u << 30, (1u << 30) + sizes[i][1]);
        c = compare(a, b);
        assert_well_formed(&c);
        assert_true(c.both.lower[2] == 0);
        assert_true(c.both.estimate <= 3 * c.both.standard_error + 1);
        assert_true(c.jaccard.estimate < 0.01);
        assert_near(c.a_only.estimate, (double)sizes[i][0], 3 * c.a_only.standard_error + 1);
        assert_near(c.b_only.estimate, (double)sizes[i][1], 3 * c.b_only.standard_error + 1);
        sk_hll_free(a);
        sk_hll_free(b);
    }
}

/* A inside B: nothing of A apart, all of A retained. */
static void test_one_inside_the_other(void **state)
{
    const uint64_t sizes[][2] = {{50, 5000}, {5000, 500000}, {100000, 120000}};
    for (size_t i = 0; i < 3; i++) {
        sk_hll *a = hll_of_ids(14, 0, sizes[i][0]), *b = hll_of_ids(14, 0, sizes[i][1]);
        sk_hll_comparison c = compare(a, b), r = compare(b, a);
        assert_well_formed(&c);
        assert_well_formed(&r);
        assert_true(c.a_only.estimate == 0);
        assert_true(c.retained.estimate == 1);
        assert_true(r.b_only.estimate == 0);
        assert_near(c.both.estimate, (double)sizes[i][0], 3 * c.both.standard_error + 1);
        assert_near(c.b_only.estimate, (double)(sizes[i][1] - sizes[i][0]),
                    3 * c.b_only.standard_error + 1);
        /* the comparison is symmetric: B against A swaps the sides */
        assert_near(r.a_only.estimate, c.b_only.estimate, 1e-6 * c.b_only.estimate + 1e-6);
        assert_near(r.both.estimate, c.both.estimate, 1e-6 * c.both.estimate + 1e-6);
        sk_hll_free(a);
        sk_hll_free(b);
    }
}

/* A sketch of another precision is folded: the comparison equals the one
 * with the folded sketch. */
static void test_precisions_fold_to_the_smaller(void **state)
{
    sk_hll *a = hll_of_ids(16, 0, 300000), *b = hll_of_ids(12, 250000, 400000), *folded = NULL;
    assert_int_equal(sk_hll_copy(&folded, a), SK_OK);
    assert_int_equal(sk_hll_fold(folded, 12), SK_OK);
    sk_hll_comparison c = compare(a, b), f = compare(folded, b);
    assert_int_equal(c.precision, 12);
    assert_memory_equal(&c, &f, sizeof c);
    c = compare(b, a);
    f = compare(b, folded);
    assert_memory_equal(&c, &f, sizeof c);
    assert_near(c.both.estimate, 50000, 3 * c.both.standard_error);
    sk_hll_free(a);
    sk_hll_free(b);
    sk_hll_free(folded);
}

/* A sparse sketch against a dense one: its registers are read as they
 * are kept, sorted entries rather than bytes. */
static void test_sparse_against_dense(void **state)
{
    sk_hll *a = hll_of_ids(14, 0, 300), *b = hll_of_ids(14, 100, 100000);
    sk_hll_info ia, ib;
    sk_hll_get_info(a, &ia);
    sk_hll_get_info(b, &ib);
    assert_int_equal(ia.encoding, SK_HLL_SPARSE);
    assert_int_equal(ib.encoding, SK_HLL_DENSE);
    sk_hll_comparison c = compare(a, b), r = compare(b, a);
    assert_well_formed(&c);
    assert_near(c.both.estimate, 200, 3 * c.both.standard_error + 1);
    assert_near(c.a_only.estimate, 100, 3 * c.a_only.standard_error + 1);
    assert_near(r.b_only.estimate, c.a_only.estimate, 1e-6 * c.a_only.estimate + 1e-6);
    sk_hll_free(a);
    sk_hll_free(b);
}

/* Registers at their largest value, which no real stream produces: an
 * answer, not a crash or a NaN. */
static void test_saturated_registers(void **state)
{
    const unsigned p = 8;
    sk_hll *a = new_hll(p), *b = new_hll(p);
    for (uint32_t i = 0; i < (1u << p); i++)
        assert_true(sk_hll_add_hash(a, i) >= 0); /* rank bits all zero */
    add_ids(b, 0, 1000);
    sk_hll_comparison c = compare(a, b);
    assert_well_formed(&c);
    assert_true(isinf(c.either.estimate));
    c = compare(b, b);
    assert_well_formed(&c);
    sk_hll_free(a);
    sk_hll_free(b);
}

static void test_bad_arguments(void **state)
{
    sk_hll *a = new_hll(14);
    sk_hll_comparison c;
    assert_int_equal(sk_hll_compare(NULL, a, &c), SK_EINVAL);
    assert_int_equal(sk_hll_compare(a, NULL, &c), SK_EINVAL);
    assert_int_equal(sk_hll_compare(a, a, NULL), SK_EINVAL);
    sk_hll_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_sketches),
        cmocka_unit_test(test_equal_sets),
        cmocka_unit_test(test_disjoint_sets),
        cmocka_unit_test(test_one_inside_the_other),
        cmocka_unit_test(test_precisions_fold_to_the_smaller),
        cmocka_unit_test(test_sparse_against_dense),
        cmocka_unit_test(test_saturated_registers),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
