/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo_memory.c: what a Cuckoo filter holds and how it comes and goes:
 * the sizes of its sub-filters, their arrays and the table of them,
 * creation, copies, growth within a budget, dropping an emptied newest
 * sub-filter, and the figures of sk_cuckoo_get_info. The filter's
 * operations are in cuckoo.c.
 *
 * Every sub-filter's buckets are a power of 2 (the first's times a power
 * of 2), so its size is a shift; the table doubles as sub-filters come, so
 * that a filter grown one sub-filter at a time copies it log n times; the
 * running totals of slots and array bytes keep sk_cuckoo_get_info and the
 * budget check from walking the sub-filters.
 */
#include <string.h>

#include "cuckoo_internal.h"

#define DEFAULT_BUCKET_SIZE 2
#define DEFAULT_MAX_ITERATIONS 20

static unsigned log2_of(uint64_t power_of_2)
{
    return (unsigned)__builtin_ctzll(power_of_2);
}

/* Every factor is a power of 2, so the product is a shift. */
uint64_t sk__cuckoo_sub_buckets(uint64_t buckets, uint32_t expansion, uint32_t i)
{
    if (i == 0 || expansion <= 1)
        return buckets;
    uint64_t shift = (uint64_t)log2_of(expansion) * i;
    return shift + log2_of(buckets) > log2_of(SK_CUCKOO_MAX_BUCKETS) ? 0 : buckets << shift;
}

uint64_t sk__cuckoo_slot_bytes(const sk_cuckoo *c)
{
    return c->slot_bytes;
}

static int is_power_of_2(uint64_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

int sk__cuckoo_shape_ok(uint64_t buckets, uint32_t bucket_size, uint32_t max_iterations,
                        uint32_t expansion, uint64_t filters)
{
    return is_power_of_2(buckets) && buckets <= SK_CUCKOO_MAX_BUCKETS && bucket_size >= 1 &&
           bucket_size <= SK_CUCKOO_MAX_BUCKET_SIZE && max_iterations >= 1 &&
           max_iterations <= SK_CUCKOO_MAX_ITERATIONS && expansion <= SK_CUCKOO_MAX_EXPANSION &&
           (expansion == 0 ? filters == 1 : is_power_of_2(expansion)) && filters >= 1 &&
           filters <= SK_CUCKOO_MAX_FILTERS;
}

/* What a sub-filter of `buckets` takes, or UINT64_MAX past SIZE_MAX. */
static uint64_t sub_cost(const sk_allocator *a, uint64_t buckets, uint32_t bucket_size)
{
    uint64_t bytes = buckets * bucket_size + SK__CUCKOO_PAD;
    return bytes > SIZE_MAX / 2 ? UINT64_MAX : sk__array_cost(a, (size_t)bytes);
}

/* The table a filter of `cap` entries grows to for `filters`: doubled, so
 * that growing by one at a time copies it only log n times. */
static uint32_t table_size(uint32_t cap, uint32_t filters)
{
    if (filters <= cap)
        return cap;
    cap = cap < 4 ? 4 : cap;
    while (cap < filters)
        cap = cap > SK_CUCKOO_MAX_FILTERS / 2 ? SK_CUCKOO_MAX_FILTERS : cap * 2;
    return cap;
}

static uint64_t memory_of(const sk_allocator *a, uint64_t buckets, uint32_t bucket_size,
                          uint32_t expansion, uint32_t filters)
{
    uint64_t total = sizeof(sk_cuckoo) + (uint64_t)table_size(0, filters) *
                                             sizeof(struct sk__cuckoo_sub);
    for (uint32_t i = 0; i < filters; i++) {
        uint64_t sub = sk__cuckoo_sub_buckets(buckets, expansion, i);
        uint64_t cost = sub == 0 ? UINT64_MAX : sub_cost(a, sub, bucket_size);
        if (cost == UINT64_MAX || total > UINT64_MAX - cost)
            return UINT64_MAX;
        total += cost;
    }
    return total;
}

/* Makes room in the table for `filters` sub-filters. */
static int reserve_table(sk_cuckoo *c, uint32_t filters)
{
    if (filters <= c->subs_cap)
        return SK_OK;
    uint32_t cap = table_size(c->subs_cap, filters);
    struct sk__cuckoo_sub *subs = sk__zalloc(&c->alloc, cap * sizeof *subs);
    if (subs == NULL)
        return SK_ENOMEM;
    if (c->filters > 0)
        memcpy(subs, c->subs, c->filters * sizeof *subs);
    sk__free(&c->alloc, c->subs, c->subs_cap * sizeof *subs);
    c->subs = subs;
    c->subs_cap = cap;
    return SK_OK;
}

/* See cuckoo_internal.h. */
int sk__cuckoo_grow(sk_cuckoo *c)
{
    if (c->filters == SK_CUCKOO_MAX_FILTERS)
        return SK_ETOOLARGE;
    uint64_t buckets = sk__cuckoo_sub_buckets(c->buckets, c->expansion, c->filters);
    if (buckets == 0)
        return SK_ETOOLARGE;
    uint64_t cost = sub_cost(&c->alloc, buckets, c->bucket_size);
    if (cost == UINT64_MAX)
        return SK_ETOOLARGE;
    if (c->max_memory != 0) {
        sk_cuckoo_info info;
        sk_cuckoo_get_info(c, &info);
        uint64_t table = (uint64_t)(table_size(c->subs_cap, c->filters + 1) - c->subs_cap) *
                         sizeof(struct sk__cuckoo_sub);
        if (info.memory + cost + table > c->max_memory)
            return SK_EBUDGET;
    }
    if (reserve_table(c, c->filters + 1) != SK_OK)
        return SK_ENOMEM;
    struct sk__cuckoo_sub *sub = &c->subs[c->filters];
    sub->buckets = buckets;
    sub->slots = sk__array_alloc(&c->alloc, (size_t)(buckets * c->bucket_size + SK__CUCKOO_PAD),
                                 &sub->array);
    if (sub->slots == NULL)
        return SK_ENOMEM;
    c->filters++;
    c->slot_bytes += buckets * c->bucket_size;
    c->array_bytes += cost;
    return SK_OK;
}

/* See cuckoo_internal.h. */
void sk__cuckoo_drop_newest(sk_cuckoo *c)
{
    struct sk__cuckoo_sub *sub = &c->subs[--c->filters];
    c->slot_bytes -= sub->buckets * c->bucket_size;
    c->array_bytes -= sub_cost(&c->alloc, sub->buckets, c->bucket_size);
    sk__array_free(&c->alloc, &sub->array);
    *sub = (struct sk__cuckoo_sub){0};
}

int sk__cuckoo_alloc(sk_cuckoo **out, uint64_t buckets, uint32_t bucket_size,
                     uint32_t max_iterations, uint32_t expansion, uint32_t filters,
                     uint64_t max_memory, const sk_allocator *a)
{
    *out = NULL;
    if (!sk__cuckoo_shape_ok(buckets, bucket_size, max_iterations, expansion, filters))
        return SK_EINVAL;
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    uint64_t memory = memory_of(&alloc, buckets, bucket_size, expansion, filters);
    if (memory == UINT64_MAX)
        return SK_ETOOLARGE;
    if (max_memory != 0 && memory > max_memory)
        return SK_EBUDGET;
    sk_cuckoo *c = sk__zalloc(&alloc, sizeof *c);
    if (c == NULL)
        return SK_ENOMEM;
    *c = (sk_cuckoo){.alloc = alloc, .buckets = buckets, .bucket_size = bucket_size,
                     .max_iterations = max_iterations, .expansion = expansion};
    if (reserve_table(c, filters) != SK_OK) {
        sk_cuckoo_free(c);
        return SK_ENOMEM;
    }
    for (uint32_t i = 0; i < filters; i++) {
        if (sk__cuckoo_grow(c) != SK_OK) {
            sk_cuckoo_free(c);
            return SK_ENOMEM;
        }
    }
    c->max_memory = max_memory;
    *out = c;
    return SK_OK;
}

static uint64_t round_up_power_of_2(uint64_t n)
{
    uint64_t p = 1;
    while (p < n && p <= SK_CUCKOO_MAX_BUCKETS)
        p <<= 1;
    return p;
}

/* The first sub-filter's buckets and the settings the options ask for. */
static int shape(const sk_cuckoo_options *o, uint64_t *buckets, uint32_t *b, uint32_t *iters,
                 uint32_t *expansion)
{
    *b = o->bucket_size != 0 ? o->bucket_size : DEFAULT_BUCKET_SIZE;
    *iters = o->max_iterations != 0 ? o->max_iterations : DEFAULT_MAX_ITERATIONS;
    *expansion = o->expansion != 0 ? (uint32_t)round_up_power_of_2(o->expansion) : 0;
    if (*b > SK_CUCKOO_MAX_BUCKET_SIZE || *iters > SK_CUCKOO_MAX_ITERATIONS ||
        o->expansion > SK_CUCKOO_MAX_EXPANSION || o->capacity < 2 * (uint64_t)*b)
        return SK_EINVAL;
    *buckets = round_up_power_of_2(o->capacity / *b);
    return *buckets > SK_CUCKOO_MAX_BUCKETS ? SK_ETOOLARGE : SK_OK;
}

int sk_cuckoo_create(sk_cuckoo **out, const sk_cuckoo_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    uint64_t buckets;
    uint32_t b, iters, expansion;
    if (opts == NULL)
        return SK_EINVAL;
    int rc = shape(opts, &buckets, &b, &iters, &expansion);
    if (rc != SK_OK)
        return rc;
    return sk__cuckoo_alloc(out, buckets, b, iters, expansion, 1, opts->max_memory,
                            opts->allocator);
}

uint64_t sk_cuckoo_create_memory(const sk_cuckoo_options *opts)
{
    uint64_t buckets;
    uint32_t b, iters, expansion;
    if (opts == NULL || shape(opts, &buckets, &b, &iters, &expansion) != SK_OK)
        return 0;
    sk_allocator alloc;
    sk__allocator_init(&alloc, opts->allocator);
    uint64_t memory = memory_of(&alloc, buckets, b, expansion, 1);
    return memory == UINT64_MAX ? 0 : memory;
}

int sk_cuckoo_new(sk_cuckoo **out, uint64_t capacity)
{
    return sk_cuckoo_create(out, &(sk_cuckoo_options){.capacity = capacity});
}

void sk_cuckoo_free(sk_cuckoo *c)
{
    if (c == NULL)
        return;
    sk_allocator a = c->alloc;
    for (uint32_t i = 0; i < c->filters; i++)
        sk__array_free(&a, &c->subs[i].array);
    sk__free(&a, c->subs, c->subs_cap * sizeof *c->subs);
    sk__free(&a, c, sizeof *c);
}

int sk_cuckoo_copy(sk_cuckoo **out, const sk_cuckoo *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__cuckoo_alloc(out, src->buckets, src->bucket_size, src->max_iterations,
                              src->expansion, src->filters, 0, &src->alloc);
    if (rc != SK_OK)
        return rc;
    sk_cuckoo *c = *out;
    for (uint32_t i = 0; i < src->filters; i++)
        memcpy(c->subs[i].slots, src->subs[i].slots, src->subs[i].buckets * src->bucket_size);
    c->items = src->items;
    c->deletes = src->deletes;
    c->restoring = src->restoring;
    c->restored = src->restored;
    c->max_memory = src->max_memory;
    return SK_OK;
}

int sk_cuckoo_clear(sk_cuckoo *c)
{
    if (c == NULL)
        return SK_EINVAL;
    while (c->filters > 1)
        sk__cuckoo_drop_newest(c);
    memset(c->subs[0].slots, 0, c->subs[0].buckets * c->bucket_size);
    c->items = c->deletes = 0;
    c->restoring = 0;
    return SK_OK;
}

void sk_cuckoo_set_max_memory(sk_cuckoo *c, uint64_t bytes)
{
    c->max_memory = bytes;
}

void sk_cuckoo_get_info(const sk_cuckoo *c, sk_cuckoo_info *info)
{
    *info = (sk_cuckoo_info){.buckets = c->buckets, .filters = c->filters, .items = c->items,
                             .deletes = c->deletes, .bucket_size = c->bucket_size,
                             .max_iterations = c->max_iterations, .expansion = c->expansion,
                             .slots = sk__cuckoo_slot_bytes(c)};
    info->memory = (size_t)(sizeof *c + (uint64_t)c->subs_cap * sizeof *c->subs + c->array_bytes);
}

int sk_cuckoo_restoring(const sk_cuckoo *c)
{
    return c->restoring;
}
