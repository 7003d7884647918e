/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_plan.c: the layers of a filter (see bloom_plan.h): its options
 * checked and completed, the rate each layer of a chain is sized for, and
 * the shape of each layer, from the sizes of bloom_math.c.
 *
 * A scalable chain gives layer i the rate p/2^(i+1) for its first
 * SK_BLOOM_RATE_HALVINGS layers, whose rates sum to p(1 - 2^-H), and the
 * j-th layer after them p 2^-H 6/(pi^2 j^2), which sum to the p 2^-H left:
 * any number of layers stays within p, and the tail's rates fall slowly
 * enough that a layer of one item still fits one block.
 */
#define _GNU_SOURCE /* M_LN2 */
#include "bloom_plan.h"

#include <math.h>

/* pi^2 / 6, the sum of 1/j^2 over j >= 1. */
#define ZETA_2 1.6449340668482264

double sk__bloom_layer_rate(double fp_rate, unsigned expansion, unsigned index)
{
    if (expansion == 0)
        return fp_rate;
    if (index < SK_BLOOM_RATE_HALVINGS)
        return ldexp(fp_rate, -(int)index - 1);
    double j = (double)(index - SK_BLOOM_RATE_HALVINGS) + 1;
    return ldexp(fp_rate, -SK_BLOOM_RATE_HALVINGS) / (ZETA_2 * j * j);
}

uint64_t sk__bloom_explicit_capacity(uint64_t bits, unsigned hashes)
{
    uint64_t capacity = (uint64_t)((double)bits * M_LN2 / hashes);
    return capacity ? capacity : 1;
}

int sk__bloom_resolve_options(const sk_bloom_options *in, sk_bloom_options *out)
{
    if (in == NULL)
        return SK_EINVAL;
    *out = *in;
    if (out->layout != SK_BLOOM_AUTO && out->layout != SK_BLOOM_BLOCKED &&
        out->layout != SK_BLOOM_CLASSIC && out->layout != SK_BLOOM_SPLIT)
        return SK_EINVAL;
    if (out->bits != 0) {
        /* No rate to choose a layout by: blocked takes any number of hashes. */
        if (out->layout == SK_BLOOM_AUTO)
            out->layout = SK_BLOOM_BLOCKED;
        if (out->capacity != 0 || out->expansion != 0 ||
            out->hashes == 0 || out->hashes > SK_BLOOM_MAX_HASHES || out->fp_rate != 0 ||
            (out->layout == SK_BLOOM_SPLIT && !sk__bloom_split_hashes_valid(out->hashes)))
            return SK_EINVAL;
        return out->bits > SK_BLOOM_MAX_BITS ? SK_ETOOLARGE : SK_OK;
    }
    if (out->fp_rate == 0)
        out->fp_rate = SK_BLOOM_DEFAULT_FP_RATE;
    if (out->capacity == 0 || out->hashes != 0 || out->expansion > SK_BLOOM_MAX_EXPANSION ||
        !(out->fp_rate >= SK_BLOOM_MIN_FP_RATE && out->fp_rate <= SK_BLOOM_MAX_FP_RATE))
        return SK_EINVAL;
    return SK_OK;
}

int sk__bloom_plan_layer(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                         uint64_t capacity, unsigned from, unsigned index, sk_bloom_layer *out)
{
    if (expansion == 0 && index > from)
        return SK_EFULL;
    for (unsigned i = from; expansion > 1 && i < index; i++) {
        if (capacity > UINT64_MAX / expansion)
            return SK_EFULL;
        capacity *= expansion;
    }
    int rc = sk__bloom_size_layer(capacity, sk__bloom_layer_rate(fp_rate, expansion, index),
                                  &layout, out);
    /* A layer that cannot be sized (past the size limits, or a chain read
     * from a file whose rate is 0) is where a chain stops growing. */
    return rc != SK_OK && index > 0 ? SK_EFULL : rc;
}

int sk__bloom_plan_first(const sk_bloom_options *o, sk_bloom_layout *layout,
                         sk_bloom_layer *out)
{
    *layout = o->layout;
    if (o->bits == 0)
        return sk__bloom_size_layer(o->capacity, sk__bloom_layer_rate(o->fp_rate, o->expansion, 0),
                                    layout, out);
    uint64_t bits = sk__bloom_round_bits(o->layout, o->bits);
    *out = (sk_bloom_layer){.bits = bits, .hashes = o->hashes,
                            .capacity = sk__bloom_explicit_capacity(bits, o->hashes),
                            .bytes = sk__bloom_words(o->layout, bits) * 8};
    return bits > SK_BLOOM_MAX_BITS ? SK_ETOOLARGE : SK_OK;
}

int sk_bloom_plan(const sk_bloom_options *opts, unsigned index, sk_bloom_layer *out)
{
    sk_bloom_options o;
    int rc = sk__bloom_resolve_options(opts, &o);
    if (rc != SK_OK || out == NULL)
        return rc != SK_OK ? rc : SK_EINVAL;
    if (o.bits != 0 && index > 0)
        return SK_EFULL;
    /* Later layers keep the layout the first one chose. */
    sk_bloom_layout layout = o.layout;
    rc = sk__bloom_plan_first(&o, &layout, out);
    if (rc != SK_OK || index == 0)
        return rc;
    return sk__bloom_plan_layer(layout, o.fp_rate, o.expansion, o.capacity, 0, index, out);
}
