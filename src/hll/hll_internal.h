/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_internal.h: what the HyperLogLog core (hll.c) gives the files of its
 * serialized forms: hll_native.c and hll_redis.c, which read and write
 * bytes, and hll_codec.c, which chooses between them behind the public
 * calls. The core calls none of them. Nothing here is exported: the
 * library is built with hidden visibility, and the names start with sk__ so
 * that a static link cannot collide with a user's symbols either.
 */
#ifndef SKETCH_HLL_INTERNAL_H
#define SKETCH_HLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/alloc.h"
#include "sketch/hll.h"

struct sk_hll {
    unsigned precision;
    /* Dense: one register per byte, m of them. NULL while the sketch is sparse. */
    uint8_t *registers;
    /* Sparse: the nonzero registers as (index << 8 | value), sorted by index. */
    uint32_t *sparse;
    uint32_t sparse_len;
    uint32_t sparse_cap;
    sk_allocator alloc; /* after the fields every add reads */
};

/* The largest register value at precision p: the rank of a hash whose 64 - p
 * rank bits are all zero, counted up to the sentinel bit. */
static inline unsigned sk__hll_max_rank(unsigned precision)
{
    return 64 - precision + 1;
}

static inline uint32_t sk__hll_registers(unsigned precision)
{
    return UINT32_C(1) << precision;
}

/* The register and value of an item's hash at precision p: the low p bits
 * pick the register, and the value is the position of the lowest set bit
 * among the other 64 - p, counted from 1 (a sentinel bit above them caps it
 * at sk__hll_max_rank), as Redis's HyperLogLog counts it. */
static inline void sk__hll_register_of(uint64_t hash, unsigned p, uint32_t *idx,
                                       unsigned *value)
{
    *idx = (uint32_t)(hash & (sk__hll_registers(p) - 1));
    uint64_t rank_bits = (hash >> p) | UINT64_C(1) << (64 - p);
    *value = (unsigned)__builtin_ctzll(rank_bits) + 1;
}

/* Bytes of m registers of 6 bits. */
static inline size_t sk__hll_dense_size(unsigned precision)
{
    return (size_t)sk__hll_registers(precision) * 6 / 8;
}

/* Sets register idx to max(register, value); 1 if it changed, 0 if not, or
 * SK_ENOMEM with the sketch unchanged. */
int sk__hll_set(sk_hll *h, uint32_t idx, unsigned value);

/* Reads register idx, whichever the representation. */
unsigned sk__hll_get(const sk_hll *h, uint32_t idx);

/* Converts a sparse sketch to dense registers (a no-op when already dense). */
int sk__hll_make_dense(sk_hll *h);

/* Packs m 6-bit registers least-significant bit first, Redis's dense layout,
 * into 6m/8 bytes; and unpacks them back. */
void sk__hll_pack6(const sk_hll *h, uint8_t *out);
void sk__hll_unpack6(const uint8_t *in, uint32_t m, uint8_t *registers);

/* The unrounded estimate of the Ertl estimator from a register histogram. */
double sk__hll_estimate_from_histogram(const uint32_t *histogram, unsigned precision);

/* The codecs: the size a sketch takes in a format, and whether it is
 * written sparse there; writing into buf (SK_ENOSPACE if cap is short);
 * reading a string that starts with the format's magic. */
size_t sk__hll_native_size(const sk_hll *h, int *sparse);
int sk__hll_native_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len);
int sk__hll_native_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a);
int sk__hll_redis_size(const sk_hll *h, size_t *size, int *sparse);
int sk__hll_redis_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len);
int sk__hll_redis_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a);

/* For the file code of maps of sketches (hll_map.c): a map's allocator,
 * and the key of group index (< size) without its estimate. */
struct sk_hll_map;
const sk_allocator *sk__hll_map_allocator(const struct sk_hll_map *m);
const uint8_t *sk__hll_map_key(const struct sk_hll_map *m, size_t index, size_t *len);

#endif
