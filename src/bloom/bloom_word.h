/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_word.h: the words of a bit array as numbers: arrays keep their
 * bytes in little-endian order on every machine (bloom_internal.h), so a
 * big-endian one swaps them. Internal; shared by every probe kernel
 * (bloom_probe.h, bloom_split.h), which it calls none of.
 */
#ifndef SKETCH_BLOOM_WORD_H
#define SKETCH_BLOOM_WORD_H

#include <stdatomic.h>
#include <stdint.h>

/* A mask of bit `bit` of a word stored little-endian in memory. */
static inline uint64_t word_bit(unsigned bit)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(UINT64_C(1) << bit);
#else
    return UINT64_C(1) << bit;
#endif
}

/* A word of a bit array as a number, bit b being bit b of the array's word. */
static inline uint64_t word_value(const _Atomic uint64_t *word)
{
    uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* The inverse of word_value: a number as the word stored in an array. */
static inline uint64_t word_of_value(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

#endif
