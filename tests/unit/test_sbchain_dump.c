/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sbchain_dump.c: RedisBloom's scalable Bloom chain taken out and put
 * back, with cmocka: BF.SCANDUMP's header and pieces restored by
 * BF.LOADCHUNK (of every size, out of order, retried, and headers that
 * RedisBloom refuses), and the RDB fields of every encoding version
 * (RedisBloom 1.x's included), corrupt ones refused, allocation failures
 * without leaks, and a chain saved while restoring. The filter itself is
 * test_sbchain.c's; the helpers both use, sbchain_test_util.c's.
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

#include "common/format.h"
#include "sbchain/sbchain_internal.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "sbchain_test_util.h"

/* ---- BF.SCANDUMP and BF.LOADCHUNK ------------------------------------ */

static sk_sbchain *filled(uint64_t n)
{
    sk_sbchain *c = make(100, 0.01, 2, 0);
    unsigned char buf[64];
    for (uint64_t i = 0; i < n; i++)
        sk_sbchain_add(c, buf, item(1, i, 4, buf));
    return c;
}

static void test_dump_restore(void **state)
{
    sk_sbchain *c = filled(2000);
    size_t hl;
    uint8_t *h = header_of(c, &hl);
    assert_int_equal(hl, SK__SB_HDR_SIZE + c->nlinks * SK__SB_LINK_SIZE);
    assert_int_equal(sk_load_le32(h + SK__SB_HDR_OFF_NFILTERS), c->nlinks);
    assert_int_equal(sk_load_le32(h + SK__SB_HDR_OFF_OPTIONS), 5); /* NOROUND | FORCE64 */
    const size_t sizes[] = {1, 7, 64, 1000, 1 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        sk_sbchain *r = NULL;
        assert_int_equal(sk_sbchain_restore_begin(&r, h, hl, 0, NULL), SK_OK);
        uint64_t it = 1, pieces = 0;
        const void *p;
        size_t len;
        while (sk_sbchain_dump_piece(c, &it, sizes[s], &p, &len) == 1) {
            assert_true(sk_sbchain_restoring(r));
            assert_int_equal(sk_sbchain_add(r, "x", 1), SK_EINCOMPAT);
            assert_true(len <= sizes[s]);
            assert_int_equal(sk_sbchain_restore_piece(r, it, p, len), SK_OK);
            if (pieces++ == 2) /* a retried piece is taken again */
                assert_int_equal(sk_sbchain_restore_piece(r, it, p, len), SK_OK);
        }
        assert_false(sk_sbchain_restoring(r));
        assert_same_chain(c, r);
        assert_int_equal(sk_sbchain_restore_piece(r, 2, "x", 1), SK_EINCOMPAT);
        assert_int_equal(sk_sbchain_add(r, "new item", 8), !sk_sbchain_contains(c, "new item", 8));
        sk_sbchain_free(r);
    }

    /* pieces out of order or too big */
    sk_sbchain *r = NULL;
    assert_int_equal(sk_sbchain_restore_begin(&r, h, hl, 0, NULL), SK_OK);
    uint8_t piece[4096] = {0};
    uint64_t first = c->links[0].bytes;
    assert_int_equal(sk_sbchain_restore_piece(r, 1 + 10 + 5, piece, 5), SK_ECORRUPT); /* gap */
    assert_int_equal(sk_sbchain_restore_piece(r, 5, piece, 5), SK_ECORRUPT); /* before 1 */
    assert_int_equal(sk_sbchain_restore_piece(r, 1, piece, 0), SK_ECORRUPT);
    assert_int_equal(sk_sbchain_restore_piece(r, 1 + first + 1, piece, first + 1),
                     SK_ECORRUPT); /* across two links */
    assert_int_equal(sk_sbchain_restore_piece(r, 1 + first, piece, first), SK_OK);
    assert_int_equal(sk_sbchain_restore_piece(r, UINT64_MAX, piece, 8), SK_ECORRUPT);
    assert_true(sk_sbchain_restoring(r));
    sk_sbchain_free(r);

    /* headers RedisBloom refuses, and ours */
    struct { size_t off; int width; uint64_t value; } bad[] = {
        {SK__SB_HDR_OFF_NFILTERS, 4, 0},
        {SK__SB_HDR_OFF_NFILTERS, 4, 99},
        {SK__SB_HDR_OFF_OPTIONS, 4, 16},
        {SK__SB_HDR_OFF_SIZE, 8, 1},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_SIZE, 8, 0},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_ERROR, 8, 0},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_ERROR, 8, UINT64_C(0x3ff0000000000000)}, /* 1.0 */
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_ERROR, 8, UINT64_C(0x7ff8000000000000)}, /* NaN */
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_BPE, 8, UINT64_C(0x7ff0000000000000)},   /* inf */
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_BITS, 8, 8},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_BYTES, 8, 0},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_HASHES, 4, 9},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_N2, 1, 64},
        {SK__SB_HDR_SIZE + SK__SB_LINK_OFF_N2, 1, 20}, /* 2^20 > bits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *x = malloc(hl);
        memcpy(x, h, hl);
        if (bad[i].width == 8)
            sk_store_le64(x + bad[i].off, bad[i].value);
        else if (bad[i].width == 4)
            sk_store_le32(x + bad[i].off, (uint32_t)bad[i].value);
        else
            x[bad[i].off] = (uint8_t)bad[i].value;
        assert_int_equal(sk_sbchain_restore_begin(&r, x, hl, 0, NULL), SK_ECORRUPT);
        assert_null(r);
        free(x);
    }
    /* a link past our limit, consistent otherwise */
    uint8_t *x = malloc(hl);
    memcpy(x, h, hl);
    sk_store_le64(x + SK__SB_HDR_SIZE + SK__SB_LINK_OFF_BYTES, SK__SB_MAX_LINK_BYTES + 8);
    sk_store_le64(x + SK__SB_HDR_SIZE + SK__SB_LINK_OFF_BITS, (SK__SB_MAX_LINK_BYTES + 8) * 8);
    assert_int_equal(sk_sbchain_restore_begin(&r, x, hl, 0, NULL), SK_ECORRUPT);
    free(x);
    assert_int_equal(sk_sbchain_restore_begin(&r, h, hl - 1, 0, NULL), SK_ECORRUPT);
    assert_int_equal(sk_sbchain_restore_begin(&r, h, 10, 0, NULL), SK_ECORRUPT);
    assert_int_equal(sk_sbchain_restore_begin(&r, h, hl, 1000, NULL), SK_EBUDGET);
    assert_null(r);
    free(h);
    sk_sbchain_free(c);
}

/* ---- the RDB fields ------------------------------------------------------ */

/* A value as Redis keeps it: a sequence of typed fields. */
enum kind { F_UNSIGNED, F_DOUBLE, F_STRING };
struct field {
    enum kind kind;
    uint64_t u;
    double d;
    uint8_t *s;
    size_t len;
};
struct fields {
    struct field f[4096];
    size_t n, pos;
};

static void put(struct fields *fs, struct field f)
{
    assert_true(fs->n < sizeof fs->f / sizeof fs->f[0]);
    fs->f[fs->n++] = f;
}
static void save_u(void *ctx, uint64_t v) { put(ctx, (struct field){.kind = F_UNSIGNED, .u = v}); }
static void save_s(void *ctx, int64_t v) { fail_msg("a signed field %lld", (long long)v); }
static void save_d(void *ctx, double v) { put(ctx, (struct field){.kind = F_DOUBLE, .d = v}); }
static void save_str(void *ctx, const void *data, size_t len)
{
    uint8_t *s = malloc(len ? len : 1);
    assert_non_null(s);
    memcpy(s, data, len);
    put(ctx, (struct field){.kind = F_STRING, .s = s, .len = len});
}

/* The next field, if it is of the kind asked for (Redis's loader would
 * fail as well): SK_ETRUNCATED when none is left. */
static const struct field *next(struct fields *fs, enum kind kind, int *rc)
{
    if (fs->pos == fs->n) {
        *rc = SK_ETRUNCATED;
        return NULL;
    }
    const struct field *f = &fs->f[fs->pos++];
    *rc = f->kind == kind ? SK_OK : SK_EFORMAT;
    return *rc == SK_OK ? f : NULL;
}
static int load_u(void *ctx, uint64_t *out)
{
    int rc;
    const struct field *f = next(ctx, F_UNSIGNED, &rc);
    if (f)
        *out = f->u;
    return rc;
}
static int load_s(void *ctx, int64_t *out) { (void)ctx; (void)out; return SK_EFORMAT; }
static int load_d(void *ctx, double *out)
{
    int rc;
    const struct field *f = next(ctx, F_DOUBLE, &rc);
    if (f)
        *out = f->d;
    return rc;
}
static int load_str(void *ctx, const void **data, size_t *len)
{
    int rc;
    const struct field *f = next(ctx, F_STRING, &rc);
    if (f) {
        *data = f->s;
        *len = f->len;
    }
    return rc;
}

static struct fields *fields_of(const sk_sbchain *c)
{
    struct fields *fs = calloc(1, sizeof *fs);
    assert_non_null(fs);
    sk_rdb_writer w = {fs, save_u, save_s, save_d, save_str};
    sk_sbchain_save_redisbloom(c, &w);
    return fs;
}

static void fields_free(struct fields *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->f[i].s);
    free(fs);
}

static void drop_field(struct fields *fs, size_t i)
{
    free(fs->f[i].s);
    memmove(&fs->f[i], &fs->f[i + 1], (fs->n - i - 1) * sizeof fs->f[0]);
    fs->n--;
}

static int load(sk_sbchain **out, struct fields *fs, int encver, uint64_t max_memory,
                const sk_allocator *a)
{
    fs->pos = 0;
    sk_rdb_reader r = {fs, load_u, load_s, load_d, load_str};
    return sk_sbchain_load_redisbloom(out, &r, encver, max_memory, a);
}

/* The index of link i's first field in an encver-4 sequence. */
#define CHAIN_FIELDS 4
#define LINK_FIELDS 8
#define LINK_AT(i) (CHAIN_FIELDS + (i) * LINK_FIELDS)
enum { L_ENTRIES, L_ERROR, L_HASHES, L_BPE, L_BITS, L_N2, L_ARRAY, L_SIZE };

static void test_rdb_roundtrip(void **state)
{
    sk_sbchain *c = make(100, 0.01, 3, 0);
    unsigned char buf[64];
    for (uint64_t i = 0; i < 1500; i++)
        sk_sbchain_add(c, buf, item(0, i, 8, buf));
    struct fields *fs = fields_of(c);
    assert_int_equal(fs->n, CHAIN_FIELDS + c->nlinks * LINK_FIELDS);
    assert_int_equal(fs->f[0].u, c->count);
    assert_int_equal(fs->f[1].u, c->nlinks);
    assert_int_equal(fs->f[2].u, 5); /* complete: no progress above 32 bits */
    assert_int_equal(fs->f[3].u, 3);
    for (uint32_t i = 0; i < c->nlinks; i++) {
        const struct field *f = &fs->f[LINK_AT(i)];
        assert_int_equal(f[L_ENTRIES].u, c->links[i].entries);
        assert_true(f[L_ERROR].d == c->links[i].error);
        assert_int_equal(f[L_BITS].u, f[L_ARRAY].len * 8);
        assert_memory_equal(f[L_ARRAY].s, c->links[i].bf, f[L_ARRAY].len);
        assert_int_equal(f[L_SIZE].u, c->links[i].count);
    }
    for (int encver = 2; encver <= 4; encver++) {
        struct fields *v = fields_of(c);
        if (encver < 4)
            drop_field(v, 3); /* no growth: 2 */
        sk_sbchain *r = NULL;
        assert_int_equal(load(&r, v, encver, 0, NULL), SK_OK);
        assert_int_equal(v->pos, v->n); /* every field read */
        sk_sbchain_info info;
        sk_sbchain_get_info(r, &info);
        assert_int_equal(info.expansion, encver < 4 ? 2 : 3);
        if (encver == 4)
            assert_same_chain(c, r);
        for (uint64_t i = 0; i < 1500; i++)
            assert_true(sk_sbchain_contains(r, buf, item(0, i, 8, buf)));
        sk_sbchain_free(r);
        fields_free(v);
    }
    sk_sbchain *r = NULL;
    assert_int_equal(load(&r, fs, 5, 0, NULL), SK_EVERSION);
    assert_int_equal(load(&r, fs, -1, 0, NULL), SK_EVERSION);
    assert_int_equal(load(&r, fs, 4, 1000, NULL), SK_EBUDGET);
    assert_null(r);
    fields_free(fs);
    sk_sbchain_free(c);
}

/* RedisBloom 1.x's chains: encver 1 has no options (0: MurmurHash2 and
 * power-of-2 links) and no growth (2); encver 0 has no bits or n2 either. */
static void test_rdb_old_versions(void **state)
{
    sk_sbchain *c = restore_empty(OLD_HEADER, sizeof OLD_HEADER);
    unsigned char buf[64];
    for (uint64_t i = 0; i < 20000; i++)
        sk_sbchain_add(c, buf, item(0, i, 0, buf));
    struct fields *fs = fields_of(c);
    drop_field(fs, 3);
    drop_field(fs, 2);
    sk_sbchain *r = NULL;
    assert_int_equal(load(&r, fs, 1, 0, NULL), SK_OK);
    assert_int_equal(digest(r), OLD_DIGEST);
    sk_sbchain_free(r);
    fields_free(fs);
    sk_sbchain_free(c);

    /* encver 0: bits = entries x bpe = 64 x 8 */
    fs = calloc(1, sizeof *fs);
    assert_non_null(fs);
    uint8_t array[64] = {0};
    save_u(fs, 0);
    save_u(fs, 1);
    save_u(fs, 64);
    save_d(fs, 0.0123);
    save_u(fs, 6); /* ceil(ln 2 x 8) */
    save_d(fs, 8.0);
    save_str(fs, array, sizeof array);
    save_u(fs, 0);
    assert_int_equal(load(&r, fs, 0, 0, NULL), SK_OK);
    assert_int_equal(r->links[0].bits, 512);
    assert_int_equal(r->links[0].n2, 0);
    assert_int_equal(r->options, 0);
    assert_int_equal(r->growth, 2);
    for (uint64_t i = 0; i < 500; i++)
        assert_int_not_equal(sk_sbchain_add(r, buf, item(1, i, 0, buf)), SK_EFULL);
    for (uint64_t i = 0; i < 500; i++)
        assert_true(sk_sbchain_contains(r, buf, item(1, i, 0, buf)));
    assert_true(r->nlinks > 1);
    assert_true(r->links[1].n2 > 0); /* rounded to a power of 2 */
    sk_sbchain_free(r);
    fs->f[6].len = 63; /* 504 bits: not entries x bpe */
    assert_int_equal(load(&r, fs, 0, 0, NULL), SK_ECORRUPT);
    fields_free(fs);
}

static void test_rdb_corrupt(void **state)
{
    sk_sbchain *c = filled(300);
    assert_int_equal(c->nlinks, 2);
    struct fields *fs = fields_of(c);
    const size_t l1 = LINK_AT(1);
    struct { size_t at; uint64_t u; double d; int expect; } bad[] = {
        {0, 7, 0, SK_ECORRUPT},                      /* size: not the links' sum */
        {1, 0, 0, SK_ECORRUPT},                      /* no links */
        {1, SK__SB_MAX_LINKS + 1, 0, SK_ECORRUPT},
        {1, 3, 0, SK_ETRUNCATED},                    /* more links than there are */
        {1, 1, 0, SK_ECORRUPT},                      /* fewer: the sum, then left over */
        {2, 5 | 16, 0, SK_ECORRUPT},                 /* an unknown option */
        {2, 5 | UINT64_C(1) << 40, 0, SK_ECORRUPT},  /* progress past the arrays */
        {l1 + L_ERROR, 0, 0.0, SK_ECORRUPT},
        {l1 + L_ERROR, 0, 1.0, SK_ECORRUPT},
        {l1 + L_ERROR, 0, NAN, SK_ECORRUPT},
        {l1 + L_HASHES, 1, 0, SK_ECORRUPT},
        {l1 + L_HASHES, UINT64_C(1) << 32, 0, SK_ECORRUPT},
        {l1 + L_BPE, 0, NAN, SK_ECORRUPT},
        {l1 + L_BPE, 0, 1e300, SK_ECORRUPT},
        {l1 + L_BITS, 8, 0, SK_ECORRUPT},
        {l1 + L_BITS, 0, 0, SK_ECORRUPT},
        {l1 + L_BITS, (SK__SB_MAX_LINK_BYTES + 8) * 8, 0, SK_ECORRUPT},
        {l1 + L_N2, 64, 0, SK_ECORRUPT},
        {l1 + L_N2, 30, 0, SK_ECORRUPT},             /* 2^30 > bits */
        {l1 + L_ARRAY, 1, 0, SK_ECORRUPT},           /* a byte short */
        {l1 + L_SIZE, 1, 0, SK_ECORRUPT},
        {l1 + L_SIZE, UINT64_MAX, 0, SK_ECORRUPT},   /* the sum overflows */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fields *v = fields_of(c);
        struct field *f = &v->f[bad[i].at];
        if (f->kind == F_DOUBLE)
            f->d = bad[i].d;
        else if (f->kind == F_STRING)
            f->len -= bad[i].u;
        else
            f->u = bad[i].u;
        if (bad[i].at == 1 && bad[i].u == 1)
            v->f[0].u = c->links[0].count; /* the sum right, a link left over */
        struct counting k = {.fail_at = -1};
        sk_allocator a = {counting_alloc, counting_free, &k, 0};
        sk_sbchain *r = NULL;
        int rc = load(&r, v, 4, 0, &a);
        if (rc == SK_OK) {
            assert_true(bad[i].at == 1 && bad[i].u == 1);
            assert_true(v->pos < v->n); /* the caller sees fields left over */
            sk_sbchain_free(r);
        } else {
            if (rc != bad[i].expect)
                fail_msg("case %zu: %d, expected %d", i, rc, bad[i].expect);
            assert_null(r);
        }
        assert_int_equal(k.out, 0);
        fields_free(v);
    }
    /* cut short anywhere, or a field of the wrong kind: the reader's error */
    for (size_t n = 0; n < fs->n; n++) {
        struct fields *v = fields_of(c);
        while (v->n > n)
            drop_field(v, v->n - 1);
        sk_sbchain *r = NULL;
        assert_int_equal(load(&r, v, 4, 0, NULL), SK_ETRUNCATED);
        fields_free(v);
    }
    struct fields *v = fields_of(c);
    v->f[LINK_AT(0) + L_ERROR].kind = F_UNSIGNED;
    sk_sbchain *r = NULL;
    assert_int_equal(load(&r, v, 4, 0, NULL), SK_EFORMAT);
    fields_free(v);
    /* allocation failures: SK_ENOMEM and nothing left */
    for (long fail = 0;; fail++) {
        struct counting k = {.fail_at = fail};
        sk_allocator a = {counting_alloc, counting_free, &k, 0};
        int rc = load(&r, fs, 4, 0, &a);
        if (rc == SK_OK) {
            assert_same_chain(c, r);
            sk_sbchain_free(r);
            assert_int_equal(k.out, 0);
            break;
        }
        assert_int_equal(rc, SK_ENOMEM);
        assert_int_equal(k.out, 0);
    }
    fields_free(fs);
    sk_sbchain_free(c);
}

/* A chain saved while restoring loads still restoring, where it was. */
static void test_rdb_restoring(void **state)
{
    sk_sbchain *c = filled(2000);
    size_t hl;
    uint8_t *h = header_of(c, &hl);
    sk_sbchain *r = NULL;
    assert_int_equal(sk_sbchain_restore_begin(&r, h, hl, 0, NULL), SK_OK);
    uint64_t it = 1;
    const void *p;
    size_t len;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sk_sbchain_dump_piece(c, &it, 100, &p, &len), 1);
        assert_int_equal(sk_sbchain_restore_piece(r, it, p, len), SK_OK);
    }
    /* its dump gives only what came, so a copy of it restores on */
    uint64_t rit = 1;
    uint64_t came = 0;
    while (sk_sbchain_dump_piece(r, &rit, 64, &p, &len) == 1)
        came += len;
    assert_int_equal(came, it - 1);
    struct fields *fs = fields_of(r);
    /* RedisBloom reads the low 32 bits: the options and growth themselves */
    assert_int_equal((uint32_t)fs->f[2].u, 5);
    assert_int_equal((uint32_t)fs->f[3].u, 2);
    assert_int_equal(fs->f[2].u >> 32, 0);
    assert_int_equal(fs->f[3].u >> 32, it); /* it - 1 bytes restored, plus 1 */
    sk_sbchain *back = NULL;
    assert_int_equal(load(&back, fs, 4, 0, NULL), SK_OK);
    assert_true(sk_sbchain_restoring(back));
    assert_int_equal(sk_sbchain_add(back, "x", 1), SK_EINCOMPAT);
    /* a gap is still refused; the rest completes it */
    uint64_t skip = it;
    assert_int_equal(sk_sbchain_dump_piece(c, &skip, 100, &p, &len), 1);
    assert_int_equal(sk_sbchain_dump_piece(c, &skip, 100, &p, &len), 1);
    assert_int_equal(sk_sbchain_restore_piece(back, skip, p, len), SK_ECORRUPT);
    while (sk_sbchain_dump_piece(c, &it, 100, &p, &len) == 1)
        assert_int_equal(sk_sbchain_restore_piece(back, it, p, len), SK_OK);
    assert_false(sk_sbchain_restoring(back));
    assert_same_chain(c, back);
    sk_sbchain_free(back);
    /* progress in the options' upper half too, and past the end */
    fs->f[2].u |= UINT64_C(1) << 32;
    assert_int_equal(load(&back, fs, 4, 0, NULL), SK_ECORRUPT);
    fields_free(fs);
    /* the copy of a restoring chain restores on */
    assert_int_equal(sk_sbchain_copy(&back, r), SK_OK);
    assert_true(sk_sbchain_restoring(back));
    sk_sbchain_free(back);
    sk_sbchain_free(r);
    free(h);
    sk_sbchain_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_restore),
        cmocka_unit_test(test_rdb_roundtrip),
        cmocka_unit_test(test_rdb_old_versions),
        cmocka_unit_test(test_rdb_corrupt),
        cmocka_unit_test(test_rdb_restoring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
