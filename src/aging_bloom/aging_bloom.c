/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aging_bloom.c: the aging Bloom filter (sketch/aging_bloom.h): a ring of g
 * plain Bloom filters, the generations, of which the newest takes the adds
 * and the oldest is emptied when the newest has had its turn.
 *
 * Sizing. With a window of `capacity` items and a rate P, each generation
 * is sized for c = ceil(capacity / (g - 1)) items at p' = 1 - (1 - P)^(1/g):
 * an absent item passes all g generations with probability (1 - p')^g =
 * 1 - P, so the ring answers at rate P or better at every moment, however
 * full its generations are (none holds more than it is sized for).
 *
 * Epochs. Generation x mod g holds the items of epoch x, and E is the newest
 * epoch: the ring holds epochs E - g + 1 .. E. With a count window (window
 * 0) epoch x is adds x c + 1 .. (x + 1) c: when the newest generation has
 * taken its c adds, the next add empties the oldest, which becomes the
 * newest. So the g - 1 older generations hold the (g - 1) c >= capacity adds
 * before the newest's, and an item added as add number a (from 1) is held
 * until add a + g c - ((a - 1) mod c) empties its generation: it stays
 * through at least (g - 1) c later adds, at most g c - 1.
 *
 * With a time window T, span s = ceil(T / (g - 1)) and epoch(t) = t / s. An
 * add at t past the newest epoch moves E there, emptying the min(g, epoch(t)
 * - E) generations of the epochs it passes; an add of an older epoch still
 * held goes into that epoch's generation (a late item is kept as long as an
 * item of its own time would be); older ones are forgotten at once. A query
 * at `now` skips the generations whose epoch is at most epoch(max(now, E s))
 * - g, which the next add would empty, without changing the filter. So an
 * item of time t is held for every query time below (epoch(t) + g) s: more
 * than (g - 1) s >= T after t, at most g s. Time windows take bursts: their
 * generations are scalable (expansion 2), so an epoch of more than c adds
 * grows its generation by layers whose rates still sum to p'; the first
 * layer is sized for p'/2, 1/ln 2 = 1.44 bits per item more than a fixed
 * one (docs/aging-bloom.md has the table).
 *
 * An item is hashed once (sketch/bloom_extra.h's calls by hash), and a query
 * looks at the newest generation first and stops at the first that says
 * "maybe". An add reports whether the item was new to the whole ring, so
 * when its generation took it as new the held others are looked at too.
 */
#include <math.h>
#include <string.h>

#include "aging_bloom_internal.h"
#include "common/fastmod.h"
#include "bloom/bloom_internal.h"

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

int sk__ab_size(uint64_t capacity, double fp_rate, unsigned generations, uint64_t window,
                sk_bloom_layout layout, struct sk__ab_sizing *out)
{
    if (generations == 0)
        generations = SK_AGING_BLOOM_DEFAULT_GENERATIONS;
    if (fp_rate == 0)
        fp_rate = SK_BLOOM_DEFAULT_FP_RATE;
    if (capacity == 0 || generations < SK_AGING_BLOOM_MIN_GENERATIONS ||
        generations > SK_AGING_BLOOM_MAX_GENERATIONS ||
        !(fp_rate > 0 && fp_rate <= SK_BLOOM_MAX_FP_RATE) ||
        (layout != SK_BLOOM_AUTO && layout != SK_BLOOM_CLASSIC && layout != SK_BLOOM_BLOCKED &&
         layout != SK_BLOOM_SPLIT))
        return SK_EINVAL;
    if (window > SK__AB_MAX_WINDOW)
        return SK_ETOOLARGE;
    /* log1p and expm1 keep the digits of small rates: (1 - P)^(1/g) rounds
     * to within an ulp of 1 there. */
    double gen_rate = -expm1(log1p(-fp_rate) / generations);
    if (!(gen_rate >= SK_BLOOM_MIN_FP_RATE))
        return SK_EINVAL;
    *out = (struct sk__ab_sizing){.capacity = capacity, .fp_rate = fp_rate,
                                  .generations = generations, .window = window,
                                  .share = ceil_div(capacity, generations - 1),
                                  .gen_rate = gen_rate, .layout = layout};
    out->span = window != 0 ? ceil_div(window, generations - 1) : out->share;
    /* A span rounded up takes more than capacity / (g - 1) of a steady
     * stream of capacity items a window: its share is the span's part. */
    if (window != 0) {
        sk__u128 part = (sk__u128)capacity * out->span;
        out->share = (uint64_t)(part / window + (part % window != 0));
    }
    /* The layout a generation resolves to, from its first layer's rate (a
     * scalable chain's is half its whole). */
    uint64_t bits;
    unsigned hashes;
    return sk_bloom_size_for(out->share, window != 0 ? gen_rate / 2 : gen_rate, &out->layout,
                             &bits, &hashes);
}

sk_bloom_options sk__ab_generation_options(const struct sk__ab_sizing *s,
                                           const sk_allocator *allocator)
{
    return (sk_bloom_options){.capacity = s->share, .fp_rate = s->gen_rate,
                              .layout = s->layout,
                              .expansion = s->window != 0 ? SK__AB_EXPANSION : 0,
                              .allocator = allocator};
}

static size_t record_size(unsigned generations)
{
    return sizeof(sk_aging_bloom) + generations * (sizeof(sk_bloom *) + sizeof(uint64_t));
}

sk_aging_bloom *sk__ab_alloc_record(const struct sk__ab_sizing *s, const sk_allocator *a)
{
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    size_t bytes = record_size(s->generations);
    sk_aging_bloom *f = sk__zalloc(&alloc, bytes);
    if (f == NULL)
        return NULL;
    f->alloc = alloc;
    f->size = *s;
    f->record_bytes = bytes;
    f->mem = (uint64_t *)(void *)(f->gen + s->generations);
    return f;
}

void sk__ab_free_record(sk_aging_bloom *f)
{
    for (unsigned i = 0; i < f->size.generations; i++)
        sk_bloom_free(f->gen[i]);
    sk__free(&f->alloc, f, f->record_bytes);
}

/* ---- memory ------------------------------------------------------------- */

/* With a budget, mem[i] follows generation i's memory, so that an add can
 * tell it what the others leave. */
static void refresh_mem(sk_aging_bloom *f, unsigned i)
{
    if (f->max_memory == 0)
        return;
    sk_bloom_info info;
    sk_bloom_get_info(f->gen[i], &info);
    f->mem[i] = info.memory;
}

/* Generation i's budget before it may grow: what the record and the other
 * generations leave of the whole (1, which nothing fits, when nothing is
 * left: 0 would mean no budget). */
static void limit_generation(sk_aging_bloom *f, unsigned i)
{
    if (f->max_memory == 0)
        return;
    uint64_t others = f->record_bytes;
    for (unsigned j = 0; j < f->size.generations; j++)
        others += j != i ? f->mem[j] : 0;
    sk_bloom_set_max_memory(f->gen[i], f->max_memory > others ? f->max_memory - others : 1);
}

/* ---- the ring ----------------------------------------------------------- */

int sk_aging_bloom_create(sk_aging_bloom **out, const sk_aging_bloom_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (opts == NULL)
        return SK_EINVAL;
    struct sk__ab_sizing s;
    int rc = sk__ab_size(opts->capacity, opts->fp_rate, opts->generations, opts->window,
                         opts->layout, &s);
    if (rc != SK_OK)
        return rc;
    sk_bloom_options go = sk__ab_generation_options(&s, opts->allocator);
    uint64_t one = sk_bloom_create_memory(&go);
    if (one == 0 || one > (UINT64_MAX - record_size(s.generations)) / s.generations)
        return SK_ETOOLARGE;
    uint64_t need = record_size(s.generations) + one * s.generations;
    if (opts->max_memory != 0 && need > opts->max_memory)
        return SK_EBUDGET;
    sk_aging_bloom *f = sk__ab_alloc_record(&s, opts->allocator);
    if (f == NULL)
        return SK_ENOMEM;
    /* One generation sized, the others its copies: sizing searches the
     * exact rate formula, which can take milliseconds. */
    for (unsigned i = 0; i < s.generations; i++) {
        rc = i == 0 ? sk_bloom_create(&f->gen[i], &go) : sk_bloom_copy(&f->gen[i], f->gen[0]);
        if (rc != SK_OK) {
            sk__ab_free_record(f);
            return rc;
        }
    }
    f->max_memory = opts->max_memory;
    for (unsigned i = 0; i < s.generations; i++)
        refresh_mem(f, i);
    *out = f;
    return SK_OK;
}

int sk_aging_bloom_new(sk_aging_bloom **out, uint64_t capacity, double fp_rate)
{
    if (out != NULL)
        *out = NULL;
    if (!(fp_rate > 0)) /* 0 would mean the default rate in the options */
        return SK_EINVAL;
    sk_aging_bloom_options o = {.capacity = capacity, .fp_rate = fp_rate};
    return sk_aging_bloom_create(out, &o);
}

void sk_aging_bloom_free(sk_aging_bloom *f)
{
    if (f != NULL)
        sk__ab_free_record(f);
}

int sk_aging_bloom_copy(sk_aging_bloom **out, const sk_aging_bloom *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    *out = NULL;
    sk_aging_bloom *f = sk__ab_alloc_record(&src->size, &src->alloc);
    if (f == NULL)
        return SK_ENOMEM;
    for (unsigned i = 0; i < src->size.generations; i++) {
        int rc = sk_bloom_copy(&f->gen[i], src->gen[i]);
        if (rc != SK_OK) {
            sk__ab_free_record(f);
            return rc;
        }
        f->mem[i] = src->mem[i];
    }
    f->max_memory = src->max_memory;
    f->newest = src->newest;
    f->adds = src->adds;
    f->in_newest = src->in_newest;
    f->dirty = src->dirty;
    f->newest_index = src->newest_index;
    *out = f;
    return SK_OK;
}

static void empty_generation(sk_aging_bloom *f, unsigned i)
{
    if (!(f->dirty >> i & 1))
        return;
    sk_bloom_clear(f->gen[i]); /* fails only for filters of files, which a ring never holds */
    f->dirty &= ~(UINT64_C(1) << i);
    refresh_mem(f, i);
}

int sk_aging_bloom_clear(sk_aging_bloom *f)
{
    if (f == NULL)
        return SK_EINVAL;
    for (unsigned i = 0; i < f->size.generations; i++)
        empty_generation(f, i);
    f->newest = f->adds = f->in_newest = 0;
    f->newest_index = 0;
    return SK_OK;
}

/* Makes epoch e > E the newest, emptying the generations of the epochs
 * passed (all of them after g or more). */
static void advance(sk_aging_bloom *f, uint64_t e)
{
    unsigned g = f->size.generations;
    uint64_t d = e - f->newest;
    unsigned passed = d < g ? (unsigned)d : g;
    for (unsigned j = 1; j <= passed; j++)
        empty_generation(f, (f->newest_index + j) % g);
    f->newest = e;
    f->newest_index = (unsigned)((f->newest_index + d % g) % g);
    f->in_newest = 0;
}

/* The generations a query at epoch `at` (>= E) looks at: of epochs E down
 * to E - held + 1. */
static unsigned held(const sk_aging_bloom *f, uint64_t at)
{
    unsigned g = f->size.generations;
    if (at - f->newest >= g)
        return 0;
    uint64_t live = g - (at - f->newest);
    return (unsigned)(f->newest < live - 1 ? f->newest + 1 : live);
}

/* Whether any of the first n generations from the newest, other than
 * `skip`, may hold h. */
static int held_contains(const sk_aging_bloom *f, unsigned n, unsigned skip, sk_bloom_hash h)
{
    unsigned g = f->size.generations;
    for (unsigned k = 0, i = f->newest_index; k < n; k++, i = i == 0 ? g - 1 : i - 1)
        if (i != skip && sk_bloom_contains_hash(f->gen[i], h))
            return 1;
    return 0;
}

int sk_aging_bloom_add(sk_aging_bloom *f, const void *data, size_t len, uint64_t now)
{
    if (f == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    unsigned g = f->size.generations, target;
    if (f->size.window == 0) {
        if (f->in_newest == f->size.share)
            advance(f, f->newest + 1);
        target = f->newest_index;
    } else {
        uint64_t e = now / f->size.span;
        if (e > f->newest)
            advance(f, e);
        else if (f->newest - e >= g)
            return 0;
        target = (unsigned)((f->newest_index + g - (f->newest - e)) % g);
    }
    sk_bloom_hash h = sk_bloom_hash_bytes(data, len);
    limit_generation(f, target);
    /* A generation just emptied takes its first add without growing, so an
     * add that fails has changed nothing. */
    int rc = sk_bloom_add_hash(f->gen[target], h);
    if (rc < 0)
        return rc;
    f->dirty |= UINT64_C(1) << target;
    if (f->size.window == 0) {
        f->adds++;
        f->in_newest++;
    }
    if (rc == 0)
        return 0;
    refresh_mem(f, target);
    return !held_contains(f, held(f, f->newest), target, h);
}

int sk_aging_bloom_contains(const sk_aging_bloom *f, const void *data, size_t len,
                            uint64_t now)
{
    if (f == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    uint64_t at = f->newest;
    if (f->size.window != 0 && now / f->size.span > at)
        at = now / f->size.span;
    unsigned n = held(f, at);
    return n != 0 && held_contains(f, n, f->size.generations, sk_bloom_hash_bytes(data, len));
}

/* ---- merge and description ---------------------------------------------- */

static int same_sizing(const struct sk__ab_sizing *a, const struct sk__ab_sizing *b)
{
    return a->capacity == b->capacity && a->fp_rate == b->fp_rate &&
           a->generations == b->generations && a->window == b->window &&
           a->layout == b->layout;
}

/* Appends to `to` empty layers shaped as layers n.. of `like` (the same
 * sizing plans the same layers), so that the two have as many. */
static int match_layers(sk_bloom *to, const sk_bloom *like, unsigned n)
{
    sk_bloom_info info;
    sk_bloom_get_info(like, &info);
    for (unsigned i = n; i < info.layers; i++) {
        sk_bloom_layer shape;
        int rc = sk_bloom_get_layer(like, i, &shape);
        shape.count = 0;
        if (rc == SK_OK)
            rc = sk__bloom_push_layer(to, &shape);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

/* ORs src into generation i of dst. Scalable generations that grew to
 * different lengths are unions layer by layer once the shorter has the
 * longer's layers, empty. */
static int merge_generation(sk_aging_bloom *dst, unsigned i, const sk_bloom *src)
{
    sk_bloom *to = dst->gen[i];
    sk_bloom_info a, b;
    sk_bloom_get_info(to, &a);
    sk_bloom_get_info(src, &b);
    int rc = SK_OK;
    if (a.layers < b.layers) {
        limit_generation(dst, i);
        rc = match_layers(to, src, a.layers);
    }
    if (rc == SK_OK && a.layers > b.layers) {
        sk_bloom *longer;
        rc = sk_bloom_copy(&longer, src);
        if (rc == SK_OK) {
            sk_bloom_set_max_memory(longer, 0);
            rc = match_layers(longer, to, b.layers);
            if (rc == SK_OK)
                rc = sk_bloom_merge(to, longer);
            sk_bloom_free(longer);
        }
    } else if (rc == SK_OK) {
        rc = sk_bloom_merge(to, src);
    }
    dst->dirty |= UINT64_C(1) << i;
    refresh_mem(dst, i);
    return rc;
}

int sk_aging_bloom_merge(sk_aging_bloom *dst, const sk_aging_bloom *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    if (dst->size.window == 0 || !same_sizing(&dst->size, &src->size))
        return SK_EINCOMPAT;
    if (dst == src)
        return SK_OK;
    if (src->newest > dst->newest)
        advance(dst, src->newest);
    unsigned g = src->size.generations, n = held(src, src->newest);
    for (unsigned k = 0, i = src->newest_index; k < n; k++, i = i == 0 ? g - 1 : i - 1) {
        if (dst->newest - (src->newest - k) >= g)
            break; /* older than dst holds */
        if (!(src->dirty >> i & 1))
            continue;
        /* Epoch x is in generation x mod g of both. */
        int rc = merge_generation(dst, i, src->gen[i]);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

void sk_aging_bloom_get_info(const sk_aging_bloom *f, sk_aging_bloom_info *info)
{
    memset(info, 0, sizeof *info);
    info->capacity = f->size.capacity;
    info->fp_rate = f->size.fp_rate;
    info->generations = f->size.generations;
    info->window = f->size.window;
    info->span = f->size.span;
    info->newest = f->size.window == 0 ? f->adds : f->newest * f->size.span;
    info->generation_fp_rate = f->size.gen_rate;
    info->memory = f->record_bytes;
    for (unsigned i = 0; i < f->size.generations; i++) {
        sk_bloom_info g;
        sk_bloom_get_info(f->gen[i], &g);
        info->count += g.count;
        info->bits += g.bits;
        info->memory += g.memory;
        if (i == 0)
            info->hashes = g.hashes;
    }
}

void sk_aging_bloom_set_max_memory(sk_aging_bloom *f, uint64_t bytes)
{
    if (f == NULL)
        return;
    f->max_memory = bytes;
    for (unsigned i = 0; i < f->size.generations; i++) {
        refresh_mem(f, i);
        if (bytes == 0)
            sk_bloom_set_max_memory(f->gen[i], 0);
    }
}
