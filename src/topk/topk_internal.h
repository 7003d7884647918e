/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_internal.h: the top-k sketch's object, shared by its operations
 * (topk.c) and its serialized form (topk_format.c). Internal.
 */
#ifndef SKETCH_TOPK_INTERNAL_H
#define SKETCH_TOPK_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "common/fastmod.h"
#include "common/format.h"
#include "sketch/topk.h"

#define SK__TOPK_FP_SEED 1919 /* RedisBloom's seed of the fingerprint */
#define SK__TOPK_DECAY_TABLE 256

struct sk__topk_bucket {
    uint32_t fp;
    uint32_t count;
};

/* An entry of the heap; len SK_TOPK_NO_ITEM (item NULL) when empty. */
struct sk__topk_entry {
    uint32_t fp;
    uint32_t count;
    uint32_t len;
    char *item;
};

struct sk_topk {
    sk_allocator alloc;
    uint32_t k, width, depth;
    uint64_t width_inverse; /* for sk__fastmod */
    double decay;
    double decay_table[SK__TOPK_DECAY_TABLE]; /* decay^i */
    uint64_t rng;           /* the generator of decays, saved with the sketch */
    struct sk__topk_bucket *buckets; /* depth rows of width */
    struct sk__array array;          /* what holds the buckets */
    struct sk__topk_entry *heap;     /* k entries, a min-heap on count */
    uint64_t item_bytes;             /* what the heap's items hold */
    char *expelled;                  /* the last item pushed out, until the next add */
    size_t expelled_len;
};

/* An empty sketch of these dimensions (SK_EINVAL, SK_ETOOLARGE, SK_EBUDGET
 * past max_memory unless 0, SK_ENOMEM). */
int sk__topk_alloc(sk_topk **out, uint32_t k, uint32_t width, uint32_t depth, double decay,
                   uint64_t max_memory, const sk_allocator *a);

/* A copy of len bytes for an entry (at least 1 byte, so that an empty item
 * is not NULL), counted in item_bytes; NULL when out of memory. */
char *sk__topk_item_copy(sk_topk *t, const void *data, size_t len);

#endif
