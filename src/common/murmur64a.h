/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * murmur64a.h: MurmurHash64A, the 64-bit hash Redis applies to every
 * HyperLogLog element. It is defined here, inline, because the HyperLogLog
 * hot path is "hash, then one register update", and a call per item would
 * cost as much as the update itself.
 *
 * The function is Austin Appleby's public-domain MurmurHash2 64-bit variant
 * with Redis's seed. Blocks are read little-endian everywhere, as Redis does,
 * so the same bytes hash the same on any architecture.
 */
#ifndef SKETCH_MURMUR64A_H
#define SKETCH_MURMUR64A_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#define SK_REDIS_HLL_SEED UINT64_C(0xadc83b19)

static inline uint64_t sk_murmur64a(const void *data, size_t len, uint64_t seed)
{
    const uint64_t mul = UINT64_C(0xc6a4a7935bd1e995);
    const int shift = 47;
    const uint8_t *p = data;
    const uint8_t *blocks_end = p + (len & ~(size_t)7);
    uint64_t h = seed ^ ((uint64_t)len * mul);

    for (; p != blocks_end; p += 8) {
        uint64_t k = sk_load_le64(p);
        k *= mul;
        k ^= k >> shift;
        k *= mul;
        h ^= k;
        h *= mul;
    }
    /* The last len % 8 bytes, little-endian, gathered without a jump table:
     * item lengths vary from call to call and a switch on them mispredicts
     * most of the time. Past 8 bytes they are the top of the last 8 bytes. */
    size_t rest = len & 7;
    if (rest != 0) {
        uint64_t tail;
        if (len >= 8)
            tail = sk_load_le64(p + rest - 8) >> (8 * (8 - rest));
        else if (rest >= 4)
            tail = (uint64_t)sk_load_le32(p) |
                   (uint64_t)sk_load_le32(p + rest - 4) << (8 * (rest - 4));
        else
            tail = (uint64_t)p[0] | (uint64_t)p[rest / 2] << (8 * (rest / 2)) |
                   (uint64_t)p[rest - 1] << (8 * (rest - 1));
        h ^= tail;
        h *= mul;
    }
    h ^= h >> shift;
    h *= mul;
    h ^= h >> shift;
    return h;
}

#endif
