/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_auto.c: the layout SK_BLOOM_AUTO chooses, against its rule in
 * docs/bloom-format.md ("Default layout"), with cmocka.
 *
 * The rule, in the sizes sk_bloom_size_for computes for each concrete
 * layout at the same capacity and rate: blocked where it needs at most 10%
 * more bits than classic, and there split instead where that needs at most
 * 5% more bits than blocked; else classic. The tests check it over a grid of
 * capacities and rates (sizes and hash counts too, not just the layout),
 * that what sk_bloom_size_for chose is what a filter made with
 * SK_BLOOM_AUTO reports (sk_bloom_get_info, sk_bloom_plan, its layers),
 * and that the choice survives a file and a dump.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sketch.h"
#include "bloom_test_util.h"

/* The rule's two limits, as docs/bloom-format.md states them. */
#define SPLIT_OVER_BLOCKED 1.05
#define BLOCKED_OVER_CLASSIC 1.10

struct shape {
    sk_bloom_layout layout;
    uint64_t bits;
    unsigned hashes;
};

static struct shape size_of(uint64_t n, double p, sk_bloom_layout layout)
{
    struct shape s = {.layout = layout};
    assert_int_equal(sk_bloom_size_for(n, p, &s.layout, &s.bits, &s.hashes), SK_OK);
    if (layout != SK_BLOOM_AUTO)
        assert_int_equal(s.layout, layout);
    return s;
}

/* What the rule says AUTO takes at n items and rate p. */
static struct shape by_the_rule(uint64_t n, double p)
{
    struct shape blocked = size_of(n, p, SK_BLOOM_BLOCKED);
    struct shape classic = size_of(n, p, SK_BLOOM_CLASSIC);
    struct shape split = size_of(n, p, SK_BLOOM_SPLIT);
    if ((double)blocked.bits > BLOCKED_OVER_CLASSIC * (double)classic.bits)
        return classic;
    if ((double)split.bits <= SPLIT_OVER_BLOCKED * (double)blocked.bits)
        return split;
    return blocked;
}

static const char *name(sk_bloom_layout l)
{
    return l == SK_BLOOM_BLOCKED ? "blocked" : l == SK_BLOOM_CLASSIC ? "classic"
                                             : l == SK_BLOOM_SPLIT ? "split" : "auto";
}

static void assert_rule_holds(uint64_t n, double p)
{
    struct shape want = by_the_rule(n, p), got = size_of(n, p, SK_BLOOM_AUTO);
    if (got.layout != want.layout || got.bits != want.bits || got.hashes != want.hashes)
        fail_msg("%llu items at %g: auto took %s (%llu bits, k %u), the rule %s "
                 "(%llu bits, k %u)",
                 (unsigned long long)n, p, name(got.layout), (unsigned long long)got.bits,
                 got.hashes, name(want.layout), (unsigned long long)want.bits, want.hashes);
}

/* Capacities from one item (a block) to a hundred million, and rates from
 * 50% to the smallest, denser where the choice changes (about 2%, about
 * 1.6e-4 and 1e-8 to 1e-9 at a million items; docs/bloom-format.md). */
static const uint64_t CAPACITIES[] = {1, 10, 100, 1000, 5000, 10000, 100000, 1000000,
                                      100000000};
static const double RATES[] = {0.5,  0.2,    0.1,  0.05,   0.03, 0.025, 0.02,   0.01,
                               5e-3, 2e-3,   1e-3, 5e-4,   2e-4, 1.8e-4, 1.6e-4, 1.4e-4,
                               1.2e-4, 1e-4, 1e-5, 1e-6,   1e-7, 1e-8,  5e-9,   3e-9,
                               1e-9, 1e-10,  1e-12, 1e-15};

static void test_the_rule_over_a_grid(void **state)
{
    unsigned taken[4] = {0};
    for (size_t c = 0; c < sizeof CAPACITIES / sizeof CAPACITIES[0]; c++)
        for (size_t r = 0; r < sizeof RATES / sizeof RATES[0]; r++) {
            assert_rule_holds(CAPACITIES[c], RATES[r]);
            taken[size_of(CAPACITIES[c], RATES[r], SK_BLOOM_AUTO).layout]++;
        }
    /* The grid reaches all three outcomes. */
    assert_true(taken[SK_BLOOM_SPLIT] > 0);
    assert_true(taken[SK_BLOOM_BLOCKED] > 0);
    assert_true(taken[SK_BLOOM_CLASSIC] > 0);
}

/* The points the documentation names: at a million items blocked at 3% and
 * above, split from 2% to 5e-4, classic below, where blocked needs more
 * than 10% over classic (and split would need more still). */
static void test_the_documented_choices(void **state)
{
    static const struct {
        double p;
        sk_bloom_layout expect;
    } cases[] = {{0.5, SK_BLOOM_BLOCKED},  {0.1, SK_BLOOM_BLOCKED}, {0.03, SK_BLOOM_BLOCKED},
                 {0.02, SK_BLOOM_SPLIT},   {0.01, SK_BLOOM_SPLIT},  {1e-3, SK_BLOOM_SPLIT},
                 {5e-4, SK_BLOOM_SPLIT},   {2e-4, SK_BLOOM_CLASSIC},
                 {1e-4, SK_BLOOM_CLASSIC}, {1e-5, SK_BLOOM_CLASSIC}, {1e-8, SK_BLOOM_CLASSIC},
                 {1e-9, SK_BLOOM_CLASSIC}, {1e-12, SK_BLOOM_CLASSIC}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct shape got = size_of(1000000, cases[i].p, SK_BLOOM_AUTO);
        if (got.layout != cases[i].expect)
            fail_msg("a million items at %g: auto took %s, not %s", cases[i].p,
                     name(got.layout), name(cases[i].expect));
    }
    /* RedisBloom's default filter (100 items at 1%, its first layer at
     * 0.5%) stays classic: split would take the next size of allocation. */
    assert_int_equal(size_of(100, 0.005, SK_BLOOM_AUTO).layout, SK_BLOOM_CLASSIC);
    assert_int_equal(size_of(100, 0.01, SK_BLOOM_AUTO).layout, SK_BLOOM_CLASSIC);
    /* 1% at a million items: 10.10 bits per item, k = 8. */
    struct shape s = size_of(1000000, 0.01, SK_BLOOM_AUTO);
    assert_int_equal(s.hashes, 8);
    assert_true(s.bits >= 10095000 && s.bits <= 10105000);
}

/* A filter made with SK_BLOOM_AUTO is of the layout and size that
 * sk_bloom_size_for and sk_bloom_plan report, fixed or scalable. */
static void test_filters_report_the_choice(void **state)
{
    static const struct {
        uint64_t n;
        double p;
    } cases[] = {{1000000, 0.01}, {1000000, 0.1}, {1000000, 1e-9}, {100000, 1.6e-4},
                 {1000, 0.01},    {1, 0.01},      {10, 1e-5},      {5000, 0.05}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct shape want = by_the_rule(cases[i].n, cases[i].p);
        sk_bloom *f = NULL;
        assert_int_equal(sk_bloom_new(&f, cases[i].n, cases[i].p, SK_BLOOM_AUTO), SK_OK);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.layout, want.layout);
        assert_int_equal(info.bits, want.bits);
        assert_int_equal(info.hashes, want.hashes);
        assert_int_equal(info.capacity, cases[i].n);
        sk_bloom_free(f);

        /* The first layer of a scalable filter has half the rate. */
        sk_bloom_options o = {.capacity = cases[i].n, .fp_rate = cases[i].p,
                              .layout = SK_BLOOM_AUTO, .expansion = 2};
        struct shape first = by_the_rule(cases[i].n, cases[i].p / 2);
        sk_bloom_layer layer;
        assert_int_equal(sk_bloom_plan(&o, 0, &layer), SK_OK);
        assert_int_equal(layer.bits, first.bits);
        assert_int_equal(layer.hashes, first.hashes);
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        info = info_of(f);
        assert_int_equal(info.layout, first.layout);
        assert_int_equal(info.bits, first.bits);
        assert_int_equal(info.hashes, first.hashes);
        sk_bloom_free(f);
    }
}

/* The later layers of a scalable filter keep its first layer's layout,
 * whatever AUTO would choose at their lower rates. */
static void test_layers_keep_the_layout(void **state)
{
    sk_bloom *f = NULL;
    sk_bloom_options o = {.capacity = 1000, .fp_rate = 0.01, .layout = SK_BLOOM_AUTO,
                          .expansion = 2};
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    sk_bloom_layout layout = info_of(f).layout;
    assert_int_equal(layout, by_the_rule(1000, 0.005).layout);
    char item[32];
    for (int i = 0; info_of(f).layers < 4; i++) {
        int len = snprintf(item, sizeof item, "item-%d", i);
        assert_true(sk_bloom_add(f, item, (size_t)len) >= 0);
    }
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.layout, layout);
    for (unsigned i = 0; i < info.layers; i++) {
        sk_bloom_layer layer;
        assert_int_equal(sk_bloom_get_layer(f, i, &layer), SK_OK);
        if (layout == SK_BLOOM_SPLIT)
            assert_true(layer.hashes == 8 || layer.hashes == 16);
        if (layout != SK_BLOOM_CLASSIC)
            assert_int_equal(layer.bits % 512, 0);
    }
    sk_bloom_free(f);
}

/* The choice is stored: a file and a dump of an AUTO filter open as the
 * same layout and answer the same, and so do filters of the layouts AUTO
 * chose before (blocked at 1%), made explicitly. */
static void test_the_choice_survives_files_and_dumps(void **state)
{
    char dir[] = "/tmp/sketch_bloom_auto_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const sk_bloom_layout layouts[] = {SK_BLOOM_AUTO, SK_BLOOM_BLOCKED,
                                              SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        sk_bloom *f = NULL;
        assert_int_equal(sk_bloom_new(&f, 20000, 0.01, layouts[l]), SK_OK);
        char item[32];
        for (int i = 0; i < 20000; i++) {
            int len = snprintf(item, sizeof item, "in-%d", i);
            assert_true(sk_bloom_add(f, item, (size_t)len) >= 0);
        }
        sk_bloom_info before = info_of(f);
        if (layouts[l] != SK_BLOOM_AUTO)
            assert_int_equal(before.layout, layouts[l]);

        char path[sizeof dir + 16];
        snprintf(path, sizeof path, "%s/f%zu.bloom", dir, l);
        assert_int_equal(sk_bloom_save(f, path), SK_OK);
        sk_bloom *g = NULL;
        assert_int_equal(sk_bloom_open(&g, path, SK_BLOOM_VERIFY, NULL), SK_OK);
        uint64_t size;
        assert_int_equal(sk_bloom_serialized_size(f, &size), SK_OK);
        size_t len = (size_t)size, written = 0;
        void *buf = malloc(len);
        assert_non_null(buf);
        assert_int_equal(sk_bloom_serialize(f, buf, len, &written), SK_OK);
        sk_bloom *h = NULL;
        assert_int_equal(sk_bloom_deserialize(&h, buf, written, NULL), SK_OK);
        free(buf);
        const sk_bloom *copies[] = {g, h};
        for (int c = 0; c < 2; c++) {
            sk_bloom_info after = info_of(copies[c]);
            assert_int_equal(after.layout, before.layout);
            assert_int_equal(after.bits, before.bits);
            assert_int_equal(after.hashes, before.hashes);
            assert_int_equal(after.count, before.count);
            for (int i = 0; i < 40000; i += 7) {
                int n = snprintf(item, sizeof item, i < 20000 ? "in-%d" : "out-%d", i);
                assert_int_equal(sk_bloom_contains(copies[c], item, (size_t)n),
                                 sk_bloom_contains(f, item, (size_t)n));
            }
        }
        sk_bloom_free(h);
        sk_bloom_free(g);
        sk_bloom_free(f);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_rule_over_a_grid),
        cmocka_unit_test(test_the_documented_choices),
        cmocka_unit_test(test_filters_report_the_choice),
        cmocka_unit_test(test_layers_keep_the_layout),
        cmocka_unit_test(test_the_choice_survives_files_and_dumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
