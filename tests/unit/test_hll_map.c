/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hll_map.c: unit tests of sk_hll_map (sketch/hll_map.h) with cmocka.
 *
 * The reference for every group is a plain sk_hll fed the group's items:
 * each group's estimate, bounds and serialized bytes must be that sketch's,
 * whether the group is still held inline, was just promoted, or is dense;
 * after merges of maps and of sketches; and under an allocator that fails,
 * where a call that fails must leave the map as it was.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

/* The serialized bytes of h, for comparing sketches exactly. */
static uint8_t *bytes_of(const sk_hll *h, size_t *len)
{
    uint64_t cap;
    assert_int_equal(sk_hll_serialized_size(h, SK_HLL_NATIVE, &cap), SK_OK);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(sk_hll_serialize(h, SK_HLL_NATIVE, buf, cap, len), SK_OK);
    return buf;
}

static void assert_same_sketch(const sk_hll *a, const sk_hll *b)
{
    size_t la, lb;
    uint8_t *x = bytes_of(a, &la), *y = bytes_of(b, &lb);
    assert_same_bytes_free(x, la, y, lb);
}

/* Group g of the map against the reference sketch. */
static void assert_group_is(const sk_hll_map *m, int64_t g, const sk_hll *ref)
{
    assert_true(g >= 0);
    sk_hll_map_entry e;
    assert_int_equal(sk_hll_map_get(m, (size_t)g, &e), SK_OK);
    sk_hll_estimate want;
    sk_hll_estimate_with_bounds(ref, &want);
    assert_int_equal(e.estimate.count, want.count);
    assert_true(e.estimate.lower[1] == want.lower[1] && e.estimate.upper[1] == want.upper[1]);
    sk_hll *h;
    assert_int_equal(sk_hll_map_sketch(m, (size_t)g, &h), SK_OK);
    assert_same_sketch(h, ref);
    sk_hll_free(h);
}

/* b has a's groups, in a's order, each the same sketch. */
static void assert_same_map(const sk_hll_map *a, const sk_hll_map *b)
{
    assert_int_equal(sk_hll_map_size(a), sk_hll_map_size(b));
    for (size_t g = 0; g < sk_hll_map_size(a); g++) {
        sk_hll_map_entry e;
        sk_hll_map_get(a, g, &e);
        int64_t j = sk_hll_map_find(b, e.key, e.key_len);
        assert_int_equal(j, (int64_t)g); /* the same order of first keys */
        sk_hll *h;
        assert_int_equal(sk_hll_map_sketch(a, g, &h), SK_OK);
        assert_group_is(b, j, h);
        sk_hll_free(h);
    }
}

enum { GROUPS = 300 };

/* Group g gets about g^2 / 9 distinct items: from none past the inline
 * registers to dense sketches. */
static uint64_t items_of(unsigned g)
{
    return (uint64_t)g * g / 9 + 1;
}

static void build(sk_hll_map *m, sk_hll **refs, unsigned precision, uint64_t seed)
{
    for (unsigned g = 0; g < GROUPS; g++)
        if (refs[g] == NULL)
            assert_int_equal(sk_hll_new(&refs[g], precision), SK_OK);
    /* Interleaved, as lines of real data come. */
    uint64_t s = seed;
    for (uint64_t round = 0; round < items_of(GROUPS - 1); round++) {
        for (unsigned g = 0; g < GROUPS; g++) {
            if (round >= items_of(g))
                continue;
            char key[16];
            int klen = snprintf(key, sizeof key, "group-%u", g);
            uint64_t item = splitmix64(&s) % (items_of(g) * 2); /* repeats too */
            int a = sk_hll_map_add(m, key, (size_t)klen, &item, sizeof item);
            int b = sk_hll_add(refs[g], &item, sizeof item);
            assert_int_equal(a, b);
        }
    }
}

static void test_groups_are_their_sketches(void **state)
{
    for (unsigned p = 4; p <= 18; p += 7) {
        sk_hll_map *m;
        assert_int_equal(sk_hll_map_new(&m, p), SK_OK);
        sk_hll_map_info info;
        sk_hll_map_get_info(m, &info);
        assert_int_equal(info.precision, p);
        assert_int_equal(info.groups, 0);
        sk_hll *refs[GROUPS] = {0};
        build(m, refs, p, 1);
        assert_int_equal(sk_hll_map_size(m), GROUPS);
        for (unsigned g = 0; g < GROUPS; g++) {
            char key[16];
            int klen = snprintf(key, sizeof key, "group-%u", g);
            int64_t i = sk_hll_map_find(m, key, (size_t)klen);
            assert_int_equal(i, g); /* numbered in the order keys came */
            sk_hll_map_entry e;
            assert_int_equal(sk_hll_map_get(m, (size_t)i, &e), SK_OK);
            assert_int_equal(e.key_len, (size_t)klen);
            assert_memory_equal(e.key, key, (size_t)klen);
            assert_group_is(m, i, refs[g]);
            sk_hll_free(refs[g]);
        }
        assert_int_equal(sk_hll_map_find(m, "nope", 4), -1);
        sk_hll_map_free(m);
    }
}

/* Small groups are counted exactly (their registers rarely collide), and
 * cost bytes: a million groups of three items take under 128 MB. */
static void test_small_groups_are_small(void **state)
{
    sk_hll_map *m;
    assert_int_equal(sk_hll_map_new(&m, 14), SK_OK);
    enum { N = 1000000 };
    for (uint32_t g = 0; g < N; g++)
        for (uint32_t i = 0; i < 3; i++) {
            uint64_t item = (uint64_t)g << 32 | i;
            assert_true(sk_hll_map_add(m, &g, sizeof g, &item, sizeof item) >= 0);
        }
    assert_int_equal(sk_hll_map_size(m), N);
    uint64_t exact = 0;
    for (size_t i = 0; i < N; i++) {
        sk_hll_map_entry e;
        sk_hll_map_get(m, i, &e);
        exact += e.estimate.count == 3;
        assert_true(e.estimate.count >= 2 && e.estimate.count <= 3);
    }
    assert_true(exact > N - N / 1000);
    sk_hll_map_info info;
    sk_hll_map_get_info(m, &info);
    assert_int_equal(info.groups, N);
    size_t memory = info.memory;
    print_message("1M groups of 3 items: %zu bytes, %.1f per group\n", memory, (double)memory / N);
    assert_true(memory < (size_t)128 << 20);
    sk_hll_map_free(m);
}

/* A group's sketch turns dense sooner than a sketch of its own (at 512
 * nonzero registers at p = 14, against 2048), with the same registers: the
 * register code decides both. */
static void test_groups_turn_dense_sooner(void **state)
{
    sk_hll_map *m;
    sk_hll *ref;
    assert_int_equal(sk_hll_map_new(&m, 14), SK_OK);
    assert_int_equal(sk_hll_new(&ref, 14), SK_OK);
    uint64_t seed = 7;
    for (int i = 0; i < 1000; i++) {
        uint64_t hash = splitmix64(&seed);
        assert_true(sk_hll_map_add_hash(m, "k", 1, hash) >= 0);
        assert_true(sk_hll_add_hash(ref, hash) >= 0);
    }
    sk_hll *h;
    assert_int_equal(sk_hll_map_sketch(m, 0, &h), SK_OK);
    sk_hll_info in_map, alone;
    sk_hll_get_info(h, &in_map);
    sk_hll_get_info(ref, &alone);
    assert_int_equal(in_map.encoding, SK_HLL_DENSE);
    assert_int_equal(alone.encoding, SK_HLL_SPARSE);
    assert_group_is(m, 0, ref);
    sk_hll_free(h);
    sk_hll_free(ref);
    sk_hll_map_free(m);
}

static void test_merge(void **state)
{
    sk_hll_map *a, *b;
    assert_int_equal(sk_hll_map_new(&a, 12), SK_OK);
    assert_int_equal(sk_hll_map_new(&b, 12), SK_OK);
    sk_hll *ra[GROUPS] = {0}, *rb[GROUPS] = {0};
    build(a, ra, 12, 2);
    build(b, rb, 12, 3);
    /* b also has groups that a has not. */
    assert_int_equal(sk_hll_map_add(b, "only-b", 6, "x", 1), 1);
    assert_int_equal(sk_hll_map_merge(a, b), SK_OK);
    assert_int_equal(sk_hll_map_merge(a, a), SK_OK);
    assert_int_equal(sk_hll_map_size(a), GROUPS + 1);
    for (unsigned g = 0; g < GROUPS; g++) {
        assert_int_equal(sk_hll_merge(ra[g], rb[g]), SK_OK);
        assert_group_is(a, g, ra[g]);
        sk_hll_free(ra[g]);
        sk_hll_free(rb[g]);
    }
    assert_int_equal(sk_hll_map_find(a, "only-b", 6), GROUPS);
    /* Sketches merge in, folded from a higher precision; a lower one cannot. */
    sk_hll *h, *lower;
    assert_int_equal(sk_hll_new(&h, 16), SK_OK);
    assert_int_equal(sk_hll_new(&lower, 10), SK_OK);
    for (uint64_t i = 0; i < 5000; i++)
        sk_hll_add(h, &i, sizeof i);
    assert_int_equal(sk_hll_map_merge_sketch(a, "fresh", 5, lower), SK_EINCOMPAT);
    assert_int_equal(sk_hll_map_merge_sketch(a, "fresh", 5, h), SK_OK);
    assert_int_equal(sk_hll_fold(h, 12), SK_OK);
    assert_group_is(a, sk_hll_map_find(a, "fresh", 5), h);
    sk_hll_map *c;
    assert_int_equal(sk_hll_map_new(&c, 14), SK_OK);
    assert_int_equal(sk_hll_map_merge(a, c), SK_EINCOMPAT);
    sk_hll_free(h);
    sk_hll_free(lower);
    sk_hll_map_free(a);
    sk_hll_map_free(b);
    sk_hll_map_free(c);
}

/* A batch adds exactly what single adds add, whatever the batch sizes. */
static void test_batch_is_single_adds(void **state)
{
    enum { N = 200000 };
    uint32_t *groups = malloc(N * sizeof *groups);
    uint64_t *items = malloc(N * sizeof *items);
    const void **keys = malloc(N * sizeof *keys), **item_ptrs = malloc(N * sizeof *item_ptrs);
    size_t *key_lens = malloc(N * sizeof *key_lens), *item_lens = malloc(N * sizeof *item_lens);
    assert_true(groups && items && keys && item_ptrs && key_lens && item_lens);
    uint64_t s = 9;
    for (size_t i = 0; i < N; i++) {
        uint64_t r = splitmix64(&s);
        groups[i] = (uint32_t)(r % 7 == 0 ? r % 5 : r % 20000); /* a few large groups */
        items[i] = splitmix64(&s) % 50000;
        keys[i] = &groups[i];
        key_lens[i] = 1 + i % 4; /* keys of 1 to 4 bytes */
        item_ptrs[i] = &items[i];
        item_lens[i] = sizeof items[i];
    }
    sk_hll_map *a, *b;
    assert_int_equal(sk_hll_map_new(&a, 14), SK_OK);
    assert_int_equal(sk_hll_map_new(&b, 14), SK_OK);
    for (size_t i = 0; i < N; i++)
        assert_true(sk_hll_map_add(a, keys[i], key_lens[i], item_ptrs[i], item_lens[i]) >= 0);
    for (size_t done = 0, step = 1; done < N; done += step, step = step * 3 % 1000 + 1) {
        size_t n = N - done < step ? N - done : step;
        assert_int_equal(sk_hll_map_add_batch(b, keys + done, key_lens + done, item_ptrs + done,
                                              item_lens + done, n),
                         SK_OK);
    }
    assert_int_equal(sk_hll_map_add_batch(b, NULL, NULL, NULL, NULL, 0), SK_OK);
    assert_same_map(a, b);
    /* By hash: the batch of the items' sk_hll_hash, in batches of 999. */
    uint64_t *hashes = malloc(N * sizeof *hashes);
    assert_non_null(hashes);
    for (size_t i = 0; i < N; i++)
        hashes[i] = sk_hll_hash(item_ptrs[i], item_lens[i]);
    sk_hll_map *c;
    assert_int_equal(sk_hll_map_new(&c, 14), SK_OK);
    for (size_t done = 0; done < N; done += 999)
        assert_int_equal(sk_hll_map_add_hash_batch(c, keys + done, key_lens + done,
                                                   hashes + done, N - done < 999 ? N - done : 999),
                         SK_OK);
    assert_int_equal(sk_hll_map_add_hash_batch(c, keys, key_lens, NULL, 1), SK_EINVAL);
    assert_same_map(a, c);
    free(hashes);
    sk_hll_map_free(a);
    sk_hll_map_free(b);
    sk_hll_map_free(c);
    free(groups);
    free(items);
    free(keys);
    free(item_ptrs);
    free(key_lens);
    free(item_lens);
}

static uint8_t *serialized(const sk_hll_map *m, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_hll_map_serialized_size(m, &size), SK_OK);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(sk_hll_map_serialize(m, buf, (size_t)size - 1, len), SK_ENOSPACE);
    assert_int_equal(sk_hll_map_serialize(m, buf, (size_t)size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* Bytes, files and back: the same groups in the same order, each the same
 * sketch; every truncation and every flipped byte is refused. */
static void test_bytes_and_files(void **state)
{
    sk_hll_map *m;
    assert_int_equal(sk_hll_map_new(&m, 10), SK_OK);
    sk_hll *refs[GROUPS] = {0};
    build(m, refs, 10, 4);
    assert_int_equal(sk_hll_map_add(m, "", 0, "empty key", 9), 1);
    size_t len;
    uint8_t *buf = serialized(m, &len);
    assert_memory_equal(buf, SK_HG_MAGIC, 4);
    assert_int_equal(buf[SK_HG_OFF_VERSION], SK_HG_VERSION);
    assert_int_equal(buf[SK_HG_OFF_PRECISION], 10);
    assert_int_equal(sk_load_le64(buf + SK_HG_OFF_GROUPS), GROUPS + 1);
    sk_hll_map *back;
    assert_int_equal(sk_hll_map_deserialize(&back, buf, len, NULL), SK_OK);
    char path[] = "/tmp/test_hll_map_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sk_hll_map_save(m, path), SK_OK);
    sk_hll_map *loaded;
    assert_int_equal(sk_hll_map_open(&loaded, path, NULL), SK_OK);
    unlink(path);
    for (sk_hll_map *x = back; x != NULL; x = x == back ? loaded : NULL) {
        assert_int_equal(sk_hll_map_size(x), GROUPS + 1);
        for (unsigned g = 0; g < GROUPS; g++)
            assert_group_is(x, g, refs[g]);
        size_t len2;
        uint8_t *again = serialized(x, &len2);
        assert_int_equal(len2, len);
        assert_memory_equal(again, buf, len);
        free(again);
    }
    for (unsigned g = 0; g < GROUPS; g++)
        sk_hll_free(refs[g]);
    sk_hll_map_free(back);
    sk_hll_map_free(loaded);
    /* Truncations, and every byte flipped, in a smaller map. */
    sk_hll_map *small;
    assert_int_equal(sk_hll_map_new(&small, 12), SK_OK);
    for (uint64_t i = 0; i < 40; i++) {
        uint32_t g = (uint32_t)(i % 3);
        sk_hll_map_add(small, &g, sizeof g, &i, sizeof i);
    }
    free(buf);
    buf = serialized(small, &len);
    for (size_t cut = 0; cut < len; cut++) {
        sk_hll_map *x = (sk_hll_map *)&x;
        int rc = sk_hll_map_deserialize(&x, buf, cut, NULL);
        assert_true(rc < 0);
        assert_null(x);
    }
    for (size_t at = 0; at < len; at++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[at] ^= (uint8_t)(1u << bit);
            sk_hll_map *x;
            int rc = sk_hll_map_deserialize(&x, buf, len, NULL);
            if (rc == SK_OK)
                print_error("byte %zu bit %d flipped: accepted\n", at, bit);
            assert_true(rc < 0);
            buf[at] ^= (uint8_t)(1u << bit);
        }
    }
    assert_int_equal(sk_hll_map_deserialize(&back, buf, len, NULL), SK_OK);
    sk_hll_map_free(back);
    /* A version to come, with a valid checksum. */
    buf[SK_HG_OFF_VERSION] = 2;
    sk_store_le32(buf + SK_HG_OFF_CHECKSUM, XXH32(buf, SK_HG_OFF_CHECKSUM, 0));
    assert_int_equal(sk_hll_map_deserialize(&back, buf, len, NULL), SK_EVERSION);
    free(buf);
    /* The same key twice, checksums right: corrupt. */
    sk_hll_map *one;
    assert_int_equal(sk_hll_map_new(&one, 12), SK_OK);
    sk_hll_map_add(one, "k", 1, "x", 1);
    buf = serialized(one, &len);
    size_t rec = len - SK_HG_HEADER_SIZE - SK_HG_TRAILER_SIZE;
    uint8_t *twice = malloc(len + rec);
    assert_non_null(twice);
    memcpy(twice, buf, SK_HG_HEADER_SIZE + rec);
    memcpy(twice + SK_HG_HEADER_SIZE + rec, buf + SK_HG_HEADER_SIZE, rec);
    sk_store_le64(twice + SK_HG_OFF_GROUPS, 2);
    sk_store_le32(twice + SK_HG_OFF_CHECKSUM, XXH32(twice, SK_HG_OFF_CHECKSUM, 0));
    sk_store_le64(twice + SK_HG_HEADER_SIZE + 2 * rec,
                  XXH3_64bits(twice + SK_HG_HEADER_SIZE, 2 * rec));
    assert_int_equal(sk_hll_map_deserialize(&back, twice, len + rec, NULL), SK_ECORRUPT);
    assert_int_equal(sk_hll_map_deserialize(&back, "SKHL", 4, NULL), SK_EFORMAT);
    assert_int_equal(sk_hll_map_open(&back, "/nonexistent/groups", NULL), SK_EIO);
    free(twice);
    free(buf);
    sk_hll_map_free(one);
    sk_hll_map_free(small);
    sk_hll_map_free(m);
}

/* A copy is an equal map that changes apart from its source; a cleared map
 * has no groups, keeps its precision and takes new ones. */
static void test_copy_clear_and_options(void **state)
{
    sk_hll_map *m, *copy;
    assert_int_equal(sk_hll_map_create(&m, &(sk_hll_map_options){0}), SK_OK);
    sk_hll_map_info info;
    sk_hll_map_get_info(m, &info);
    assert_int_equal(info.precision, SK_HLL_DEFAULT_PRECISION); /* zeroed: the defaults */
    sk_hll *refs[GROUPS] = {0};
    build(m, refs, SK_HLL_DEFAULT_PRECISION, 5);
    assert_int_equal(sk_hll_map_copy(&copy, m), SK_OK);
    assert_same_map(m, copy);
    size_t la, lb;
    uint8_t *x = serialized(m, &la), *y = serialized(copy, &lb);
    assert_same_bytes_free(x, la, y, lb);

    assert_int_equal(sk_hll_map_add(copy, "group-0", 7, "new", 3), 1);
    assert_int_equal(sk_hll_map_add(copy, "only in the copy", 16, "x", 1), 1);
    assert_int_equal(sk_hll_map_size(copy), sk_hll_map_size(m) + 1);
    assert_group_is(m, sk_hll_map_find(m, "group-0", 7), refs[0]); /* untouched */

    assert_int_equal(sk_hll_map_clear(m), SK_OK);
    sk_hll_map_get_info(m, &info);
    assert_int_equal(info.groups, 0);
    assert_int_equal(info.precision, SK_HLL_DEFAULT_PRECISION);
    assert_int_equal(sk_hll_map_find(m, "group-0", 7), -1);
    assert_int_equal(sk_hll_map_add(m, "group-0", 7, "new", 3), 1);
    assert_int_equal(sk_hll_map_find(m, "group-0", 7), 0);
    assert_int_equal(sk_hll_map_copy(NULL, m), SK_EINVAL);
    assert_int_equal(sk_hll_map_clear(NULL), SK_EINVAL);
    for (unsigned g = 0; g < GROUPS; g++)
        sk_hll_free(refs[g]);
    sk_hll_map_free(m);
    sk_hll_map_free(copy);
}

static void test_bad_arguments(void **state)
{
    sk_hll_map *m;
    assert_int_equal(sk_hll_map_new(&m, 3), SK_EINVAL);
    assert_null(m);
    assert_int_equal(sk_hll_map_new(&m, 19), SK_EINVAL);
    assert_int_equal(sk_hll_map_new(NULL, 14), SK_EINVAL);
    assert_int_equal(sk_hll_map_create(&m, NULL), SK_EINVAL);
    assert_int_equal(sk_hll_map_create(&m, &(sk_hll_map_options){.precision = 19}), SK_EINVAL);
    assert_int_equal(sk_hll_map_new(&m, 14), SK_OK);
    char *big = calloc(SK_HLL_MAP_MAX_KEY + 1, 1);
    assert_non_null(big);
    assert_int_equal(sk_hll_map_add(m, big, SK_HLL_MAP_MAX_KEY + 1, "x", 1), SK_EINVAL);
    assert_int_equal(sk_hll_map_add(m, big, SK_HLL_MAP_MAX_KEY, "x", 1), 1);
    assert_int_equal(sk_hll_map_add(m, "", 0, "x", 1), 1); /* the empty key is a key */
    assert_int_equal(sk_hll_map_add(m, NULL, 3, "x", 1), SK_EINVAL);
    assert_int_equal(sk_hll_map_size(m), 2);
    sk_hll_map_entry e;
    assert_int_equal(sk_hll_map_get(m, 2, &e), SK_EINVAL);
    sk_hll *h;
    assert_int_equal(sk_hll_map_sketch(m, 2, &h), SK_EINVAL);
    free(big);
    sk_hll_map_free(m);
    sk_hll_map_free(NULL);
}

/* An allocator that fails call number fail_at and every one after. */
struct failing {
    long calls, fail_at;
    size_t live;
};

static void *failing_alloc(void *opaque, size_t size)
{
    struct failing *f = opaque;
    if (++f->calls >= f->fail_at)
        return NULL;
    f->live += size;
    return malloc(size);
}

static void failing_free(void *opaque, void *ptr, size_t size)
{
    struct failing *f = opaque;
    f->live -= size;
    free(ptr);
}

static void test_out_of_memory(void **state)
{
    for (long fail_at = 1; fail_at < 400; fail_at += 7) {
        struct failing f = {0, fail_at, 0};
        sk_allocator a = {failing_alloc, failing_free, &f, 0};
        sk_hll_map *m;
        if (sk_hll_map_create(&m, &(sk_hll_map_options){.precision = 12, .allocator = &a}) != SK_OK) {
            assert_int_equal(f.live, 0);
            continue;
        }
        sk_hll *refs[64] = {0};
        for (unsigned g = 0; g < 64; g++)
            assert_int_equal(sk_hll_new(&refs[g], 12), SK_OK);
        int failed = 0;
        for (uint64_t i = 0; i < 20000 && !failed; i++) {
            uint32_t g = (uint32_t)(i * 7 % 64);
            uint64_t item = i;
            int rc = sk_hll_map_add(m, &g, sizeof g, &item, sizeof item);
            if (rc < 0) {
                assert_int_equal(rc, SK_ENOMEM);
                failed = 1;
            } else {
                sk_hll_add(refs[g], &item, sizeof item);
            }
        }
        /* Everything added before the failure is there, and nothing else. */
        for (unsigned g = 0; g < 64; g++) {
            int64_t i = sk_hll_map_find(m, &g, sizeof g);
            sk_hll_estimate want;
            sk_hll_estimate_with_bounds(refs[g], &want);
            if (i < 0) {
                assert_int_equal(want.count, 0);
            } else {
                sk_hll_map_entry e;
                sk_hll_map_get(m, (size_t)i, &e);
                assert_int_equal(e.estimate.count, want.count);
            }
            sk_hll_free(refs[g]);
        }
        sk_hll_map_free(m);
        assert_int_equal(f.live, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_are_their_sketches),
        cmocka_unit_test(test_small_groups_are_small),
        cmocka_unit_test(test_groups_turn_dense_sooner),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_batch_is_single_adds),
        cmocka_unit_test(test_bytes_and_files),
        cmocka_unit_test(test_copy_clear_and_options),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
