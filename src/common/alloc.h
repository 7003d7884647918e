/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc.h: memory for every structure of the library, from the caller's
 * sk_allocator or from malloc, and the zeroed, cache-line-aligned arrays
 * that hold Bloom filter bits.
 */
#ifndef SKETCH_ALLOC_H
#define SKETCH_ALLOC_H

#include <stddef.h>

#include "sketch/core.h"

/* The allocator an object keeps: a copy of the caller's, or malloc's. */
void sk__allocator_init(sk_allocator *dst, const sk_allocator *src);

void *sk__alloc(const sk_allocator *a, size_t size);
void *sk__zalloc(const sk_allocator *a, size_t size);
void sk__free(const sk_allocator *a, void *ptr, size_t size);

/* A zeroed array of `bytes` bytes aligned to 64 (a cache line, so that a
 * blocked filter's block is one line). `block` and `block_len` receive what
 * sk__array_free needs; *mapped says whether it came from mmap rather than
 * the allocator. */
struct sk__array {
    void *block;
    size_t block_len;
    int mapped;
};
/* The bytes sk__array_alloc takes for an array of `bytes`. */
size_t sk__array_cost(const sk_allocator *a, size_t bytes);
void *sk__array_alloc(const sk_allocator *a, size_t bytes, struct sk__array *out);
void sk__array_free(const sk_allocator *a, const struct sk__array *array);

#endif
