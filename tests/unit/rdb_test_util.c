/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdb_test_util.c: the typed fields of an RDB value in memory, their writer
 * and reader, the counting allocator, and the checks that the RDB tests
 * run over a family (see rdb_test_util.h), compiled into each of them.
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

#include "sketch.h"
#include "rdb_test_util.h"

/* ---- fields, a writer that appends them and a reader over them ---------- */

struct field *push(struct fields *fs, enum kind kind)
{
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 16;
        fs->f = realloc(fs->f, fs->cap * sizeof *fs->f);
        assert_non_null(fs->f);
    }
    fs->f[fs->n] = (struct field){.kind = kind};
    return &fs->f[fs->n++];
}

void w_unsigned(void *ctx, uint64_t v) { push(ctx, K_U)->u = v; }
void w_signed(void *ctx, int64_t v) { push(ctx, K_S)->s = v; }
void w_double(void *ctx, double v) { push(ctx, K_D)->d = v; }

void w_string(void *ctx, const void *data, size_t len)
{
    struct field *f = push(ctx, K_STR);
    f->str = malloc(len ? len : 1);
    assert_non_null(f->str);
    if (len > 0)
        memcpy(f->str, data, len);
    f->len = len;
}

sk_rdb_writer writer(struct fields *fs)
{
    return (sk_rdb_writer){fs, w_unsigned, w_signed, w_double, w_string};
}

void fields_free(struct fields *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->f[i].str);
    free(fs->f);
    *fs = (struct fields){0};
}

struct fields fields_copy(const struct fields *src)
{
    struct fields c = {0};
    for (size_t i = 0; i < src->n; i++) {
        const struct field *f = &src->f[i];
        if (f->kind == K_STR)
            w_string(&c, f->str, f->len);
        else
            *push(&c, f->kind) = *f;
    }
    return c;
}

int fields_equal(const struct fields *a, const struct fields *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct field *x = &a->f[i], *y = &b->f[i];
        if (x->kind != y->kind || x->u != y->u || x->s != y->s ||
            memcmp(&x->d, &y->d, sizeof x->d) != 0 || x->len != y->len ||
            (x->len > 0 && memcmp(x->str, y->str, x->len) != 0))
            return 0;
    }
    return 1;
}

struct reader_state {
    const struct fields *fs;
    size_t at, limit;
};

static const struct field *next_field(struct reader_state *r, enum kind kind, int *rc)
{
    if (r->at >= r->limit || r->at >= r->fs->n) {
        *rc = SK_ETRUNCATED;
        return NULL;
    }
    const struct field *f = &r->fs->f[r->at++];
    *rc = f->kind == kind ? SK_OK : SK_ECORRUPT; /* Redis fails a load of the wrong type */
    return *rc == SK_OK ? f : NULL;
}

static int r_unsigned(void *ctx, uint64_t *out)
{
    int rc;
    const struct field *f = next_field(ctx, K_U, &rc);
    if (f != NULL)
        *out = f->u;
    return rc;
}

static int r_signed(void *ctx, int64_t *out)
{
    int rc;
    const struct field *f = next_field(ctx, K_S, &rc);
    if (f != NULL)
        *out = f->s;
    return rc;
}

static int r_double(void *ctx, double *out)
{
    int rc;
    const struct field *f = next_field(ctx, K_D, &rc);
    if (f != NULL)
        *out = f->d;
    return rc;
}

static int r_string(void *ctx, const void **data, size_t *len)
{
    int rc;
    const struct field *f = next_field(ctx, K_STR, &rc);
    if (f != NULL) {
        *data = f->str;
        *len = f->len;
    }
    return rc;
}

/* ---- an allocator that counts, and fails when told ------------------------ */

static void *t_alloc(void *opaque, size_t size)
{
    struct tally *t = opaque;
    if (t->calls++ == t->fail_at)
        return NULL;
    t->live++;
    t->bytes += size;
    return malloc(size ? size : 1);
}

static void t_free(void *opaque, void *ptr, size_t size)
{
    struct tally *t = opaque;
    if (ptr == NULL)
        return;
    t->live--;
    t->bytes -= size;
    free(ptr);
}

sk_allocator tally_allocator(struct tally *t)
{
    *t = (struct tally){.fail_at = -1};
    return (sk_allocator){t_alloc, t_free, t, 0};
}

/* ---- the checks --------------------------------------------------------------- */

struct fields save_of(const struct family *fam, const void *x)
{
    struct fields fs = {0};
    sk_rdb_writer w = writer(&fs);
    assert_int_equal(fam->save(x, &w), SK_OK);
    return fs;
}

int load_of(const struct family *fam, const struct fields *fs, size_t limit, int encver,
            uint64_t max, const sk_allocator *a, void **out)
{
    struct reader_state st = {fs, 0, limit};
    sk_rdb_reader r = {&st, r_unsigned, r_signed, r_double, r_string};
    return fam->load(out, &r, encver, max, a);
}

void *load_resave(const struct family *fam, const struct fields *fs, int encver)
{
    void *x = NULL;
    assert_int_equal(load_of(fam, fs, SIZE_MAX, encver, 0, NULL, &x), SK_OK);
    assert_non_null(x);
    struct fields again = save_of(fam, x);
    assert_true(fields_equal(fs, &again));
    fields_free(&again);
    return x;
}

int try_mutated(const struct family *fam, const struct fields *m)
{
    struct tally t;
    sk_allocator a = tally_allocator(&t);
    void *x = NULL;
    struct reader_state st = {m, 0, SIZE_MAX};
    sk_rdb_reader r = {&st, r_unsigned, r_signed, r_double, r_string};
    int rc = fam->load(&x, &r, fam->encver, 0, &a);
    /* Fields left unread stop Redis's load at the value's end marker. */
    if (rc == SK_OK && st.at < m->n) {
        fam->destroy(x);
        x = NULL;
        rc = SK_ECORRUPT;
    }
    if (rc == SK_OK) {
        struct fields want = fields_copy(m), got = save_of(fam, x);
        if (fam->normalize != NULL)
            fam->normalize(&want);
        if (!fields_equal(&want, &got)) /* say which field differs */
            for (size_t i = 0; i < want.n && i < got.n; i++)
                if (want.f[i].u != got.f[i].u || want.f[i].s != got.f[i].s ||
                    memcmp(&want.f[i].d, &got.f[i].d, sizeof(double)) != 0)
                    fprintf(stderr, "field %zu: %a %a, %lld %lld\n", i, want.f[i].d,
                            got.f[i].d, (long long)want.f[i].s, (long long)got.f[i].s);
        assert_true(fields_equal(&want, &got));
        fields_free(&want);
        fields_free(&got);
        fam->destroy(x);
    } else {
        assert_null(x);
        assert_true(rc < 0);
    }
    assert_int_equal(t.live, 0);
    assert_int_equal(t.bytes, 0);
    return rc;
}

void sweep(const struct family *fam, const struct fields *good)
{
    static const double dvals[] = {NAN, INFINITY, -INFINITY, 0, -1, 0.5, 1e300};
    for (size_t i = 0; i < good->n; i++) {
        for (int v = 0; v < 12; v++) {
            struct fields m = fields_copy(good);
            struct field *f = &m.f[i];
            if (v == 11) { /* another kind: the reader refuses */
                f->kind = f->kind == K_U ? K_S : K_U;
                assert_int_not_equal(try_mutated(fam, &m), SK_OK);
                fields_free(&m);
                continue;
            }
            switch (f->kind) {
            case K_U: {
                const uint64_t u[] = {0, f->u + 1, f->u - 1, f->u * 2, f->u | UINT64_C(1) << 32,
                                      f->u | UINT64_C(1) << 16, UINT64_MAX, 1, 3, 256, 65536};
                f->u = u[v];
                break;
            }
            case K_S: {
                const int64_t s[] = {0, f->s + 1, f->s - 1, -1, INT64_MAX, INT64_MIN, 1, 2,
                                     f->s * 2, 1 << 20, 7};
                f->s = s[v];
                break;
            }
            case K_D:
                f->d = v < 7 ? dvals[v] : v == 7 ? f->d + 0.5 : v == 8 ? -f->d
                                                  : v == 9 ? f->d * 2 : f->d + 1;
                break;
            case K_STR:
                if (v == 0 && f->len > 0)
                    f->len--;
                else if (v == 1)
                    f->str = realloc(f->str, ++f->len), f->str[f->len - 1] = 0;
                else if (v == 2 && f->len > 0)
                    f->str[0] ^= 1;
                else if (v == 3 && f->len > 0)
                    f->str[f->len - 1] ^= 0x40;
                else if (v == 4 && f->len > 1)
                    f->str[f->len / 2] ^= 0x80;
                break;
            }
            try_mutated(fam, &m);
            fields_free(&m);
        }
    }
    for (size_t limit = 0; limit < good->n; limit++) {
        struct tally t;
        sk_allocator a = tally_allocator(&t);
        void *x = NULL;
        assert_int_equal(load_of(fam, good, limit, fam->encver, 0, &a, &x), SK_ETRUNCATED);
        assert_null(x);
        assert_int_equal(t.live, 0);
    }
    for (long fail = 0;; fail++) {
        struct tally t;
        sk_allocator a = tally_allocator(&t);
        t.fail_at = fail;
        void *x = NULL;
        int rc = load_of(fam, good, SIZE_MAX, fam->encver, 0, &a, &x);
        if (rc == SK_OK) {
            assert_true(t.calls <= fail);
            fam->destroy(x);
            assert_int_equal(t.live, 0);
            break;
        }
        assert_int_equal(rc, SK_ENOMEM);
        assert_int_equal(t.live, 0);
    }
}

void refuse(const struct family *fam, const struct fields *good, size_t i,
            void (*change)(struct field *f, double arg), double arg, int want)
{
    struct fields m = fields_copy(good);
    change(&m.f[i], arg);
    int rc = try_mutated(fam, &m);
    if (want != 0)
        assert_int_equal(rc, want);
    else
        assert_true(rc < 0);
    fields_free(&m);
}
void set_u(struct field *f, double v) { f->u = (uint64_t)v; }
void add_u(struct field *f, double v) { f->u += (uint64_t)(int64_t)v; }
void set_s(struct field *f, double v) { f->s = (int64_t)v; }
void set_d(struct field *f, double v) { f->d = v; }
void add_d(struct field *f, double v) { f->d += v; }
void cut(struct field *f, double v) { f->len -= (size_t)v; }
void flip(struct field *f, double at) { f->str[(size_t)at] ^= 1; }

void budget(const struct family *fam, const struct fields *fs, uint64_t memory)
{
    void *x = NULL;
    assert_int_equal(load_of(fam, fs, SIZE_MAX, fam->encver, memory - 1, NULL, &x), SK_EBUDGET);
    assert_null(x);
    assert_int_equal(load_of(fam, fs, SIZE_MAX, fam->encver, memory, NULL, &x), SK_OK);
    fam->destroy(x);
}

void encvers_refused(const struct family *fam, const struct fields *fs, const int *bad,
                     size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *x = NULL;
        assert_int_equal(load_of(fam, fs, SIZE_MAX, bad[i], 0, NULL, &x), SK_EVERSION);
        assert_null(x);
    }
}
