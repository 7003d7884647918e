/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk.c: top-k by HeavyKeeper (Gong et al., "HeavyKeeper: an accurate
 * algorithm for finding top-k elephant flows", USENIX ATC 2018), as
 * RedisBloom's TOPK.* runs it.
 *
 * The algorithm
 * -------------
 * d rows of w buckets, each a fingerprint and a count. An item's bucket in
 * row r is its hash with seed r, mod w. An add of c sightings, row by row:
 * an empty bucket takes the item's fingerprint with count c; a bucket with
 * its fingerprint gains c; a bucket held by another item loses one with
 * probability decay^count for each of the c sightings, and the item takes
 * it, with the sightings left, when it reaches 0. So a heavy item keeps its
 * buckets (decay^count vanishes as its count grows) while light ones wear
 * each other down, and an item's count in a bucket it holds is never above
 * the sightings it has had since it took it. The largest count among the
 * item's buckets is its estimate, and a min-heap of k entries keeps the
 * items whose estimates are the largest seen: an item whose estimate
 * reaches the heap's minimum takes the minimum's entry, or updates its own.
 *
 * The mechanics
 * -------------
 * Every choice that decides an answer is RedisBloom's: MurmurHash2 with
 * the row as seed for the bucket, seed 1919 for the fingerprint; decay^n
 * from a table of n < 256 and by powers of its last entry beyond; the
 * heap's order and its sift down; TOPK.LIST's order, by count, ties in
 * heap order. So a stream in which no two items meet in a bucket gives
 * RedisBloom's answers. Where they meet, an entry whose count fell is
 * sifted up, which RedisBloom omits (its heap's root may then not be the
 * least, and an add replaces a heavier item than it should). Where they meet, RedisBloom
 * draws from the C library's rand(), which no copy of the sketch can
 * repeat: here the draws come from a splitmix64 generator that the sketch
 * carries, saves and copies, so that a replica or a reloaded sketch given
 * the same adds decides the same. Counts stop at UINT32_MAX rather than
 * wrap.
 */
#include <math.h>
#include <string.h>

#include "common/murmur2.h"
#include "topk_internal.h"

#define DEFAULT_WIDTH 8
#define DEFAULT_DEPTH 7
#define DEFAULT_DECAY 0.9
#define RNG_SEED UINT64_C(0x746f706b2d736b65) /* every new sketch starts here */

/* ---- the mathematics ------------------------------------------------------ */

/* The probability that a held bucket of this count loses one to a sighting
 * of another item: decay^count, as RedisBloom computes it. */
static double decay_chance(const sk_topk *t, uint32_t count)
{
    if (count < SK__TOPK_DECAY_TABLE)
        return t->decay_table[count];
    const uint32_t last = SK__TOPK_DECAY_TABLE - 1;
    return pow(t->decay_table[last], (double)(count / last)) * t->decay_table[count % last];
}

/* A uniform draw in [0, 1). */
static double draw(sk_topk *t)
{
    uint64_t z = (t->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* ---- creation ------------------------------------------------------------- */

static int dimensions(const sk_topk_options *o, uint32_t *width, uint32_t *depth,
                      double *decay)
{
    *width = o->width != 0 ? o->width : DEFAULT_WIDTH;
    *depth = o->depth != 0 ? o->depth : DEFAULT_DEPTH;
    *decay = o->decay != 0 ? o->decay : DEFAULT_DECAY;
    if (o->k == 0 || !(*decay > 0 && *decay <= 1)) /* NaN too */
        return SK_EINVAL;
    if (o->k > SK_TOPK_MAX_K || (uint64_t)*width * *depth > SK_TOPK_MAX_BUCKETS)
        return SK_ETOOLARGE;
    return SK_OK;
}

static uint64_t memory_of(uint32_t k, uint32_t width, uint32_t depth, const sk_allocator *a)
{
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    uint64_t buckets = (uint64_t)width * depth * sizeof(struct sk__topk_bucket);
    if (buckets > SIZE_MAX)
        return UINT64_MAX;
    return sizeof(sk_topk) + sk__array_cost(&alloc, (size_t)buckets) +
           (uint64_t)k * sizeof(struct sk__topk_entry);
}

int sk__topk_alloc(sk_topk **out, uint32_t k, uint32_t width, uint32_t depth, double decay,
                   uint64_t max_memory, const sk_allocator *a)
{
    *out = NULL;
    sk_topk_options o = {.k = k, .width = width, .depth = depth, .decay = decay};
    int rc = dimensions(&o, &width, &depth, &decay);
    if (rc != SK_OK)
        return rc;
    if (max_memory != 0 && memory_of(k, width, depth, a) > max_memory)
        return SK_EBUDGET;
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    sk_topk *t = sk__zalloc(&alloc, sizeof *t);
    if (t == NULL)
        return SK_ENOMEM;
    *t = (sk_topk){.alloc = alloc, .k = k, .width = width, .depth = depth,
                   .width_inverse = sk__fastmod_inverse(width), .decay = decay, .rng = RNG_SEED};
    for (int i = 0; i < SK__TOPK_DECAY_TABLE; i++)
        t->decay_table[i] = pow(decay, i);
    size_t buckets = (size_t)width * depth * sizeof(struct sk__topk_bucket);
    t->buckets = sk__array_alloc(&t->alloc, buckets, &t->array);
    t->heap = sk__zalloc(&t->alloc, (size_t)k * sizeof *t->heap);
    if (t->buckets == NULL || t->heap == NULL) {
        sk_topk_free(t);
        return SK_ENOMEM;
    }
    for (uint32_t i = 0; i < k; i++)
        t->heap[i].len = SK_TOPK_NO_ITEM;
    *out = t;
    return SK_OK;
}

int sk_topk_create(sk_topk **out, const sk_topk_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (opts == NULL)
        return SK_EINVAL;
    return sk__topk_alloc(out, opts->k, opts->width, opts->depth, opts->decay, opts->max_memory,
                          opts->allocator);
}

int sk_topk_new(sk_topk **out, uint32_t k)
{
    return sk_topk_create(out, &(sk_topk_options){.k = k});
}

uint64_t sk_topk_create_memory(const sk_topk_options *opts)
{
    uint32_t width, depth;
    double decay;
    if (opts == NULL || dimensions(opts, &width, &depth, &decay) != SK_OK)
        return 0;
    return memory_of(opts->k, width, depth, opts->allocator);
}

static void free_item(sk_topk *t, struct sk__topk_entry *e)
{
    if (e->item != NULL) {
        sk__free(&t->alloc, e->item, e->len ? e->len : 1);
        t->item_bytes -= e->len ? e->len : 1;
    }
    *e = (struct sk__topk_entry){.len = SK_TOPK_NO_ITEM};
}

static void forget_expelled(sk_topk *t)
{
    if (t->expelled != NULL)
        sk__free(&t->alloc, t->expelled, t->expelled_len ? t->expelled_len : 1);
    t->expelled = NULL;
    t->expelled_len = 0;
}

void sk_topk_free(sk_topk *t)
{
    if (t == NULL)
        return;
    sk_allocator a = t->alloc;
    if (t->heap != NULL)
        for (uint32_t i = 0; i < t->k; i++)
            free_item(t, &t->heap[i]);
    forget_expelled(t);
    sk__free(&a, t->heap, (size_t)t->k * sizeof *t->heap);
    if (t->buckets != NULL)
        sk__array_free(&a, &t->array);
    sk__free(&a, t, sizeof *t);
}

char *sk__topk_item_copy(sk_topk *t, const void *data, size_t len)
{
    char *copy = sk__alloc(&t->alloc, len ? len : 1);
    if (copy == NULL)
        return NULL;
    if (len > 0)
        memcpy(copy, data, len);
    t->item_bytes += len ? len : 1;
    return copy;
}

int sk_topk_copy(sk_topk **out, const sk_topk *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__topk_alloc(out, src->k, src->width, src->depth, src->decay, 0, &src->alloc);
    if (rc != SK_OK)
        return rc;
    sk_topk *t = *out;
    t->rng = src->rng;
    memcpy(t->buckets, src->buckets,
           (size_t)src->width * src->depth * sizeof(struct sk__topk_bucket));
    for (uint32_t i = 0; i < src->k; i++) {
        const struct sk__topk_entry *e = &src->heap[i];
        if (e->item == NULL)
            continue;
        char *item = sk__topk_item_copy(t, e->item, e->len);
        if (item == NULL) {
            sk_topk_free(t);
            *out = NULL;
            return SK_ENOMEM;
        }
        t->heap[i] = (struct sk__topk_entry){e->fp, e->count, e->len, item};
    }
    return SK_OK;
}

int sk_topk_clear(sk_topk *t)
{
    if (t == NULL)
        return SK_EINVAL;
    memset(t->buckets, 0, (size_t)t->width * t->depth * sizeof(struct sk__topk_bucket));
    for (uint32_t i = 0; i < t->k; i++)
        free_item(t, &t->heap[i]);
    forget_expelled(t);
    t->rng = RNG_SEED;
    return SK_OK;
}

/* ---- the heap ------------------------------------------------------------- */

/* Moves the entry at `at` down while a child has a smaller count, as
 * RedisBloom's sift does: the first step is taken on a tie, the later ones
 * only past a strictly smaller child. */
static void sift_down(struct sk__topk_entry *heap, size_t len, size_t at)
{
    if (len < 2 || (len - 2) / 2 < at)
        return;
    size_t child = 2 * at + 1;
    if (child + 1 < len && heap[child].count > heap[child + 1].count)
        child++;
    if (heap[child].count > heap[at].count)
        return;
    struct sk__topk_entry top = heap[at];
    do {
        heap[at] = heap[child];
        at = child;
        if ((len - 2) / 2 < child)
            break;
        child = 2 * child + 1;
        if (child + 1 < len && heap[child].count > heap[child + 1].count)
            child++;
    } while (heap[child].count < top.count);
    heap[at] = top;
}

/* Moves the entry at `at` up while its parent has a larger count. */
static void sift_up(struct sk__topk_entry *heap, size_t at)
{
    while (at > 0 && heap[(at - 1) / 2].count > heap[at].count) {
        struct sk__topk_entry parent = heap[(at - 1) / 2];
        heap[(at - 1) / 2] = heap[at];
        heap[at] = parent;
        at = (at - 1) / 2;
    }
}

/* The heap entry holding the item, searched from the last, or NULL. */
static struct sk__topk_entry *find(const sk_topk *t, uint32_t fp, const void *data, size_t len)
{
    for (uint32_t i = t->k; i-- > 0;) {
        struct sk__topk_entry *e = &t->heap[i];
        if (e->item != NULL && e->fp == fp && e->len == len &&
            (len == 0 || memcmp(e->item, data, len) == 0))
            return e;
    }
    return NULL;
}

/* ---- adds and queries ----------------------------------------------------- */

/* The item's bucket in row r. */
static struct sk__topk_bucket *bucket(const sk_topk *t, uint32_t r, const void *data, size_t len)
{
    uint32_t at = sk__fastmod(sk_murmur2(data, len, r), t->width_inverse, t->width);
    return &t->buckets[(size_t)r * t->width + at];
}

/* The item's estimate after `increment` sightings, row by row. */
static uint32_t count_in_rows(sk_topk *t, uint32_t fp, const void *data, size_t len,
                              uint32_t increment)
{
    uint32_t most = 0;
    for (uint32_t r = 0; r < t->depth; r++) {
        struct sk__topk_bucket *b = bucket(t, r, data, len);
        if (b->count == 0) {
            b->fp = fp;
            b->count = increment;
        } else if (b->fp == fp) {
            b->count = increment > UINT32_MAX - b->count ? UINT32_MAX : b->count + increment;
        } else {
            for (uint32_t left = increment; left > 0; left--) {
                if (draw(t) < decay_chance(t, b->count) && --b->count == 0) {
                    b->fp = fp;
                    b->count = left;
                    break;
                }
            }
            if (b->fp != fp)
                continue;
        }
        if (b->count > most)
            most = b->count;
    }
    return most;
}

int sk_topk_add(sk_topk *t, const void *data, size_t len, uint32_t increment,
                const void **expelled, size_t *expelled_len)
{
    if (t == NULL || (data == NULL && len > 0) || increment > SK_TOPK_MAX_INCREMENT ||
        len >= SK_TOPK_NO_ITEM)
        return SK_EINVAL;
    forget_expelled(t);
    uint32_t fp = sk_murmur2(data, len, SK__TOPK_FP_SEED);
    uint32_t least = t->heap[0].count;
    uint32_t estimate = count_in_rows(t, fp, data, len, increment);
    if (estimate < least)
        return 0;
    struct sk__topk_entry *own = find(t, fp, data, len);
    if (own != NULL) {
        /* Not the larger of the two: its buckets may have decayed. An entry
         * whose count fell moves up, which RedisBloom's heap never does, so
         * that the entry an add replaces is the least; counts only fall
         * where items met in a bucket, so without that the answers are
         * RedisBloom's. */
        size_t at = (size_t)(own - t->heap);
        int fell = estimate < own->count;
        own->count = estimate;
        if (fell)
            sift_up(t->heap, at);
        else
            sift_down(t->heap, t->k, at);
        return 0;
    }
    char *item = sk__topk_item_copy(t, data, len);
    if (item == NULL)
        return SK_ENOMEM;
    struct sk__topk_entry *out = &t->heap[0];
    if (out->item != NULL) {
        t->expelled = out->item;
        t->expelled_len = out->len;
        t->item_bytes -= out->len ? out->len : 1;
    }
    *out = (struct sk__topk_entry){fp, estimate, (uint32_t)len, item};
    sift_down(t->heap, t->k, 0);
    if (t->expelled == NULL)
        return 0;
    if (expelled != NULL)
        *expelled = t->expelled;
    if (expelled_len != NULL)
        *expelled_len = t->expelled_len;
    return 1;
}

int sk_topk_query(const sk_topk *t, const void *data, size_t len)
{
    if (t == NULL || (data == NULL && len > 0))
        return 0;
    return find(t, sk_murmur2(data, len, SK__TOPK_FP_SEED), data, len) != NULL;
}

/* The largest count among the item's buckets that hold its fingerprint; an
 * item in the heap counts only buckets at or above the heap's minimum. */
uint32_t sk_topk_count(const sk_topk *t, const void *data, size_t len)
{
    if (t == NULL || (data == NULL && len > 0))
        return 0;
    uint32_t fp = sk_murmur2(data, len, SK__TOPK_FP_SEED);
    uint32_t least = t->heap[0].count, most = 0;
    int listed = find(t, fp, data, len) != NULL;
    for (uint32_t r = 0; r < t->depth; r++) {
        const struct sk__topk_bucket *b = bucket(t, r, data, len);
        if (b->fp == fp && (!listed || b->count >= least) && b->count > most)
            most = b->count;
    }
    return most;
}

/* ---- listing -------------------------------------------------------------- */

/* Whether heap entry a comes before b in the list: the larger count first,
 * then the earlier in the heap (RedisBloom's sort is stable). */
static int before(const struct sk__topk_entry *heap, uint32_t a, uint32_t b)
{
    return heap[a].count != heap[b].count ? heap[a].count > heap[b].count : a < b;
}

/* Moves idx[at] down a heap of idx[0..n) whose root comes last in list
 * order. */
static void sift_index(const struct sk__topk_entry *heap, uint32_t *idx, size_t at, size_t n)
{
    for (;;) {
        size_t child = 2 * at + 1;
        if (child >= n)
            return;
        if (child + 1 < n && before(heap, idx[child], idx[child + 1]))
            child++;
        if (!before(heap, idx[at], idx[child]))
            return;
        uint32_t tmp = idx[at];
        idx[at] = idx[child];
        idx[child] = tmp;
        at = child;
    }
}

/* Heapsort of idx[0..n) into list order, in place. */
static void sort_indexes(const struct sk__topk_entry *heap, uint32_t *idx, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_index(heap, idx, i, n);
    for (size_t end = n; end > 1; end--) {
        uint32_t last = idx[0];
        idx[0] = idx[end - 1];
        idx[end - 1] = last;
        sift_index(heap, idx, 0, end - 1);
    }
}

int sk_topk_list(const sk_topk *t, sk_topk_entry *out, size_t cap)
{
    if (t == NULL || (out == NULL && cap > 0))
        return SK_EINVAL;
    uint32_t *order = sk__alloc(&t->alloc, (size_t)t->k * sizeof *order);
    if (order == NULL)
        return SK_ENOMEM;
    size_t n = 0;
    for (uint32_t i = 0; i < t->k; i++)
        if (t->heap[i].item != NULL && t->heap[i].count > 0) /* RedisBloom lists no 0 */
            order[n++] = i;
    sort_indexes(t->heap, order, n);
    size_t shown = n < cap ? n : cap;
    for (size_t i = 0; i < shown; i++) {
        const struct sk__topk_entry *e = &t->heap[order[i]];
        out[i] = (sk_topk_entry){e->item, e->len, e->count};
    }
    sk__free(&t->alloc, order, (size_t)t->k * sizeof *order);
    return (int)shown;
}

void sk_topk_get_info(const sk_topk *t, sk_topk_info *info)
{
    if (t == NULL || info == NULL)
        return;
    *info = (sk_topk_info){
        .k = t->k,
        .width = t->width,
        .depth = t->depth,
        .decay = t->decay,
        .memory = (size_t)(memory_of(t->k, t->width, t->depth, &t->alloc) + t->item_bytes +
                           t->expelled_len),
    };
}
