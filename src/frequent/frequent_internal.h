/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frequent_internal.h: the layout of a frequent-items summary (frequent.c
 * explains it), shared by frequent.c and the merge in frequent_merge.c.
 */
#ifndef SKETCH_FREQUENT_INTERNAL_H
#define SKETCH_FREQUENT_INTERNAL_H

#include <stdint.h>

#include "sketch/frequent.h"

/* Items up to this long live in their counter, which is then one 64-byte
 * cache line: most lines and fields are short. */
#define SK__FREQUENT_INLINE 28

struct sk__frequent_counter {
    uint64_t error; /* upper - lower; the upper bound is in the heap */
    uint64_t hash;
    uint8_t *data;  /* the item's block, or NULL when it is inline */
    uint32_t len, cap, heap_pos;
    uint8_t inline_bytes[SK__FREQUENT_INLINE];
};

/* The heap orders by the upper bound, kept here rather than in the counter
 * so that a sift reads one array. */
struct sk__frequent_heap {
    uint64_t count;
    uint32_t counter;
};

struct sk_frequent {
    sk_allocator alloc;
    uint32_t m;        /* counters at most */
    uint32_t items;    /* counters in use */
    uint32_t capacity; /* counters allocated, up to m */
    size_t table_size; /* a power of two, at least twice capacity */
    uint64_t total, threshold;
    struct sk__frequent_counter *counters;
    struct sk__frequent_heap *heap;
    uint64_t *table;   /* 0, or the hash's low 32 bits above counter + 1 */
};

int sk__frequent_order(const sk_frequent_entry *a, const sk_frequent_entry *b);
int sk__frequent_append(sk_frequent *f, const void *item, size_t len, uint64_t hash,
                        uint64_t upper, uint64_t error);
int sk__frequent_reserve(sk_frequent *f, uint32_t capacity);
int64_t sk__frequent_find(const sk_frequent *f, uint64_t hash, const void *item, size_t len);
sk_frequent_entry sk__frequent_entry(const sk_frequent *f, uint32_t index);

#endif
