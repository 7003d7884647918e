/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fastmod.h: h mod d without a division (Lemire, Kaser and Kurz, "Faster
 * remainder by direct computation", 2019), for the sketches that place an
 * item as RedisBloom does, `hash % width`: exact for every 32-bit h and d,
 * so the buckets are the same, at a multiply's cost rather than a divide's.
 */
#ifndef SKETCH_FASTMOD_H
#define SKETCH_FASTMOD_H

#include <stdint.h>

__extension__ typedef unsigned __int128 sk__u128;

/* ceil(2^64 / d), which wraps to 0 for d = 1, whose remainder is 0. */
static inline uint64_t sk__fastmod_inverse(uint32_t d)
{
    return UINT64_MAX / d + 1;
}

static inline uint32_t sk__fastmod(uint32_t h, uint64_t inverse, uint32_t d)
{
    uint64_t fraction = inverse * h;
    return (uint32_t)(((sk__u128)fraction * d) >> 64);
}

#endif
