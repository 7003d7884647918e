/* SPDX-License-Identifier: BSD-3-Clause */
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

#include "common/alloc.h"
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
    /* Of a version 2 file: where its chunk sums and change marks are in
     * `map`, the chunks' size, and how many were marked when it was opened. */
    uint8_t *sums;
    uint8_t *marks;
    unsigned chunk_shift; /* 0 when the file or dump has whole-array checksums */
    unsigned file_layers; /* the layers the sums describe */
    uint64_t interrupted;
    struct sk__in_place *in_place; /* opened with SK_BLOOM_IN_PLACE */
    sk_allocator alloc;
    struct layer first;
};

/* The 128-bit hash of an item: two independent 64-bit halves. */
struct item_hash {
    uint64_t h1, h2;
};

/* Where the hashes of a batch come from: items to hash, or the caller's
 * hashes (hashes != NULL). */
struct source {
    const void *const *items;
    const size_t *lens;
    const sk_bloom_hash *hashes;
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

/* Files opened in place (bloom_in_place.c). Before an item's bits, or all
 * bits, change, the chunks they lie in are checked against their sums and
 * marked as changing (SK_ECHECKSUM for a damaged chunk, SK_EIO); a commit
 * writes the sums of the marked chunks and the header, and clears the
 * marks. */
int sk__bloom_in_place_touch(sk_bloom *f, struct item_hash h);
int sk__bloom_in_place_touch_all(sk_bloom *f);
int sk__bloom_in_place_add_batch(sk_bloom *f, const struct source *items, size_t n,
                                 uint8_t *added);
int sk__bloom_commit_in_place(sk_bloom *f);

/* Takes over fd, the file f was opened from in place and parsed from:
 * once f->in_place is set, sk_bloom_free closes it, whatever this
 * returns. */
int sk__bloom_begin_in_place(sk_bloom *f, int fd, const char *path);
void sk__bloom_end_in_place(sk_bloom *f);

/* The path of the file f was opened from in place. */
const char *sk__bloom_in_place_path(const sk_bloom *f);

/* Advisory locks (open file description locks, fcntl(2)) on bytes of the
 * file that no read or write needs: the header's, held shared by readers
 * while they read a file and exclusively while an add in place rewrites
 * sums and header (type F_RDLCK, F_WRLCK or F_UNLCK; waits), and the
 * writer's, held by a filter open in place (SK_EIO with EWOULDBLOCK if
 * another holds it). A file system without such locks goes without. */
int sk__bloom_lock_header(int fd, short type);
int sk__bloom_lock_writer(int fd);

#endif
