/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_internal.h: what the HyperLogLog code gives the other files of src/hll.
 * A sketch's registers belong to hll_registers.c (how they are held, sparse
 * or dense, and the one rule of when a sketch turns dense) and to the inline
 * calls here; hll.c makes, adds to, estimates, merges and folds sketches on
 * top of them. The serialized forms (hll_native.c, hll_redis.c, behind
 * hll_codec.c), the batch adds (hll_batch.c) and the joint estimate
 * (hll_joint.c) are HyperLogLog code too and read the fields below; the maps
 * of sketches by key (hll_map*.c) read none of them: they hold a small
 * group's registers as a small register set and a larger group's as a
 * sketch, both through the calls here.
 *
 * Nothing here is exported: the library is built with hidden visibility, and
 * the names start with sk__ so that a static link cannot collide with a
 * user's symbols either.
 */
#ifndef SKETCH_HLL_INTERNAL_H
#define SKETCH_HLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/alloc.h"
#include "sketch/hll_extra.h"

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

/* GCC finds a function whose only effect is a prefetch free of side
 * effects, and deletes the calls: prefetching helpers are always inlined. */
#define SK__PREFETCHER static inline __attribute__((always_inline)) void

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

/* ---- registers (hll_registers.c) ------------------------------------------ */

/* A sparse entry: register index and value in one word (a sketch keeps its
 * entries sorted by index, a small register set in the order they came). */
static inline uint32_t sk__hll_entry(uint32_t idx, unsigned value)
{
    return idx << 8 | value;
}

static inline uint32_t sk__hll_entry_index(uint32_t entry)
{
    return entry >> 8;
}

static inline unsigned sk__hll_entry_value(uint32_t entry)
{
    return entry & 0xff;
}

/* Who a sketch is made for, which decides when it turns dense: a sketch of
 * its own, or one of the many of a map of sketches by key. */
enum sk__hll_use { SK__HLL_ALONE, SK__HLL_ONE_OF_MANY };

/* The precision that options ask for, the default for 0, or 0 (which every
 * create refuses) for no options at all. */
static inline unsigned sk__hll_asked_precision(const sk_hll_options *opts)
{
    if (opts == NULL)
        return 0;
    return opts->precision != 0 ? opts->precision : SK_HLL_DEFAULT_PRECISION;
}

/* Sets register idx of a sparse sketch to max(register, value), turning the
 * sketch dense when a new entry would pass the sparse limit of `use`; 1 if
 * it changed, 0 if not, or SK_ENOMEM with the sketch unchanged. Out of line,
 * so that the dense path of every add stays a leaf that saves no registers. */
int sk__hll_sparse_set(sk_hll *h, uint32_t idx, unsigned value, enum sk__hll_use use);

/* Sets register idx to max(register, value) in a sketch made for `use`; 1
 * if it changed, 0 if not, or SK_ENOMEM with the sketch unchanged. Inline,
 * so that every add, a map's among them, sets a dense register without a
 * call; sk__hll_set is the same out of line, for a sketch of its own. */
static inline int sk__hll_set_for(sk_hll *h, uint32_t idx, unsigned value, enum sk__hll_use use)
{
    if (h->registers != NULL) {
        if (h->registers[idx] >= value)
            return 0;
        h->registers[idx] = (uint8_t)value;
        return 1;
    }
    return sk__hll_sparse_set(h, idx, value, use);
}

int sk__hll_set(sk_hll *h, uint32_t idx, unsigned value);

/* Reads register idx, whichever the representation. */
unsigned sk__hll_get(const sk_hll *h, uint32_t idx);

/* Converts a sparse sketch to dense registers (a no-op when already dense). */
int sk__hll_make_dense(sk_hll *h);

/* Frees the registers, leaving an empty sparse sketch. */
void sk__hll_release_registers(sk_hll *h);

/* The m registers of h, as h holds them or written into buf (m bytes). */
const uint8_t *sk__hll_registers_of(const sk_hll *h, uint8_t *buf);

/* Prefetches (for writing) the register a hash sets, or the sparse entries
 * around the place where a search for it starts. */
SK__PREFETCHER sk__hll_prefetch_register(const sk_hll *h, uint64_t hash)
{
    unsigned p = h->precision;
    uint32_t idx = (uint32_t)(hash & (sk__hll_registers(p) - 1));
    if (h->registers != NULL)
        __builtin_prefetch(h->registers + idx, 1);
    else if (h->sparse != NULL)
        __builtin_prefetch(h->sparse + (((uint64_t)idx * h->sparse_len) >> p), 1);
}

/* Packs m 6-bit registers least-significant bit first, Redis's dense layout,
 * into 6m/8 bytes; and unpacks them back. sk__hll_read_packed makes h dense
 * with the registers of 6m/8 packed bytes: SK_ECORRUPT if one is above the
 * largest value of h's precision. */
void sk__hll_pack6(const sk_hll *h, uint8_t *out);
void sk__hll_unpack6(const uint8_t *in, uint32_t m, uint8_t *registers);
int sk__hll_read_packed(sk_hll *h, const uint8_t *packed);

/* ---- small register sets ---------------------------------------------------
 * The few nonzero registers of a small group of a map, held without a
 * sketch: up to SK__HLL_SMALL_MAX sparse entries in SK__HLL_SMALL_SIZE bytes
 * of the caller's (any alignment), in the order they came, and their number,
 * which the caller keeps. A set holds exactly the registers a sketch fed the
 * same hashes would, so it is estimated and made a sketch as that sketch. */
#define SK__HLL_SMALL_MAX 6
#define SK__HLL_SMALL_SIZE (SK__HLL_SMALL_MAX * sizeof(uint32_t))
/* What a set returns for a register that would be one too many. */
#define SK__HLL_SMALL_FULL 2

static inline uint32_t sk__hll_small_entry(const uint8_t *set, unsigned i)
{
    uint32_t e;
    memcpy(&e, set + i * sizeof e, sizeof e);
    return e;
}

/* Register idx of the set to max(register, value): 1 if it changed, 0 if
 * not, SK__HLL_SMALL_FULL (set unchanged) if it would be one too many. */
static inline int sk__hll_small_set(uint8_t *set, uint8_t *n, uint32_t idx, unsigned value)
{
    unsigned len = *n;
    uint32_t e = sk__hll_entry(idx, value);
    for (unsigned i = 0; i < len; i++) {
        uint32_t old = sk__hll_small_entry(set, i);
        if (sk__hll_entry_index(old) != idx)
            continue;
        if (sk__hll_entry_value(old) >= value)
            return 0;
        memcpy(set + i * sizeof e, &e, sizeof e);
        return 1;
    }
    if (len == SK__HLL_SMALL_MAX)
        return SK__HLL_SMALL_FULL;
    memcpy(set + len * sizeof e, &e, sizeof e);
    *n = (uint8_t)(len + 1);
    return 1;
}

/* Sets into the set the registers of sketch h, of the set's precision, as
 * sk__hll_small_set would one by one: SK_OK, or SK__HLL_SMALL_FULL with the
 * set unchanged if they might not fit. */
int sk__hll_small_merge(uint8_t *set, uint8_t *n, const sk_hll *h);

/* A new sketch of a set's n registers (hll.c); SK_ENOMEM. */
int sk__hll_small_to_sketch(sk_hll **out, const uint8_t *set, unsigned n, unsigned precision,
                            const sk_allocator *a);

/* The estimate and bounds of a set's n registers, as sk_hll_estimate_with_bounds
 * gives them for a sketch of those registers (hll.c). */
void sk__hll_small_estimate(const uint8_t *set, unsigned n, unsigned precision,
                            sk_hll_estimate *out);

/* ---- hll.c ----------------------------------------------------------------- */

/* The start of the create calls of sketches and maps, objects that begin
 * with their unsigned precision and hold a copy of their allocator at
 * offset alloc_at: size zeroed bytes from the caller's allocator (the
 * default one for NULL) with those two fields set, once precision is known
 * to be valid; NULL with *rc SK_EINVAL or SK_ENOMEM. */
void *sk__hll_new_object(size_t size, size_t alloc_at, unsigned precision,
                         const sk_allocator *allocator, int *rc);

/* sk_hll_create with the precision and allocator given one by one. */
int sk__hll_create(sk_hll **out, unsigned precision, const sk_allocator *allocator);

/* A new sketch of precision p read from the body of a serialized form:
 * dense, 6-bit packed registers (sk__hll_read_packed), or sparse, set by
 * read_sparse(h, body, len); *out only if it all succeeds. */
typedef int (*sk__hll_sparse_reader)(sk_hll *h, const uint8_t *body, size_t len);
int sk__hll_read_body(sk_hll **out, unsigned precision, const sk_allocator *a, int dense,
                      const uint8_t *body, size_t len, sk__hll_sparse_reader read_sparse);

/* h at a precision <= its own: *folded is NULL when h already has it, else a
 * new sketch, h folded. SK_ENOMEM. */
int sk__hll_folded(const sk_hll *h, unsigned precision, sk_hll **folded);

/* The unrounded estimate of the Ertl estimator from a register histogram. */
double sk__hll_estimate_from_histogram(const uint32_t *histogram, unsigned precision);

/* An estimate rounded as Redis rounds it, saturating at UINT64_MAX. */
uint64_t sk__hll_round_estimate(double estimate);

/* ---- the codecs (hll_native.c, hll_redis.c, hll_codec.c) --------------------
 * The size a sketch takes in a format, and whether it is written sparse
 * there; writing into buf (SK_ENOSPACE if cap is short); reading a string
 * that starts with the format's magic. */
size_t sk__hll_native_size(const sk_hll *h, int *sparse);
int sk__hll_native_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len);
int sk__hll_native_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a);
int sk__hll_redis_size(const sk_hll *h, size_t *size, int *sparse);
int sk__hll_redis_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len);
int sk__hll_redis_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a);


#endif
