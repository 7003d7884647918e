/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_internal.h: the count-min sketch's object, shared by its operations
 * (cms.c) and its serialized form (cms_format.c). Internal.
 */
#ifndef SKETCH_CMS_INTERNAL_H
#define SKETCH_CMS_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "common/fastmod.h"
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

/* Where row hash h falls: h mod width, as RedisBloom computes it. */
static inline uint32_t sk__cms_mod(const sk_cms *c, uint32_t h)
{
    return sk__fastmod(h, c->width_inverse, c->width);
}

static inline uint64_t sk__cms_cells(const sk_cms *c)
{
    return (uint64_t)c->width * c->depth;
}

#endif
