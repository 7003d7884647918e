/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_math.h: the mathematics of Bloom filters, apart from their
 * mechanics: the exact false-positive rate of each layout, the search for
 * the smallest filter that meets a rate, and the rates and capacities of
 * the layers of a scalable chain. Pure functions of numbers: nothing here
 * touches a filter.
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

/* The requested rate of layer `index` of a chain of rate fp_rate: the whole
 * rate for a fixed filter, p/2^(i+1) then a 1/j^2 tail for a scalable one
 * (SK_BLOOM_RATE_HALVINGS), so that the layers' rates sum to fp_rate. */
double sk__bloom_layer_rate(double fp_rate, unsigned expansion, unsigned index);

/* The shape of a layer for `capacity` items at `fp_rate` (SK_BLOOM_AUTO in
 * *layout is replaced by the choice); SK_ETOOLARGE past the limits. */
int sk__bloom_size_layer(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                         sk_bloom_layer *out);

/* Whether a split layer may have `hashes` lanes (8 or 16). */
int sk__bloom_split_hashes_valid(unsigned hashes);

/* The capacity of explicit sizes: the items at which k is optimal. */
uint64_t sk__bloom_explicit_capacity(uint64_t bits, unsigned hashes);



/* opts checked and completed with the defaults (the rate). */
int sk__bloom_resolve_options(const sk_bloom_options *in, sk_bloom_options *out);

/* Layer `index` of a chain of `layout` (concrete) whose layer `from` has
 * `capacity`: SK_EFULL where the chain cannot reach it. */
int sk__bloom_plan_layer(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                         uint64_t capacity, unsigned from, unsigned index, sk_bloom_layer *out);

/* The first layer of a filter of resolved options o, and its layout. */
int sk__bloom_plan_first(const sk_bloom_options *o, sk_bloom_layout *layout,
                         sk_bloom_layer *out);
#endif
