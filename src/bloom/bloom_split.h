/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_split.h: the split layout's kernels: an item's mask in its cache
 * line, and the test and setting of that mask, in vector arithmetic where
 * the processor has it. Internal; the rest of the probe is bloom_probe.h,
 * which includes this file, and of which this file uses nothing.
 *
 * Layout
 * ------
 * m/512 lines of one 64-byte cache line, as in the blocked layout, and an
 * item's line is the same: reduce(h1, m/512). A line is split into k lanes
 * of w = 512/k bits, k being 8 (64-bit lanes) or 16 (32-bit lanes), and an
 * item has exactly one bit in each lane: in lane i, bit
 *
 *     ((x_i * SPLIT_SALT[i]) mod 2^32) >> (32 - log2 w)
 *
 * where x_i is the low 32 bits of h2 for i < k/2 and its high 32 bits for
 * the other half. Bit b of lane i is bit w i + b of the line, and bit p of a line is
 * bit p mod 8 of its byte p / 8, on every machine.
 *
 * Why
 * ---
 * The k positions are independent multiplies of the same value, not a
 * chain, so one vector multiply computes eight of them, and an item's k
 * bits form a mask of the whole line: a query is (line & mask) == mask and
 * an add line |= mask, a handful of instructions with no branch, where the
 * blocked layout's six to nine positions take a chain of multiplies, loads
 * and shifts each. One bit per lane costs some false positives against k
 * bits anywhere in the line, which is why the layout is asked for and not
 * the default (its rate and sizing are in bloom_math.c).
 *
 * Each lane's bit is uniform, since multiplying by an odd constant permutes
 * the 32-bit values; the salts are the low 32 bits of the first sixteen
 * outputs of splitmix64 seeded with 0, made odd, and each half of h2 feeds
 * half of the lanes rather than one 32-bit value all of them.
 *
 * Memory
 * ------
 * The vector form loads and stores a line as two 32-byte vectors; the
 * scalar form, for big-endian machines and as the reference the tests hold
 * the vector form to, a 64-bit word at a time. A vector load that races
 * with an add in another thread may see each byte of the line from before
 * or after that add, but never less than the bits set by every add that
 * happened before it, since bits are only ever set: the threads contract
 * of sketch/bloom.h holds as with relaxed atomic loads. Any number of
 * writers still set bits with locked ORs of 64-bit words. Under
 * ThreadSanitizer, which cannot see that argument, the vector form reads
 * and writes the words with relaxed atomic loads and stores.
 */
#ifndef SKETCH_BLOOM_SPLIT_H
#define SKETCH_BLOOM_SPLIT_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "bloom_word.h"

#define SPLIT_LINE_WORDS 8 /* 64-bit words of a line */
#define SPLIT_MAX_LANES 16

static const uint32_t SPLIT_SALT[SPLIT_MAX_LANES] = {
    0x7b1dcdaf, 0xa1b965f5, 0x8009454f, 0x724c81ed, 0x51a8749b, 0x747ea2eb,
    0x1f4532e1, 0xc916ab3d, 0x41c98ac3, 0x368cb0a7, 0x3cb13d09, 0x055bdef7,
    0xe0bbdb7b, 0x983aa92f, 0x00cc4d19, 0x971d80ab};

/* log2 of a lane's width: 6 for 8 lanes, 5 for 16. */
static inline unsigned split_lane_log2(unsigned k)
{
    return k == 8 ? 6 : 5;
}

/* The position of item h2's bit in lane i of a line of k lanes. */
static inline unsigned split_position(uint64_t h2, unsigned k, unsigned i)
{
    uint32_t x = (uint32_t)(h2 >> (i < k / 2 ? 0 : 32));
    unsigned lane_log2 = split_lane_log2(k);
    return (i << lane_log2) + ((uint32_t)(x * SPLIT_SALT[i]) >> (32 - lane_log2));
}

/* The reference form: the mask as the line's eight words, each as a number
 * (bit b of word j is bit 64 j + b of the line). */
static inline void split_mask_words(uint64_t h2, unsigned k, uint64_t mask[SPLIT_LINE_WORDS])
{
    memset(mask, 0, SPLIT_LINE_WORDS * sizeof *mask);
    for (unsigned i = 0; i < k; i++) {
        unsigned p = split_position(h2, k, i);
        mask[p >> 6] |= UINT64_C(1) << (p & 63);
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
#define SPLIT_VECTOR 1

typedef uint32_t v8u32 __attribute__((vector_size(32)));
typedef uint64_t v4u64 __attribute__((vector_size(32)));
/* A line's half as it lies in memory, which need not be 32-byte aligned
 * (the arrays of a dump are 8-byte aligned) and aliases its words. */
typedef uint64_t v4u64_mem __attribute__((vector_size(32), aligned(8), may_alias));

/* A line, or a mask of one: words 0..3 and 4..7. */
struct split_line {
    v4u64 lo, hi;
};

static inline __attribute__((always_inline)) struct split_line split_mask(uint64_t h2, unsigned k)
{
    /* SPLIT_SALT as two vectors of eight; the compiler folds the copies to
     * constants. */
    v8u32 salt_lo, salt_hi;
    memcpy(&salt_lo, SPLIT_SALT, sizeof salt_lo);
    memcpy(&salt_hi, SPLIT_SALT + 8, sizeof salt_hi);
    if (k == 8) {
        /* As 32-bit elements, h2 repeated is its low and high halves in
         * turn; the salts are interleaved to match, element 2j computing
         * lane j and element 2j + 1 lane 4 + j, so that lanes 0..3 and 4..7
         * are the low and high halves of the element pairs. */
        v8u32 salt = __builtin_shufflevector(salt_lo, salt_lo, 0, 4, 1, 5, 2, 6, 3, 7);
        v4u64 prod = (v4u64)((v8u32)(v4u64){h2, h2, h2, h2} * salt);
        v4u64 one = {1, 1, 1, 1};
        /* Each element's top six bits, taken by 64-bit shifts straight
         * from the product: no mask of the low halves to build. */
        return (struct split_line){one << ((prod << 32) >> 58), one << (prod >> 58)};
    }
    uint32_t lo = (uint32_t)h2, hi = (uint32_t)(h2 >> 32);
    v8u32 one = {1, 1, 1, 1, 1, 1, 1, 1};
    return (struct split_line){
        (v4u64)(one << (((v8u32){lo, lo, lo, lo, lo, lo, lo, lo} * salt_lo) >> 27)),
        (v4u64)(one << (((v8u32){hi, hi, hi, hi, hi, hi, hi, hi} * salt_hi) >> 27))};
}

static inline __attribute__((always_inline)) struct split_line
split_load(const _Atomic uint64_t *line)
{
#if defined(__SANITIZE_THREAD__)
    uint64_t w[SPLIT_LINE_WORDS];
    for (unsigned i = 0; i < SPLIT_LINE_WORDS; i++)
        w[i] = atomic_load_explicit(&line[i], memory_order_relaxed);
    return (struct split_line){{w[0], w[1], w[2], w[3]}, {w[4], w[5], w[6], w[7]}};
#else
    const v4u64_mem *v = (const v4u64_mem *)(const void *)line;
    return (struct split_line){v[0], v[1]};
#endif
}

static inline __attribute__((always_inline)) void split_store(_Atomic uint64_t *line,
                                                              struct split_line x)
{
#if defined(__SANITIZE_THREAD__)
    for (unsigned i = 0; i < 4; i++) {
        atomic_store_explicit(&line[i], x.lo[i], memory_order_relaxed);
        atomic_store_explicit(&line[4 + i], x.hi[i], memory_order_relaxed);
    }
#else
    v4u64_mem *v = (v4u64_mem *)(void *)line;
    v[0] = x.lo;
    v[1] = x.hi;
#endif
}

/* The bits of mask m missing from line l, folded into one word: 0 when
 * every bit is set. */
static inline __attribute__((always_inline)) uint64_t split_missing(struct split_line l,
                                                                    struct split_line m)
{
    v4u64 miss = (m.lo & ~l.lo) | (m.hi & ~l.hi);
    v4u64 fold = miss | __builtin_shufflevector(miss, miss, 2, 3, 0, 1);
    return fold[0] | fold[1];
}

static inline __attribute__((always_inline)) int
split_line_has(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    return split_missing(split_load(line), split_mask(h2, k)) == 0;
}

/* One writer, in memory: the line written back whether or not a bit
 * was missing, with no branch. */
static inline __attribute__((always_inline)) int
split_line_set_always(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    struct split_line l = split_load(line), m = split_mask(h2, k);
    split_store(line, (struct split_line){l.lo | m.lo, l.hi | m.hi});
    return split_missing(l, m) != 0;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
/* AVX2 forms of the two kernels above, for callers compiled for AVX2:
 * vptest tells whether the missing bits are all zero in one instruction,
 * where split_missing's fold takes five, and GCC's vector extensions never
 * emit it. */
static inline __attribute__((always_inline, target("avx2"))) int
split_none_missing_avx2(struct split_line l, struct split_line m)
{
    __m256i miss = (__m256i)((m.lo & ~l.lo) | (m.hi & ~l.hi));
    return _mm256_testz_si256(miss, miss);
}

static inline __attribute__((always_inline, target("avx2"))) int
split_line_has_avx2(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    return split_none_missing_avx2(split_load(line), split_mask(h2, k));
}

static inline __attribute__((always_inline, target("avx2"))) int
split_line_set_always_avx2(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    struct split_line l = split_load(line), m = split_mask(h2, k);
    split_store(line, (struct split_line){l.lo | m.lo, l.hi | m.hi});
    return !split_none_missing_avx2(l, m);
}
#endif

/* One writer, storing only for an item that adds a bit (a file's pages
 * stay clean): then the whole line, with one branch per item. */
static inline __attribute__((always_inline)) int
split_line_set_if_new(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    struct split_line l = split_load(line), m = split_mask(h2, k);
    if (split_missing(l, m) == 0)
        return 0;
    split_store(line, (struct split_line){l.lo | m.lo, l.hi | m.hi});
    return 1;
}

/* The missing bits of the mask, word by word, for the adds that write only
 * what is missing. */
static inline __attribute__((always_inline)) uint64_t
split_missing_words(const _Atomic uint64_t *line, uint64_t h2, unsigned k,
                    uint64_t missing[SPLIT_LINE_WORDS])
{
    struct split_line l = split_load(line), m = split_mask(h2, k);
    v4u64 lo = m.lo & ~l.lo, hi = m.hi & ~l.hi;
    memcpy(missing, &lo, sizeof lo);
    memcpy(missing + 4, &hi, sizeof hi);
    return split_missing(l, m);
}

#else /* the scalar form */

static inline uint64_t split_missing_words(const _Atomic uint64_t *line, uint64_t h2, unsigned k,
                                           uint64_t missing[SPLIT_LINE_WORDS])
{
    uint64_t any = 0;
    split_mask_words(h2, k, missing);
    for (unsigned i = 0; i < SPLIT_LINE_WORDS; i++) {
        missing[i] &= ~word_value(&line[i]);
        any |= missing[i];
    }
    return any;
}

static inline int split_line_has(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t missing[SPLIT_LINE_WORDS];
    return split_missing_words(line, h2, k, missing) == 0;
}

static inline int split_line_set_missing(_Atomic uint64_t *line, uint64_t h2, unsigned k,
                                         int shared);

static inline int split_line_set_if_new(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    return split_line_set_missing(line, h2, k, 0);
}

static inline int split_line_set_always(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t mask[SPLIT_LINE_WORDS], any = 0;
    split_mask_words(h2, k, mask);
    for (unsigned i = 0; i < SPLIT_LINE_WORDS; i++) {
        uint64_t have = word_value(&line[i]);
        any |= mask[i] & ~have;
        atomic_store_explicit(&line[i], word_of_value(have | mask[i]), memory_order_relaxed);
    }
    return any != 0;
}

#endif

/* Missing words only: a store (one writer) or a locked OR (any number) for
 * each word that lacks a bit; 1 if some did. */
static inline __attribute__((always_inline)) int
split_line_set_missing(_Atomic uint64_t *line, uint64_t h2, unsigned k, int shared)
{
    uint64_t missing[SPLIT_LINE_WORDS];
    if (split_missing_words(line, h2, k, missing) == 0)
        return 0;
    for (unsigned i = 0; i < SPLIT_LINE_WORDS; i++) {
        if (missing[i] == 0)
            continue;
        uint64_t bits = word_of_value(missing[i]);
        if (shared)
            atomic_fetch_or_explicit(&line[i], bits, memory_order_relaxed);
        else
            atomic_store_explicit(&line[i],
                                  atomic_load_explicit(&line[i], memory_order_relaxed) | bits,
                                  memory_order_relaxed);
    }
    return 1;
}

#endif
