/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_split.c: the split layout against its definition in
 * docs/bloom-format.md, with cmocka.
 *
 * The bits an item sets are computed here from the documented formula
 * alone (the salts regenerated from splitmix64, the lanes and the byte and
 * bit order as written), and compared with the bytes of saved files, after
 * single adds, batches and adds by hash; the vector masks of the kernel
 * are compared with its scalar reference over a million hashes; and the
 * format's rules for the layout (version 3, lane counts) are enforced on
 * reading. Whichever probe the loader chose (AVX2 or the baseline, which
 * -DSKETCH_PORTABLE=ON builds alone) must give the same bytes.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "bloom/bloom_probe.h"
#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

/* The salts as the format defines them. */
static uint32_t salts[16];

static int setup(void **state)
{
    uint64_t s = 0;
    for (int i = 0; i < 16; i++)
        salts[i] = (uint32_t)splitmix64(&s) | 1;
    return setup_dir(state);
}

/* Sets, in the bytes of an array of `lines` lines, the bits the format
 * gives hash h in a split filter of k lanes. */
static void set_documented_bits(uint8_t *array, uint64_t lines, unsigned k, sk_bloom_hash h)
{
    uint64_t line = (uint64_t)(((u128)h.low * lines) >> 64);
    unsigned width = 512 / k, width_log2 = k == 8 ? 6 : 5;
    for (unsigned i = 0; i < k; i++) {
        uint32_t x = i < k / 2 ? (uint32_t)h.high : (uint32_t)(h.high >> 32);
        unsigned pos = (uint32_t)(x * salts[i]) >> (32 - width_log2);
        unsigned bit = i * width + pos;
        array[line * 64 + bit / 8] |= (uint8_t)(1u << (bit % 8));
    }
}

/* The saved bytes of f's one bit array. */
static uint8_t *saved_array(const sk_bloom *f, uint64_t *bytes)
{
    char path[PATH_MAX];
    path_of(path, "array.bloom");
    assert_int_equal(sk_bloom_save(f, path), SK_OK);
    size_t len;
    uint8_t *file = read_whole(path, &len);
    unlink(path);
    const uint8_t *e = file + SK_BF_HEADER_SIZE;
    uint64_t offset = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY);
    *bytes = sk_load_le64(e + SK_BF_LAYER_OFF_BITS) / 8;
    assert_true(offset + *bytes <= len);
    uint8_t *array = malloc((size_t)*bytes);
    assert_non_null(array);
    memcpy(array, file + offset, (size_t)*bytes);
    free(file);
    return array;
}

/* Every way of adding sets exactly the documented bits: single adds of
 * items, adds by hash, and batches, with any number of writers and with
 * one. */
static void test_bits_are_where_the_format_puts_them(void **state)
{
    enum { LINES = 61, ITEMS = 700 };
    for (unsigned k = 8; k <= 16; k += 8) {
        for (int way = 0; way < 4; way++) {
            sk_bloom *f;
            sk_bloom_options o = {.layout = SK_BLOOM_SPLIT, .bits = LINES * 512, .hashes = k};
            assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
            sk_bloom_set_concurrent_writers(f, way != 3);
            uint8_t *expected = calloc(LINES, 64);
            assert_non_null(expected);
            uint64_t keys[ITEMS];
            const void *items[ITEMS];
            size_t lens[ITEMS];
            sk_bloom_hash hashes[ITEMS];
            uint64_t seed = k * 10 + (unsigned)way;
            for (int i = 0; i < ITEMS; i++) {
                keys[i] = splitmix64(&seed);
                items[i] = &keys[i];
                lens[i] = 1 + (size_t)i % 8;
                hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
                XXH128_hash_t h = XXH3_128bits(items[i], lens[i]);
                assert_true(hashes[i].low == h.low64 && hashes[i].high == h.high64);
                set_documented_bits(expected, LINES, k, hashes[i]);
            }
            switch (way) {
            case 0:
                for (int i = 0; i < ITEMS; i++)
                    assert_true(sk_bloom_add(f, items[i], lens[i]) >= 0);
                break;
            case 1:
                for (int i = 0; i < ITEMS; i++)
                    assert_true(sk_bloom_add_hash(f, hashes[i]) >= 0);
                break;
            case 2:
                assert_int_equal(sk_bloom_add_hash_batch(f, hashes, ITEMS, NULL), SK_OK);
                break;
            default:
                assert_int_equal(sk_bloom_add_batch(f, items, lens, ITEMS, NULL), SK_OK);
                break;
            }
            uint64_t bytes;
            uint8_t *array = saved_array(f, &bytes);
            assert_int_equal(bytes, LINES * 64);
            assert_memory_equal(array, expected, LINES * 64);
            for (int i = 0; i < ITEMS; i++)
                assert_int_equal(sk_bloom_contains(f, items[i], lens[i]), 1);
            free(array);
            free(expected);
            sk_bloom_free(f);
        }
    }
}

/* An item is found only when all k of its bits are set: clearing any one
 * of them, in a copy of the file, makes it absent. */
static void test_every_bit_counts(void **state)
{
    for (unsigned k = 8; k <= 16; k += 8) {
        sk_bloom *f;
        sk_bloom_options o = {.layout = SK_BLOOM_SPLIT, .bits = 512, .hashes = k};
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        sk_bloom_hash h = sk_bloom_hash_u64(k);
        assert_int_equal(sk_bloom_add_hash(f, h), 1);
        assert_int_equal(sk_bloom_add_hash(f, h), 0);
        char path[PATH_MAX], copy[PATH_MAX];
        path_of(path, "one.bloom");
        path_of(copy, "one-less.bloom");
        assert_int_equal(sk_bloom_save(f, path), SK_OK);
        size_t len;
        uint8_t *file = read_whole(path, &len);
        uint64_t offset = sk_load_le64(file + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_ARRAY);
        unsigned set = 0;
        for (unsigned bit = 0; bit < 512; bit++) {
            uint8_t *byte = file + offset + bit / 8, mask = (uint8_t)(1u << (bit % 8));
            if (!(*byte & mask))
                continue;
            set++;
            *byte &= (uint8_t)~mask;
            write_whole(copy, file, len);
            sk_bloom *g;
            assert_int_equal(sk_bloom_open(&g, copy, 0, NULL), SK_OK);
            assert_int_equal(sk_bloom_contains_hash(g, h), 0);
            uint8_t found;
            sk_bloom_contains_hash_batch(g, &h, 1, &found);
            assert_int_equal(found, 0);
            sk_bloom_free(g);
            *byte |= mask;
        }
        assert_int_equal(set, k); /* one per lane, and lanes do not share bits */
        free(file);
        unlink(path);
        unlink(copy);
        sk_bloom_free(f);
    }
}

/* The vector masks equal the scalar reference, which has one bit in each
 * lane. */
static void test_vector_masks_match_the_reference(void **state)
{
    uint64_t seed = 3;
    for (int i = 0; i < 1000000; i++) {
        uint64_t h2 = splitmix64(&seed);
        for (unsigned k = 8; k <= 16; k += 8) {
            uint64_t ref[SPLIT_LINE_WORDS];
            split_mask_words(h2, k, ref);
            unsigned width = 512 / k;
            for (unsigned lane = 0; lane < k; lane++) {
                unsigned in_lane = 0;
                for (unsigned b = lane * width; b < (lane + 1) * width; b++)
                    in_lane += (unsigned)(ref[b / 64] >> (b % 64)) & 1;
                assert_int_equal(in_lane, 1);
            }
#ifdef SPLIT_VECTOR
            struct split_line m = split_mask(h2, k);
            uint64_t got[SPLIT_LINE_WORDS];
            memcpy(got, &m.lo, sizeof m.lo);
            memcpy(got + 4, &m.hi, sizeof m.hi);
            assert_memory_equal(got, ref, sizeof ref);
#endif
        }
    }
}

/* Sizing: 8 or 16 lanes, whichever needs fewer bits; the rate met at
 * capacity, and not by one block fewer with either lane count. */
static void test_sizing(void **state)
{
    static const double rates[] = {0.3, 0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-9};
    static const uint64_t counts[] = {1, 100, 54321, 10000000};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            sk_bloom_layout layout = SK_BLOOM_SPLIT;
            uint64_t m;
            unsigned k;
            assert_int_equal(sk_bloom_size_for(counts[c], rates[r], &layout, &m, &k), SK_OK);
            assert_int_equal(layout, SK_BLOOM_SPLIT);
            assert_true(k == 8 || k == 16);
            assert_int_equal(m % 512, 0);
            sk_bloom *f;
            sk_bloom_options o = {.layout = SK_BLOOM_SPLIT, .bits = m, .hashes = k};
            assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
            assert_true(sk_bloom_expected_fp_rate(f, counts[c]) <= rates[r]);
            sk_bloom_free(f);
            if (m == 512)
                continue;
            for (unsigned kk = 8; kk <= 16; kk += 8) {
                o = (sk_bloom_options){.layout = SK_BLOOM_SPLIT, .bits = m - 512, .hashes = kk};
                assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
                assert_true(sk_bloom_expected_fp_rate(f, counts[c]) > rates[r]);
                sk_bloom_free(f);
            }
        }
    }
    /* The figures the docs quote: bits per item at 1% and 0.1%. */
    sk_bloom_layout layout = SK_BLOOM_SPLIT;
    uint64_t m;
    unsigned k;
    assert_int_equal(sk_bloom_size_for(1000000, 0.01, &layout, &m, &k), SK_OK);
    assert_true(k == 8 && m > 10050000 && m < 10150000);
}

static void test_explicit_sizes(void **state)
{
    static const unsigned bad[] = {1, 7, 9, 15, 17, 32, 64};
    sk_bloom *f;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sk_bloom_options o = {.layout = SK_BLOOM_SPLIT, .bits = 4096, .hashes = bad[i]};
        assert_int_equal(sk_bloom_create(&f, &o), SK_EINVAL);
        assert_null(f);
    }
    sk_bloom_options o = {.layout = SK_BLOOM_SPLIT, .bits = 1000, .hashes = 16};
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    assert_int_equal(info.layout, SK_BLOOM_SPLIT);
    assert_int_equal(info.bits, 1024);
    assert_int_equal(info.hashes, 16);
    sk_bloom_free(f);
    /* Automatic choice takes split where it would take blocked and split
     * needs at most 5% more bits (test_bloom_auto.c checks the whole rule). */
    for (double p = 0.5; p > 1e-12; p /= 10) {
        sk_bloom_layout layout = SK_BLOOM_AUTO, blocked = SK_BLOOM_BLOCKED,
                        split = SK_BLOOM_SPLIT, classic = SK_BLOOM_CLASSIC;
        uint64_t m, mb, ms, mc;
        unsigned k, kb, ks, kc;
        assert_int_equal(sk_bloom_size_for(100000, p, &layout, &m, &k), SK_OK);
        assert_int_equal(sk_bloom_size_for(100000, p, &blocked, &mb, &kb), SK_OK);
        assert_int_equal(sk_bloom_size_for(100000, p, &split, &ms, &ks), SK_OK);
        assert_int_equal(sk_bloom_size_for(100000, p, &classic, &mc, &kc), SK_OK);
        assert_int_equal(layout == SK_BLOOM_SPLIT,
                         (double)mb <= 1.10 * (double)mc && (double)ms <= 1.05 * (double)mb);
    }
}

static int open_edited(const uint8_t *file, size_t len, size_t at, uint8_t value)
{
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, file, len);
    copy[at] = value;
    fix_checksum(copy);
    char path[PATH_MAX];
    path_of(path, "edited.bloom");
    write_whole(path, copy, len);
    free(copy);
    sk_bloom *f = NULL;
    int rc = sk_bloom_open(&f, path, 0, NULL);
    sk_bloom_free(f);
    unlink(path);
    return rc;
}

/* Split filters are version 3 in files and dumps, and only they: a reader
 * that knows versions 1 and 2 refuses them as of an unknown version rather
 * than read their bits as another layout's. */
static void test_format_version(void **state)
{
    sk_bloom *f, *b;
    assert_int_equal(sk_bloom_new(&f, 10000, 0.01, SK_BLOOM_SPLIT), SK_OK);
    assert_int_equal(sk_bloom_new(&b, 10000, 0.01, SK_BLOOM_BLOCKED), SK_OK);
    for (uint64_t key = 0; key < 10000; key++) {
        assert_true(sk_bloom_add(f, &key, sizeof key) >= 0);
        assert_true(sk_bloom_add(b, &key, sizeof key) >= 0);
    }
    char path[PATH_MAX], bpath[PATH_MAX];
    path_of(path, "split.bloom");
    path_of(bpath, "blocked.bloom");
    assert_int_equal(sk_bloom_save(f, path), SK_OK);
    assert_int_equal(sk_bloom_save(b, bpath), SK_OK);
    size_t len, blen;
    uint8_t *file = read_whole(path, &len), *bfile = read_whole(bpath, &blen);
    assert_int_equal(file[SK_BF_OFF_VERSION], SK_BF_VERSION_SPLIT);
    assert_int_equal(file[SK_BF_OFF_LAYOUT], SK_BF_LAYOUT_SPLIT);
    assert_int_equal(bfile[SK_BF_OFF_VERSION], SK_BF_VERSION_FILE);
    assert_int_equal(open_edited(file, len, SK_BF_OFF_VERSION, SK_BF_VERSION_FILE), SK_ECORRUPT);
    assert_int_equal(open_edited(file, len, SK_BF_OFF_VERSION, 4), SK_EVERSION);
    assert_int_equal(open_edited(file, len, SK_BF_OFF_LAYOUT, 3), SK_ECORRUPT);
    assert_int_equal(open_edited(file, len, SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_HASHES, 9),
                     SK_ECORRUPT);
    assert_int_equal(open_edited(bfile, blen, SK_BF_OFF_LAYOUT, SK_BF_LAYOUT_SPLIT), SK_ECORRUPT);
    assert_int_equal(open_edited(file, len, SK_BF_OFF_VERSION, SK_BF_VERSION_SPLIT), SK_OK);

    /* The dump: version 3 too, packed, and it restores to the same answers. */
    uint64_t size = sk_bloom_dump_size(f);
    uint8_t *dump = malloc((size_t)size);
    assert_non_null(dump);
    assert_int_equal(sk_bloom_dump_read(f, 0, dump, (size_t)size), SK_OK);
    assert_int_equal(dump[SK_BF_OFF_VERSION], SK_BF_VERSION_SPLIT);
    assert_int_equal(dump[SK_BF_OFF_PACKED], SK_BF_ARRAYS_PACKED);
    sk_bloom *g;
    size_t header_len;
    assert_int_equal(sk_bloom_restore_begin(&g, dump, (size_t)size, &header_len, NULL, 0), SK_OK);
    assert_int_equal(sk_bloom_restore_chunk(g, header_len, dump + header_len,
                                            (size_t)size - header_len),
                     SK_OK);
    assert_int_equal(sk_bloom_restore_finish(g), SK_OK);
    for (uint64_t key = 0; key < 20000; key++)
        assert_int_equal(sk_bloom_contains(g, &key, sizeof key),
                         sk_bloom_contains(f, &key, sizeof key));
    sk_bloom_free(g);
    free(dump);
    free(file);
    free(bfile);
    unlink(path);
    unlink(bpath);
    sk_bloom_free(f);
    sk_bloom_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits_are_where_the_format_puts_them),
        cmocka_unit_test(test_every_bit_counts),
        cmocka_unit_test(test_vector_masks_match_the_reference),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_explicit_sizes),
        cmocka_unit_test(test_format_version),
    };
    return cmocka_run_group_tests(tests, setup, teardown_dir);
}
