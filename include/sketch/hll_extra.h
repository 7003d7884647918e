/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/hll_extra.h: the HyperLogLog calls beyond the everyday ones of
 * sketch/hll.h: by hash and in batches, for callers that hash once or build
 * many sketches at once; the estimate with its error bounds; comparisons of
 * two sets; folds to a lower precision; the encoding a format would write.
 */
#ifndef SKETCH_HLL_EXTRA_H
#define SKETCH_HLL_EXTRA_H

#include "sketch/hll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The 64-bit hash of an item, as sk_hll_add computes it: sk_hll_add(h, d, n)
 * is sk_hll_add_hash(h, sk_hll_hash(d, n)). */
SK_API uint64_t sk_hll_hash(const void *data, size_t len);
SK_API int sk_hll_add_hash(sk_hll *h, uint64_t hash);

/* n items (items[i] of lens[i] bytes) or n hashes at once: the registers of
 * n single adds, faster when the sketch is out of cache (one of many built
 * at once), with the memory accesses of several in flight together. 1 if a
 * register changed, 0 if not, or SK_ENOMEM with those before the one that
 * failed added. */
SK_API int sk_hll_add_batch(sk_hll *h, const void *const *items, const size_t *lens, size_t n);
SK_API int sk_hll_add_hash_batch(sk_hll *h, const uint64_t *hashes, size_t n);

/* An estimate with its error: the count, the relative standard error of the
 * estimator at this count, and bounds at 1, 2 and 3 standard deviations
 * (about 68.3%, 95.4% and 99.7% two-sided confidence). */
typedef struct sk_hll_estimate {
    uint64_t count;
    double relative_error;
    double lower[3];
    double upper[3];
} sk_hll_estimate;
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

/* Lowers the precision of h to `precision` (at most its own): exactly the
 * sketch the same items would have built at that precision. */
SK_API int sk_hll_fold(sk_hll *h, unsigned precision);

/* The encoding sk_hll_serialize writes in `format`, which is not always the
 * one in memory (SK_HLL_SPARSE or SK_HLL_DENSE), or SK_EINCOMPAT for Redis's
 * below precision 14, or SK_ENOMEM. It looks at every register. */
SK_API int sk_hll_serialized_encoding(const sk_hll *h, sk_hll_format format);

#ifdef __cplusplus
}
#endif

#endif
