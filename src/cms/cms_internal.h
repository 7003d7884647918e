/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_internal.h: the count-min sketch's object, shared by its operations
 * (cms.c) and its serialized form (cms_format.c). Internal.
 */
#ifndef SKETCH_CMS_INTERNAL_H
#define SKETCH_CMS_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "sketch/cms.h"

struct sk_cms {
    sk_allocator alloc;
    uint32_t width;
    uint32_t depth;
    uint64_t width_inverse; /* ceil(2^64 / width), for sk__cms_mod */
    uint64_t total;         /* saturates at UINT64_MAX */
    uint32_t *counters;     /* depth rows of width counters, row by row */
    struct sk__array array; /* what holds the counters */
};

/* A sketch of these dimensions with every counter 0 (SK_ETOOLARGE past
 * SK_CMS_MAX_CELLS, SK_EINVAL for a zero dimension). */
int sk__cms_alloc(sk_cms **out, uint32_t width, uint32_t depth, const sk_allocator *a);

/* h mod c->width without a division (Lemire, Kaser and Kurz, "Faster
 * remainder by direct computation", 2019): exact for every 32-bit h and
 * width, so counters are where RedisBloom's `hash % width` puts them. */
__extension__ typedef unsigned __int128 sk__cms_u128;
static inline uint64_t sk__cms_inverse(uint32_t width)
{
    return UINT64_MAX / width + 1; /* wraps to 0 for width 1, whose remainder is 0 */
}

static inline uint32_t sk__cms_mod(const sk_cms *c, uint32_t h)
{
    uint64_t fraction = c->width_inverse * h;
    return (uint32_t)(((sk__cms_u128)fraction * c->width) >> 64);
}

static inline uint64_t sk__cms_cells(const sk_cms *c)
{
    return (uint64_t)c->width * c->depth;
}

#endif
