/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/topk.h: top-k: the k heaviest items of a stream, with their
 * counts, in fixed memory (HeavyKeeper, as RedisBloom's TOPK.* keeps it).
 *
 *     sk_topk *t;
 *     if (sk_topk_new(&t, 10) != SK_OK) ...          // the top 10
 *     const void *out; size_t out_len;
 *     if (sk_topk_add(t, "10.0.0.1", 8, 1, &out, &out_len) == 1)
 *         ...                                        // out left the top 10
 *     sk_topk_entry top[10];
 *     int n = sk_topk_list(t, top, 10);              // heaviest first
 *     sk_topk_free(t);
 *
 * Items hash, collide, decay and enter the top k as in RedisBloom, so that
 * a stream without collisions gives its answers; where two items share a
 * bucket, the heavier one keeps it with a probability that decays with its
 * count, drawn from a generator the sketch carries (and saves), so that two
 * copies given the same adds stay the same. Concurrent readers are fine; a
 * writer needs exclusive access. The format is docs/topk-format.md.
 */
#ifndef SKETCH_TOPK_H
#define SKETCH_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_topk sk_topk;

#define SK_TOPK_MAX_K (1u << 24)                      /* items kept */
#define SK_TOPK_MAX_BUCKETS (UINT64_C(1) << 32)       /* width x depth */
#define SK_TOPK_MAX_INCREMENT 100000u /* an add's decay is tried once per unit */

/* Zeroed fields but k take RedisBloom's defaults: width 8, depth 7, 0.9. */
typedef struct sk_topk_options {
    uint32_t k;
    uint32_t width;
    uint32_t depth;
    double decay;        /* in (0, 1] */
    uint64_t max_memory; /* 0: none; else SK_EBUDGET if the sketch would take more */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_topk_options;

SK_API int sk_topk_create(sk_topk **out, const sk_topk_options *opts);
SK_API int sk_topk_new(sk_topk **out, uint32_t k);
SK_API uint64_t sk_topk_create_memory(const sk_topk_options *opts); /* 0 if invalid */
SK_API void sk_topk_free(sk_topk *t);
SK_API int sk_topk_copy(sk_topk **out, const sk_topk *src);
SK_API int sk_topk_clear(sk_topk *t);

/* Adds `increment` (0..SK_TOPK_MAX_INCREMENT) sightings: 1 if that pushed
 * an item out of the top k, whose bytes *expelled gives (valid until the
 * next add or free), 0 if not, or SK_EINVAL or SK_ENOMEM. */
SK_API int sk_topk_add(sk_topk *t, const void *data, size_t len, uint32_t increment,
                       const void **expelled, size_t *expelled_len);
SK_API int sk_topk_query(const sk_topk *t, const void *data, size_t len); /* 1: in the top k */
SK_API uint32_t sk_topk_count(const sk_topk *t, const void *data, size_t len);

typedef struct sk_topk_entry {
    const void *item; /* the sketch's own bytes, valid until the next add */
    size_t len;
    uint32_t count;
} sk_topk_entry;
/* The top k, heaviest first (ties in a fixed order), into out[0..cap): how
 * many there are, or SK_ENOMEM for the k indexes it sorts. */
SK_API int sk_topk_list(const sk_topk *t, sk_topk_entry *out, size_t cap);

typedef struct sk_topk_info {
    uint32_t k, width, depth;
    double decay;
    size_t memory; /* all it holds, items included (core.h) */
} sk_topk_info;
SK_API void sk_topk_get_info(const sk_topk *t, sk_topk_info *info);

SK_API int sk_topk_serialized_size(const sk_topk *t, uint64_t *size);
SK_API int sk_topk_serialize(const sk_topk *t, void *buf, size_t cap, size_t *len);
SK_API int sk_topk_deserialize(sk_topk **out, const void *buf, size_t len,
                               const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
