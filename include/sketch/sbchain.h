/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/sbchain.h: the scalable Bloom filter of RedisBloom 2.x, bit for
 * bit: a chain of classic filters, each item hashed with MurmurHash64A
 * twice and its k bits at (a + i b) mod m. It is the layout of the keys
 * sketch.so loads from RedisBloom (type MBbloom--) and keeps answering as
 * RedisBloom did; for filters of its own the library's sk_bloom is faster
 * and smaller.
 *
 *     sk_sbchain *c;
 *     sk_sbchain_new(&c, 100, 0.01);        // BF.RESERVE k 0.01 100
 *     sk_sbchain_add(c, "alice", 5);        // 1: added
 *     sk_sbchain_contains(c, "alice", 5);   // 1
 *     sk_sbchain_free(c);
 *
 * The first link takes `capacity` items at fp_rate / 2 (all of fp_rate if
 * it may not scale); when the newest link holds as many items as it was
 * sized for, the next one is `expansion` times larger at half the rate.
 * Dumps in pieces are BF.SCANDUMP's bytes; the RDB fields are
 * sketch/redisbloom.h's.
 */
#ifndef SKETCH_SBCHAIN_H
#define SKETCH_SBCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_sbchain sk_sbchain;

/* A zeroed struct: fp_rate 0.01, expansion 2. */
typedef struct sk_sbchain_options {
    uint64_t capacity;   /* items of the first link: required */
    double fp_rate;      /* in (0, 1); 0: 0.01 */
    unsigned expansion;  /* 0: 2; each new link's capacity over the last's */
    int non_scaling;     /* one link; an add past capacity fails with SK_EFULL */
    uint64_t max_memory; /* 0: none; else a new link past it is SK_EBUDGET */
    const sk_allocator *allocator;
} sk_sbchain_options;

SK_API int sk_sbchain_create(sk_sbchain **out, const sk_sbchain_options *opts);
SK_API int sk_sbchain_new(sk_sbchain **out, uint64_t capacity, double fp_rate);
SK_API void sk_sbchain_free(sk_sbchain *c);
SK_API int sk_sbchain_copy(sk_sbchain **out, const sk_sbchain *src);
SK_API void sk_sbchain_set_max_memory(sk_sbchain *c, uint64_t bytes);

/* sk_sbchain_add: 1 if added, 0 if it may have been present, SK_EFULL,
 * SK_ENOMEM, SK_EBUDGET, or SK_EINCOMPAT while restoring. */
SK_API int sk_sbchain_add(sk_sbchain *c, const void *data, size_t len);
SK_API int sk_sbchain_contains(const sk_sbchain *c, const void *data, size_t len);

typedef struct sk_sbchain_info {
    uint64_t capacity;    /* summed over the links: BF.INFO's Capacity */
    uint64_t count;       /* items added: BF.CARD */
    unsigned links;
    unsigned expansion;   /* 0 when non-scaling */
    double fp_rate;       /* the first link's: fp_rate / 2 unless non-scaling */
    uint64_t array_bytes; /* of bit arrays */
    uint64_t redisbloom_size; /* what RedisBloom's BF.INFO reports as Size */
    size_t memory;        /* all it holds */
} sk_sbchain_info;
SK_API void sk_sbchain_get_info(const sk_sbchain *c, sk_sbchain_info *info);

/* Link `index` (0 the oldest), as BF.DEBUG shows it; SK_EINVAL past the
 * last. */
typedef struct sk_sbchain_link {
    uint64_t bytes, bits, capacity, count;
    unsigned hashes;
    unsigned hash_bits; /* 64, or 32 for filters of RedisBloom 1.x */
    double fp_rate;
} sk_sbchain_link;
SK_API int sk_sbchain_get_link(const sk_sbchain *c, unsigned index, sk_sbchain_link *out);

/* BF.SCANDUMP's pieces: the header (sk_sbchain_dump_header_size bytes) at
 * iterator 1, then the arrays. The iterator starts at 1; each piece of at
 * most max bytes advances it; 0 when none is left. sk_sbchain_dump_piece
 * returns 1 with a piece (never across two links' arrays), 0 with none
 * left (the iterator then 0), or SK_EINVAL (an iterator of 0, max 0). A
 * chain still restoring gives only the bytes that came. */
SK_API size_t sk_sbchain_dump_header_size(const sk_sbchain *c);
SK_API void sk_sbchain_dump_header(const sk_sbchain *c, void *out);
SK_API int sk_sbchain_dump_piece(const sk_sbchain *c, uint64_t *iterator, size_t max,
                                 const void **piece, size_t *len);
/* A chain from a dump's header, restoring until its last byte comes: adds
 * are refused until then, and pieces come in order with the iterator
 * BF.SCANDUMP gave them (a piece may repeat bytes already come, as a
 * retried BF.LOADCHUNK does; a gap, a piece across two links or a bad
 * header is SK_ECORRUPT, a piece after the last SK_EINCOMPAT). The layout
 * is docs/redisbloom-bloom.md. */
SK_API int sk_sbchain_restore_begin(sk_sbchain **out, const void *header, size_t len,
                                    uint64_t max_memory, const sk_allocator *allocator);
SK_API int sk_sbchain_restore_piece(sk_sbchain *c, uint64_t iterator, const void *piece,
                                    size_t len);
SK_API int sk_sbchain_restoring(const sk_sbchain *c);

#ifdef __cplusplus
}
#endif
#endif
