/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_file.c: unit tests of saving filters to files and opening
 * them, with cmocka: the bytes of a file as docs/bloom-format.md lays them
 * out, opened filters (read or mapped) kept apart from their files, and
 * filters of more than 2^32 bits.
 *
 * Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 *
 * The filters of more than 2^32 bits are mapped anonymous memory zeroed
 * lazily by the kernel; the test touches at most about 1.5 GB of it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

/* A layout's code in a file header (docs/bloom-format.md), which is not
 * its sk_bloom_layout value. */
static uint8_t format_layout(sk_bloom_layout layout)
{
    return layout == SK_BLOOM_BLOCKED ? SK_BF_LAYOUT_BLOCKED
           : layout == SK_BLOOM_SPLIT ? SK_BF_LAYOUT_SPLIT
                                      : SK_BF_LAYOUT_CLASSIC;
}

static void test_save_open_round_trip(void **state)
{
    for (int kind = 0; kind < 9; kind++) {
        sk_bloom *f;
        uint64_t n = 50000;
        switch (kind) {
        case 0: f = new_filter(n, 0.01, SK_BLOOM_CLASSIC); break;
        case 1: f = new_filter(n, 0.01, SK_BLOOM_BLOCKED); break;
        case 2: f = new_scalable(1000, 0.01, 2, SK_BLOOM_BLOCKED); break;
        case 3: f = new_scalable(500, 1e-4, 3, SK_BLOOM_CLASSIC); break;
        case 4: f = new_explicit(300007, 5, SK_BLOOM_CLASSIC); break; /* bits % 64 != 0 */
        case 5: f = new_explicit(300000, 9, SK_BLOOM_BLOCKED); break;
        case 6: f = new_filter(n, 0.01, SK_BLOOM_SPLIT); break;
        case 7: f = new_scalable(1000, 1e-4, 2, SK_BLOOM_SPLIT); break;
        default: f = new_filter(10, 0.01, SK_BLOOM_CLASSIC); n = 10; break; /* < 1 page */
        }
        add_range(f, 0, n);
        sk_bloom_info info = info_of(f);
        if (info.expansion != 0)
            assert_true(info.layers >= 5);
        char p[PATH_MAX];
        path_of(p, "round.bloom");
        save_ok(f, p);

        /* The file: arrays on 4096-byte boundaries, then the sums of their
         * chunks and the change marks, all clear. */
        size_t len;
        uint8_t *bytes = read_whole(p, &len);
        assert_memory_equal(bytes, "SKBF", 4);
        int split = info.layout == SK_BLOOM_SPLIT;
        assert_int_equal(bytes[4], split ? SK_BF_VERSION_SPLIT : SK_BF_VERSION_FILE);
        assert_int_equal(bytes[SK_BF_OFF_CHUNK_SHIFT], SK_BF_CHUNK_SHIFT);
        assert_int_equal(bytes[SK_BF_OFF_LAYOUT], format_layout(info.layout));
        assert_int_equal(sk_load_le32(bytes + SK_BF_OFF_LAYERS), info.layers);
        assert_int_equal(sk_load_le32(bytes + SK_BF_OFF_EXPANSION), info.expansion);
        uint64_t end = 0;
        for (unsigned i = 0; i < info.layers; i++) {
            const uint8_t *e = bytes + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * i;
            uint64_t off = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), words = (sk_load_le64(e) + 63) / 64;
            assert_int_equal(off % SK_BF_FILE_ALIGN, 0);
            assert_true(off >= (i == 0 ? SK_BF_HEADER_SIZE + (uint64_t)SK_BF_LAYER_SIZE * info.layers : end));
            assert_true(off < (i == 0 ? SK_BF_HEADER_SIZE + (uint64_t)SK_BF_LAYER_SIZE * info.layers : end) + SK_BF_FILE_ALIGN);
            assert_int_equal(sk_load_le64(e + SK_BF_LAYER_OFF_CHECKSUM), 0);
            end = off + words * 8;
        }
        const uint8_t *sum = bytes + end;
        uint64_t chunks = 0;
        for (unsigned i = 0; i < info.layers; i++) {
            const uint8_t *e = bytes + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * i;
            uint64_t off = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), size = (sk_load_le64(e) + 63) / 64 * 8;
            const uint64_t chunk = (uint64_t)1 << SK_BF_CHUNK_SHIFT;
            for (uint64_t at = 0; at < size; at += chunk, sum += SK_BF_SUM_SIZE, chunks++)
                assert_true(XXH3_64bits(bytes + off + at, size - at < chunk ? size - at : chunk) ==
                            sk_load_le64(sum));
        }
        for (uint64_t m = 0; m < (chunks + 63) / 64 * 8; m++)
            assert_int_equal(sum[m], 0);
        assert_int_equal((size_t)(sum - bytes) + (chunks + 63) / 64 * 8, len);
        free(bytes);

        for (unsigned flags = 0; flags <= SK_BLOOM_VERIFY; flags++) {
            sk_bloom *g = open_ok(p, flags);
            assert_same_info(f, g);
            assert_same_answers(f, g, n, 100000);
            /* Saving the opened filter gives the same file. */
            char q[PATH_MAX];
            path_of(q, "round2.bloom");
            save_ok(g, q);
            assert_same_file(p, q);
            unlink(q);
            sk_bloom_free(g);
        }
        unlink(p);
        sk_bloom_free(f);
    }
}

static void test_save_keeps_mode_and_replaces(void **state)
{
    char p[PATH_MAX];
    path_of(p, "mode.bloom");
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_AUTO);
    save_ok(f, p);
    assert_int_equal(chmod(p, 0640), 0);
    add_range(f, 0, 10);
    save_ok(f, p);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    sk_bloom *g = open_ok(p, SK_BLOOM_VERIFY);
    assert_all_found(g, 0, 10);
    sk_bloom_free(g);
    /* A relative path with no directory works too. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    save_ok(f, "relative.bloom");
    g = open_ok("relative.bloom", 0);
    assert_all_found(g, 0, 10);
    sk_bloom_free(g);
    unlink("relative.bloom");
    assert_int_equal(chdir(cwd), 0);
    unlink(p);
    sk_bloom_free(f);
}

/* A filter opened without SK_BLOOM_MAP is read into memory: the file cut
 * short or rewritten in place afterwards (cp over it, rsync --inplace)
 * changes nothing in it, and its save writes what it holds. Mapped, it
 * answers the same while the file stays as it was. */
static void test_opened_filter_is_its_own(void **state)
{
    sk_bloom *f = new_scalable(2000, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(f, 0, 10000);
    char a[PATH_MAX], b[PATH_MAX];
    path_of(a, "own.bloom");
    path_of(b, "own-saved.bloom");
    save_ok(f, a);
    sk_bloom *mapped = open_ok(a, SK_BLOOM_MAP | SK_BLOOM_VERIFY);
    assert_all_found(mapped, 0, 10000);
    assert_same_answers(f, mapped, 10000, 20000);
    sk_bloom_free(mapped);

    sk_bloom *g = open_ok(a, 0);
    FILE *out = fopen(a, "r+b");
    assert_non_null(out);
    char junk[8192];
    memset(junk, 0x5a, sizeof junk);
    assert_int_equal(fwrite(junk, 1, sizeof junk, out), sizeof junk);
    fclose(out);
    assert_int_equal(truncate(a, 4096), 0);
    assert_all_found(g, 0, 10000);
    assert_same_answers(f, g, 10000, 20000);
    save_ok(g, b);
    sk_bloom *h = open_ok(b, SK_BLOOM_VERIFY);
    assert_same_info(f, h);
    assert_same_answers(f, h, 10000, 20000);
    sk_bloom_free(h);
    sk_bloom_free(g);
    sk_bloom_free(f);
    assert_int_equal(sk_bloom_open(&g, a, 8u, NULL), SK_EINVAL);
}

/* A filter opened from a file, changed, saved elsewhere: the new file has the
 * changes, the old one is byte for byte as it was. */
static void test_opened_filter_changes_stay_private(void **state)
{
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *f = kind == 0   ? new_filter(20000, 0.01, SK_BLOOM_BLOCKED)
                      : kind == 1 ? new_filter(20000, 0.01, SK_BLOOM_CLASSIC)
                                  : new_scalable(2000, 0.01, 2, SK_BLOOM_BLOCKED);
        add_range(f, 0, 5000);
        char a[PATH_MAX], b[PATH_MAX];
        path_of(a, "orig.bloom");
        path_of(b, "changed.bloom");
        save_ok(f, a);
        size_t la;
        uint8_t *before = read_whole(a, &la);

        sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
        uint64_t changed = add_range(g, 5000, 20000);
        assert_true(changed > 14000);
        if (kind == 2)
            assert_true(info_of(g).layers > info_of(f).layers); /* grown in memory */
        sk_bloom_info ginfo = info_of(g);
        save_ok(g, b);
        /* The original file, and a filter mapping it, are unchanged. */
        size_t la2;
        uint8_t *after = read_whole(a, &la2);
        assert_same_bytes_free(before, la, after, la2);
        sk_bloom *orig = open_ok(a, SK_BLOOM_VERIFY);
        assert_same_info(f, orig);
        assert_true(count_found(orig, 5000, 15000) < 15000 / 10);
        sk_bloom_free(orig);

        sk_bloom *h = open_ok(b, SK_BLOOM_VERIFY);
        assert_all_found(h, 0, 20000);
        sk_bloom_info hinfo = info_of(h);
        assert_int_equal(hinfo.count, ginfo.count);
        assert_int_equal(hinfo.layers, ginfo.layers);
        assert_int_equal(hinfo.bits, ginfo.bits);
        assert_same_answers(g, h, 20000, 20000);
        /* Clearing the mapped copy does not touch the file either. */
        assert_int_equal(sk_bloom_clear(h), SK_OK);
        assert_int_equal(count_found(h, 0, 1000), 0);
        sk_bloom_free(h);
        sk_bloom *h2 = open_ok(b, SK_BLOOM_VERIFY);
        assert_all_found(h2, 0, 20000);
        sk_bloom_free(h2);
        /* Saving over the file it maps. */
        add_range(g, 20000, 21000);
        save_ok(g, a);
        sk_bloom_free(g);
        g = open_ok(a, SK_BLOOM_VERIFY);
        assert_all_found(g, 0, 21000);
        sk_bloom_free(g);
        unlink(a);
        unlink(b);
        sk_bloom_free(f);
    }
}

/* The positions of an item's bits, as docs/bloom-format.md defines them. */
__extension__ typedef unsigned __int128 u128;

static uint64_t reduce64(uint64_t x, uint64_t n)
{
    return (uint64_t)(((u128)x * n) >> 64);
}

static unsigned format_positions(sk_bloom_layout layout, uint64_t bits, unsigned k,
                                 uint64_t key, uint64_t *pos)
{
    XXH128_hash_t h = XXH3_128bits(&key, sizeof key);
    if (layout == SK_BLOOM_CLASSIC) {
        uint64_t x = h.low64, step = h.high64 | 1;
        for (unsigned i = 0; i < k; i++) {
            pos[i] = reduce64(x, bits);
            x = x * UINT64_C(0x5851f42d4c957f2d) + step;
        }
    } else {
        uint64_t block = reduce64(h.low64, bits / 512), x = h.high64;
        for (unsigned i = 0; i < k; i++) {
            pos[i] = block * 512 + (x >> 55);
            x = x * UINT64_C(0x5851f42d4c957f2d) + UINT64_C(0x14057b7ef767814f);
        }
    }
    return k;
}

/* Filters of more than 2^32 bits: no false negatives, a sane false-positive
 * count, and bits past 2^32 in use. The last is shown twice over: the
 * positions of docs/bloom-format.md reach past 2^32 for most items, and a
 * file holding exactly those bits (written sparse, by this test) is read by
 * sk_bloom_contains as holding those items, so contains reads the bits the
 * format defines; the filter built by sk_bloom_add has no false negative, so
 * add sets all of them. */
static void test_filters_above_2_to_32_bits(void **state)
{
    static const struct {
        sk_bloom_layout layout;
        uint64_t bits;
        unsigned k;
    } cases[] = {{SK_BLOOM_CLASSIC, (UINT64_C(1) << 33) + 123, 4},
                 {SK_BLOOM_BLOCKED, UINT64_C(1) << 33, 6}};
    const uint64_t n = 100000, checked = 2000;
    for (size_t c = 0; c < 2; c++) {
        sk_bloom *f = new_explicit(cases[c].bits, cases[c].k, cases[c].layout);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.bits, cases[c].bits);
        assert_int_equal(info.array_bytes, (cases[c].bits + 63) / 64 * 8);
        assert_int_equal(add_range(f, 0, n), n); /* no collisions at this size */
        assert_int_equal(info_of(f).count, n);
        assert_all_found(f, 0, n);
        uint64_t fp = count_found(f, ABSENT_BIT, n);
        double expected = sk_bloom_expected_fp_rate(f, n) * (double)n;
        assert_true(expected < 1e-6);
        assert_true(fp <= 2);
        double est = (double)sk_bloom_estimate_items(f);
        assert_true(fabs(est - (double)n) < 0.01 * n);

        /* The format's positions of the first items. */
        uint64_t pos[64], high = 0, total = 0, all_high = 0;
        for (uint64_t key = 0; key < n; key++) {
            unsigned k = format_positions(cases[c].layout, cases[c].bits, cases[c].k, key, pos);
            unsigned h = 0;
            for (unsigned i = 0; i < k; i++)
                h += pos[i] >= (UINT64_C(1) << 32);
            high += h;
            total += k;
            all_high += h == k;
        }
        assert_true(high > total * 2 / 5);
        assert_true(all_high > n / 20);

        /* A sparse file with exactly the format's bits of `checked` items. */
        uint64_t words = (cases[c].bits + 63) / 64;
        uint8_t head[SK_BF_FILE_ALIGN] = {0};
        memcpy(head, "SKBF", 4);
        head[4] = 1;
        head[SK_BF_OFF_LAYOUT] = format_layout(cases[c].layout);
        head[6] = 1;
        sk_store_le32(head + SK_BF_OFF_LAYERS, 1);
        sk_store_le64(head + SK_BF_HEADER_SIZE, cases[c].bits);
        sk_store_le32(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_HASHES, cases[c].k);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_CAPACITY, info.capacity);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_COUNT, checked);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_ARRAY, SK_BF_FILE_ALIGN);
        fix_checksum(head);
        char p[PATH_MAX];
        path_of(p, "huge.bloom");
        int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, head, sizeof head, 0), (ssize_t)sizeof head);
        assert_int_equal(ftruncate(fd, (off_t)(SK_BF_FILE_ALIGN + words * 8)), 0);
        uint64_t *map = mmap(NULL, (size_t)words * 8, PROT_READ | PROT_WRITE, MAP_SHARED,
                             fd, SK_BF_FILE_ALIGN);
        assert_true(map != MAP_FAILED);
        for (uint64_t key = 0; key < checked; key++) {
            unsigned k = format_positions(cases[c].layout, cases[c].bits, cases[c].k, key, pos);
            for (unsigned i = 0; i < k; i++)
                map[pos[i] / 64] |= UINT64_C(1) << (pos[i] % 64); /* little-endian host */
        }
        assert_int_equal(munmap(map, (size_t)words * 8), 0);
        assert_int_equal(close(fd), 0);
        sk_bloom *g = open_ok(p, 0);
        assert_int_equal(info_of(g).bits, cases[c].bits);
        assert_all_found(g, 0, checked);
        assert_true(count_found(g, checked, checked) <= 1);
        assert_true(count_found(g, ABSENT_BIT, checked) <= 1);
        sk_bloom_free(g);
        unlink(p);
        sk_bloom_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_open_round_trip),
        cmocka_unit_test(test_save_keeps_mode_and_replaces),
        cmocka_unit_test(test_opened_filter_changes_stay_private),
        cmocka_unit_test(test_opened_filter_is_its_own),
        cmocka_unit_test(test_filters_above_2_to_32_bits),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
