/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hll.c: unit tests of the HyperLogLog API, every public function and
 * every error path, with cmocka: creating, adding (one at a time and in
 * batches), the sparse and dense encodings, copy, reset, merge and fold, and
 * the bounds of the estimate. test_hll_serialize.c tests the serialized
 * forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "hll_test_util.h"

static void test_version_and_messages(void **state)
{
    assert_string_equal(sk_version(), SK_VERSION_STRING);
    int codes[] = {SK_OK,       SK_ENOMEM,  SK_EINVAL,    SK_EFORMAT,  SK_EVERSION,
                   SK_ETRUNCATED, SK_ECORRUPT, SK_ECHECKSUM, SK_ENOSPACE, SK_EINCOMPAT,
                   SK_EIO, SK_EFULL};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *msg = sk_strerror(codes[i]);
        assert_non_null(msg);
        assert_string_not_equal(msg, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(msg, sk_strerror(codes[j]));
    }
    assert_string_equal(sk_strerror(12345), "unknown error");
}

static void test_new_rejects_bad_precision(void **state)
{
    sk_hll *h = (sk_hll *)&h;
    assert_int_equal(sk_hll_new(&h, SK_HLL_MIN_PRECISION - 1), SK_EINVAL);
    assert_null(h);
    assert_int_equal(sk_hll_new(&h, SK_HLL_MAX_PRECISION + 1), SK_EINVAL);
    assert_int_equal(sk_hll_new(NULL, 14), SK_EINVAL);
    assert_int_equal(sk_hll_create(&h, NULL), SK_EINVAL);
    assert_int_equal(sk_hll_create(&h, &(sk_hll_options){.precision = 19}), SK_EINVAL);
    /* zeroed options: the default precision and malloc */
    assert_int_equal(sk_hll_create(&h, &(sk_hll_options){0}), SK_OK);
    assert_int_equal(sk_hll_precision(h), SK_HLL_DEFAULT_PRECISION);
    sk_hll_free(h);
    for (unsigned p = SK_HLL_MIN_PRECISION; p <= SK_HLL_MAX_PRECISION; p++) {
        h = new_hll(p);
        assert_int_equal(sk_hll_precision(h), p);
        assert_true(hll_is_sparse(h));
        assert_int_equal(sk_hll_count(h), 0);
        sk_hll_free(h);
    }
    sk_hll_free(NULL);
}

static void test_add_reports_changes(void **state)
{
    sk_hll *h = new_hll(14);
    assert_int_equal(sk_hll_add(h, "alice", 5), 1);
    assert_int_equal(sk_hll_add(h, "alice", 5), 0);
    assert_int_equal(sk_hll_add(h, "bob", 3), 1);
    assert_int_equal(sk_hll_add(h, "", 0), 1);
    assert_int_equal(sk_hll_count(h), 3);
    /* add is add_hash of sk_hll_hash. */
    assert_int_equal(sk_hll_add_hash(h, sk_hll_hash("bob", 3)), 0);
    sk_hll_free(h);
}

static void test_hash_reads_every_byte_at_any_alignment(void **state)
{
    uint8_t buf[64 + 8];
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)splitmix64(&seed);
    for (size_t len = 0; len <= 64; len++) {
        uint64_t h = sk_hll_hash(buf, len);
        for (size_t offset = 1; offset < 8; offset++) {
            uint8_t copy[64];
            memcpy(copy, buf, len);
            memmove(buf + offset, copy, len);
            assert_true(sk_hll_hash(buf + offset, len) == h);
            memmove(buf, buf + offset, len);
        }
        for (size_t i = 0; i < len; i++) {
            buf[i] ^= 1;
            assert_true(sk_hll_hash(buf, len) != h);
            buf[i] ^= 1;
        }
        if (len > 0)
            assert_true(sk_hll_hash(buf, len - 1) != h);
    }
}

static void test_small_counts_are_exact(void **state)
{
    sk_hll *h = new_hll(14);
    for (unsigned n = 1; n <= 300; n++) {
        add_items(h, n - 1, n);
        uint64_t count = sk_hll_count(h);
        /* Collisions among a few hundred items in 16384 registers are rare. */
        assert_true(count + 3 >= n && count <= n + 3);
    }
    assert_true(hll_is_sparse(h));
    sk_hll_free(h);
}

static void test_sparse_turns_dense_at_the_limit(void **state)
{
    for (unsigned p = SK_HLL_MIN_PRECISION; p <= SK_HLL_MAX_PRECISION; p++) {
        sk_hll *h = new_hll(p);
        sk_hll *reference = new_hll(p);
        uint32_t m = 1u << p, limit = m / 8 < 4096 ? m / 8 : 4096;
        uint64_t seed = p;
        size_t sparse_memory = 0;
        /* Fill registers one distinct index at a time: hash = index | rank bit. */
        for (uint32_t i = 0; i < m; i++) {
            uint64_t hash = (uint64_t)i | (splitmix64(&seed) << p);
            int before = hll_is_sparse(h);
            assert_true(sk_hll_add_hash(h, hash) >= 0);
            sk_hll_add_hash(reference, hash);
            if (i + 1 <= limit) {
                assert_true(hll_is_sparse(h));
                sparse_memory = hll_memory(h);
            } else {
                assert_false(hll_is_sparse(h));
                if (before)
                    assert_true(hll_memory(h) >= m);
            }
        }
        assert_true(sparse_memory < sizeof(void *) * 8 + (size_t)limit * 4 + 64);
        assert_same_registers(h, reference);
        sk_hll_free(h);
        sk_hll_free(reference);
    }
}

static void test_copy_is_independent(void **state)
{
    for (unsigned n = 10; n <= 100000; n *= 100) {
        sk_hll *h = new_hll(14), *c = NULL;
        add_items(h, 0, n);
        assert_int_equal(sk_hll_copy(&c, h), SK_OK);
        assert_same_registers(h, c);
        add_items(c, n, 2 * n);
        assert_true(sk_hll_count(c) > sk_hll_count(h));
        sk_hll_free(h);
        sk_hll_free(c);
    }
    sk_hll *c = NULL;
    assert_int_equal(sk_hll_copy(&c, NULL), SK_EINVAL);
    assert_int_equal(sk_hll_copy(NULL, c), SK_EINVAL);
}

static void test_reset_forgets_everything(void **state)
{
    sk_hll *h = new_hll(12), *empty = new_hll(12);
    add_items(h, 0, 50000);
    assert_false(hll_is_sparse(h));
    sk_hll_clear(h);
    assert_true(hll_is_sparse(h));
    assert_int_equal(sk_hll_count(h), 0);
    assert_int_equal(sk_hll_precision(h), 12);
    assert_same_registers(h, empty);
    add_items(h, 0, 10);
    assert_int_equal(sk_hll_count(h), 10);
    sk_hll_free(h);
    sk_hll_free(empty);
}

/* A hash that sets register idx to value at precision p. */
static uint64_t hash_of_register(unsigned p, uint32_t idx, unsigned value)
{
    return idx | (UINT64_C(1) << (value - 1)) << p;
}

/* A sparse sketch's search for a register starts where uniform indices
 * would put it: registers bunched at either end, in the middle or in
 * runs, set in any order, are found all the same. Every add's report is
 * checked against a plain array of registers, and the end result against
 * a dense sketch given the same adds (both over a floor of ones, which
 * makes them dense). */
static void test_sparse_finds_registers_wherever_they_are(void **state)
{
    const unsigned p = 14;
    const uint32_t m = 1u << p;
    uint8_t *expected = calloc(m, 1);
    assert_non_null(expected);
    for (unsigned layout = 0; layout < 5; layout++) {
        sk_hll *sparse = new_hll(p), *floor = new_hll(p), *dense = new_hll(p);
        for (uint32_t i = 0; i < m; i++) {
            assert_true(sk_hll_add_hash(floor, hash_of_register(p, i, 1)) >= 0);
            assert_true(sk_hll_add_hash(dense, hash_of_register(p, i, 1)) >= 0);
        }
        memset(expected, 0, m);
        uint64_t rng = layout;
        for (unsigned i = 0; i < 3000; i++) {
            uint32_t r = (uint32_t)splitmix64(&rng);
            uint32_t idx = layout == 0   ? r % 300               /* the low end */
                           : layout == 1 ? m - 1 - r % 300       /* the high end */
                           : layout == 2 ? m / 2 - 150 + r % 300 /* the middle */
                           : layout == 3 ? (r % 2 ? r % 150 : m - 1 - r % 150)
                                         : (r % 16) * 1024 + r % 20; /* runs */
            unsigned value = 1 + (unsigned)(splitmix64(&rng) % 20);
            uint64_t hash = hash_of_register(p, idx, value);
            assert_int_equal(sk_hll_add_hash(sparse, hash), expected[idx] < value);
            if (expected[idx] < value)
                expected[idx] = (uint8_t)value;
            assert_true(sk_hll_add_hash(dense, hash) >= 0);
        }
        assert_true(hll_is_sparse(sparse));
        assert_int_equal(sk_hll_merge(floor, sparse), SK_OK);
        assert_same_registers(floor, dense);
        sk_hll_free(sparse);
        sk_hll_free(floor);
        sk_hll_free(dense);
    }
    free(expected);
}

/* The union of two sketches equals one sketch of all the items, for every
 * combination of representations. */
static void test_merge_equals_sketch_of_union(void **state)
{
    unsigned sizes[] = {0, 5, 1000, 100000};
    for (size_t a = 0; a < 4; a++) {
        for (size_t b = 0; b < 4; b++) {
            sk_hll *x = new_hll(14), *y = new_hll(14), *all = new_hll(14);
            add_items(x, 0, sizes[a]);
            add_items(y, 500, 500 + sizes[b]);
            add_items(all, 0, sizes[a]);
            add_items(all, 500, 500 + sizes[b]);
            assert_int_equal(sk_hll_merge(x, y), SK_OK);
            assert_same_registers(x, all);
            assert_int_equal(sk_hll_count(x), sk_hll_count(all));
            sk_hll_free(x);
            sk_hll_free(y);
            sk_hll_free(all);
        }
    }
    sk_hll *h = new_hll(14);
    assert_int_equal(sk_hll_merge(h, NULL), SK_EINVAL);
    assert_int_equal(sk_hll_merge(NULL, h), SK_EINVAL);
    sk_hll_free(h);
}

/* Folding to a lower precision gives exactly the sketch built there. */
static void test_fold_is_exact(void **state)
{
    unsigned sizes[] = {0, 3, 300, 30000, 300000};
    for (size_t s = 0; s < 5; s++) {
        for (unsigned from = 4; from <= 18; from += 2) {
            for (unsigned to = 4; to <= from; to += 3) {
                sk_hll *h = new_hll(from), *direct = new_hll(to);
                uint64_t seed = s * 1000 + from;
                for (unsigned i = 0; i < sizes[s]; i++) {
                    uint64_t hash = splitmix64(&seed);
                    /* Hashes with all-zero rank bits reach the sentinel. */
                    if (i % 1000 == 7)
                        hash &= (UINT64_C(1) << from) - 1;
                    sk_hll_add_hash(h, hash);
                    sk_hll_add_hash(direct, hash);
                }
                assert_int_equal(sk_hll_fold(h, to), SK_OK);
                assert_int_equal(sk_hll_precision(h), to);
                assert_same_registers(h, direct);
                sk_hll_free(h);
                sk_hll_free(direct);
            }
        }
    }
    sk_hll *h = new_hll(10);
    assert_int_equal(sk_hll_fold(h, 11), SK_EINVAL);
    assert_int_equal(sk_hll_fold(h, 3), SK_EINVAL);
    assert_int_equal(sk_hll_fold(h, 10), SK_OK);
    sk_hll_free(h);
}

static void test_merge_of_different_precisions_folds_to_smaller(void **state)
{
    sk_hll *fine = new_hll(16), *coarse = new_hll(12), *direct = new_hll(12);
    add_items(fine, 0, 40000);
    add_items(coarse, 20000, 60000);
    add_items(direct, 0, 60000);
    sk_hll *fine_copy = NULL;
    assert_int_equal(sk_hll_copy(&fine_copy, fine), SK_OK);

    assert_int_equal(sk_hll_merge(fine, coarse), SK_OK); /* dst folds */
    assert_int_equal(sk_hll_precision(fine), 12);
    assert_same_registers(fine, direct);

    assert_int_equal(sk_hll_merge(coarse, fine_copy), SK_OK); /* src folds */
    assert_int_equal(sk_hll_precision(coarse), 12);
    assert_same_registers(coarse, direct);
    sk_hll_free(fine);
    sk_hll_free(fine_copy);
    sk_hll_free(coarse);
    sk_hll_free(direct);
}

static void test_bounds_contain_the_estimate(void **state)
{
    sk_hll *h = new_hll(14);
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    assert_int_equal(e.count, 0);
    assert_true(e.lower[2] == 0 && e.upper[2] == 0);
    unsigned n = 0;
    for (unsigned target = 10; target <= 1000000; target *= 10) {
        add_items(h, n, target);
        n = target;
        sk_hll_estimate_with_bounds(h, &e);
        assert_int_equal(e.count, sk_hll_count(h));
        assert_true(e.relative_error > 0 && e.relative_error <= 1.04 / 128 * 1.001);
        for (int k = 0; k < 3; k++) {
            assert_true(e.lower[k] <= (double)e.count + 0.5);
            assert_true(e.upper[k] >= (double)e.count - 0.5);
            if (k > 0) {
                assert_true(e.lower[k] <= e.lower[k - 1]);
                assert_true(e.upper[k] >= e.upper[k - 1]);
            }
        }
        /* The truth lies within 3 standard deviations. */
        assert_true(e.lower[2] <= n && n <= e.upper[2]);
    }
    sk_hll_free(h);
}

static void test_native_round_trip(void **state)
{
    unsigned sizes[] = {0, 10, 2000, 200000};
    for (unsigned p = SK_HLL_MIN_PRECISION; p <= SK_HLL_MAX_PRECISION; p++) {
        for (size_t s = 0; s < 4; s++) {
            sk_hll *h = new_hll(p), *back = NULL;
            add_items(h, 0, sizes[s]);
            size_t len;
            uint8_t *buf = serialize(h, SK_HLL_NATIVE, &len);
            assert_memory_equal(buf, "SKHL", 4);
            size_t dense = 16 + (size_t)(1u << p) * 6 / 8;
            assert_true(len <= dense);
            sk_hll_format format = SK_HLL_REDIS;
            assert_int_equal(sk_hll_deserialize(&back, buf, len, &format, NULL), SK_OK);
            assert_int_equal(format, SK_HLL_NATIVE);
            assert_int_equal(sk_hll_precision(back), p);
            assert_int_equal(sk_hll_count(back), sk_hll_count(h));
            assert_same_registers(h, back);
            free(buf);
            sk_hll_free(h);
            sk_hll_free(back);
        }
    }
}

static void test_native_sizes_are_as_promised(void **state)
{
    sk_hll *h = new_hll(14);
    add_items(h, 0, 10);
    uint64_t size;
    assert_int_equal(sk_hll_serialized_size(h, SK_HLL_NATIVE, &size), SK_OK);
    assert_int_equal(size, 16 + 10 * 4);
    add_items(h, 10, 1000000);
    assert_int_equal(sk_hll_serialized_size(h, SK_HLL_NATIVE, &size), SK_OK);
    assert_int_equal(size, 16 + 12288);
    assert_int_equal(sk_hll_serialized_size(h, SK_HLL_REDIS, &size), SK_OK);
    assert_int_equal(size, 16 + 12288);
    assert_int_equal(sk_hll_serialized_size(h, (sk_hll_format)7, &size), SK_EINVAL);
    assert_int_equal(sk_hll_serialized_size(h, SK_HLL_NATIVE, NULL), SK_EINVAL);
    uint8_t small[100];
    size_t len = 0;
    assert_int_equal(sk_hll_serialize(h, SK_HLL_NATIVE, small, sizeof small, &len),
                     SK_ENOSPACE);
    assert_int_equal(sk_hll_serialize(h, SK_HLL_REDIS, small, sizeof small, &len),
                     SK_ENOSPACE);
    assert_int_equal(sk_hll_serialize(h, (sk_hll_format)7, small, sizeof small, &len),
                     SK_EINVAL);
    assert_int_equal(sk_hll_serialize(h, SK_HLL_NATIVE, NULL, 0, &len), SK_EINVAL);
    sk_hll_free(h);
}

/* Hashes added in batches of every size give the registers of adding them
 * one at a time, through the sparse array, across the turn to dense (within
 * a batch and at its edge), and in the dense registers; each batch answers
 * whether any of its adds changed a register. */
static void test_batches_equal_single_adds(void **state)
{
    static uint64_t hashes[3000];
    for (unsigned p = SK_HLL_MIN_PRECISION; p <= SK_HLL_MAX_PRECISION; p += 2) {
        sk_hll *h = new_hll(p), *reference = new_hll(p);
        uint64_t seed = 77 + p;
        int went_dense_within_a_batch = 0;
        for (int round = 0; round < 40; round++) {
            size_t n = (size_t)(splitmix64(&seed) % (sizeof hashes / sizeof hashes[0]));
            if (round % 5 == 0)
                n = round % 10;
            for (size_t i = 0; i < n; i++) /* repeats, and the odd hash of a large rank */
                hashes[i] = i > 0 && i % 7 == 0 ? hashes[i / 2] : splitmix64(&seed) >> (i % 3 ? 0 : 40);
            int expected = 0;
            for (size_t i = 0; i < n; i++) {
                int rc = sk_hll_add_hash(reference, hashes[i]);
                assert_true(rc >= 0);
                expected |= rc;
            }
            int was_sparse = hll_is_sparse(h);
            assert_int_equal(sk_hll_add_hash_batch(h, hashes, n), expected);
            went_dense_within_a_batch |= was_sparse && !hll_is_sparse(h);
            assert_same_registers(h, reference);
            /* the same batch again changes nothing */
            assert_int_equal(sk_hll_add_hash_batch(h, hashes, n), 0);
        }
        assert_true(went_dense_within_a_batch);
        assert_false(hll_is_sparse(h));
        sk_hll_free(h);
        sk_hll_free(reference);
    }
    /* A sparse sketch given batches of few indices, each many times with
     * values of every size and in every order: entries raised in place, new
     * ones merged in between them, and the largest of a batch kept. */
    sk_hll *h = new_hll(14), *reference = new_hll(14);
    uint64_t seed = 5;
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(splitmix64(&seed) % 200);
        for (size_t i = 0; i < n; i++) {
            uint64_t idx = (splitmix64(&seed) % 60) * 251; /* 60 registers, spread out */
            unsigned rank = 1 + (unsigned)(splitmix64(&seed) % 20);
            hashes[i] = idx | (UINT64_C(1) << (14 + rank - 1));
        }
        int expected = 0;
        for (size_t i = 0; i < n; i++)
            expected |= sk_hll_add_hash(reference, hashes[i]);
        assert_int_equal(sk_hll_add_hash_batch(h, hashes, n), expected);
        assert_true(hll_is_sparse(h));
        assert_same_registers(h, reference);
    }
    sk_hll_free(h);
    sk_hll_free(reference);

    /* Items in batches: the registers and answers of single adds, across
     * the runs the items are hashed in. */
    static uint64_t values[3000];
    static const void *items[3000];
    static size_t lens[3000];
    for (size_t i = 0; i < 3000; i++) {
        values[i] = splitmix64(&seed) % 2500;
        items[i] = &values[i];
        lens[i] = 1 + i % sizeof values[i];
    }
    h = new_hll(12);
    reference = new_hll(12);
    for (size_t done = 0, n = 0; done < 3000; done += n) {
        n = 3000 - done < 1 + done / 5 ? 3000 - done : 1 + done / 5;
        int expected = 0;
        for (size_t i = done; i < done + n; i++)
            expected |= sk_hll_add(reference, items[i], lens[i]);
        assert_int_equal(sk_hll_add_batch(h, items + done, lens + done, n), expected);
        assert_same_registers(h, reference);
    }
    assert_false(hll_is_sparse(h));
    assert_int_equal(sk_hll_add_batch(h, items, lens, 3000), 0);
    assert_int_equal(sk_hll_add_batch(h, NULL, NULL, 0), 0);
    assert_int_equal(sk_hll_add_batch(h, NULL, lens, 1), SK_EINVAL);
    sk_hll_free(h);
    sk_hll_free(reference);

    h = new_hll(14);
    uint64_t one = 1;
    assert_int_equal(sk_hll_add_hash_batch(h, NULL, 0), 0);
    assert_int_equal(sk_hll_add_hash_batch(h, NULL, 1), SK_EINVAL);
    assert_int_equal(sk_hll_add_hash_batch(NULL, &one, 1), SK_EINVAL);
    assert_int_equal(sk_hll_count(h), 0);
    sk_hll_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_messages),
        cmocka_unit_test(test_new_rejects_bad_precision),
        cmocka_unit_test(test_add_reports_changes),
        cmocka_unit_test(test_hash_reads_every_byte_at_any_alignment),
        cmocka_unit_test(test_small_counts_are_exact),
        cmocka_unit_test(test_sparse_turns_dense_at_the_limit),
        cmocka_unit_test(test_sparse_finds_registers_wherever_they_are),
        cmocka_unit_test(test_batches_equal_single_adds),
        cmocka_unit_test(test_copy_is_independent),
        cmocka_unit_test(test_reset_forgets_everything),
        cmocka_unit_test(test_merge_equals_sketch_of_union),
        cmocka_unit_test(test_fold_is_exact),
        cmocka_unit_test(test_merge_of_different_precisions_folds_to_smaller),
        cmocka_unit_test(test_bounds_contain_the_estimate),
        cmocka_unit_test(test_native_round_trip),
        cmocka_unit_test(test_native_sizes_are_as_promised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
