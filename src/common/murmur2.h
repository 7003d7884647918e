/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * murmur2.h: MurmurHash2, Austin Appleby's public-domain 32-bit hash, the
 * one RedisBloom's count-min sketches and top-k apply to every item. It is
 * inline because a count-min update is "hash, then one counter" per row.
 *
 * Blocks of 4 bytes are read little-endian on every architecture: that is
 * what RedisBloom computes on the little-endian machines it runs on, so the
 * same item lands in the same counters everywhere.
 */
#ifndef SKETCH_MURMUR2_H
#define SKETCH_MURMUR2_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

static inline uint32_t sk_murmur2(const void *data, size_t len, uint32_t seed)
{
    const uint32_t mul = 0x5bd1e995u;
    const uint8_t *p = data;
    /* RedisBloom passes the length as an int: the seed mixes with its low
     * 32 bits. */
    uint32_t h = seed ^ (uint32_t)len;
    size_t left = len;

    for (; left >= 4; p += 4, left -= 4) {
        uint32_t k = sk_load_le32(p);
        k *= mul;
        k ^= k >> 24;
        k *= mul;
        h = (h * mul) ^ k;
    }
    if (left > 0) {
        if (left == 3)
            h ^= (uint32_t)p[2] << 16;
        if (left >= 2)
            h ^= (uint32_t)p[1] << 8;
        h ^= p[0];
        h *= mul;
    }
    h ^= h >> 13;
    h *= mul;
    h ^= h >> 15;
    return h;
}

#endif
