/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo.c: cuckoo filters (Fan, Andersen, Kaminsky and Mitzenmacher,
 * "Cuckoo filter: practically better than Bloom", CoNEXT 2014), as
 * RedisBloom's CF.* runs them.
 *
 * The algorithm
 * -------------
 * A filter is N buckets of b slots, each slot an 8-bit fingerprint or 0
 * for empty. An item with 64-bit hash h has fingerprint f = h mod 255 + 1
 * and two buckets, i1 = h mod N and i2 = i1 xor (f x 0x5bd1e995) mod N;
 * since N is a power of 2 either bucket gives the other from f alone, so a
 * fingerprint can move between its two buckets without the item. An add
 * puts f in a free slot of i1 or i2; if both are full it swaps f with a
 * slot of i1 (the first, then the next on each step), moves the evicted
 * fingerprint to its other bucket, and so on up to max_iterations times;
 * if no free slot turns up it undoes the moves, so the filter is as it
 * was. A query looks for f in i1 and i2; a delete clears one slot holding
 * f there. An absent item matches only where one of its 2b slots holds
 * its fingerprint, so the false-positive rate is at most 2b x load / 255.
 *
 * Growth: when an add finds no room, a filter with expansion e adds a
 * sub-filter of N e^i buckets (a power of 2 still), and queries ask every
 * sub-filter; each one adds to the rate. Deletes past 10% of the items
 * compact: fingerprints of the newest sub-filters move to free slots of
 * older ones (an older one's buckets are those of the newer mod its N),
 * and a newest one left empty is freed.
 *
 * The mechanics
 * -------------
 * Every choice that decides an answer is RedisBloom's, down to the order
 * of slots tried, the newest sub-filter filled first, and a count that
 * counts a bucket twice when i1 = i2: so the same commands give the same
 * answers and the same slots. The remainders are masks, N being a power
 * of 2. A bucket of up to 8 slots is compared as one 64-bit word (the
 * arrays carry 8 bytes of padding for it).
 */
#include <string.h>

#include "common/murmur64a.h"
#include "cuckoo_internal.h"

#define ALT_MULTIPLIER UINT64_C(0x5bd1e995)
#define COMPACT_FRACTION 0.10 /* deletes past this share of the items compact */
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* ---- the mathematics ------------------------------------------------------ */

static uint64_t item_hash(const void *data, size_t len)
{
    return sk_murmur64a(data, len, 0);
}

static uint8_t fingerprint(uint64_t hash)
{
    return (uint8_t)(hash % 255 + 1);
}

/* The other bucket of a fingerprint in bucket i, before the mask. */
static uint64_t alt_bucket(uint8_t fp, uint64_t i)
{
    return i ^ ((uint64_t)fp * ALT_MULTIPLIER);
}

/* ---- buckets ---------------------------------------------------------------- */

/* The byte lanes of a bucket in a 64-bit word with one high bit per slot
 * holding fp; b <= 8. A zero-byte test: a borrow only carries upward from
 * a lane that is zero, so the lowest flagged lane is the first match. */
static uint64_t lanes_equal(const uint8_t *bucket, uint32_t b, uint8_t fp)
{
    uint64_t w = sk_load_le64(bucket) ^ (ONES * fp);
    uint64_t hits = (w - ONES) & ~w & HIGHS;
    return b == 8 ? hits : hits & ((UINT64_C(1) << (8 * b)) - 1);
}

/* The first slot of the bucket holding fp (0 for a free one), or NULL. */
static uint8_t *bucket_find(uint8_t *bucket, uint32_t b, uint8_t fp)
{
    if (b <= 8) {
        uint64_t hits = lanes_equal(bucket, b, fp);
        return hits != 0 ? bucket + __builtin_ctzll(hits) / 8 : NULL;
    }
    for (uint32_t s = 0; s < b; s++)
        if (bucket[s] == fp)
            return bucket + s;
    return NULL;
}

static int bucket_has(const uint8_t *bucket, uint32_t b, uint8_t fp)
{
    if (b <= 8)
        return lanes_equal(bucket, b, fp) != 0;
    return memchr(bucket, fp, b) != NULL;
}

static uint32_t bucket_count(const uint8_t *bucket, uint32_t b, uint8_t fp)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < b; s++)
        n += bucket[s] == fp;
    return n;
}

static uint8_t *slot_of(const sk_cuckoo *c, const struct sk__cuckoo_sub *sub, uint64_t i)
{
    return sub->slots + (i & (sub->buckets - 1)) * c->bucket_size;
}

/* The first slot holding fp in bucket i1, then i2, of one sub-filter. */
static uint8_t *sub_find(const sk_cuckoo *c, const struct sk__cuckoo_sub *sub, uint64_t i1,
                         uint64_t i2, uint8_t fp)
{
    uint8_t *slot = bucket_find(slot_of(c, sub, i1), c->bucket_size, fp);
    return slot != NULL ? slot : bucket_find(slot_of(c, sub, i2), c->bucket_size, fp);
}

/* ---- adds ------------------------------------------------------------------- */

/* Places fp by evictions within the newest sub-filter, as RedisBloom does:
 * 1 if it found room, else 0 with every move undone. */
static int kick_in(sk_cuckoo *c, uint64_t hash, uint8_t fp)
{
    struct sk__cuckoo_sub *sub = &c->subs[c->filters - 1];
    const uint64_t mask = sub->buckets - 1;
    const uint32_t b = c->bucket_size;
    uint32_t victim = 0;
    uint64_t i = hash & mask;
    for (uint32_t step = 0; step < c->max_iterations; step++) {
        uint8_t *slot = sub->slots + i * b + victim;
        uint8_t evicted = *slot;
        *slot = fp;
        fp = evicted;
        i = alt_bucket(fp, i) & mask;
        uint8_t *free_slot = bucket_find(sub->slots + i * b, b, 0);
        if (free_slot != NULL) {
            *free_slot = fp;
            return 1;
        }
        victim = (victim + 1) % b;
    }
    for (uint32_t step = 0; step < c->max_iterations; step++) {
        victim = (victim + b - 1) % b;
        i = alt_bucket(fp, i) & mask;
        uint8_t *slot = sub->slots + i * b + victim;
        uint8_t back = *slot;
        *slot = fp;
        fp = back;
    }
    return 0;
}

static int insert(sk_cuckoo *c, uint64_t hash, uint8_t fp)
{
    uint64_t i2 = alt_bucket(fp, hash);
    /* The second bucket's miss overlaps the first's when the first is full. */
    __builtin_prefetch(slot_of(c, &c->subs[c->filters - 1], i2));
    for (;;) {
        for (uint32_t k = c->filters; k-- > 0;) {
            uint8_t *slot = sub_find(c, &c->subs[k], hash, i2, 0);
            if (slot != NULL) {
                *slot = fp;
                c->items++;
                return 1;
            }
        }
        if (kick_in(c, hash, fp)) {
            c->items++;
            return 1;
        }
        if (c->expansion == 0)
            return SK_EFULL;
        int rc = sk__cuckoo_grow(c);
        if (rc != SK_OK)
            return rc;
    }
}

int sk_cuckoo_add(sk_cuckoo *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    if (sk_cuckoo_restoring(c))
        return SK_EINCOMPAT;
    uint64_t hash = item_hash(data, len);
    return insert(c, hash, fingerprint(hash));
}

/* ---- queries ------------------------------------------------------------- */

static int contains_hash(const sk_cuckoo *c, uint64_t hash)
{
    uint8_t fp = fingerprint(hash);
    uint64_t i2 = alt_bucket(fp, hash);
    for (uint32_t k = 0; k < c->filters; k++) {
        const struct sk__cuckoo_sub *sub = &c->subs[k];
        /* The second bucket's miss overlaps the first's, and a find in the
         * first does not wait for it. */
        const uint8_t *second = slot_of(c, sub, i2);
        __builtin_prefetch(second);
        if (bucket_has(slot_of(c, sub, hash), c->bucket_size, fp) ||
            bucket_has(second, c->bucket_size, fp))
            return 1;
    }
    return 0;
}

int sk_cuckoo_add_unique(sk_cuckoo *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    if (sk_cuckoo_restoring(c))
        return SK_EINCOMPAT;
    uint64_t hash = item_hash(data, len);
    return contains_hash(c, hash) ? 0 : insert(c, hash, fingerprint(hash));
}

int sk_cuckoo_contains(const sk_cuckoo *c, const void *data, size_t len)
{
    return contains_hash(c, item_hash(data, len));
}

/* Hashes a group, prefetches its first sub-filter's buckets, then asks:
 * the group's cache misses overlap. */
#define GROUP 16

void sk_cuckoo_contains_many(const sk_cuckoo *c, const void *const *items, const size_t *lens,
                             size_t n, uint8_t *out)
{
    uint64_t hashes[GROUP];
    for (size_t at = 0; at < n; at += GROUP) {
        size_t m = n - at < GROUP ? n - at : GROUP;
        for (size_t j = 0; j < m; j++) {
            uint64_t h = hashes[j] = item_hash(items[at + j], lens[at + j]);
            const struct sk__cuckoo_sub *sub = &c->subs[0];
            __builtin_prefetch(slot_of(c, sub, h));
            __builtin_prefetch(slot_of(c, sub, alt_bucket(fingerprint(h), h)));
        }
        for (size_t j = 0; j < m; j++)
            out[at + j] = (uint8_t)contains_hash(c, hashes[j]);
    }
}

uint64_t sk_cuckoo_count(const sk_cuckoo *c, const void *data, size_t len)
{
    uint64_t hash = item_hash(data, len);
    uint8_t fp = fingerprint(hash);
    uint64_t i2 = alt_bucket(fp, hash), n = 0;
    for (uint32_t k = 0; k < c->filters; k++) {
        const struct sk__cuckoo_sub *sub = &c->subs[k];
        n += bucket_count(slot_of(c, sub, hash), c->bucket_size, fp) +
             bucket_count(slot_of(c, sub, i2), c->bucket_size, fp);
    }
    return n;
}

/* ---- deletes and compaction ---------------------------------------------- */

/* Moves what it can of sub-filter k into free slots of older ones: 1 if
 * it moved everything (then the newest is freed when it is k). */
static int compact_one(sk_cuckoo *c, uint32_t k, int *changed)
{
    struct sk__cuckoo_sub *sub = &c->subs[k];
    const uint32_t b = c->bucket_size;
    int all_moved = 1;
    for (uint64_t i = 0; i < sub->buckets; i++) {
        for (uint32_t s = 0; s < b; s++) {
            uint8_t *slot = sub->slots + i * b + s;
            uint8_t fp = *slot;
            if (fp == 0)
                continue;
            uint8_t *home = NULL;
            for (uint32_t older = 0; older < k && home == NULL; older++)
                home = sub_find(c, &c->subs[older], i, alt_bucket(fp, i), 0);
            if (home == NULL) {
                all_moved = 0;
                continue;
            }
            *home = fp;
            *slot = 0;
            *changed = 1;
        }
    }
    if (all_moved && k == c->filters - 1)
        sk__cuckoo_drop_newest(c);
    return all_moved;
}

/* Compacts from the newest sub-filter down; without keep_going it stops
 * at the first it cannot empty, since older ones then cannot be freed.
 * 1 if a fingerprint moved or the count of deletes went to 0. */
static int compact(sk_cuckoo *c, int keep_going)
{
    int changed = c->deletes != 0;
    for (uint32_t k = c->filters; --k > 0;)
        if (!compact_one(c, k, &changed) && !keep_going)
            break;
    c->deletes = 0;
    return changed;
}

int sk_cuckoo_compact(sk_cuckoo *c)
{
    return c != NULL && !sk_cuckoo_restoring(c) ? compact(c, 1) : 0;
}

int sk_cuckoo_delete(sk_cuckoo *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    if (sk_cuckoo_restoring(c))
        return SK_EINCOMPAT;
    uint64_t hash = item_hash(data, len);
    uint8_t fp = fingerprint(hash);
    uint64_t i2 = alt_bucket(fp, hash);
    for (uint32_t k = c->filters; k-- > 0;) {
        uint8_t *slot = sub_find(c, &c->subs[k], hash, i2, fp);
        if (slot == NULL)
            continue;
        *slot = 0;
        c->items--;
        c->deletes++;
        if (c->filters > 1 && (double)c->deletes > (double)c->items * COMPACT_FRACTION)
            compact(c, 0);
        return 1;
    }
    return 0;
}
