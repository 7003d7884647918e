/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_record.c: a filter's record and the memory of its layers: the
 * record with a small first array in it, the table of layer records a
 * chain moves to when it grows, the bit arrays allocated apart, what all
 * of it costs, and the budget that it is held to.
 *
 * It calls nothing of the rest of the Bloom code but the hooks of a
 * filter's file (bloom_internal.h), when the filter is freed.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "bloom_internal.h"
#include "bloom_plan.h"

/* Layer records a table starts with when a chain outgrows its first. */
#define FIRST_TABLE 4

/* The largest first array kept in the filter's record: a small filter is
 * then one allocation, which saves the allocator's overhead and rounding
 * of a second one (the Redis module keeps many such filters). Larger
 * arrays have allocations of their own, which large ones need (alloc.c
 * maps them on huge pages). */
#define INLINE_ARRAY_MAX 4096

/* Where an array kept in the record starts, from the record's start: on a
 * cache line for the layouts that keep an item in one line, on a word for
 * classic, which spreads an item over the whole array anyway. Lines of the
 * array are then cache lines when the allocator's block starts on one, as
 * jemalloc's blocks of sizes that are multiples of 64 do (Redis's); with
 * others a small array may straddle lines, which costs a small filter, all
 * of it in the cache, little, where an alignment of its own would cost up
 * to 56 bytes more of it. */
#define LINE 64
#define WORD 8

/* The record ends with a tail: the first layer's array when that is small,
 * or else what holds the array allocated for it (struct sk__array). The
 * descriptors of the other layers' arrays follow their records in the
 * table. */
static uintptr_t inline_align(sk_bloom_layout layout)
{
    return layout == SK_BLOOM_CLASSIC ? WORD : LINE;
}

static size_t inline_offset(sk_bloom_layout layout)
{
    _Static_assert(sizeof(sk_bloom) % WORD == 0, "the record ends on a word");
    return (sizeof(sk_bloom) + inline_align(layout) - 1) & ~(inline_align(layout) - 1);
}

/* The bytes of a record whose first array has `bytes` (0: not known). */
static size_t record_size(sk_bloom_layout layout, uint64_t bytes)
{
    size_t end = sizeof(sk_bloom) + sizeof(struct sk__array);
    if (bytes != 0 && bytes <= INLINE_ARRAY_MAX && inline_offset(layout) + bytes > end)
        end = inline_offset(layout) + (size_t)bytes;
    return end;
}

/* Where the record's tail has room for an array of `bytes`; NULL if it has
 * not. */
static _Atomic uint64_t *inline_array(const sk_bloom *f, uint64_t bytes)
{
    size_t at = inline_offset(f->layout);
    if (bytes > f->record_len || at + bytes > f->record_len)
        return NULL;
    return (_Atomic uint64_t *)(void *)((char *)(uintptr_t)f + at);
}

/* Whether layer 0's array lies in the record's tail. */
static int first_inline(const sk_bloom *f)
{
    uintptr_t at = (uintptr_t)sk__bloom_layers(f)[0].words;
    return at >= (uintptr_t)(f + 1) && at < (uintptr_t)f + f->record_len;
}

/* What holds the array of layer i when the filter allocated it apart
 * (block NULL when it did not). */
static struct sk__array *array_of(const sk_bloom *f, unsigned i)
{
    if (i == 0)
        return (struct sk__array *)(uintptr_t)(f + 1);
    return (struct sk__array *)(void *)(sk__bloom_layers(f) + f->table_cap) + i;
}

sk_bloom *sk__bloom_alloc(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                          const sk_allocator *allocator, uint64_t first_bytes)
{
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    size_t len = record_size(layout, first_bytes);
    sk_bloom *f = sk__zalloc(&a, len);
    if (f != NULL) {
        f->layout = (uint8_t)layout;
        f->fp_rate = fp_rate;
        f->expansion = (uint16_t)expansion;
        f->alloc = a;
        f->record_len = (uint16_t)len;
        sk__bloom_update_paths(f);
    }
    return f;
}

/* A table of `records` layer records and, after them, as many array
 * descriptors. */
static size_t table_bytes(unsigned records)
{
    return (size_t)records * (sizeof(struct layer) + sizeof(struct sk__array));
}

size_t sk__bloom_memory(const sk_bloom *f)
{
    size_t bytes = f->record_len + table_bytes(f->table_cap) +
                   (f->file != NULL ? f->file->memory : 0);
    for (unsigned i = first_inline(f) ? 1 : 0; i < f->nlayers; i++)
        if (array_of(f, i)->block != NULL)
            bytes += array_of(f, i)->block_len;
    return bytes;
}

/* The table that holds n + 1 records, to be allocated: 0 if the present
 * one does. */
static unsigned table_for(const sk_bloom *f)
{
    unsigned have = f->table_cap ? f->table_cap : 1;
    if (f->nlayers < have)
        return 0;
    return f->table_cap ? f->table_cap * 2 : FIRST_TABLE;
}

/* Whether f may take `extra` bytes more and stay within its budget. */
static int within_budget(const sk_bloom *f, uint64_t extra)
{
    return f->max_memory == 0 || sk__bloom_memory(f) + extra <= f->max_memory;
}

/* What an array of `bytes` for layer `index` would add to f's memory: none
 * in the record. */
static size_t array_cost(const sk_bloom *f, unsigned index, uint64_t bytes)
{
    if (index == 0 && inline_array(f, bytes) != NULL)
        return 0;
    return sk__array_cost(&f->alloc, (size_t)bytes);
}

/* Gives layer `index` of f its zeroed array: SK_ENOMEM. */
static int attach_array(sk_bloom *f, unsigned index)
{
    struct layer *l = &sk__bloom_layers(f)[index];
    uint64_t bytes = layer_nwords(l) * 8;
    l->words = index == 0 ? inline_array(f, bytes) : NULL;
    if (l->words == NULL)
        l->words = sk__array_alloc(&f->alloc, (size_t)bytes, array_of(f, index));
    return l->words != NULL ? SK_OK : SK_ENOMEM;
}

int sk__bloom_push_shape(sk_bloom *f, const sk_bloom_layer *shape)
{
    unsigned cap = table_for(f);
    if (cap != 0) {
        if (cap <= f->nlayers)
            return SK_ENOMEM; /* the count of records no longer fits */
        struct layer *table = sk__zalloc(&f->alloc, table_bytes(cap));
        if (table == NULL)
            return SK_ENOMEM;
        memcpy(table, sk__bloom_layers(f), (size_t)f->nlayers * sizeof *table);
        /* Layer 0's descriptor stays in the record. */
        if (f->table_cap != 0) {
            memcpy((struct sk__array *)(void *)(table + cap) + 1, array_of(f, 1),
                   (size_t)(f->nlayers - 1) * sizeof(struct sk__array));
            sk__free(&f->alloc, sk__bloom_layers(f), table_bytes(f->table_cap));
        }
        f->table = table;
        f->table_cap = cap;
    }
    struct layer *l = &sk__bloom_layers(f)[f->nlayers++];
    memset(l, 0, sizeof *l);
    if (f->nlayers > 1)
        memset(array_of(f, f->nlayers - 1), 0, sizeof(struct sk__array));
    l->bits = shape->bits;
    l->capacity = shape->capacity;
    l->hashes = shape->hashes;
    atomic_store_explicit(&l->count, shape->count, memory_order_relaxed);
    sk__bloom_update_paths(f);
    return SK_OK;
}

int sk__bloom_push_layer(sk_bloom *f, const sk_bloom_layer *shape)
{
    if (shape->bytes > SIZE_MAX / 2)
        return SK_ENOMEM;
    unsigned cap = table_for(f);
    if (!within_budget(f, array_cost(f, f->nlayers, shape->bytes) +
                              (cap ? table_bytes(cap) - table_bytes(f->table_cap) : 0)))
        return SK_EBUDGET;
    int rc = sk__bloom_push_shape(f, shape);
    if (rc != SK_OK)
        return rc;
    rc = attach_array(f, f->nlayers - 1);
    if (rc != SK_OK)
        f->nlayers--;
    return rc;
}

int sk__bloom_alloc_arrays(sk_bloom *f)
{
    uint64_t arrays = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        arrays += array_cost(f, i, layer_nwords(&sk__bloom_layers(f)[i]) * 8);
    if (!within_budget(f, arrays))
        return SK_EBUDGET;
    for (unsigned i = 0; i < f->nlayers; i++) {
        int rc = attach_array(f, i);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

void sk__bloom_release_layer(sk_bloom *f, unsigned i)
{
    if (i != 0 || !first_inline(f))
        sk__array_free(&f->alloc, array_of(f, i)); /* nothing for a block of NULL */
    sk__bloom_layers(f)[i].words = NULL;
}

uint64_t sk_bloom_create_memory(const sk_bloom_options *opts)
{
    sk_bloom_options o;
    sk_bloom_layout layout;
    sk_bloom_layer shape;
    if (sk__bloom_resolve_options(opts, &o) != SK_OK ||
        sk__bloom_plan_first(&o, &layout, &shape) != SK_OK || shape.bytes > SIZE_MAX / 2)
        return 0;
    sk_allocator a;
    sk__allocator_init(&a, o.allocator);
    return record_size(layout, shape.bytes) +
           (shape.bytes <= INLINE_ARRAY_MAX ? 0 : sk__array_cost(&a, (size_t)shape.bytes));
}

void sk_bloom_free(sk_bloom *f)
{
    if (f == NULL)
        return;
    for (unsigned i = 0; i < f->nlayers; i++)
        sk__bloom_release_layer(f, i);
    if (f->table_cap != 0)
        sk__free(&f->alloc, sk__bloom_layers(f), table_bytes(f->table_cap));
    if (f->file != NULL)
        f->file->release(f);
    sk_allocator a = f->alloc;
    sk__free(&a, f, f->record_len);
}

void sk__bloom_advise(const sk_bloom *f, unsigned index, int advice)
{
    /* Only arrays in the file: not allocated apart, nor in the record. */
    if (f->file == NULL || (index == 0 && first_inline(f)) || array_of(f, index)->block != NULL)
        return;
    const struct layer *l = &sk__bloom_layers(f)[index];
    uintptr_t start = (uintptr_t)l->words & ~(uintptr_t)4095;
    uintptr_t end = (uintptr_t)(l->words + layer_nwords(l));
    madvise((void *)start, end - start, advice);
}

