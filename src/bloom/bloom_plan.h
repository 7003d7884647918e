/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_plan.h: the layers of a filter, planned from its options before
 * any memory is taken: the options checked, the rate of each layer of a
 * scalable chain, and each layer's shape.
 */
#ifndef SKETCH_BLOOM_PLAN_H
#define SKETCH_BLOOM_PLAN_H

#include <stdint.h>

#include "bloom_math.h"

/* The requested rate of layer `index` of a chain of rate fp_rate: the whole
 * rate for a fixed filter, p/2^(i+1) then a 1/j^2 tail for a scalable one
 * (SK_BLOOM_RATE_HALVINGS), so that the layers' rates sum to fp_rate. */
double sk__bloom_layer_rate(double fp_rate, unsigned expansion, unsigned index);

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
