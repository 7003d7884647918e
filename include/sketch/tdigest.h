/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/tdigest.h: t-digest: quantiles, ranks and the CDF of a stream of
 * numbers, estimated in memory that grows with the compression, not with
 * the stream (the merging t-digest, as RedisBloom's TDIGEST.* keeps it).
 *
 *     sk_tdigest *t;
 *     if (sk_tdigest_new(&t, 100) != SK_OK) ...       // compression 100
 *     sk_tdigest_add(t, 12.5, 1);                    // a latency, once
 *     double q = 0.99, p99;
 *     sk_tdigest_quantiles(t, &q, &p99, 1);
 *     sk_tdigest_free(t);
 *
 * Values go into a buffer that is sorted and merged into centroids when it
 * fills, step for step as RedisBloom merges it, so that the same adds give
 * the same answers. A read answers as if sk_tdigest_compress had merged the
 * buffer first: it works on a compressed copy when the buffer holds values
 * (SK_ENOMEM if that copy cannot be made), so reads never change a digest
 * and concurrent readers are fine; a writer needs exclusive access. Reads
 * of an empty digest answer NaN. Ranks, trimmed means and the explicit
 * merge step are in sketch/tdigest_extra.h; the format is
 * docs/tdigest-format.md.
 */
#ifndef SKETCH_TDIGEST_H
#define SKETCH_TDIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_tdigest sk_tdigest;

/* Capacity 6 x compression + 10 nodes, held in 31 bits as RedisBloom's. */
#define SK_TDIGEST_MAX_COMPRESSION 357913939u
#define SK_TDIGEST_DEFAULT_COMPRESSION 100u

typedef struct sk_tdigest_options {
    uint32_t compression; /* 0: SK_TDIGEST_DEFAULT_COMPRESSION */
    uint64_t max_memory;  /* 0: none; else SK_EBUDGET if a full digest would take more */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_tdigest_options;

SK_API int sk_tdigest_create(sk_tdigest **out, const sk_tdigest_options *opts);
/* The memory a digest of these options takes when its buffer is full: its
 * most; 0 if the options are invalid. */
SK_API uint64_t sk_tdigest_create_memory(const sk_tdigest_options *opts);
SK_API int sk_tdigest_new(sk_tdigest **out, uint32_t compression);
SK_API void sk_tdigest_free(sk_tdigest *t);
SK_API int sk_tdigest_copy(sk_tdigest **out, const sk_tdigest *src);
SK_API int sk_tdigest_clear(sk_tdigest *t); /* keeps the compression */

/* Adds a finite value `weight` (>= 1) times: SK_EINVAL for NaN, an
 * infinity or weight 0, SK_ETOOLARGE if the total weight would pass
 * INT64_MAX (the digest is then unchanged), SK_EFULL if its centroids alone
 * fill its capacity (a digest read from bytes written so), SK_ENOMEM. */
SK_API int sk_tdigest_add(sk_tdigest *t, double value, uint64_t weight);

/* dst gets src's centroids as adds, after both are compressed (src in a
 * copy, if its buffer holds values): RedisBloom's TDIGEST.MERGE step. */
SK_API int sk_tdigest_merge(sk_tdigest *dst, const sk_tdigest *src);

/* The value below which a fraction q[i] (in [0, 1], else SK_EINVAL) of the
 * weight lies, interpolated between centroids, for n fractions. */
SK_API int sk_tdigest_quantiles(const sk_tdigest *t, const double *q, double *out, size_t n);
/* The fraction of the weight at or below x[i] (half of that at x[i]). */
SK_API int sk_tdigest_cdf(const sk_tdigest *t, const double *x, double *out, size_t n);

typedef struct sk_tdigest_info {
    uint32_t compression;
    uint32_t capacity;          /* nodes: 6 x compression + 10 */
    uint32_t merged_nodes;      /* centroids */
    uint32_t unmerged_nodes;    /* values in the buffer */
    int64_t merged_weight;
    int64_t unmerged_weight;
    int64_t total_compressions; /* merges of the buffer so far */
    double min, max;            /* NaN while empty */
    size_t memory;              /* all it holds now (core.h) */
} sk_tdigest_info;
SK_API void sk_tdigest_get_info(const sk_tdigest *t, sk_tdigest_info *info);

/* The digest as one byte string, buffer and all (docs/tdigest-format.md). */
SK_API int sk_tdigest_serialized_size(const sk_tdigest *t, uint64_t *size);
SK_API int sk_tdigest_serialize(const sk_tdigest *t, void *buf, size_t cap, size_t *len);
SK_API int sk_tdigest_deserialize(sk_tdigest **out, const void *buf, size_t len,
                                  const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
