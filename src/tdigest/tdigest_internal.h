/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_internal.h: the t-digest's object, shared by its adds and
 * compression (tdigest.c), its reads (tdigest_query.c) and its serialized
 * form (tdigest_format.c). Internal.
 */
#ifndef SKETCH_TDIGEST_INTERNAL_H
#define SKETCH_TDIGEST_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "sketch/tdigest_extra.h"

/* Nodes 0..merged-1 are centroids sorted by mean; the next `unmerged` are
 * buffered values in the order they came. The arrays grow by doubling up
 * to `cap`, so that a small digest takes little memory. */
struct sk_tdigest {
    sk_allocator alloc;
    uint32_t compression;
    uint32_t cap;       /* 6 x compression + 10: the most nodes it holds */
    uint32_t allocated; /* nodes the arrays have room for, <= cap */
    uint32_t merged;
    uint32_t unmerged;
    int64_t merged_weight;
    int64_t unmerged_weight;
    int64_t total_compressions;
    double min, max;    /* DBL_MAX and -DBL_MAX while empty, as RedisBloom keeps them */
    double *mean;
    int64_t *weight;    /* in the same block as mean, after `allocated` means */
};

/* An empty digest: every check of the options done by the caller. */
int sk__tdigest_alloc(sk_tdigest **out, uint32_t compression, const sk_allocator *a);
/* Room for at least n nodes (n <= cap). */
int sk__tdigest_reserve(sk_tdigest *t, uint32_t n);
/* The digest a read works on: t itself when its buffer is empty, else a
 * compressed copy in *copy, which the caller frees. */
int sk__tdigest_view(const sk_tdigest *t, sk_tdigest **copy, const sk_tdigest **view);
size_t sk__tdigest_memory(uint32_t nodes);

static inline uint32_t sk__tdigest_nodes(const sk_tdigest *t)
{
    return t->merged + t->unmerged;
}

#endif
