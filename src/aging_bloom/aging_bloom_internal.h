/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aging_bloom_internal.h: the aging Bloom filter's object and sizing,
 * shared by the ring (aging_bloom.c) and its serialized form
 * (aging_bloom_format.c). Internal.
 */
#ifndef SKETCH_AGING_BLOOM_INTERNAL_H
#define SKETCH_AGING_BLOOM_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "sketch/aging_bloom.h"
#include "sketch/bloom_extra.h"

/* The longest time window: 2^62 units (146 years of nanoseconds), so that
 * no sum of times and spans comes near overflowing. */
#define SK__AB_MAX_WINDOW (UINT64_C(1) << 62)

/* A scalable generation grows by this factor a layer (time windows). */
#define SK__AB_EXPANSION 2

/* What the parameters imply: checked once, at creation or when read. */
struct sk__ab_sizing {
    uint64_t capacity;
    double fp_rate;
    unsigned generations;
    uint64_t window;
    uint64_t share;      /* items a generation is sized for: ceil(capacity / (g - 1)), or
                            for a time window ceil(capacity span / window) */
    uint64_t span;       /* count window: the share; time: ceil(window / (g - 1)) */
    double gen_rate;     /* 1 - (1 - fp_rate)^(1/g) */
    sk_bloom_layout layout; /* as asked; a generation's is what it resolved to */
};

struct sk_aging_bloom {
    sk_allocator alloc;
    struct sk__ab_sizing size;
    uint64_t max_memory;
    /* The newest generation's epoch E: with a time window, the newest time
     * seen divided by the span; with a count window, the number of
     * rotations so far. Epoch x lives in generation x mod g. */
    uint64_t newest;
    uint64_t adds;       /* count window: adds so far; time: 0 */
    uint64_t in_newest;  /* count window: adds the newest generation took */
    uint64_t dirty;      /* bit i: generation i may have bits set */
    size_t record_bytes; /* of this record with its tail */
    unsigned newest_index; /* E mod g */
    uint64_t *mem;       /* with a budget: each generation's memory */
    sk_bloom *gen[];     /* g generations; mem follows them in the record */
};

/* The sizing of these parameters (fp_rate 0 and generations 0 taking the
 * defaults), or SK_EINVAL / SK_ETOOLARGE. */
int sk__ab_size(uint64_t capacity, double fp_rate, unsigned generations, uint64_t window,
                sk_bloom_layout layout, struct sk__ab_sizing *out);

/* The options a generation of this sizing is created with. */
sk_bloom_options sk__ab_generation_options(const struct sk__ab_sizing *s,
                                           const sk_allocator *allocator);

/* An empty ring record (no generations yet) of sizing s; NULL if out of
 * memory. */
sk_aging_bloom *sk__ab_alloc_record(const struct sk__ab_sizing *s, const sk_allocator *a);

/* Frees the record and whatever generations it has. */
void sk__ab_free_record(sk_aging_bloom *f);

#endif
