/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rdb_cuckoo_tdigest.c: RedisBloom's RDB values of the cuckoo filter
 * and the t-digest (sketch/redisbloom.h), with cmocka, over an in-memory
 * array of typed fields that stands for Redis's RDB calls:
 *
 *  - a value with real content saved, loaded and saved again gives the
 *    same fields and the same answers, and the fields are RedisBloom's
 *    (their count, kinds, order, string lengths);
 *  - the layout of encvers 2 and 3 of the cuckoo filter, and a filter
 *    saved half restored, which resumes its restore once loaded;
 *  - a t-digest empty, or with a lone value in its buffer;
 *  - every field changed one at a time: refused where the change breaks a
 *    rule, and where a value is accepted it saves back to exactly the
 *    fields it came from (nothing silently dropped or mended);
 *  - every truncated sequence refused with SK_ETRUNCATED, budgets, encvers,
 *    and every allocation failing in turn, without leaks (an allocator
 *    that counts what it lends).
 *
 * The fields, their reader and writer, and the checks: rdb_test_util.c.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sketch.h"
#include "../common/test_util.h"
#include "rdb_test_util.h"

/* ---- the two families ------------------------------------------------------ */

LOADER(cuckoo, sk_cuckoo)
LOADER(tdigest, sk_tdigest)

static int cuckoo_save(const void *x, const sk_rdb_writer *w)
{
    sk_cuckoo_save_redisbloom(x, w);
    return SK_OK;
}
static int tdigest_save(const void *x, const sk_rdb_writer *w)
{
    return sk_tdigest_save_redisbloom(x, w);
}

static const struct family CUCKOO = {4, cuckoo_load, cuckoo_save, cuckoo_destroy, NULL};
static const struct family TDIGEST = {0, tdigest_load, tdigest_save, tdigest_destroy, NULL};

/* ---- cuckoo filter ---------------------------------------------------------- */

#define CF_ITEMS 300

static size_t cf_item(char *buf, uint64_t i)
{
    return (size_t)sprintf(buf, "cf%llu", (unsigned long long)i);
}

static sk_cuckoo *cuckoo_with_content(uint32_t expansion, uint64_t adds, uint64_t deletes)
{
    sk_cuckoo *c = NULL;
    sk_cuckoo_options o = {.capacity = 64, .bucket_size = 2, .expansion = expansion};
    assert_int_equal(sk_cuckoo_create(&c, &o), SK_OK);
    char buf[32];
    for (uint64_t i = 0; i < adds; i++)
        assert_int_equal(sk_cuckoo_add(c, buf, cf_item(buf, i)), 1);
    for (uint64_t i = 0; i < deletes; i++)
        assert_int_equal(sk_cuckoo_delete(c, buf, cf_item(buf, i * 3)), 1);
    return c;
}

static void cuckoo_same_answers(const sk_cuckoo *a, const sk_cuckoo *b)
{
    char buf[32];
    for (uint64_t i = 0; i < 2 * CF_ITEMS; i++) {
        size_t len = cf_item(buf, i);
        assert_int_equal(sk_cuckoo_contains(a, buf, len), sk_cuckoo_contains(b, buf, len));
        assert_int_equal(sk_cuckoo_count(a, buf, len), sk_cuckoo_count(b, buf, len));
    }
    sk_cuckoo_info ia, ib;
    sk_cuckoo_get_info(a, &ia);
    sk_cuckoo_get_info(b, &ib);
    assert_int_equal(ia.filters, ib.filters);
    assert_int_equal(ia.items, ib.items);
    assert_int_equal(ia.deletes, ib.deletes);
    assert_int_equal(ia.buckets, ib.buckets);
    assert_int_equal(ia.max_iterations, ib.max_iterations);
    assert_int_equal(ia.expansion, ib.expansion);
}

static void test_cuckoo(void **state)
{
    sk_cuckoo *c = cuckoo_with_content(2, CF_ITEMS, 8);
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    assert_true(info.filters >= 3);
    assert_true(info.deletes > 0);
    struct fields fs = save_of(&CUCKOO, c);
    /* Seven fields, then each sub-filter's buckets and slots. */
    assert_int_equal(fs.n, 7 + 2 * info.filters);
    const uint64_t want[] = {info.filters, info.buckets, info.items, info.deletes,
                             2, info.max_iterations, 2};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(fs.f[i].kind, K_U);
        assert_int_equal(fs.f[i].u, want[i]);
    }
    for (uint32_t i = 0; i < info.filters; i++) {
        assert_int_equal(fs.f[7 + 2 * i].u, info.buckets << i);
        assert_int_equal(fs.f[8 + 2 * i].len, (info.buckets << i) * 2);
    }
    sk_cuckoo *back = load_resave(&CUCKOO, &fs, 4);
    cuckoo_same_answers(c, back);
    sk_cuckoo_info binfo;
    sk_cuckoo_get_info(back, &binfo);
    budget(&CUCKOO, &fs, binfo.memory);
    sk_cuckoo_free(back);

    uint64_t slots = info.slots;
    refuse(&CUCKOO, &fs, 0, set_u, 0, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 1, set_u, 0, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 1, set_u, (double)(info.buckets * 2), SK_ECORRUPT); /* not the rule */
    refuse(&CUCKOO, &fs, 1, set_u, 48, SK_ECORRUPT);                          /* no power of 2 */
    refuse(&CUCKOO, &fs, 4, set_u, 0, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 4, set_u, 256, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 5, set_u, 0, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 5, add_u, (double)((slots + 1) << 16), SK_ECORRUPT); /* mark past */
    refuse(&CUCKOO, &fs, 6, set_u, 3, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 6, set_u, 0, SK_ECORRUPT); /* fixed, with sub-filters */
    refuse(&CUCKOO, &fs, 6, set_u, 65536, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 9, add_u, 1, SK_ECORRUPT);
    refuse(&CUCKOO, &fs, 10, cut, 1, SK_ECORRUPT);
    encvers_refused(&CUCKOO, &fs, (const int[]){5, 1, 0, -1}, 4);
    sweep(&CUCKOO, &fs);
    fields_free(&fs);
    sk_cuckoo_free(c);
}

/* Encvers 2 and 3 (RedisBloom 2.0: three fields, then one string per
 * sub-filter) are refused: 2.0 hashed items as no later release does. */
static void test_cuckoo_old_layout(void **state)
{
    sk_cuckoo *c = cuckoo_with_content(1, 150, 0);
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    struct fields now = save_of(&CUCKOO, c), old = {0};
    for (size_t i = 0; i < 3; i++)
        w_unsigned(&old, now.f[i].u);
    for (uint32_t i = 0; i < info.filters; i++)
        w_string(&old, now.f[8 + 2 * i].str, now.f[8 + 2 * i].len);
    for (int encver = 2; encver <= 3; encver++) {
        void *x = NULL;
        assert_int_equal(load_of(&CUCKOO, &old, SIZE_MAX, encver, 0, NULL, &x), SK_EINCOMPAT);
        assert_null(x);
    }
    fields_free(&old);
    fields_free(&now);
    sk_cuckoo_free(c);
}

/* A filter saved half restored keeps its progress above max_iterations'
 * 16 bits, and once loaded takes the rest of the pieces. */
static void test_cuckoo_restoring(void **state)
{
    sk_cuckoo *c = cuckoo_with_content(2, CF_ITEMS, 8);
    uint8_t header[SK_CUCKOO_DUMP_HEADER_SIZE];
    sk_cuckoo_dump_header(c, header);
    sk_cuckoo *r = NULL;
    assert_int_equal(sk_cuckoo_restore_begin(&r, header, sizeof header, 0, NULL), SK_OK);
    uint64_t it = 1, restored = 0;
    const void *piece;
    size_t len;
    for (int p = 0; p < 3; p++) {
        uint64_t at = it;
        assert_int_equal(sk_cuckoo_dump_piece(c, &it, 50, &piece, &len), 1);
        assert_int_equal(sk_cuckoo_restore_piece(r, it, piece, len), SK_OK);
        restored = at - 1 + len;
    }
    assert_true(sk_cuckoo_restoring(r));
    struct fields fs = save_of(&CUCKOO, r);
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    assert_int_equal(fs.f[5].u & 0xffff, info.max_iterations); /* what RedisBloom keeps */
    assert_int_equal(fs.f[5].u >> 16, restored + 1);
    sk_cuckoo *back = load_resave(&CUCKOO, &fs, 4);
    assert_true(sk_cuckoo_restoring(back));
    assert_int_equal(sk_cuckoo_add(back, "x", 1), SK_EINCOMPAT);
    while (sk_cuckoo_dump_piece(c, &it, 50, &piece, &len) == 1)
        assert_int_equal(sk_cuckoo_restore_piece(back, it, piece, len), SK_OK);
    assert_false(sk_cuckoo_restoring(back));
    struct fields done = save_of(&CUCKOO, back), orig = save_of(&CUCKOO, c);
    assert_true(fields_equal(&done, &orig));
    cuckoo_same_answers(c, back);
    sweep(&CUCKOO, &fs);
    fields_free(&done);
    fields_free(&orig);
    fields_free(&fs);
    sk_cuckoo_free(back);
    sk_cuckoo_free(r);
    sk_cuckoo_free(c);
}

/* ---- t-digest --------------------------------------------------------------- */

enum { TD_COMPRESSION, TD_MIN, TD_MAX, TD_CAP, TD_MERGED, TD_UNMERGED, TD_COMPRESSIONS,
       TD_MERGED_WEIGHT, TD_UNMERGED_WEIGHT, TD_NODES };

static void tdigest_same_answers(const sk_tdigest *a, const sk_tdigest *b)
{
    double q[101], x[101], ra[101], rb[101];
    for (int i = 0; i <= 100; i++) {
        q[i] = i / 100.0;
        x[i] = -50 + i * 1.7;
    }
    assert_int_equal(sk_tdigest_quantiles(a, q, ra, 101), SK_OK);
    assert_int_equal(sk_tdigest_quantiles(b, q, rb, 101), SK_OK);
    assert_memory_equal(ra, rb, sizeof ra);
    assert_int_equal(sk_tdigest_cdf(a, x, ra, 101), SK_OK);
    assert_int_equal(sk_tdigest_cdf(b, x, rb, 101), SK_OK);
    assert_memory_equal(ra, rb, sizeof ra);
}

static void test_tdigest(void **state)
{
    sk_tdigest *t = NULL;
    assert_int_equal(sk_tdigest_new(&t, 50), SK_OK);
    uint64_t seed = 3;
    for (int i = 0; i < 2007; i++) {
        double v = (double)(splitmix64(&seed) >> 11) * 0x1.0p-53 * 120 - 40;
        assert_int_equal(sk_tdigest_add(t, v, 1 + (uint64_t)i % 3), SK_OK);
    }
    sk_tdigest_info before, after;
    sk_tdigest_get_info(t, &before);
    assert_true(before.unmerged_nodes > 0);
    struct fields fs = save_of(&TDIGEST, t);
    sk_tdigest_get_info(t, &after);
    assert_memory_equal(&before, &after, sizeof before); /* the live digest unchanged */
    const enum kind kinds[TD_NODES] = {K_D, K_D, K_D, K_S, K_S, K_S, K_S, K_D, K_D};
    for (size_t i = 0; i < fs.n; i++)
        assert_int_equal(fs.f[i].kind, i < TD_NODES ? kinds[i] : K_D);
    int64_t merged = fs.f[TD_MERGED].s;
    assert_int_equal(fs.n, TD_NODES + 2 * merged);
    assert_true(fs.f[TD_COMPRESSION].d == 50);
    assert_int_equal(fs.f[TD_CAP].s, 310);
    assert_int_equal(fs.f[TD_UNMERGED].s, 0);
    assert_true(fs.f[TD_UNMERGED_WEIGHT].d == 0);
    int64_t weight = before.merged_weight + before.unmerged_weight;
    assert_true(fs.f[TD_MERGED_WEIGHT].d == (double)weight);
    assert_int_equal(fs.f[TD_COMPRESSIONS].s, before.total_compressions + 1);

    sk_tdigest *back = load_resave(&TDIGEST, &fs, 0);
    tdigest_same_answers(t, back);
    budget(&TDIGEST, &fs, sk_tdigest_create_memory(&(sk_tdigest_options){.compression = 50}));
    sk_tdigest_free(back);

    refuse(&TDIGEST, &fs, TD_COMPRESSION, set_d, 0, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_COMPRESSION, add_d, 0.5, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_COMPRESSION, set_d, NAN, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_CAP, set_s, 311, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MIN, set_d, NAN, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MIN, set_d, 1e6, SK_ECORRUPT); /* above max */
    refuse(&TDIGEST, &fs, TD_MAX, set_d, INFINITY, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MERGED, set_s, -1, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MERGED, set_s, 311, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_UNMERGED, set_s, 1, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_COMPRESSIONS, set_s, -1, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MERGED_WEIGHT, add_d, 1, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MERGED_WEIGHT, add_d, 0.5, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_MERGED_WEIGHT, set_d, NAN, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_UNMERGED_WEIGHT, set_d, 1, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, TD_NODES, set_d, 1e9, SK_ECORRUPT); /* means out of order */
    refuse(&TDIGEST, &fs, (size_t)(TD_NODES + merged), set_d, 0, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, (size_t)(TD_NODES + merged), add_d, 0.5, SK_ECORRUPT);
    refuse(&TDIGEST, &fs, (size_t)(TD_NODES + merged), add_d, 1, SK_ECORRUPT); /* the sum */
    encvers_refused(&TDIGEST, &fs, (const int[]){1, -1}, 2);
    sweep(&TDIGEST, &fs);
    fields_free(&fs);

    /* The copy cannot be had: SK_ENOMEM, nothing written. */
    struct tally tl;
    sk_allocator a = tally_allocator(&tl);
    sk_tdigest *small = NULL;
    sk_tdigest_options o = {.compression = 20, .allocator = &a};
    assert_int_equal(sk_tdigest_create(&small, &o), SK_OK);
    assert_int_equal(sk_tdigest_add(small, 1.5, 2), SK_OK);
    tl.fail_at = tl.calls;
    struct fields none = {0};
    sk_rdb_writer w = writer(&none);
    assert_int_equal(sk_tdigest_save_redisbloom(small, &w), SK_ENOMEM);
    assert_int_equal(none.n, 0);
    sk_tdigest_free(small);
    assert_int_equal(tl.live, 0);
    sk_tdigest_free(t);
}

/* Empty, and a lone value of weight 1, which a compression leaves in the
 * buffer and RedisBloom saves as a count without its value. */
static void test_tdigest_small(void **state)
{
    for (int lone = 0; lone <= 1; lone++) {
        sk_tdigest *t = NULL;
        assert_int_equal(sk_tdigest_new(&t, 100), SK_OK);
        if (lone)
            assert_int_equal(sk_tdigest_add(t, 42.5, 1), SK_OK);
        struct fields fs = save_of(&TDIGEST, t);
        assert_int_equal(fs.n, TD_NODES);
        assert_int_equal(fs.f[TD_UNMERGED].s, lone);
        assert_true(fs.f[TD_UNMERGED_WEIGHT].d == lone);
        assert_true(fs.f[TD_MIN].d == (lone ? 42.5 : DBL_MAX));
        assert_true(fs.f[TD_MAX].d == (lone ? 42.5 : -DBL_MAX));
        sk_tdigest *back = load_resave(&TDIGEST, &fs, 0);
        tdigest_same_answers(t, back);
        sk_tdigest_info a, b;
        sk_tdigest_get_info(t, &a);
        sk_tdigest_get_info(back, &b);
        assert_int_equal(a.unmerged_nodes, b.unmerged_nodes);
        assert_memory_equal(&a.min, &b.min, sizeof a.min);
        /* The next add finds the same buffer. */
        assert_int_equal(sk_tdigest_add(t, 7, 1), SK_OK);
        assert_int_equal(sk_tdigest_add(back, 7, 1), SK_OK);
        tdigest_same_answers(t, back);
        if (lone)
            refuse(&TDIGEST, &fs, TD_MAX, set_d, 43, SK_ECORRUPT); /* min != max */
        sweep(&TDIGEST, &fs);
        fields_free(&fs);
        sk_tdigest_free(back);
        sk_tdigest_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuckoo),
        cmocka_unit_test(test_cuckoo_old_layout),
        cmocka_unit_test(test_cuckoo_restoring),
        cmocka_unit_test(test_tdigest),
        cmocka_unit_test(test_tdigest_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
