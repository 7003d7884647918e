/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_topk.c: the top-k sketch's API, with cmocka: options and limits,
 * exact answers where no two items meet in a bucket, what an add expels,
 * saturation, copies and the serialized form, which carries the generator
 * of decays so that copies given the same adds stay identical.
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

static sk_topk *make(uint32_t k, uint32_t width, uint32_t depth)
{
    sk_topk *t = NULL;
    sk_topk_options o = {.k = k, .width = width, .depth = depth};
    assert_int_equal(sk_topk_create(&t, &o), SK_OK);
    return t;
}

static int add(sk_topk *t, const char *item, uint32_t n)
{
    return sk_topk_add(t, item, strlen(item), n, NULL, NULL);
}

static uint8_t *bytes_of(const sk_topk *t, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_topk_serialized_size(t, &size), SK_OK);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(sk_topk_serialize(t, buf, size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

static void test_options(void **state)
{
    sk_topk *t = NULL;
    sk_topk_info info;
    assert_int_equal(sk_topk_new(&t, 10), SK_OK);
    sk_topk_get_info(t, &info);
    assert_int_equal(info.k, 10);
    assert_int_equal(info.width, 8); /* RedisBloom's defaults */
    assert_int_equal(info.depth, 7);
    assert_true(info.decay == 0.9);
    assert_true(info.memory >= 8 * 7 * 8);
    sk_topk_free(t);
    const sk_topk_options bad[] = {
        {0}, {.k = 1, .decay = 1.5}, {.k = 1, .decay = -0.5}, {.k = 1, .decay = NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sk_topk_create(&t, &bad[i]), SK_EINVAL);
        assert_null(t);
    }
    assert_int_equal(sk_topk_create(&t, &(sk_topk_options){.k = SK_TOPK_MAX_K + 1}),
                     SK_ETOOLARGE);
    assert_int_equal(sk_topk_create(&t, &(sk_topk_options){.k = 1, .width = 1u << 17,
                                                            .depth = 1u << 16}),
                     SK_ETOOLARGE);
    /* a budget refuses exactly what would pass it, before allocating */
    sk_topk_options o = {.k = 100, .width = 1000, .depth = 5};
    uint64_t need = sk_topk_create_memory(&o);
    o.max_memory = need - 1;
    assert_int_equal(sk_topk_create(&t, &o), SK_EBUDGET);
    o.max_memory = need;
    assert_int_equal(sk_topk_create(&t, &o), SK_OK);
    sk_topk_get_info(t, &info);
    assert_int_equal(info.memory, need);
    sk_topk_free(t);
    assert_int_equal(sk_topk_create(&t, NULL), SK_EINVAL);
    assert_int_equal(sk_topk_create_memory(&(sk_topk_options){0}), 0);
}

/* With a bucket for every item, counts are exact and the list is the true
 * top k, heaviest first; the rest are neither listed nor in the top. */
static void test_exact_without_collisions(void **state)
{
    sk_topk *t = make(5, 1u << 16, 4);
    char item[16];
    for (int round = 0; round < 30; round++)
        for (int i = 0; i < 30 - round; i++) {
            snprintf(item, sizeof item, "item%d", i); /* item i seen 30 - i times */
            assert_true(add(t, item, 1) >= 0);
        }
    sk_topk_entry top[8];
    assert_int_equal(sk_topk_list(t, top, 8), 5);
    for (int i = 0; i < 5; i++) {
        snprintf(item, sizeof item, "item%d", i);
        assert_int_equal(top[i].len, strlen(item));
        assert_memory_equal(top[i].item, item, top[i].len);
        assert_int_equal(top[i].count, 30 - i);
    }
    for (int i = 0; i < 30; i++) {
        snprintf(item, sizeof item, "item%d", i);
        assert_int_equal(sk_topk_query(t, item, strlen(item)), i < 5);
        assert_int_equal(sk_topk_count(t, item, strlen(item)), 30 - i);
    }
    assert_int_equal(sk_topk_count(t, "never", 5), 0);
    assert_int_equal(sk_topk_list(t, top, 2), 2); /* a shorter list: the first ones */
    assert_int_equal(top[1].count, 29);
    sk_topk_free(t);
}

static void test_expelled_and_items(void **state)
{
    sk_topk *t = make(2, 1u << 16, 4);
    const void *out = NULL;
    size_t out_len = 0;
    assert_int_equal(sk_topk_add(t, "a", 1, 3, &out, &out_len), 0);
    assert_int_equal(sk_topk_add(t, "b\0b", 3, 2, &out, &out_len), 0); /* bytes, NUL included */
    assert_int_equal(sk_topk_add(t, "", 0, 5, &out, &out_len), 1);     /* the empty item */
    assert_int_equal(out_len, 3);
    assert_memory_equal(out, "b\0b", 3);
    assert_int_equal(sk_topk_query(t, "", 0), 1);
    assert_int_equal(sk_topk_query(t, "b\0b", 3), 0);
    assert_int_equal(sk_topk_query(t, "b", 1), 0);
    /* a light item does not enter, nor expel */
    assert_int_equal(sk_topk_add(t, "c", 1, 1, &out, &out_len), 0);
    assert_int_equal(sk_topk_query(t, "c", 1), 0);
    assert_int_equal(sk_topk_add(t, "x", 1, SK_TOPK_MAX_INCREMENT + 1, NULL, NULL), SK_EINVAL);
    assert_int_equal(sk_topk_add(NULL, "x", 1, 1, NULL, NULL), SK_EINVAL);
    assert_int_equal(sk_topk_add(t, NULL, 1, 1, NULL, NULL), SK_EINVAL);
    sk_topk_entry top[2];
    assert_int_equal(sk_topk_list(t, top, 2), 2);
    assert_int_equal(top[0].len, 0);
    assert_int_equal(top[0].count, 5);
    assert_int_equal(sk_topk_clear(t), SK_OK);
    assert_int_equal(sk_topk_list(t, top, 2), 0);
    assert_int_equal(sk_topk_count(t, "a", 1), 0);
    sk_topk_free(t);
}

static void test_counts_saturate(void **state)
{
    sk_topk *t = make(1, 16, 1);
    for (uint64_t total = 0; total < UINT32_MAX; total += SK_TOPK_MAX_INCREMENT)
        assert_true(add(t, "a", SK_TOPK_MAX_INCREMENT) >= 0);
    assert_int_equal(sk_topk_count(t, "a", 1), UINT32_MAX);
    assert_true(add(t, "a", 1) >= 0);
    assert_int_equal(sk_topk_count(t, "a", 1), UINT32_MAX);
    sk_topk_free(t);
}

/* A skewed stream into a small sketch, where items meet and decay. */
static void heavy_stream(sk_topk *t, uint64_t seed, int n)
{
    char item[16];
    for (int i = 0; i < n; i++) {
        double u = (double)(splitmix64(&seed) >> 11) * 0x1.0p-53;
        snprintf(item, sizeof item, "i%d", (int)(2000 * u * u * u));
        assert_true(add(t, item, 1 + (uint32_t)(i % 3)) >= 0);
    }
}

static void test_serialized_form_and_copies(void **state)
{
    sk_topk *t = make(20, 16, 3), *twin = make(20, 16, 3);
    heavy_stream(t, 1, 20000);
    heavy_stream(twin, 1, 20000);
    size_t len, len2;
    uint8_t *b = bytes_of(t, &len), *b2 = bytes_of(twin, &len2);
    assert_int_equal(len, len2); /* the same adds decide the same */
    assert_memory_equal(b, b2, len);
    free(b2);
    assert_memory_equal(b + SK_TOPK_OFF_MAGIC, SK_TOPK_MAGIC, 4);
    assert_int_equal(sk_load_le32(b + SK_TOPK_OFF_K), 20);
    sk_topk *back, *copy;
    assert_int_equal(sk_topk_deserialize(&back, b, len, NULL), SK_OK);
    assert_int_equal(sk_topk_copy(&copy, t), SK_OK);
    /* the loaded sketch and the copy go on exactly as the original */
    heavy_stream(t, 2, 5000);
    heavy_stream(back, 2, 5000);
    heavy_stream(copy, 2, 5000);
    free(b);
    b = bytes_of(t, &len);
    b2 = bytes_of(back, &len2);
    assert_same_bytes_free(b, len, b2, len2);
    b = bytes_of(t, &len);
    b2 = bytes_of(copy, &len2);
    assert_same_bytes_free(b, len, b2, len2);
    sk_topk_free(t);
    sk_topk_free(twin);
    sk_topk_free(back);
    sk_topk_free(copy);
}

static void fix_checksum(uint8_t *b, size_t len)
{
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    XXH3_64bits_update(&s, b, SK_TOPK_OFF_CHECKSUM);
    XXH3_64bits_update(&s, b + SK_TOPK_HEADER_SIZE, len - SK_TOPK_HEADER_SIZE);
    sk_store_le64(b + SK_TOPK_OFF_CHECKSUM, XXH3_64bits_digest(&s));
}

static void test_bad_input(void **state)
{
    sk_topk *t = make(4, 8, 2);
    heavy_stream(t, 3, 500);
    size_t len;
    uint8_t *b = bytes_of(t, &len);
    sk_topk *out = (sk_topk *)1;
    for (size_t cut = 0; cut < len; cut++) {
        int rc = sk_topk_deserialize(&out, b, cut, NULL);
        assert_true(rc == SK_EFORMAT || rc == SK_ETRUNCATED || rc == SK_ECHECKSUM);
        assert_null(out);
    }
    b[len - 1] ^= 1;
    assert_int_equal(sk_topk_deserialize(&out, b, len, NULL), SK_ECHECKSUM);
    b[len - 1] ^= 1;
    /* right checksums over wrong contents */
    const struct { size_t at; uint32_t value; int rc; } edits[] = {
        {SK_TOPK_OFF_K, 0, SK_ECORRUPT},
        {SK_TOPK_OFF_K, 5, SK_ETRUNCATED}, /* the entries run into the items */
        {SK_TOPK_OFF_WIDTH, 0, SK_ECORRUPT},
        {SK_TOPK_OFF_DEPTH, 1u << 31, SK_ECORRUPT},
        {SK_TOPK_OFF_RESERVED2, 1, SK_ECORRUPT},
        {SK_TOPK_HEADER_SIZE + 8 * 2 * 8 + SK_TOPK_ENTRY_OFF_LEN, 1u << 30, SK_ECORRUPT},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        uint8_t *c = malloc(len);
        memcpy(c, b, len);
        sk_store_le32(c + edits[i].at, edits[i].value);
        fix_checksum(c, len);
        int rc = sk_topk_deserialize(&out, c, len, NULL);
        if (edits[i].rc == SK_ETRUNCATED)
            assert_true(rc == SK_ETRUNCATED || rc == SK_ECORRUPT);
        else
            assert_int_equal(rc, edits[i].rc);
        free(c);
    }
    /* an entry whose fingerprint is not its item's (queries could not find it) */
    size_t entries = SK_TOPK_HEADER_SIZE + 8 * 2 * SK_TOPK_BUCKET_SIZE, held = 0;
    for (uint32_t i = 0; i < 4; i++) {
        uint8_t *e = b + entries + i * SK_TOPK_ENTRY_SIZE;
        if (sk_load_le32(e + SK_TOPK_ENTRY_OFF_LEN) == SK_TOPK_NO_ITEM)
            continue;
        uint8_t *c = malloc(len);
        memcpy(c, b, len);
        c[entries + i * SK_TOPK_ENTRY_SIZE + SK_TOPK_ENTRY_OFF_FP] ^= 1;
        fix_checksum(c, len);
        assert_int_equal(sk_topk_deserialize(&out, c, len, NULL), SK_ECORRUPT);
        free(c);
        held++;
    }
    assert_true(held > 0);
    /* random bytes after the magic never read as a sketch that misbehaves */
    uint64_t rng = 5;
    for (int i = 0; i < 2000; i++) {
        uint8_t r[128];
        for (size_t j = 0; j < sizeof r; j++)
            r[j] = (uint8_t)splitmix64(&rng);
        memcpy(r, SK_TOPK_MAGIC, 4);
        size_t n = 4 + splitmix64(&rng) % (sizeof r - 4);
        if (i % 2)
            fix_checksum(r, n < SK_TOPK_HEADER_SIZE ? SK_TOPK_HEADER_SIZE : n);
        if (sk_topk_deserialize(&out, r, n, NULL) == SK_OK)
            sk_topk_free(out);
    }
    free(b);
    sk_topk_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_exact_without_collisions),
        cmocka_unit_test(test_expelled_and_items),
        cmocka_unit_test(test_counts_saturate),
        cmocka_unit_test(test_serialized_form_and_copies),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
