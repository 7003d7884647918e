/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms.c: the count-min sketch (Cormode and Muthukrishnan, 2005): its
 * dimensions, adds, queries and weighted merges.
 *
 * The algorithm
 * -------------
 * d rows of w counters. An add of an item with count c adds c to one
 * counter per row, the one the row's hash of the item picks; a query reads
 * the same d counters and answers their minimum. Each counter holds the
 * item's own count plus those of the items that share it, so no answer is
 * below the truth. In one row the excess has mean at most N/w for a total
 * N, so by Markov's inequality it passes eN with probability at most
 * 1/(w e) = 1/2 when w = 2/e; the rows hash independently, so all d of them
 * pass it with probability at most 2^-d, which is delta when
 * d = log(delta)/log(1/2). These are RedisBloom's dimensions for
 * CMS.INITBYPROB, computed as it computes them.
 *
 * The mechanics
 * -------------
 * Row r's counter for an item is MurmurHash2(item, seed r) mod w, the
 * counters 32-bit, row r at r x w: RedisBloom's choices, so that both give
 * the same counts for the same stream and a sketch moves between them as
 * its counters. A counter stops at UINT32_MAX instead of wrapping, as
 * RedisBloom's do: an estimate that wrapped would fall below the truth.
 */
#include <math.h>
#include <string.h>

#include "cms_internal.h"
#include "common/murmur2.h"

/* ---- the mathematics ------------------------------------------------------ */

/* Width for an excess of at most error x total in one row with probability
 * 1/2 (Markov), and depth for all rows to exceed it with at most delta. */
static uint64_t width_for_error(double error)
{
    double w = ceil(2 / error);
    return w <= UINT32_MAX ? (uint64_t)w : UINT64_MAX;
}

/* In single precision, as RedisBloom computes it (log10f), so that both
 * pick the same depth where the double quotient sits just past an integer. */
static uint64_t depth_for_delta(double delta)
{
    float ratio = log10f((float)delta) / log10f(0.5f); /* infinite if delta rounds to 0 */
    return ratio <= (float)UINT32_MAX ? (uint64_t)ceil((double)ratio) : UINT64_MAX;
}

/* ---- creation ------------------------------------------------------------- */

int sk__cms_alloc(sk_cms **out, uint32_t width, uint32_t depth, const sk_allocator *a)
{
    *out = NULL;
    if (width == 0 || depth == 0)
        return SK_EINVAL;
    uint64_t cells = (uint64_t)width * depth;
    if (cells > SK_CMS_MAX_CELLS || cells > SIZE_MAX / sizeof(uint32_t))
        return SK_ETOOLARGE;
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    sk_cms *c = sk__zalloc(&alloc, sizeof *c);
    if (c == NULL)
        return SK_ENOMEM;
    c->alloc = alloc;
    c->width = width;
    c->depth = depth;
    c->width_inverse = sk__fastmod_inverse(width);
    c->counters = sk__array_alloc(&c->alloc, (size_t)cells * sizeof(uint32_t), &c->array);
    if (c->counters == NULL) {
        sk__free(&alloc, c, sizeof *c);
        return SK_ENOMEM;
    }
    *out = c;
    return SK_OK;
}

/* One dimension from its explicit value or from its probability bound,
 * never both. */
static int dimension(uint32_t given, double bound, uint64_t (*from_bound)(double),
                     uint32_t *out)
{
    if ((given != 0) == (bound != 0))
        return SK_EINVAL;
    if (given != 0) {
        *out = given;
        return SK_OK;
    }
    if (!(bound > 0 && bound < 1)) /* NaN too */
        return SK_EINVAL;
    uint64_t v = from_bound(bound);
    if (v > UINT32_MAX)
        return SK_ETOOLARGE;
    *out = (uint32_t)v;
    return SK_OK;
}

/* The dimensions the options ask for. */
static int resolve(const sk_cms_options *opts, uint32_t *width, uint32_t *depth)
{
    int rc = dimension(opts->width, opts->error, width_for_error, width);
    return rc == SK_OK ? dimension(opts->depth, opts->delta, depth_for_delta, depth) : rc;
}

/* What a sketch of these dimensions takes with allocator a: its object and
 * its counters, as sk_cms_get_info reports it. */
static uint64_t memory_of(uint32_t width, uint32_t depth, const sk_allocator *a)
{
    uint64_t bytes = (uint64_t)width * depth * sizeof(uint32_t);
    if (bytes > SIZE_MAX)
        return UINT64_MAX;
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    return sizeof(sk_cms) + sk__array_cost(&alloc, (size_t)bytes);
}

int sk_cms_create(sk_cms **out, const sk_cms_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (opts == NULL)
        return SK_EINVAL;
    uint32_t width, depth;
    int rc = resolve(opts, &width, &depth);
    if (rc != SK_OK)
        return rc;
    if ((uint64_t)width * depth > SK_CMS_MAX_CELLS)
        return SK_ETOOLARGE;
    if (opts->max_memory != 0 && memory_of(width, depth, opts->allocator) > opts->max_memory)
        return SK_EBUDGET;
    return sk__cms_alloc(out, width, depth, opts->allocator);
}

uint64_t sk_cms_create_memory(const sk_cms_options *opts)
{
    uint32_t width, depth;
    if (opts == NULL || resolve(opts, &width, &depth) != SK_OK)
        return 0;
    return memory_of(width, depth, opts->allocator);
}

int sk_cms_new(sk_cms **out, uint32_t width, uint32_t depth)
{
    if (out == NULL)
        return SK_EINVAL;
    return sk__cms_alloc(out, width, depth, NULL);
}

void sk_cms_free(sk_cms *c)
{
    if (c == NULL)
        return;
    sk_allocator a = c->alloc;
    sk__array_free(&a, &c->array);
    sk__free(&a, c, sizeof *c);
}

int sk_cms_copy(sk_cms **out, const sk_cms *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__cms_alloc(out, src->width, src->depth, &src->alloc);
    if (rc != SK_OK)
        return rc;
    memcpy((*out)->counters, src->counters, (size_t)sk__cms_cells(src) * sizeof(uint32_t));
    (*out)->total = src->total;
    return SK_OK;
}

int sk_cms_clear(sk_cms *c)
{
    if (c == NULL)
        return SK_EINVAL;
    memset(c->counters, 0, (size_t)sk__cms_cells(c) * sizeof(uint32_t));
    c->total = 0;
    return SK_OK;
}

/* ---- adds and queries ----------------------------------------------------- */

/* Rows taken at once: their counters' indexes are computed first, then the
 * counters read, so that the reads, which miss the cache in a large
 * sketch, are issued together rather than one hash apart. */
#define ROW_GROUP 16

/* The indexes of the item's counters in rows [first, first + n). */
static inline void row_cells(const sk_cms *c, uint32_t first, uint32_t n, const void *data,
                             size_t len, size_t *cells)
{
    for (uint32_t i = 0; i < n; i++)
        cells[i] = (size_t)(first + i) * c->width +
                   sk__cms_mod(c, sk_murmur2(data, len, first + i));
}

int sk_cms_add(sk_cms *c, const void *data, size_t len, uint64_t count, uint32_t *estimate)
{
    if (c == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    uint32_t least = UINT32_MAX;
    size_t cells[ROW_GROUP];
    for (uint32_t first = 0; first < c->depth; first += ROW_GROUP) {
        uint32_t n = c->depth - first < ROW_GROUP ? c->depth - first : ROW_GROUP;
        row_cells(c, first, n, data, len, cells);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t *counter = &c->counters[cells[i]];
            *counter = count > UINT32_MAX - *counter ? UINT32_MAX : *counter + (uint32_t)count;
            if (*counter < least)
                least = *counter;
        }
    }
    c->total = count > UINT64_MAX - c->total ? UINT64_MAX : c->total + count;
    if (estimate != NULL)
        *estimate = least;
    return SK_OK;
}

uint32_t sk_cms_count(const sk_cms *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return 0;
    uint32_t least = UINT32_MAX;
    size_t cells[ROW_GROUP];
    for (uint32_t first = 0; first < c->depth; first += ROW_GROUP) {
        uint32_t n = c->depth - first < ROW_GROUP ? c->depth - first : ROW_GROUP;
        row_cells(c, first, n, data, len, cells);
        for (uint32_t i = 0; i < n; i++)
            if (c->counters[cells[i]] < least)
                least = c->counters[cells[i]];
    }
    return least;
}

/* ---- merges --------------------------------------------------------------- */

/* Cells summed at once into a buffer on the stack, source by source, so
 * that the inner loop is a multiply-add over contiguous counters that the
 * compiler vectorizes. */
#define MERGE_BLOCK 1024

static int64_t weight_of(const int64_t *weights, size_t k)
{
    return weights != NULL ? weights[k] : 1;
}

/* sum of srcs[k] x weights[k] at cell i, or -1 if it leaves [0, UINT32_MAX]
 * (or overflows on the way: a sum of 64-bit products needs no more). */
static int64_t weighted_cell(const sk_cms *const *srcs, const int64_t *weights, size_t n,
                             size_t i)
{
    int64_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t term;
        if (__builtin_mul_overflow((int64_t)srcs[k]->counters[i], weight_of(weights, k), &term) ||
            __builtin_add_overflow(sum, term, &sum))
            return -1;
    }
    return sum <= UINT32_MAX ? sum : -1;
}

/* The weighted sums of cells [base, base + len) into acc; 0 if one leaves
 * [0, UINT32_MAX]. With the weights' magnitudes summing below 2^31, no
 * partial sum can pass 2^32 x 2^31 = 2^63, so the block needs no overflow
 * checks; otherwise each cell is checked on its own. */
static int weighted_block(const sk_cms *const *srcs, const int64_t *weights, size_t n,
                          int small_weights, size_t base, size_t len, int64_t *acc)
{
    if (!small_weights) {
        for (size_t j = 0; j < len; j++)
            if ((acc[j] = weighted_cell(srcs, weights, n, base + j)) < 0)
                return 0;
        return 1;
    }
    memset(acc, 0, len * sizeof *acc);
    for (size_t k = 0; k < n; k++) {
        const uint32_t *in = srcs[k]->counters + base;
        int64_t w = weight_of(weights, k);
        if (w == 1) /* a plain merge: widening adds, without 64-bit multiplies */
            for (size_t j = 0; j < len; j++)
                acc[j] += in[j];
        else
            for (size_t j = 0; j < len; j++)
                acc[j] += (int64_t)in[j] * w;
    }
    uint64_t out_of_range = 0;
    for (size_t j = 0; j < len; j++)
        out_of_range |= (uint64_t)acc[j] >> 32; /* a negative sum has its high bits set */
    return out_of_range == 0;
}

int sk_cms_merge_weighted(sk_cms *dst, const sk_cms *const *srcs, const int64_t *weights,
                          size_t n)
{
    if (dst == NULL || (srcs == NULL && n > 0))
        return SK_EINVAL;
    uint64_t magnitude = 0;
    for (size_t k = 0; k < n; k++) {
        if (srcs[k] == NULL)
            return SK_EINVAL;
        if (srcs[k]->width != dst->width || srcs[k]->depth != dst->depth)
            return SK_EINCOMPAT;
        int64_t w = weight_of(weights, k);
        uint64_t m = w < 0 ? -(uint64_t)w : (uint64_t)w;
        magnitude = m > (UINT64_C(1) << 31) - magnitude ? UINT64_C(1) << 31 : magnitude + m;
    }
    int small_weights = magnitude < (UINT64_C(1) << 31);
    /* The total is a uint64 that saturates; a weighted one must fit an
     * int64 and not be negative, as RedisBloom requires. */
    int64_t total = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t term;
        if (srcs[k]->total > INT64_MAX ||
            __builtin_mul_overflow((int64_t)srcs[k]->total, weight_of(weights, k), &term) ||
            __builtin_add_overflow(total, term, &total))
            return SK_EINVAL;
    }
    if (total < 0)
        return SK_EINVAL;
    /* Checked whole before any counter changes, so that a refused merge
     * leaves dst as it was; a block is summed whole before it is written,
     * so dst may be among srcs. */
    int64_t acc[MERGE_BLOCK];
    size_t cells = (size_t)sk__cms_cells(dst);
    for (size_t base = 0; base < cells; base += MERGE_BLOCK) {
        size_t len = cells - base < MERGE_BLOCK ? cells - base : MERGE_BLOCK;
        if (!weighted_block(srcs, weights, n, small_weights, base, len, acc))
            return SK_EINVAL;
    }
    for (size_t base = 0; base < cells; base += MERGE_BLOCK) {
        size_t len = cells - base < MERGE_BLOCK ? cells - base : MERGE_BLOCK;
        weighted_block(srcs, weights, n, small_weights, base, len, acc);
        for (size_t j = 0; j < len; j++)
            dst->counters[base + j] = (uint32_t)acc[j];
    }
    dst->total = (uint64_t)total;
    return SK_OK;
}

int sk_cms_merge(sk_cms *dst, const sk_cms *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    const sk_cms *srcs[2] = {dst, src};
    return sk_cms_merge_weighted(dst, srcs, NULL, 2);
}

void sk_cms_get_info(const sk_cms *c, sk_cms_info *info)
{
    if (c == NULL || info == NULL)
        return;
    *info = (sk_cms_info){
        .width = c->width,
        .depth = c->depth,
        .total = c->total,
        .memory = sizeof *c +
                  sk__array_cost(&c->alloc, (size_t)sk__cms_cells(c) * sizeof(uint32_t)),
    };
}
