/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_restore.c: a restore that has not finished is carried, not
 * completed, by every way of copying a filter: its dump restores into the
 * same unfinished state (the header's checksums, not those of the partial
 * arrays), sk_bloom_copy keeps it unfinished, and in both the rest of the
 * original pieces then finish the restore into the original filter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sketch.h"

static uint8_t *dump_of(const sk_bloom *f, uint64_t *size)
{
    *size = sk_bloom_dump_size(f);
    uint8_t *buf = malloc((size_t)*size);
    assert_non_null(buf);
    assert_int_equal(sk_bloom_dump_read(f, 0, buf, (size_t)*size), SK_OK);
    return buf;
}

/* A scalable filter of three layers, so that the dump has several arrays. */
static sk_bloom *filled_filter(void)
{
    sk_bloom *f = NULL;
    sk_bloom_options o = {.capacity = 1000, .fp_rate = 0.01, .expansion = 2,
                          .layout = SK_BLOOM_BLOCKED};
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    char item[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(item, sizeof item, "item-%d", i);
        assert_true(sk_bloom_add(f, item, (size_t)n) >= 0);
    }
    return f;
}

/* Restores the header and the array bytes [header, cut) of dump. */
static sk_bloom *partial_restore(const uint8_t *dump, uint64_t size, uint64_t cut)
{
    sk_bloom *g = NULL;
    size_t header_len = 0;
    assert_int_equal(sk_bloom_restore_begin(&g, dump, (size_t)size, &header_len, NULL, 0), SK_OK);
    assert_true(cut > header_len && cut < size);
    assert_int_equal(sk_bloom_restore_chunk(g, header_len, dump + header_len,
                                            (size_t)(cut - header_len)),
                     SK_OK);
    return g;
}

/* Every byte of g's dump equals the original's once the rest is given. */
static void finish_and_compare(sk_bloom *g, const uint8_t *dump, uint64_t size, uint64_t cut)
{
    assert_int_equal(sk_bloom_restoring(g), 1);
    assert_int_equal(sk_bloom_restore_chunk(g, cut, dump + cut, (size_t)(size - cut)), SK_OK);
    assert_int_equal(sk_bloom_restore_finish(g), SK_OK);
    assert_int_equal(sk_bloom_restoring(g), 0);
    uint64_t again_size;
    uint8_t *again = dump_of(g, &again_size);
    assert_int_equal(again_size, size);
    assert_memory_equal(again, dump, (size_t)size);
    free(again);
}

static void test_dump_of_an_unfinished_restore_restores_unfinished(void **state)
{
    sk_bloom *f = filled_filter();
    assert_int_equal(sk_bloom_restoring(f), 0);
    uint64_t size;
    uint8_t *dump = dump_of(f, &size);
    uint64_t cut = sk_bloom_dump_header_size(f) + (size - sk_bloom_dump_header_size(f)) / 2;
    sk_bloom *g = partial_restore(dump, size, cut);

    /* g's dump: the original header (its sums), then arrays cut at `cut`. */
    uint64_t partial_size;
    uint8_t *partial = dump_of(g, &partial_size);
    assert_int_equal(partial_size, size);
    assert_memory_equal(partial, dump, (size_t)cut);
    /* Restored whole, it does not verify (its arrays are not all in) and
     * stays unfinished, where one with the partial arrays' own sums would. */
    sk_bloom *h = NULL;
    size_t header_len = 0;
    assert_int_equal(sk_bloom_restore_begin(&h, partial, (size_t)partial_size, &header_len,
                                            NULL, 0),
                     SK_OK);
    assert_int_equal(sk_bloom_restore_chunk(h, header_len, partial + header_len,
                                            (size_t)(partial_size - header_len)),
                     SK_OK);
    assert_int_equal(sk_bloom_restore_finish(h), SK_ECHECKSUM);
    finish_and_compare(h, dump, size, cut);

    free(partial);
    sk_bloom_free(h);
    sk_bloom_free(g);
    sk_bloom_free(f);
    free(dump);
}

static void test_copy_of_an_unfinished_restore_is_unfinished(void **state)
{
    sk_bloom *f = filled_filter();
    uint64_t size;
    uint8_t *dump = dump_of(f, &size);
    uint64_t cut = size - 3;
    sk_bloom *g = partial_restore(dump, size, cut);
    sk_bloom *copy = NULL;
    assert_int_equal(sk_bloom_copy(&copy, g), SK_OK);
    finish_and_compare(copy, dump, size, cut);
    finish_and_compare(g, dump, size, cut);
    /* A finished filter's copy is finished: no chunk is taken. */
    sk_bloom *done = NULL;
    assert_int_equal(sk_bloom_copy(&done, f), SK_OK);
    assert_int_equal(sk_bloom_restoring(done), 0);
    assert_int_equal(sk_bloom_restore_chunk(done, cut, dump + cut, 1), SK_EINCOMPAT);
    sk_bloom_free(done);
    sk_bloom_free(copy);
    sk_bloom_free(g);
    sk_bloom_free(f);
    free(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_of_an_unfinished_restore_restores_unfinished),
        cmocka_unit_test(test_copy_of_an_unfinished_restore_is_unfinished),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
