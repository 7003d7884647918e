/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_redis.c: Redis's HyperLogLog strings, read and written.
 *
 * Redis keeps a HyperLogLog as a plain string value (what GET returns and SET
 * stores) made of a 16-byte header and one of two bodies; both cover exactly
 * m = 16384 registers, so only precision 14 maps onto it:
 *
 *     0  "HYLL"
 *     4  encoding: 0 dense, 1 sparse
 *     5  3 bytes, unused
 *     8  cached cardinality, 8 bytes little-endian; the top bit of byte 15 set
 *        means the cache is stale and PFCOUNT must recompute it
 *
 * Dense body: 12288 bytes of 6-bit registers, least-significant bit first,
 * the same packing as sketch's own dense body.
 *
 * Sparse body: a run-length code of the registers in index order:
 *     00xxxxxx             ZERO:  x+1 registers (1..64) are 0
 *     01xxxxxx yyyyyyyy    XZERO: (x<<8 | y)+1 registers (1..16384) are 0
 *     1vvvvvxx             VAL:   x+1 registers (1..4) hold v+1 (1..32)
 * A register above 32 cannot be written sparse; nor does Redis keep a sparse
 * string longer than hll-sparse-max-bytes (3000 by default), so the writer
 * falls back to dense in both cases, as Redis itself would.
 *
 * The writer marks the cache stale instead of filling it, so Redis computes
 * the count itself on the first PFCOUNT rather than trusting a value from
 * outside. The reader ignores the cache for the same reason, and validates the
 * whole body first: sparse run lengths are summed in a 64-bit counter that
 * must reach exactly 16384 (overflowing sums have let corrupt strings write
 * out of bounds in Redis), and dense registers may not exceed 51, a value no
 * hash can produce.
 */
#include <string.h>

#include "common/format.h"
#include "hll_internal.h"

#define REDIS_HEADER_SIZE SK_REDIS_HLL_HEADER_SIZE
#define REDIS_REGISTERS SK_REDIS_HLL_REGISTERS
#define REDIS_DENSE_SIZE (REDIS_HEADER_SIZE + REDIS_REGISTERS * 6 / 8)
#define REDIS_SPARSE_MAX_BYTES 3000
#define REDIS_SPARSE_MAX_VALUE 32
#define REDIS_XZERO_MAX 16384
#define REDIS_ZERO_MAX 64
#define REDIS_VAL_MAX_RUN 4

/* Calls emit for each run of equal registers of a precision-14 sketch, in
 * index order; stops early and returns nonzero if emit does. */
typedef int (*run_fn)(void *ctx, unsigned value, uint32_t length);

static int for_each_run(const sk_hll *h, run_fn emit, void *ctx)
{
    uint32_t start = 0;
    unsigned current = sk__hll_get(h, 0);
    for (uint32_t i = 1; i <= REDIS_REGISTERS; i++) {
        unsigned value = i < REDIS_REGISTERS ? sk__hll_get(h, i) : ~0u;
        if (value == current)
            continue;
        if (emit(ctx, current, i - start))
            return 1;
        start = i;
        current = value;
    }
    return 0;
}

struct sparse_writer {
    uint8_t *out; /* NULL to measure only */
    size_t len;
};

static void put_byte(struct sparse_writer *w, unsigned byte)
{
    if (w->out != NULL)
        w->out[w->len] = (uint8_t)byte;
    w->len++;
}

static int write_sparse_run(void *ctx, unsigned value, uint32_t length)
{
    struct sparse_writer *w = ctx;
    if (value > REDIS_SPARSE_MAX_VALUE)
        return 1;
    while (length > 0) {
        uint32_t chunk;
        if (value != 0) {
            chunk = length < REDIS_VAL_MAX_RUN ? length : REDIS_VAL_MAX_RUN;
            put_byte(w, 0x80 | (value - 1) << 2 | (chunk - 1));
        } else if (length > REDIS_ZERO_MAX) {
            chunk = length < REDIS_XZERO_MAX ? length : REDIS_XZERO_MAX;
            put_byte(w, 0x40 | (chunk - 1) >> 8);
            put_byte(w, (chunk - 1) & 0xff);
        } else {
            chunk = length;
            put_byte(w, chunk - 1);
        }
        length -= chunk;
    }
    return w->len + REDIS_HEADER_SIZE > REDIS_SPARSE_MAX_BYTES;
}

/* The length of the sparse string, or 0 if the sketch must be written dense. */
static size_t sparse_size(const sk_hll *h)
{
    struct sparse_writer w = {NULL, 0};
    if (for_each_run(h, write_sparse_run, &w))
        return 0;
    return REDIS_HEADER_SIZE + w.len;
}

/* Redis strings are precision 14; a finer sketch is folded to it first. */
int sk__hll_redis_size(const sk_hll *h, size_t *size, int *sparse)
{
    sk_hll *folded;
    int rc = sk__hll_folded(h, SK_HLL_REDIS_PRECISION, &folded);
    if (rc != SK_OK)
        return rc;
    size_t sparse_len = sparse_size(folded != NULL ? folded : h);
    sk_hll_free(folded);
    *sparse = sparse_len != 0;
    *size = sparse_len != 0 ? sparse_len : REDIS_DENSE_SIZE;
    return SK_OK;
}

int sk__hll_redis_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len)
{
    sk_hll *folded;
    int rc = sk__hll_folded(h, SK_HLL_REDIS_PRECISION, &folded);
    if (rc != SK_OK)
        return rc;
    const sk_hll *src = folded != NULL ? folded : h;
    size_t sparse = sparse_size(src);
    size_t size = sparse != 0 ? sparse : REDIS_DENSE_SIZE;
    if (cap < size) {
        sk_hll_free(folded);
        return SK_ENOSPACE;
    }
    memset(buf, 0, REDIS_HEADER_SIZE);
    memcpy(buf, SK_REDIS_HLL_MAGIC, 4);
    buf[SK_REDIS_HLL_OFF_ENCODING] = sparse != 0 ? SK_REDIS_HLL_SPARSE : SK_REDIS_HLL_DENSE;
    buf[SK_REDIS_HLL_OFF_STALE] = SK_REDIS_HLL_STALE_BIT;
    if (sparse != 0) {
        struct sparse_writer w = {buf + REDIS_HEADER_SIZE, 0};
        for_each_run(src, write_sparse_run, &w);
    } else {
        sk__hll_pack6(src, buf + REDIS_HEADER_SIZE);
    }
    sk_hll_free(folded);
    *len = size;
    return SK_OK;
}

/* Checks that the opcodes cover exactly 16384 registers before any is set. */
static int sparse_is_valid(const uint8_t *p, size_t len)
{
    uint64_t covered = 0;
    for (size_t i = 0; i < len; i++) {
        if ((p[i] & 0xc0) == 0x00) {
            covered += (p[i] & 0x3f) + 1u;
        } else if ((p[i] & 0xc0) == 0x40) {
            if (i + 1 == len)
                return 0;
            covered += ((uint32_t)(p[i] & 0x3f) << 8 | p[i + 1]) + 1u;
            i++;
        } else {
            covered += (p[i] & 0x03) + 1u;
        }
        if (covered > REDIS_REGISTERS)
            return 0;
    }
    return covered == REDIS_REGISTERS;
}

static int read_sparse(sk_hll *h, const uint8_t *p, size_t len)
{
    if (!sparse_is_valid(p, len))
        return SK_ECORRUPT;
    uint32_t idx = 0;
    for (size_t i = 0; i < len; i++) {
        if ((p[i] & 0xc0) == 0x00) {
            idx += (p[i] & 0x3fu) + 1;
        } else if ((p[i] & 0xc0) == 0x40) {
            idx += ((uint32_t)(p[i] & 0x3f) << 8 | p[i + 1]) + 1;
            i++;
        } else {
            unsigned value = ((p[i] >> 2) & 0x1f) + 1;
            for (unsigned run = (p[i] & 0x03u) + 1; run > 0; run--) {
                int rc = sk__hll_set(h, idx++, value);
                if (rc < 0)
                    return rc;
            }
        }
    }
    return SK_OK;
}

int sk__hll_redis_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a)
{
    if (len < REDIS_HEADER_SIZE)
        return SK_ETRUNCATED;
    unsigned encoding = buf[SK_REDIS_HLL_OFF_ENCODING];
    if (encoding > SK_REDIS_HLL_SPARSE)
        return SK_ECORRUPT;
    if (encoding == SK_REDIS_HLL_DENSE && len != REDIS_DENSE_SIZE)
        return SK_ETRUNCATED;
    return sk__hll_read_body(out, SK_HLL_REDIS_PRECISION, a, encoding == SK_REDIS_HLL_DENSE,
                             buf + REDIS_HEADER_SIZE, len - REDIS_HEADER_SIZE, read_sparse);
}
