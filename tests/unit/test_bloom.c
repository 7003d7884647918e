/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom.c: unit tests of sizing and creating Bloom filters, with cmocka:
 * sk_bloom_size_for against the textbook and its own minimality,
 * sk_bloom_new and sk_bloom_create with every option and every error path,
 * and what a filter then reports about itself (sk_bloom_get_info, the
 * expected false-positive rate, the estimate of the items it holds).
 * The other test_bloom_*.c cover the rest of the API.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

/* ---- sizing ------------------------------------------------------------- */

static double textbook_bits(uint64_t n, double p)
{
    return -(double)n * log(p) / (M_LN2 * M_LN2);
}

static void test_size_for_classic_is_textbook(void **state)
{
    static const double rates[] = {0.5, 0.3, 0.1, 0.05, 1e-2, 1e-3, 1e-4, 1e-5,
                                   1e-6, 1e-8, 1e-10, 1e-12, 1e-15};
    static const uint64_t caps[] = {1000, 123457, 1000000, 1000000000};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            uint64_t n = caps[c], m = 0;
            double p = rates[r];
            unsigned k = 0;
            sk_bloom_layout layout = SK_BLOOM_CLASSIC;
            assert_int_equal(sk_bloom_size_for(n, p, &layout, &m, &k), SK_OK);
            assert_int_equal(layout, SK_BLOOM_CLASSIC);
            double tb = textbook_bits(n, p), kopt = (double)m / (double)n * M_LN2;
            /* Integer k costs a little over the textbook optimum, never less
             * (but for the one bit of rounding). */
            if (!((double)m >= tb - 1 && (double)m <= 1.01 * tb) || fabs(k - kopt) > 1.0) {
                print_error("n=%llu p=%g: m=%llu k=%u, textbook m=%.0f k=%.3f\n",
                            (unsigned long long)n, p, (unsigned long long)m, k, tb, kopt);
                fail();
            }
            /* The textbook k, -log2 p, is within one of the chosen k. */
            assert_true(fabs(k + log2(p)) <= 1.0);
        }
    }
}

/* The rate at capacity of the chosen size meets the target, and one bit (one
 * block) fewer does not, with the chosen k or its neighbours: m is the
 * smallest, as documented. */
static void test_size_for_is_minimal(void **state)
{
    static const double rates[] = {0.1, 1e-2, 1e-3, 1e-4};
    static const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (int layout_i = 0; layout_i < 3; layout_i++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            sk_bloom_layout layout = layouts[layout_i];
            uint64_t n = 20000, m;
            unsigned k;
            assert_int_equal(sk_bloom_size_for(n, rates[r], &layout, &m, &k), SK_OK);
            sk_bloom *f = new_explicit(m, k, layout);
            assert_int_equal(info_of(f).bits, m);
            assert_true(sk_bloom_expected_fp_rate(f, n) <= rates[r]);
            sk_bloom_free(f);
            uint64_t fewer = layout != SK_BLOOM_CLASSIC ? m - 512 : m - 1;
            if (layout == SK_BLOOM_SPLIT)
                assert_true(k == 8 || k == 16);
            for (unsigned kk = k > 1 ? k - 1 : 1; kk <= k + 1; kk++) {
                if (layout == SK_BLOOM_SPLIT && kk != 8 && kk != 16)
                    continue; /* the lane counts there are */
                f = new_explicit(fewer, kk, layout);
                double rate = sk_bloom_expected_fp_rate(f, n);
                if (!(rate > rates[r]))
                    print_error("layout %d p=%g: %llu bits and k=%u reach %g too\n",
                                layout_i, rates[r], (unsigned long long)fewer, kk, rate);
                assert_true(rate > rates[r]);
                sk_bloom_free(f);
            }
        }
    }
}

static void test_size_for_blocked_needs_more_bits(void **state)
{
    static const double rates[] = {0.3, 0.1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-9, 1e-15};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        uint64_t mc, mb;
        unsigned kc, kb;
        sk_bloom_layout lc = SK_BLOOM_CLASSIC, lb = SK_BLOOM_BLOCKED;
        assert_int_equal(sk_bloom_size_for(1000000, rates[r], &lc, &mc, &kc), SK_OK);
        assert_int_equal(sk_bloom_size_for(1000000, rates[r], &lb, &mb, &kb), SK_OK);
        assert_int_equal(lb, SK_BLOOM_BLOCKED);
        assert_int_equal(mb % 512, 0);
        assert_true(mb > mc);
        assert_true(kb >= 1 && kb <= SK_BLOOM_MAX_HASHES);
    }
    /* The overhead documented in docs/bloom-format.md: 3% at 1%, 8% at 0.1%. */
    uint64_t mc, mb;
    unsigned kc, kb;
    sk_bloom_layout lc = SK_BLOOM_CLASSIC, lb = SK_BLOOM_BLOCKED;
    assert_int_equal(sk_bloom_size_for(1000000, 1e-2, &lc, &mc, &kc), SK_OK);
    assert_int_equal(sk_bloom_size_for(1000000, 1e-2, &lb, &mb, &kb), SK_OK);
    assert_true((double)mb / (double)mc > 1.01 && (double)mb / (double)mc < 1.06);
}

static void test_size_for_auto(void **state)
{
    static const struct {
        double p;
        sk_bloom_layout expect;
    } cases[] = {{1e-1, SK_BLOOM_BLOCKED}, {1e-2, SK_BLOOM_SPLIT},
                 {1e-5, SK_BLOOM_CLASSIC}, {1e-9, SK_BLOOM_CLASSIC}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sk_bloom_layout layout = SK_BLOOM_AUTO, concrete = cases[i].expect;
        uint64_t m, m2;
        unsigned k, k2;
        assert_int_equal(sk_bloom_size_for(500000, cases[i].p, &layout, &m, &k), SK_OK);
        assert_int_equal(layout, cases[i].expect);
        assert_int_equal(sk_bloom_size_for(500000, cases[i].p, &concrete, &m2, &k2), SK_OK);
        assert_int_equal(m, m2);
        assert_int_equal(k, k2);
        /* sk_bloom_new makes the same choice and the same sizes. */
        sk_bloom *f = new_filter(500000, cases[i].p, SK_BLOOM_AUTO);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.layout, cases[i].expect);
        assert_int_equal(info.bits, m);
        assert_int_equal(info.hashes, k);
        sk_bloom_free(f);
    }
}

static void test_size_for_rejects_bad_arguments(void **state)
{
    uint64_t m = 77;
    unsigned k = 77;
    sk_bloom_layout layout;
    /* Rates below SK_BLOOM_MIN_FP_RATE are sized (the later layers of a
     * scalable filter have them); only creation refuses them. */
    static const double bad_rates[] = {0, 1, -0.01, 0.6, 0.5000001};
    double special[] = {NAN, INFINITY, -INFINITY};
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, bad_rates[i], &layout, &m, &k), SK_EINVAL);
        }
        for (size_t i = 0; i < 3; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, special[i], &layout, &m, &k), SK_EINVAL);
        }
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(0, 0.01, &layout, &m, &k), SK_EINVAL);
        uint64_t m_min, m_below;
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MIN_FP_RATE, &layout, &m_min, &k),
                         SK_OK);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, 1e-16, &layout, &m_below, &k), SK_OK);
        assert_true(m_below > m_min);
        k = 77; /* the calls below must leave the outputs alone */
        if (l != SK_BLOOM_AUTO) { /* AUTO: test_size_for_auto_null_outputs */
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, &k), SK_EINVAL);
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, NULL), SK_EINVAL);
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, NULL), SK_EINVAL);
        }
        /* Absurd capacities: more than SK_BLOOM_MAX_BITS. */
        static const uint64_t huge[] = {UINT64_MAX, UINT64_C(1) << 48, UINT64_C(1) << 47,
                                        (UINT64_C(1) << 48) / 9};
        for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(huge[i], 0.01, &layout, &m, &k), SK_ETOOLARGE);
        }
    }
    assert_int_equal(sk_bloom_size_for(1000, 0.01, NULL, &m, &k), SK_EINVAL);
    layout = (sk_bloom_layout)4;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, &k), SK_EINVAL);
    layout = (sk_bloom_layout)-1;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, &k), SK_EINVAL);
    assert_int_equal(m, 77);
    assert_int_equal(k, 77);

    /* The ends of the documented range are accepted. */
    for (int l = 0; l < 3; l++) {
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MIN_FP_RATE, &layout, &m, &k), SK_OK);
        assert_true(k >= 1 && k <= SK_BLOOM_MAX_HASHES);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MAX_FP_RATE, &layout, &m, &k), SK_OK);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1, 0.01, &layout, &m, &k), SK_OK);
        assert_true(m >= 1);
    }

    /* Near the limit every answer is either SK_EINVAL or at most the limit:
     * capacities from 90% to 101% of the largest the textbook allows. */
    static const double near_rates[] = {1e-2, 1e-4};
    for (int l = 0; l < 2; l++) {
        for (size_t r = 0; r < sizeof near_rates / sizeof near_rates[0]; r++) {
            double top = (double)SK_BLOOM_MAX_BITS / (-log(near_rates[r]) / (M_LN2 * M_LN2));
            for (int step = 0; step <= 22; step++) {
                uint64_t cap = (uint64_t)(top * (0.90 + step * 0.005));
                layout = (sk_bloom_layout)l;
                int rc = sk_bloom_size_for(cap, near_rates[r], &layout, &m, &k);
                if (rc == SK_OK && m > SK_BLOOM_MAX_BITS) {
                    print_error("layout %d capacity %llu p=%g: %llu bits > SK_BLOOM_MAX_BITS\n",
                                l, (unsigned long long)cap, near_rates[r],
                                (unsigned long long)m);
                    fail();
                }
                assert_true(rc == SK_OK || rc == SK_ETOOLARGE);
            }
        }
    }
}

/* NULL outputs with SK_BLOOM_AUTO: SK_EINVAL like the other layouts. Last in
 * the list, since a library that dereferences them crashes here. */
static void test_size_for_auto_null_outputs(void **state)
{
    uint64_t m = 77;
    unsigned k = 77;
    sk_bloom_layout layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, NULL), SK_EINVAL);
    layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, &k), SK_EINVAL);
    layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, NULL), SK_EINVAL);
    assert_int_equal(m, 77);
    assert_int_equal(k, 77);
}

/* ---- creation ----------------------------------------------------------- */

static void test_new_rejects_bad_arguments(void **state)
{
    sk_bloom *f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_new(NULL, 1000, 0.01, SK_BLOOM_AUTO), SK_EINVAL);
    assert_int_equal(sk_bloom_new(&f, 0, 0.01, SK_BLOOM_AUTO), SK_EINVAL);
    assert_null(f);
    static const double bad_rates[] = {0, 1, 1e-16, 0.6, NAN};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        for (int l = 0; l < 3; l++) {
            f = (sk_bloom *)&f;
            assert_int_equal(sk_bloom_new(&f, 1000, bad_rates[i], (sk_bloom_layout)l),
                             SK_EINVAL);
            assert_null(f);
        }
    }
    f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_new(&f, 1000, 0.01, (sk_bloom_layout)7), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_new(&f, UINT64_C(1) << 48, 0.01, SK_BLOOM_AUTO), SK_ETOOLARGE);
    assert_null(f);
    sk_bloom_free(NULL);
}

static void test_new_explicit(void **state)
{
    static const struct {
        uint64_t bits;
        sk_bloom_layout layout;
        uint64_t expect;
    } cases[] = {
        {1, SK_BLOOM_BLOCKED, 512},         {511, SK_BLOOM_BLOCKED, 512},
        {512, SK_BLOOM_BLOCKED, 512},       {513, SK_BLOOM_BLOCKED, 1024},
        {1000, SK_BLOOM_BLOCKED, 1024},     {1000000, SK_BLOOM_BLOCKED, 1000448},
        {1, SK_BLOOM_CLASSIC, 1},           {1000, SK_BLOOM_CLASSIC, 1000},
        {1000001, SK_BLOOM_CLASSIC, 1000001},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (unsigned k = 1; k <= SK_BLOOM_MAX_HASHES; k += 21) {
            sk_bloom *f = new_explicit(cases[i].bits, k, cases[i].layout);
            sk_bloom_info info = info_of(f);
            assert_int_equal(info.layout, cases[i].layout);
            assert_int_equal(info.bits, cases[i].expect);
            assert_int_equal(info.hashes, k);
            assert_true(info.fp_rate == 0);
            assert_int_equal(info.expansion, 0);
            assert_int_equal(info.layers, 1);
            assert_int_equal(info.count, 0);
            assert_int_equal(info.array_bytes, (cases[i].expect + 63) / 64 * 8);
            /* The capacity of explicit sizes: where k is optimal, m ln2 / k. */
            uint64_t cap = (uint64_t)((double)cases[i].expect * M_LN2 / k);
            assert_int_equal(info.capacity, cap ? cap : 1);
            assert_int_equal(add_key(f, 1), 1);
            assert_int_equal(add_key(f, 1), 0);
            assert_int_equal(has_key(f, 1), 1);
            sk_bloom_free(f);
        }
    }
    sk_bloom *f = new_explicit(1000, SK_BLOOM_MAX_HASHES, SK_BLOOM_CLASSIC);
    sk_bloom_free(f);
    f = (sk_bloom *)&f;
    /* Explicit sizes have no rate to choose a layout by: the zero layout is blocked. */
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 7}), SK_OK);
    assert_int_equal(info_of(f).layout, SK_BLOOM_BLOCKED);
    assert_int_equal(info_of(f).bits, 1024);
    sk_bloom_free(f);
    for (int l = 0; l < 2; l++) {
        f = (sk_bloom *)&f;
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 0, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_null(f);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 65, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 0, .hashes = 7, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = SK_BLOOM_MAX_BITS + 1, .hashes = 7, .layout = (sk_bloom_layout)l}), SK_ETOOLARGE);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = UINT64_MAX, .hashes = 7, .layout = (sk_bloom_layout)l}),
                         SK_ETOOLARGE);
        assert_null(f);
    }
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 7, .layout = (sk_bloom_layout)5}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(NULL, &(sk_bloom_options){.bits = 1000, .hashes = 7, .layout = SK_BLOOM_CLASSIC}), SK_EINVAL);
}

static void test_new_scalable(void **state)
{
    sk_bloom *f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = SK_BLOOM_MAX_EXPANSION + 1, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_create(&f, NULL), SK_EINVAL);
    /* Options that contradict each other: explicit sizes with a rate, a
     * capacity or an expansion; hashes without bits. */
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .fp_rate = 0.01}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .capacity = 10}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .expansion = 2}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 10, .hashes = 3}), SK_EINVAL);
    assert_null(f);
    /* Expansion 0 is a fixed filter; a zero rate is the default one. */
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .layout = SK_BLOOM_AUTO}), SK_OK);
    assert_int_equal(info_of(f).expansion, 0);
    assert_true(info_of(f).fp_rate == SK_BLOOM_DEFAULT_FP_RATE);
    sk_bloom_free(f);
    assert_int_equal(sk_bloom_create(NULL, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = 2, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 0, .fp_rate = 0.01, .expansion = 2, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = 2, .layout = (sk_bloom_layout)9}), SK_EINVAL);
    assert_null(f);

    f = new_scalable(1000, 0.01, 2, SK_BLOOM_AUTO);
    sk_bloom_info info = info_of(f);
    /* The first layer is sized for the capacity at half the rate. */
    sk_bloom_layout layout = SK_BLOOM_AUTO;
    uint64_t m;
    unsigned k;
    assert_int_equal(sk_bloom_size_for(1000, 0.005, &layout, &m, &k), SK_OK);
    assert_fresh_info(info, layout, m, k, 1000, 0.01, 2);
    sk_bloom_free(f);

    /* Every expansion it accepts can be saved and opened again. */
    static const unsigned expansions[] = {1, 2, 3, 1024, 1025, 100000, UINT32_MAX};
    for (size_t i = 0; i < sizeof expansions / sizeof expansions[0]; i++) {
        f = NULL;
        int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 100, .fp_rate = 0.01, .expansion = expansions[i], .layout = SK_BLOOM_CLASSIC});
        assert_true(rc == SK_OK || rc == SK_EINVAL);
        if (rc != SK_OK) {
            assert_null(f);
            continue;
        }
        add_range(f, 0, 300);
        assert_reopens(f, 300);
        sk_bloom_free(f);
    }
}

/* The rate of a scalable filter has the documented range of every rate,
 * [SK_BLOOM_MIN_FP_RATE, SK_BLOOM_MAX_FP_RATE]: rates above it are refused
 * (a filter created with one would be saved to a file that sk_bloom_open
 * refuses), and rates in it are accepted. (0 in the options is the default
 * rate.) */
static void test_scalable_rate_range(void **state)
{
    int failures = 0;
    static const double bad_rates[] = {1, 0.6, 0.75, 1.0000001, 1e-16, 5e-16, -0.5, NAN};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        for (int l = 0; l < 3; l++) {
            sk_bloom *f = (sk_bloom *)&f;
            int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = bad_rates[i], .expansion = 2, .layout = (sk_bloom_layout)l});
            if (rc != SK_EINVAL) {
                print_error("sk_bloom_create of capacity 1000, rate %g, expansion 2, layout %d = %s, "
                            "expected %s\n", bad_rates[i], l, sk_strerror(rc),
                            sk_strerror(SK_EINVAL));
                failures++;
            }
            if (rc == SK_OK) {
                /* What it leads to: a file the library cannot open. */
                char p[PATH_MAX];
                path_of(p, "bad-rate.bloom");
                save_ok(f, p);
                sk_bloom *g = NULL;
                rc = sk_bloom_open(&g, p, 0, NULL);
                if (rc != SK_OK)
                    print_error("  ... saved, sk_bloom_open of its file = %s\n",
                                sk_strerror(rc));
                sk_bloom_free(g);
                sk_bloom_free(f);
                unlink(p);
            } else if (f != NULL) {
                print_error("  ... and *out was not set to NULL\n");
                failures++;
            }
        }
    }
    static const double good_rates[] = {SK_BLOOM_MIN_FP_RATE, 1.5e-15, SK_BLOOM_MAX_FP_RATE};
    for (size_t i = 0; i < sizeof good_rates / sizeof good_rates[0]; i++) {
        sk_bloom *f = NULL;
        int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 100, .fp_rate = good_rates[i], .expansion = 2, .layout = SK_BLOOM_CLASSIC});
        if (rc != SK_OK) {
            print_error("sk_bloom_create of capacity 100, rate %g, expansion 2, classic = %s, expected %s\n",
                        good_rates[i], sk_strerror(rc), sk_strerror(SK_OK));
            failures++;
            continue;
        }
        add_range(f, 0, 1000);
        assert_reopens(f, 1000);
        sk_bloom_free(f);
    }
    assert_int_equal(failures, 0);
}

static void test_info(void **state)
{
    for (int l = 0; l < 3; l++) {
        sk_bloom_layout layout = (sk_bloom_layout)l;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(30000, 0.02, &layout, &m, &k), SK_OK);
        sk_bloom *f = new_filter(30000, 0.02, (sk_bloom_layout)l);
        sk_bloom_info info = info_of(f);
        assert_true(info.layout == SK_BLOOM_BLOCKED || info.layout == SK_BLOOM_CLASSIC ||
                    info.layout == SK_BLOOM_SPLIT);
        assert_fresh_info(info, layout, m, k, 30000, 0.02, 0);
        assert_int_equal(info.array_bytes, (m + 63) / 64 * 8);
        uint64_t changed = add_range(f, 0, 1000);
        assert_int_equal(info_of(f).count, changed);
        assert_true(changed >= 990);
        add_range(f, 0, 1000);
        assert_int_equal(info_of(f).count, changed);
        sk_bloom_free(f);
    }

    /* A scalable filter: sums over its layers, each sized for `expansion`
     * times the capacity of the previous at half its rate. */
    sk_bloom *f = new_scalable(1000, 0.01, 3, SK_BLOOM_CLASSIC);
    uint64_t changed = add_range(f, 0, 30000);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.count, changed);
    assert_int_equal(info.expansion, 3);
    assert_true(info.fp_rate == 0.01);
    assert_int_equal(info.layout, SK_BLOOM_CLASSIC);
    assert_true(info.layers >= 4);
    uint64_t cap = 1000, bits = 0, caps = 0, memory = 0;
    double rate = 0.005;
    unsigned first_k = 0;
    for (unsigned i = 0; i < info.layers; i++) {
        sk_bloom_layout layout = SK_BLOOM_CLASSIC;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(cap, rate, &layout, &m, &k), SK_OK);
        if (i == 0)
            first_k = k;
        bits += m;
        memory += (m + 63) / 64 * 8;
        caps += cap;
        cap *= 3;
        rate /= 2;
    }
    assert_int_equal(info.bits, bits);
    assert_int_equal(info.array_bytes, memory);
    assert_int_equal(info.capacity, caps);
    assert_int_equal(info.hashes, first_k);
    /* All layers but the newest are full. */
    assert_true(info.capacity - cap / 3 <= changed && changed <= info.capacity);
    sk_bloom_free(f);
}

static void test_expected_fp_rate(void **state)
{
    static const double rates[] = {0.1, 1e-2, 1e-3, 1e-4, 1e-6};
    for (int l = 0; l < 2; l++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            const uint64_t n = 1000000;
            sk_bloom *f = new_filter(n, rates[r], (sk_bloom_layout)l);
            assert_true(sk_bloom_expected_fp_rate(f, 0) == 0);
            double prev = 0;
            for (uint64_t items = n / 16; items <= 4 * n; items += n / 16) {
                double e = sk_bloom_expected_fp_rate(f, items);
                assert_true(e >= prev && e <= 1);
                prev = e;
            }
            double at = sk_bloom_expected_fp_rate(f, n);
            if (!(at <= rates[r] && at >= 0.98 * rates[r]))
                print_error("layout %d p=%g: expected rate at capacity %g\n", l, rates[r], at);
            assert_true(at <= rates[r] && at >= 0.98 * rates[r]);
            assert_true(sk_bloom_expected_fp_rate(f, 100 * n) > 0.5);
            sk_bloom_free(f);
        }
    }
    /* Small filters meet their rate too (blocked: within a block of 512 bits). */
    for (int l = 0; l < 2; l++) {
        sk_bloom *f = new_filter(100, 0.01, (sk_bloom_layout)l);
        double at = sk_bloom_expected_fp_rate(f, 100);
        assert_true(at <= 0.01 && at > 0.0001);
        sk_bloom_free(f);
    }
    /* Scalable: the whole chain stays below the requested rate at the
     * capacity of the layers it has, and rises with the items. */
    sk_bloom *s = new_scalable(1000, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(s, 0, 50000);
    sk_bloom_info info = info_of(s);
    double prev = 0;
    for (uint64_t items = 0; items <= info.capacity; items += info.capacity / 100) {
        double e = sk_bloom_expected_fp_rate(s, items);
        assert_true(e >= prev);
        prev = e;
    }
    assert_true(sk_bloom_expected_fp_rate(s, info.capacity) <= 0.01);
    assert_true(sk_bloom_expected_fp_rate(s, info.capacity) > 0.005);
    sk_bloom_free(s);
}

static void test_estimate_items(void **state)
{
    for (int kind = 0; kind < 4; kind++) {
        const uint64_t n = 200000;
        sk_bloom *f;
        switch (kind) {
        case 0: f = new_filter(n, 0.01, SK_BLOOM_BLOCKED); break;
        case 1: f = new_filter(n, 0.01, SK_BLOOM_CLASSIC); break;
        case 2: f = new_filter(n, 0.001, SK_BLOOM_BLOCKED); break;
        default: f = new_scalable(n / 16, 0.01, 2, SK_BLOOM_CLASSIC); break;
        }
        assert_int_equal(sk_bloom_estimate_items(f), 0);
        add_range(f, 0, n / 2);
        double e = (double)sk_bloom_estimate_items(f);
        if (fabs(e - n / 2.0) > 0.03 * n / 2.0)
            print_error("kind %d: estimate %g at %llu items\n", kind, e, (unsigned long long)(n / 2));
        assert_true(fabs(e - n / 2.0) <= 0.03 * n / 2.0);
        add_range(f, n / 2, n);
        e = (double)sk_bloom_estimate_items(f);
        if (fabs(e - (double)n) > 0.03 * n)
            print_error("kind %d: estimate %g at %llu items\n", kind, e, (unsigned long long)n);
        assert_true(fabs(e - (double)n) <= 0.03 * n);
        sk_bloom_free(f);
    }
    /* A saturated filter estimates at least its capacity. */
    sk_bloom *f = new_explicit(64, 1, SK_BLOOM_CLASSIC);
    add_range(f, 0, 5000);
    assert_true(sk_bloom_estimate_items(f) >= info_of(f).capacity);
    sk_bloom_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_for_classic_is_textbook),
        cmocka_unit_test(test_size_for_is_minimal),
        cmocka_unit_test(test_size_for_blocked_needs_more_bits),
        cmocka_unit_test(test_size_for_auto),
        cmocka_unit_test(test_size_for_rejects_bad_arguments),
        cmocka_unit_test(test_new_rejects_bad_arguments),
        cmocka_unit_test(test_new_explicit),
        cmocka_unit_test(test_new_scalable),
        cmocka_unit_test(test_scalable_rate_range),
        cmocka_unit_test(test_size_for_auto_null_outputs),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_expected_fp_rate),
        cmocka_unit_test(test_estimate_items),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
