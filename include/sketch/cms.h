/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/cms.h: count-min sketches: how often has each item been seen,
 * estimated in fixed memory, never below the truth.
 *
 *     sk_cms *c;
 *     if (sk_cms_new(&c, 2000, 5) != SK_OK) ...   // width, depth
 *     sk_cms_add(c, "10.0.0.1", 8, 3, NULL);     // seen 3 times
 *     sk_cms_count(c, "10.0.0.1", 8);            // >= 3
 *     sk_cms_free(c);
 *
 * A sketch of width w and depth d keeps d rows of w 32-bit counters. With
 * w = ceil(2/error) and d = ceil(log(delta)/log(1/2)) an estimate is above
 * the truth by more than error x total with probability at most delta.
 * Items hash as RedisBloom's CMS.* commands hash them, so the same stream
 * gives the same counts; a counter stops at UINT32_MAX rather than wrap.
 * Concurrent readers are fine; a writer needs exclusive access. The shape
 * every family shares is docs/api.md; the format is docs/cms-format.md.
 */
#ifndef SKETCH_CMS_H
#define SKETCH_CMS_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_cms sk_cms;

#define SK_CMS_MAX_CELLS (UINT64_C(1) << 32) /* width x depth: 16 GiB of counters */

/* Give width and depth, or error and delta (each in (0, 1)); zeroed
 * fields elsewhere take the defaults. */
typedef struct sk_cms_options {
    uint32_t width;
    uint32_t depth;
    double error; /* instead of width: the estimate's excess, as a fraction of the total */
    double delta; /* instead of depth: the probability that the excess is larger */
    uint64_t max_memory; /* 0: none; else SK_EBUDGET if the sketch would take more */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_cms_options;

/* SK_EINVAL for options out of range or mixed, SK_ETOOLARGE past
 * SK_CMS_MAX_CELLS. sk_cms_new is sk_cms_create with malloc. */
SK_API int sk_cms_create(sk_cms **out, const sk_cms_options *opts);
/* The memory sk_cms_create would take for these options; 0 if invalid. */
SK_API uint64_t sk_cms_create_memory(const sk_cms_options *opts);
SK_API int sk_cms_new(sk_cms **out, uint32_t width, uint32_t depth);
SK_API void sk_cms_free(sk_cms *c);
SK_API int sk_cms_copy(sk_cms **out, const sk_cms *src); /* with src's allocator */
SK_API int sk_cms_clear(sk_cms *c);                      /* keeps the dimensions */

/* Adds `count` sightings of the item; *estimate (if not NULL) receives its
 * count afterwards, as CMS.INCRBY replies. */
SK_API int sk_cms_add(sk_cms *c, const void *data, size_t len, uint64_t count,
                      uint32_t *estimate);
SK_API uint32_t sk_cms_count(const sk_cms *c, const void *data, size_t len);

/* dst becomes the sum of srcs[i] x weights[i] (weights NULL: all 1), of
 * dst's dimensions (SK_EINCOMPAT otherwise); dst may be one of them. If a
 * counter or the total would leave [0, UINT32_MAX] or [0, INT64_MAX],
 * SK_EINVAL and dst is unchanged. sk_cms_merge adds one sketch. */
SK_API int sk_cms_merge_weighted(sk_cms *dst, const sk_cms *const *srcs, const int64_t *weights,
                                 size_t n);
SK_API int sk_cms_merge(sk_cms *dst, const sk_cms *src);

typedef struct sk_cms_info {
    uint32_t width;
    uint32_t depth;
    uint64_t total;  /* the sum of every count added (CMS.INFO's count) */
    size_t memory;   /* all it holds (core.h) */
} sk_cms_info;
SK_API void sk_cms_get_info(const sk_cms *c, sk_cms_info *info);

/* The sketch as one byte string (docs/cms-format.md). */
SK_API int sk_cms_serialized_size(const sk_cms *c, uint64_t *size);
SK_API int sk_cms_serialize(const sk_cms *c, void *buf, size_t cap, size_t *len);
SK_API int sk_cms_deserialize(sk_cms **out, const void *buf, size_t len,
                              const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
