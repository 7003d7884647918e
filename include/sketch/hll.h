/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/hll.h: HyperLogLog, an estimate of the number of distinct items in
 * a stream, in memory that depends on the precision p alone.
 *
 * A sketch of precision p (4..18) has m = 2^p registers and a relative
 * standard error of 1.04/sqrt(m): 0.81% at the default p = 14, whose
 * serialized form is 12 KB however many items it has seen. Items are hashed
 * with Redis's hash (MurmurHash64A, seed 0xadc83b19), so a p = 14 sketch and
 * a Redis HyperLogLog of the same items hold the same registers and give the
 * same count as PFCOUNT.
 *
 *     sk_hll *h;
 *     if (sk_hll_new(&h, SK_HLL_DEFAULT_PRECISION) != SK_OK) ...
 *     sk_hll_add(h, "alice", 5);
 *     sk_hll_add(h, "bob", 3);
 *     uint64_t n = sk_hll_count(h);          // 2
 *     sk_hll_free(h);
 *
 * Concurrent readers are fine; a writer needs exclusive access. Calls by
 * hash, in batches, with error bounds, comparisons and folds are in
 * sketch/hll_extra.h; the shape every family shares is docs/api.md.
 */
#ifndef SKETCH_HLL_H
#define SKETCH_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SK_HLL_MIN_PRECISION 4
#define SK_HLL_MAX_PRECISION 18
#define SK_HLL_DEFAULT_PRECISION 14
#define SK_HLL_REDIS_PRECISION 14

typedef struct sk_hll sk_hll;

/* Zero-initialized fields take the defaults. */
typedef struct sk_hll_options {
    unsigned precision;            /* 4..18; 0: SK_HLL_DEFAULT_PRECISION */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_hll_options;

/* An empty sketch (SK_EINVAL for a precision out of range); sk_hll_new is
 * sk_hll_create with malloc. */
SK_API int sk_hll_create(sk_hll **out, const sk_hll_options *opts);
SK_API int sk_hll_new(sk_hll **out, unsigned precision);
SK_API void sk_hll_free(sk_hll *h);
SK_API int sk_hll_copy(sk_hll **out, const sk_hll *src); /* with src's allocator */
SK_API int sk_hll_clear(sk_hll *h);                      /* keeps the precision */

/* Adds an item (any bytes): 1 if a register changed, 0 if not (as Redis's
 * PFADD), or SK_ENOMEM. */
SK_API int sk_hll_add(sk_hll *h, const void *data, size_t len);

/* The estimated number of distinct items. */
SK_API uint64_t sk_hll_count(const sk_hll *h);

/* dst becomes the union of dst and src, at the smaller precision of the
 * two: the sketch the items of both would have built at that precision. */
SK_API int sk_hll_merge(sk_hll *dst, const sk_hll *src);

/* Sparse: only the nonzero registers, while they number fewer than m/8 and
 * at most 4096 in memory; dense: all m. */
typedef enum sk_hll_encoding { SK_HLL_SPARSE = 0, SK_HLL_DENSE = 1 } sk_hll_encoding;
typedef struct sk_hll_info {
    unsigned precision;
    uint32_t registers;       /* m = 2^precision */
    sk_hll_encoding encoding; /* in memory */
    size_t memory;            /* all it holds (core.h) */
} sk_hll_info;
SK_API void sk_hll_get_info(const sk_hll *h, sk_hll_info *info); /* constant time */
SK_API unsigned sk_hll_precision(const sk_hll *h);

/* SK_HLL_NATIVE is sketch's own versioned format (docs/hll-format.md);
 * SK_HLL_REDIS the string Redis keeps under a HyperLogLog key, written for
 * precision 14 and up (a finer sketch is folded to 14; SK_EINCOMPAT below). */
typedef enum sk_hll_format { SK_HLL_NATIVE = 0, SK_HLL_REDIS = 1 } sk_hll_format;

/* sk_hll_serialized_size is the size sk_hll_serialize writes (the dense
 * size, always enough, if memory to fold a finer sketch runs short);
 * sk_hll_serialize gives SK_ENOSPACE if cap is short. sk_hll_deserialize
 * reads either format, told apart by the first four bytes, and stores it in
 * *format (may be NULL): any byte string gives a sketch or SK_EFORMAT,
 * SK_EVERSION, SK_ETRUNCATED, SK_ECORRUPT, SK_ECHECKSUM or SK_ENOMEM. */
#define SK_HLL_MAX_SERIALIZED_SIZE (16 + ((size_t)4 << SK_HLL_MAX_PRECISION))
SK_API int sk_hll_serialized_size(const sk_hll *h, sk_hll_format format, uint64_t *size);
SK_API int sk_hll_serialize(const sk_hll *h, sk_hll_format format, void *buf, size_t cap,
                            size_t *len);
SK_API int sk_hll_deserialize(sk_hll **out, const void *buf, size_t len, sk_hll_format *format,
                              const sk_allocator *allocator);

/* sk_hll_save writes path atomically (temporary file, fsync, rename: a
 * crash leaves the old file or the new one); sk_hll_open reads a file as
 * sk_hll_deserialize, SK_ETRUNCATED if it is longer than any sketch. SK_EIO
 * leaves errno set. */
SK_API int sk_hll_save(const sk_hll *h, sk_hll_format format, const char *path);
SK_API int sk_hll_open(sk_hll **out, const char *path, sk_hll_format *format,
                       const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif
