/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest.c: the merging t-digest (Dunning and Ertl, 2019) as RedisBloom's
 * TDIGEST.* keeps it: adds, the compression of the buffer into centroids,
 * merges, copies and the digest's memory.
 *
 * The algorithm
 * -------------
 * A digest summarizes N weighted values by centroids, each a mean and a
 * weight, sorted by mean. A centroid that covers the fractions q0..q2 of
 * the weight may hold weight w only while
 *
 *     w x compression / (2 pi N ln N)  <=  q0 (1 - q0)  and  q2 (1 - q2),
 *
 * so centroids are large in the middle of the distribution and shrink to
 * single values at its ends, where the quantiles people ask for (p99,
 * p99.9) lie; the number of centroids stays of the order of the
 * compression whatever N is. A read interpolates between the means of the
 * two centroids around the rank asked for (tdigest_query.c), so its error
 * in rank is about half their weights.
 *
 * New values are not placed at once: they go into a buffer after the
 * centroids, and when centroids and buffer fill the capacity (6 x
 * compression + 10 nodes) all of them are sorted by mean and swept left to
 * right, each node joining the centroid before it while the bound above
 * still holds for the union, else starting a new one.
 *
 * The mechanics
 * -------------
 * Every step is RedisBloom's (its t-digest-c), in its order and in its
 * arithmetic: the same quicksort (its pivot decides how nodes of equal
 * means are ordered, and that order decides which of them join), the
 * bound in double precision with the weights converted where it converts
 * them, and a compression that does nothing while the total weight is at
 * most 1. So a digest given the same adds and compressed at the same times
 * holds the same centroids to the bit, and answers the same. Unlike
 * RedisBloom, the sort recurses only into the smaller part (the same
 * order, in stack depth log n), and an add that would overflow the total
 * weight is refused before anything changes.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "tdigest_internal.h"

#define PI 3.14159265358979323846

/* First nodes of a digest's arrays, so that small digests need no growth. */
#define INITIAL_NODES 64u

/* ---- the mathematics ------------------------------------------------------ */

static uint32_t capacity_of(uint32_t compression)
{
    return 6 * compression + 10;
}

/* Whether merging a node into the centroid before it, to a weight of
 * `proposed`, keeps the size bound at both of its ends. */
static int may_join(double proposed, double normalizer, double weight_before, double total)
{
    double z = proposed * normalizer;
    double q0 = weight_before / total;
    double q2 = (weight_before + proposed) / total;
    return z <= q0 * (1 - q0) && z <= q2 * (1 - q2);
}

/* ---- memory --------------------------------------------------------------- */

size_t sk__tdigest_memory(uint32_t nodes)
{
    return sizeof(sk_tdigest) + (size_t)nodes * (sizeof(double) + sizeof(int64_t));
}

static size_t arrays_size(uint32_t nodes)
{
    return (size_t)nodes * (sizeof(double) + sizeof(int64_t));
}

int sk__tdigest_reserve(sk_tdigest *t, uint32_t n)
{
    if (n <= t->allocated)
        return SK_OK;
    uint32_t grown = t->allocated < INITIAL_NODES ? INITIAL_NODES : t->allocated;
    while (grown < n)
        grown = grown > t->cap / 2 ? t->cap : grown * 2;
    if (grown > t->cap)
        grown = t->cap;
    void *block = sk__alloc(&t->alloc, arrays_size(grown));
    if (block == NULL)
        return SK_ENOMEM;
    double *mean = block;
    int64_t *weight = (int64_t *)(mean + grown);
    uint32_t nodes = sk__tdigest_nodes(t);
    if (nodes > 0) {
        memcpy(mean, t->mean, nodes * sizeof *mean);
        memcpy(weight, t->weight, nodes * sizeof *weight);
    }
    if (t->mean != NULL)
        sk__free(&t->alloc, t->mean, arrays_size(t->allocated));
    t->mean = mean;
    t->weight = weight;
    t->allocated = grown;
    return SK_OK;
}

static void reset(sk_tdigest *t)
{
    t->min = DBL_MAX;
    t->max = -DBL_MAX;
    t->merged = t->unmerged = 0;
    t->merged_weight = t->unmerged_weight = 0;
    t->total_compressions = 0;
}

int sk__tdigest_alloc(sk_tdigest **out, uint32_t compression, const sk_allocator *a)
{
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    sk_tdigest *t = sk__zalloc(&alloc, sizeof *t);
    if (t == NULL)
        return SK_ENOMEM;
    t->alloc = alloc;
    t->compression = compression;
    t->cap = capacity_of(compression);
    reset(t);
    *out = t;
    return SK_OK;
}

static int check_options(const sk_tdigest_options *opts, uint32_t *compression)
{
    *compression = opts->compression ? opts->compression : SK_TDIGEST_DEFAULT_COMPRESSION;
    return *compression <= SK_TDIGEST_MAX_COMPRESSION ? SK_OK : SK_EINVAL;
}

uint64_t sk_tdigest_create_memory(const sk_tdigest_options *opts)
{
    uint32_t compression;
    if (opts == NULL || check_options(opts, &compression) != SK_OK)
        return 0;
    return sk__tdigest_memory(capacity_of(compression));
}

int sk_tdigest_create(sk_tdigest **out, const sk_tdigest_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    uint32_t compression;
    if (opts == NULL || check_options(opts, &compression) != SK_OK)
        return SK_EINVAL;
    if (opts->max_memory != 0 && sk_tdigest_create_memory(opts) > opts->max_memory)
        return SK_EBUDGET;
    return sk__tdigest_alloc(out, compression, opts->allocator);
}

int sk_tdigest_new(sk_tdigest **out, uint32_t compression)
{
    sk_tdigest_options opts = {.compression = compression};
    return sk_tdigest_create(out, &opts);
}

void sk_tdigest_free(sk_tdigest *t)
{
    if (t == NULL)
        return;
    sk_allocator alloc = t->alloc;
    if (t->mean != NULL)
        sk__free(&alloc, t->mean, arrays_size(t->allocated));
    sk__free(&alloc, t, sizeof *t);
}

int sk_tdigest_copy(sk_tdigest **out, const sk_tdigest *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_tdigest *t;
    int rc = sk__tdigest_alloc(&t, src->compression, &src->alloc);
    if (rc != SK_OK)
        return rc;
    uint32_t nodes = sk__tdigest_nodes(src);
    if ((rc = sk__tdigest_reserve(t, nodes)) != SK_OK) {
        sk_tdigest_free(t);
        return rc;
    }
    if (nodes > 0) {
        memcpy(t->mean, src->mean, nodes * sizeof *t->mean);
        memcpy(t->weight, src->weight, nodes * sizeof *t->weight);
    }
    t->merged = src->merged;
    t->unmerged = src->unmerged;
    t->merged_weight = src->merged_weight;
    t->unmerged_weight = src->unmerged_weight;
    t->total_compressions = src->total_compressions;
    t->min = src->min;
    t->max = src->max;
    *out = t;
    return SK_OK;
}

int sk_tdigest_clear(sk_tdigest *t)
{
    if (t == NULL)
        return SK_EINVAL;
    reset(t);
    return SK_OK;
}

/* ---- the sort ------------------------------------------------------------- */

static void swap_nodes(sk_tdigest *t, uint32_t i, uint32_t j)
{
    double m = t->mean[i];
    t->mean[i] = t->mean[j];
    t->mean[j] = m;
    int64_t w = t->weight[i];
    t->weight[i] = t->weight[j];
    t->weight[j] = w;
}

/* Lomuto's partition of [start, end] around the middle node, moved to the
 * end first: where the pivot lands. */
static uint32_t partition(sk_tdigest *t, uint32_t start, uint32_t end)
{
    uint32_t middle = start + (end - start) / 2;
    double pivot = t->mean[middle];
    swap_nodes(t, middle, end);
    uint32_t next = start; /* where the next node below the pivot goes */
    for (uint32_t j = start; j < end; j++)
        if (t->mean[j] < pivot)
            swap_nodes(t, next++, j);
    swap_nodes(t, next, end);
    return next;
}

/* RedisBloom's quicksort of nodes [start, end], which moves nodes of equal
 * means as it does; the two parts are disjoint, so sorting the smaller one
 * first and looping on the larger gives its order without its recursion
 * depth. */
static void sort_nodes(sk_tdigest *t, uint32_t start, uint32_t end)
{
    while (start < end) {
        if (end - start == 1) {
            if (t->mean[start] > t->mean[end])
                swap_nodes(t, start, end);
            return;
        }
        uint32_t p = partition(t, start, end);
        if (p - start < end - p) {
            if (p > start)
                sort_nodes(t, start, p - 1);
            start = p + 1;
        } else {
            sort_nodes(t, p + 1, end);
            if (p == start)
                return;
            end = p - 1;
        }
    }
}

/* ---- compression and adds ------------------------------------------------- */

int sk_tdigest_compress(sk_tdigest *t)
{
    if (t == NULL)
        return SK_EINVAL;
    if (t->unmerged == 0)
        return 0;
    uint32_t n = sk__tdigest_nodes(t);
    sort_nodes(t, 0, n - 1);
    double total = (double)t->merged_weight + (double)t->unmerged_weight;
    /* RedisBloom leaves a single value of weight 1 in the buffer, so that
     * reads of it answer NaN; kept, so that they answer the same. */
    if (total <= 1)
        return 0;
    double normalizer = t->compression / (2 * PI * total * log(total));
    uint32_t cur = 0;
    double weight_before = 0;
    for (uint32_t i = 1; i < n; i++) {
        double proposed = (double)t->weight[cur] + (double)t->weight[i];
        if (may_join(proposed, normalizer, weight_before, total)) {
            t->weight[cur] += t->weight[i];
            double delta = t->mean[i] - t->mean[cur];
            t->mean[cur] += (delta * (double)t->weight[i]) / (double)t->weight[cur];
        } else {
            weight_before += (double)t->weight[cur];
            cur++;
            t->weight[cur] = t->weight[i];
            t->mean[cur] = t->mean[i];
        }
    }
    t->merged = cur + 1;
    t->merged_weight = (int64_t)total; /* as RedisBloom rounds it past 2^53 */
    t->unmerged = 0;
    t->unmerged_weight = 0;
    if (t->total_compressions < INT64_MAX) /* a digest read from bytes may start there */
        t->total_compressions++;
    return 1;
}

/* Whether `weight` more keeps the total, and its double, below 2^63. */
static int weight_fits(const sk_tdigest *t, uint64_t weight)
{
    uint64_t total = (uint64_t)t->merged_weight + (uint64_t)t->unmerged_weight;
    if (weight > (uint64_t)INT64_MAX - total)
        return 0;
    return (double)t->merged_weight + (double)(t->unmerged_weight + (int64_t)weight) <
           9223372036854775808.0;
}

/* An add whose weight is known to fit. */
static int add_node(sk_tdigest *t, double value, int64_t weight)
{
    if (sk__tdigest_nodes(t) >= t->cap - 1)
        sk_tdigest_compress(t);
    uint32_t pos = sk__tdigest_nodes(t);
    if (pos >= t->cap)
        return SK_EFULL; /* centroids alone fill the capacity: never for this bound */
    int rc = sk__tdigest_reserve(t, pos + 1);
    if (rc != SK_OK)
        return rc;
    if (value < t->min)
        t->min = value;
    if (value > t->max)
        t->max = value;
    t->mean[pos] = value;
    t->weight[pos] = weight;
    t->unmerged++;
    t->unmerged_weight += weight;
    return SK_OK;
}

int sk_tdigest_add(sk_tdigest *t, double value, uint64_t weight)
{
    if (t == NULL || !isfinite(value) || weight == 0)
        return SK_EINVAL;
    if (!weight_fits(t, weight))
        return SK_ETOOLARGE;
    return add_node(t, value, (int64_t)weight);
}

/* ---- merges --------------------------------------------------------------- */

int sk__tdigest_view(const sk_tdigest *t, sk_tdigest **copy, const sk_tdigest **view)
{
    *copy = NULL;
    *view = t;
    if (t->unmerged == 0)
        return SK_OK;
    int rc = sk_tdigest_copy(copy, t);
    if (rc != SK_OK)
        return rc;
    sk_tdigest_compress(*copy);
    *view = *copy;
    return SK_OK;
}

int sk_tdigest_merge(sk_tdigest *dst, const sk_tdigest *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    /* What the adds bring is the nodes' weights, which a digest read from
     * bytes need not sum to the total its header gives. */
    uint64_t src_total = 0;
    for (uint32_t i = 0; i < sk__tdigest_nodes(src); i++)
        src_total += (uint64_t)src->weight[i];
    if (!weight_fits(dst, src_total))
        return SK_ETOOLARGE;
    sk_tdigest *copy;
    const sk_tdigest *from;
    int rc = sk__tdigest_view(src, &copy, &from);
    if (rc != SK_OK)
        return rc;
    /* All the room the adds may need, taken first, so that none of them
     * fails half way: never more than both digests' nodes, which a large
     * compression's capacity may far exceed. */
    uint64_t need = (uint64_t)sk__tdigest_nodes(dst) + sk__tdigest_nodes(from);
    if ((rc = sk__tdigest_reserve(dst, need < dst->cap ? (uint32_t)need : dst->cap)) == SK_OK) {
        sk_tdigest_compress(dst);
        uint32_t nodes = sk__tdigest_nodes(from);
        for (uint32_t i = 0; i < nodes && rc == SK_OK; i++)
            rc = add_node(dst, from->mean[i], from->weight[i]);
    }
    sk_tdigest_free(copy);
    return rc;
}

void sk_tdigest_get_info(const sk_tdigest *t, sk_tdigest_info *info)
{
    memset(info, 0, sizeof *info);
    if (t == NULL)
        return;
    int empty = t->merged_weight + t->unmerged_weight == 0;
    info->compression = t->compression;
    info->capacity = t->cap;
    info->merged_nodes = t->merged;
    info->unmerged_nodes = t->unmerged;
    info->merged_weight = t->merged_weight;
    info->unmerged_weight = t->unmerged_weight;
    info->total_compressions = t->total_compressions;
    info->min = empty ? NAN : t->min;
    info->max = empty ? NAN : t->max;
    info->memory = sk__tdigest_memory(t->allocated);
}
