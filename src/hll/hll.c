/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll.c: HyperLogLog sketches: made, copied, added to, estimated, merged
 * and folded, and read from a serialized body; and the small register sets
 * of maps made sketches and estimated.
 *
 * The algorithm
 * -------------
 * Each item is hashed to 64 bits. The low p bits pick one of m = 2^p
 * registers; the other q = 64 - p bits are a geometric coin: the register
 * remembers the largest "rank" it has seen, where the rank is one plus the
 * number of trailing zero bits of hash >> p. A sentinel bit at position q
 * caps the rank at q + 1. This is exactly what Redis does at p = 14, so for
 * the same items a sketch here and a Redis key hold the same registers.
 *
 * The count comes from the histogram C[k] of register values (Ertl, "New
 * cardinality estimation algorithms for HyperLogLog sketches", 2017):
 *
 *     z = m tau(1 - C[q+1]/m);  for k = q .. 1: z = (z + C[k]) / 2;
 *     z += m sigma(C[0]/m);     estimate = m^2 / (2 ln 2 z)
 *
 * sigma and tau are series that fold the linear-counting regime (many empty
 * registers) and the saturated regime into one formula, so there is no
 * switch between estimators, no bias table and no error bump anywhere from 0
 * to 2^64. The relative standard error is 1.04/sqrt(m) for large counts and
 * smaller for small ones. The arithmetic is written as Redis writes it, in
 * double without fused multiply-adds (CMake builds this file with
 * -ffp-contract=off), so the rounded count equals PFCOUNT's bit for bit.
 *
 * The union of two sketches is their register-wise maximum. A sketch of
 * precision p folds exactly into precision p' < p: register i goes to
 * i mod 2^p', and the d = p - p' bits i >> p' are the low bits of the new
 * rank field, so the new rank is ctz(i >> p') + 1 if those bits are not all
 * zero, else the old rank + d. That gives the very registers that the same
 * items would have produced at p'.
 *
 * Registers
 * ---------
 * A sketch is sparse while few registers are nonzero and dense after, as
 * hll_registers.c holds them and decides; this file sets them through its
 * calls (the dense path of an add inlined from hll_internal.h). Serialized
 * forms are in hll_native.c and hll_redis.c, behind hll_codec.c, and this
 * file calls none of them: their readers hand sk__hll_read_body the body
 * and their own sparse decoder. Every byte comes from the sketch's
 * allocator (alloc.h).
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "hll_internal.h"
#include "common/murmur64a.h"

/* 1 / (2 ln 2), the limit of the classic alpha_m, used by Ertl's estimator. */
#define ALPHA_INF 0.721347520444481703680

/* sqrt(3 ln 2 - 1): the relative standard error of HyperLogLog is this over
 * sqrt(m), the familiar 1.04/sqrt(m). */
#define RSE_FACTOR 1.0389618114391

void *sk__hll_new_object(size_t size, size_t alloc_at, unsigned precision,
                         const sk_allocator *allocator, int *rc)
{
    *rc = SK_EINVAL;
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        return NULL;
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    uint8_t *obj = sk__zalloc(&a, size);
    *rc = obj != NULL ? SK_OK : SK_ENOMEM;
    if (obj != NULL) {
        memcpy(obj, &precision, sizeof precision);
        memcpy(obj + alloc_at, &a, sizeof a);
    }
    return obj;
}

_Static_assert(offsetof(sk_hll, precision) == 0, "a sketch starts with its precision");

int sk__hll_create(sk_hll **out, unsigned precision, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    int rc;
    *out = sk__hll_new_object(sizeof(sk_hll), offsetof(sk_hll, alloc), precision, allocator, &rc);
    return rc;
}

int sk_hll_create(sk_hll **out, const sk_hll_options *opts)
{
    return sk__hll_create(out, sk__hll_asked_precision(opts), opts != NULL ? opts->allocator : NULL);
}

int sk_hll_new(sk_hll **out, unsigned precision)
{
    return sk__hll_create(out, precision, NULL);
}

void sk_hll_free(sk_hll *h)
{
    if (h == NULL)
        return;
    sk__hll_release_registers(h);
    sk_allocator a = h->alloc;
    sk__free(&a, h, sizeof *h);
}

int sk_hll_copy(sk_hll **out, const sk_hll *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__hll_create(out, src->precision, &src->alloc);
    if (rc != SK_OK)
        return rc;
    sk_hll *h = *out;
    size_t m = sk__hll_registers(src->precision);
    if (src->registers != NULL) {
        h->registers = sk__alloc(&h->alloc, m);
        if (h->registers == NULL)
            goto nomem;
        memcpy(h->registers, src->registers, m);
    } else if (src->sparse_len > 0) {
        h->sparse = sk__alloc(&h->alloc, src->sparse_len * sizeof *h->sparse);
        if (h->sparse == NULL)
            goto nomem;
        memcpy(h->sparse, src->sparse, src->sparse_len * sizeof *h->sparse);
        h->sparse_len = h->sparse_cap = src->sparse_len;
    }
    return SK_OK;
nomem:
    sk_hll_free(h);
    *out = NULL;
    return SK_ENOMEM;
}

int sk_hll_clear(sk_hll *h)
{
    if (h == NULL)
        return SK_EINVAL;
    sk__hll_release_registers(h);
    return SK_OK;
}

unsigned sk_hll_precision(const sk_hll *h)
{
    return h->precision;
}

void sk_hll_get_info(const sk_hll *h, sk_hll_info *info)
{
    size_t bytes = sizeof *h;
    if (h->registers != NULL)
        bytes += sk__hll_registers(h->precision);
    bytes += (size_t)h->sparse_cap * sizeof *h->sparse;
    *info = (sk_hll_info){.precision = h->precision,
                          .registers = sk__hll_registers(h->precision),
                          .encoding = h->registers == NULL ? SK_HLL_SPARSE : SK_HLL_DENSE,
                          .memory = bytes};
}

uint64_t sk_hll_hash(const void *data, size_t len)
{
    return sk_murmur64a(data, len, SK_REDIS_HLL_SEED);
}

static inline int add_hash(sk_hll *h, uint64_t hash)
{
    uint32_t idx;
    unsigned rank;
    sk__hll_register_of(hash, h->precision, &idx, &rank);
    return sk__hll_set_for(h, idx, rank, SK__HLL_ALONE);
}

int sk_hll_add_hash(sk_hll *h, uint64_t hash)
{
    return add_hash(h, hash);
}

int sk_hll_add(sk_hll *h, const void *data, size_t len)
{
    return add_hash(h, sk_murmur64a(data, len, SK_REDIS_HLL_SEED));
}

int sk__hll_set(sk_hll *h, uint32_t idx, unsigned value)
{
    return sk__hll_set_for(h, idx, value, SK__HLL_ALONE);
}

/* ---- estimation --------------------------------------------------------- */

/* Ertl's sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1); infinite at x = 1, which
 * makes an empty sketch count 0. */
static double ertl_sigma(double x)
{
    if (x == 1.)
        return INFINITY;
    double y = 1, z = x, previous;
    do {
        x *= x;
        previous = z;
        z += x * y;
        y += y;
    } while (previous != z);
    return z;
}

/* Ertl's tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3. */
static double ertl_tau(double x)
{
    if (x == 0. || x == 1.)
        return 0.;
    double y = 1.0, z = 1 - x, previous;
    do {
        x = sqrt(x);
        previous = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (previous != z);
    return z / 3;
}

double sk__hll_estimate_from_histogram(const uint32_t *histogram, unsigned precision)
{
    double m = sk__hll_registers(precision);
    unsigned q = 64 - precision;
    double z = m * ertl_tau((m - histogram[q + 1]) / m);
    for (unsigned k = q; k >= 1; k--) {
        z += histogram[k];
        z *= 0.5;
    }
    z += m * ertl_sigma(histogram[0] / m);
    return ALPHA_INF * m * m / z;
}

/* The histogram of n sparse entries (at any alignment) of m registers. */
static void entries_histogram(const uint8_t *entries, uint32_t n, uint32_t m,
                              uint32_t *histogram)
{
    for (uint32_t i = 0; i < n; i++)
        histogram[sk__hll_entry_value(sk__hll_small_entry(entries, i))]++;
    histogram[0] += m - n;
}

/* histogram must have 64 zeroed slots; register values never exceed 61. */
static void register_histogram(const sk_hll *h, uint32_t *histogram)
{
    uint32_t m = sk__hll_registers(h->precision);
    if (h->registers == NULL) {
        entries_histogram((const uint8_t *)h->sparse, h->sparse_len, m, histogram);
        return;
    }
    /* Four interleaved histograms, so that runs of equal registers do not
     * serialize on one counter's store-to-load latency. */
    uint32_t partial[4][64] = {{0}};
    const uint8_t *r = h->registers;
    for (uint32_t i = 0; i < m; i += 4) {
        partial[0][r[i]]++;
        partial[1][r[i + 1]]++;
        partial[2][r[i + 2]]++;
        partial[3][r[i + 3]]++;
    }
    for (int v = 0; v < 64; v++)
        histogram[v] = partial[0][v] + partial[1][v] + partial[2][v] + partial[3][v];
}

/* Rounds as Redis does (llroundl); an estimate beyond 2^63, possible only for
 * registers no real stream produces, saturates instead of overflowing. */
uint64_t sk__hll_round_estimate(double estimate)
{
    if (!(estimate < 0x1p63))
        return UINT64_MAX;
    return (uint64_t)llroundl(estimate);
}

uint64_t sk_hll_count(const sk_hll *h)
{
    uint32_t histogram[64] = {0};
    register_histogram(h, histogram);
    return sk__hll_round_estimate(sk__hll_estimate_from_histogram(histogram, h->precision));
}

/* The estimate and bounds of the registers of a histogram. */
static void estimate_with_bounds(const uint32_t *histogram, unsigned precision,
                                 sk_hll_estimate *out)
{
    double m = sk__hll_registers(precision);
    double n = sk__hll_estimate_from_histogram(histogram, precision);
    double nonzero = m - histogram[0];
    if (!(n < INFINITY)) {
        /* Every register at its largest value: no real stream gets here. */
        out->count = UINT64_MAX;
        out->relative_error = RSE_FACTOR / sqrt(m);
        for (int k = 0; k < 3; k++) {
            out->lower[k] = nonzero;
            out->upper[k] = INFINITY;
        }
        return;
    }

    /* The asymptotic HyperLogLog error, and below a few m the smaller error of
     * linear counting, Var = m (e^t - t - 1) with t = n/m, which Ertl's
     * estimator matches while many registers are still empty. */
    double sd = n * RSE_FACTOR / sqrt(m);
    double t = n / m;
    double sd_linear = sqrt(m * (expm1(t) - t));
    if (sd_linear < sd)
        sd = sd_linear;

    out->count = sk__hll_round_estimate(n);
    out->relative_error = n > 0 ? sd / n : RSE_FACTOR / sqrt(m);
    if (n == 0) {
        memset(out->lower, 0, sizeof out->lower);
        memset(out->upper, 0, sizeof out->upper);
        return;
    }
    /* Below a few hundred items the error is a handful of colliding items,
     * too discrete for a normal interval: one item of slack each side keeps
     * the bounds' coverage at their nominal level there, and is nothing at
     * larger counts. No count can be below the number of nonzero registers. */
    for (int k = 0; k < 3; k++) {
        double lower = n - (k + 1) * sd - 1;
        out->lower[k] = lower > nonzero ? lower : nonzero;
        out->upper[k] = n + (k + 1) * sd + 1;
    }
}

void sk_hll_estimate_with_bounds(const sk_hll *h, sk_hll_estimate *out)
{
    uint32_t histogram[64] = {0};
    register_histogram(h, histogram);
    estimate_with_bounds(histogram, h->precision, out);
}

void sk__hll_small_estimate(const uint8_t *set, unsigned n, unsigned precision,
                            sk_hll_estimate *out)
{
    uint32_t histogram[64] = {0};
    entries_histogram(set, n, sk__hll_registers(precision), histogram);
    estimate_with_bounds(histogram, precision, out);
}

/* ---- union and folding -------------------------------------------------- */

/* Where register idx of precision `from`, holding value, lands at precision
 * `to` <= from, and with which value (see the comment at the top). */
static void fold_register(uint32_t idx, unsigned value, unsigned from, unsigned to,
                          uint32_t *new_idx, unsigned *new_value)
{
    uint32_t dropped = idx >> to;
    *new_idx = idx & (sk__hll_registers(to) - 1);
    *new_value = dropped != 0 ? (unsigned)__builtin_ctz(dropped) + 1
                              : value + (from - to);
}

/* Sets into dst register idx of precision `from`, holding value, folded. */
static int set_folded(sk_hll *dst, uint32_t idx, unsigned value, unsigned from)
{
    uint32_t new_idx;
    unsigned new_value;
    fold_register(idx, value, from, dst->precision, &new_idx, &new_value);
    return sk__hll_set_for(dst, new_idx, new_value, SK__HLL_ALONE);
}

/* Sets into dst (precision <= src's) every nonzero register of src, folded. */
static int merge_registers(sk_hll *dst, const sk_hll *src)
{
    unsigned from = src->precision;
    if (src->registers != NULL) {
        uint32_t m = sk__hll_registers(from);
        if (from == dst->precision && dst->registers != NULL) {
            uint8_t *d = dst->registers;
            const uint8_t *s = src->registers;
            for (uint32_t i = 0; i < m; i++)
                d[i] = d[i] > s[i] ? d[i] : s[i];
            return SK_OK;
        }
        for (uint32_t i = 0; i < m; i++) {
            if (src->registers[i] == 0)
                continue;
            int rc = set_folded(dst, i, src->registers[i], from);
            if (rc < 0)
                return rc;
        }
        return SK_OK;
    }
    for (uint32_t i = 0; i < src->sparse_len; i++) {
        uint32_t e = src->sparse[i];
        int rc = set_folded(dst, sk__hll_entry_index(e), sk__hll_entry_value(e), from);
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

/* Merges src into result, a new sketch with dst's allocator, which then
 * takes the place of dst's contents; a failure frees it and leaves dst. */
static int merge_and_take(sk_hll *dst, sk_hll *result, const sk_hll *src)
{
    int rc = merge_registers(result, src);
    if (rc != SK_OK) {
        sk_hll_free(result);
        return rc;
    }
    sk__hll_release_registers(dst);
    *dst = *result;
    sk__free(&result->alloc, result, sizeof *result);
    return SK_OK;
}

int sk_hll_fold(sk_hll *h, unsigned precision)
{
    if (precision < SK_HLL_MIN_PRECISION || precision > h->precision)
        return SK_EINVAL;
    if (precision == h->precision)
        return SK_OK;
    sk_hll *folded;
    int rc = sk__hll_create(&folded, precision, &h->alloc);
    return rc != SK_OK ? rc : merge_and_take(h, folded, h);
}

int sk__hll_folded(const sk_hll *h, unsigned precision, sk_hll **folded)
{
    *folded = NULL;
    if (precision == h->precision)
        return SK_OK;
    int rc = sk__hll_create(folded, precision, &h->alloc);
    if (rc == SK_OK && (rc = merge_registers(*folded, h)) != SK_OK) {
        sk_hll_free(*folded);
        *folded = NULL;
    }
    return rc;
}

int sk_hll_merge(sk_hll *dst, const sk_hll *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    if (dst->registers != NULL && src->precision >= dst->precision)
        return merge_registers(dst, src); /* dense: sets cannot fail */
    /* Work on a copy when dst must be folded or could run out of memory half
     * way, so that a failure leaves dst as it was. */
    sk_hll *result;
    int rc = sk_hll_copy(&result, dst);
    if (rc == SK_OK && src->precision < dst->precision)
        rc = sk_hll_fold(result, src->precision);
    if (rc != SK_OK) {
        sk_hll_free(result);
        return rc;
    }
    return merge_and_take(dst, result, src);
}

/* ---- small register sets -------------------------------------------------- */

int sk__hll_small_to_sketch(sk_hll **out, const uint8_t *set, unsigned n, unsigned precision,
                            const sk_allocator *a)
{
    int rc = sk__hll_create(out, precision, a);
    for (unsigned i = 0; i < n && rc == SK_OK; i++) {
        uint32_t e = sk__hll_small_entry(set, i);
        if (sk__hll_set(*out, sk__hll_entry_index(e), sk__hll_entry_value(e)) < 0)
            rc = SK_ENOMEM;
    }
    if (rc != SK_OK) {
        sk_hll_free(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- serialized bodies ---------------------------------------------------- */

int sk__hll_read_body(sk_hll **out, unsigned precision, const sk_allocator *a, int dense,
                      const uint8_t *body, size_t len, sk__hll_sparse_reader read_sparse)
{
    sk_hll *h;
    int rc = sk__hll_create(&h, precision, a);
    if (rc != SK_OK)
        return rc;
    rc = dense ? sk__hll_read_packed(h, body) : read_sparse(h, body, len);
    if (rc != SK_OK) {
        sk_hll_free(h);
        return rc;
    }
    *out = h;
    return SK_OK;
}
