/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll.c: HyperLogLog.
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
 * Representations
 * ---------------
 * Sparse: while few registers are nonzero the sketch keeps a sorted array of
 * 32-bit entries (index << 8 | value), so a sketch of 10 items is a few dozen
 * bytes. An insert is a search and a memmove; the array is converted
 * to dense registers at m/8 entries (at most 4096), where the memmove would
 * start to cost more than the 2^p bytes it saves.
 *
 * Dense: one byte per register (16 KB at p = 14). Bytes rather than packed
 * 6-bit fields make add a single load and store, merge a loop the compiler
 * vectorizes, and the histogram a byte scan. Serialized forms pack registers
 * to 6 bits, so a p = 14 sketch is 12 KB on disk and in Redis; they are in
 * hll_native.c and hll_redis.c, behind hll_codec.c, and this file calls none
 * of them. Every byte comes from the sketch's allocator (alloc.h).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "hll_internal.h"
#include "common/murmur64a.h"

/* 1 / (2 ln 2), the limit of the classic alpha_m, used by Ertl's estimator. */
#define ALPHA_INF 0.721347520444481703680

/* sqrt(3 ln 2 - 1): the relative standard error of HyperLogLog is this over
 * sqrt(m), the familiar 1.04/sqrt(m). */
#define RSE_FACTOR 1.0389618114391

static uint32_t sparse_limit(unsigned precision)
{
    uint32_t limit = sk__hll_registers(precision) / 8;
    return limit < 4096 ? limit : 4096;
}

int sk_hll_create(sk_hll **out, unsigned precision, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        return SK_EINVAL;
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    sk_hll *h = sk__zalloc(&a, sizeof *h);
    if (h == NULL)
        return SK_ENOMEM;
    h->precision = precision;
    h->alloc = a;
    *out = h;
    return SK_OK;
}

int sk_hll_new(sk_hll **out, unsigned precision)
{
    return sk_hll_create(out, precision, NULL);
}

/* Releases the registers, leaving an empty sparse sketch. */
static void release_registers(sk_hll *h)
{
    sk__free(&h->alloc, h->registers, sk__hll_registers(h->precision));
    sk__free(&h->alloc, h->sparse, (size_t)h->sparse_cap * sizeof *h->sparse);
    h->registers = NULL;
    h->sparse = NULL;
    h->sparse_len = h->sparse_cap = 0;
}

void sk_hll_free(sk_hll *h)
{
    if (h == NULL)
        return;
    release_registers(h);
    sk_allocator a = h->alloc;
    sk__free(&a, h, sizeof *h);
}

int sk_hll_copy(sk_hll **out, const sk_hll *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk_hll_create(out, src->precision, &src->alloc);
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
    release_registers(h);
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

/* ---- registers ---------------------------------------------------------- */

static uint32_t sparse_index(const sk_hll *h, uint32_t pos)
{
    return h->sparse[pos] >> 8;
}

/* Index of the first sparse entry whose register index is >= idx.
 * Registers are set at the indices of uniform hashes, so idx's place among
 * sparse_len of them is near sparse_len * idx / m (within a few times
 * sqrt(sparse_len)): a search that gallops out from there reads the one or
 * two cache lines around it, where a binary search would read log2 of the
 * array's lines, each a miss in a cold sketch. */
static uint32_t sparse_lower_bound(const sk_hll *h, uint32_t idx)
{
    uint32_t len = h->sparse_len;
    if (len == 0)
        return 0;
    uint32_t at = (uint32_t)(((uint64_t)idx * len) >> h->precision), lo, hi, step = 1;
    if (sparse_index(h, at) < idx) {
        /* The answer is past `at`, at or before at + step. */
        while (at + step < len && sparse_index(h, at + step) < idx) {
            at += step;
            step *= 2;
        }
        lo = at + 1;
        hi = at + step < len ? at + step : len;
    } else {
        /* The answer is at or before `at`, after at - step. */
        while (at >= step && sparse_index(h, at - step) >= idx) {
            at -= step;
            step *= 2;
        }
        lo = at >= step ? at - step + 1 : 0;
        hi = at;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sparse_index(h, mid) < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

unsigned sk__hll_get(const sk_hll *h, uint32_t idx)
{
    if (h->registers != NULL)
        return h->registers[idx];
    uint32_t pos = sparse_lower_bound(h, idx);
    if (pos < h->sparse_len && (h->sparse[pos] >> 8) == idx)
        return h->sparse[pos] & 0xff;
    return 0;
}

int sk__hll_make_dense(sk_hll *h)
{
    if (h->registers != NULL)
        return SK_OK;
    uint8_t *registers = sk__zalloc(&h->alloc, sk__hll_registers(h->precision));
    if (registers == NULL)
        return SK_ENOMEM;
    for (uint32_t i = 0; i < h->sparse_len; i++)
        registers[h->sparse[i] >> 8] = (uint8_t)(h->sparse[i] & 0xff);
    release_registers(h);
    h->registers = registers;
    return SK_OK;
}

/* Out of line, so that the dense path of every add stays a leaf that saves
 * no registers. */
__attribute__((noinline, cold)) static int sparse_set(sk_hll *h, uint32_t idx,
                                                       unsigned value)
{
    uint32_t pos = sparse_lower_bound(h, idx);
    if (pos < h->sparse_len && (h->sparse[pos] >> 8) == idx) {
        if ((h->sparse[pos] & 0xff) >= value)
            return 0;
        h->sparse[pos] = idx << 8 | value;
        return 1;
    }
    if (h->sparse_len >= sparse_limit(h->precision)) {
        int rc = sk__hll_make_dense(h);
        if (rc != SK_OK)
            return rc;
        h->registers[idx] = (uint8_t)value;
        return 1;
    }
    if (h->sparse_len == h->sparse_cap) {
        uint32_t cap = h->sparse_cap ? h->sparse_cap * 2 : 4;
        if (cap > sparse_limit(h->precision))
            cap = sparse_limit(h->precision);
        uint32_t *grown = sk__alloc(&h->alloc, cap * sizeof *grown);
        if (grown == NULL)
            return SK_ENOMEM;
        if (h->sparse_len > 0)
            memcpy(grown, h->sparse, h->sparse_len * sizeof *grown);
        sk__free(&h->alloc, h->sparse, (size_t)h->sparse_cap * sizeof *grown);
        h->sparse = grown;
        h->sparse_cap = cap;
    }
    memmove(h->sparse + pos + 1, h->sparse + pos,
            (h->sparse_len - pos) * sizeof *h->sparse);
    h->sparse[pos] = idx << 8 | value;
    h->sparse_len++;
    return 1;
}

static inline int set_register(sk_hll *h, uint32_t idx, unsigned value)
{
    if (h->registers != NULL) {
        if (h->registers[idx] >= value)
            return 0;
        h->registers[idx] = (uint8_t)value;
        return 1;
    }
    return sparse_set(h, idx, value);
}

int sk__hll_set(sk_hll *h, uint32_t idx, unsigned value)
{
    return set_register(h, idx, value);
}

static inline int add_hash(sk_hll *h, uint64_t hash)
{
    uint32_t idx;
    unsigned rank;
    sk__hll_register_of(hash, h->precision, &idx, &rank);
    return set_register(h, idx, rank);
}

int sk_hll_add_hash(sk_hll *h, uint64_t hash)
{
    return add_hash(h, hash);
}

int sk_hll_add(sk_hll *h, const void *data, size_t len)
{
    return add_hash(h, sk_murmur64a(data, len, SK_REDIS_HLL_SEED));
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

/* histogram must have 64 zeroed slots; register values never exceed 61. */
static void register_histogram(const sk_hll *h, uint32_t *histogram)
{
    uint32_t m = sk__hll_registers(h->precision);
    if (h->registers == NULL) {
        for (uint32_t i = 0; i < h->sparse_len; i++)
            histogram[h->sparse[i] & 0xff]++;
        histogram[0] += m - h->sparse_len;
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
static uint64_t round_estimate(double estimate)
{
    if (!(estimate < 0x1p63))
        return UINT64_MAX;
    return (uint64_t)llroundl(estimate);
}

uint64_t sk_hll_count(const sk_hll *h)
{
    uint32_t histogram[64] = {0};
    register_histogram(h, histogram);
    return round_estimate(sk__hll_estimate_from_histogram(histogram, h->precision));
}

void sk_hll_estimate_with_bounds(const sk_hll *h, sk_hll_estimate *out)
{
    uint32_t histogram[64] = {0};
    register_histogram(h, histogram);
    double m = sk__hll_registers(h->precision);
    double n = sk__hll_estimate_from_histogram(histogram, h->precision);
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

    out->count = round_estimate(n);
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

/* Sets into dst (precision <= src's) every nonzero register of src, folded. */
static int merge_registers(sk_hll *dst, const sk_hll *src)
{
    unsigned from = src->precision, to = dst->precision;
    if (src->registers != NULL) {
        uint32_t m = sk__hll_registers(from);
        if (from == to && dst->registers != NULL) {
            uint8_t *d = dst->registers;
            const uint8_t *s = src->registers;
            for (uint32_t i = 0; i < m; i++)
                d[i] = d[i] > s[i] ? d[i] : s[i];
            return SK_OK;
        }
        for (uint32_t i = 0; i < m; i++) {
            if (src->registers[i] == 0)
                continue;
            uint32_t idx;
            unsigned value;
            fold_register(i, src->registers[i], from, to, &idx, &value);
            int rc = sk__hll_set(dst, idx, value);
            if (rc < 0)
                return rc;
        }
        return SK_OK;
    }
    for (uint32_t i = 0; i < src->sparse_len; i++) {
        uint32_t idx;
        unsigned value;
        fold_register(src->sparse[i] >> 8, src->sparse[i] & 0xff, from, to, &idx,
                      &value);
        int rc = sk__hll_set(dst, idx, value);
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

/* dst takes the registers of src, which goes; both have one allocator. */
static void take_contents(sk_hll *dst, sk_hll *src)
{
    release_registers(dst);
    *dst = *src;
    sk__free(&src->alloc, src, sizeof *src);
}

int sk_hll_fold(sk_hll *h, unsigned precision)
{
    if (precision < SK_HLL_MIN_PRECISION || precision > h->precision)
        return SK_EINVAL;
    if (precision == h->precision)
        return SK_OK;
    sk_hll *folded;
    int rc = sk_hll_create(&folded, precision, &h->alloc);
    if (rc != SK_OK)
        return rc;
    rc = merge_registers(folded, h);
    if (rc != SK_OK) {
        sk_hll_free(folded);
        return rc;
    }
    take_contents(h, folded);
    return SK_OK;
}

int sk_hll_merge(sk_hll *dst, const sk_hll *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    /* Work on a copy when dst must be folded or could run out of memory half
     * way, so that a failure leaves dst as it was. */
    sk_hll *result;
    int rc;
    if (dst->registers != NULL && src->precision >= dst->precision)
        return merge_registers(dst, src); /* dense: sets cannot fail */
    if (src->precision < dst->precision) {
        rc = sk_hll_copy(&result, dst);
        if (rc == SK_OK)
            rc = sk_hll_fold(result, src->precision);
    } else {
        rc = sk_hll_copy(&result, dst);
    }
    if (rc == SK_OK)
        rc = merge_registers(result, src);
    if (rc != SK_OK) {
        sk_hll_free(result);
        return rc;
    }
    take_contents(dst, result);
    return SK_OK;
}

/* ---- 6-bit packing, shared with the Redis format -------------------------- */

void sk__hll_pack6(const sk_hll *h, uint8_t *out)
{
    uint32_t m = sk__hll_registers(h->precision);
    memset(out, 0, sk__hll_dense_size(h->precision));
    if (h->registers == NULL) {
        for (uint32_t i = 0; i < h->sparse_len; i++) {
            uint32_t idx = h->sparse[i] >> 8, value = h->sparse[i] & 0xff;
            size_t bit = (size_t)idx * 6;
            out[bit / 8] |= (uint8_t)(value << (bit % 8));
            if (bit % 8 > 2)
                out[bit / 8 + 1] |= (uint8_t)(value >> (8 - bit % 8));
        }
        return;
    }
    /* Four registers fill exactly three bytes. */
    for (uint32_t i = 0; i < m; i += 4) {
        const uint8_t *r = h->registers + i;
        uint8_t *o = out + i / 4 * 3;
        o[0] = (uint8_t)(r[0] | r[1] << 6);
        o[1] = (uint8_t)(r[1] >> 2 | r[2] << 4);
        o[2] = (uint8_t)(r[2] >> 4 | r[3] << 2);
    }
}

void sk__hll_unpack6(const uint8_t *in, uint32_t m, uint8_t *registers)
{
    for (uint32_t i = 0; i < m; i += 4) {
        const uint8_t *b = in + i / 4 * 3;
        registers[i] = b[0] & 63;
        registers[i + 1] = (uint8_t)((b[0] >> 6 | b[1] << 2) & 63);
        registers[i + 2] = (uint8_t)((b[1] >> 4 | b[2] << 4) & 63);
        registers[i + 3] = b[2] >> 2;
    }
}

