/*
 * bloom_internal.h: what the files of the Bloom filter share: the filter
 * and layer records, and the calls between them. Nothing here is exported.
 *
 * A filter is its record plus one layer record per layer in use: the first
 * lives inside the filter's record, so a filter of fixed size is two
 * allocations, this record and its bit array, and its one layer is always
 * `first`; a scalable filter moves its layers to a table of its own when it
 * grows. Bit arrays are arrays of
 * 64-bit words whose bytes are in little-endian order on every machine, the
 * order they have on disk, so a file maps into memory as it is.
 */
#ifndef SKETCH_BLOOM_INTERNAL_H
#define SKETCH_BLOOM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "sketch/bloom.h"

enum storage {
    STORAGE_ALLOC, /* from the allocator, or mapped by it (alloc.h) */
    STORAGE_FILE   /* inside the file the filter was opened from */
};

struct layer {
    _Atomic uint64_t *words;
    uint64_t bits;
    uint64_t nwords;
    uint64_t capacity;
    _Atomic uint64_t count;
    double fp_rate;
    unsigned hashes;
    enum storage storage;
    struct sk__array array; /* what holds words, for STORAGE_ALLOC */
    uint64_t checksum;      /* of the array, as a file or dump declared it */
};

struct sk_bloom {
    sk_bloom_layout layout;
    unsigned expansion;
    double fp_rate;
    unsigned nlayers;
    unsigned table_cap; /* layer records in `layers` when it is a table; 0 while it is &first */
    struct layer *layers;
    uint64_t max_memory;
    int single_writer;
    int restoring; /* between sk_bloom_restore_begin and a successful finish */
    void *map; /* the file this filter was opened from: mapped, or its copy */
    size_t map_len;
    struct sk__array file_copy; /* holds the copy; block NULL when mapped */
    sk_allocator alloc;
    struct layer first;
};

/* The 128-bit hash of an item: two independent 64-bit halves. */
struct item_hash {
    uint64_t h1, h2;
};

/* An empty filter record (no layers) with its allocator; NULL if out of
 * memory. */
sk_bloom *sk__bloom_alloc(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                          const sk_allocator *allocator);

/* Appends a layer of this shape with a zeroed array: SK_ENOMEM, or SK_EBUDGET
 * if the filter's memory would pass its budget. */
int sk__bloom_push_layer(sk_bloom *f, const sk_bloom_layer *shape);

/* Appends a layer record of this shape without an array, for loaders that
 * attach one themselves; SK_ENOMEM. */
int sk__bloom_push_shape(sk_bloom *f, const sk_bloom_layer *shape);

/* Gives every layer record of f a zeroed array: SK_EBUDGET, before any is
 * allocated, if they would take f past its budget; SK_ENOMEM. */
int sk__bloom_alloc_arrays(sk_bloom *f);

/* The add and lookup of one hashed item, for the batch calls. */
int sk__bloom_add_hashed(sk_bloom *f, struct item_hash h);
int sk__bloom_contains_hashed(const sk_bloom *f, struct item_hash h);

/* Advises the kernel how a layer's pages will be read, if they are mapped
 * from a file. */
void sk__bloom_advise(const struct layer *l, int advice);

#endif
