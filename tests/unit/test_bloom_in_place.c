/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_in_place.c: filter files opened with SK_BLOOM_IN_PLACE. Adds,
 * merges and clears in place give the file a filter written whole would
 * be, byte for byte; adds not yet synced leave their chunks marked, which
 * opens report and the next sync re-sums; a damaged chunk is refused before
 * it changes and stays reported; a scalable filter that grows is written
 * whole; and the calls refuse what they cannot do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

/* A fixed filter of this layout for 300,000 items (several chunks), saved
 * empty at path; the filter is returned. */
static sk_bloom *saved_empty(const char *path, sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_new(&f, 300000, 0.01, layout), SK_OK);
    assert_int_equal(sk_bloom_save(f, path), SK_OK);
    return f;
}

static void test_adds_in_place_write_what_a_save_writes(void **state)
{
    static const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t layout_i = 0; layout_i < 3; layout_i++) {
        sk_bloom_layout layout = layouts[layout_i];
        char a[PATH_MAX], b[PATH_MAX];
        path_of(a, "in-place.bloom");
        path_of(b, "whole.bloom");
        sk_bloom *whole = saved_empty(a, (sk_bloom_layout)layout);
        sk_bloom *f = open_ok(a, SK_BLOOM_IN_PLACE);
        add_range(f, 0, 1000);
        add_range_batch(f, 1000, 50000);
        assert_int_equal(sk_bloom_sync(f), SK_OK);
        add_range(f, 50000, 50003); /* a second commit */
        assert_int_equal(sk_bloom_sync(f), SK_OK);
        sk_bloom_hash hashes[97];
        for (uint64_t key = 50003; key < 50100; key++)
            hashes[key - 50003] = sk_bloom_hash_bytes(&key, sizeof key);
        assert_int_equal(sk_bloom_add_hash_batch(f, hashes, 97, NULL), SK_OK);
        assert_true(sk_bloom_add_hash(f, sk_bloom_hash_u64(7)) >= 0);
        assert_int_equal(sk_bloom_sync(f), SK_OK);
        assert_all_found(f, 0, 50100);
        sk_bloom_free(f);
        add_range(whole, 0, 50100);
        assert_true(sk_bloom_add_hash(whole, sk_bloom_hash_u64(7)) >= 0);
        assert_int_equal(sk_bloom_save(whole, b), SK_OK);
        assert_same_file(a, b);
        sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
        assert_int_equal(info_of(g).interrupted_chunks, 0);
        assert_int_equal(info_of(g).count, info_of(whole).count);
        sk_bloom_free(g);
        sk_bloom_free(whole);
    }
}

static void test_adds_not_synced_leave_marks_that_the_next_sync_clears(void **state)
{
    char a[PATH_MAX];
    path_of(a, "unsynced.bloom");
    sk_bloom_free(saved_empty(a, SK_BLOOM_BLOCKED));
    sk_bloom *f = open_ok(a, SK_BLOOM_IN_PLACE);
    add_range(f, 0, 3);
    sk_bloom_free(f); /* as if the process had been killed here */

    /* Read, the file has the items, reports the chunks, and verifies: only
     * marked chunks differ from their sums. */
    for (unsigned flags = 0; flags <= SK_BLOOM_VERIFY; flags++) {
        sk_bloom *g = open_ok(a, flags);
        uint64_t marked = info_of(g).interrupted_chunks;
        assert_true(marked >= 1 && marked <= 3);
        assert_all_found(g, 0, 3);
        sk_bloom_free(g);
    }
    f = open_ok(a, SK_BLOOM_IN_PLACE);
    assert_true(info_of(f).interrupted_chunks >= 1);
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    sk_bloom_free(f);
    sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
    assert_int_equal(info_of(g).interrupted_chunks, 0);
    assert_all_found(g, 0, 3);
    sk_bloom_free(g);
}

/* Flips one bit of the file at offset. */
static void flip_byte(const char *path, off_t offset)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, offset), 1);
    b ^= 0x20;
    assert_int_equal(pwrite(fd, &b, 1, offset), 1);
    close(fd);
}

static void test_a_damaged_chunk_is_refused_and_stays_reported(void **state)
{
    char a[PATH_MAX];
    path_of(a, "damaged.bloom");
    sk_bloom_free(saved_empty(a, SK_BLOOM_BLOCKED));
    flip_byte(a, SK_BF_FILE_ALIGN + 100); /* chunk 0 */
    sk_bloom *f = open_ok(a, SK_BLOOM_IN_PLACE);
    uint64_t key = 0;
    int rc;
    while ((rc = sk_bloom_add(f, &key, sizeof key)) >= 0)
        key++;
    assert_int_equal(rc, SK_ECHECKSUM);
    assert_int_equal(sk_bloom_contains(f, &key, sizeof key), 0); /* nothing of it set */
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    sk_bloom_free(f);
    sk_bloom *g = NULL;
    assert_int_equal(sk_bloom_open(&g, a, SK_BLOOM_VERIFY, NULL), SK_ECHECKSUM);
    g = open_ok(a, 0);
    assert_all_found(g, 0, key);
    sk_bloom_free(g);
}

static void test_merge_and_clear_in_place(void **state)
{
    char a[PATH_MAX], b[PATH_MAX];
    path_of(a, "merge.bloom");
    path_of(b, "merge-whole.bloom");
    sk_bloom *whole = saved_empty(a, SK_BLOOM_BLOCKED), *src = NULL;
    assert_int_equal(sk_bloom_copy(&src, whole), SK_OK);
    add_range(src, 0, 20000);
    sk_bloom *f = open_ok(a, SK_BLOOM_IN_PLACE);
    assert_int_equal(sk_bloom_merge(f, src), SK_OK);
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    assert_int_equal(sk_bloom_merge(whole, src), SK_OK);
    assert_int_equal(sk_bloom_save(whole, b), SK_OK);
    assert_same_file(a, b);
    assert_int_equal(sk_bloom_clear(f), SK_OK);
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    sk_bloom_free(f);
    sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
    assert_int_equal(info_of(g).count, 0);
    assert_int_equal(sk_bloom_estimate_items(g), 0);
    sk_bloom_free(g);
    sk_bloom_free(src);
    sk_bloom_free(whole);
}

static void test_a_scalable_filter_that_grows_is_written_whole(void **state)
{
    char a[PATH_MAX];
    path_of(a, "scalable.bloom");
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01,
                                                              .expansion = 2}),
                     SK_OK);
    add_range(f, 0, 500);
    assert_int_equal(sk_bloom_save(f, a), SK_OK);
    sk_bloom_free(f);
    f = open_ok(a, SK_BLOOM_IN_PLACE);
    add_range(f, 500, 900); /* the first layer still has room */
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    assert_int_equal(info_of(f).layers, 1);
    add_range_batch(f, 900, 10000);
    assert_true(info_of(f).layers > 1);
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    add_range(f, 10000, 10100);
    assert_int_equal(sk_bloom_sync(f), SK_OK);
    sk_bloom_info before = info_of(f);
    sk_bloom_free(f);
    sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
    assert_int_equal(info_of(g).layers, before.layers);
    assert_int_equal(info_of(g).count, before.count);
    assert_all_found(g, 0, 10100);
    sk_bloom_free(g);
}

static void test_what_in_place_refuses(void **state)
{
    char a[PATH_MAX], old[PATH_MAX], fixture[PATH_MAX];
    path_of(a, "refuse.bloom");
    sk_bloom *mem = saved_empty(a, SK_BLOOM_BLOCKED);
    assert_int_equal(sk_bloom_sync(mem), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_sync(NULL), SK_EINVAL);
    sk_bloom_free(mem);

    /* One process at a time holds a file in place. */
    sk_bloom *f = open_ok(a, SK_BLOOM_IN_PLACE), *g = NULL;
    assert_int_equal(sk_bloom_open(&g, a, SK_BLOOM_IN_PLACE, NULL), SK_EIO);
    assert_int_equal(errno, EWOULDBLOCK);
    assert_null(g);
    sk_bloom *reader = open_ok(a, SK_BLOOM_VERIFY); /* readers are not kept out */
    sk_bloom_free(reader);
    sk_bloom_free(f);
    sk_bloom_free(open_ok(a, SK_BLOOM_IN_PLACE));

    /* A file of the format before chunk sums: rewritten by a save, after
     * which it opens in place. */
    snprintf(fixture, sizeof fixture, "%s/bloom_blocked.bloom", SKETCH_FIXTURES);
    path_of(old, "old.bloom");
    size_t len;
    uint8_t *bytes = read_whole(fixture, &len);
    FILE *out = fopen(old, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, len, out), len);
    fclose(out);
    free(bytes);
    assert_int_equal(sk_bloom_open(&g, old, SK_BLOOM_IN_PLACE, NULL), SK_EINCOMPAT);
    g = open_ok(old, SK_BLOOM_VERIFY);
    assert_int_equal(sk_bloom_save(g, old), SK_OK);
    sk_bloom_free(g);
    sk_bloom_free(open_ok(old, SK_BLOOM_IN_PLACE));

    /* Not a regular file; missing. */
    assert_int_equal(sk_bloom_open(&g, tmpdir, SK_BLOOM_IN_PLACE, NULL), SK_EIO);
    char missing[PATH_MAX];
    path_of(missing, "missing.bloom");
    assert_int_equal(sk_bloom_open(&g, missing, SK_BLOOM_IN_PLACE, NULL), SK_EIO);
    assert_int_equal(errno, ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adds_in_place_write_what_a_save_writes),
        cmocka_unit_test(test_adds_not_synced_leave_marks_that_the_next_sync_clears),
        cmocka_unit_test(test_a_damaged_chunk_is_refused_and_stays_reported),
        cmocka_unit_test(test_merge_and_clear_in_place),
        cmocka_unit_test(test_a_scalable_filter_that_grows_is_written_whole),
        cmocka_unit_test(test_what_in_place_refuses),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
