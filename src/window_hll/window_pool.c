/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_pool.c: where a dense sliding-window HyperLogLog keeps its
 * registers' lists: one array of 32-bit pairs cut into blocks of a few
 * fixed sizes (window_store.c keeps small sketches sparse until then).
 *
 * Most registers hold a handful of pairs (about log2(n)/2 for n distinct
 * items), so a block per register from the caller's allocator would spend
 * more on its header than on its pairs, and a list per register in one
 * sorted array would move every later register on each insertion. Blocks
 * from one array cost a 4-byte offset, a length and a class per register;
 * a freed block goes on its class's free list and is reused before the
 * array grows. As lists grow together, small blocks pile up on their free
 * lists; so before the array grows, if an eighth of it is free, the lists
 * are packed to its front instead, each in the smallest class that holds
 * it. The array grows by a quarter (moved with the allocator's alloc and
 * free, which have no realloc) and never shrinks while the sketch lives:
 * a growing sketch holds about 1.5 times its pairs' bytes.
 */
#include <string.h>

#include "common/alloc.h"
#include "hll/hll_internal.h"
#include "window_hll/window_hll_internal.h"

const uint8_t sk__wh_class_pairs[SK__WH_CLASSES] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

#define NO_FREE_BLOCK UINT32_MAX

static unsigned class_for(unsigned n)
{
    unsigned c = 0;
    while (sk__wh_class_pairs[c] < n)
        c++;
    return c;
}

static size_t table_bytes(const sk_window_hll *w)
{
    return (size_t)sk__hll_registers(w->precision) * (sizeof *w->block + 2);
}

size_t sk__wh_dense_memory(const sk_window_hll *w)
{
    return table_bytes(w) + (size_t)w->pool.capacity * sizeof(uint32_t);
}

int sk__wh_dense_init(sk_window_hll *w)
{
    uint32_t m = sk__hll_registers(w->precision);
    uint8_t *tables = sk__alloc(&w->alloc, table_bytes(w));
    if (tables == NULL)
        return SK_ENOMEM;
    w->block = (uint32_t *)tables;
    w->len = tables + (size_t)m * sizeof *w->block;
    w->cls = w->len + m;
    memset(w->block, 0, (size_t)m * sizeof *w->block);
    memset(w->len, 0, m);
    memset(w->cls, SK__WH_NO_BLOCK, m);
    memset(&w->pool, 0, sizeof w->pool);
    for (unsigned c = 0; c < SK__WH_CLASSES; c++)
        w->pool.free_head[c] = NO_FREE_BLOCK;
    return SK_OK;
}

void sk__wh_dense_free(sk_window_hll *w)
{
    if (w->block != NULL)
        sk__free(&w->alloc, w->block, table_bytes(w));
    if (w->pool.words != NULL)
        sk__free(&w->alloc, w->pool.words, (size_t)w->pool.capacity * sizeof(uint32_t));
    w->block = NULL;
    w->pool.words = NULL;
    w->pool.capacity = w->pool.used = 0;
}

/* order[0..n) sorted by the registers' block offsets, with tmp beside it:
 * three passes of a radix sort on 11 bits. */
static void sort_by_block(const sk_window_hll *w, uint32_t *order, uint32_t *tmp, uint32_t n)
{
    for (unsigned shift = 0; shift < 33; shift += 11) {
        uint32_t count[2049] = {0};
        for (uint32_t i = 0; i < n; i++)
            count[(w->block[order[i]] >> shift & 2047) + 1]++;
        for (unsigned d = 1; d < 2049; d++)
            count[d] += count[d - 1];
        for (uint32_t i = 0; i < n; i++)
            tmp[count[w->block[order[i]] >> shift & 2047]++] = order[i];
        memcpy(order, tmp, (size_t)n * sizeof *order);
    }
}

/* Moves every list to the front of the array, in the order of their
 * blocks, so that each one moves down over space already copied from:
 * the packed sizes of the blocks before one never pass their old sizes. */
static int compact(sk_window_hll *w)
{
    struct sk__wh_pool *pool = &w->pool;
    uint32_t m = sk__hll_registers(w->precision), n = 0;
    uint32_t *order = sk__alloc(&w->alloc, (size_t)m * 2 * sizeof *order);
    if (order == NULL)
        return SK_ENOMEM;
    for (uint32_t j = 0; j < m; j++) {
        if (w->cls[j] == SK__WH_NO_BLOCK)
            continue;
        if (w->len[j] == 0)
            w->cls[j] = SK__WH_NO_BLOCK;
        else
            order[n++] = j;
    }
    sort_by_block(w, order, order + m, n);
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = order[i];
        unsigned c = class_for(w->len[j]);
        memmove(pool->words + at, pool->words + w->block[j], (size_t)w->len[j] * sizeof(uint32_t));
        w->block[j] = at;
        w->cls[j] = (uint8_t)c;
        at += sk__wh_class_pairs[c];
    }
    pool->used = at;
    pool->free_words = 0;
    for (unsigned c = 0; c < SK__WH_CLASSES; c++)
        pool->free_head[c] = NO_FREE_BLOCK;
    sk__free(&w->alloc, order, (size_t)m * 2 * sizeof *order);
    return SK_OK;
}

/* Room for `need` more words at the end of the array. */
static int grow(sk_window_hll *w, uint32_t need)
{
    struct sk__wh_pool *pool = &w->pool;
    if (pool->capacity - pool->used >= need)
        return SK_OK;
    /* A failed packing only means growing instead. */
    if (pool->free_words >= pool->used / 8 && compact(w) == SK_OK &&
        pool->capacity - pool->used >= need)
        return SK_OK;
    uint64_t want = (uint64_t)pool->used + need;
    uint64_t capacity = pool->capacity + pool->capacity / 4;
    if (capacity < want)
        capacity = want;
    if (capacity < 1024)
        capacity = 1024;
    if (capacity > UINT32_MAX)
        capacity = UINT32_MAX;
    if (capacity < want)
        return SK_ETOOLARGE;
    size_t grown = table_bytes(w) + (size_t)capacity * sizeof(uint32_t);
    if (w->max_memory != 0 && grown + sizeof *w > w->max_memory) {
        /* Short of the growth rule's size, exactly what is needed may fit. */
        capacity = want;
        grown = table_bytes(w) + (size_t)capacity * sizeof(uint32_t);
        if (grown + sizeof *w > w->max_memory)
            return SK_EBUDGET;
    }
    uint32_t *words = sk__alloc(&w->alloc, (size_t)capacity * sizeof(uint32_t));
    if (words == NULL)
        return SK_ENOMEM;
    if (pool->words != NULL) {
        memcpy(words, pool->words, (size_t)pool->used * sizeof(uint32_t));
        sk__free(&w->alloc, pool->words, (size_t)pool->capacity * sizeof(uint32_t));
    }
    pool->words = words;
    pool->capacity = (uint32_t)capacity;
    return SK_OK;
}

/* Makes register idx's block hold at least n pairs, moving its list if it
 * must (and freeing the old block): SK_OK, or SK_ENOMEM or SK_EBUDGET with
 * nothing changed. */
static int reserve(sk_window_hll *w, uint32_t idx, unsigned n)
{
    unsigned old = w->cls[idx];
    if (old != SK__WH_NO_BLOCK && sk__wh_class_pairs[old] >= n)
        return SK_OK;
    unsigned c = class_for(n);
    struct sk__wh_pool *pool = &w->pool;
    uint32_t at = pool->free_head[c];
    if (at != NO_FREE_BLOCK) {
        pool->free_head[c] = pool->words[at];
        pool->free_words -= sk__wh_class_pairs[c];
    } else {
        int rc = grow(w, sk__wh_class_pairs[c]);
        if (rc != SK_OK)
            return rc;
        at = pool->used;
        pool->used += sk__wh_class_pairs[c];
    }
    /* Growing may have packed the array, moving this register's block. */
    old = w->cls[idx];
    if (old != SK__WH_NO_BLOCK) {
        memcpy(pool->words + at, pool->words + w->block[idx],
               (size_t)w->len[idx] * sizeof(uint32_t));
        pool->words[w->block[idx]] = pool->free_head[old];
        pool->free_head[old] = w->block[idx];
        pool->free_words += sk__wh_class_pairs[old];
    }
    w->block[idx] = at;
    w->cls[idx] = (uint8_t)c;
    return SK_OK;
}

int sk__wh_dense_store(sk_window_hll *w, uint32_t idx, const uint32_t *pairs, unsigned n)
{
    if (n > 0) {
        int rc = reserve(w, idx, n);
        if (rc != SK_OK)
            return rc;
        memcpy(w->pool.words + w->block[idx], pairs, (size_t)n * sizeof *pairs);
    }
    w->pairs = w->pairs - w->len[idx] + n;
    w->len[idx] = (uint8_t)n;
    return SK_OK;
}
