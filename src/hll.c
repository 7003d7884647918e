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
 * bytes. An insert is a binary search and a memmove; the array is converted
 * to dense registers at m/8 entries (at most 4096), where the memmove would
 * start to cost more than the 2^p bytes it saves.
 *
 * Dense: one byte per register (16 KB at p = 14). Bytes rather than packed
 * 6-bit fields make add a single load and store, merge a loop the compiler
 * vectorizes, and the histogram a byte scan. Serialized forms pack registers
 * to 6 bits, so a p = 14 sketch is 12 KB on disk and in Redis.
 *
 * Native serialized format, version 1 (all integers little-endian; see also
 * docs/hll-format.md):
 *
 *     offset size
 *      0     4    magic "SKHL"
 *      4     1    format version, 1
 *      5     1    encoding: 0 dense, 1 sparse
 *      6     1    precision p, 4..18
 *      7     1    hash: 1 = MurmurHash64A with seed 0xadc83b19 (Redis's)
 *      8     4    sparse: number of entries n; dense: 0
 *     12     4    checksum: XXH32 of the body, seeded with XXH32 of bytes 0..11
 *     16          body
 *
 * Dense body: m registers of 6 bits packed least-significant bit first, as
 * Redis packs them (6m/8 bytes). Sparse body: n entries of 4 bytes,
 * (index << 6 | value), strictly increasing, every value in 1..q+1.
 * The writer picks whichever body is smaller. The reader accepts a string only
 * if every field, length, value and the checksum is exactly as described.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "bytes.h"
#include "hll_internal.h"
#include "murmur64a.h"

#define NATIVE_MAGIC "SKHL"
#define NATIVE_VERSION 1
#define NATIVE_HEADER_SIZE 16
#define NATIVE_HASH_MURMUR64A_REDIS 1
#define ENCODING_DENSE 0
#define ENCODING_SPARSE 1

/* 1 / (2 ln 2), the limit of the classic alpha_m, used by Ertl's estimator. */
#define ALPHA_INF 0.721347520444481703680

/* sqrt(3 ln 2 - 1): the relative standard error of HyperLogLog is this over
 * sqrt(m), the familiar 1.04/sqrt(m). */
#define RSE_FACTOR 1.0389618114391

static uint32_t register_count(unsigned precision)
{
    return UINT32_C(1) << precision;
}

static uint32_t sparse_limit(unsigned precision)
{
    uint32_t limit = register_count(precision) / 8;
    return limit < 4096 ? limit : 4096;
}

static size_t dense_packed_size(unsigned precision)
{
    return (size_t)register_count(precision) * 6 / 8;
}

int sk_hll_new(sk_hll **out, unsigned precision)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        return SK_EINVAL;
    sk_hll *h = calloc(1, sizeof *h);
    if (h == NULL)
        return SK_ENOMEM;
    h->precision = precision;
    *out = h;
    return SK_OK;
}

void sk_hll_free(sk_hll *h)
{
    if (h == NULL)
        return;
    free(h->registers);
    free(h->sparse);
    free(h);
}

int sk_hll_copy(sk_hll **out, const sk_hll *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk_hll_new(out, src->precision);
    if (rc != SK_OK)
        return rc;
    sk_hll *h = *out;
    if (src->registers != NULL) {
        h->registers = malloc(register_count(src->precision));
        if (h->registers == NULL)
            goto nomem;
        memcpy(h->registers, src->registers, register_count(src->precision));
    } else if (src->sparse_len > 0) {
        h->sparse = malloc(src->sparse_len * sizeof *h->sparse);
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

void sk_hll_reset(sk_hll *h)
{
    free(h->registers);
    free(h->sparse);
    h->registers = NULL;
    h->sparse = NULL;
    h->sparse_len = h->sparse_cap = 0;
}

unsigned sk_hll_precision(const sk_hll *h)
{
    return h->precision;
}

int sk_hll_is_sparse(const sk_hll *h)
{
    return h->registers == NULL;
}

size_t sk_hll_memory(const sk_hll *h)
{
    size_t bytes = sizeof *h;
    if (h->registers != NULL)
        bytes += register_count(h->precision);
    bytes += (size_t)h->sparse_cap * sizeof *h->sparse;
    return bytes;
}

uint64_t sk_hll_hash(const void *data, size_t len)
{
    return sk_murmur64a(data, len, SK_REDIS_HLL_SEED);
}

/* ---- registers ---------------------------------------------------------- */

/* Index of the first sparse entry whose register index is >= idx. */
static uint32_t sparse_lower_bound(const sk_hll *h, uint32_t idx)
{
    uint32_t lo = 0, hi = h->sparse_len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((h->sparse[mid] >> 8) < idx)
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
    uint8_t *registers = calloc(register_count(h->precision), 1);
    if (registers == NULL)
        return SK_ENOMEM;
    for (uint32_t i = 0; i < h->sparse_len; i++)
        registers[h->sparse[i] >> 8] = (uint8_t)(h->sparse[i] & 0xff);
    free(h->sparse);
    h->sparse = NULL;
    h->sparse_len = h->sparse_cap = 0;
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
        uint32_t *grown = realloc(h->sparse, cap * sizeof *grown);
        if (grown == NULL)
            return SK_ENOMEM;
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
    unsigned p = h->precision;
    uint32_t idx = (uint32_t)(hash & (register_count(p) - 1));
    uint64_t rank_bits = (hash >> p) | UINT64_C(1) << (64 - p);
    unsigned rank = (unsigned)__builtin_ctzll(rank_bits) + 1;
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
    double m = register_count(precision);
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
    uint32_t m = register_count(h->precision);
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
    double m = register_count(h->precision);
    double n = sk__hll_estimate_from_histogram(histogram, h->precision);
    double nonzero = m - histogram[0];

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
    *new_idx = idx & (register_count(to) - 1);
    *new_value = dropped != 0 ? (unsigned)__builtin_ctz(dropped) + 1
                              : value + (from - to);
}

/* Sets into dst (precision <= src's) every nonzero register of src, folded. */
static int merge_registers(sk_hll *dst, const sk_hll *src)
{
    unsigned from = src->precision, to = dst->precision;
    if (src->registers != NULL) {
        uint32_t m = register_count(from);
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

static void take_contents(sk_hll *dst, sk_hll *src)
{
    free(dst->registers);
    free(dst->sparse);
    *dst = *src;
    free(src);
}

int sk_hll_fold(sk_hll *h, unsigned precision)
{
    if (precision < SK_HLL_MIN_PRECISION || precision > h->precision)
        return SK_EINVAL;
    if (precision == h->precision)
        return SK_OK;
    sk_hll *folded;
    int rc = sk_hll_new(&folded, precision);
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
    uint32_t m = register_count(h->precision);
    memset(out, 0, dense_packed_size(h->precision));
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

/* ---- native format ------------------------------------------------------- */

static int native_prefers_sparse(const sk_hll *h)
{
    uint32_t nonzero = h->registers == NULL ? h->sparse_len : 0;
    if (h->registers != NULL) {
        uint32_t m = register_count(h->precision);
        for (uint32_t i = 0; i < m; i++)
            nonzero += h->registers[i] != 0;
    }
    return (size_t)nonzero * 4 < dense_packed_size(h->precision);
}

static uint32_t native_checksum(const uint8_t *header, const uint8_t *body, size_t body_len)
{
    return XXH32(body, body_len, XXH32(header, 12, 0));
}

static size_t native_size(const sk_hll *h, int sparse)
{
    if (!sparse)
        return NATIVE_HEADER_SIZE + dense_packed_size(h->precision);
    size_t entries = h->sparse_len;
    if (h->registers != NULL) {
        uint32_t m = register_count(h->precision);
        entries = 0;
        for (uint32_t i = 0; i < m; i++)
            entries += h->registers[i] != 0;
    }
    return NATIVE_HEADER_SIZE + entries * 4;
}

static int native_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len)
{
    int sparse = native_prefers_sparse(h);
    size_t size = native_size(h, sparse);
    if (cap < size)
        return SK_ENOSPACE;
    uint8_t *body = buf + NATIVE_HEADER_SIZE;
    uint32_t entries = 0;
    if (sparse) {
        uint32_t m = register_count(h->precision);
        for (uint32_t i = 0; i < m; i++) {
            unsigned value = h->registers != NULL ? h->registers[i] : 0;
            if (h->registers == NULL) {
                if (entries == h->sparse_len)
                    break;
                i = h->sparse[entries] >> 8;
                value = h->sparse[entries] & 0xff;
            }
            if (value != 0)
                sk_store_le32(body + 4 * entries++, i << 6 | value);
        }
    } else {
        sk__hll_pack6(h, body);
    }
    memcpy(buf, NATIVE_MAGIC, 4);
    buf[4] = NATIVE_VERSION;
    buf[5] = sparse ? ENCODING_SPARSE : ENCODING_DENSE;
    buf[6] = (uint8_t)h->precision;
    buf[7] = NATIVE_HASH_MURMUR64A_REDIS;
    sk_store_le32(buf + 8, entries);
    sk_store_le32(buf + 12, native_checksum(buf, body, size - NATIVE_HEADER_SIZE));
    *len = size;
    return SK_OK;
}

static int native_read(sk_hll **out, const uint8_t *buf, size_t len)
{
    if (len < NATIVE_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (buf[4] != NATIVE_VERSION)
        return SK_EVERSION;
    unsigned encoding = buf[5], precision = buf[6];
    if (encoding > ENCODING_SPARSE || precision < SK_HLL_MIN_PRECISION ||
        precision > SK_HLL_MAX_PRECISION || buf[7] != NATIVE_HASH_MURMUR64A_REDIS)
        return SK_ECORRUPT;
    uint32_t m = register_count(precision);
    uint32_t entries = sk_load_le32(buf + 8);
    unsigned max_rank = sk__hll_max_rank(precision);
    size_t body_len = len - NATIVE_HEADER_SIZE;
    const uint8_t *body = buf + NATIVE_HEADER_SIZE;

    if (encoding == ENCODING_DENSE) {
        if (entries != 0)
            return SK_ECORRUPT;
        if (body_len != dense_packed_size(precision))
            return SK_ETRUNCATED;
    } else {
        if (entries > m)
            return SK_ECORRUPT;
        if (body_len != (size_t)entries * 4)
            return SK_ETRUNCATED;
    }
    if (native_checksum(buf, body, body_len) != sk_load_le32(buf + 12))
        return SK_ECHECKSUM;

    sk_hll *h;
    int rc = sk_hll_new(&h, precision);
    if (rc != SK_OK)
        return rc;
    if (encoding == ENCODING_DENSE) {
        h->registers = malloc(m);
        if (h->registers == NULL) {
            sk_hll_free(h);
            return SK_ENOMEM;
        }
        sk__hll_unpack6(body, m, h->registers);
        for (uint32_t i = 0; i < m; i++) {
            if (h->registers[i] > max_rank) {
                sk_hll_free(h);
                return SK_ECORRUPT;
            }
        }
    } else {
        for (uint32_t i = 0; i < entries; i++) {
            uint32_t entry = sk_load_le32(body + 4 * i);
            uint32_t idx = entry >> 6, value = entry & 63;
            int ordered = i == 0 || idx > sk_load_le32(body + 4 * (i - 1)) >> 6;
            if (idx >= m || value == 0 || value > max_rank || !ordered) {
                sk_hll_free(h);
                return SK_ECORRUPT;
            }
            /* Entries arrive in index order, so every set appends. */
            rc = sk__hll_set(h, idx, value);
            if (rc < 0) {
                sk_hll_free(h);
                return rc;
            }
        }
    }
    *out = h;
    return SK_OK;
}

/* ---- public serialization ------------------------------------------------ */

size_t sk_hll_serialized_size(const sk_hll *h, sk_hll_format format)
{
    if (format == SK_HLL_REDIS)
        return h->precision < SK_HLL_REDIS_PRECISION ? 0 : sk__hll_redis_size(h);
    return native_size(h, native_prefers_sparse(h));
}

int sk_hll_serialize(const sk_hll *h, sk_hll_format format, void *buf, size_t cap,
                     size_t *len)
{
    if (h == NULL || buf == NULL || len == NULL)
        return SK_EINVAL;
    if (format == SK_HLL_NATIVE)
        return native_write(h, buf, cap, len);
    if (format != SK_HLL_REDIS)
        return SK_EINVAL;
    if (h->precision < SK_HLL_REDIS_PRECISION)
        return SK_EINCOMPAT;
    return sk__hll_redis_write(h, buf, cap, len);
}

int sk_hll_deserialize(sk_hll **out, const void *buf, size_t len, sk_hll_format *format)
{
    if (out == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    *out = NULL;
    const uint8_t *bytes = buf;
    size_t prefix = len < 4 ? len : 4;
    if (prefix > 0 && memcmp(bytes, NATIVE_MAGIC, prefix) == 0) {
        if (format != NULL)
            *format = SK_HLL_NATIVE;
        return len < 4 ? SK_ETRUNCATED : native_read(out, bytes, len);
    }
    if (prefix > 0 && memcmp(bytes, "HYLL", prefix) == 0) {
        if (format != NULL)
            *format = SK_HLL_REDIS;
        return len < 4 ? SK_ETRUNCATED : sk__hll_redis_read(out, bytes, len);
    }
    return SK_EFORMAT;
}
