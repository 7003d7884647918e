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
 * The record and the memory of its layers are bloom_record.c's.
 *
 * A scalable filter is a chain of layers; an item is looked up in all of
 * them and added to the newest, and a new layer, `expansion` times larger
 * at a lower rate (bloom_math.h), starts when the newest holds its
 * capacity, unless the filter's memory would then pass its budget.
 *
 * This file and bloom_batch.c call nothing of the file code: a filter read
 * from a file or dump is reached only through the hooks of its `file`
 * (bloom_internal.h), called before its bits change and when it is copied
 * or freed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "bloom_plan.h"
#include "bloom_probe.h"

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
    sk_bloom *f = sk__bloom_alloc(layout, o.bits ? 0 : o.fp_rate, o.expansion, o.allocator,
                                  shape.bytes);
    if (f == NULL)
        return SK_ENOMEM;
    f->max_memory = o.max_memory;
    f->flags = (uint8_t)((o.refuse_when_full ? SK__BLOOM_REFUSE_FULL : 0) |
                         (o.concurrent_writers ? SK__BLOOM_MANY_WRITERS : 0));
    sk__bloom_update_paths(f);
    rc = sk__bloom_push_layer(f, &shape);
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
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

int sk_bloom_copy(sk_bloom **out, const sk_bloom *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_bloom *f = sk__bloom_alloc(src->layout, src->fp_rate, src->expansion, &src->alloc,
                                  layer_nwords(&sk__bloom_layers(src)[0]) * 8);
    if (f == NULL)
        return SK_ENOMEM;
    f->flags = src->flags;
    for (unsigned i = 0; i < src->nlayers; i++) {
        sk_bloom_layer shape;
        sk_bloom_get_layer(src, i, &shape);
        int rc = sk__bloom_push_layer(f, &shape); /* no budget yet: a copy holds what src holds */
        if (rc != SK_OK) {
            sk_bloom_free(f);
            return rc;
        }
        struct layer *l = &sk__bloom_layers(f)[i];
        memcpy((void *)l->words, (const void *)sk__bloom_layers(src)[i].words,
               (size_t)layer_nwords(l) * 8);
    }
    f->max_memory = src->max_memory;
    int rc = src->file != NULL ? src->file->copy(f, src) : SK_OK;
    sk__bloom_update_paths(f);
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

static int grow(sk_bloom *f)
{
    const struct layer *last = &sk__bloom_layers(f)[f->nlayers - 1];
    sk_bloom_layer shape;
    int rc = sk__bloom_plan_layer(f->layout, f->fp_rate, f->expansion, layer_capacity(last),
                                  f->nlayers - 1, f->nlayers, &shape);
    return rc != SK_OK ? rc : sk__bloom_push_layer(f, &shape);
}

int sk__bloom_contains_hashed(const sk_bloom *f, struct item_hash h)
{
    /* A fixed filter's one layer is always its first record, which costs
     * no load of the layer table's address. */
    if (f->expansion == 0)
        return layer_contains(&f->first, f->layout, h);
    const struct layer *layers = sk__bloom_layers(f);
    for (unsigned i = f->nlayers; i-- > 0;)
        if (layer_contains(&layers[i], f->layout, h))
            return 1;
    return 0;
}

void sk_bloom_set_concurrent_writers(sk_bloom *f, int on)
{
    f->flags = (uint8_t)(on ? f->flags | SK__BLOOM_MANY_WRITERS
                            : f->flags & ~SK__BLOOM_MANY_WRITERS);
    sk__bloom_update_paths(f);
}

void sk_bloom_set_max_memory(sk_bloom *f, uint64_t bytes)
{
    f->max_memory = bytes;
}

void sk_bloom_set_refuse_when_full(sk_bloom *f, int on)
{
    f->flags = (uint8_t)(on ? f->flags | SK__BLOOM_REFUSE_FULL : f->flags & ~SK__BLOOM_REFUSE_FULL);
    sk__bloom_update_paths(f);
}

int sk__bloom_add_hashed(sk_bloom *f, struct item_hash h)
{
    if (f->expansion == 0) {
        if ((f->flags & SK__BLOOM_REFUSE_FULL) &&
            atomic_load_explicit(&f->first.count, memory_order_relaxed) >=
                layer_capacity(&f->first))
            return layer_contains(&f->first, f->layout, h) ? 0 : SK_EFULL;
        return layer_add(&f->first, f->layout, h, writers_of(f));
    }
    /* The older layers are looked up; the newest needs no lookup before the
     * add, which reports whether the item was there, unless it is full and
     * the item would otherwise start a new layer. */
    struct layer *layers = sk__bloom_layers(f);
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        if (layer_contains(&layers[i], f->layout, h))
            return 0;
    struct layer *last = &layers[f->nlayers - 1];
    if (atomic_load_explicit(&last->count, memory_order_relaxed) >= layer_capacity(last)) {
        if (layer_contains(last, f->layout, h))
            return 0;
        int rc = grow(f);
        if (rc != SK_OK)
            return rc;
        last = &sk__bloom_layers(f)[f->nlayers - 1];
    }
    /* One writer: a scalable filter needs exclusive access anyway. */
    return layer_add(last, f->layout, h, WRITERS_ONE);
}

/* A single call runs as few instructions as it can for the common filter:
 * fixed, split with 8 lanes and, for adds, in memory, never refusing one
 * and with one writer, which f->fast tells in one test. It is then a leaf
 * with no stack frame, and leaves every other case to a function of its
 * own, reached by a tail call: a short call lets the processor start the
 * loads of the calls after it while its own is missing the cache, so that
 * their misses overlap (docs/benchmarks.md). The halves of the hash go as
 * two integers, not as a structure: the compiler would pack that into a
 * vector through the stack, and a load that a store cannot forward to
 * waits for the stores to retire, that is for the cache miss of the call
 * before, which serializes the calls (three times slower measured). */
/* flatten: the probes inlined into each clone, the AVX2 one included. */
static PROBE_CLONES_NOINLINE __attribute__((flatten)) int add_other(sk_bloom *f, uint64_t h1,
                                                                     uint64_t h2)
{
    struct item_hash h = {h1, h2};
    if (f->file != NULL) {
        int rc = f->file->before_write(f, &h, 1);
        if (rc != SK_OK)
            return rc;
    }
    return sk__bloom_add_hashed(f, h);
}

static PROBE_CLONES_NOINLINE __attribute__((flatten)) int contains_other(const sk_bloom *f,
                                                                          uint64_t h1,
                                                                          uint64_t h2)
{
    return sk__bloom_contains_hashed(f, (struct item_hash){h1, h2});
}

/* Counts an item the short path found new; stored whether or not it was,
 * so that no branch waits on the line's bits. */
static inline __attribute__((always_inline)) int count_new(sk_bloom *f, int changed)
{
    atomic_store_explicit(&f->first.count,
                          atomic_load_explicit(&f->first.count, memory_order_relaxed) +
                              (uint64_t)changed,
                          memory_order_relaxed);
    return changed;
}

static inline __attribute__((always_inline)) int add_item(sk_bloom *f, uint64_t h1, uint64_t h2)
{
    if (!(f->fast & SK__BLOOM_FAST_ADD))
        return add_other(f, h1, h2);
    return count_new(f, split_line_set_always(blocked_line(&f->first, h1), h2, 8));
}

static inline __attribute__((always_inline)) int contains_item(const sk_bloom *f, uint64_t h1,
                                                               uint64_t h2)
{
    if (!(f->fast & SK__BLOOM_FAST_CONTAINS))
        return contains_other(f, h1, h2);
    return split_line_has(blocked_line(&f->first, h1), h2, 8);
}

/* Items of any length but 8, hashed out of line so that the 8-byte path
 * keeps no registers across a call. */
static PROBE_CLONES_NOINLINE int add_bytes(sk_bloom *f, const void *data, size_t len)
{
    struct item_hash h = hash_item(data, len);
    return add_item(f, h.h1, h.h2);
}

static PROBE_CLONES_NOINLINE int contains_bytes(const sk_bloom *f, const void *data, size_t len)
{
    struct item_hash h = hash_item(data, len);
    return contains_item(f, h.h1, h.h2);
}

/* Items of 8 bytes (integer keys, an address and a port) are hashed inline
 * with the length a constant, which drops XXH3's tests of the length and
 * its shifts by it; other lengths take a tail call, so that this path saves
 * no registers. */
static int add_single(sk_bloom *f, const void *data, size_t len)
{
    if (len != 8)
        return add_bytes(f, data, len);
    XXH128_hash_t h = XXH3_128bits(data, 8);
    return add_item(f, h.low64, h.high64);
}

static int contains_single(const sk_bloom *f, const void *data, size_t len)
{
    if (len != 8)
        return contains_bytes(f, data, len);
    XXH128_hash_t h = XXH3_128bits(data, 8);
    return contains_item(f, h.low64, h.high64);
}

#ifdef PROBE_IFUNC
/* The same two for AVX2, written out because their kernels test the line
 * with vptest (bloom_split.h), which a target_clones body cannot use; the
 * loader binds sk_bloom_add and sk_bloom_contains to these or to the
 * baseline ones above, which are plain functions so that the resolvers
 * return addresses that need no resolving of their own. */
static __attribute__((target("avx2"))) int add_avx2(sk_bloom *f, const void *data, size_t len)
{
    if (len != 8)
        return add_bytes(f, data, len);
    XXH128_hash_t h = XXH3_128bits(data, 8);
    if (!(f->fast & SK__BLOOM_FAST_ADD))
        return add_other(f, h.low64, h.high64);
    return count_new(f, split_line_set_always_avx2(blocked_line(&f->first, h.low64), h.high64, 8));
}

static __attribute__((target("avx2"))) int contains_avx2(const sk_bloom *f, const void *data,
                                                        size_t len)
{
    if (len != 8)
        return contains_bytes(f, data, len);
    XXH128_hash_t h = XXH3_128bits(data, 8);
    if (!(f->fast & SK__BLOOM_FAST_CONTAINS))
        return contains_other(f, h.low64, h.high64);
    return split_line_has_avx2(blocked_line(&f->first, h.low64), h.high64, 8);
}

typedef int (*add_fn)(sk_bloom *, const void *, size_t);
typedef int (*contains_fn)(const sk_bloom *, const void *, size_t);

static add_fn resolve_add(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? add_avx2 : add_single;
}

static contains_fn resolve_contains(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? contains_avx2 : contains_single;
}

int sk_bloom_add(sk_bloom *f, const void *data, size_t len) __attribute__((ifunc("resolve_add")));
int sk_bloom_contains(const sk_bloom *f, const void *data, size_t len)
    __attribute__((ifunc("resolve_contains")));
#else
int sk_bloom_add(sk_bloom *f, const void *data, size_t len)
{
    return add_single(f, data, len);
}

int sk_bloom_contains(const sk_bloom *f, const void *data, size_t len)
{
    return contains_single(f, data, len);
}
#endif

int sk_bloom_add_unlimited(sk_bloom *f, const void *data, size_t len)
{
    /* Scalable filters, the only ones a budget stops, have one writer. */
    uint64_t budget = f->max_memory;
    f->max_memory = 0;
    int rc = sk_bloom_add(f, data, len);
    f->max_memory = budget;
    return rc;
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

PROBE_CLONES int sk_bloom_add_hash(sk_bloom *f, sk_bloom_hash h)
{
    return add_item(f, h.low, h.high);
}

PROBE_CLONES int sk_bloom_contains_hash(const sk_bloom *f, sk_bloom_hash h)
{
    return contains_item(f, h.low, h.high);
}

/* ---- set operations and estimates ---------------------------------------- */

static uint64_t layer_bits_set(const sk_bloom *f, unsigned index)
{
    const struct layer *l = &sk__bloom_layers(f)[index];
    sk__bloom_advise(f, index, MADV_SEQUENTIAL);
    uint64_t set = 0;
    for (uint64_t i = 0; i < layer_nwords(l); i++)
        set += (uint64_t)__builtin_popcountll(
            atomic_load_explicit(&l->words[i], memory_order_relaxed));
    sk__bloom_advise(f, index, MADV_RANDOM);
    return set;
}

/* Swamidass and Baldi's estimate n = -(m/k) ln(1 - X/m) from X bits set. */
static uint64_t layer_estimate_items(const sk_bloom *f, unsigned index)
{
    const struct layer *l = &sk__bloom_layers(f)[index];
    double x = (double)layer_bits_set(f, index), m = (double)l->bits;
    uint64_t count = atomic_load_explicit(&l->count, memory_order_relaxed);
    if (x >= m)
        return layer_capacity(l) > count ? layer_capacity(l) : count;
    return (uint64_t)llround(-m / layer_hashes(l) * log1p(-x / m));
}

static int same_shape(const sk_bloom *a, const sk_bloom *b)
{
    if (a->layout != b->layout || a->nlayers != b->nlayers || a->expansion != b->expansion)
        return 0;
    for (unsigned i = 0; i < a->nlayers; i++)
        if (sk__bloom_layers(a)[i].bits != sk__bloom_layers(b)[i].bits ||
            layer_hashes(&sk__bloom_layers(a)[i]) != layer_hashes(&sk__bloom_layers(b)[i]))
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
    if (dst->file != NULL) {
        int rc = dst->file->before_write(dst, NULL, 0);
        if (rc != SK_OK)
            return rc;
    }
    for (unsigned l = 0; l < dst->nlayers; l++) {
        struct layer *d = &sk__bloom_layers(dst)[l];
        const struct layer *s = &sk__bloom_layers(src)[l];
        for (uint64_t i = 0; i < layer_nwords(d); i++) {
            uint64_t a = atomic_load_explicit(&d->words[i], memory_order_relaxed);
            uint64_t b = atomic_load_explicit(&s->words[i], memory_order_relaxed);
            atomic_store_explicit(&d->words[i], intersect ? a & b : a | b,
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&d->count, layer_estimate_items(dst, l), memory_order_relaxed);
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
    if (f->file != NULL) {
        int rc = f->file->before_write(f, NULL, 0);
        if (rc != SK_OK)
            return rc;
    }
    while (f->nlayers > 1)
        sk__bloom_release_layer(f, --f->nlayers);
    struct layer *l = &sk__bloom_layers(f)[0];
    memset((void *)l->words, 0, (size_t)layer_nwords(l) * 8);
    atomic_store_explicit(&l->count, 0, memory_order_relaxed);
    return SK_OK;
}

uint64_t sk_bloom_estimate_items(const sk_bloom *f)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        total += layer_estimate_items(f, i);
    return total;
}

/* ---- description -------------------------------------------------------- */

void sk_bloom_get_info(const sk_bloom *f, sk_bloom_info *info)
{
    memset(info, 0, sizeof *info);
    info->layout = f->layout;
    info->hashes = layer_hashes(&sk__bloom_layers(f)[0]);
    info->fp_rate = f->fp_rate;
    info->layers = f->nlayers;
    info->expansion = f->expansion;
    info->max_memory = f->max_memory;
    info->memory = sk__bloom_memory(f);
    info->interrupted_chunks = f->file != NULL ? f->file->interrupted : 0;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        info->bits += l->bits;
        info->capacity += layer_capacity(l);
        info->count += atomic_load_explicit(&l->count, memory_order_relaxed);
        info->array_bytes += layer_nwords(l) * 8;
    }
}

int sk_bloom_get_layer(const sk_bloom *f, unsigned index, sk_bloom_layer *out)
{
    if (f == NULL || out == NULL)
        return SK_EINVAL;
    if (index >= f->nlayers) {
        const struct layer *last = &sk__bloom_layers(f)[f->nlayers - 1];
        return sk__bloom_plan_layer(f->layout, f->fp_rate, f->expansion, layer_capacity(last),
                                    f->nlayers - 1, index, out);
    }
    const struct layer *l = &sk__bloom_layers(f)[index];
    *out = (sk_bloom_layer){.bits = l->bits, .hashes = layer_hashes(l), .capacity = layer_capacity(l),
                            .fp_rate = sk__bloom_rate_of(f, index), .bytes = layer_nwords(l) * 8,
                            .count = atomic_load_explicit(&l->count, memory_order_relaxed)};
    return SK_OK;
}

double sk__bloom_rate_of(const sk_bloom *f, unsigned index)
{
    return f->fp_rate == 0 ? 0 : sk__bloom_layer_rate(f->fp_rate, f->expansion, index);
}

double sk_bloom_expected_fp_rate(const sk_bloom *f, uint64_t items)
{
    /* Items fill the layers in order, each up to its capacity; the newest
     * takes the rest. An item is a false positive if any layer says so. */
    double remaining = (double)items, pass = 1;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        int last = i + 1 == f->nlayers;
        double n = last || remaining < (double)layer_capacity(l) ? remaining : (double)layer_capacity(l);
        pass *= 1 - sk__bloom_fp_rate(f->layout, l->bits, layer_hashes(l), n);
        remaining -= n;
    }
    return 1 - pass;
}
