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

#include "bytes.h"

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
    switch (len & 7) {
    case 7: h ^= (uint64_t)p[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)p[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)p[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)p[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)p[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)p[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)p[0];
        h *= mul;
    }
    h ^= h >> shift;
    h *= mul;
    h ^= h >> shift;
    return h;
}

#endif
