/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/bloom.h: Bloom filters: "is this item in the set?" answered with
 * "maybe" or "definitely not", in about 10 bits per item at 1% false
 * positives, and never a false negative.
 *
 *     sk_bloom *f;
 *     if (sk_bloom_new(&f, 1000000, 0.01, SK_BLOOM_AUTO) != SK_OK) ...
 *     sk_bloom_add(f, "alice", 5);
 *     sk_bloom_contains(f, "alice", 5);     // 1: maybe present
 *     sk_bloom_contains(f, "bob", 3);       // 0: definitely absent (99%)
 *     sk_bloom_save(f, "users.bloom");
 *     sk_bloom_free(f);
 *
 * Layouts: SK_BLOOM_CLASSIC spreads an item's k bits over the whole array
 * (the fewest bits, k cache misses); SK_BLOOM_BLOCKED keeps them in one
 * 64-byte line (one miss, a few percent more bits); SK_BLOOM_SPLIT sets one
 * bit in each of a line's 8 or 16 parts (the fastest, a few vector
 * instructions, at most 5.4% more bits than blocked from 2% down to 1e-8).
 * SK_BLOOM_AUTO, the default, picks at creation by the rule of
 * docs/bloom-format.md: for
 * large filters blocked from 50% to 2.2%, split from 2% to about 5e-4,
 * classic below. Scalable filters (expansion >= 1) grow a layer at a time,
 * each `expansion` times larger, the rates of all layers summing to the one
 * asked for. Batches, calls by hash, threads, files in place and dumps in
 * pieces are in sketch/bloom_extra.h; the shape every family shares is
 * docs/api.md.
 */
#ifndef SKETCH_BLOOM_H
#define SKETCH_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_bloom sk_bloom;

typedef enum sk_bloom_layout {
    SK_BLOOM_AUTO = 0,
    SK_BLOOM_CLASSIC = 1,
    SK_BLOOM_BLOCKED = 2,
    SK_BLOOM_SPLIT = 3
} sk_bloom_layout;

#define SK_BLOOM_MAX_BITS (UINT64_C(1) << 48) /* of a layer: 32 TiB */
#define SK_BLOOM_MAX_HASHES 64
#define SK_BLOOM_MIN_FP_RATE 1e-15
#define SK_BLOOM_MAX_FP_RATE 0.5
#define SK_BLOOM_DEFAULT_FP_RATE 0.01
#define SK_BLOOM_MAX_EXPANSION 32768

/* Zero-initialized fields take the defaults: SK_BLOOM_AUTO, one adding
 * thread at a time. Give capacity and fp_rate, or explicit bits and hashes
 * (a fixed filter, blocked unless another layout is named; blocked and
 * split round bits up to a multiple of 512, split takes 8 or 16 hashes). */
typedef struct sk_bloom_options {
    uint64_t capacity;    /* items at fp_rate (of a scalable filter: its first layer) */
    double fp_rate;       /* 0: SK_BLOOM_DEFAULT_FP_RATE */
    sk_bloom_layout layout;
    unsigned expansion;   /* 0: fixed size; n >= 1: scalable, each layer n times the last */
    uint64_t bits;        /* explicit size instead of capacity and rate */
    unsigned hashes;
    uint64_t max_memory;  /* 0: none; else the filter's memory never passes it (SK_EBUDGET) */
    const sk_allocator *allocator; /* NULL: malloc and mmap */
    int refuse_when_full; /* fixed size: an add of a new item once count reaches capacity
                             fails with SK_EFULL, the filter unchanged */
    int concurrent_writers; /* adds may come from many threads at once (sketch/bloom_extra.h);
                               0: one at a time, with any number of threads querying */
} sk_bloom_options;

/* SK_EINVAL for options out of range, SK_ETOOLARGE past the limits,
 * SK_EBUDGET if the first layer does not fit max_memory. sk_bloom_new is a
 * fixed filter with malloc. */
SK_API int sk_bloom_create(sk_bloom **out, const sk_bloom_options *opts);
SK_API int sk_bloom_new(sk_bloom **out, uint64_t capacity, double fp_rate,
                        sk_bloom_layout layout);
SK_API void sk_bloom_free(sk_bloom *f);
SK_API int sk_bloom_copy(sk_bloom **out, const sk_bloom *src); /* src's allocator, budget */
SK_API int sk_bloom_clear(sk_bloom *f); /* a scalable filter goes back to one layer */

/* sk_bloom_add: 1 if the item was not in the filter before (a bit
 * changed), 0 if it may have been, or SK_EFULL, SK_ENOMEM or SK_EBUDGET
 * when the filter could not take it. sk_bloom_contains: 1 if the item may
 * be in the filter, 0 if it certainly is not. */
SK_API int sk_bloom_add(sk_bloom *f, const void *data, size_t len);
SK_API int sk_bloom_contains(const sk_bloom *f, const void *data, size_t len);

/* dst becomes the union or intersection of dst and src, of the same
 * layout, layers and sizes (SK_EINCOMPAT otherwise; scalable filters have
 * no intersection). Each layer's count becomes the estimate from its fill. */
SK_API int sk_bloom_merge(sk_bloom *dst, const sk_bloom *src);
SK_API int sk_bloom_intersect(sk_bloom *dst, const sk_bloom *src);

/* Bits, capacity, count and bytes summed over the layers; hashes the first
 * layer's. */
typedef struct sk_bloom_info {
    sk_bloom_layout layout;
    uint64_t bits;
    unsigned hashes;
    uint64_t capacity;
    double fp_rate;        /* the rate requested at creation; 0 if explicit */
    uint64_t count;
    unsigned layers;
    unsigned expansion;    /* 0 for a filter of fixed size */
    uint64_t max_memory;   /* 0: no budget */
    uint64_t array_bytes;  /* bytes of bit arrays */
    size_t memory;         /* all it holds (core.h) */
    uint64_t interrupted_chunks; /* of a file opened in place (sketch/bloom_extra.h) */
} sk_bloom_info;
SK_API void sk_bloom_get_info(const sk_bloom *f, sk_bloom_info *info);

/* The filter as one byte string, the dump form of docs/bloom-format.md. */
SK_API int sk_bloom_serialized_size(const sk_bloom *f, uint64_t *size);
SK_API int sk_bloom_serialize(const sk_bloom *f, void *buf, size_t cap, size_t *len);
SK_API int sk_bloom_deserialize(sk_bloom **out, const void *buf, size_t len,
                                const sk_allocator *allocator);

/* sk_bloom_save writes path atomically (temporary file, fsync, rename: a
 * crash leaves the old file or the new one; SK_EIO with errno).
 * sk_bloom_open reads a file into memory, the header validated; with
 * SK_BLOOM_VERIFY it checks the arrays' sums too, with SK_BLOOM_MAP it maps
 * the file (only the pages touched are read; the file must not shrink
 * while open), with SK_BLOOM_IN_PLACE adds change the file itself
 * (sketch/bloom_extra.h). SK_ETRUNCATED if the file shrank as it was read. */
#define SK_BLOOM_VERIFY 1u
#define SK_BLOOM_MAP 2u
#define SK_BLOOM_IN_PLACE 4u
SK_API int sk_bloom_save(const sk_bloom *f, const char *path);
SK_API int sk_bloom_open(sk_bloom **out, const char *path, unsigned flags,
                         const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif
