/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hll_serialize.c: unit tests of a HyperLogLog's serialized forms, with
 * cmocka: the native string (its sizes and every kind of damage), Redis's
 * strings (sparse and dense, exported from any precision), the encoding
 * sk_hll_serialize picks, saturated registers, and random bytes that never
 * crash the decoder.
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

/* Rewrites the checksum of a native string after a test edits it. */
static void fix_checksum(uint8_t *buf, size_t len)
{
    uint32_t sum = XXH32(buf + 16, len - 16, XXH32(buf, 12, 0));
    for (int i = 0; i < 4; i++)
        buf[12 + i] = (uint8_t)(sum >> (8 * i));
}

static void expect_load_error(const uint8_t *buf, size_t len, int expected)
{
    sk_hll *h = (sk_hll *)&h;
    assert_int_equal(sk_hll_deserialize(&h, buf, len, NULL, NULL), expected);
    assert_null(h);
}

static void test_native_rejects_damage(void **state)
{
    sk_hll *h = new_hll(10);
    add_items(h, 0, 20);
    size_t len;
    uint8_t *sparse = serialize(h, SK_HLL_NATIVE, &len);
    assert_int_equal(sparse[5], 1);
    uint8_t *copy = malloc(len + 1);

    for (size_t cut = 0; cut < len; cut++) {
        sk_hll *out = NULL;
        int rc = sk_hll_deserialize(&out, sparse, cut, NULL, NULL);
        assert_true(rc == SK_ETRUNCATED || (cut == 0 && rc == SK_EFORMAT));
    }
    memcpy(copy, sparse, len);
    copy[len] = 0;
    expect_load_error(copy, len + 1, SK_ETRUNCATED);

    memcpy(copy, sparse, len);
    copy[0] = 'X';
    expect_load_error(copy, len, SK_EFORMAT);
    memcpy(copy, sparse, len);
    copy[4] = 2;
    expect_load_error(copy, len, SK_EVERSION);
    memcpy(copy, sparse, len);
    copy[len - 1] ^= 0x40;
    expect_load_error(copy, len, SK_ECHECKSUM);

    struct { size_t offset; uint8_t value; } header_edits[] = {
        {5, 2}, {6, 3}, {6, 19}, {7, 0}, {7, 2}};
    for (size_t i = 0; i < 5; i++) {
        memcpy(copy, sparse, len);
        copy[header_edits[i].offset] = header_edits[i].value;
        fix_checksum(copy, len);
        expect_load_error(copy, len, SK_ECORRUPT);
    }
    /* Sparse entries: out of order, duplicate, zero value, value too large,
     * index beyond m. Entry i is at 16 + 4i, (index << 6 | value). */
    memcpy(copy, sparse, len);
    memcpy(copy + 16, sparse + 20, 4);
    memcpy(copy + 20, sparse + 16, 4);
    fix_checksum(copy, len);
    expect_load_error(copy, len, SK_ECORRUPT);
    memcpy(copy, sparse, len);
    memcpy(copy + 20, sparse + 16, 4);
    fix_checksum(copy, len);
    expect_load_error(copy, len, SK_ECORRUPT);
    memcpy(copy, sparse, len);
    copy[16] &= 0xc0;
    fix_checksum(copy, len);
    expect_load_error(copy, len, SK_ECORRUPT);
    memcpy(copy, sparse, len);
    copy[len - 4] |= 63; /* 63 > 64 - 10 + 1 */
    fix_checksum(copy, len);
    expect_load_error(copy, len, SK_ECORRUPT);
    memcpy(copy, sparse, len);
    copy[len - 2] = 0xff;
    copy[len - 1] = 0xff; /* index far beyond 1024 */
    fix_checksum(copy, len);
    expect_load_error(copy, len, SK_ECORRUPT);
    /* An entry count that does not match the length. */
    memcpy(copy, sparse, len);
    copy[8]++;
    expect_load_error(copy, len, SK_ETRUNCATED);
    memcpy(copy, sparse, len);
    copy[11] = 0x80;
    expect_load_error(copy, len, SK_ECORRUPT);
    free(sparse);
    free(copy);

    /* Dense: a register above the maximum rank, a nonzero entry count. */
    add_items(h, 20, 20000);
    uint8_t *dense = serialize(h, SK_HLL_NATIVE, &len);
    assert_int_equal(dense[5], 0);
    dense[16] |= 63;
    fix_checksum(dense, len);
    expect_load_error(dense, len, SK_ECORRUPT);
    dense[16] &= 0xc0;
    dense[8] = 1;
    fix_checksum(dense, len);
    expect_load_error(dense, len, SK_ECORRUPT);
    dense[8] = 0;
    fix_checksum(dense, len);
    sk_hll *ok = NULL;
    assert_int_equal(sk_hll_deserialize(&ok, dense, len, NULL, NULL), SK_OK);
    sk_hll_free(ok);
    expect_load_error(dense, len - 1, SK_ETRUNCATED);
    free(dense);
    sk_hll_free(h);

    assert_int_equal(sk_hll_deserialize(NULL, "SKHL", 4, NULL, NULL), SK_EINVAL);
    sk_hll *out;
    assert_int_equal(sk_hll_deserialize(&out, NULL, 5, NULL, NULL), SK_EINVAL);
    expect_load_error((const uint8_t *)"SK", 2, SK_ETRUNCATED);
    expect_load_error((const uint8_t *)"HY", 2, SK_ETRUNCATED);
    expect_load_error((const uint8_t *)"", 0, SK_EFORMAT);
}

static void test_redis_strings(void **state)
{
    sk_hll *h = new_hll(14), *back = NULL;
    add_items(h, 0, 100);
    size_t len;
    uint8_t *sparse = serialize(h, SK_HLL_REDIS, &len);
    assert_memory_equal(sparse, "HYLL", 4);
    assert_int_equal(sparse[4], 1);
    assert_int_equal(sparse[15] & 0x80, 0x80); /* stale cache: Redis recounts */
    assert_true(len <= 3000);
    sk_hll_format format = SK_HLL_NATIVE;
    assert_int_equal(sk_hll_deserialize(&back, sparse, len, &format, NULL), SK_OK);
    assert_int_equal(format, SK_HLL_REDIS);
    assert_same_registers(h, back);
    sk_hll_free(back);

    /* Any change to the run lengths breaks the 16384-register total. */
    for (size_t i = 16; i < len; i++) {
        uint8_t saved = sparse[i];
        if ((saved & 0xc0) == 0x00) {
            sparse[i] = (uint8_t)(saved ^ 1);
            expect_load_error(sparse, len, SK_ECORRUPT);
        }
        sparse[i] = saved;
    }
    expect_load_error(sparse, len - 1, SK_ECORRUPT);
    expect_load_error(sparse, 15, SK_ETRUNCATED);
    sparse[4] = 2;
    expect_load_error(sparse, len, SK_ECORRUPT);
    free(sparse);

    /* An XZERO that claims more than 16384 registers, summed without overflow. */
    uint8_t xzero[16 + 6] = "HYLL\1";
    xzero[16] = 0x7f, xzero[17] = 0xff; /* 16384 zeros */
    xzero[18] = 0x7f, xzero[19] = 0xff;
    xzero[20] = 0x7f, xzero[21] = 0xff;
    expect_load_error(xzero, sizeof xzero, SK_ECORRUPT);
    expect_load_error(xzero, 16 + 3, SK_ECORRUPT); /* XZERO cut in half */
    sk_hll *empty = NULL;
    assert_int_equal(sk_hll_deserialize(&empty, xzero, 16 + 2, NULL, NULL), SK_OK);
    assert_int_equal(sk_hll_count(empty), 0);
    sk_hll_free(empty);

    /* Many items, or a register above 32, need the dense form. */
    add_items(h, 100, 100000);
    uint8_t *dense = serialize(h, SK_HLL_REDIS, &len);
    assert_int_equal(len, 16 + 12288);
    assert_int_equal(dense[4], 0);
    assert_int_equal(sk_hll_deserialize(&back, dense, len, NULL, NULL), SK_OK);
    assert_same_registers(h, back);
    sk_hll_free(back);
    dense[16] = 52; /* register 0 = 52: beyond any rank at p = 14 */
    expect_load_error(dense, len, SK_ECORRUPT);
    expect_load_error(dense, len - 1, SK_ETRUNCATED);
    free(dense);

    sk_hll *tall = new_hll(14);
    sk_hll_add_hash(tall, UINT64_C(5)); /* zero rank bits: register 5 = 51 */
    uint8_t *tall_string = serialize(tall, SK_HLL_REDIS, &len);
    assert_int_equal(tall_string[4], 0);
    sk_hll_free(tall);
    free(tall_string);
    sk_hll_free(h);
}

static void test_redis_export_folds_and_refuses_low_precision(void **state)
{
    sk_hll *fine = new_hll(18), *at14 = new_hll(14), *coarse = new_hll(13), *back = NULL;
    add_items(fine, 0, 5000);
    add_items(at14, 0, 5000);
    add_items(coarse, 0, 5000);
    size_t len;
    uint8_t *buf = serialize(fine, SK_HLL_REDIS, &len);
    assert_int_equal(sk_hll_deserialize(&back, buf, len, NULL, NULL), SK_OK);
    assert_same_registers(back, at14);
    assert_int_equal(sk_hll_precision(fine), 18); /* the source is untouched */
    free(buf);
    sk_hll_free(back);

    uint8_t out[16 + 12288];
    uint64_t size = 0;
    assert_int_equal(sk_hll_serialized_size(coarse, SK_HLL_REDIS, &size), SK_EINCOMPAT);
    assert_int_equal(sk_hll_serialize(coarse, SK_HLL_REDIS, out, sizeof out, &len),
                     SK_EINCOMPAT);
    sk_hll_free(fine);
    sk_hll_free(at14);
    sk_hll_free(coarse);
}

/* Random bytes, and random damage to valid strings, give a sketch or an
 * error; under AddressSanitizer this also proves no read goes out of bounds. */
static void test_garbage_never_crashes(void **state)
{
    uint64_t seed = 42;
    uint8_t buf[13000];
    for (int round = 0; round < 20000; round++) {
        size_t len = splitmix64(&seed) % sizeof buf;
        if (round % 4 == 0)
            len %= 64;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)splitmix64(&seed);
        if (len >= 4 && round % 2 == 0)
            memcpy(buf, round % 4 == 0 ? "HYLL" : "SKHL", 4);
        if (len >= 6 && round % 4 == 0)
            buf[4] = 1, buf[5] = 0;
        sk_hll *h = NULL;
        int rc = sk_hll_deserialize(&h, buf, len, NULL, NULL);
        if (rc == SK_OK) {
            assert_non_null(h);
            sk_hll_count(h);
            sk_hll_free(h);
        } else {
            assert_true(rc < 0);
            assert_null(h);
        }
    }
}

/* The encoding a format writes is told without writing it, and is the one
 * the written bytes declare, whatever the sketch uses in memory. */
static void test_serialized_encoding(void **state)
{
    static const uint32_t counts[] = {0, 10, 2600, 20000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        sk_hll *h;
        assert_int_equal(sk_hll_new(&h, 14), SK_OK);
        for (uint32_t k = 0; k < counts[c]; k++)
            assert_true(sk_hll_add(h, &k, sizeof k) >= 0);
        for (int format = SK_HLL_NATIVE; format <= SK_HLL_REDIS; format++) {
            uint64_t cap;
            size_t len;
            assert_int_equal(sk_hll_serialized_size(h, (sk_hll_format)format, &cap), SK_OK);
            uint8_t *buf = malloc(cap);
            assert_non_null(buf);
            assert_int_equal(sk_hll_serialize(h, (sk_hll_format)format, buf, cap, &len), SK_OK);
            int sparse = format == SK_HLL_NATIVE
                             ? buf[SK_HLL_OFF_ENCODING] == SK_HLL_NATIVE_SPARSE
                             : buf[SK_REDIS_HLL_OFF_ENCODING] == SK_REDIS_HLL_SPARSE;
            assert_int_equal(sk_hll_serialized_encoding(h, (sk_hll_format)format),
                             sparse ? SK_HLL_SPARSE : SK_HLL_DENSE);
            free(buf);
        }
        sk_hll_info info;
        sk_hll_get_info(h, &info);
        if (counts[c] == 2600) /* dense in memory, sparse in sketch's format */
            assert_true(info.encoding == SK_HLL_DENSE &&
                        sk_hll_serialized_encoding(h, SK_HLL_NATIVE) == SK_HLL_SPARSE);
        sk_hll_free(h);
    }
    sk_hll *low;
    assert_int_equal(sk_hll_new(&low, 12), SK_OK);
    assert_int_equal(sk_hll_serialized_encoding(low, SK_HLL_REDIS), SK_EINCOMPAT);
    assert_int_equal(sk_hll_serialized_encoding(low, (sk_hll_format)7), SK_EINVAL);
    sk_hll_free(low);
}

/* Registers no stream produces, every one at its largest value: the count
 * saturates and the error and bounds stay numbers. */
static void test_saturated_registers(void **state)
{
    uint8_t buf[SK_REDIS_HLL_HEADER_SIZE + 12288] = {0};
    memcpy(buf, SK_REDIS_HLL_MAGIC, 4);
    buf[SK_REDIS_HLL_OFF_ENCODING] = SK_REDIS_HLL_DENSE;
    for (size_t i = 0; i < 12288; i += 3) { /* four registers of 51 in three bytes */
        buf[SK_REDIS_HLL_HEADER_SIZE + i] = (uint8_t)(51 | 51 << 6);
        buf[SK_REDIS_HLL_HEADER_SIZE + i + 1] = (uint8_t)(51 >> 2 | 51 << 4);
        buf[SK_REDIS_HLL_HEADER_SIZE + i + 2] = (uint8_t)(51 >> 4 | 51 << 2);
    }
    sk_hll *h;
    assert_int_equal(sk_hll_deserialize(&h, buf, sizeof buf, NULL, NULL), SK_OK);
    assert_int_equal(sk_hll_count(h), UINT64_MAX);
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    assert_true(e.relative_error > 0 && e.relative_error < 0.01);
    for (int k = 0; k < 3; k++)
        assert_true(e.lower[k] == 16384 && !(e.upper[k] < e.lower[k]));
    sk_hll_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serialized_encoding),
        cmocka_unit_test(test_saturated_registers),
        cmocka_unit_test(test_native_rejects_damage),
        cmocka_unit_test(test_redis_strings),
        cmocka_unit_test(test_redis_export_folds_and_refuses_low_precision),
        cmocka_unit_test(test_garbage_never_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
