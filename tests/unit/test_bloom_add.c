/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_add.c: unit tests of adding items and asking for them, with
 * cmocka: what sk_bloom_add reports, no false negatives in any layout, the
 * false-positive rate of small filters, the calls by hash and in batches
 * agreeing with the single calls by item, and the operations on the sets
 * filters hold: union (sk_bloom_merge), intersection (sk_bloom_intersect),
 * which filters are compatible for them, and sk_bloom_clear.
 *
 * Items are 8-byte counters (the hardest input for a weak hash): the items
 * added have bit 62 clear and the absent ones probed for false positives
 * have it set, so the two sets never meet. Statistical assertions are loose
 * enough to fail with a probability far below 1e-9 for a correct library,
 * and every input is seeded, so a failure reproduces exactly.
 */
#define _GNU_SOURCE
#include <limits.h>
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
#include "../common/test_util.h"
#include "bloom_test_util.h"

static void test_add_reports_changes(void **state)
{
    sk_bloom *filters[] = {
        new_filter(1000, 0.01, SK_BLOOM_BLOCKED),    new_filter(1000, 0.01, SK_BLOOM_CLASSIC),
        new_filter(1000, 0.01, SK_BLOOM_AUTO),       new_explicit(4096, 3, SK_BLOOM_CLASSIC),
        new_explicit(4096, 3, SK_BLOOM_BLOCKED),     new_scalable(10, 0.01, 2, SK_BLOOM_BLOCKED),
        new_scalable(10, 0.01, 2, SK_BLOOM_CLASSIC),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        assert_int_equal(sk_bloom_contains(f, "alice", 5), 0);
        assert_int_equal(sk_bloom_add(f, "alice", 5), 1);
        assert_int_equal(sk_bloom_add(f, "alice", 5), 0);
        assert_int_equal(sk_bloom_contains(f, "alice", 5), 1);
        assert_int_equal(sk_bloom_add(f, "bob", 3), 1);
        assert_int_equal(sk_bloom_add(f, "", 0), 1);
        assert_int_equal(sk_bloom_add(f, "", 0), 0);
        assert_int_equal(sk_bloom_contains(f, "", 0), 1);
        /* Every byte and the length count. */
        assert_int_equal(sk_bloom_contains(f, "alic", 4), 0);
        assert_int_equal(sk_bloom_contains(f, "alicf", 5), 0);
        assert_int_equal(info_of(f).count, 3);
        /* Items are read at any alignment. */
        char buf[32];
        for (int off = 0; off < 8; off++) {
            memcpy(buf + off, "unaligned item", 14);
            assert_int_equal(sk_bloom_add(f, buf + off, 14), off == 0 ? 1 : 0);
        }
        sk_bloom_free(f);
    }
}

/* Never a false negative, for every layout, and for scalable filters across
 * many layers. */
static void test_no_false_negatives(void **state)
{
    const uint64_t n = 100000;
    sk_bloom *filters[] = {
        new_filter(n, 0.01, SK_BLOOM_BLOCKED),
        new_filter(n, 0.01, SK_BLOOM_CLASSIC),
        new_filter(n, 1e-5, SK_BLOOM_AUTO),
        new_filter(n / 10, 0.1, SK_BLOOM_BLOCKED), /* ten times over capacity */
        new_explicit(123457, 5, SK_BLOOM_CLASSIC),
        new_explicit(100000, 64, SK_BLOOM_BLOCKED),
        new_filter(n, 0.01, SK_BLOOM_SPLIT),
        new_filter(n, 1e-5, SK_BLOOM_SPLIT), /* 16 lanes */
        new_filter(n / 10, 0.1, SK_BLOOM_SPLIT),
        new_explicit(100000, 16, SK_BLOOM_SPLIT),
        new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT),
        new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED),
        new_scalable(100, 0.001, 4, SK_BLOOM_CLASSIC),
        new_scalable(5000, 0.05, 1, SK_BLOOM_AUTO),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        uint64_t changed = add_range(f, 0, n);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.count, changed);
        assert_all_found(f, 0, n);
        if (info.expansion != 0) {
            assert_true(info.layers >= 4);
            assert_true(info.capacity >= changed);
        }
        sk_bloom_free(f);
    }
}

/* Small filters meet their rate too. `trials` filters of `n` items each
 * (different items), `queries` absent items each: the false positives
 * must stay below E + 5 sqrt(E) + 3, E the count the expected rate gives
 * (a Poisson count exceeds that with chance below 1e-6), and below the
 * same bound for the requested rate. A scalable filter starting at 10
 * items has small first layers, so it is held to this too. */
static int check_small_filter_rate(int scalable, sk_bloom_layout layout, uint64_t n,
                                    double p, unsigned trials, uint64_t queries)
{
    uint64_t fp = 0;
    double expected = 0;
    for (unsigned t = 0; t < trials; t++) {
        sk_bloom *f = scalable ? new_scalable(10, p, 2, layout) : new_filter(n, p, layout);
        uint64_t base = (uint64_t)t << 32;
        add_range(f, base, base + n);
        expected += sk_bloom_expected_fp_rate(f, n) * (double)queries;
        fp += count_found(f, ABSENT_BIT | base, queries);
        sk_bloom_free(f);
    }
    double bound = expected + 5 * sqrt(expected) + 3;
    double requested = p * (double)trials * (double)queries;
    double p_bound = requested + 5 * sqrt(requested) + 3;
    int failed = (double)fp > bound || (double)fp > p_bound;
    if (failed)
        print_error("%s%s, %llu items at %g: %llu false positives in %.0f queries, "
                    "expected %.1f (at most %.0f), requested rate gives %.1f\n",
                    scalable ? "scalable " : "", layout == SK_BLOOM_CLASSIC ? "classic" : "blocked",
                    (unsigned long long)n, p, (unsigned long long)fp,
                    (double)trials * (double)queries, expected, bound, requested);
    return failed;
}

static void test_small_filters_meet_their_rate(void **state)
{
    int failed = check_small_filter_rate(0, SK_BLOOM_BLOCKED, 100, 1e-6, 400, 10000);
    failed += check_small_filter_rate(1, SK_BLOOM_BLOCKED, 1000, 1e-5, 20, 100000);
    failed += check_small_filter_rate(0, SK_BLOOM_CLASSIC, 100, 1e-6, 400, 10000);
    failed += check_small_filter_rate(1, SK_BLOOM_CLASSIC, 1000, 1e-5, 20, 100000);
    assert_int_equal(failed, 0);
}

/* The calls by hash are the calls by item with the item's hash: the same
 * answers and the same bytes, single and in batches, every layout. */
static void test_calls_by_hash_are_calls_by_item(void **state)
{
    enum { N = 5003 };
    static uint64_t keys[N];
    static const void *items[N];
    static size_t lens[N];
    static sk_bloom_hash hashes[N];
    static uint8_t added[N], found[N], found_hash[N];
    uint64_t seed = 11;
    for (size_t i = 0; i < N; i++) {
        keys[i] = splitmix64(&seed) & ~ABSENT_BIT;
        items[i] = &keys[i];
        lens[i] = sizeof keys[i];
        hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
    }
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *byitem, *single, *batch;
        if (kind < 2) {
            sk_bloom_layout layout = kind == 0 ? SK_BLOOM_BLOCKED : SK_BLOOM_CLASSIC;
            byitem = new_filter(N, 0.01, layout);
            single = new_filter(N, 0.01, layout);
            batch = new_filter(N, 0.01, layout);
        } else {
            byitem = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
            single = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
            batch = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
        }
        assert_int_equal(sk_bloom_add_hash_batch(batch, hashes, N, added), SK_OK);
        for (size_t i = 0; i < N; i++) {
            int rc = sk_bloom_add(byitem, items[i], lens[i]);
            assert_int_equal(sk_bloom_add_hash(single, hashes[i]), rc);
            assert_int_equal(added[i], rc);
        }
        uint64_t size, single_size, batch_size;
        assert_int_equal(sk_bloom_serialized_size(byitem, &size), SK_OK);
        assert_int_equal(sk_bloom_serialized_size(single, &single_size), SK_OK);
        assert_int_equal(sk_bloom_serialized_size(batch, &batch_size), SK_OK);
        assert_int_equal(single_size, size);
        assert_int_equal(batch_size, size);
        uint8_t *a = malloc((size_t)size), *b = malloc((size_t)size), *c = malloc((size_t)size);
        size_t len;
        assert_true(a && b && c);
        assert_int_equal(sk_bloom_serialize(byitem, a, (size_t)size, &len), SK_OK);
        assert_int_equal(sk_bloom_serialize(single, b, (size_t)size, &len), SK_OK);
        assert_int_equal(sk_bloom_serialize(batch, c, (size_t)size, &len), SK_OK);
        assert_memory_equal(a, b, (size_t)size);
        assert_memory_equal(a, c, (size_t)size);
        free(a);
        free(b);
        free(c);
        /* Queries of present and absent items. */
        for (size_t i = 0; i < N; i++) {
            keys[i] ^= i % 2 ? ABSENT_BIT : 0;
            hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
        }
        sk_bloom_contains_batch(byitem, items, lens, N, found);
        sk_bloom_contains_hash_batch(byitem, hashes, N, found_hash);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(found_hash[i], found[i]);
            assert_int_equal(sk_bloom_contains_hash(byitem, hashes[i]), found[i]);
            if (i % 2 == 0)
                assert_int_equal(found[i], 1);
            keys[i] ^= i % 2 ? ABSENT_BIT : 0;
            hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
        }
        sk_bloom_free(byitem);
        sk_bloom_free(single);
        sk_bloom_free(batch);
    }
}

/* Filters filled through sk_bloom_hash_u64 of 64-bit hashes: no false
 * negatives, and the false-positive rate of the formula, within 5 binomial
 * standard errors over 2M absent hashes. */
static void test_hash_u64_meets_the_rate(void **state)
{
    enum { N = 1000000, ABSENT = 2000000 };
    static const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (int layout_i = 0; layout_i < 3; layout_i++) {
        sk_bloom_layout layout = layouts[layout_i];
        sk_bloom *f = new_filter(N, 0.01, layout);
        uint64_t seed = 5;
        for (uint64_t i = 0; i < N; i++)
            assert_true(sk_bloom_add_hash(f, sk_bloom_hash_u64(splitmix64(&seed))) >= 0);
        seed = 5;
        for (uint64_t i = 0; i < N; i++)
            assert_int_equal(sk_bloom_contains_hash(f, sk_bloom_hash_u64(splitmix64(&seed))), 1);
        uint64_t positives = 0;
        for (uint64_t i = 0; i < ABSENT; i++)
            positives += (uint64_t)sk_bloom_contains_hash(f, sk_bloom_hash_u64(splitmix64(&seed)));
        double expected = sk_bloom_expected_fp_rate(f, info_of(f).count);
        double sigma = sqrt(expected * (1 - expected) / ABSENT), rate = (double)positives / ABSENT;
        if (fabs(rate - expected) > 5 * sigma)
            print_error("layout %d: rate %g, expected %g (sigma %g)\n", layout, rate, expected, sigma);
        assert_true(fabs(rate - expected) <= 5 * sigma);
        sk_bloom_free(f);
    }
}

/* The batch calls agree exactly with the single ones, item by item, in the
 * same order, duplicates within a batch included. */
static void test_batch_matches_single(void **state)
{
    enum { N = 20011 }; /* not a multiple of any batch size */
    uint64_t *keys = malloc(N * sizeof *keys);
    const void **items = malloc(N * sizeof *items);
    size_t *lens = malloc(N * sizeof *lens);
    uint8_t *added = malloc(N), *found = malloc(N);
    assert_true(keys && items && lens && added && found);
    uint64_t seed = 7;
    for (size_t i = 0; i < N; i++) {
        /* One in four is a repeat of an earlier key, often within a batch. */
        keys[i] = (i > 0 && splitmix64(&seed) % 4 == 0) ? keys[i - 1 - splitmix64(&seed) % (i < 40 ? i : 40)]
                                                        : splitmix64(&seed) & ~ABSENT_BIT;
        items[i] = &keys[i];
        lens[i] = (i % 5 == 0) ? 5 : sizeof keys[i]; /* some shorter items */
    }
    /* writers 0: both filters take any number of writers; 1: the batch
     * filter has one writer (the default), the single-add filter many; 2:
     * the other way round. The plain
     * stores of one writer must set exactly the bits locked ORs set.
     * Scalable filters (kinds 3, 4, 7) always have one writer; kind 6 is
     * split with 16 lanes. */
    for (int run = 0; run < 24; run++) {
        int kind = run % 8, writers = run / 8;
        if (writers != 0 && (kind == 3 || kind == 4 || kind == 7))
            continue;
        sk_bloom *a, *b;
        switch (kind) {
        case 0: a = new_filter(N, 0.01, SK_BLOOM_BLOCKED); b = new_filter(N, 0.01, SK_BLOOM_BLOCKED); break;
        case 1: a = new_filter(N, 0.01, SK_BLOOM_CLASSIC); b = new_filter(N, 0.01, SK_BLOOM_CLASSIC); break;
        case 2: a = new_filter(N / 8, 0.1, SK_BLOOM_CLASSIC); b = new_filter(N / 8, 0.1, SK_BLOOM_CLASSIC); break;
        case 3: a = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED); b = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED); break;
        case 4: a = new_scalable(100, 0.01, 3, SK_BLOOM_CLASSIC); b = new_scalable(100, 0.01, 3, SK_BLOOM_CLASSIC); break;
        case 5: a = new_filter(N, 0.01, SK_BLOOM_SPLIT); b = new_filter(N, 0.01, SK_BLOOM_SPLIT); break;
        case 6: a = new_filter(N / 8, 1e-5, SK_BLOOM_SPLIT); b = new_filter(N / 8, 1e-5, SK_BLOOM_SPLIT); break;
        default: a = new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT); b = new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT); break;
        }
        sk_bloom_set_concurrent_writers(a, writers != 2);
        sk_bloom_set_concurrent_writers(b, writers != 1);
        /* In uneven chunks, so that batches start anywhere. */
        size_t done = 0, chunk = 1;
        while (done < N) {
            size_t count = N - done < chunk ? N - done : chunk;
            assert_int_equal(sk_bloom_add_batch(b, items + done, lens + done, count, added + done), SK_OK);
            done += count;
            chunk = chunk * 3 % 1000 + 1;
        }
        for (size_t i = 0; i < N; i++) {
            int rc = sk_bloom_add(a, items[i], lens[i]);
            if (rc != added[i])
                print_error("kind %d writers %d item %zu: add %d, batch %d\n", kind, writers, i,
                            rc, added[i]);
            assert_int_equal(rc, added[i]);
        }
        assert_same_info(a, b);
        /* The same bits: the files are identical. */
        char pa[PATH_MAX], pb[PATH_MAX];
        path_of(pa, "batch-a.bloom");
        path_of(pb, "batch-b.bloom");
        save_ok(a, pa);
        save_ok(b, pb);
        assert_same_file(pa, pb);
        unlink(pa);
        unlink(pb);
        /* contains_batch on present and absent items, against contains. */
        for (size_t i = 0; i < N; i++)
            if (i % 2)
                keys[i] |= ABSENT_BIT;
        sk_bloom_contains_batch(a, items, lens, N, found);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(found[i], sk_bloom_contains(a, items[i], lens[i]));
            if (!(keys[i] & ABSENT_BIT))
                assert_int_equal(found[i], 1);
        }
        for (size_t i = 0; i < N; i++)
            if (i % 2)
                keys[i] &= ~ABSENT_BIT;
        /* A NULL `added` and n = 0 are fine. */
        assert_int_equal(sk_bloom_add_batch(b, items, lens, 100, NULL), SK_OK);
        assert_int_equal(sk_bloom_add_batch(b, items, lens, 0, NULL), SK_OK);
        sk_bloom_contains_batch(b, items, lens, 0, found);
        assert_int_equal(info_of(b).count, info_of(a).count);
        sk_bloom_free(a);
        sk_bloom_free(b);
    }
    free(keys);
    free(items);
    free(lens);
    free(added);
    free(found);
}

/* Neither union nor intersection takes a and b together, either way round. */
static void assert_incompatible(sk_bloom *a, sk_bloom *b)
{
    assert_int_equal(sk_bloom_merge(a, b), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_intersect(a, b), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_merge(b, a), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_intersect(b, a), SK_EINCOMPAT);
}

static void test_union_and_intersection(void **state)
{
    const uint64_t n = 20000;
    for (int kind = 0; kind < 4; kind++) {
        sk_bloom *a, *b, *c;
        if (kind < 2) {
            a = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
            b = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
            c = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
        } else {
            a = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
            b = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
            c = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
        }
        add_range(a, 0, n);
        add_range(b, n, 2 * n);
        add_range(c, 0, n);
        assert_int_equal(info_of(a).layers, info_of(b).layers);

        /* Union: both sets; the count becomes the estimate of 2n. */
        assert_int_equal(sk_bloom_merge(a, b), SK_OK);
        assert_all_found(a, 0, 2 * n);
        double est = (double)info_of(a).count;
        assert_true(fabs(est - 2.0 * n) < 0.05 * 2 * n);
        assert_int_equal(info_of(a).count, sk_bloom_estimate_items(a));
        assert_all_found(b, n, 2 * n); /* src unchanged */

        /* Intersection of disjoint sets: an item of either survives only as a
         * false positive of the other, a few percent at most. (Scalable
         * filters may refuse it: test_intersection_of_scalable_filters.) */
        double fp = sk_bloom_expected_fp_rate(b, n);
        int rc = sk_bloom_intersect(c, b);
        if (kind >= 2 && rc == SK_EINCOMPAT) {
            assert_all_found(c, 0, n); /* unchanged */
            assert_int_equal(sk_bloom_intersect(c, c), SK_EINCOMPAT);
            sk_bloom_free(a);
            sk_bloom_free(b);
            sk_bloom_free(c);
            continue;
        }
        assert_int_equal(rc, SK_OK);
        uint64_t kept = 0;
        for (uint64_t key = 0; key < 2 * n; key++)
            kept += (uint64_t)has_key(c, key);
        if (!((double)kept < 2 * n * (4 * fp + 0.002)))
            print_error("kind %d: intersection of disjoint sets keeps %llu of %llu (fp %g)\n",
                        kind, (unsigned long long)kept, (unsigned long long)(2 * n), fp);
        assert_true((double)kept < 2 * n * (4 * fp + 0.002));
        assert_true(info_of(c).count < n / 2);

        /* Intersection of overlapping sets keeps every common item (of
         * scalable filters: test_intersection_of_scalable_filters). */
        sk_bloom *d = kind < 2 ? new_filter(2 * n, 0.01, (sk_bloom_layout)kind)
                               : new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
        add_range(d, n / 2, n / 2 + n);
        if (kind < 2) {
            assert_int_equal(sk_bloom_intersect(d, b), SK_OK);
            assert_all_found(d, n, n / 2 + n);
        }

        /* The same filter with itself is unchanged. */
        assert_int_equal(sk_bloom_merge(b, b), SK_OK);
        assert_int_equal(sk_bloom_intersect(b, b), SK_OK);
        assert_all_found(b, n, 2 * n);

        assert_int_equal(sk_bloom_merge(NULL, b), SK_EINVAL);
        assert_int_equal(sk_bloom_merge(a, NULL), SK_EINVAL);
        assert_int_equal(sk_bloom_intersect(NULL, b), SK_EINVAL);
        assert_int_equal(sk_bloom_intersect(a, NULL), SK_EINVAL);
        sk_bloom_free(a);
        sk_bloom_free(b);
        sk_bloom_free(c);
        sk_bloom_free(d);
    }

    /* Shapes that differ. */
    sk_bloom *base = new_filter(10000, 0.01, SK_BLOOM_CLASSIC);
    add_range(base, 0, 100);
    sk_bloom *other[] = {
        new_filter(20000, 0.01, SK_BLOOM_CLASSIC),
        new_filter(10000, 0.01, SK_BLOOM_BLOCKED),
        new_filter(10000, 0.001, SK_BLOOM_CLASSIC),
        new_explicit(info_of(base).bits, info_of(base).hashes + 1, SK_BLOOM_CLASSIC),
        new_explicit(info_of(base).bits + 1, info_of(base).hashes, SK_BLOOM_CLASSIC),
        new_scalable(10000, 0.02, 2, SK_BLOOM_CLASSIC),
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        assert_incompatible(base, other[i]);
        sk_bloom_free(other[i]);
    }
    assert_all_found(base, 0, 100);
    assert_int_equal(info_of(base).count, 100);
    /* An explicit filter of the same bits and hashes is the same shape. */
    sk_bloom *same = new_explicit(info_of(base).bits, info_of(base).hashes, SK_BLOOM_CLASSIC);
    add_range(same, 100, 200);
    assert_int_equal(sk_bloom_merge(same, base), SK_OK);
    assert_all_found(same, 0, 200);
    sk_bloom_free(same);
    sk_bloom_free(base);

    /* Scalable filters with different numbers of layers, or expansions. */
    sk_bloom *s1 = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    sk_bloom *s2 = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    sk_bloom *s3 = new_scalable(100, 0.01, 3, SK_BLOOM_BLOCKED);
    add_range(s2, 0, 1000);
    assert_incompatible(s1, s2);
    assert_incompatible(s1, s3);
    sk_bloom_free(s1);
    sk_bloom_free(s2);
    sk_bloom_free(s3);
}

/* The intersection of two scalable filters holds every item added to both
 * (or the call refuses them with SK_EINCOMPAT): an item can sit in layer 3
 * of one filter and in layer 0 of the other, so intersecting layer by layer
 * loses it, a false negative. */
static void test_intersection_of_scalable_filters(void **state)
{
    int failures = 0;
    for (int l = 0; l < 2; l++) {
        sk_bloom *d = new_scalable(100, 0.01, 2, (sk_bloom_layout)l);
        sk_bloom *b = new_scalable(100, 0.01, 2, (sk_bloom_layout)l);
        add_range(d, 0, 1000);
        add_range(b, 500, 1500);
        assert_int_equal(info_of(d).layers, info_of(b).layers);
        int rc = sk_bloom_intersect(d, b);
        uint64_t lost = 0;
        if (rc == SK_OK) {
            lost = 500 - count_found(d, 500, 500);
            if (lost)
                print_error("layout %d: items [0,1000) and [500,1500): after "
                            "sk_bloom_intersect, %llu of the 500 common items are not found\n",
                            l, (unsigned long long)lost);
        } else {
            lost = 1000 - count_found(d, 0, 1000); /* refused: dst unchanged */
        }
        sk_bloom_free(d);
        sk_bloom_free(b);
        assert_true(rc == SK_OK || rc == SK_EINCOMPAT);
        failures += lost != 0;
    }
    assert_int_equal(failures, 0);
}

static void test_clear(void **state)
{
    sk_bloom *filters[] = {
        new_filter(5000, 0.01, SK_BLOOM_BLOCKED),
        new_filter(5000, 0.01, SK_BLOOM_CLASSIC),
        new_explicit(10001, 4, SK_BLOOM_CLASSIC),
        new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        sk_bloom_info before = info_of(f);
        add_range(f, 0, 5000);
        assert_int_equal(sk_bloom_clear(f), SK_OK);
        sk_bloom_info after = info_of(f);
        assert_int_equal(after.count, 0);
        assert_int_equal(after.layers, 1);
        assert_int_equal(after.bits, before.bits);
        assert_int_equal(after.capacity, before.capacity);
        assert_int_equal(after.array_bytes, before.array_bytes);
        assert_int_equal(sk_bloom_estimate_items(f), 0);
        assert_int_equal(count_found(f, 0, 5000), 0);
        /* It works as new afterwards, growing again if scalable. */
        uint64_t changed = add_range(f, 0, 5000);
        assert_int_equal(info_of(f).count, changed);
        assert_all_found(f, 0, 5000);
        sk_bloom_free(f);
    }
    assert_int_equal(sk_bloom_clear(NULL), SK_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_reports_changes),
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_small_filters_meet_their_rate),
        cmocka_unit_test(test_batch_matches_single),
        cmocka_unit_test(test_calls_by_hash_are_calls_by_item),
        cmocka_unit_test(test_hash_u64_meets_the_rate),
        cmocka_unit_test(test_union_and_intersection),
        cmocka_unit_test(test_intersection_of_scalable_filters),
        cmocka_unit_test(test_clear),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
