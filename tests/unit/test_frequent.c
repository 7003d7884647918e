/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_frequent.c: the frequent-items summary (sketch/frequent.h) against
 * its theory, with cmocka: on seeded Zipf streams, with the exact counts
 * kept beside, every interval [lower, upper] holds the true count, no
 * interval is wider than the threshold, the threshold is at most N/m, and
 * every item seen more often than the threshold is listed; the same for
 * merges of summaries of parts of a stream; weights, copies, clears, bad
 * arguments and an allocator that fails.
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

#include "sketch.h"
#include "../common/test_util.h"

#define MAX_DISTINCT 20000

/* Item i's bytes: short for most, past the inline size for every 5th, so
 * that both ways of storing an item are exercised. */
static size_t item_of(uint32_t i, char *buf)
{
    if (i % 5 == 0)
        return (size_t)sprintf(buf, "a-rather-long-item-name-that-does-not-fit-inline-%u", i);
    return (size_t)sprintf(buf, "i%u", i);
}

/* Draws from a Zipf law of exponent s over n items, by its table of
 * cumulative weights. */
struct zipf {
    double cdf[MAX_DISTINCT];
    uint32_t n;
};

static void zipf_init(struct zipf *z, uint32_t n, double s)
{
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += pow((double)(i + 1), -s);
        z->cdf[i] = sum;
    }
    for (uint32_t i = 0; i < n; i++)
        z->cdf[i] /= sum;
    z->n = n;
}

static uint32_t zipf_draw(const struct zipf *z, uint64_t *rng)
{
    double u = (double)(splitmix64(rng) >> 11) * 0x1.0p-53;
    uint32_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Checks f against the exact counts of items 0..n: the whole guarantee. */
static void check_guarantee(const sk_frequent *f, const uint64_t *exact, uint32_t n,
                            uint64_t total)
{
    sk_frequent_info info;
    sk_frequent_get_info(f, &info);
    assert_int_equal(info.total, total);
    assert_true(info.items <= info.counters);
    assert_true(info.threshold <= total / info.counters); /* integers: floor(N/m) */
    sk_frequent_entry *list = calloc(info.items + 1, sizeof *list);
    assert_non_null(list);
    int got = sk_frequent_list(f, list, info.items + 1);
    assert_int_equal(got, (int)info.items);
    for (int i = 0; i < got; i++) {
        if (i > 0)
            assert_true(list[i - 1].upper >= list[i].upper);
        assert_int_equal(list[i].count, list[i].upper);
        assert_true(list[i].upper - list[i].lower <= info.threshold);
    }
    char buf[128];
    for (uint32_t i = 0; i < n; i++) {
        size_t len = item_of(i, buf);
        sk_frequent_entry e;
        int kept = sk_frequent_query(f, buf, len, &e);
        assert_true(kept == 0 || kept == 1);
        if (exact[i] > info.threshold)
            assert_int_equal(kept, 1); /* every heavy item is kept */
        assert_true(e.lower <= exact[i]);
        assert_true(exact[i] <= e.upper);
        if (!kept)
            assert_int_equal(e.upper, info.threshold);
    }
    free(list);
}

struct stream_case {
    uint32_t counters, distinct, length;
    double s;
    uint32_t max_weight; /* weights drawn from 1..max_weight */
    uint32_t parts;      /* summaries merged into one */
};

static void run_stream(const struct stream_case *sc, uint64_t seed)
{
    static struct zipf z;
    zipf_init(&z, sc->distinct, sc->s);
    uint64_t *exact = calloc(sc->distinct, sizeof *exact);
    sk_frequent *parts[8];
    for (uint32_t p = 0; p < sc->parts; p++)
        assert_int_equal(sk_frequent_new(&parts[p], sc->counters), SK_OK);
    uint64_t rng = seed, total = 0;
    char buf[128];
    for (uint32_t t = 0; t < sc->length; t++) {
        uint32_t i = zipf_draw(&z, &rng);
        uint64_t w = 1 + splitmix64(&rng) % sc->max_weight;
        /* Parts see different shares of the stream, and drift over it. */
        uint32_t p = (uint32_t)(splitmix64(&rng) % (sc->parts * 2)) % sc->parts;
        if (t > sc->length / 2 && sc->parts > 1 && i % 3 == 0)
            p = sc->parts - 1;
        size_t len = item_of(i, buf);
        assert_int_equal(sk_frequent_add(parts[p], buf, len, w), SK_OK);
        exact[i] += w;
        total += w;
    }
    /* Merged as a chain into part 0. */
    for (uint32_t p = 1; p < sc->parts; p++) {
        assert_int_equal(sk_frequent_merge(parts[0], parts[p]), SK_OK);
        sk_frequent_free(parts[p]);
    }
    check_guarantee(parts[0], exact, sc->distinct, total);
    sk_frequent_free(parts[0]);
    free(exact);
}

static void test_zipf_streams(void **state)
{
    static const struct stream_case cases[] = {
        {16, 2000, 20000, 1.0, 1, 1},   {64, 5000, 50000, 1.0, 1, 1},
        {256, 20000, 100000, 0.8, 1, 1}, {100, 20000, 60000, 1.3, 1, 1},
        {50, 1000, 30000, 0.5, 5, 1},   {128, 10000, 80000, 1.1, 3, 1},
        {64, 5000, 50000, 1.0, 1, 2},   {100, 20000, 80000, 0.9, 2, 4},
        {32, 3000, 40000, 1.2, 1, 8},   {7, 500, 10000, 1.0, 1, 3},
        {1, 100, 5000, 1.0, 2, 2},      {2, 50, 5000, 0.0, 1, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (uint64_t trial = 0; trial < 8; trial++)
            run_stream(&cases[c], 1000 * c + trial);
}

/* With no more distinct items than counters, every count is exact. */
static void test_exact_when_few(void **state)
{
    sk_frequent *f;
    assert_int_equal(sk_frequent_new(&f, 100), SK_OK);
    uint64_t exact[100] = {0};
    uint64_t rng = 5;
    char buf[128];
    for (int t = 0; t < 20000; t++) {
        uint32_t i = (uint32_t)(splitmix64(&rng) % 100);
        uint64_t w = 1 + i % 4;
        assert_int_equal(sk_frequent_add(f, buf, item_of(i, buf), w), SK_OK);
        exact[i] += w;
    }
    for (uint32_t i = 0; i < 100; i++) {
        sk_frequent_entry e;
        assert_int_equal(sk_frequent_query(f, buf, item_of(i, buf), &e), exact[i] > 0);
        assert_int_equal(e.lower, exact[i]);
        assert_int_equal(e.upper, exact[i]);
    }
    sk_frequent_entry top[3];
    assert_int_equal(sk_frequent_list(f, top, 3), 3);
    for (int k = 0; k < 3; k++) { /* the list's top is the true top */
        uint64_t above = 0;
        for (uint32_t i = 0; i < 100; i++)
            above += exact[i] > top[k].count;
        assert_true(above <= (uint64_t)k);
    }
    sk_frequent_free(f);
}

/* A weight w is w adds of one; a merge with itself doubles. */
static void test_weights_and_self_merge(void **state)
{
    sk_frequent *a, *b;
    assert_int_equal(sk_frequent_new(&a, 8), SK_OK);
    assert_int_equal(sk_frequent_new(&b, 8), SK_OK);
    for (int i = 0; i < 7; i++)
        assert_int_equal(sk_frequent_add(b, "x", 1, 1), SK_OK);
    assert_int_equal(sk_frequent_add(a, "x", 1, 7), SK_OK);
    assert_int_equal(sk_frequent_add(a, "y", 1, 0), SK_OK); /* nothing */
    sk_frequent_entry ea, eb;
    assert_int_equal(sk_frequent_query(a, "x", 1, &ea), 1);
    assert_int_equal(sk_frequent_query(b, "x", 1, &eb), 1);
    assert_int_equal(ea.count, 7);
    assert_int_equal(eb.count, 7);
    assert_int_equal(sk_frequent_query(a, "y", 1, &ea), 0);
    assert_int_equal(sk_frequent_add(a, "", 0, 3), SK_OK); /* the empty item */
    assert_int_equal(sk_frequent_merge(a, a), SK_OK);
    assert_int_equal(sk_frequent_query(a, "x", 1, &ea), 1);
    assert_int_equal(ea.count, 14);
    assert_int_equal(sk_frequent_query(a, "", 0, &ea), 1);
    assert_int_equal(ea.lower, 6);
    sk_frequent_info info;
    sk_frequent_get_info(a, &info);
    assert_int_equal(info.total, 20);
    /* A total past UINT64_MAX is refused, and changes nothing. */
    assert_int_equal(sk_frequent_add(a, "z", 1, UINT64_MAX - 5), SK_EINVAL);
    sk_frequent_get_info(a, &info);
    assert_int_equal(info.total, 20);
    assert_int_equal(sk_frequent_add(b, "z", 1, UINT64_MAX - 7), SK_OK);
    assert_int_equal(sk_frequent_merge(a, b), SK_EINVAL);
    sk_frequent_free(a);
    sk_frequent_free(b);
}

static void assert_same_lists(const sk_frequent *a, const sk_frequent *b)
{
    sk_frequent_entry la[64], lb[64];
    int na = sk_frequent_list(a, la, 64), nb = sk_frequent_list(b, lb, 64);
    assert_int_equal(na, nb);
    for (int i = 0; i < na; i++) {
        assert_int_equal(la[i].len, lb[i].len);
        assert_memory_equal(la[i].item, lb[i].item, la[i].len);
        assert_int_equal(la[i].lower, lb[i].lower);
        assert_int_equal(la[i].upper, lb[i].upper);
    }
}

static void test_copy_and_clear(void **state)
{
    sk_frequent *f, *c;
    assert_int_equal(sk_frequent_new(&f, 32), SK_OK);
    uint64_t rng = 9;
    char buf[128];
    for (int t = 0; t < 5000; t++) {
        uint32_t i = (uint32_t)(splitmix64(&rng) % 200);
        assert_int_equal(sk_frequent_add(f, buf, item_of(i, buf), 1), SK_OK);
    }
    assert_int_equal(sk_frequent_copy(&c, f), SK_OK);
    assert_same_lists(f, c);
    /* The copy is independent, and goes on as the original does. */
    for (int t = 0; t < 3000; t++) {
        uint32_t i = (uint32_t)(splitmix64(&rng) % 300);
        size_t len = item_of(i, buf);
        assert_int_equal(sk_frequent_add(f, buf, len, 2), SK_OK);
        assert_int_equal(sk_frequent_add(c, buf, len, 2), SK_OK);
    }
    assert_same_lists(f, c);
    assert_int_equal(sk_frequent_clear(c), SK_OK);
    sk_frequent_info info;
    sk_frequent_get_info(c, &info);
    assert_int_equal(info.items, 0);
    assert_int_equal(info.total, 0);
    assert_int_equal(info.threshold, 0);
    assert_int_equal(info.counters, 32);
    sk_frequent_entry e;
    assert_int_equal(sk_frequent_list(c, &e, 1), 0);
    assert_int_equal(sk_frequent_add(c, "q", 1, 4), SK_OK);
    assert_int_equal(sk_frequent_query(c, "q", 1, &e), 1);
    assert_int_equal(e.lower, 4);
    sk_frequent_get_info(f, &info);
    assert_int_equal(info.total, 5000 + 6000);
    sk_frequent_free(f);
    sk_frequent_free(c);
}

static void test_bad_arguments(void **state)
{
    sk_frequent *f = (sk_frequent *)&f, *g;
    assert_int_equal(sk_frequent_create(NULL, &(sk_frequent_options){0}), SK_EINVAL);
    assert_int_equal(sk_frequent_create(&f, NULL), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_frequent_new(&f, SK_FREQUENT_MAX_COUNTERS + 1), SK_EINVAL);
    assert_int_equal(sk_frequent_new(&f, 0), SK_OK);
    sk_frequent_info info;
    sk_frequent_get_info(f, &info);
    assert_int_equal(info.counters, SK_FREQUENT_DEFAULT_COUNTERS);
    assert_int_equal(sk_frequent_new(&g, 10), SK_OK);
    assert_int_equal(sk_frequent_merge(f, g), SK_EINCOMPAT);
    assert_int_equal(sk_frequent_merge(NULL, g), SK_EINVAL);
    assert_int_equal(sk_frequent_merge(f, NULL), SK_EINVAL);
    assert_int_equal(sk_frequent_add(NULL, "a", 1, 1), SK_EINVAL);
    assert_int_equal(sk_frequent_add(f, NULL, 1, 1), SK_EINVAL);
    assert_int_equal(sk_frequent_add(f, "a", (size_t)SK_FREQUENT_MAX_ITEM + 1, 1), SK_EINVAL);
    assert_int_equal(sk_frequent_list(f, NULL, 1), SK_EINVAL);
    assert_int_equal(sk_frequent_list(NULL, NULL, 0), SK_EINVAL);
    sk_frequent_entry e;
    assert_int_equal(sk_frequent_query(f, NULL, 1, &e), SK_EINVAL);
    assert_int_equal(sk_frequent_query(f, "a", 1, NULL), SK_EINVAL);
    assert_int_equal(sk_frequent_copy(NULL, f), SK_EINVAL);
    sk_frequent_free(g);
    assert_int_equal(sk_frequent_copy(&g, NULL), SK_EINVAL);
    assert_null(g);
    assert_int_equal(sk_frequent_clear(NULL), SK_EINVAL);
    sk_frequent_get_info(NULL, &info);
    assert_int_equal(info.counters, 0);
    sk_frequent_free(f);
    sk_frequent_free(NULL);
}

/* An allocator that fails call number fail_at and every one after. */
struct failing {
    long calls, fail_at;
    size_t live;
};

static void *failing_alloc(void *opaque, size_t size)
{
    struct failing *fa = opaque;
    if (++fa->calls >= fa->fail_at)
        return NULL;
    fa->live += size;
    return malloc(size);
}

static void failing_free(void *opaque, void *ptr, size_t size)
{
    struct failing *fa = opaque;
    fa->live -= size;
    free(ptr);
}

static void test_out_of_memory(void **state)
{
    char buf[128];
    for (long fail_at = 1; fail_at < 300; fail_at += 3) {
        struct failing fa = {0, fail_at, 0};
        sk_allocator a = {failing_alloc, failing_free, &fa, 0};
        sk_frequent *f, *g = NULL, *c = NULL;
        int rc = sk_frequent_create(&f, &(sk_frequent_options){.counters = 64, .allocator = &a});
        if (rc != SK_OK) {
            assert_int_equal(rc, SK_ENOMEM);
            assert_int_equal(fa.live, 0);
            continue;
        }
        rc = sk_frequent_create(&g, &(sk_frequent_options){.counters = 64, .allocator = &a});
        uint64_t rng = (uint64_t)fail_at, total = 0;
        for (int t = 0; t < 2000 && rc == SK_OK; t++) {
            uint32_t i = (uint32_t)(splitmix64(&rng) % 500);
            sk_frequent *to = t % 2 ? f : g;
            sk_frequent_info before, after;
            sk_frequent_get_info(to, &before);
            rc = sk_frequent_add(to, buf, item_of(i, buf), 1);
            sk_frequent_get_info(to, &after);
            if (rc == SK_OK) {
                total++;
            } else { /* a failed add adds nothing */
                assert_int_equal(after.total, before.total);
                assert_int_equal(after.items, before.items);
            }
        }
        if (rc == SK_OK)
            rc = sk_frequent_merge(f, g);
        if (rc == SK_OK) {
            sk_frequent_info info;
            sk_frequent_get_info(f, &info);
            assert_int_equal(info.total, total);
            rc = sk_frequent_copy(&c, f);
        }
        if (rc == SK_OK) {
            sk_frequent_entry top[8];
            rc = sk_frequent_list(c, top, 8);
            rc = rc < 0 ? rc : SK_OK;
        }
        assert_true(rc == SK_OK || rc == SK_ENOMEM);
        sk_frequent_free(c);
        sk_frequent_free(g);
        sk_frequent_free(f);
        assert_int_equal(fa.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zipf_streams),
        cmocka_unit_test(test_exact_when_few),
        cmocka_unit_test(test_weights_and_self_merge),
        cmocka_unit_test(test_copy_and_clear),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
