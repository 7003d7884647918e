/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cms.c: unit tests of the count-min sketch, with cmocka: dimensions
 * from options, adds and queries, counters that stop at their maximum,
 * weighted merges and the ones refused, copies, and the serialized form
 * with every kind of damage.
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

#include "common/format.h"
#include "cms/cms_internal.h"
#include "common/murmur2.h"
#include "sketch.h"
#include "../common/test_util.h"

static sk_cms *new_cms(uint32_t width, uint32_t depth)
{
    sk_cms *c = NULL;
    assert_int_equal(sk_cms_new(&c, width, depth), SK_OK);
    return c;
}

static uint32_t add(sk_cms *c, const char *item, uint64_t count)
{
    uint32_t estimate = 0;
    assert_int_equal(sk_cms_add(c, item, strlen(item), count, &estimate), SK_OK);
    return estimate;
}

static uint32_t count_of(const sk_cms *c, const char *item)
{
    return sk_cms_count(c, item, strlen(item));
}

static int create_with(sk_cms_options o, sk_cms_info *info)
{
    sk_cms *c = NULL;
    int rc = sk_cms_create(&c, &o);
    if (rc == SK_OK)
        sk_cms_get_info(c, info);
    else
        assert_null(c);
    sk_cms_free(c);
    return rc;
}

/* The hash's own definition: the empty string with seed 0 mixes to 0, and
 * the tail bytes enter in their order. */
static void test_murmur2_definition(void **state)
{
    assert_int_equal(sk_murmur2("", 0, 0), 0);
    assert_int_not_equal(sk_murmur2("ab", 2, 0), sk_murmur2("ba", 2, 0));
    assert_int_not_equal(sk_murmur2("abcd", 4, 0), sk_murmur2("abcd", 4, 1));
    assert_int_not_equal(sk_murmur2("abcde", 5, 0), sk_murmur2("abcd", 4, 0));
}

/* The remainder without a division is the remainder: every width from 1 to
 * 4096, the powers of two and their neighbours, and the largest, against
 * hashes at the edges and random ones. */
static void test_mod_is_exact(void **state)
{
    uint32_t widths[4096 + 3 * 32 + 1];
    size_t n = 0;
    for (uint32_t w = 1; w <= 4096; w++)
        widths[n++] = w;
    for (int b = 12; b < 32; b++) {
        widths[n++] = (UINT32_C(1) << b) - 1;
        widths[n++] = UINT32_C(1) << b;
        widths[n++] = (UINT32_C(1) << b) + 1;
    }
    widths[n++] = UINT32_MAX;
    uint64_t rng = 11;
    for (size_t i = 0; i < n; i++) {
        sk_cms c = {.width = widths[i], .width_inverse = sk__fastmod_inverse(widths[i])};
        const uint32_t edges[] = {0, 1, widths[i] - 1, widths[i], UINT32_MAX, UINT32_MAX - 1};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
            assert_int_equal(sk__cms_mod(&c, edges[e]), edges[e] % widths[i]);
        for (int k = 0; k < 200; k++) {
            uint32_t h = (uint32_t)splitmix64(&rng);
            assert_int_equal(sk__cms_mod(&c, h), h % widths[i]);
        }
    }
}

static void test_dimensions(void **state)
{
    sk_cms_info info;
    assert_int_equal(create_with((sk_cms_options){.width = 2000, .depth = 5}, &info), SK_OK);
    assert_int_equal(info.width, 2000);
    assert_int_equal(info.depth, 5);
    assert_true(info.memory >= 2000 * 5 * 4);
    /* width = ceil(2 / error), depth = ceil(log(delta) / log(1/2)) */
    assert_int_equal(create_with((sk_cms_options){.error = 0.001, .delta = 0.01}, &info), SK_OK);
    assert_int_equal(info.width, 2000);
    assert_int_equal(info.depth, 7);
    assert_int_equal(create_with((sk_cms_options){.error = 0.3, .delta = 0.5}, &info), SK_OK);
    assert_int_equal(info.width, 7);
    assert_int_equal(info.depth, 1);
    assert_int_equal(create_with((sk_cms_options){.width = 10, .delta = 0.25}, &info), SK_OK);
    assert_int_equal(info.depth, 2);

    const sk_cms_options bad[] = {
        {0},
        {.width = 10},
        {.depth = 10},
        {.width = 10, .error = 0.1, .depth = 2},
        {.width = 10, .depth = 2, .delta = 0.1},
        {.error = 1, .delta = 0.5},
        {.error = 0.5, .delta = 1},
        {.error = -0.1, .delta = 0.5},
        {.error = NAN, .delta = 0.5},
        {.error = 0.5, .delta = NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(create_with(bad[i], &info), SK_EINVAL);
    assert_int_equal(create_with((sk_cms_options){.error = 1e-12, .depth = 1}, &info),
                     SK_ETOOLARGE);
    assert_int_equal(create_with((sk_cms_options){.width = 10, .delta = 1e-300}, &info),
                     SK_ETOOLARGE);
    assert_int_equal(create_with((sk_cms_options){.width = UINT32_MAX, .depth = 2}, &info),
                     SK_ETOOLARGE);
    sk_cms *c = NULL;
    assert_int_equal(sk_cms_new(&c, 0, 1), SK_EINVAL);
    assert_int_equal(sk_cms_create(&c, NULL), SK_EINVAL);
    assert_null(c);
}

/* sk_cms_create_memory is what the sketch then reports, and max_memory
 * refuses exactly what would pass it, before any allocation. */
static void test_memory_budget(void **state)
{
    const sk_cms_options shapes[] = {
        {.width = 2000, .depth = 5}, {.error = 0.001, .delta = 0.01}, {.width = 1, .depth = 1},
        {.width = 1u << 20, .depth = 4}, /* past the default allocator's mapping threshold */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        sk_cms_options o = shapes[i];
        uint64_t need = sk_cms_create_memory(&o);
        sk_cms_info info;
        assert_int_equal(create_with(o, &info), SK_OK);
        assert_int_equal(info.memory, need);
        o.max_memory = need;
        assert_int_equal(create_with(o, &info), SK_OK);
        o.max_memory = need - 1;
        assert_int_equal(create_with(o, &info), SK_EBUDGET);
    }
    /* 2^32 counters would take 16 GiB: refused by a budget without allocating. */
    sk_cms_options huge = {.width = 1u << 16, .depth = 1u << 16, .max_memory = 1u << 30};
    assert_true(sk_cms_create_memory(&huge) > (UINT64_C(16) << 30));
    sk_cms_info info;
    assert_int_equal(create_with(huge, &info), SK_EBUDGET);
    assert_int_equal(sk_cms_create_memory(&(sk_cms_options){.width = 10}), 0);
    assert_int_equal(sk_cms_create_memory(NULL), 0);
}

static void test_adds_and_queries(void **state)
{
    sk_cms *c = new_cms(1000, 5);
    assert_int_equal(count_of(c, "alice"), 0);
    assert_int_equal(add(c, "alice", 3), 3);
    assert_int_equal(add(c, "alice", 2), 5);
    assert_int_equal(add(c, "bob", 1), 1);
    assert_int_equal(add(c, "carol", 0), 0);
    assert_int_equal(count_of(c, "alice"), 5);
    assert_int_equal(count_of(c, "bob"), 1);
    assert_int_equal(sk_cms_count(c, NULL, 0), 0);
    assert_int_equal(sk_cms_add(c, NULL, 0, 4, NULL), SK_OK); /* the empty item */
    assert_int_equal(sk_cms_count(c, "", 0), 4);
    assert_int_equal(sk_cms_add(c, NULL, 3, 1, NULL), SK_EINVAL);
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    assert_int_equal(info.total, 10);

    sk_cms *d = NULL;
    assert_int_equal(sk_cms_copy(&d, c), SK_OK);
    assert_int_equal(sk_cms_clear(c), SK_OK);
    assert_int_equal(count_of(c, "alice"), 0);
    sk_cms_get_info(c, &info);
    assert_int_equal(info.total, 0);
    assert_int_equal(info.width, 1000);
    assert_int_equal(count_of(d, "alice"), 5);
    sk_cms_free(c);
    sk_cms_free(d);
    sk_cms_free(NULL);
}

/* A counter stops at UINT32_MAX and the total at UINT64_MAX: a count that
 * wrapped would fall below the truth. */
static void test_counters_saturate(void **state)
{
    sk_cms *c = new_cms(16, 3);
    assert_int_equal(add(c, "x", UINT32_MAX - 6), UINT32_MAX - 6);
    assert_int_equal(add(c, "x", 10), UINT32_MAX);
    assert_int_equal(add(c, "x", 1), UINT32_MAX);
    assert_int_equal(add(c, "y", UINT64_C(1) << 40), UINT32_MAX);
    assert_int_equal(add(c, "y", UINT64_MAX), UINT32_MAX);
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    assert_true(info.total == UINT64_MAX);
    sk_cms_free(c);
}

static void test_weighted_merge(void **state)
{
    sk_cms *m1 = new_cms(500, 4), *m2 = new_cms(500, 4), *dst = new_cms(500, 4);
    add(m1, "a", 5);
    add(m1, "b", 7);
    add(m2, "a", 2);
    add(m2, "c", 9);
    const sk_cms *both[2] = {m1, m2};
    const int64_t weights[2] = {3, 1};
    assert_int_equal(sk_cms_merge_weighted(dst, both, weights, 2), SK_OK);
    assert_int_equal(count_of(dst, "a"), 17);
    assert_int_equal(count_of(dst, "b"), 21);
    assert_int_equal(count_of(dst, "c"), 9);
    sk_cms_info info;
    sk_cms_get_info(dst, &info);
    assert_int_equal(info.total, 3 * 12 + 11);

    /* A counter that would go negative, or past UINT32_MAX, and a negative
     * total: refused, dst as it was. */
    const int64_t negative[2] = {1, -1};
    assert_int_equal(sk_cms_merge_weighted(dst, both, negative, 2), SK_EINVAL);
    const int64_t huge[2] = {INT64_MAX / 2, 1};
    assert_int_equal(sk_cms_merge_weighted(dst, both, huge, 2), SK_EINVAL);
    assert_int_equal(count_of(dst, "a"), 17);
    sk_cms_get_info(dst, &info);
    assert_int_equal(info.total, 47);

    /* dst among the sources: each cell reads before it is written. */
    assert_int_equal(sk_cms_merge(dst, m1), SK_OK);
    assert_int_equal(count_of(dst, "a"), 22);
    assert_int_equal(count_of(dst, "b"), 28);
    const sk_cms *self[1] = {dst};
    const int64_t twice[1] = {2};
    assert_int_equal(sk_cms_merge_weighted(dst, self, twice, 1), SK_OK);
    assert_int_equal(count_of(dst, "a"), 44);

    /* Saturated counters are too large to merge with weight 1 twice. */
    sk_cms *full = new_cms(500, 4);
    add(full, "a", UINT32_MAX);
    assert_int_equal(sk_cms_merge(full, full), SK_EINVAL);
    assert_int_equal(count_of(full, "a"), UINT32_MAX);

    sk_cms *other = new_cms(501, 4);
    assert_int_equal(sk_cms_merge(dst, other), SK_EINCOMPAT);
    assert_int_equal(sk_cms_merge(dst, NULL), SK_EINVAL);
    assert_int_equal(sk_cms_merge_weighted(dst, NULL, NULL, 0), SK_OK); /* the empty sum */
    assert_int_equal(count_of(dst, "a"), 0);
    sk_cms_free(m1);
    sk_cms_free(m2);
    sk_cms_free(dst);
    sk_cms_free(full);
    sk_cms_free(other);
}

static uint8_t *serialized(const sk_cms *c, size_t *len)
{
    uint64_t size = 0;
    assert_int_equal(sk_cms_serialized_size(c, &size), SK_OK);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(sk_cms_serialize(c, buf, (size_t)size - 1, len), SK_ENOSPACE);
    assert_int_equal(sk_cms_serialize(c, buf, (size_t)size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

static int load(const uint8_t *buf, size_t len)
{
    sk_cms *c = (sk_cms *)&c;
    int rc = sk_cms_deserialize(&c, buf, len, NULL);
    if (rc != SK_OK)
        assert_null(c);
    sk_cms_free(c);
    return rc;
}

/* The counters of a sketch, read from its serialized form. */
static uint32_t *counters_of(const sk_cms *c, size_t *cells)
{
    uint64_t size;
    assert_int_equal(sk_cms_serialized_size(c, &size), SK_OK);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(sk_cms_serialize(c, buf, size, NULL), SK_OK);
    *cells = (size - SK_CMS_HEADER_SIZE) / 4;
    uint32_t *out = malloc(*cells * sizeof *out + 1);
    assert_non_null(out);
    for (size_t i = 0; i < *cells; i++)
        out[i] = sk_load_le32(buf + SK_CMS_HEADER_SIZE + i * 4);
    free(buf);
    return out;
}

/* Both ways a merge sums, by blocks without checks (small weights) and cell
 * by cell with them (a weight of 2^31 or more), give every cell its
 * weighted sum, over more cells than one block. */
static void test_merge_paths(void **state)
{
    sk_cms *a = new_cms(1500, 3), *b = new_cms(1500, 3), *zero = new_cms(1500, 3);
    uint64_t rng = 7;
    for (int i = 0; i < 5000; i++) {
        char item[16];
        snprintf(item, sizeof item, "i%d", (int)(splitmix64(&rng) % 3000));
        add(i % 2 ? a : b, item, 1 + splitmix64(&rng) % 100);
    }
    size_t cells;
    uint32_t *ca = counters_of(a, &cells), *cb = counters_of(b, &cells);
    sk_cms *dst = new_cms(1500, 3);
    const sk_cms *ab[2] = {a, b};
    const int64_t small[2] = {3, 2};
    assert_int_equal(sk_cms_merge_weighted(dst, ab, small, 2), SK_OK);
    uint32_t *cd = counters_of(dst, &cells);
    for (size_t i = 0; i < cells; i++)
        assert_int_equal(cd[i], 3 * (uint64_t)ca[i] + 2 * (uint64_t)cb[i]);
    free(cd);
    /* a weight past 2^31 on an empty sketch: the checked path, same sums */
    const sk_cms *za[2] = {zero, a};
    const int64_t large[2] = {INT64_C(1) << 40, 1};
    assert_int_equal(sk_cms_merge_weighted(dst, za, large, 2), SK_OK);
    cd = counters_of(dst, &cells);
    assert_memory_equal(cd, ca, cells * sizeof *cd);
    free(cd);
    /* and on counters it would carry past 2^32: refused, dst unchanged */
    const int64_t past[2] = {1, INT64_C(1) << 31};
    const sk_cms *aa[2] = {dst, a};
    assert_int_equal(sk_cms_merge_weighted(dst, aa, past, 2), SK_EINVAL);
    cd = counters_of(dst, &cells);
    assert_memory_equal(cd, ca, cells * sizeof *cd);
    free(cd);
    free(ca);
    free(cb);
    sk_cms_free(a);
    sk_cms_free(b);
    sk_cms_free(zero);
    sk_cms_free(dst);
}

static void test_serialized_form(void **state)
{
    sk_cms *c = new_cms(37, 3);
    for (int i = 0; i < 300; i++) {
        char item[16];
        snprintf(item, sizeof item, "item%d", i % 50);
        add(c, item, (uint64_t)i);
    }
    size_t len;
    uint8_t *buf = serialized(c, &len);
    assert_int_equal(len, SK_CMS_HEADER_SIZE + 37 * 3 * 4);
    assert_memory_equal(buf, SK_CMS_MAGIC, 4);
    assert_int_equal(sk_load_le32(buf + SK_CMS_OFF_WIDTH), 37);
    assert_int_equal(sk_load_le32(buf + SK_CMS_OFF_DEPTH), 3);
    assert_int_equal(sk_load_le64(buf + SK_CMS_OFF_TOTAL), 299 * 300 / 2);
    /* The counters, row by row: row r's cell of an item is its hash with
     * seed r, modulo the width. */
    sk_cms *one = new_cms(37, 3);
    add(one, "item7", 5);
    size_t one_len;
    uint8_t *one_buf = serialized(one, &one_len);
    for (uint32_t r = 0; r < 3; r++) {
        uint32_t at = sk_murmur2("item7", 5, r) % 37;
        for (uint32_t i = 0; i < 37; i++)
            assert_int_equal(sk_load_le32(one_buf + SK_CMS_HEADER_SIZE + (r * 37 + i) * 4),
                             i == at ? 5 : 0);
    }
    free(one_buf);
    sk_cms_free(one);

    sk_cms *back = NULL;
    assert_int_equal(sk_cms_deserialize(&back, buf, len, NULL), SK_OK);
    size_t len2;
    uint8_t *again = serialized(back, &len2);
    assert_same_bytes_free(buf, len, again, len2);
    buf = serialized(c, &len);
    for (int i = 0; i < 50; i++) {
        char item[16];
        snprintf(item, sizeof item, "item%d", i);
        assert_int_equal(sk_cms_count(back, item, strlen(item)),
                         sk_cms_count(c, item, strlen(item)));
    }

    /* Every cut, every flipped bit: an error, never a sketch. */
    for (size_t cut = 0; cut < len; cut++)
        assert_int_not_equal(load(buf, cut), SK_OK);
    assert_int_equal(load(buf, 3), SK_EFORMAT);
    assert_int_equal(load(buf, SK_CMS_HEADER_SIZE - 1), SK_ETRUNCATED);
    assert_int_equal(load(buf, len - 1), SK_ETRUNCATED);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            assert_int_not_equal(load(buf, len), SK_OK);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    buf[SK_CMS_OFF_VERSION] = 2;
    assert_int_equal(load(buf, len), SK_EVERSION);
    buf[SK_CMS_OFF_VERSION] = SK_CMS_VERSION;
    buf[SK_CMS_HEADER_SIZE] ^= 1;
    assert_int_equal(load(buf, len), SK_ECHECKSUM);
    /* A header that claims more counters than SK_CMS_MAX_CELLS, or than
     * the bytes hold, before anything is allocated. */
    sk_store_le32(buf + SK_CMS_OFF_WIDTH, UINT32_MAX);
    sk_store_le32(buf + SK_CMS_OFF_DEPTH, UINT32_MAX);
    assert_int_equal(load(buf, len), SK_ECORRUPT);
    sk_store_le32(buf + SK_CMS_OFF_DEPTH, 1);
    assert_int_equal(load(buf, len), SK_ETRUNCATED);
    free(buf);
    sk_cms_free(c);
    sk_cms_free(back);
}

/* Random bytes, and random bytes after a valid header: never a crash. */
static void test_random_bytes(void **state)
{
    uint64_t seed = 7;
    uint8_t buf[256];
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(splitmix64(&seed) % sizeof buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)splitmix64(&seed);
        if (round % 2 == 0 && len >= SK_CMS_HEADER_SIZE) {
            memcpy(buf, SK_CMS_MAGIC, 4);
            buf[SK_CMS_OFF_VERSION] = SK_CMS_VERSION;
            buf[SK_CMS_OFF_HASH] = SK_CMS_HASH_MURMUR2;
        }
        assert_int_not_equal(load(buf, len), SK_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_murmur2_definition),
        cmocka_unit_test(test_mod_is_exact), cmocka_unit_test(test_dimensions),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_adds_and_queries),   cmocka_unit_test(test_counters_saturate),
        cmocka_unit_test(test_weighted_merge),
        cmocka_unit_test(test_merge_paths),     cmocka_unit_test(test_serialized_form),
        cmocka_unit_test(test_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
