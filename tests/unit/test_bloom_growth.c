/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_growth.c: unit tests of how filters grow and where they stop,
 * with cmocka: the layers of scalable filters (planned ahead, thousands of
 * them, the size limit), memory budgets, fixed filters that refuse items
 * once full, and the allocations a filter makes.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

/* A scalable filter stops growing at its memory budget with SK_EBUDGET,
 * keeping every item it holds and its memory within the budget. */
static void test_scalable_stops_at_its_budget(void **state)
{
    const uint64_t budget = 64 * 1024;
    sk_bloom *f = NULL;
    sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .expansion = 2,
                          .layout = SK_BLOOM_BLOCKED, .max_memory = budget};
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    int rc = 0;
    uint64_t key;
    for (key = 0; key < 1000000; key++) {
        rc = add_key(f, key);
        if (rc < 0)
            break;
    }
    assert_int_equal(rc, SK_EBUDGET);
    sk_bloom_info info = info_of(f);
    assert_true(info.layers >= 3);
    assert_true(info.memory <= budget);
    assert_int_equal(info.max_memory, budget);
    /* The layer it refused would have passed the budget. */
    sk_bloom_layer next;
    assert_int_equal(sk_bloom_get_layer(f, info.layers, &next), SK_OK);
    assert_true(info.memory + next.bytes > budget);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(f, i), 1);
    assert_int_equal(add_key(f, key), SK_EBUDGET);
    assert_int_equal(add_key(f, 0), 0);
    const void *items[1] = {&key};
    size_t lens[1] = {sizeof key};
    uint8_t added[1] = {9};
    assert_int_equal(sk_bloom_add_batch(f, items, lens, 1, added), SK_EBUDGET);
    /* A larger budget lets it grow again. */
    sk_bloom_set_max_memory(f, 0);
    assert_int_equal(add_key(f, key), 1);
    assert_int_equal(info_of(f).layers, info.layers + 1);
    sk_bloom_free(f);

    /* A first layer over the budget is refused at creation. */
    o.max_memory = 1000;
    o.capacity = 10000;
    f = (sk_bloom *)&o;
    assert_int_equal(sk_bloom_create(&f, &o), SK_EBUDGET);
    assert_null(f);
}

/* A fixed filter created with refuse_when_full takes no new item once its
 * count reaches its capacity (SK_EFULL, nothing changed), in every layout
 * and by every add call, answers 0 for an item it holds, and keeps the
 * choice through a copy; a dump does not record it, and
 * sk_bloom_set_refuse_when_full restores it. Without the option adds go on
 * past the capacity. */
static void test_fixed_refuses_when_full(void **state)
{
    const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .layout = layouts[li],
                              .refuse_when_full = 1};
        sk_bloom *f = NULL;
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        /* A batch with room for all its items takes them all. */
        uint64_t keys[50];
        const void *items[50];
        size_t lens[50];
        uint8_t added[50];
        for (int i = 0; i < 50; i++) {
            keys[i] = (uint64_t)i;
            items[i] = &keys[i];
            lens[i] = sizeof keys[i];
        }
        assert_int_equal(sk_bloom_add_batch(f, items, lens, 50, added), SK_OK);
        uint64_t key = 50;
        while (info_of(f).count < 100)
            assert_true(add_key(f, key++) >= 0);
        sk_bloom_info full = info_of(f);
        assert_int_equal(full.count, 100);
        uint64_t fresh = key;
        while (has_key(f, fresh))
            fresh++;
        assert_int_equal(add_key(f, fresh), SK_EFULL);
        assert_int_equal(has_key(f, fresh), 0);
        assert_int_equal(add_key(f, 0), 0);
        sk_bloom_hash h = sk_bloom_hash_bytes(&fresh, sizeof fresh);
        assert_int_equal(sk_bloom_add_hash(f, h), SK_EFULL);
        assert_int_equal(sk_bloom_add_unlimited(f, &fresh, sizeof fresh), SK_EFULL);
        /* A batch stops at the refused item; those before it are in. */
        uint64_t pair[2] = {1, fresh};
        const void *pitems[2] = {&pair[0], &pair[1]};
        size_t plens[2] = {sizeof pair[0], sizeof pair[1]};
        uint8_t padded[2] = {9, 9};
        assert_int_equal(sk_bloom_add_batch(f, pitems, plens, 2, padded), SK_EFULL);
        assert_int_equal(padded[0], 0);
        assert_int_equal(sk_bloom_add_hash_batch(f, &h, 1, padded), SK_EFULL);
        assert_int_equal(info_of(f).count, 100);
        assert_int_equal(has_key(f, fresh), 0);

        sk_bloom *g = NULL;
        assert_int_equal(sk_bloom_copy(&g, f), SK_OK);
        assert_int_equal(add_key(g, fresh), SK_EFULL);
        sk_bloom_free(g);

        sk_bloom *d = round_trip_dump(f);
        assert_int_equal(add_key(d, fresh), 1); /* not recorded in the dump */
        sk_bloom_free(d);
        d = round_trip_dump(f);
        sk_bloom_set_refuse_when_full(d, 1);
        assert_int_equal(add_key(d, fresh), SK_EFULL);
        sk_bloom_set_refuse_when_full(d, 0);
        assert_int_equal(add_key(d, fresh), 1);
        sk_bloom_free(d);

        sk_bloom_set_refuse_when_full(f, 0);
        assert_int_equal(add_key(f, fresh), 1);
        assert_int_equal(info_of(f).count, 101);
        sk_bloom_free(f);

        /* Scalable filters ignore it: they grow. */
        o.expansion = 2;
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        for (key = 0; info_of(f).layers < 2; key++)
            assert_true(add_key(f, key) >= 0);
        sk_bloom_free(f);
    }
}

/* sk_bloom_add_unlimited adds past the memory budget, for a replay, and
 * leaves the budget as it was for the adds after it. */
static void test_add_unlimited_passes_the_budget(void **state)
{
    const uint64_t budget = 16 * 1024;
    sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .expansion = 2,
                          .layout = SK_BLOOM_BLOCKED, .max_memory = budget};
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    uint64_t key = 0;
    int rc;
    while ((rc = add_key(f, key)) >= 0)
        key++;
    assert_int_equal(rc, SK_EBUDGET);
    unsigned layers = info_of(f).layers;
    assert_int_equal(sk_bloom_add_unlimited(f, &key, sizeof key), 1);
    assert_int_equal(has_key(f, key), 1);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.layers, layers + 1);
    assert_true(info.memory > budget);
    assert_int_equal(info.max_memory, budget);
    /* Present items are no growth; new ones fill the new layer, then are
     * refused again. */
    assert_int_equal(sk_bloom_add_unlimited(f, &key, sizeof key), 0);
    while ((rc = add_key(f, ++key)) >= 0)
        ;
    assert_int_equal(rc, SK_EBUDGET);
    assert_int_equal(info_of(f).layers, layers + 1);
    sk_bloom_free(f);
}

/* A small filter is one allocation, its record and bit array together,
 * and its memory is what sk_bloom_create_memory said; a large one keeps
 * its array apart. */
struct alloc_count {
    int live;
    size_t bytes;
};

static void *counted_alloc(void *opaque, size_t size)
{
    struct alloc_count *c = opaque;
    void *p = malloc(size);
    if (p != NULL) {
        c->live++;
        c->bytes += size;
    }
    return p;
}

static void counted_free(void *opaque, void *ptr, size_t size)
{
    struct alloc_count *c = opaque;
    c->live--;
    c->bytes -= size;
    free(ptr);
}

static void test_small_filter_is_one_allocation(void **state)
{
    const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        for (uint64_t capacity = 1; capacity <= 100000; capacity *= 100) {
            struct alloc_count c = {0, 0};
            sk_allocator a = {counted_alloc, counted_free, &c, 0};
            sk_bloom_options o = {.capacity = capacity, .fp_rate = 0.01, .layout = layouts[li],
                                  .expansion = 2, .allocator = &a};
            sk_bloom *f = NULL;
            assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
            sk_bloom_info info = info_of(f);
            assert_int_equal(c.live, info.array_bytes <= 4096 ? 1 : 2);
            assert_int_equal(info.memory, c.bytes);
            assert_int_equal(info.memory, sk_bloom_create_memory(&o));
            for (uint64_t key = 0; key < 3 * capacity; key++)
                assert_true(add_key(f, key) >= 0);
            assert_int_equal(info_of(f).memory, c.bytes);
            for (uint64_t key = 0; key < 3 * capacity; key++)
                assert_int_equal(has_key(f, key), 1);
            sk_bloom *g = round_trip_dump(f);
            assert_int_equal(info_of(g).layers, info_of(f).layers);
            sk_bloom_free(g);
            sk_bloom_free(f);
            assert_int_equal(c.live, 0);
            assert_int_equal(c.bytes, 0);
        }
    }
}

/* The chain has no fixed number of layers: capacity 1 and expansion 1, the
 * smallest steps RedisBloom allows, grows to 5,000 layers and keeps every
 * item, within the rate it was asked for. */
static void test_scalable_grows_to_thousands_of_layers(void **state)
{
    enum { LAYERS = 5000 };
    sk_bloom *f = new_scalable(1, 0.01, 1, SK_BLOOM_AUTO);
    uint64_t key = 0;
    while (info_of(f).layers < LAYERS)
        assert_true(add_key(f, key++) >= 0);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.layers, LAYERS);
    assert_true(key >= LAYERS - 1);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(f, i), 1);
    /* Every layer holds one item in one block or less, and the rates of all
     * layers sum to at most the one requested. */
    double rates = 0;
    for (unsigned i = 0; i < LAYERS; i++) {
        sk_bloom_layer l;
        assert_int_equal(sk_bloom_get_layer(f, i, &l), SK_OK);
        assert_int_equal(l.capacity, 1);
        assert_true(l.bytes <= 64);
        rates += l.fp_rate;
    }
    assert_true(rates <= 0.01);
    assert_true(sk_bloom_expected_fp_rate(f, key) <= 0.01);
    /* The layers survive a dump and a file. */
    sk_bloom *g = round_trip_dump(f);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(g, i), 1);
    assert_int_equal(info_of(g).layers, LAYERS);
    sk_bloom_free(g);
    sk_bloom_free(f);
}

/* A chain whose next layer would pass the library's size limits stops
 * growing with SK_EFULL: planned without allocating, and met by an add. */
static void test_scalable_stops_with_efull(void **state)
{
    sk_bloom_options o = {.capacity = UINT64_C(1) << 30, .fp_rate = 0.01,
                          .expansion = SK_BLOOM_MAX_EXPANSION, .layout = SK_BLOOM_BLOCKED};
    sk_bloom_layer first, second;
    assert_int_equal(sk_bloom_plan(&o, 0, &first), SK_OK);
    assert_int_equal(sk_bloom_plan(&o, 1, &second), SK_EFULL);
    /* A filter whose first layer is full (its count said so by a dump
     * header: the arrays, a gigabyte, are mapped lazily and never touched). */
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    size_t head_len = sk_bloom_dump_header_size(f), header_len;
    uint8_t *head = malloc(head_len);
    assert_non_null(head);
    assert_int_equal(sk_bloom_dump_read(f, 0, head, head_len), SK_OK);
    sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_COUNT, first.capacity);
    fix_checksum(head);
    sk_bloom *g = NULL;
    assert_int_equal(sk_bloom_restore_begin(&g, head, head_len, &header_len, NULL, 0), SK_OK);
    uint64_t key = 1;
    assert_int_equal(add_key(g, key), SK_EFULL);
    assert_int_equal(info_of(g).layers, 1);
    sk_bloom_free(g);
    sk_bloom_free(f);
    free(head);
}

/* The layers a filter will have are known before it has them: sk_bloom_plan
 * from the options, sk_bloom_get_layer from the filter, and growth adds
 * exactly the planned bytes of bit array. */
static void test_planned_layers(void **state)
{
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_BLOCKED);
    sk_bloom_layer l;
    assert_int_equal(sk_bloom_get_layer(f, 1, &l), SK_EFULL);
    sk_bloom_free(f);
    f = new_explicit(1000, 3, SK_BLOOM_CLASSIC);
    assert_int_equal(sk_bloom_get_layer(f, 1, &l), SK_EFULL);
    assert_int_equal(sk_bloom_get_layer(f, 0, &l), SK_OK);
    assert_int_equal(l.bits, 1000);
    assert_int_equal(l.hashes, 3);
    sk_bloom_free(f);
    for (int lay = 0; lay < 3; lay++) {
        sk_bloom_options o = {.capacity = 1000, .fp_rate = 0.01, .expansion = 3,
                              .layout = (sk_bloom_layout)lay};
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        sk_bloom_layout layout = info_of(f).layout;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(3000, 0.0025, &layout, &m, &k), SK_OK);
        assert_int_equal(sk_bloom_plan(&o, 1, &l), SK_OK);
        assert_int_equal(l.bits, m);
        assert_int_equal(l.hashes, k);
        assert_int_equal(l.capacity, 3000);
        assert_true(l.fp_rate == 0.0025);
        uint64_t key = 0;
        for (unsigned grown = 1; grown <= 4; grown++) {
            sk_bloom_layer next, planned;
            assert_int_equal(sk_bloom_get_layer(f, grown, &next), SK_OK);
            assert_int_equal(sk_bloom_plan(&o, grown, &planned), SK_OK);
            assert_int_equal(next.bits, planned.bits);
            assert_int_equal(next.capacity, planned.capacity);
            sk_bloom_info before = info_of(f);
            while (info_of(f).layers == before.layers)
                assert_true(add_key(f, key++) >= 0);
            assert_int_equal(info_of(f).array_bytes - before.array_bytes, next.bytes);
            assert_true(info_of(f).memory - before.memory >= next.bytes);
            assert_int_equal(sk_bloom_get_layer(f, grown, &l), SK_OK);
            assert_int_equal(l.bits, next.bits);
            assert_int_equal(l.count, 1);
        }
        sk_bloom_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalable_stops_at_its_budget),
        cmocka_unit_test(test_fixed_refuses_when_full),
        cmocka_unit_test(test_add_unlimited_passes_the_budget),
        cmocka_unit_test(test_small_filter_is_one_allocation),
        cmocka_unit_test(test_scalable_grows_to_thousands_of_layers),
        cmocka_unit_test(test_scalable_stops_with_efull),
        cmocka_unit_test(test_planned_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
