/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_store.c: the registers' lists of a sliding-window HyperLogLog,
 * read and written the same way whether the sketch is sparse or dense.
 *
 * Most sketches that a program keeps many of (one per source, per page,
 * per key) see few items: a sparse sketch holds only its entries, 8 bytes
 * a pair (the register, the pair), sorted, and costs nothing before its
 * first add. Past a quarter of m entries (2m bytes, a third of the dense
 * tables alone), an insertion's move of the entries after it would cost
 * more than the tables save, and the sketch turns dense (window_pool.c).
 */
#include <string.h>

#include "common/alloc.h"
#include "hll/hll_internal.h"
#include "window_hll/window_hll_internal.h"

static const uint32_t no_pairs[1];

static uint32_t sparse_limit(const sk_window_hll *w)
{
    return sk__hll_registers(w->precision) / 4;
}

static size_t sparse_bytes(uint32_t cap)
{
    return (size_t)cap * 2 * sizeof(uint32_t);
}

/* The first entry of register idx or of a later one. */
static uint32_t lower_bound(const sk_window_hll *w, uint32_t idx)
{
    uint32_t lo = 0, hi = w->sp_len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (w->sp[mid] < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const uint32_t *sk__wh_pairs(const sk_window_hll *w, uint32_t idx, unsigned *n)
{
    if (w->block != NULL) {
        *n = w->len[idx];
        return *n ? w->pool.words + w->block[idx] : no_pairs;
    }
    uint32_t a = lower_bound(w, idx), b = a;
    while (b < w->sp_len && w->sp[b] == idx)
        b++;
    *n = b - a;
    return *n ? w->sp + w->sp_cap + a : no_pairs;
}

int sk__wh_next(const sk_window_hll *w, uint32_t *cursor, uint32_t *idx, const uint32_t **pairs,
                unsigned *n)
{
    if (w->block != NULL) {
        uint32_t m = sk__hll_registers(w->precision);
        for (uint32_t j = *cursor; j < m; j++) {
            if (w->len[j] != 0) {
                *idx = j;
                *n = w->len[j];
                *pairs = w->pool.words + w->block[j];
                *cursor = j + 1;
                return 1;
            }
        }
        *cursor = m;
        return 0;
    }
    /* Sparse: the cursor is an entry. */
    uint32_t a = *cursor, b = a;
    if (a >= w->sp_len)
        return 0;
    while (b < w->sp_len && w->sp[b] == w->sp[a])
        b++;
    *idx = w->sp[a];
    *n = b - a;
    *pairs = w->sp + w->sp_cap + a;
    *cursor = b;
    return 1;
}

/* Every entry into the dense tables, or nothing changed. */
static int make_dense(sk_window_hll *w)
{
    sk_window_hll d = *w;
    d.sp = NULL;
    d.sp_len = d.sp_cap = 0;
    d.pairs = 0;
    int rc = sk__wh_dense_init(&d);
    uint32_t cursor = 0, idx;
    const uint32_t *pairs;
    unsigned n;
    while (rc == SK_OK && sk__wh_next(w, &cursor, &idx, &pairs, &n))
        rc = sk__wh_dense_store(&d, idx, pairs, n);
    if (rc != SK_OK) {
        sk__wh_dense_free(&d);
        return rc;
    }
    sk__wh_storage_free(w);
    *w = d;
    return SK_OK;
}

/* Entries [a, b) replaced by n of register idx, in new arrays of cap. */
static int sparse_move(sk_window_hll *w, uint32_t cap, uint32_t a, uint32_t b, uint32_t idx,
                       const uint32_t *pairs, unsigned n)
{
    if (w->max_memory != 0 && sizeof *w + sparse_bytes(cap) > w->max_memory)
        return SK_EBUDGET;
    uint32_t *sp = sk__alloc(&w->alloc, sparse_bytes(cap));
    if (sp == NULL)
        return SK_ENOMEM;
    uint32_t tail = w->sp_len - b, len = a + n + tail;
    for (int half = 0; half < 2 && w->sp != NULL; half++) {
        uint32_t *to = sp + (half ? cap : 0);
        const uint32_t *from = w->sp + (half ? w->sp_cap : 0);
        if (a > 0)
            memcpy(to, from, (size_t)a * sizeof *to);
        if (tail > 0)
            memcpy(to + a + n, from + b, (size_t)tail * sizeof *to);
    }
    for (unsigned i = 0; i < n; i++) {
        sp[a + i] = idx;
        sp[cap + a + i] = pairs[i];
    }
    if (w->sp != NULL)
        sk__free(&w->alloc, w->sp, sparse_bytes(w->sp_cap));
    w->sp = sp;
    w->sp_cap = cap;
    w->sp_len = len;
    return SK_OK;
}

static int sparse_store(sk_window_hll *w, uint32_t idx, const uint32_t *pairs, unsigned n)
{
    uint32_t a = lower_bound(w, idx), b = a;
    while (b < w->sp_len && w->sp[b] == idx)
        b++;
    uint64_t len = (uint64_t)w->sp_len - (b - a) + n;
    if (len > sparse_limit(w)) {
        int rc = make_dense(w);
        return rc == SK_OK ? sk__wh_dense_store(w, idx, pairs, n) : rc;
    }
    if (len > w->sp_cap) {
        uint64_t cap = w->sp_cap + w->sp_cap / 2;
        cap = cap < 16 ? 16 : cap;
        cap = cap < len ? len : cap;
        cap = cap > sparse_limit(w) ? sparse_limit(w) : cap;
        int rc = sparse_move(w, (uint32_t)cap, a, b, idx, pairs, n);
        if (rc == SK_EBUDGET)
            rc = sparse_move(w, (uint32_t)len, a, b, idx, pairs, n);
        if (rc == SK_OK)
            w->pairs = w->pairs - (b - a) + n;
        return rc;
    }
    if (w->sp == NULL)
        return SK_OK; /* nothing stored, and nothing to store */
    uint32_t *regs = w->sp, *list = w->sp + w->sp_cap, tail = w->sp_len - b;
    memmove(regs + a + n, regs + b, (size_t)tail * sizeof *regs);
    memmove(list + a + n, list + b, (size_t)tail * sizeof *list);
    for (unsigned i = 0; i < n; i++) {
        regs[a + i] = idx;
        list[a + i] = pairs[i];
    }
    w->sp_len = (uint32_t)len;
    w->pairs = w->pairs - (b - a) + n;
    return SK_OK;
}

int sk__wh_store(sk_window_hll *w, uint32_t idx, const uint32_t *pairs, unsigned n)
{
    if (w->block != NULL)
        return sk__wh_dense_store(w, idx, pairs, n);
    return sparse_store(w, idx, pairs, n);
}

void sk__wh_rebase(sk_window_hll *w, uint64_t base)
{
    uint32_t shift = (uint32_t)(base - w->base) << SK__WH_RANK_BITS;
    uint64_t kept = 0;
    if (w->block != NULL) {
        uint32_t m = sk__hll_registers(w->precision);
        for (uint32_t j = 0; j < m; j++) {
            if (w->len[j] == 0)
                continue;
            uint32_t *list = w->pool.words + w->block[j];
            unsigned n = 0;
            for (unsigned i = 0; i < w->len[j]; i++)
                if (sk__wh_pair_slot(w, list[i]) >= base)
                    list[n++] = list[i] - shift;
            w->len[j] = (uint8_t)n;
            kept += n;
        }
    } else {
        uint32_t n = 0, *list = w->sp + w->sp_cap;
        for (uint32_t i = 0; i < w->sp_len; i++) {
            if (sk__wh_pair_slot(w, list[i]) >= base) {
                w->sp[n] = w->sp[i];
                list[n++] = list[i] - shift;
            }
        }
        w->sp_len = n;
        kept = n;
    }
    w->pairs = kept;
    w->base = base;
}

size_t sk__wh_memory(const sk_window_hll *w)
{
    if (w->block != NULL)
        return sk__wh_dense_memory(w);
    return w->sp != NULL ? sparse_bytes(w->sp_cap) : 0;
}

void sk__wh_storage_free(sk_window_hll *w)
{
    if (w->block != NULL)
        sk__wh_dense_free(w);
    if (w->sp != NULL)
        sk__free(&w->alloc, w->sp, sparse_bytes(w->sp_cap));
    w->sp = NULL;
    w->sp_len = w->sp_cap = 0;
    w->pairs = 0;
}
