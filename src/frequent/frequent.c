/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frequent.c: frequent items by Space-Saving (Metwally, Agrawal and El
 * Abbadi, "Efficient computation of frequent and top-k elements in data
 * streams", ICDT 2005), weighted, with the merge of Agarwal et al.
 * ("Mergeable summaries", PODS 2012) in its Space-Saving form (Cafaro et
 * al.'s combine), and bounds kept per item.
 *
 * The algorithm
 * -------------
 * Up to m counters, each an item with an upper bound u (its count, the
 * estimate) and an error e, so that its lower bound is l = u - e; and one
 * threshold T, a bound on the true count of every item not kept. An add
 * of weight w of item x:
 *   - x kept: u += w;
 *   - fewer than m kept: a new counter, u = T + w, e = T;
 *   - else the counter of least u (u_min) goes to x: T = max(T, u_min),
 *     u = u_min + w, e = u_min. The item that leaves had true <= u_min.
 * A merge of summaries A and B (thresholds Ta, Tb): each item of either
 * gets u = (ua or Ta) + (ub or Tb) and l = (la or 0) + (lb or 0), the
 * threshold of each summary standing in for the count of an item it does
 * not keep; the m largest u stay, and T = max(Ta + Tb, the (m+1)-th u).
 *
 * The guarantee
 * -------------
 * For every kept item, l <= true <= u; every item not kept has true <= T;
 * u - l <= T for every kept item; and T <= N/m, N being the total weight
 * of the stream (of both streams after a merge). So every estimate is at
 * most N/m above the truth, never below it, and every item whose true
 * count is above T (in particular above N/m) is kept.
 *
 * Why: the bounds hold by induction over each step above. T <= every u
 * (a new u is at least T, T only rises to the least u). Then: the sum of
 * all u is at most N. An add raises both by w. In a merge, let K be the m
 * items kept; the items of A not in K number at least |K \ A|, each with
 * ua >= Ta, so the sum over K of (ua or Ta) is at most the sum of A's u,
 * at most Na; likewise for B; so the kept sum is at most Na + Nb. Hence
 * the least of m counters is at most N/m, and so are T (the least u, or
 * one of the (m+1) largest of a sum at most N, or Ta + Tb <= Na/m + Nb/m)
 * and every e (T when it was set; ea + eb or ea + Tb in a merge, each at
 * most Ta + Tb).
 *
 * The mechanics
 * -------------
 * Counters are in one array that grows by doubling up to m, so that a
 * summary of few items (a small group of the command) costs little. An
 * open-addressing table (linear probing, at most half full, deletion by
 * backward shift, no tombstones) maps an item's MurmurHash64A to its
 * counter; each slot holds the hash's low 32 bits, which give its home
 * slot and reject most mismatches without touching the counter. A binary
 * min-heap of (u, counter) pairs finds u_min: an add to a kept item sifts
 * down from where it is, which for heavy items, near the leaves, is
 * nearly free. Items of up to INLINE_BYTES bytes live in their counter;
 * longer ones in a block of their own, reused while it fits.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/murmur64a.h"
#include "frequent_internal.h"

#define HASH_SEED UINT64_C(0x6672657175656e74) /* "frequent" */
#define FIRST_CAPACITY 8u

/* ---- the table and the heap ----------------------------------------------- */

static inline const uint8_t *item_bytes(const struct sk__frequent_counter *c)
{
    return c->data != NULL ? c->data : c->inline_bytes;
}

static inline uint64_t slot_of(uint64_t hash, uint32_t index)
{
    return (hash & UINT64_C(0xffffffff)) << 32 | (uint64_t)(index + 1);
}

/* The counter of the item, or -1. */
static int64_t find(const sk_frequent *f, uint64_t hash, const void *item, size_t len)
{
    size_t mask = f->table_size - 1, i = (size_t)hash & mask;
    uint32_t tag = (uint32_t)hash;
    for (;;) {
        uint64_t s = f->table[i];
        if (s == 0)
            return -1;
        if ((uint32_t)(s >> 32) == tag) {
            uint32_t index = (uint32_t)s - 1;
            const struct sk__frequent_counter *c = &f->counters[index];
            if (c->hash == hash && c->len == len && memcmp(item_bytes(c), item, len) == 0)
                return index;
        }
        i = (i + 1) & mask;
    }
}

static void table_insert(sk_frequent *f, uint64_t hash, uint32_t index)
{
    size_t mask = f->table_size - 1, i = (size_t)hash & mask;
    while (f->table[i] != 0)
        i = (i + 1) & mask;
    f->table[i] = slot_of(hash, index);
}

/* Removes the counter's slot, shifting back the slots after it that would
 * otherwise no longer be found from their home. */
static void table_remove(sk_frequent *f, uint64_t hash, uint32_t index)
{
    size_t mask = f->table_size - 1, i = (size_t)hash & mask;
    while ((uint32_t)f->table[i] != index + 1)
        i = (i + 1) & mask;
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        uint64_t s = f->table[j];
        if (s == 0)
            break;
        size_t home = (size_t)(s >> 32) & mask;
        /* s may move to i when its home is not in (i, j], cyclically */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            f->table[i] = s;
            i = j;
        }
    }
    f->table[i] = 0;
}

static inline void heap_set(sk_frequent *f, uint32_t pos, struct sk__frequent_heap e)
{
    f->heap[pos] = e;
    f->counters[e.counter].heap_pos = pos;
}

static void sift_down(sk_frequent *f, uint32_t pos)
{
    struct sk__frequent_heap e = f->heap[pos];
    uint32_t n = f->items;
    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && f->heap[child + 1].count < f->heap[child].count)
            child++;
        if (f->heap[child].count >= e.count)
            break;
        heap_set(f, pos, f->heap[child]);
        pos = child;
    }
    heap_set(f, pos, e);
}

static void sift_up(sk_frequent *f, uint32_t pos)
{
    struct sk__frequent_heap e = f->heap[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (f->heap[parent].count <= e.count)
            break;
        heap_set(f, pos, f->heap[parent]);
        pos = parent;
    }
    heap_set(f, pos, e);
}

/* ---- memory --------------------------------------------------------------- */

static size_t table_size_for(uint32_t capacity)
{
    size_t size = 16;
    while (size < (size_t)capacity * 2)
        size *= 2;
    return size;
}

/* Room for `capacity` counters: new arrays, the table rebuilt from the
 * counters' hashes. On failure nothing changes. */
static int reserve(sk_frequent *f, uint32_t capacity)
{
    size_t table_size = table_size_for(capacity);
    struct sk__frequent_counter *counters =
        sk__alloc(&f->alloc, (size_t)capacity * sizeof *counters);
    struct sk__frequent_heap *heap = sk__alloc(&f->alloc, (size_t)capacity * sizeof *heap);
    uint64_t *table = sk__zalloc(&f->alloc, table_size * sizeof *table);
    if (counters == NULL || heap == NULL || table == NULL) {
        sk__free(&f->alloc, counters, (size_t)capacity * sizeof *counters);
        sk__free(&f->alloc, heap, (size_t)capacity * sizeof *heap);
        sk__free(&f->alloc, table, table_size * sizeof *table);
        return SK_ENOMEM;
    }
    if (f->items > 0) {
        memcpy(counters, f->counters, (size_t)f->items * sizeof *counters);
        memcpy(heap, f->heap, (size_t)f->items * sizeof *heap);
    }
    sk__free(&f->alloc, f->counters, (size_t)f->capacity * sizeof *f->counters);
    sk__free(&f->alloc, f->heap, (size_t)f->capacity * sizeof *f->heap);
    sk__free(&f->alloc, f->table, f->table_size * sizeof *f->table);
    f->counters = counters;
    f->heap = heap;
    f->table = table;
    f->capacity = capacity;
    f->table_size = table_size;
    for (uint32_t i = 0; i < f->items; i++)
        table_insert(f, counters[i].hash, i);
    return SK_OK;
}

/* The block for an item of len bytes that the counter will hold, or NULL
 * when it goes inline or into the block it has; *ok is 0 when it could
 * not be allocated. */
static uint8_t *block_for(sk_frequent *f, const struct sk__frequent_counter *c, size_t len,
                          size_t *cap, int *ok)
{
    *ok = 1;
    *cap = 0;
    if (len <= SK__FREQUENT_INLINE)
        return NULL;
    /* Kept while it fits and is not four times too large. */
    if (c != NULL && c->data != NULL && c->cap >= len && c->cap / 4 <= len + 64)
        return NULL;
    *cap = (len + 31) & ~(size_t)31;
    uint8_t *block = sk__alloc(&f->alloc, *cap);
    *ok = block != NULL;
    return block;
}

static void release_item(sk_frequent *f, struct sk__frequent_counter *c)
{
    if (c->data != NULL)
        sk__free(&f->alloc, c->data, c->cap);
    c->data = NULL;
    c->cap = 0;
}

/* Stores the item in c with a block from block_for (or NULL). */
static void store_item(sk_frequent *f, struct sk__frequent_counter *c, const void *item,
                       size_t len, uint64_t hash, uint8_t *block, size_t cap)
{
    if (block != NULL) {
        release_item(f, c);
        c->data = block;
        c->cap = (uint32_t)cap;
    } else if (len <= SK__FREQUENT_INLINE) {
        release_item(f, c);
    }
    if (len > 0)
        memcpy(c->data != NULL ? c->data : c->inline_bytes, item, len);
    c->len = (uint32_t)len;
    c->hash = hash;
}

/* Appends a counter for the item (there is room): u = count, e = error. */
static void append(sk_frequent *f, const void *item, size_t len, uint64_t hash,
                   uint8_t *block, size_t cap, uint64_t count, uint64_t error)
{
    uint32_t index = f->items++;
    struct sk__frequent_counter *c = &f->counters[index];
    c->data = NULL;
    c->cap = 0;
    store_item(f, c, item, len, hash, block, cap);
    c->error = error;
    table_insert(f, hash, index);
    f->heap[index] = (struct sk__frequent_heap){count, index};
    c->heap_pos = index;
    sift_up(f, index);
}

/* ---- the API -------------------------------------------------------------- */

int sk_frequent_create(sk_frequent **out, const sk_frequent_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (opts == NULL || opts->counters > SK_FREQUENT_MAX_COUNTERS)
        return SK_EINVAL;
    sk_allocator alloc;
    sk__allocator_init(&alloc, opts->allocator);
    sk_frequent *f = sk__zalloc(&alloc, sizeof *f);
    if (f == NULL)
        return SK_ENOMEM;
    f->alloc = alloc;
    f->m = opts->counters != 0 ? opts->counters : SK_FREQUENT_DEFAULT_COUNTERS;
    if (reserve(f, f->m < FIRST_CAPACITY ? f->m : FIRST_CAPACITY) != SK_OK) {
        sk_frequent_free(f);
        return SK_ENOMEM;
    }
    *out = f;
    return SK_OK;
}

int sk_frequent_new(sk_frequent **out, uint32_t counters)
{
    return sk_frequent_create(out, &(sk_frequent_options){.counters = counters});
}

void sk_frequent_free(sk_frequent *f)
{
    if (f == NULL)
        return;
    for (uint32_t i = 0; i < f->items; i++)
        release_item(f, &f->counters[i]);
    sk__free(&f->alloc, f->counters, (size_t)f->capacity * sizeof *f->counters);
    sk__free(&f->alloc, f->heap, (size_t)f->capacity * sizeof *f->heap);
    sk__free(&f->alloc, f->table, f->table_size * sizeof *f->table);
    sk_allocator alloc = f->alloc;
    sk__free(&alloc, f, sizeof *f);
}

int sk_frequent_clear(sk_frequent *f)
{
    if (f == NULL)
        return SK_EINVAL;
    for (uint32_t i = 0; i < f->items; i++)
        release_item(f, &f->counters[i]);
    memset(f->table, 0, f->table_size * sizeof *f->table);
    f->items = 0;
    f->total = 0;
    f->threshold = 0;
    return SK_OK;
}

int sk_frequent_copy(sk_frequent **out, const sk_frequent *src)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (src == NULL)
        return SK_EINVAL;
    sk_frequent *f = sk__zalloc(&src->alloc, sizeof *f);
    if (f == NULL)
        return SK_ENOMEM;
    f->alloc = src->alloc;
    f->m = src->m;
    if (reserve(f, src->capacity) != SK_OK) {
        sk_frequent_free(f);
        return SK_ENOMEM;
    }
    for (uint32_t i = 0; i < src->items; i++) {
        const struct sk__frequent_counter *c = &src->counters[i];
        size_t cap;
        int ok;
        uint8_t *block = block_for(f, NULL, c->len, &cap, &ok);
        if (!ok) {
            sk_frequent_free(f);
            return SK_ENOMEM;
        }
        struct sk__frequent_counter *d = &f->counters[i];
        *d = *c;
        d->data = NULL;
        d->cap = 0;
        f->items = i + 1; /* so that free releases the blocks stored so far */
        store_item(f, d, item_bytes(c), c->len, c->hash, block, cap);
    }
    memcpy(f->heap, src->heap, (size_t)src->items * sizeof *f->heap);
    memcpy(f->table, src->table, src->table_size * sizeof *f->table);
    f->total = src->total;
    f->threshold = src->threshold;
    *out = f;
    return SK_OK;
}

int sk_frequent_add(sk_frequent *f, const void *item, size_t len, uint64_t weight)
{
    if (f == NULL || (item == NULL && len != 0) || len > SK_FREQUENT_MAX_ITEM)
        return SK_EINVAL;
    if (weight == 0)
        return SK_OK;
    if (f->total > UINT64_MAX - weight)
        return SK_EINVAL;
    uint64_t hash = sk_murmur64a(item, len, HASH_SEED);
    int64_t found = find(f, hash, item, len);
    if (found >= 0) {
        uint32_t pos = f->counters[found].heap_pos;
        f->heap[pos].count += weight;
        sift_down(f, pos);
        f->total += weight;
        return SK_OK;
    }
    size_t cap;
    int ok;
    if (f->items < f->m) {
        if (f->items == f->capacity) {
            uint32_t grown = f->capacity > f->m / 2 ? f->m : f->capacity * 2;
            if (reserve(f, grown) != SK_OK)
                return SK_ENOMEM;
        }
        uint8_t *block = block_for(f, NULL, len, &cap, &ok);
        if (!ok)
            return SK_ENOMEM;
        append(f, item, len, hash, block, cap, f->threshold + weight, f->threshold);
        f->total += weight;
        return SK_OK;
    }
    /* Full: the least counter goes to the item. */
    uint32_t victim = f->heap[0].counter;
    struct sk__frequent_counter *c = &f->counters[victim];
    uint8_t *block = block_for(f, c, len, &cap, &ok);
    if (!ok)
        return SK_ENOMEM;
    uint64_t least = f->heap[0].count;
    if (least > f->threshold)
        f->threshold = least;
    table_remove(f, c->hash, victim);
    store_item(f, c, item, len, hash, block, cap);
    table_insert(f, hash, victim);
    c->error = least;
    f->heap[0].count = least + weight;
    sift_down(f, 0);
    f->total += weight;
    return SK_OK;
}

void sk_frequent_get_info(const sk_frequent *f, sk_frequent_info *info)
{
    if (info == NULL)
        return;
    memset(info, 0, sizeof *info);
    if (f == NULL)
        return;
    size_t memory = sizeof *f + (size_t)f->capacity * (sizeof *f->counters + sizeof *f->heap) +
                    f->table_size * sizeof *f->table;
    for (uint32_t i = 0; i < f->items; i++)
        memory += f->counters[i].cap;
    *info = (sk_frequent_info){.counters = f->m, .items = f->items, .total = f->total,
                               .threshold = f->threshold, .memory = memory};
}

static sk_frequent_entry entry_of(const sk_frequent *f, uint32_t index)
{
    const struct sk__frequent_counter *c = &f->counters[index];
    uint64_t upper = f->heap[c->heap_pos].count;
    return (sk_frequent_entry){.item = item_bytes(c), .len = c->len, .count = upper,
                               .lower = upper - c->error, .upper = upper};
}

int sk_frequent_query(const sk_frequent *f, const void *item, size_t len,
                      sk_frequent_entry *out)
{
    if (f == NULL || out == NULL || (item == NULL && len != 0))
        return SK_EINVAL;
    int64_t found = len > SK_FREQUENT_MAX_ITEM
                        ? -1
                        : find(f, sk_murmur64a(item, len, HASH_SEED), item, len);
    if (found < 0) {
        *out = (sk_frequent_entry){.item = item, .len = len, .count = f->threshold,
                                   .lower = 0, .upper = f->threshold};
        return 0;
    }
    *out = entry_of(f, (uint32_t)found);
    return 1;
}

/* Heaviest first, then by the bytes: an order that no hash or history
 * decides. */
int sk__frequent_order(const sk_frequent_entry *a, const sk_frequent_entry *b)
{
    if (a->upper != b->upper)
        return a->upper > b->upper ? -1 : 1;
    if (a->lower != b->lower)
        return a->lower > b->lower ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n > 0 ? memcmp(a->item, b->item, n) : 0;
    if (c != 0)
        return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

static int compare_entries(const void *pa, const void *pb)
{
    return sk__frequent_order(pa, pb);
}

int sk_frequent_list(const sk_frequent *f, sk_frequent_entry *out, size_t cap)
{
    if (f == NULL || (out == NULL && cap != 0))
        return SK_EINVAL;
    size_t n = f->items;
    if (n == 0 || cap == 0)
        return 0;
    sk_frequent_entry *all = sk__alloc(&f->alloc, n * sizeof *all);
    if (all == NULL)
        return SK_ENOMEM;
    for (uint32_t i = 0; i < f->items; i++)
        all[i] = entry_of(f, i);
    qsort(all, n, sizeof *all, compare_entries);
    size_t k = n < cap ? n : cap;
    memcpy(out, all, k * sizeof *out);
    sk__free(&f->alloc, all, n * sizeof *all);
    return (int)(k > INT32_MAX ? INT32_MAX : k);
}

/* For the merge (frequent_merge.c): a counter appended at the end, heap
 * order restored by the caller's last sift. */
int sk__frequent_append(sk_frequent *f, const void *item, size_t len, uint64_t hash,
                        uint64_t upper, uint64_t error)
{
    size_t cap;
    int ok;
    uint8_t *block = block_for(f, NULL, len, &cap, &ok);
    if (!ok)
        return SK_ENOMEM;
    append(f, item, len, hash, block, cap, upper, error);
    return SK_OK;
}

int sk__frequent_reserve(sk_frequent *f, uint32_t capacity)
{
    return capacity <= f->capacity ? SK_OK : reserve(f, capacity);
}

int64_t sk__frequent_find(const sk_frequent *f, uint64_t hash, const void *item, size_t len)
{
    return find(f, hash, item, len);
}

sk_frequent_entry sk__frequent_entry(const sk_frequent *f, uint32_t index)
{
    return entry_of(f, index);
}
