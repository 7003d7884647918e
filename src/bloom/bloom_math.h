/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_math.h: the mathematics of Bloom filters, apart from their
 * mechanics: the exact false-positive rate of each layout and the search
 * for the smallest filter that meets a rate. Pure functions of numbers:
 * nothing here touches a filter.
 */
#ifndef SKETCH_BLOOM_MATH_H
#define SKETCH_BLOOM_MATH_H

#include <stdint.h>

#include "sketch/bloom_extra.h"

/* Bits of one block of the blocked and split layouts: a 64-byte cache line. */
#define SK__BLOOM_BLOCK_BITS 512

/* The 64-bit words of a layer of `bits` bits. */
uint64_t sk__bloom_words(sk_bloom_layout layout, uint64_t bits);

/* Explicit sizes rounded to what the layout stores (blocked, split: whole
 * blocks). */
uint64_t sk__bloom_round_bits(sk_bloom_layout layout, uint64_t bits);

/* The false-positive rate of a layer of m bits and k hashes after n items. */
double sk__bloom_fp_rate(sk_bloom_layout layout, uint64_t bits, unsigned k, double n);

/* The shape of a layer for `capacity` items at `fp_rate` (SK_BLOOM_AUTO in
 * *layout is replaced by the choice); SK_ETOOLARGE past the limits. */
int sk__bloom_size_layer(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                         sk_bloom_layer *out);

/* Whether a split layer may have `hashes` lanes (8 or 16). */
int sk__bloom_split_hashes_valid(unsigned hashes);

#endif
