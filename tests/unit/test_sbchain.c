/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sbchain.c: RedisBloom's scalable Bloom chain, with cmocka: the same
 * bits as RedisBloom 2.6.28 for the same adds (digests recorded from it),
 * no false negatives, the false-positive rate of a link against its own
 * fill, scaling, full and over-budget chains left unchanged, allocation
 * failures without leaks. BF.SCANDUMP's pieces and restores, and the RDB
 * fields, are test_sbchain_dump.c's; the helpers both use,
 * sbchain_test_util.c's.
 *
 * The digests: a harness outside the repository compiled RedisBloom
 * v2.6.28's deps/bloom/bloom.c, src/sb.c and deps/murmur2/MurmurHash2.c
 * (RedisModule_* bound to calloc/realloc/free) with this library, made each
 * chain below both ways, added the same items to both (comparing every
 * add's result, BF.EXISTS of 2000 more, the SCANDUMP header and every
 * piece, with pieces of 1000 and 7 bytes, and BF.INFO's figures), found
 * them equal, and printed XXH64 (seed 0) of RedisBloom's SCANDUMP header
 * followed by its arrays. It did the same for chains that RedisBloom made
 * with the options of 1.x (0, NOROUND alone, FORCE64 alone), moved into
 * ours by BF.LOADCHUNK and added to on both sides; OLD_HEADER
 * (sbchain_test_util.c) is the header of one of them, empty, as RedisBloom
 * wrote it.
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

#include "sbchain/sbchain_internal.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "sbchain_test_util.h"

/* ---- the same bits as RedisBloom --------------------------------------- */

struct golden {
    uint64_t cap;
    double rate;
    unsigned exp;
    int non_scaling;
    uint64_t n;
    int style;
    uint64_t salt;
    unsigned links;
    uint64_t size;
    uint64_t digest;
};

static const struct golden goldens[] = {
    {100, 0.01, 2, 0, 5000, 0, 0, 6, 4961, UINT64_C(0xd49865abe6a499e4)},
    {1000, 0.001, 2, 0, 20000, 1, 0, 5, 18478, UINT64_C(0x7f3f9d1c7792c76d)},
    {7, 0.1, 1, 0, 3000, 0, 3, 372, 2604, UINT64_C(0x40f98fd713de6ec1)},
    {50, 0.05, 4, 0, 10000, 1, 11, 5, 8844, UINT64_C(0xc6c9a076715a19b5)},
    {1000, 0.01, 2, 1, 2000, 0, 0, 1, 1000, UINT64_C(0x883e1ccb3c195cc4)},
    {3, 0.5, 3, 0, 5000, 1, 1, 8, 4199, UINT64_C(0x7b4964c6f768484e)},
    {1, 0.999, 2, 0, 3000, 0, 2, 12, 2750, UINT64_C(0xafd90ba100e74649)},
    {100, 1e-9, 10, 0, 3000, 1, 2, 3, 2844, UINT64_C(0xa810825ada5f9ed9)},
};

static void test_same_bits_as_redisbloom(void **state)
{
    unsigned char buf[64];
    for (size_t g = 0; g < sizeof goldens / sizeof goldens[0]; g++) {
        const struct golden *e = &goldens[g];
        sk_sbchain *c = make(e->cap, e->rate, e->exp, e->non_scaling);
        uint64_t added = 0;
        for (uint64_t i = 0; i < e->n; i++) {
            size_t len = item(e->style, i, e->salt, buf);
            int rc = sk_sbchain_add(c, buf, len);
            assert_true(rc == 0 || rc == 1 || (e->non_scaling && rc == SK_EFULL));
            added += rc == 1;
        }
        sk_sbchain_info info;
        sk_sbchain_get_info(c, &info);
        assert_int_equal(info.links, e->links);
        assert_int_equal(info.count, e->size);
        assert_int_equal(added, e->size);
        assert_int_equal(digest(c), e->digest);
        sk_sbchain_free(c);
    }
}

static void test_old_chains(void **state)
{
    sk_sbchain *c = restore_empty(OLD_HEADER, sizeof OLD_HEADER);
    unsigned char buf[64];
    uint64_t added = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        size_t len = item(0, i, 0, buf);
        int rc = sk_sbchain_add(c, buf, len);
        assert_true(rc == 0 || rc == 1);
        added += rc == 1;
    }
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    assert_int_equal(info.links, 3);
    assert_int_equal(added, 19876);
    assert_int_equal(digest(c), OLD_DIGEST);
    for (uint64_t i = 0; i < 20000; i++)
        assert_true(sk_sbchain_contains(c, buf, item(0, i, 0, buf)));
    sk_sbchain_free(c);
}

/* ---- behaviour --------------------------------------------------------- */

static void test_options_and_info(void **state)
{
    sk_sbchain *c = NULL;
    sk_sbchain_info info;
    assert_int_equal(sk_sbchain_new(&c, 100, 0.01), SK_OK);
    sk_sbchain_get_info(c, &info);
    /* bpe = -ln(0.005) / ln(2)^2 = 11.03; 1103 bits, up to 1152 (18 words) */
    assert_int_equal(info.capacity, 100);
    assert_int_equal(info.links, 1);
    assert_int_equal(info.expansion, 2);
    assert_int_equal(info.array_bytes, 144);
    assert_true(info.fp_rate == 0.01 * 0.5);
    assert_int_equal(info.redisbloom_size, 32 + 64 + 144);
    assert_true(info.memory >= 144 + sizeof(struct sk_sbchain));
    assert_int_equal(c->links[0].hashes, 8);
    assert_int_equal(sk_sbchain_add(c, "", 0), 1); /* the empty item is an item */
    assert_int_equal(sk_sbchain_add(c, "", 0), 0);
    assert_int_equal(sk_sbchain_add(c, NULL, 1), SK_EINVAL);
    sk_sbchain_free(c);

    sk_sbchain_options zero = {.capacity = 10};
    assert_int_equal(sk_sbchain_create(&c, &zero), SK_OK);
    sk_sbchain_get_info(c, &info);
    assert_true(info.fp_rate == 0.005);
    assert_int_equal(info.expansion, 2);
    sk_sbchain_free(c);
    c = make(10, 0.1, 5, 1);
    sk_sbchain_get_info(c, &info);
    assert_int_equal(info.expansion, 0);
    assert_true(info.fp_rate == 0.1);
    sk_sbchain_free(c);

    const sk_sbchain_options bad[] = {
        {.capacity = 0}, {.capacity = 1, .fp_rate = 1}, {.capacity = 1, .fp_rate = -0.1},
        {.capacity = 1, .fp_rate = NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sk_sbchain_create(&c, &bad[i]), SK_EINVAL);
        assert_null(c);
    }
    assert_int_equal(sk_sbchain_create(&c, NULL), SK_EINVAL);
    sk_sbchain_options huge = {.capacity = UINT64_MAX};
    assert_int_equal(sk_sbchain_create(&c, &huge), SK_ETOOLARGE);
    assert_null(c);
}

static void test_no_false_negatives_and_fp_rate(void **state)
{
    const uint64_t n = 50000, trials = 400000;
    sk_sbchain *c = make(n, 0.01, 2, 0);
    unsigned char buf[64];
    for (uint64_t i = 0; i < n; i++)
        assert_int_not_equal(sk_sbchain_add(c, buf, item(0, i, 0, buf)), SK_EFULL);
    for (uint64_t i = 0; i < n; i++)
        assert_true(sk_sbchain_contains(c, buf, item(0, i, 0, buf)));
    assert_int_equal(c->nlinks, 1);
    /* An absent item is a false positive when its k bits are set: with a
     * fraction f of the bits set and independent positions, f^k. */
    const struct sk__sblink *l = &c->links[0];
    uint64_t set = 0;
    for (uint64_t i = 0; i < l->bytes; i++)
        set += (uint64_t)__builtin_popcount(l->bf[i]);
    double expect = pow((double)set / (double)l->bits, l->hashes);
    uint64_t fp = 0;
    for (uint64_t i = 0; i < trials; i++)
        fp += sk_sbchain_contains(c, buf, item(0, i, 1000000000, buf)) == 1;
    double sigma = sqrt(expect * (1 - expect) / (double)trials);
    double got = (double)fp / (double)trials;
    if (fabs(got - expect) > 5 * sigma)
        fail_msg("rate %.5f, expected %.5f (5 sigma %.5f)", got, expect, 5 * sigma);
    assert_true(got < 0.005 * 1.2); /* and near the link's rate */
    sk_sbchain_free(c);
}

static void test_scaling(void **state)
{
    sk_sbchain *c = make(100, 0.02, 3, 0);
    unsigned char buf[64];
    for (uint64_t i = 0; i < 5000; i++)
        sk_sbchain_add(c, buf, item(1, i, 9, buf));
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    assert_true(info.links >= 3);
    uint64_t cap = 0, entries = 100, bytes = 0, size = 32;
    double rate = 0.01;
    for (uint32_t i = 0; i < info.links; i++) {
        const struct sk__sblink *l = &c->links[i];
        assert_int_equal(l->entries, entries);
        assert_true(l->error == rate);
        if (i + 1 < info.links)
            assert_int_equal(l->count, l->entries); /* full before the next came */
        cap += entries;
        bytes += l->bytes;
        size += 64 + l->bytes;
        entries *= 3;
        rate *= 0.5;
    }
    assert_int_equal(info.capacity, cap);
    assert_int_equal(info.array_bytes, bytes);
    assert_int_equal(info.redisbloom_size, size);
    sk_sbchain_free(c);
}

static void test_full_chain_unchanged(void **state)
{
    sk_sbchain *c = make(50, 0.01, 0, 1);
    unsigned char buf[64];
    uint64_t i = 0;
    int rc;
    while ((rc = sk_sbchain_add(c, buf, item(0, i, 0, buf))) != SK_EFULL)
        i++;
    uint64_t before = digest(c);
    assert_int_equal(c->count, 50);
    assert_int_equal(sk_sbchain_add(c, buf, item(0, i + 1, 0, buf)), SK_EFULL);
    assert_int_equal(sk_sbchain_add(c, buf, item(0, 3, 0, buf)), 0); /* present: no error */
    assert_int_equal(digest(c), before);
    assert_int_equal(c->nlinks, 1);
    sk_sbchain_free(c);
}

static void test_budget(void **state)
{
    sk_sbchain *c = make(1000, 0.01, 2, 0);
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    uint64_t limit = info.memory + 5000;
    sk_sbchain_set_max_memory(c, limit);
    unsigned char buf[64];
    uint64_t i = 0;
    int rc;
    while ((rc = sk_sbchain_add(c, buf, item(0, i, 0, buf))) != SK_EBUDGET) {
        assert_true(rc == 0 || rc == 1);
        i++;
    }
    sk_sbchain_get_info(c, &info);
    assert_true(info.memory <= limit);
    uint64_t before = digest(c);
    assert_int_equal(sk_sbchain_add(c, buf, item(0, i, 0, buf)), SK_EBUDGET);
    assert_int_equal(digest(c), before);
    sk_sbchain_set_max_memory(c, 0);
    assert_int_equal(sk_sbchain_add(c, buf, item(0, i, 0, buf)), 1);
    sk_sbchain_free(c);

    sk_sbchain_options o = {.capacity = 100000, .max_memory = 1000};
    assert_int_equal(sk_sbchain_create(&c, &o), SK_EBUDGET);
    assert_null(c);
}

static void test_allocation_failures(void **state)
{
    unsigned char buf[64];
    /* create, growth, copy: each allocation failing in turn */
    for (long fail = 0;; fail++) {
        struct counting k = {.fail_at = fail};
        sk_allocator a = {counting_alloc, counting_free, &k, 0};
        sk_sbchain_options o = {.capacity = 10, .allocator = &a};
        sk_sbchain *c = NULL, *copy = NULL;
        int rc = sk_sbchain_create(&c, &o);
        if (rc == SK_ENOMEM) {
            assert_null(c);
            assert_int_equal(k.out, 0);
            continue;
        }
        assert_int_equal(rc, SK_OK);
        uint64_t i = 0;
        for (; i < 200; i++) {
            uint64_t before = digest(c);
            rc = sk_sbchain_add(c, buf, item(0, i, 0, buf));
            if (rc == SK_ENOMEM) {
                assert_int_equal(digest(c), before);
                break;
            }
        }
        if (i == 200) {
            rc = sk_sbchain_copy(&copy, c);
            if (rc == SK_OK) {
                assert_same_chain(c, copy);
                sk_sbchain_free(copy);
                sk_sbchain_free(c);
                assert_int_equal(k.out, 0);
                break; /* nothing failed */
            }
            assert_int_equal(rc, SK_ENOMEM);
            assert_null(copy);
        }
        sk_sbchain_free(c);
        assert_int_equal(k.out, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bits_as_redisbloom),
        cmocka_unit_test(test_old_chains),
        cmocka_unit_test(test_options_and_info),
        cmocka_unit_test(test_no_false_negatives_and_fp_rate),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_full_chain_unchanged),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
