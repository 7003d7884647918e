/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_alloc.c: every structure through a caller's allocator: what a filter
 * and a sketch cost before their items, that the memory they report is what
 * they took, that everything taken is given back, and that an allocator
 * that fails leaves a clear error and an object as it was.
 */
#define _GNU_SOURCE /* mkstemp */
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

/* Counts what it hands out and takes back; fails the call numbered
 * fail_at (1 the first) once it is reached, and every later one while
 * fail_all is set. */
struct counter {
    size_t live_bytes, peak_bytes;
    long calls, live_blocks, fail_at;
    int fail_all;
};

static void *counted_alloc(void *opaque, size_t size)
{
    struct counter *c = opaque;
    c->calls++;
    if ((c->fail_at != 0 && c->calls >= c->fail_at && (c->fail_all || c->calls == c->fail_at)))
        return NULL;
    void *p = malloc(size);
    if (p != NULL) {
        c->live_bytes += size;
        c->live_blocks++;
        if (c->live_bytes > c->peak_bytes)
            c->peak_bytes = c->live_bytes;
    }
    return p;
}

static void counted_free(void *opaque, void *ptr, size_t size)
{
    struct counter *c = opaque;
    assert_non_null(ptr);
    assert_true(c->live_bytes >= size);
    c->live_bytes -= size;
    c->live_blocks--;
    free(ptr);
}

static sk_allocator counting(struct counter *c)
{
    memset(c, 0, sizeof *c);
    return (sk_allocator){counted_alloc, counted_free, c, 0};
}

static void add_keys(sk_bloom *f, uint64_t from, uint64_t to)
{
    for (uint64_t k = from; k < to; k++)
        assert_true(sk_bloom_add(f, &k, sizeof k) >= 0);
}

/* A new filter for capacity items at 1%, expansion 2, of the layout, taking
 * its memory from *a. */
static sk_bloom *new_filter(const sk_allocator *a, uint64_t capacity, sk_bloom_layout layout)
{
    sk_bloom_options o = {.capacity = capacity, .fp_rate = 0.01, .expansion = 2,
                          .layout = layout, .allocator = a};
    sk_bloom *f;
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    return f;
}

/* A small filter of one layer is one allocation, its record with its bit
 * array: a few hundred bytes past the bits, and the memory it reports is
 * what it took. The filter BF.ADD creates for a new key (100 items at 1%)
 * is the case. */
static void test_fixed_cost_of_a_filter(void **state)
{
    struct counter c;
    sk_allocator a = counting(&c);
    sk_bloom *f = new_filter(&a, 100, SK_BLOOM_AUTO);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    print_message("one-layer filter: %zu bytes in %ld blocks, %llu of them bits\n",
                  c.live_bytes, c.live_blocks, (unsigned long long)info.array_bytes);
    assert_int_equal(c.live_blocks, 1); /* the record, with the bit array in it */
    assert_true(c.live_bytes - info.array_bytes <= 400);
    assert_int_equal(info.memory, c.live_bytes);
    /* Growing keeps the account exact. */
    add_keys(f, 0, 5000);
    sk_bloom_get_info(f, &info);
    assert_true(info.layers > 3);
    assert_int_equal(info.memory, c.live_bytes);
    sk_bloom_free(f);
    assert_int_equal(c.live_bytes, 0);
    assert_int_equal(c.live_blocks, 0);
}

/* sk_bloom_create_memory is the exact budget a filter needs: created with
 * it, the filter fits and holds that much; with a byte less, it does not. */
static void test_memory_a_filter_would_take(void **state)
{
    struct counter c;
    sk_allocator a = counting(&c);
    const struct {
        uint64_t capacity;
        double rate;
        sk_bloom_layout layout;
        const sk_allocator *allocator;
    } cases[] = {
        {100, 0.01, SK_BLOOM_AUTO, &a},      {2, 0.01, SK_BLOOM_CLASSIC, &a},
        {100000, 0.001, SK_BLOOM_SPLIT, &a}, {1000000, 0.01, SK_BLOOM_BLOCKED, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sk_bloom_options o = {.capacity = cases[i].capacity, .fp_rate = cases[i].rate,
                              .expansion = 2, .layout = cases[i].layout,
                              .allocator = cases[i].allocator};
        uint64_t need = sk_bloom_create_memory(&o);
        assert_true(need > 0);
        sk_bloom *f;
        o.max_memory = need - 1;
        assert_int_equal(sk_bloom_create(&f, &o), SK_EBUDGET);
        o.max_memory = need;
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        sk_bloom_info info;
        sk_bloom_get_info(f, &info);
        assert_int_equal(info.memory, need);
        sk_bloom_free(f);
    }
    sk_bloom_options bad = {.capacity = 0, .fp_rate = 0.01};
    assert_int_equal(sk_bloom_create_memory(&bad), 0);
}

static void test_fixed_cost_of_a_sketch(void **state)
{
    struct counter c;
    sk_allocator a = counting(&c);
    sk_hll *h;
    assert_int_equal(sk_hll_create(&h, &(sk_hll_options){.precision = 14, .allocator = &a}), SK_OK);
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    print_message("empty sketch: %zu bytes in %ld blocks\n", c.live_bytes, c.live_blocks);
    assert_int_equal(c.live_blocks, 1);
    assert_true(c.live_bytes <= 128);
    assert_int_equal(info.memory, c.live_bytes);
    for (uint64_t k = 0; k < 100000; k++) {
        assert_true(sk_hll_add(h, &k, sizeof k) >= 0);
        if (k == 10 || k == 99999) {
            sk_hll_get_info(h, &info);
            assert_int_equal(info.memory, c.live_bytes);
        }
    }
    assert_int_equal(info.encoding, SK_HLL_DENSE);
    sk_hll_free(h);
    assert_int_equal(c.live_bytes, 0);
}

/* Copies, dumps, files and set operations all take from the object's own
 * allocator and give it all back. */
static void test_everything_goes_through_the_allocator(void **state)
{
    struct counter c;
    sk_allocator a = counting(&c);
    sk_bloom *f = new_filter(&a, 1000, SK_BLOOM_CLASSIC), *copy, *back, *opened;
    add_keys(f, 0, 3000);
    assert_int_equal(sk_bloom_copy(&copy, f), SK_OK);
    uint64_t cap;
    size_t len;
    assert_int_equal(sk_bloom_serialized_size(f, &cap), SK_OK);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(sk_bloom_serialize(f, buf, cap, &len), SK_OK);
    assert_int_equal(sk_bloom_deserialize(&back, buf, len, &a), SK_OK);
    assert_int_equal(sk_bloom_merge(back, copy), SK_OK);
    char path[] = "/tmp/sketch-alloc-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sk_bloom_save(f, path), SK_OK);
    assert_int_equal(sk_bloom_open(&opened, path, SK_BLOOM_VERIFY, &a), SK_OK);
    for (uint64_t k = 0; k < 3000; k++) {
        assert_int_equal(sk_bloom_contains(copy, &k, sizeof k), 1);
        assert_int_equal(sk_bloom_contains(back, &k, sizeof k), 1);
        assert_int_equal(sk_bloom_contains(opened, &k, sizeof k), 1);
    }
    sk_bloom_free(f);
    sk_bloom_free(copy);
    sk_bloom_free(back);
    sk_bloom_free(opened);
    assert_int_equal(c.live_bytes, 0);

    sk_hll *h, *g, *loaded;
    assert_int_equal(sk_hll_create(&h, &(sk_hll_options){.precision = 16, .allocator = &a}), SK_OK);
    for (uint64_t k = 0; k < 50000; k++)
        sk_hll_add(h, &k, sizeof k);
    assert_int_equal(sk_hll_copy(&g, h), SK_OK);
    assert_int_equal(sk_hll_fold(g, 14), SK_OK);
    assert_int_equal(sk_hll_merge(g, h), SK_OK);
    assert_int_equal(sk_hll_save(g, SK_HLL_REDIS, path), SK_OK);
    sk_hll_format format;
    assert_int_equal(sk_hll_open(&loaded, path, &format, &a), SK_OK);
    assert_int_equal(format, SK_HLL_REDIS);
    assert_int_equal(sk_hll_count(loaded), sk_hll_count(g));
    assert_int_equal(sk_hll_clear(g), SK_OK);
    assert_int_equal(sk_hll_count(g), 0);
    sk_hll_free(h);
    sk_hll_free(g);
    sk_hll_free(loaded);
    assert_int_equal(c.live_bytes, 0);
    unlink(path);
    free(buf);
}

/* Whether two sketches hold the same registers (their native bytes). */
static int same_sketch(const sk_hll *a, const sk_hll *b)
{
    uint64_t ca, cb;
    assert_int_equal(sk_hll_serialized_size(a, SK_HLL_NATIVE, &ca), SK_OK);
    assert_int_equal(sk_hll_serialized_size(b, SK_HLL_NATIVE, &cb), SK_OK);
    size_t la = ca, lb = cb;
    uint8_t *sa = malloc(la), *sb = malloc(lb);
    assert_true(sa != NULL && sb != NULL);
    assert_int_equal(sk_hll_serialize(a, SK_HLL_NATIVE, sa, la, &la), SK_OK);
    assert_int_equal(sk_hll_serialize(b, SK_HLL_NATIVE, sb, lb, &lb), SK_OK);
    int same = la == lb && memcmp(sa, sb, la) == 0;
    free(sa);
    free(sb);
    return same;
}

/* Every allocation, failed in turn: the call answers SK_ENOMEM, keeps what
 * it had, and nothing leaks. */
static void test_failing_allocator(void **state)
{
    for (long fail_at = 1; fail_at < 40; fail_at++) {
        struct counter c;
        sk_allocator a = counting(&c);
        c.fail_at = fail_at;
        sk_bloom_options o = {.capacity = 10, .fp_rate = 0.01, .expansion = 2,
                              .layout = SK_BLOOM_BLOCKED, .allocator = &a};
        sk_bloom *f;
        int rc = sk_bloom_create(&f, &o);
        if (rc != SK_OK) {
            assert_int_equal(rc, SK_ENOMEM);
            assert_null(f);
            assert_int_equal(c.live_bytes, 0);
            continue;
        }
        uint64_t k;
        for (k = 0; k < 2000; k++) {
            rc = sk_bloom_add(f, &k, sizeof k);
            if (rc < 0)
                break;
        }
        if (rc < 0) {
            assert_int_equal(rc, SK_ENOMEM);
            for (uint64_t i = 0; i < k; i++)
                assert_int_equal(sk_bloom_contains(f, &i, sizeof i), 1);
        }
        sk_bloom_free(f);
        assert_int_equal(c.live_bytes, 0);

        sk_hll *h;
        c = (struct counter){.fail_at = fail_at};
        rc = sk_hll_create(&h, &(sk_hll_options){.precision = 12, .allocator = &a});
        if (rc != SK_OK) {
            assert_int_equal(rc, SK_ENOMEM);
            continue;
        }
        uint64_t count = 0;
        for (k = 0; k < 5000; k++) {
            rc = sk_hll_add(h, &k, sizeof k);
            if (rc < 0)
                break;
            count = sk_hll_count(h);
        }
        if (rc < 0) {
            assert_int_equal(rc, SK_ENOMEM);
            assert_int_equal(sk_hll_count(h), count); /* as it was */
        }
        sk_hll_free(h);
        assert_int_equal(c.live_bytes, 0);

        /* In batches: the hashes before the one that failed are added. */
        c = (struct counter){.fail_at = fail_at};
        rc = sk_hll_create(&h, &(sk_hll_options){.precision = 12, .allocator = &a});
        if (rc != SK_OK)
            continue;
        static uint64_t hashes[5000];
        for (k = 0; k < 5000; k++)
            hashes[k] = sk_hll_hash(&k, sizeof k);
        size_t done;
        for (done = 0; done < 5000; done += 250) {
            rc = sk_hll_add_hash_batch(h, hashes + done, 250);
            if (rc < 0)
                break;
        }
        if (rc < 0) {
            assert_int_equal(rc, SK_ENOMEM);
            sk_hll *reference;
            assert_int_equal(sk_hll_new(&reference, 12), SK_OK);
            assert_true(sk_hll_add_hash_batch(reference, hashes, done) >= 0);
            int matched = 0;
            for (size_t i = done; i < done + 250 && !matched; i++) {
                matched = same_sketch(h, reference);
                assert_true(sk_hll_add_hash(reference, hashes[i]) >= 0);
            }
            assert_true(matched);
            sk_hll_free(reference);
        }
        sk_hll_free(h);
        assert_int_equal(c.live_bytes, 0);
    }
}

/* Reading a whole dump header, and saving, takes no memory; a restore past
 * its budget is refused before anything is allocated. */
static void test_dumps_without_memory(void **state)
{
    struct counter c;
    sk_allocator a = counting(&c);
    sk_bloom *f = new_filter(&a, 1000, SK_BLOOM_BLOCKED);
    add_keys(f, 0, 5000);
    size_t head = sk_bloom_dump_header_size(f);
    uint64_t size = sk_bloom_dump_size(f);
    uint8_t *dump = malloc((size_t)size);
    assert_non_null(dump);
    long calls = c.calls;
    assert_int_equal(sk_bloom_dump_read(f, 0, dump, head), SK_OK);
    assert_int_equal(sk_bloom_dump_read(f, head, dump + head, (size_t)size - head), SK_OK);
    assert_int_equal(c.calls, calls);

    sk_bloom *g;
    size_t header_len;
    calls = c.calls;
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    assert_int_equal(sk_bloom_restore_begin(&g, dump, head, &header_len, &a, info.array_bytes),
                     SK_EBUDGET);
    assert_null(g);
    /* f's record with its first array, its table, its other arrays */
    assert_int_equal(c.live_blocks, 1 + (long)info.layers);
    assert_int_equal(sk_bloom_restore_begin(&g, dump, head, &header_len, &a, 2 * info.memory),
                     SK_OK);
    assert_int_equal(sk_bloom_restore_chunk(g, header_len, dump + header_len,
                                            (size_t)size - header_len), SK_OK);
    assert_int_equal(sk_bloom_restore_finish(g), SK_OK);
    /* A restore that has finished takes no more chunks: they could only
     * overwrite what the filter holds now. */
    assert_int_equal(sk_bloom_restore_chunk(g, header_len, dump + header_len, 8), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_restore_finish(g), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_restore_chunk(f, header_len, dump + header_len, 8), SK_EINCOMPAT);
    for (uint64_t k = 0; k < 5000; k++)
        assert_int_equal(sk_bloom_contains(g, &k, sizeof k), 1);
    sk_bloom_free(g);
    sk_bloom_free(f);
    free(dump);
    assert_int_equal(c.live_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_cost_of_a_filter),
        cmocka_unit_test(test_memory_a_filter_would_take),
        cmocka_unit_test(test_fixed_cost_of_a_sketch),
        cmocka_unit_test(test_everything_goes_through_the_allocator),
        cmocka_unit_test(test_failing_allocator),
        cmocka_unit_test(test_dumps_without_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
