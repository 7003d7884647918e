/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_internal.h: what the files of the Bloom filter share: the filter
 * and layer records, and the calls between them. Nothing here is exported.
 *
 * The core (bloom.c, bloom_batch.c, bloom_record.c) knows nothing of
 * files: a filter read from a file or a dump points to what it keeps of
 * them (`file`, defined by bloom_format.h), and the core calls that only
 * through its hooks, before bits change and when the filter is copied or
 * freed. So the file code calls the core and never the other way round.
 *
 * A filter is its record plus one layer record per layer in use: the first
 * lives inside the filter's record, and so does its bit array when that is
 * small, so that a small filter is one allocation; a scalable filter moves
 * its layers to a table of its own when it grows. Bit arrays are arrays of
 * 64-bit words whose bytes are in little-endian order on every machine, the
 * order they have on disk, so a file maps into memory as it is.
 */
#ifndef SKETCH_BLOOM_INTERNAL_H
#define SKETCH_BLOOM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/alloc.h"
#include "sketch/bloom_extra.h"

/* A layer. What holds an array the filter allocated apart (struct
 * sk__array) is kept beside the layer records, not in them
 * (bloom_record.c), and the word count follows from the bits, so that a
 * small filter stays small (see sk_bloom). */
struct layer {
    _Atomic uint64_t *words;
    uint64_t bits;
    uint64_t capacity;
    _Atomic uint64_t count;
    unsigned hashes;
};

static inline unsigned layer_hashes(const struct layer *l)
{
    return l->hashes;
}

static inline uint64_t layer_capacity(const struct layer *l)
{
    return l->capacity;
}

/* The words of a layer's array: blocked and split bits are whole lines. */
static inline uint64_t layer_nwords(const struct layer *l)
{
    return (l->bits + 63) / 64;
}

struct sk__bloom_file;

/* Bits of sk_bloom.flags. */
#define SK__BLOOM_MANY_WRITERS 1u /* sk_bloom_options.concurrent_writers */
#define SK__BLOOM_RESTORING 2u   /* between sk_bloom_restore_begin and a successful finish */
#define SK__BLOOM_REFUSE_FULL 4u /* sk_bloom_options.refuse_when_full */

/* The filters whose single calls take the short path of bloom.c: fixed,
 * split with 8 lanes; for adds, plain (below) with one writer as well. */
#define SK__BLOOM_FAST_CONTAINS 1u
#define SK__BLOOM_FAST_ADD 2u

/* 112 bytes on 64-bit machines: with a first array of 144 bytes (the
 * classic array for 100 items at 0.5%, as RedisBloom's default filter
 * has), one allocation of 256. */
struct sk_bloom {
    /* The layers: in the record while there is one (`first`, which the
     * calls on fixed filters use directly), in a table of table_cap records
     * once a chain outgrows it; sk__bloom_layers gives either. */
    union {
        struct layer first;
        struct layer *table;
    };
    double fp_rate;
    uint64_t max_memory;
    struct sk__bloom_file *file; /* NULL for a filter made in memory */
    sk_allocator alloc;
    unsigned nlayers;
    unsigned table_cap; /* records of `table`; 0 while the layer is `first` */
    uint16_t expansion;
    uint16_t record_len; /* bytes of this record, with its tail (bloom.c) */
    uint8_t layout;      /* an sk_bloom_layout */
    uint8_t plain;       /* adds only set bits: fixed, in memory, never refused */
    uint8_t flags;       /* SK__BLOOM_* */
    uint8_t fast;        /* SK__BLOOM_FAST_*: the single calls' one test */
};

/* The 128-bit hash of an item: two independent 64-bit halves. */
struct item_hash {
    uint64_t h1, h2;
};

/* Where the hashes of a batch come from: items to hash, the caller's
 * hashes, or hashes the library computed. The kind is a constant at each
 * call, so that the test of it folds away. */
enum source_kind { SOURCE_ITEMS, SOURCE_HASHES, SOURCE_HASHED };

struct source {
    enum source_kind kind;
    const void *const *items;
    const size_t *lens;
    const sk_bloom_hash *hashes;
    const struct item_hash *hashed;
};

/* What a filter read from a file or a dump keeps of it, as the core sees
 * it; the rest is bloom_format.h's. */
struct sk__bloom_file {
    /* Called before the bits of the n items h may change, or with h NULL
     * any bit of any layer: SK_OK, or the error that refuses the change. */
    int (*before_write)(sk_bloom *f, const struct item_hash *h, size_t n);
    /* Gives dst, a copy of src's layers, what it must keep of src's file:
     * SK_OK or SK_ENOMEM. */
    int (*copy)(sk_bloom *dst, const sk_bloom *src);
    /* Frees it and sets f->file to NULL. */
    void (*release)(sk_bloom *f);
    size_t memory;        /* the bytes it holds, a file's copy or mapping */
    uint64_t interrupted; /* chunks an interrupted add in place left marked */
};

static inline struct layer *sk__bloom_layers(const sk_bloom *f)
{
    return f->table_cap != 0 ? f->table : (struct layer *)(uintptr_t)&f->first;
}

/* Whether adds to f need nothing but setting bits (f->plain), and which
 * single calls take the short path (f->fast, one byte so that the path
 * tests one thing); called whenever what they depend on changes. */
static inline void sk__bloom_update_paths(sk_bloom *f)
{
    f->plain = f->expansion == 0 && f->file == NULL && !(f->flags & SK__BLOOM_REFUSE_FULL);
    int split8 = f->expansion == 0 && f->nlayers == 1 && f->layout == SK_BLOOM_SPLIT &&
                 f->first.hashes == 8;
    f->fast = (uint8_t)((split8 ? SK__BLOOM_FAST_CONTAINS : 0) |
                        (split8 && f->plain && !(f->flags & SK__BLOOM_MANY_WRITERS)
                             ? SK__BLOOM_FAST_ADD
                             : 0));
}

/* An empty filter record (no layers) with its allocator, with room in it
 * for the bit array of a first layer of `first_bytes` of this layout when
 * that is small; NULL if out of memory. */
sk_bloom *sk__bloom_alloc(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                          const sk_allocator *allocator, uint64_t first_bytes);

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

/* All the memory f holds (sk_bloom_info.memory). */
size_t sk__bloom_memory(const sk_bloom *f);

/* Frees the array of layer i unless it lies in the record or a file. */
void sk__bloom_release_layer(sk_bloom *f, unsigned i);

/* Advises the kernel how a layer's pages will be read, if they are mapped
 * from f's file. */
void sk__bloom_advise(const sk_bloom *f, unsigned index, int advice);

/* The rate layer `index` of f was sized for; 0 for explicit sizes. */
double sk__bloom_rate_of(const sk_bloom *f, unsigned index);

#endif
