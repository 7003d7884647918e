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
 * A sketch is not thread-safe: concurrent readers are fine, a writer needs
 * exclusive access.
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

/* Serialized forms. SK_HLL_NATIVE is sketch's own versioned format (see
 * docs/hll-format.md); SK_HLL_REDIS is the string Redis keeps under a
 * HyperLogLog key, for GET, SET and RESTORE-free exchange with Redis. */
typedef enum sk_hll_format { SK_HLL_NATIVE = 0, SK_HLL_REDIS = 1 } sk_hll_format;

/* An estimate with its error: the count, the relative standard error of the
 * estimator at this count, and bounds at 1, 2 and 3 standard deviations
 * (about 68.3%, 95.4% and 99.7% two-sided confidence). */
typedef struct sk_hll_estimate {
    uint64_t count;
    double relative_error;
    double lower[3];
    double upper[3];
} sk_hll_estimate;

/* Creates an empty sketch; precision must lie in 4..18. sk_hll_new uses
 * malloc, sk_hll_create the caller's allocator (NULL: malloc). */
SK_API int sk_hll_new(sk_hll **out, unsigned precision);
SK_API int sk_hll_create(sk_hll **out, unsigned precision, const sk_allocator *allocator);
SK_API void sk_hll_free(sk_hll *h);

/* Creates an independent copy of src, with src's allocator. */
SK_API int sk_hll_copy(sk_hll **out, const sk_hll *src);

/* Forgets every item, keeping the precision. */
SK_API int sk_hll_clear(sk_hll *h);

SK_API unsigned sk_hll_precision(const sk_hll *h);

/* How registers are kept: sparse (only the nonzero ones, while they number
 * fewer than m/8 and at most 4096 in memory) or dense (all m). */
typedef enum sk_hll_encoding { SK_HLL_SPARSE = 0, SK_HLL_DENSE = 1 } sk_hll_encoding;

/* What a sketch is in memory, in constant time. */
typedef struct sk_hll_info {
    unsigned precision;
    uint32_t registers;       /* m = 2^precision */
    sk_hll_encoding encoding;
    size_t memory;            /* all it holds (core.h) */
} sk_hll_info;
SK_API void sk_hll_get_info(const sk_hll *h, sk_hll_info *info);

/* The encoding sk_hll_serialize writes in `format`, which is not always the
 * one in memory (SK_HLL_SPARSE or SK_HLL_DENSE), or SK_EINCOMPAT for Redis's
 * below precision 14, or SK_ENOMEM. It looks at every register. */
SK_API int sk_hll_serialized_encoding(const sk_hll *h, sk_hll_format format);

/* The 64-bit hash of an item, as sk_hll_add computes it. */
SK_API uint64_t sk_hll_hash(const void *data, size_t len);

/* Adds an item (any bytes) or an item's precomputed 64-bit hash. Returns 1 if
 * a register changed, 0 if not (like Redis's PFADD), or SK_ENOMEM. */
SK_API int sk_hll_add(sk_hll *h, const void *data, size_t len);
SK_API int sk_hll_add_hash(sk_hll *h, uint64_t hash);
/* Adds n precomputed hashes, the registers those n adds would give, faster
 * when the sketch is out of cache (one of many built at once). Returns 1 if
 * a register changed, 0 if not, or SK_ENOMEM with the hashes before the one
 * that failed added. */
SK_API int sk_hll_add_hashes(sk_hll *h, const uint64_t *hashes, size_t n);

/* The estimated number of distinct items. */
SK_API uint64_t sk_hll_count(const sk_hll *h);

/* The estimate with its standard error and bounds. */
SK_API void sk_hll_estimate_with_bounds(const sk_hll *h, sk_hll_estimate *out);

/* One quantity of a comparison: its estimate, standard error, and bounds
 * at 1, 2 and 3 standard errors, clipped to the quantity's range. */
typedef struct sk_hll_part {
    double estimate;
    double standard_error;
    double lower[3];
    double upper[3];
} sk_hll_part;

/* What sketches of sets A and B say of both sets together, by joint
 * maximum likelihood (Ertl 2017; docs/hll-compare.md): far more precise for
 * a small intersection than |A| + |B| - |A u B|. */
typedef struct sk_hll_comparison {
    unsigned precision;   /* the smaller one's; the other is folded to it */
    sk_hll_part either;   /* |A u B| */
    sk_hll_part both;     /* |A n B| */
    sk_hll_part a_only;   /* |A \ B| */
    sk_hll_part b_only;   /* |B \ A| */
    sk_hll_part jaccard;  /* |A n B| / |A u B|, 0 when both are empty */
    sk_hll_part retained; /* |A n B| / |A|: the share of A also in B */
} sk_hll_comparison;
SK_API int sk_hll_compare(const sk_hll *a, const sk_hll *b, sk_hll_comparison *out);

/* Makes dst the union of dst and src. Sketches of different precision are
 * combined at the smaller one, so dst may lose precision: folding a sketch to
 * a lower precision gives exactly the sketch the same items would have built
 * at that precision. */
SK_API int sk_hll_merge(sk_hll *dst, const sk_hll *src);

/* Lowers the precision of h to p (<= its own), exactly as described above. */
SK_API int sk_hll_fold(sk_hll *h, unsigned precision);

/* The exact size sk_hll_serialize will write in the given format. The Redis
 * format needs precision 14 or more (higher ones are folded to 14); for a
 * lower precision this returns 0. */
SK_API size_t sk_hll_serialized_size(const sk_hll *h, sk_hll_format format);

/* Writes h into buf (cap bytes) and stores the length in *len. Returns
 * SK_ENOSPACE if cap is too small, SK_EINCOMPAT for the Redis format below
 * precision 14. */
SK_API int sk_hll_serialize(const sk_hll *h, sk_hll_format format, void *buf,
                            size_t cap, size_t *len);

/* Reads a sketch in either format, told apart by its first four bytes, and
 * stores the format in *format if it is not NULL. Any byte string of any
 * length gives a sketch or an error code: SK_EFORMAT, SK_EVERSION,
 * SK_ETRUNCATED, SK_ECORRUPT, SK_ECHECKSUM or SK_ENOMEM. No valid sketch
 * is longer than SK_HLL_MAX_SERIALIZED_SIZE. */
#define SK_HLL_MAX_SERIALIZED_SIZE (16 + ((size_t)4 << SK_HLL_MAX_PRECISION))
SK_API int sk_hll_deserialize(sk_hll **out, const void *buf, size_t len,
                              sk_hll_format *format, const sk_allocator *allocator);

/* Writes h to path atomically in `format` (temporary file, fsync, rename):
 * a crash leaves the old file or the new one. SK_EIO leaves errno set. */
SK_API int sk_hll_save(const sk_hll *h, sk_hll_format format, const char *path);

/* Reads a sketch file in either format, as sk_hll_deserialize; SK_EIO (errno
 * set) if it cannot be read, SK_ETRUNCATED if it is longer than any sketch. */
SK_API int sk_hll_load(sk_hll **out, const char *path, sk_hll_format *format,
                       const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif
