/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rdb_cms_topk.c: RedisBloom's RDB values of the count-min sketch and
 * top-k (sketch/redisbloom.h), with cmocka, over an in-memory array of
 * typed fields that stands for Redis's RDB calls:
 *
 *  - a value with real content saved, loaded and saved again gives the
 *    same fields and the same answers, and the fields are RedisBloom's
 *    (their count, kinds, order, string lengths, zeroed heap pointers);
 *  - a top-k's entries never used, and a save that cannot have its heap;
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

LOADER(cms, sk_cms)
LOADER(topk, sk_topk)

static int cms_save(const void *x, const sk_rdb_writer *w)
{
    sk_cms_save_redisbloom(x, w);
    return SK_OK;
}
static int topk_save(const void *x, const sk_rdb_writer *w)
{
    return sk_topk_save_redisbloom(x, w);
}

#define TOPK_FIELD_HEAP 5
#define RB_HEAP_SIZE 24

/* The heap's pointers and padding, which a save writes as zeros. */
static void topk_normalize(struct fields *fs)
{
    if (fs->n <= TOPK_FIELD_HEAP || fs->f[TOPK_FIELD_HEAP].kind != K_STR)
        return;
    struct field *h = &fs->f[TOPK_FIELD_HEAP];
    for (size_t at = 0; at + RB_HEAP_SIZE <= h->len; at += RB_HEAP_SIZE) {
        memset(h->str + at + 8, 0, 8);
        memset(h->str + at + 20, 0, 4);
    }
}

static const struct family CMS = {0, cms_load, cms_save, cms_destroy, NULL};
static const struct family TOPK = {0, topk_load, topk_save, topk_destroy, topk_normalize};

/* ---- count-min sketch ------------------------------------------------------ */

static sk_cms *cms_with_content(void)
{
    sk_cms *c = NULL;
    sk_cms_options o = {.width = 97, .depth = 4};
    assert_int_equal(sk_cms_create(&c, &o), SK_OK);
    char buf[32];
    for (uint64_t i = 0; i < 3000; i++) {
        size_t len = (size_t)sprintf(buf, "k%llu", (unsigned long long)(i % 700));
        assert_int_equal(sk_cms_add(c, buf, len, i % 7 + 1, NULL), SK_OK);
    }
    return c;
}

static void test_cms(void **state)
{
    sk_cms *c = cms_with_content();
    struct fields fs = save_of(&CMS, c);
    /* width, depth, total, then the counters, little-endian, row by row. */
    assert_int_equal(fs.n, 4);
    assert_int_equal(fs.f[0].kind, K_U);
    assert_int_equal(fs.f[0].u, 97);
    assert_int_equal(fs.f[1].u, 4);
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    assert_int_equal(fs.f[2].kind, K_U);
    assert_int_equal(fs.f[2].u, info.total);
    assert_int_equal(fs.f[3].kind, K_STR);
    assert_int_equal(fs.f[3].len, 97 * 4 * 4);
    uint64_t size;
    assert_int_equal(sk_cms_serialized_size(c, &size), SK_OK);
    uint8_t *native = malloc(size);
    assert_int_equal(sk_cms_serialize(c, native, size, NULL), SK_OK);
    assert_memory_equal(fs.f[3].str, native + 32, 97 * 4 * 4); /* after the 32-byte header */
    free(native);

    sk_cms *back = load_resave(&CMS, &fs, 0);
    char buf[32];
    for (uint64_t i = 0; i < 800; i++) {
        size_t len = (size_t)sprintf(buf, "k%llu", (unsigned long long)i);
        assert_int_equal(sk_cms_count(back, buf, len), sk_cms_count(c, buf, len));
    }
    sk_cms_info binfo;
    sk_cms_get_info(back, &binfo);
    assert_int_equal(binfo.total, info.total);
    budget(&CMS, &fs, binfo.memory);
    sk_cms_free(back);

    refuse(&CMS, &fs, 0, set_u, 0, SK_ECORRUPT);
    refuse(&CMS, &fs, 1, set_u, 0, SK_ECORRUPT);
    refuse(&CMS, &fs, 0, add_u, 1, SK_ECORRUPT);
    refuse(&CMS, &fs, 1, add_u, 1, SK_ECORRUPT);
    refuse(&CMS, &fs, 0, set_u, 4294967296.0, SK_ECORRUPT);
    refuse(&CMS, &fs, 0, set_u, 4294967295.0, SK_ETOOLARGE); /* x 4 rows > 2^32 cells */
    refuse(&CMS, &fs, 1, set_u, 65536 * 2, SK_ECORRUPT);
    refuse(&CMS, &fs, 3, cut, 1, SK_ECORRUPT);
    encvers_refused(&CMS, &fs, (const int[]){1, -1, 4}, 3);
    sweep(&CMS, &fs);
    fields_free(&fs);
    sk_cms_free(c);
}

/* ---- top-k ------------------------------------------------------------------ */

#define TOPK_K 10
#define TOPK_ITEMS 300

static size_t topk_item(char *buf, uint64_t i)
{
    if (i == 0)
        return 0; /* the empty item */
    if (i == 1) {
        memcpy(buf, "a\0b", 3); /* a NUL inside */
        return 3;
    }
    return (size_t)sprintf(buf, "item-%llu", (unsigned long long)i);
}

static sk_topk *topk_with_content(uint32_t k, uint64_t items, uint64_t adds)
{
    sk_topk *t = NULL;
    sk_topk_options o = {.k = k, .width = 16, .depth = 3, .decay = 0.9};
    assert_int_equal(sk_topk_create(&t, &o), SK_OK);
    uint64_t seed = 7;
    char buf[32];
    for (uint64_t n = 0; n < adds; n++) {
        /* Heavy items first in the ranking: the square of a uniform draw. */
        double u = (double)(splitmix64(&seed) >> 11) * 0x1.0p-53;
        uint64_t i = (uint64_t)(u * u * (double)items);
        assert_true(sk_topk_add(t, buf, topk_item(buf, i), 1, NULL, NULL) >= 0);
    }
    return t;
}

static void topk_same_answers(const sk_topk *a, const sk_topk *b, uint32_t k, uint64_t items)
{
    sk_topk_entry la[TOPK_K], lb[TOPK_K];
    int na = sk_topk_list(a, la, k), nb = sk_topk_list(b, lb, k);
    assert_int_equal(na, nb);
    for (int i = 0; i < na; i++) {
        assert_int_equal(la[i].len, lb[i].len);
        assert_int_equal(la[i].count, lb[i].count);
        if (la[i].len > 0)
            assert_memory_equal(la[i].item, lb[i].item, la[i].len);
    }
    char buf[32];
    for (uint64_t i = 0; i < items; i++) {
        size_t len = topk_item(buf, i);
        assert_int_equal(sk_topk_query(a, buf, len), sk_topk_query(b, buf, len));
        assert_int_equal(sk_topk_count(a, buf, len), sk_topk_count(b, buf, len));
    }
}

static void test_topk(void **state)
{
    sk_topk *t = topk_with_content(TOPK_K, TOPK_ITEMS, 20000);
    sk_topk_entry list[TOPK_K];
    assert_int_equal(sk_topk_list(t, list, TOPK_K), TOPK_K); /* a full heap */
    struct fields fs = save_of(&TOPK, t);
    /* k, width, depth, decay, the buckets, the heap, then k items. */
    assert_int_equal(fs.n, 6 + TOPK_K);
    const enum kind kinds[] = {K_U, K_U, K_U, K_D, K_STR, K_STR};
    for (size_t i = 0; i < fs.n; i++)
        assert_int_equal(fs.f[i].kind, i < 6 ? kinds[i] : K_STR);
    assert_int_equal(fs.f[0].u, TOPK_K);
    assert_int_equal(fs.f[1].u, 16);
    assert_int_equal(fs.f[2].u, 3);
    assert_true(fs.f[3].d == 0.9);
    assert_int_equal(fs.f[4].len, 16 * 3 * 8);
    assert_int_equal(fs.f[TOPK_FIELD_HEAP].len, TOPK_K * RB_HEAP_SIZE);
    int empty_seen = 0, nul_seen = 0;
    for (size_t i = 0; i < TOPK_K; i++) {
        const uint8_t *e = fs.f[TOPK_FIELD_HEAP].str + i * RB_HEAP_SIZE;
        static const uint8_t zeros[8];
        assert_memory_equal(e + 8, zeros, 8); /* the pointer */
        assert_memory_equal(e + 20, zeros, 4); /* the padding */
        uint32_t itemlen = (uint32_t)(e[4] | e[5] << 8 | e[6] << 16 | (uint32_t)e[7] << 24);
        const struct field *s = &fs.f[6 + i];
        assert_int_equal(s->len, itemlen + 1);
        assert_int_equal(s->str[itemlen], 0);
        empty_seen |= itemlen == 0;
        nul_seen |= itemlen == 3 && memcmp(s->str, "a\0b", 3) == 0;
    }
    assert_true(empty_seen && nul_seen);

    sk_topk *back = load_resave(&TOPK, &fs, 0);
    topk_same_answers(t, back, TOPK_K, TOPK_ITEMS);
    sk_topk_info info;
    sk_topk_get_info(back, &info);
    budget(&TOPK, &fs, info.memory);
    sk_topk_free(back);

    /* RedisBloom's pointers are its own addresses: read past. */
    struct fields m = fields_copy(&fs);
    for (size_t i = 0; i < TOPK_K; i++)
        memset(m.f[TOPK_FIELD_HEAP].str + i * RB_HEAP_SIZE + 8, 0xa5, 8);
    assert_int_equal(try_mutated(&TOPK, &m), SK_OK);
    fields_free(&m);

    refuse(&TOPK, &fs, 0, set_u, 0, SK_ECORRUPT);
    refuse(&TOPK, &fs, 0, add_u, 1, SK_ECORRUPT);
    refuse(&TOPK, &fs, 1, set_u, 0, SK_ECORRUPT);
    refuse(&TOPK, &fs, 2, add_u, 1, SK_ECORRUPT);
    refuse(&TOPK, &fs, 3, set_d, 0, SK_ECORRUPT);
    refuse(&TOPK, &fs, 3, set_d, 1.5, SK_ECORRUPT);
    refuse(&TOPK, &fs, 3, set_d, NAN, SK_ECORRUPT);
    refuse(&TOPK, &fs, 4, cut, 1, SK_ECORRUPT);
    refuse(&TOPK, &fs, 5, cut, RB_HEAP_SIZE, SK_ECORRUPT);
    for (size_t i = 0; i < TOPK_K; i++) {
        refuse(&TOPK, &fs, 5, flip, (double)(i * RB_HEAP_SIZE), SK_ECORRUPT);     /* fp */
        refuse(&TOPK, &fs, 5, flip, (double)(i * RB_HEAP_SIZE + 4), SK_ECORRUPT); /* itemlen */
        refuse(&TOPK, &fs, 6 + i, flip, (double)(fs.f[6 + i].len - 1), SK_ECORRUPT); /* NUL */
    }
    encvers_refused(&TOPK, &fs, (const int[]){1, -1}, 2);
    sweep(&TOPK, &fs);
    fields_free(&fs);
    sk_topk_free(t);
}

/* Entries never used are all zeros and "", and stay so. */
static void test_topk_part_empty(void **state)
{
    sk_topk *t = topk_with_content(5, 3, 2); /* two adds, of at most 3 items */
    struct fields fs = save_of(&TOPK, t);
    int unused = 0;
    for (size_t i = 0; i < 5; i++) {
        static const uint8_t zeros[RB_HEAP_SIZE];
        const uint8_t *e = fs.f[TOPK_FIELD_HEAP].str + i * RB_HEAP_SIZE;
        if (memcmp(e, zeros, RB_HEAP_SIZE) == 0) {
            unused++;
            assert_int_equal(fs.f[6 + i].len, 1);
        }
    }
    assert_true(unused >= 3);
    sk_topk *back = load_resave(&TOPK, &fs, 0);
    topk_same_answers(t, back, 5, 3);
    sk_topk_free(back);
    sweep(&TOPK, &fs);
    fields_free(&fs);
    sk_topk_free(t);
}

/* The heap's block cannot be had: SK_ENOMEM, nothing written. */
static void test_topk_save_fails(void **state)
{
    struct tally tl;
    sk_allocator a = tally_allocator(&tl);
    sk_topk *t = NULL;
    sk_topk_options o = {.k = 4, .allocator = &a};
    assert_int_equal(sk_topk_create(&t, &o), SK_OK);
    assert_true(sk_topk_add(t, "x", 1, 3, NULL, NULL) >= 0);
    tl.fail_at = tl.calls;
    struct fields fs = {0};
    sk_rdb_writer w = writer(&fs);
    assert_int_equal(sk_topk_save_redisbloom(t, &w), SK_ENOMEM);
    assert_int_equal(fs.n, 0);
    sk_topk_free(t);
    assert_int_equal(tl.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cms),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_topk_part_empty),
        cmocka_unit_test(test_topk_save_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
