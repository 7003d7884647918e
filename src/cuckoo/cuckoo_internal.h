/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo_internal.h: the cuckoo filter's object, shared by its operations
 * (cuckoo.c), its memory (cuckoo_memory.c) and its serialized forms
 * (cuckoo_format.c). Internal.
 */
#ifndef SKETCH_CUCKOO_INTERNAL_H
#define SKETCH_CUCKOO_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "sketch/cuckoo.h"

/* Bytes past each sub-filter's last slot, so that a bucket of up to 8
 * slots is read as one 64-bit word. */
#define SK__CUCKOO_PAD 8

struct sk__cuckoo_sub {
    uint64_t buckets; /* a power of 2 */
    uint8_t *slots;   /* buckets x bucket_size fingerprints, 0 when empty */
    struct sk__array array;
};

struct sk_cuckoo {
    sk_allocator alloc;
    uint64_t buckets; /* of the first sub-filter */
    uint64_t items, deletes;
    uint32_t filters, bucket_size, max_iterations, expansion;
    uint64_t max_memory; /* 0: none */
    int restoring;       /* a restore has not brought every slot yet */
    uint64_t restored;   /* the slot bytes it has brought, while restoring */
    struct sk__cuckoo_sub *subs; /* filters of them, in a table of subs_cap */
    uint32_t subs_cap;
    uint64_t slot_bytes;  /* of all the sub-filters */
    uint64_t array_bytes; /* what their arrays take */
};

/* An empty filter of this shape with `filters` sub-filters (SK_EINVAL for
 * a shape out of range, SK_ETOOLARGE, SK_EBUDGET, SK_ENOMEM). */
int sk__cuckoo_alloc(sk_cuckoo **out, uint64_t buckets, uint32_t bucket_size,
                     uint32_t max_iterations, uint32_t expansion, uint32_t filters,
                     uint64_t max_memory, const sk_allocator *a);

/* Adds sub-filter number c->filters, of its size, within the budget
 * (SK_ETOOLARGE, SK_EBUDGET, SK_ENOMEM: the filter unchanged). */
int sk__cuckoo_grow(sk_cuckoo *c);
/* Drops the newest sub-filter; its array goes, the table keeps its entry
 * for the next growth. */
void sk__cuckoo_drop_newest(sk_cuckoo *c);

/* The buckets of sub-filter i of a filter whose first has `buckets`: 0 if
 * past SK_CUCKOO_MAX_BUCKETS. */
uint64_t sk__cuckoo_sub_buckets(uint64_t buckets, uint32_t expansion, uint32_t i);

/* The slot bytes of all the sub-filters. */
uint64_t sk__cuckoo_slot_bytes(const sk_cuckoo *c);

/* 1 if the shape is one a filter may have: what deserialize and a restore
 * check before they allocate. */
int sk__cuckoo_shape_ok(uint64_t buckets, uint32_t bucket_size, uint32_t max_iterations,
                        uint32_t expansion, uint64_t filters);

#endif
