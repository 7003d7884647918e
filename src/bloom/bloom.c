/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom.c: Bloom filters of every layout, fixed and scalable:
 * creation, the layers of a chain, adding and looking up one item, set
 * operations and the filter's description.
 *
 * The mathematics (rates and sizes) is in bloom_math.c, where the bits of
 * an item are and how they are set in bloom_probe.h, the batch calls in
 * bloom_batch.c, and the byte forms in bloom_format.c, bloom_file.c and
 * bloom_dump.c.
 *
 * A scalable filter is a chain of layers; an item is looked up in all of
 * them and added to the newest, and a new layer, `expansion` times larger
 * at a lower rate (bloom_math.h), starts when the newest holds its
 * capacity, unless the filter's memory would then pass its budget.
 */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "bloom_probe.h"

/* Layer records a table starts with when a chain outgrows its first. */
#define FIRST_TABLE 4

sk_bloom *sk__bloom_alloc(sk_bloom_layout layout, double fp_rate, unsigned expansion,
                          const sk_allocator *allocator)
{
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    sk_bloom *f = sk__zalloc(&a, sizeof *f);
    if (f != NULL) {
        f->layout = layout;
        f->fp_rate = fp_rate;
        f->expansion = expansion;
        f->alloc = a;
        f->layers = &f->first;
    }
    return f;
}

static size_t table_bytes(unsigned records)
{
    return (size_t)records * sizeof(struct layer);
}

static size_t filter_memory(const sk_bloom *f)
{
    size_t bytes = sizeof *f + table_bytes(f->table_cap) +
                   (f->file_copy.block != NULL ? f->file_copy.block_len : f->map_len);
    for (unsigned i = 0; i < f->nlayers; i++)
        if (f->layers[i].storage == STORAGE_ALLOC)
            bytes += f->layers[i].array.block_len;
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
    return f->max_memory == 0 || filter_memory(f) + extra <= f->max_memory;
}

int sk__bloom_push_shape(sk_bloom *f, const sk_bloom_layer *shape)
{
    unsigned cap = table_for(f);
    if (cap != 0) {
        if (cap <= f->nlayers)
            return SK_ENOMEM; /* the count of records no longer fits */
        struct layer *table = sk__alloc(&f->alloc, table_bytes(cap));
        if (table == NULL)
            return SK_ENOMEM;
        memcpy(table, f->layers, table_bytes(f->nlayers));
        if (f->table_cap != 0)
            sk__free(&f->alloc, f->layers, table_bytes(f->table_cap));
        f->layers = table;
        f->table_cap = cap;
    }
    struct layer *l = &f->layers[f->nlayers++];
    memset(l, 0, sizeof *l);
    l->bits = shape->bits;
    l->nwords = sk__bloom_words(f->layout, shape->bits);
    l->hashes = shape->hashes;
    l->capacity = shape->capacity;
    l->fp_rate = shape->fp_rate;
    l->storage = STORAGE_ALLOC;
    atomic_store_explicit(&l->count, shape->count, memory_order_relaxed);
    return SK_OK;
}

int sk__bloom_push_layer(sk_bloom *f, const sk_bloom_layer *shape)
{
    if (shape->bytes > SIZE_MAX / 2)
        return SK_ENOMEM;
    unsigned cap = table_for(f);
    if (!within_budget(f, sk__array_cost(&f->alloc, (size_t)shape->bytes) +
                              (cap ? table_bytes(cap) - table_bytes(f->table_cap) : 0)))
        return SK_EBUDGET;
    int rc = sk__bloom_push_shape(f, shape);
    if (rc != SK_OK)
        return rc;
    struct layer *l = &f->layers[f->nlayers - 1];
    l->words = sk__array_alloc(&f->alloc, (size_t)l->nwords * 8, &l->array);
    if (l->words == NULL) {
        f->nlayers--;
        return SK_ENOMEM;
    }
    return SK_OK;
}

int sk__bloom_alloc_arrays(sk_bloom *f)
{
    uint64_t arrays = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        arrays += sk__array_cost(&f->alloc, (size_t)f->layers[i].nwords * 8);
    if (!within_budget(f, arrays))
        return SK_EBUDGET;
    for (unsigned i = 0; i < f->nlayers; i++) {
        struct layer *l = &f->layers[i];
        l->words = sk__array_alloc(&f->alloc, (size_t)l->nwords * 8, &l->array);
        if (l->words == NULL)
            return SK_ENOMEM;
    }
    return SK_OK;
}

static void layer_release(sk_bloom *f, struct layer *l)
{
    if (l->storage == STORAGE_ALLOC)
        sk__array_free(&f->alloc, &l->array);
    l->words = NULL;
}

int sk_bloom_create(sk_bloom **out, const sk_bloom_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_bloom_options o;
    int rc = sk__bloom_resolve_options(opts, &o);
    if (rc != SK_OK)
        return rc;
    sk_bloom_layout layout;
    sk_bloom_layer shape;
    rc = sk__bloom_plan_first(&o, &layout, &shape);
    if (rc != SK_OK)
        return rc;
    sk_bloom *f = sk__bloom_alloc(layout, o.bits ? 0 : o.fp_rate, o.expansion, o.allocator);
    if (f == NULL)
        return SK_ENOMEM;
    f->max_memory = o.max_memory;
    rc = sk__bloom_push_layer(f, &shape);
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
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
    return sizeof(sk_bloom) + sk__array_cost(&a, (size_t)shape.bytes);
}

int sk_bloom_new(sk_bloom **out, uint64_t capacity, double fp_rate, sk_bloom_layout layout)
{
    if (out != NULL)
        *out = NULL;
    if (!(fp_rate > 0)) /* 0 would mean the default rate in the options */
        return SK_EINVAL;
    sk_bloom_options o = {.capacity = capacity, .fp_rate = fp_rate, .layout = layout};
    return sk_bloom_create(out, &o);
}

void sk_bloom_free(sk_bloom *f)
{
    if (f == NULL)
        return;
    for (unsigned i = 0; i < f->nlayers; i++)
        layer_release(f, &f->layers[i]);
    if (f->table_cap != 0)
        sk__free(&f->alloc, f->layers, table_bytes(f->table_cap));
    sk__bloom_end_in_place(f);
    if (f->file_copy.block != NULL)
        sk__array_free(&f->alloc, &f->file_copy);
    else if (f->map != NULL)
        munmap(f->map, f->map_len);
    sk_allocator a = f->alloc;
    sk__free(&a, f, sizeof *f);
}

int sk_bloom_copy(sk_bloom **out, const sk_bloom *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_bloom *f = sk__bloom_alloc(src->layout, src->fp_rate, src->expansion, &src->alloc);
    if (f == NULL)
        return SK_ENOMEM;
    f->single_writer = src->single_writer;
    for (unsigned i = 0; i < src->nlayers; i++) {
        sk_bloom_layer shape;
        sk_bloom_get_layer(src, i, &shape);
        int rc = sk__bloom_push_layer(f, &shape); /* no budget yet: a copy holds what src holds */
        if (rc != SK_OK) {
            sk_bloom_free(f);
            return rc;
        }
        struct layer *l = &f->layers[i];
        memcpy((void *)l->words, (const void *)src->layers[i].words, (size_t)l->nwords * 8);
        l->checksum = src->layers[i].checksum;
    }
    f->max_memory = src->max_memory;
    f->restoring = src->restoring;
    *out = f;
    return SK_OK;
}

static int grow(sk_bloom *f)
{
    const struct layer *last = &f->layers[f->nlayers - 1];
    sk_bloom_layer shape;
    int rc = sk__bloom_plan_layer(f->layout, f->fp_rate, f->expansion, last->capacity,
                                  f->nlayers - 1, f->nlayers, &shape);
    return rc != SK_OK ? rc : sk__bloom_push_layer(f, &shape);
}

int sk__bloom_contains_hashed(const sk_bloom *f, struct item_hash h)
{
    /* A fixed filter's one layer is always its first record, which costs
     * no load of the layer table's address. */
    if (f->expansion == 0)
        return layer_contains(&f->first, f->layout, h);
    for (unsigned i = f->nlayers; i-- > 0;)
        if (layer_contains(&f->layers[i], f->layout, h))
            return 1;
    return 0;
}

void sk_bloom_set_single_writer(sk_bloom *f, int on)
{
    f->single_writer = on != 0;
}

void sk_bloom_set_max_memory(sk_bloom *f, uint64_t bytes)
{
    f->max_memory = bytes;
}

int sk__bloom_add_hashed(sk_bloom *f, struct item_hash h)
{
    if (f->expansion == 0)
        return layer_add(&f->first, f->layout, h,
                         f->single_writer ? WRITERS_ONE_PROMISED : WRITERS_MANY);
    /* The older layers are looked up; the newest needs no lookup before the
     * add, which reports whether the item was there, unless it is full and
     * the item would otherwise start a new layer. */
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        if (layer_contains(&f->layers[i], f->layout, h))
            return 0;
    struct layer *last = &f->layers[f->nlayers - 1];
    if (atomic_load_explicit(&last->count, memory_order_relaxed) >= last->capacity) {
        if (layer_contains(last, f->layout, h))
            return 0;
        int rc = grow(f);
        if (rc != SK_OK)
            return rc;
        last = &f->layers[f->nlayers - 1];
    }
    /* One writer: a scalable filter needs exclusive access anyway. */
    return layer_add(last, f->layout, h, WRITERS_ONE);
}

/* A single call runs as few instructions as it can for the common filter,
 * fixed, blocked or split and not open in place, and leaves every other
 * case to a function of its own: a short call, with no registers to save,
 * lets the processor start the loads of the calls after it while its own
 * is missing the cache, so that their misses overlap (docs/benchmarks.md).
 * The other cases are cloned too, for scalable split filters. The halves
 * of the hash go as two integers, not as a structure: the compiler would
 * pack that into a vector through the stack, and a load that a store
 * cannot forward to waits for the stores to retire, that is for the cache
 * miss of the call before, which serializes the calls (three times slower
 * measured). */
static inline __attribute__((always_inline)) int fast_path(const sk_bloom *f,
                                                           sk_bloom_layout layout)
{
    return f->layout == layout && f->expansion == 0 && f->in_place == NULL;
}

static PROBE_CLONES_NOINLINE int add_other(sk_bloom *f, uint64_t h1,
                                                            uint64_t h2)
{
    struct item_hash h = {h1, h2};
    if (f->in_place != NULL) {
        int rc = sk__bloom_in_place_touch(f, h);
        if (rc != SK_OK)
            return rc;
    }
    return sk__bloom_add_hashed(f, h);
}

static PROBE_CLONES_NOINLINE int contains_other(const sk_bloom *f, uint64_t h1,
                                                                 uint64_t h2)
{
    return sk__bloom_contains_hashed(f, (struct item_hash){h1, h2});
}

static inline __attribute__((always_inline)) int add_item(sk_bloom *f, uint64_t h1, uint64_t h2)
{
    enum writers writers = f->single_writer ? WRITERS_ONE_PROMISED : WRITERS_MANY;
    if (fast_path(f, SK_BLOOM_SPLIT))
        return layer_add(&f->first, SK_BLOOM_SPLIT, (struct item_hash){h1, h2}, writers);
    if (fast_path(f, SK_BLOOM_BLOCKED))
        return layer_add(&f->first, SK_BLOOM_BLOCKED, (struct item_hash){h1, h2}, writers);
    return add_other(f, h1, h2);
}

static inline __attribute__((always_inline)) int contains_item(const sk_bloom *f, uint64_t h1,
                                                               uint64_t h2)
{
    if (fast_path(f, SK_BLOOM_SPLIT))
        return split_line_has(blocked_line(&f->first, h1), h2, f->first.hashes);
    if (fast_path(f, SK_BLOOM_BLOCKED))
        return blocked_line_has(blocked_line(&f->first, h1), h2, f->first.hashes);
    return contains_other(f, h1, h2);
}

/* flatten, as in bloom_batch.c: the item's hash inlined. */
PROBE_CLONES __attribute__((flatten)) int sk_bloom_add(sk_bloom *f, const void *data, size_t len)
{
    struct item_hash h = hash_item(data, len);
    return add_item(f, h.h1, h.h2);
}

PROBE_CLONES __attribute__((flatten)) int sk_bloom_contains(const sk_bloom *f, const void *data,
                                                            size_t len)
{
    struct item_hash h = hash_item(data, len);
    return contains_item(f, h.h1, h.h2);
}

sk_bloom_hash sk_bloom_hash_bytes(const void *data, size_t len)
{
    struct item_hash h = hash_item(data, len);
    return (sk_bloom_hash){h.h1, h.h2};
}

sk_bloom_hash sk_bloom_hash_u64(uint64_t hash)
{
    /* splitmix64's finalizer, a bijection, of the hash moved off zero. */
    uint64_t z = hash + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (sk_bloom_hash){hash, z ^ (z >> 31)};
}

PROBE_CLONES __attribute__((flatten)) int sk_bloom_add_hash(sk_bloom *f, sk_bloom_hash h)
{
    return add_item(f, h.low, h.high);
}

PROBE_CLONES __attribute__((flatten)) int sk_bloom_contains_hash(const sk_bloom *f,
                                                                 sk_bloom_hash h)
{
    return contains_item(f, h.low, h.high);
}

/* ---- set operations and estimates ---------------------------------------- */

void sk__bloom_advise(const struct layer *l, int advice)
{
    if (l->storage != STORAGE_FILE)
        return;
    uintptr_t start = (uintptr_t)l->words & ~(uintptr_t)4095;
    uintptr_t end = (uintptr_t)(l->words + l->nwords);
    madvise((void *)start, end - start, advice);
}

static uint64_t layer_bits_set(const struct layer *l)
{
    sk__bloom_advise(l, MADV_SEQUENTIAL);
    uint64_t set = 0;
    for (uint64_t i = 0; i < l->nwords; i++)
        set += (uint64_t)__builtin_popcountll(
            atomic_load_explicit(&l->words[i], memory_order_relaxed));
    sk__bloom_advise(l, MADV_RANDOM);
    return set;
}

/* Swamidass and Baldi's estimate n = -(m/k) ln(1 - X/m) from X bits set. */
static uint64_t layer_estimate_items(const struct layer *l)
{
    double x = (double)layer_bits_set(l), m = (double)l->bits;
    uint64_t count = atomic_load_explicit(&l->count, memory_order_relaxed);
    if (x >= m)
        return l->capacity > count ? l->capacity : count;
    return (uint64_t)llround(-m / l->hashes * log1p(-x / m));
}

static int same_shape(const sk_bloom *a, const sk_bloom *b)
{
    if (a->layout != b->layout || a->nlayers != b->nlayers || a->expansion != b->expansion)
        return 0;
    for (unsigned i = 0; i < a->nlayers; i++)
        if (a->layers[i].bits != b->layers[i].bits ||
            a->layers[i].hashes != b->layers[i].hashes)
            return 0;
    return 1;
}

static int combine(sk_bloom *dst, const sk_bloom *src, int intersect)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    /* The layers of two scalable filters hold the same item wherever its
     * insertion order put it, so only their union is layer by layer. */
    if (!same_shape(dst, src) || (intersect && dst->expansion != 0))
        return SK_EINCOMPAT;
    if (dst->in_place != NULL) {
        int rc = sk__bloom_in_place_touch_all(dst);
        if (rc != SK_OK)
            return rc;
    }
    for (unsigned l = 0; l < dst->nlayers; l++) {
        struct layer *d = &dst->layers[l];
        const struct layer *s = &src->layers[l];
        for (uint64_t i = 0; i < d->nwords; i++) {
            uint64_t a = atomic_load_explicit(&d->words[i], memory_order_relaxed);
            uint64_t b = atomic_load_explicit(&s->words[i], memory_order_relaxed);
            atomic_store_explicit(&d->words[i], intersect ? a & b : a | b,
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&d->count, layer_estimate_items(d), memory_order_relaxed);
    }
    return SK_OK;
}

int sk_bloom_merge(sk_bloom *dst, const sk_bloom *src)
{
    return combine(dst, src, 0);
}

int sk_bloom_intersect(sk_bloom *dst, const sk_bloom *src)
{
    return combine(dst, src, 1);
}

int sk_bloom_clear(sk_bloom *f)
{
    if (f == NULL)
        return SK_EINVAL;
    if (f->in_place != NULL) {
        int rc = sk__bloom_in_place_touch_all(f);
        if (rc != SK_OK)
            return rc;
    }
    while (f->nlayers > 1)
        layer_release(f, &f->layers[--f->nlayers]);
    struct layer *l = &f->layers[0];
    memset((void *)l->words, 0, (size_t)l->nwords * 8);
    atomic_store_explicit(&l->count, 0, memory_order_relaxed);
    return SK_OK;
}

uint64_t sk_bloom_estimate_items(const sk_bloom *f)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        total += layer_estimate_items(&f->layers[i]);
    return total;
}

/* ---- description -------------------------------------------------------- */

void sk_bloom_get_info(const sk_bloom *f, sk_bloom_info *info)
{
    memset(info, 0, sizeof *info);
    info->layout = f->layout;
    info->hashes = f->layers[0].hashes;
    info->fp_rate = f->fp_rate;
    info->layers = f->nlayers;
    info->expansion = f->expansion;
    info->max_memory = f->max_memory;
    info->memory = filter_memory(f);
    info->interrupted_chunks = f->interrupted;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        info->bits += l->bits;
        info->capacity += l->capacity;
        info->count += atomic_load_explicit(&l->count, memory_order_relaxed);
        info->array_bytes += l->nwords * 8;
    }
}

int sk_bloom_get_layer(const sk_bloom *f, unsigned index, sk_bloom_layer *out)
{
    if (f == NULL || out == NULL)
        return SK_EINVAL;
    if (index >= f->nlayers) {
        const struct layer *last = &f->layers[f->nlayers - 1];
        return sk__bloom_plan_layer(f->layout, f->fp_rate, f->expansion, last->capacity,
                                    f->nlayers - 1, index, out);
    }
    const struct layer *l = &f->layers[index];
    *out = (sk_bloom_layer){.bits = l->bits, .hashes = l->hashes, .capacity = l->capacity,
                            .fp_rate = l->fp_rate, .bytes = l->nwords * 8,
                            .count = atomic_load_explicit(&l->count, memory_order_relaxed)};
    return SK_OK;
}

double sk_bloom_expected_fp_rate(const sk_bloom *f, uint64_t items)
{
    /* Items fill the layers in order, each up to its capacity; the newest
     * takes the rest. An item is a false positive if any layer says so. */
    double remaining = (double)items, pass = 1;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        int last = i + 1 == f->nlayers;
        double n = last || remaining < (double)l->capacity ? remaining : (double)l->capacity;
        pass *= 1 - sk__bloom_fp_rate(f->layout, l->bits, l->hashes, n);
        remaining -= n;
    }
    return 1 - pass;
}
