/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuckoo.c: the cuckoo filter's API, with cmocka: options and limits,
 * adds, counts and deletes, no false negative for what is still present
 * after deletes of others, the false-positive rate against the exact rate
 * of the filter's own slots, full filters left unchanged, growth within a
 * budget, compaction, the serialized form, and CF.SCANDUMP's pieces.
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

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

#define ALT_MULTIPLIER UINT64_C(0x5bd1e995) /* RedisBloom's, as cuckoo.c */

static sk_cuckoo *make(uint64_t capacity, uint32_t b, uint32_t expansion)
{
    sk_cuckoo *c = NULL;
    sk_cuckoo_options o = {.capacity = capacity, .bucket_size = b, .expansion = expansion};
    assert_int_equal(sk_cuckoo_create(&c, &o), SK_OK);
    return c;
}

static size_t item(char *buf, const char *prefix, uint64_t i)
{
    return (size_t)sprintf(buf, "%s%llu", prefix, (unsigned long long)i);
}

static uint8_t *bytes_of(const sk_cuckoo *c, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_cuckoo_serialized_size(c, &size), SK_OK);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(sk_cuckoo_serialize(c, buf, size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

static void test_options(void **state)
{
    (void)state;
    sk_cuckoo *c = NULL;
    sk_cuckoo_info info;
    assert_int_equal(sk_cuckoo_new(&c, 1000), SK_OK);
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.buckets, 512); /* 1000 / 2, up to a power of 2 */
    assert_int_equal(info.bucket_size, 2);
    assert_int_equal(info.max_iterations, 20);
    assert_int_equal(info.expansion, 0);
    assert_int_equal(info.filters, 1);
    assert_true(info.memory >= 1024);
    sk_cuckoo_free(c);

    c = make(1000, 3, 3);
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.buckets, 512); /* 333 up */
    assert_int_equal(info.expansion, 4); /* up to a power of 2 */
    sk_cuckoo_free(c);
    c = make(4, 2, 0);
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.buckets, 2);
    sk_cuckoo_free(c);

    const sk_cuckoo_options bad[] = {
        {.capacity = 3},                       /* < 2 x bucket size */
        {.capacity = 100, .bucket_size = 256},
        {.capacity = 100, .max_iterations = 65536},
        {.capacity = 100, .expansion = 32769},
        {.capacity = 100, .bucket_size = 60},  /* 100 < 120 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sk_cuckoo_create(&c, &bad[i]), SK_EINVAL);
        assert_null(c);
        assert_int_equal(sk_cuckoo_create_memory(&bad[i]), 0);
    }
    sk_cuckoo_options huge = {.capacity = UINT64_MAX};
    assert_int_equal(sk_cuckoo_create(&c, &huge), SK_ETOOLARGE);
    sk_cuckoo_options o = {.capacity = 1 << 20};
    uint64_t need = sk_cuckoo_create_memory(&o);
    assert_true(need >= (1 << 20));
    o.max_memory = need - 1;
    assert_int_equal(sk_cuckoo_create(&c, &o), SK_EBUDGET);
    o.max_memory = need;
    assert_int_equal(sk_cuckoo_create(&c, &o), SK_OK);
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.memory, need);
    sk_cuckoo_free(c);
    assert_int_equal(sk_cuckoo_create(&c, NULL), SK_EINVAL);
}

static void test_add_count_delete(void **state)
{
    (void)state;
    sk_cuckoo *c = make(1024, 4, 1);
    assert_int_equal(sk_cuckoo_add(c, "a", 1), 1);
    assert_int_equal(sk_cuckoo_add(c, "a", 1), 1); /* a second copy */
    assert_int_equal(sk_cuckoo_add_unique(c, "a", 1), 0);
    assert_int_equal(sk_cuckoo_add_unique(c, "b", 1), 1);
    assert_int_equal(sk_cuckoo_add(c, "", 0), 1); /* the empty item is an item */
    assert_int_equal(sk_cuckoo_count(c, "a", 1), 2);
    assert_int_equal(sk_cuckoo_count(c, "", 0), 1);
    assert_true(sk_cuckoo_contains(c, "b", 1));
    assert_int_equal(sk_cuckoo_delete(c, "a", 1), 1);
    assert_int_equal(sk_cuckoo_count(c, "a", 1), 1);
    assert_int_equal(sk_cuckoo_delete(c, "a", 1), 1);
    assert_int_equal(sk_cuckoo_delete(c, "a", 1), 0);
    assert_false(sk_cuckoo_contains(c, "a", 1));
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.items, 2);
    assert_int_equal(info.deletes, 2);
    assert_int_equal(sk_cuckoo_add(c, NULL, 1), SK_EINVAL);
    assert_int_equal(sk_cuckoo_clear(c), SK_OK);
    assert_false(sk_cuckoo_contains(c, "b", 1));
    sk_cuckoo_free(c);
}

/* Items 0..n-1 into a growing filter; every third deleted; the rest are
 * all still there, and deletes past 10% compacted it. */
static void test_no_false_negative_after_deletes(void **state)
{
    (void)state;
    const uint64_t n = 60000;
    sk_cuckoo *c = make(4096, 2, 2);
    char buf[32];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = item(buf, "k", i);
        assert_int_equal(sk_cuckoo_add(c, buf, len), 1);
    }
    sk_cuckoo_info grown, after;
    sk_cuckoo_get_info(c, &grown);
    assert_true(grown.filters >= 4);
    for (uint64_t i = 0; i < n; i += 3) {
        size_t len = item(buf, "k", i);
        assert_int_equal(sk_cuckoo_delete(c, buf, len), 1);
    }
    sk_cuckoo_get_info(c, &after);
    assert_int_equal(after.items, n - (n + 2) / 3);
    assert_true(after.deletes < after.items / 10 + 1); /* compactions reset it */
    uint64_t deleted_found = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = item(buf, "k", i);
        if (i % 3 != 0)
            assert_true(sk_cuckoo_contains(c, buf, len));
        else
            deleted_found += (uint64_t)sk_cuckoo_contains(c, buf, len);
    }
    /* A deleted item is found only through another's fingerprint. */
    assert_true(deleted_found < (n / 3) / 5);
    /* a pass can free room that a later pass fills; then nothing moves */
    int passes = 0;
    while (sk_cuckoo_compact(c) && passes < 20)
        passes++;
    assert_true(passes >= 1 && passes < 20);
    assert_int_equal(sk_cuckoo_compact(c), 0);
    for (uint64_t i = 1; i < n; i += 3) {
        size_t len = item(buf, "k", i);
        assert_true(sk_cuckoo_contains(c, buf, len));
    }
    sk_cuckoo_free(c);
}

/* The rate an absent item matches, from the filter's own slots: over every
 * first bucket i and fingerprint f equally likely, whether f is in bucket i
 * or in its other bucket; this is exact for a fixed filter of one
 * sub-filter, whatever its load. */
static double exact_rate(const sk_cuckoo *c, uint64_t buckets, uint32_t b)
{
    size_t len;
    uint8_t *bytes = bytes_of(c, &len);
    const uint8_t *slots = bytes + SK_CUCKOO_HEADER_SIZE;
    uint64_t hits = 0;
    for (uint64_t i = 0; i < buckets; i++) {
        for (unsigned f = 1; f <= 255; f++) {
            uint64_t j = (i ^ ((uint64_t)f * ALT_MULTIPLIER)) & (buckets - 1);
            hits += memchr(slots + i * b, (int)f, b) != NULL ||
                    memchr(slots + j * b, (int)f, b) != NULL;
        }
    }
    free(bytes);
    return (double)hits / ((double)buckets * 255);
}

static void test_false_positive_rate(void **state)
{
    (void)state;
    const uint32_t sizes[] = {1, 2, 4};
    for (size_t s = 0; s < 3; s++) {
        uint32_t b = sizes[s];
        const uint64_t buckets = 1 << 14;
        sk_cuckoo *c = make(buckets * b, b, 0);
        char buf[32];
        uint64_t added = 0;
        /* to 90% of the slots, or as far as the evictions reach (b = 1
         * fills to about half) */
        for (uint64_t i = 0; added < buckets * b * 9 / 10 && i < buckets * b; i++) {
            size_t len = item(buf, "in", i);
            int rc = sk_cuckoo_add(c, buf, len);
            assert_true(rc == 1 || rc == SK_EFULL);
            added += rc == 1;
        }
        double load = (double)added / (double)(buckets * b);
        double want = exact_rate(c, buckets, b);
        assert_true(want <= 2.0 * b * load / 255 + 1e-12); /* the textbook bound */
        const uint64_t queries = 1000000;
        uint64_t fp = 0;
        for (uint64_t i = 0; i < queries; i++) {
            size_t len = item(buf, "out", i);
            fp += (uint64_t)sk_cuckoo_contains(c, buf, len);
        }
        double got = (double)fp / queries;
        double sigma = sqrt(want * (1 - want) / queries);
        if (fabs(got - want) > 5 * sigma)
            fail_msg("b = %u, load %.3f: rate %.5f, exact %.5f (5 sigma %.5f)", b, load, got,
                     want, 5 * sigma);
        sk_cuckoo_free(c);
    }
}

/* A fixed filter that has no room refuses the add and is unchanged: every
 * eviction undone. */
static void test_full_filter_unchanged(void **state)
{
    (void)state;
    sk_cuckoo *c = make(64, 2, 0);
    char buf[32];
    int refused = 0;
    for (uint64_t i = 0; i < 200 && refused < 20; i++) {
        size_t before_len, after_len;
        uint8_t *before = bytes_of(c, &before_len);
        size_t len = item(buf, "f", i);
        int rc = sk_cuckoo_add(c, buf, len);
        assert_true(rc == 1 || rc == SK_EFULL);
        uint8_t *after = bytes_of(c, &after_len);
        if (rc == SK_EFULL) {
            refused++;
            assert_same_bytes_free(before, before_len, after, after_len);
        } else {
            free(before);
            free(after);
        }
    }
    assert_int_equal(refused, 20);
    sk_cuckoo_free(c);
}

static void test_growth_within_budget(void **state)
{
    (void)state;
    sk_cuckoo_options o = {.capacity = 256, .expansion = 2};
    o.max_memory = sk_cuckoo_create_memory(&o) + 1000;
    sk_cuckoo *c;
    assert_int_equal(sk_cuckoo_create(&c, &o), SK_OK);
    char buf[32];
    int rc = 1;
    uint64_t i = 0;
    while (rc == 1) {
        size_t len = item(buf, "g", i++);
        rc = sk_cuckoo_add(c, buf, len);
    }
    assert_int_equal(rc, SK_EBUDGET);
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(info.filters, 2); /* 128 buckets, 256 (512 bytes), not 512 */
    assert_true(info.memory <= o.max_memory);
    assert_int_equal(info.items, i - 1);
    for (uint64_t j = 0; j + 1 < i; j++) {
        size_t len = item(buf, "g", j);
        assert_true(sk_cuckoo_contains(c, buf, len));
    }
    sk_cuckoo_free(c);
}

static void fix_checksum(uint8_t *b, size_t len)
{
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    XXH3_64bits_update(&s, b, SK_CUCKOO_OFF_CHECKSUM);
    XXH3_64bits_update(&s, b + SK_CUCKOO_HEADER_SIZE, len - SK_CUCKOO_HEADER_SIZE);
    sk_store_le64(b + SK_CUCKOO_OFF_CHECKSUM, XXH3_64bits_digest(&s));
}

static void test_serialized_form(void **state)
{
    (void)state;
    sk_cuckoo *c = make(512, 4, 1), *back, *copy;
    char buf[32];
    for (uint64_t i = 0; i < 3000; i++) {
        size_t len = item(buf, "s", i);
        assert_int_equal(sk_cuckoo_add(c, buf, len), 1);
    }
    size_t len;
    uint8_t *b = bytes_of(c, &len);
    assert_memory_equal(b, SK_CUCKOO_MAGIC, 4);
    assert_int_equal(sk_cuckoo_deserialize(&back, b, len, NULL), SK_OK);
    assert_int_equal(sk_cuckoo_copy(&copy, c), SK_OK);
    size_t l2, l3;
    uint8_t *b2 = bytes_of(back, &l2), *b3 = bytes_of(copy, &l3);
    assert_same_bytes_free(b2, l2, b3, l3);
    b2 = bytes_of(back, &l2);
    assert_memory_equal(b, b2, len);
    free(b2);
    sk_cuckoo_free(back);
    sk_cuckoo_free(copy);

    /* each field out of range, with a good checksum; then cut and flipped */
    struct { size_t off; uint8_t value; int rc; } edits[] = {
        {SK_CUCKOO_OFF_VERSION, 2, SK_EVERSION},
        {SK_CUCKOO_OFF_HASH, 2, SK_ECORRUPT},
        {SK_CUCKOO_OFF_BUCKET_SIZE, 0, SK_ECORRUPT},
        {SK_CUCKOO_OFF_BUCKET_SIZE, 2, SK_ETRUNCATED},
        {SK_CUCKOO_OFF_RESERVED, 1, SK_ECORRUPT},
        {SK_CUCKOO_OFF_FILTERS, 0, SK_ECORRUPT},
        {SK_CUCKOO_OFF_FILTERS, 200, SK_ETRUNCATED},
        {SK_CUCKOO_OFF_EXPANSION, 3, SK_ECORRUPT},
        {SK_CUCKOO_OFF_EXPANSION, 0, SK_ECORRUPT}, /* fixed, with sub-filters */
        {SK_CUCKOO_OFF_ITERATIONS, 0, SK_ECORRUPT},
        {SK_CUCKOO_OFF_RESERVED2, 1, SK_ECORRUPT},
        {SK_CUCKOO_OFF_BUCKETS, 3, SK_ECORRUPT},
        {SK_CUCKOO_OFF_BUCKETS + 7, 1, SK_ECORRUPT},
        {SK_CUCKOO_OFF_RESTORED + 7, 1, SK_ECORRUPT},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        uint8_t *e = malloc(len);
        memcpy(e, b, len);
        if (edits[i].off == SK_CUCKOO_OFF_FILTERS || edits[i].off == SK_CUCKOO_OFF_EXPANSION ||
            edits[i].off == SK_CUCKOO_OFF_ITERATIONS || edits[i].off == SK_CUCKOO_OFF_RESERVED2)
            sk_store_le32(e + edits[i].off, edits[i].value);
        else if (edits[i].off == SK_CUCKOO_OFF_BUCKETS)
            sk_store_le64(e + edits[i].off, edits[i].value);
        else
            e[edits[i].off] = edits[i].value;
        fix_checksum(e, len);
        assert_int_equal(sk_cuckoo_deserialize(&back, e, len, NULL), edits[i].rc);
        assert_null(back);
        free(e);
    }
    assert_int_equal(sk_cuckoo_deserialize(&back, b, len - 1, NULL), SK_ETRUNCATED);
    assert_int_equal(sk_cuckoo_deserialize(&back, b, 10, NULL), SK_ETRUNCATED);
    assert_int_equal(sk_cuckoo_deserialize(&back, "SKBF", 4, NULL), SK_EFORMAT);
    b[len - 1] ^= 1;
    assert_int_equal(sk_cuckoo_deserialize(&back, b, len, NULL), SK_ECHECKSUM);
    free(b);
    uint64_t rng = 9;
    for (int i = 0; i < 3000; i++) {
        uint8_t r[160];
        for (size_t j = 0; j < sizeof r; j++)
            r[j] = (uint8_t)splitmix64(&rng);
        memcpy(r, SK_CUCKOO_MAGIC, 4);
        r[SK_CUCKOO_OFF_VERSION] = SK_CUCKOO_VERSION;
        size_t n = SK_CUCKOO_HEADER_SIZE + splitmix64(&rng) % (sizeof r - SK_CUCKOO_HEADER_SIZE);
        fix_checksum(r, n);
        if (sk_cuckoo_deserialize(&back, r, n, NULL) == SK_OK) {
            sk_cuckoo_add(back, "x", 1);
            sk_cuckoo_free(back);
        }
    }
    sk_cuckoo_free(c);
}

/* CF.SCANDUMP's pieces restore the same filter, in pieces of any size; a
 * restore half done answers nothing new and keeps its state in its bytes. */
static void test_dump_and_restore(void **state)
{
    (void)state;
    sk_cuckoo *c = make(300, 2, 2), *r;
    char buf[32];
    for (uint64_t i = 0; i < 2000; i++) {
        size_t len = item(buf, "d", i);
        assert_int_equal(sk_cuckoo_add(c, buf, len), 1);
    }
    uint8_t header[SK_CUCKOO_DUMP_HEADER_SIZE];
    sk_cuckoo_dump_header(c, header);
    const size_t piece_sizes[] = {1 << 20, 100, 7};
    for (size_t p = 0; p < 3; p++) {
        assert_int_equal(sk_cuckoo_restore_begin(&r, header, sizeof header, 0, NULL), SK_OK);
        assert_true(sk_cuckoo_restoring(r));
        uint64_t it = 1;
        const void *piece;
        size_t len;
        int pieces = 0;
        while (sk_cuckoo_dump_piece(c, &it, piece_sizes[p], &piece, &len) == 1) {
            assert_true(len <= piece_sizes[p]);
            assert_int_equal(sk_cuckoo_add(r, "x", 1), SK_EINCOMPAT);
            if (pieces == 1) { /* a half-done restore keeps its state */
                size_t hl;
                uint8_t *half = bytes_of(r, &hl);
                sk_cuckoo *again;
                assert_int_equal(sk_cuckoo_deserialize(&again, half, hl, NULL), SK_OK);
                assert_true(sk_cuckoo_restoring(again));
                sk_cuckoo_free(again);
                free(half);
            }
            assert_int_equal(sk_cuckoo_restore_piece(r, it, piece, len), SK_OK);
            if (pieces++ == 0) /* a piece sent again */
                assert_int_equal(sk_cuckoo_restore_piece(r, it, piece, len), SK_OK);
        }
        assert_false(sk_cuckoo_restoring(r));
        assert_int_equal(sk_cuckoo_restore_piece(r, it, "x", 1), SK_EINCOMPAT);
        size_t l1, l2;
        uint8_t *b1 = bytes_of(c, &l1), *b2 = bytes_of(r, &l2);
        assert_same_bytes_free(b1, l1, b2, l2);
        sk_cuckoo_free(r);
    }
    /* pieces out of order, past the end, or empty */
    assert_int_equal(sk_cuckoo_restore_begin(&r, header, sizeof header, 0, NULL), SK_OK);
    assert_int_equal(sk_cuckoo_restore_piece(r, 12, "abc", 3), SK_ECORRUPT);
    assert_int_equal(sk_cuckoo_restore_piece(r, 3, "abc", 3), SK_ECORRUPT);
    assert_int_equal(sk_cuckoo_restore_piece(r, 1, "", 0), SK_ECORRUPT);
    assert_int_equal(sk_cuckoo_restore_piece(r, UINT64_MAX, "abc", 3), SK_ECORRUPT);
    /* a piece that runs from one sub-filter into the next, as RedisBloom refuses */
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    uint8_t *first = calloc(1, info.buckets * 2 + 1);
    assert_int_equal(sk_cuckoo_restore_piece(r, info.buckets * 2 + 2, first, info.buckets * 2 + 1),
                     SK_ECORRUPT);
    assert_int_equal(sk_cuckoo_restore_piece(r, info.buckets * 2 + 1, first, info.buckets * 2),
                     SK_OK);
    free(first);
    sk_cuckoo_free(r);
    /* headers out of range, and a budget */
    struct { size_t off; uint8_t value; } bad[] = {
        {SK_CUCKOO_DUMP_OFF_BUCKETS, 3}, {SK_CUCKOO_DUMP_OFF_FILTERS, 0},
        {SK_CUCKOO_DUMP_OFF_FILTERS + 2, 1}, {SK_CUCKOO_DUMP_OFF_BUCKET_SIZE, 0},
        {SK_CUCKOO_DUMP_OFF_BUCKET_SIZE + 1, 1}, {SK_CUCKOO_DUMP_OFF_ITERATIONS, 0},
        {SK_CUCKOO_DUMP_OFF_EXPANSION, 3}, {SK_CUCKOO_DUMP_OFF_EXPANSION, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t h[SK_CUCKOO_DUMP_HEADER_SIZE];
        memcpy(h, header, sizeof h);
        if (bad[i].value == 0 && bad[i].off != SK_CUCKOO_DUMP_OFF_BUCKET_SIZE + 1)
            memset(h + bad[i].off, 0, bad[i].off >= SK_CUCKOO_DUMP_OFF_BUCKET_SIZE ? 2 : 8);
        else
            h[bad[i].off] = bad[i].value;
        assert_int_equal(sk_cuckoo_restore_begin(&r, h, sizeof h, 0, NULL), SK_ECORRUPT);
        assert_null(r);
    }
    assert_int_equal(sk_cuckoo_restore_begin(&r, header, sizeof header - 1, 0, NULL),
                     SK_ECORRUPT);
    assert_int_equal(sk_cuckoo_restore_begin(&r, header, sizeof header, 1000, NULL), SK_EBUDGET);
    sk_cuckoo_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_add_count_delete),
        cmocka_unit_test(test_no_false_negative_after_deletes),
        cmocka_unit_test(test_false_positive_rate),
        cmocka_unit_test(test_full_filter_unchanged),
        cmocka_unit_test(test_growth_within_budget),
        cmocka_unit_test(test_serialized_form),
        cmocka_unit_test(test_dump_and_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
