/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_hll_internal.h: the sliding-window HyperLogLog's object, shared by
 * its algorithm (window_hll.c), its block store (window_pool.c) and its
 * serialized form (window_hll_format.c). Nothing here is exported.
 *
 * A register keeps a list of (slot, rank) pairs, each packed into 32 bits
 * as (slot - base) << 6 | rank: ranks never pass 61 (64 - p + 1 at p = 4),
 * and slots are kept as offsets from a base that moves forward (a rebase)
 * before an offset would need more than SK__WH_OFFSET_BITS bits. Live slots
 * span at most SK_WINDOW_HLL_MAX_SLOTS (2^24), so a rebase leaves room for
 * at least 2^26 - 2^24 slots of time before the next one.
 */
#ifndef SKETCH_WINDOW_HLL_INTERNAL_H
#define SKETCH_WINDOW_HLL_INTERNAL_H

#include <stdint.h>

#include "sketch/window_hll.h"

#define SK__WH_RANK_BITS 6
#define SK__WH_RANK_MASK ((UINT32_C(1) << SK__WH_RANK_BITS) - 1)
#define SK__WH_OFFSET_BITS (32 - SK__WH_RANK_BITS)
#define SK__WH_OFFSET_LIMIT (UINT64_C(1) << SK__WH_OFFSET_BITS)
/* A register's list never holds more pairs than there are ranks (61). */
#define SK__WH_MAX_PAIRS 64
#define SK__WH_NO_BLOCK 0xffu

/* Blocks of the pool come in these capacities (pairs); a list lives in the
 * smallest that holds it, so at most a third of a block is slack. */
#define SK__WH_CLASSES 12
extern const uint8_t sk__wh_class_pairs[SK__WH_CLASSES];

/* The pairs of every register, in one array of 32-bit words handed out in
 * blocks; freed blocks wait on a list per class, linked through their
 * first word. */
struct sk__wh_pool {
    uint32_t *words;
    uint32_t used, capacity; /* words */
    uint32_t free_words;     /* in blocks on the free lists */
    uint32_t free_head[SK__WH_CLASSES];
};

/* A sketch starts sparse: (register, pair) entries in two parallel
 * arrays sorted by register, then slot (sp[0..cap) the registers,
 * sp[cap..2 cap) the pairs), so that a sketch of a few items costs a few
 * bytes, not the 6 bytes a register of the dense tables. Past
 * sk__wh_sparse_limit entries it turns dense for good: block, len and cls
 * per register, the lists in the pool. */
struct sk_window_hll {
    sk_allocator alloc;
    unsigned precision;
    uint64_t horizon, resolution;
    uint64_t slots;      /* the horizon in slots, rounded up */
    uint64_t max_memory;
    int empty;
    uint64_t newest;     /* slot */
    uint64_t base;       /* the slot that offset 0 stands for */
    uint64_t pairs;      /* held, counting expired ones not yet dropped */
    uint32_t *sp;        /* sparse: the entries; NULL when dense or none yet */
    uint32_t sp_len, sp_cap;
    uint32_t *block;     /* dense: per register, first word of its block in the pool */
    uint8_t *len;        /* dense: per register, pairs in its list */
    uint8_t *cls;        /* dense: per register, its block's class, or SK__WH_NO_BLOCK */
    struct sk__wh_pool pool;
};

static inline uint32_t sk__wh_pair(uint64_t offset, unsigned rank)
{
    return (uint32_t)offset << SK__WH_RANK_BITS | rank;
}

static inline uint64_t sk__wh_pair_slot(const sk_window_hll *w, uint32_t pair)
{
    return w->base + (pair >> SK__WH_RANK_BITS);
}

static inline unsigned sk__wh_pair_rank(uint32_t pair)
{
    return pair & SK__WH_RANK_MASK;
}

/* The oldest slot still inside the horizon when `newest` is the newest. */
static inline uint64_t sk__wh_cutoff(const sk_window_hll *w, uint64_t newest)
{
    return newest >= w->slots - 1 ? newest - (w->slots - 1) : 0;
}

/* ---- the lists, sparse or dense (window_store.c) ------------------------- */

/* Register idx's list: a pointer to its *n pairs, valid until the sketch
 * changes (never NULL). */
const uint32_t *sk__wh_pairs(const sk_window_hll *w, uint32_t idx, unsigned *n);

/* The registers that hold pairs, in increasing order: *cursor starts at 0;
 * 1 with the next one's index and list, 0 after the last. */
int sk__wh_next(const sk_window_hll *w, uint32_t *cursor, uint32_t *idx, const uint32_t **pairs,
                unsigned *n);

/* Register idx's list becomes pairs[0..n): SK_OK, or SK_ENOMEM or
 * SK_EBUDGET with nothing changed. */
int sk__wh_store(sk_window_hll *w, uint32_t idx, const uint32_t *pairs, unsigned n);

/* Moves the base to `base`, no later than any slot of the horizon, dropping
 * the pairs before it. */
void sk__wh_rebase(sk_window_hll *w, uint64_t base);

/* The bytes the lists take beside the object; and freeing them, which
 * leaves an empty sparse sketch. */
size_t sk__wh_memory(const sk_window_hll *w);
void sk__wh_storage_free(sk_window_hll *w);

/* ---- the dense pool (window_pool.c) ----------------------------------------
 * The same for a dense sketch; sk__wh_dense_init allocates its tables. */
int sk__wh_dense_init(sk_window_hll *w);
void sk__wh_dense_free(sk_window_hll *w);
size_t sk__wh_dense_memory(const sk_window_hll *w);
int sk__wh_dense_store(sk_window_hll *w, uint32_t idx, const uint32_t *pairs, unsigned n);

/* ---- the algorithm (window_hll.c) ------------------------------------------ */

/* A new empty sketch with the parameters given, checked (SK_EINVAL,
 * SK_ETOOLARGE) but for the allocator, which is taken as it is. */
int sk__wh_new(sk_window_hll **out, unsigned precision, uint64_t horizon, uint64_t resolution,
               uint64_t max_memory, const sk_allocator *allocator);

#endif
