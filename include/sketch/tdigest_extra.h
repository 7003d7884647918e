/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/tdigest_extra.h: the t-digest calls beyond the everyday ones of
 * sketch/tdigest.h: the explicit compression step, ranks and values by
 * rank as TDIGEST.RANK and TDIGEST.BYRANK answer them, and trimmed means.
 * Reads here, too, answer as if the digest had been compressed first.
 */
#ifndef SKETCH_TDIGEST_EXTRA_H
#define SKETCH_TDIGEST_EXTRA_H

#include "sketch/tdigest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sorts the buffer into the centroids now: 1 if that changed the digest,
 * 0 if not (an empty buffer, or a lone value of weight 1, which stays). A read on a compressed digest needs no copy;
 * RedisBloom compresses on every read, and a server that wants its later
 * answers must call this where RedisBloom would. */
SK_API int sk_tdigest_compress(sk_tdigest *t);

/* For each x[i], the weight below it plus half the weight at it, rounded
 * as TDIGEST.RANK rounds (halves down); with `reverse`, the weight above
 * it plus half that at it (TDIGEST.REVRANK, halves up). -1 below the
 * minimum (reverse: above the maximum), the total weight past the other
 * end, -2 for every x while the digest is empty. */
SK_API int sk_tdigest_rank(const sk_tdigest *t, const double *x, int64_t *out, size_t n,
                           int reverse);
/* For each rank r[i] (>= 0, else SK_EINVAL), the value with r[i] of the
 * weight below it (reverse: above it), as TDIGEST.BYRANK answers: the
 * minimum (maximum) for 0, +inf (-inf) from the total weight on, NaN while
 * empty. */
SK_API int sk_tdigest_by_rank(const sk_tdigest *t, const int64_t *r, double *out, size_t n,
                              int reverse);

/* The mean of the values between the fractions lo and hi of the weight
 * (0 <= lo < hi <= 1, else SK_EINVAL), centroids cut at the ends. */
SK_API int sk_tdigest_trimmed_mean(const sk_tdigest *t, double lo, double hi, double *out);

#ifdef __cplusplus
}
#endif
#endif
