/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc.c: the library's memory (see alloc.h).
 *
 * Bit arrays of a megabyte or more from the default allocator are mapped
 * directly, aligned to a 2 MB huge page and advised for transparent huge
 * pages: every query touches a random page, and with 4 KB pages a 100 MB
 * filter misses the TLB on nearly every access, which costs as much as the
 * cache miss itself. Mapped memory is zeroed lazily by the kernel, so a
 * large filter costs only the pages it touches. An array from the caller's
 * allocator is taken whole (and zeroed) from it, so that the caller
 * accounts for every byte; with SK_ALLOC_HUGE_PAGES its whole huge pages
 * get the same advice.
 */
#define _GNU_SOURCE
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LINE 64
#define MAP_THRESHOLD ((size_t)1 << 20)
#define PAGE_SIZE_4K ((size_t)4096)
#define HUGE_PAGE_SIZE ((size_t)2 << 20)

static void *malloc_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return malloc(size);
}

static void malloc_free(void *opaque, void *ptr, size_t size)
{
    (void)opaque;
    (void)size;
    free(ptr);
}

void sk__allocator_init(sk_allocator *dst, const sk_allocator *src)
{
    if (src != NULL && src->alloc != NULL && src->free != NULL)
        *dst = *src;
    else
        *dst = (sk_allocator){malloc_alloc, malloc_free, NULL, SK_ALLOC_HUGE_PAGES};
}

static int is_default(const sk_allocator *a)
{
    return a->alloc == malloc_alloc;
}

void *sk__alloc(const sk_allocator *a, size_t size)
{
    return a->alloc(a->opaque, size);
}

void *sk__zalloc(const sk_allocator *a, size_t size)
{
    void *p = a->alloc(a->opaque, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

void sk__free(const sk_allocator *a, void *ptr, size_t size)
{
    if (ptr != NULL)
        a->free(a->opaque, ptr, size);
}

static void advise_huge(void *start, size_t len)
{
#ifdef MADV_HUGEPAGE
    uintptr_t from = ((uintptr_t)start + HUGE_PAGE_SIZE - 1) & ~(uintptr_t)(HUGE_PAGE_SIZE - 1);
    uintptr_t to = ((uintptr_t)start + len) & ~(uintptr_t)(HUGE_PAGE_SIZE - 1);
    if (to > from)
        madvise((void *)from, to - from, MADV_HUGEPAGE); /* advisory: failure keeps 4 KB */
#else
    (void)start;
    (void)len;
#endif
}

/* Zeroed memory mapped for a large array, on a huge-page boundary. */
static void *map_huge_aligned(size_t bytes, struct sk__array *out)
{
    size_t len = (bytes + PAGE_SIZE_4K - 1) & ~(PAGE_SIZE_4K - 1);
    size_t padded = len + HUGE_PAGE_SIZE;
    if (len < bytes || padded < len)
        return NULL;
    char *raw = mmap(NULL, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + HUGE_PAGE_SIZE - 1) & ~(uintptr_t)(HUGE_PAGE_SIZE - 1);
    char *aligned = (char *)start;
    if (aligned > raw)
        munmap(raw, (size_t)(aligned - raw));
    size_t tail = (size_t)(raw + padded - (aligned + len));
    if (tail > 0)
        munmap(aligned + len, tail);
    advise_huge(aligned, len);
    *out = (struct sk__array){aligned, len, 1};
    return aligned;
}

size_t sk__array_cost(const sk_allocator *a, size_t bytes)
{
    if (is_default(a) && bytes >= MAP_THRESHOLD)
        return (bytes + PAGE_SIZE_4K - 1) & ~(PAGE_SIZE_4K - 1);
    return bytes + LINE - 1;
}

void *sk__array_alloc(const sk_allocator *a, size_t bytes, struct sk__array *out)
{
    if (is_default(a) && bytes >= MAP_THRESHOLD)
        return map_huge_aligned(bytes, out);
    /* LINE - 1 bytes more let the array start on a line whatever alignment
     * the allocator gives. */
    if (bytes > SIZE_MAX - LINE)
        return NULL;
    size_t len = bytes + LINE - 1;
    char *raw = sk__alloc(a, len);
    if (raw == NULL)
        return NULL;
    char *aligned = (char *)(((uintptr_t)raw + LINE - 1) & ~(uintptr_t)(LINE - 1));
    /* Advised before the zeroing faults the pages in. */
    if ((a->flags & SK_ALLOC_HUGE_PAGES) && bytes >= 2 * HUGE_PAGE_SIZE)
        advise_huge(aligned, bytes);
    memset(aligned, 0, bytes);
    *out = (struct sk__array){raw, len, 0};
    return aligned;
}

void sk__array_free(const sk_allocator *a, const struct sk__array *array)
{
    if (array->block == NULL)
        return;
    if (array->mapped)
        munmap(array->block, array->block_len);
    else
        sk__free(a, array->block, array->block_len);
}
