/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aging_bloom_test_util.h: what the aging Bloom filter's tests share
 * (include after <cmocka.h>): filters made and fed with 8-byte items, and
 * their serialized bytes.
 */
#ifndef SKETCH_AGING_BLOOM_TEST_UTIL_H
#define SKETCH_AGING_BLOOM_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "sketch.h"
#include "../common/test_util.h"

/* A rate at which the few absent items of a test never collide: at 1e-12,
 * a false positive among them would take billions of runs, so that
 * "absent" is exact. */
#define TINY 1e-12

static inline sk_aging_bloom *make(uint64_t capacity, double rate, unsigned g, uint64_t window)
{
    sk_aging_bloom *f = NULL;
    sk_aging_bloom_options o = {.capacity = capacity, .fp_rate = rate, .generations = g,
                                .window = window};
    assert_int_equal(sk_aging_bloom_create(&f, &o), SK_OK);
    return f;
}

static inline int add(sk_aging_bloom *f, uint64_t item, uint64_t now)
{
    return sk_aging_bloom_add(f, &item, sizeof item, now);
}

static inline int has(const sk_aging_bloom *f, uint64_t item, uint64_t now)
{
    return sk_aging_bloom_contains(f, &item, sizeof item, now);
}

static inline sk_aging_bloom_info info_of(const sk_aging_bloom *f)
{
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(f, &info);
    return info;
}

static inline uint8_t *bytes_of(const sk_aging_bloom *f, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_aging_bloom_serialized_size(f, &size), SK_OK);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(sk_aging_bloom_serialize(f, buf, size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* Asserts that two filters serialize to the same bytes. */
static inline void assert_same_bytes(const sk_aging_bloom *a, const sk_aging_bloom *b)
{
    size_t la, lb;
    uint8_t *x = bytes_of(a, &la), *y = bytes_of(b, &lb);
    assert_same_bytes_free(x, la, y, lb);
}

#endif
