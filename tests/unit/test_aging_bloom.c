/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_aging_bloom.c: the aging Bloom filter's API, with cmocka: parameters
 * and limits; no false negative inside the window, and forgetting at
 * exactly the add or time docs/aging-bloom.md gives (at a rate so low that
 * "absent" is exact); late items; what an add reports; merges; copies and
 * clears; budgets and the caller's allocator. The serialized form is
 * test_aging_bloom_format.c's.
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

#include "aging_bloom_test_util.h"

static void test_parameters(void **state)
{
    sk_aging_bloom *f = NULL;
    assert_int_equal(sk_aging_bloom_new(&f, 1000000, 0.01), SK_OK);
    sk_aging_bloom_info info = info_of(f);
    assert_int_equal(info.generations, SK_AGING_BLOOM_DEFAULT_GENERATIONS);
    assert_int_equal(info.capacity, 1000000);
    assert_int_equal(info.window, 0);
    assert_int_equal(info.span, 333334); /* ceil(1e6 / 3) */
    assert_int_equal(info.newest, 0);
    assert_int_equal(info.count, 0);
    /* The g generations together answer at P: 1 - (1 - p')^g = P. */
    assert_true(fabs(-expm1(4 * log1p(-info.generation_fp_rate)) - 0.01) < 1e-15);
    assert_true(info.bits > 0 && info.hashes > 0 && info.memory > info.bits / 8);
    sk_aging_bloom_free(f);
    f = make(1000, 0, 0, 0);
    assert_true(info_of(f).fp_rate == SK_BLOOM_DEFAULT_FP_RATE);
    sk_aging_bloom_free(f);
    /* Small rates keep their digits: p' = P / g to first order. */
    f = make(1000, 1e-9, 8, 0);
    assert_true(fabs(info_of(f).generation_fp_rate / (1e-9 / 8) - 1) < 1e-8);
    sk_aging_bloom_free(f);
    f = make(1000, 0.01, 4, 3600);
    assert_int_equal(info_of(f).span, 1200);
    sk_aging_bloom_free(f);

    const sk_aging_bloom_options einval[] = {
        {0},
        {.capacity = 10, .fp_rate = -0.1},
        {.capacity = 10, .fp_rate = 0.6},
        {.capacity = 10, .fp_rate = NAN},
        {.capacity = 10, .fp_rate = 1e-300}, /* a generation's rate past the limit */
        {.capacity = 10, .generations = 1},
        {.capacity = 10, .generations = SK_AGING_BLOOM_MAX_GENERATIONS + 1},
        {.capacity = 10, .layout = (sk_bloom_layout)7},
    };
    for (size_t i = 0; i < sizeof einval / sizeof einval[0]; i++) {
        f = (sk_aging_bloom *)1;
        assert_int_equal(sk_aging_bloom_create(&f, &einval[i]), SK_EINVAL);
        assert_null(f);
    }
    assert_int_equal(sk_aging_bloom_new(&f, 10, 0), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_new(&f, 0, 0.01), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_create(&f, NULL), SK_EINVAL);
    const sk_aging_bloom_options etoolarge[] = {
        {.capacity = 10, .window = (UINT64_C(1) << 62) + 1},
        {.capacity = 10, .window = UINT64_MAX},
        {.capacity = UINT64_MAX},
        {.capacity = UINT64_C(1) << 50, .generations = 2},
    };
    for (size_t i = 0; i < sizeof etoolarge / sizeof etoolarge[0]; i++) {
        assert_int_equal(sk_aging_bloom_create(&f, &etoolarge[i]), SK_ETOOLARGE);
        assert_null(f);
    }
    /* The limits themselves are fine. */
    f = make(1, 0.5, SK_AGING_BLOOM_MAX_GENERATIONS, UINT64_C(1) << 62);
    assert_int_equal(add(f, 1, UINT64_MAX), 1);
    assert_int_equal(has(f, 1, UINT64_MAX), 1);
    sk_aging_bloom_free(f);
    f = make(1, 0.5, SK_AGING_BLOOM_MIN_GENERATIONS, 0);
    assert_int_equal(add(f, 1, 0), 1);
    sk_aging_bloom_free(f);
}

/* Count window: after every add n, item a (added as add a) is held exactly
 * while n < a + g c - ((a - 1) mod c), and the last `capacity` always are. */
static void count_forgetting(uint64_t capacity, unsigned g)
{
    sk_aging_bloom *f = make(capacity, TINY, g, 0);
    uint64_t c = (capacity + g - 2) / (g - 1), n_items = 3 * g * c + 7;
    for (uint64_t n = 1; n <= n_items; n++) {
        assert_int_equal(add(f, n, 0), 1);
        uint64_t from = n > g * c + 2 ? n - g * c - 2 : 1;
        for (uint64_t a = from; a <= n; a++) {
            int held = n < a + g * c - (a - 1) % c;
            assert_true(n - a >= capacity || held); /* the window */
            if (has(f, a, 0) != held)
                fail_msg("capacity %llu g %u: item %llu after %llu adds: %d, expected %d",
                         (unsigned long long)capacity, g, (unsigned long long)a,
                         (unsigned long long)n, !held, held);
        }
        sk_aging_bloom_info info = info_of(f);
        assert_int_equal(info.newest, n);
        /* Every add set bits: the count is what the held generations took. */
        uint64_t in_newest = (n - 1) % c + 1, epochs = (n - 1) / c + 1;
        uint64_t older = (epochs - 1 < g - 1 ? epochs - 1 : g - 1) * c;
        assert_int_equal(info.count, in_newest + older);
    }
    sk_aging_bloom_free(f);
}

static void test_count_window_forgets_exactly(void **state)
{
    count_forgetting(300, 4);  /* c = 100 */
    count_forgetting(301, 4);  /* c = 101: the window is not a multiple */
    count_forgetting(50, 2);   /* c = 50 */
    count_forgetting(64, 5);   /* c = 16 */
    count_forgetting(1, 2);    /* c = 1: every add rotates */
}

static void test_count_window_no_false_negative(void **state)
{
    /* At the default rate: only false negatives can fail this. */
    sk_aging_bloom *f = make(10000, 0.01, 4, 0);
    uint64_t seed = 7;
    uint64_t *items = malloc(100000 * sizeof *items);
    assert_non_null(items);
    for (uint64_t n = 0; n < 100000; n++) {
        items[n] = splitmix64(&seed);
        assert_true(add(f, items[n], 0) >= 0);
        if (n % 997 == 0 || n == 99999)
            for (uint64_t a = n >= 10000 ? n - 9999 : 0; a <= n; a++)
                assert_int_equal(has(f, items[a], 0), 1);
    }
    free(items);
    sk_aging_bloom_free(f);
}

static void test_add_reports_and_refreshes(void **state)
{
    sk_aging_bloom *f = make(300, TINY, 4, 0); /* c = 100 */
    assert_int_equal(add(f, 1, 0), 1);
    assert_int_equal(add(f, 1, 0), 0); /* in its own generation */
    for (uint64_t i = 100; i < 250; i++)
        assert_int_equal(add(f, i, 0), 1);
    /* In an older generation: not new, and now in the newest as well, so it
     * outlives its first add's generation (add 1 would go at add 401). */
    assert_int_equal(add(f, 1, 0), 0);
    for (uint64_t i = 1000; i < 1300; i++)
        add(f, i, 0);
    assert_int_equal(has(f, 1, 0), 1);
    for (uint64_t i = 2000; i < 2100; i++)
        add(f, i, 0);
    assert_int_equal(has(f, 1, 0), 0);
    assert_int_equal(sk_aging_bloom_add(NULL, "x", 1, 0), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_add(f, NULL, 1, 0), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_contains(NULL, "x", 1, 0), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_add(f, NULL, 0, 0), 1); /* the empty item */
    assert_int_equal(sk_aging_bloom_contains(f, "", 0, 0), 1);
    sk_aging_bloom_free(f);
}

/* A steady stream of `capacity` items a window fills each generation to
 * its size and no further, even where the span is rounded up (1000 / 3):
 * no generation grows a second layer, and the bits stay as created. */
static void test_time_window_steady_fits(void **state)
{
    (void)state;
    sk_aging_bloom_options o = {.capacity = 30000, .fp_rate = 0.01, .window = 1000};
    sk_aging_bloom *f;
    assert_int_equal(sk_aging_bloom_create(&f, &o), SK_OK);
    uint64_t bits = info_of(f).bits, item = 0;
    for (uint64_t t = 0; t < 5000; t++)
        for (int i = 0; i < 30; i++)
            assert_true(add(f, item++, t) >= 0);
    assert_int_equal(info_of(f).bits, bits);
    sk_aging_bloom_free(f);
}

/* Time window T = 1000, g = 4: span 334. An item of time t is held for
 * every query time below (t / 334 + 4) 334. */
static void test_time_window_forgets_exactly(void **state)
{
    const uint64_t span = 334, g = 4;
    sk_aging_bloom *f = make(1000, TINY, 4, 1000);
    uint64_t seed = 11, t = 5000;
    uint64_t times[3000];
    for (uint64_t i = 0; i < 3000; i++) {
        /* Mostly forward, a quarter late by up to 1.5 windows. */
        t += splitmix64(&seed) % 5;
        uint64_t r = splitmix64(&seed), when = r % 4 == 0 ? t - r / 4 % 1500 : t;
        uint64_t newest = info_of(f).newest / span; /* the newest epoch */
        int rc = add(f, i, when);
        times[i] = when;
        if (when / span + g <= newest) {
            assert_int_equal(rc, 0); /* forgotten at once */
            times[i] = UINT64_MAX;
        } else {
            assert_int_equal(rc, 1);
        }
        if (i % 50 != 0)
            continue;
        for (uint64_t j = 0; j <= i; j++) {
            for (uint64_t now = t; now < t + 1400; now += 97) {
                /* Queries here are at or after the newest add. */
                int held = times[j] != UINT64_MAX && now < (times[j] / span + g) * span;
                if (times[j] != UINT64_MAX && now >= times[j])
                    assert_true(now - times[j] >= 1000 || held); /* the window */
                assert_int_equal(has(f, j, now), held);
            }
        }
    }
    /* A query changes nothing, whatever its time. */
    sk_aging_bloom *before;
    assert_int_equal(sk_aging_bloom_copy(&before, f), SK_OK);
    assert_int_equal(has(f, 1, UINT64_MAX), 0);
    assert_int_equal(has(f, 1, 0), has(f, 1, t));
    assert_same_bytes(before, f);
    sk_aging_bloom_free(before);
    sk_aging_bloom_free(f);
}

static void test_merge(void **state)
{
    sk_aging_bloom *a = make(300, TINY, 4, 1000), *b = make(300, TINY, 4, 1000); /* span 334 */
    sk_aging_bloom *counted = make(300, TINY, 4, 0), *other = make(300, TINY, 4, 2000);
    assert_int_equal(sk_aging_bloom_merge(counted, counted), SK_EINCOMPAT);
    assert_int_equal(sk_aging_bloom_merge(a, counted), SK_EINCOMPAT);
    assert_int_equal(sk_aging_bloom_merge(a, other), SK_EINCOMPAT);
    assert_int_equal(sk_aging_bloom_merge(NULL, a), SK_EINVAL);
    /* a: epochs 3..5; b: epochs 1..7, and a burst in epoch 5 that grows its
     * generation past a's. */
    for (uint64_t i = 0; i < 300; i++)
        add(a, i, 3 * 334 + i * 3 * 334 / 300);
    for (uint64_t i = 0; i < 700; i++)
        add(b, 1000 + i, 334 + i * 7 * 334 / 700);
    for (uint64_t i = 0; i < 500; i++)
        add(b, 5000 + i, 5 * 334);
    assert_int_equal(sk_aging_bloom_merge(a, b), SK_OK);
    assert_int_equal(sk_aging_bloom_merge(a, a), SK_OK);
    assert_int_equal(info_of(a).newest, 7 * 334); /* b's newer epoch became a's */
    /* Held: epochs 4..7 of both. */
    for (uint64_t i = 0; i < 300; i++)
        assert_int_equal(has(a, i, 0), 3 * 334 + i * 3 * 334 / 300 >= 4 * 334);
    for (uint64_t i = 0; i < 700; i++)
        assert_int_equal(has(a, 1000 + i, 0), 334 + i * 7 * 334 / 700 >= 4 * 334);
    for (uint64_t i = 0; i < 500; i++)
        assert_int_equal(has(a, 5000 + i, 0), 1);
    /* A source older than the destination gives only what is still held;
     * and a grown destination takes a shorter source. */
    sk_aging_bloom *old = make(300, TINY, 4, 1000);
    add(old, 7777, 3 * 334);
    add(old, 8888, 5 * 334);
    assert_int_equal(sk_aging_bloom_merge(a, old), SK_OK);
    assert_int_equal(has(a, 7777, 0), 0);
    assert_int_equal(has(a, 8888, 0), 1);
    assert_int_equal(info_of(a).newest, 7 * 334);
    sk_aging_bloom *all[] = {old, a, b, counted, other};
    for (size_t i = 0; i < 5; i++)
        sk_aging_bloom_free(all[i]);
}

static void test_copy_and_clear(void **state)
{
    for (uint64_t window = 0; window <= 500; window += 500) {
        sk_aging_bloom *f = make(300, TINY, 4, window), *c;
        for (uint64_t i = 0; i < 1000; i++)
            add(f, i, i);
        assert_int_equal(sk_aging_bloom_copy(&c, f), SK_OK);
        assert_same_bytes(f, c);
        /* The copy goes its own way from the same state. */
        for (uint64_t i = 1000; i < 1200; i++)
            assert_int_equal(add(f, i, i), add(c, i, i));
        assert_same_bytes(f, c);
        sk_aging_bloom_info before = info_of(c);
        assert_int_equal(sk_aging_bloom_clear(c), SK_OK);
        sk_aging_bloom_info after = info_of(c);
        assert_int_equal(after.count, 0);
        assert_int_equal(after.newest, 0);
        if (window == 0)
            assert_int_equal(after.bits, before.bits);
        assert_int_equal(after.capacity, before.capacity);
        for (uint64_t i = 0; i < 1200; i++)
            assert_int_equal(has(c, i, 1199), 0);
        assert_int_equal(add(c, 5, 0), 1);
        assert_int_equal(has(c, 5, 0), 1);
        sk_aging_bloom_free(c);
        sk_aging_bloom_free(f);
    }
    assert_int_equal(sk_aging_bloom_clear(NULL), SK_EINVAL);
    sk_aging_bloom_free(NULL);
}

/* Counts what it hands out; fails every call from fail_at on (0: never). */
struct counter {
    size_t live;
    long calls, fail_at;
};

static void *counted_alloc(void *opaque, size_t size)
{
    struct counter *c = opaque;
    if (c->fail_at != 0 && ++c->calls >= c->fail_at)
        return NULL;
    void *p = malloc(size);
    if (p != NULL)
        c->live += size;
    return p;
}

static void counted_free(void *opaque, void *ptr, size_t size)
{
    struct counter *c = opaque;
    assert_true(c->live >= size);
    c->live -= size;
    free(ptr);
}

static void test_budget_and_allocator(void **state)
{
    struct counter c = {0};
    sk_allocator a = {counted_alloc, counted_free, &c, 0};
    for (uint64_t window = 0; window <= 1000; window += 1000) {
        sk_aging_bloom_options o = {.capacity = 3000, .fp_rate = 0.01, .window = window,
                                    .allocator = &a};
        sk_aging_bloom *f;
        assert_int_equal(sk_aging_bloom_create(&f, &o), SK_OK);
        /* Every byte it holds came from the allocator, and it says so. */
        uint64_t need = info_of(f).memory;
        assert_int_equal(need, c.live);
        sk_aging_bloom_free(f);
        assert_int_equal(c.live, 0);
        o.max_memory = need - 1;
        assert_int_equal(sk_aging_bloom_create(&f, &o), SK_EBUDGET);
        assert_int_equal(c.live, 0);
        o.max_memory = need + (window ? 20000 : 0);
        assert_int_equal(sk_aging_bloom_create(&f, &o), SK_OK);
        /* Time window: a burst grows its generation until the budget says
         * no; what was added stays. */
        uint64_t i = 0;
        int rc = SK_OK;
        for (; i < 100000 && rc >= 0; i++)
            rc = add(f, i, 0);
        assert_int_equal(info_of(f).memory, c.live);
        assert_true(info_of(f).memory <= o.max_memory);
        if (window) {
            assert_int_equal(rc, SK_EBUDGET);
            for (uint64_t j = 0; j + 1 < i; j++)
                assert_int_equal(has(f, j, 0), 1);
        } else {
            assert_true(rc >= 0);
        }
        /* Copies and reads through a failing allocator: a clear error and
         * nothing left behind, at every allocation. */
        size_t len;
        uint8_t *buf = bytes_of(f, &len);
        for (long fail = 1; fail < 40; fail++) {
            sk_aging_bloom *x = NULL, *y = NULL;
            size_t live = c.live;
            c.calls = 0;
            c.fail_at = fail;
            int r1 = sk_aging_bloom_copy(&x, f);
            c.calls = 0;
            int r2 = sk_aging_bloom_deserialize(&y, buf, len, &a);
            c.fail_at = 0;
            assert_true(r1 == SK_OK ? fail > 1 : r1 == SK_ENOMEM && x == NULL);
            assert_true(r2 == SK_OK ? fail > 1 : r2 == SK_ENOMEM && y == NULL);
            sk_aging_bloom_free(x);
            sk_aging_bloom_free(y);
            assert_int_equal(c.live, live);
        }
        /* A filter read back has no budget until one is set: then a burst
         * stops at it, what was added kept. */
        if (window) {
            sk_aging_bloom *back;
            assert_int_equal(sk_aging_bloom_deserialize(&back, buf, len, NULL), SK_OK);
            uint64_t held = info_of(back).memory;
            sk_aging_bloom_set_max_memory(back, held + 20000);
            rc = SK_OK;
            uint64_t k = 200000;
            for (; k < 300000 && rc >= 0; k++)
                rc = add(back, k, 0);
            assert_int_equal(rc, SK_EBUDGET);
            assert_true(info_of(back).memory <= held + 20000);
            for (uint64_t j = 200000; j + 1 < k; j++)
                assert_int_equal(has(back, j, 0), 1);
            /* No budget again: the burst goes on. */
            sk_aging_bloom_set_max_memory(back, 0);
            assert_true(add(back, k, 0) >= 0);
            sk_aging_bloom_free(back);
        }
        c.calls = 0;
        c.fail_at = 1;
        o.max_memory = 0;
        sk_aging_bloom *none = NULL;
        assert_int_equal(sk_aging_bloom_create(&none, &o), SK_ENOMEM);
        assert_null(none);
        c.fail_at = 0;
        free(buf);
        sk_aging_bloom_free(f);
        assert_int_equal(c.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters),
        cmocka_unit_test(test_count_window_forgets_exactly),
        cmocka_unit_test(test_count_window_no_false_negative),
        cmocka_unit_test(test_add_reports_and_refreshes),
        cmocka_unit_test(test_time_window_forgets_exactly),
        cmocka_unit_test(test_time_window_steady_fits),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_copy_and_clear),
        cmocka_unit_test(test_budget_and_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
