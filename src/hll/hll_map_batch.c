/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map_batch.c: many (key, item) pairs added to a map of sketches at once
 * (sk_hll_map_add_batch, sk_hll_map_add_hash_batch), each step of finding an item's group and register
 * prefetched well before it is taken.
 *
 * A lone add to a large map waits on a chain of cache misses: the key's
 * table slot, the group's `records` entry, its record, its sketch's header,
 * its register. Given a batch, the pipeline below starts each item's chain
 * many items before it finishes it, so that the misses of many items are in
 * flight at once. The registers that result are those of adding each item
 * in turn: a register's final value is the maximum of what it was given,
 * whatever the order, and groups are made in the order the items come.
 * Groups are found and set through hll_map.c's calls; this file only reads
 * the map's table and records (hll_map_internal.h) to prefetch them.
 */
#include "hll_map_internal.h"
#include "common/murmur64a.h"

/* A batch is a pipeline: an item's key is hashed and its table slot
 * prefetched (stage 0), then, DEPTH items later at each step, its group's
 * `records` entry (1), its record (2), its sketch's header (3, where the
 * group is found or made and the item hashed), its register's line (4),
 * and two steps after that its register is set (5). A group of a large map
 * costs four dependent misses and its register one more, each hidden behind
 * the work on the items in between. */
#define DEPTH 8
#define LAST (6 * DEPTH) /* stage 5; the register's line gets two steps */
#define RING 64          /* a power of two past LAST */
_Static_assert(RING > LAST && (RING & (RING - 1)) == 0, "the ring holds every stage");
/* At most this many groups, the records stay in the caches and stages 1
 * and 2 are skipped: they would prefetch lines already there. */
#define DEEP_GROUPS 32768

struct in_flight {
    uint64_t key_hash;
    uint64_t hash; /* of the item */
    uint8_t *record;
};

/* Stages 1 and 2 are the probe's first steps as prefetches; a group that
 * is not in its home slot is found by the probe itself, with a miss. */
static inline const struct slot *home_slot(const sk_hll_map *m, uint64_t key_hash)
{
    return &m->table[(uint32_t)key_hash & (m->table_cap - 1)];
}

/* The group (+ 1) in the key's home slot if its tag is the key's, else 0. */
static inline uint32_t home_group(const sk_hll_map *m, uint64_t key_hash)
{
    const struct slot *s = home_slot(m, key_hash);
    return s->tag == (uint32_t)(key_hash >> 32) ? s->group : 0;
}

SK__PREFETCHER prefetch_entry(const sk_hll_map *m, uint64_t kh)
{
    uint32_t g = home_group(m, kh);
    if (g != 0)
        __builtin_prefetch(&m->records[g - 1], 0);
}

SK__PREFETCHER prefetch_record(const sk_hll_map *m, uint64_t kh, size_t key_len)
{
    uint32_t g = home_group(m, kh);
    if (g != 0) {
        const uint8_t *r = m->records[g - 1];
        __builtin_prefetch(r, 1);
        __builtin_prefetch(r + REC_OFF_KEY + key_len, 0);
    }
}

/* Stage 4: the register's line of a promoted group (the register code
 * knows where it is); a small group's registers are in its record. */
SK__PREFETCHER prefetch_register(const uint8_t *r, uint64_t hash)
{
    if (rec_promoted(r))
        sk__hll_prefetch_register(rec_sketch(r), hash);
}

/* The batch of items (hashes NULL) or of their hashes (items NULL). */
static int add_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                     const void *const *items, const size_t *item_lens, const uint64_t *hashes,
                     size_t n)
{
    struct in_flight ring[RING];
    unsigned p = m->precision;
    int deep = m->size > DEEP_GROUPS;
    for (size_t i = 0; i < n + LAST; i++) {
        size_t j;
        /* Stage 5: the register is set. */
        if (i >= LAST) {
            j = i - LAST;
            uint32_t idx;
            unsigned value;
            sk__hll_register_of(ring[j % RING].hash, p, &idx, &value);
            int rc = sk__hll_map_set(m, ring[j % RING].record, idx, value);
            if (rc < 0)
                return rc;
        }
        if (i >= 4 * DEPTH && (j = i - 4 * DEPTH) < n)
            prefetch_register(ring[j % RING].record, ring[j % RING].hash);
        /* Stage 3: the group is found (or made), the item hashed. */
        if (i >= 3 * DEPTH && (j = i - 3 * DEPTH) < n) {
            if (keys[j] == NULL && key_lens[j] != 0)
                return SK_EINVAL;
            int rc;
            uint8_t *r =
                sk__hll_map_group(m, keys[j], key_lens[j], ring[j % RING].key_hash, &rc);
            if (r == NULL)
                return rc;
            ring[j % RING].record = r;
            ring[j % RING].hash = hashes != NULL ? hashes[j]
                                                 : sk_murmur64a(items[j], item_lens[j],
                                                                SK_REDIS_HLL_SEED);
            if (rec_promoted(r))
                __builtin_prefetch(rec_sketch(r), 0);
        }
        if (deep && i >= 2 * DEPTH && (j = i - 2 * DEPTH) < n)
            prefetch_record(m, ring[j % RING].key_hash, key_lens[j]);
        if (deep && i >= DEPTH && (j = i - DEPTH) < n)
            prefetch_entry(m, ring[j % RING].key_hash);
        /* Stage 0: the key is hashed, its home slot prefetched. */
        if (i < n) {
            uint64_t kh = key_hash(keys[i], key_lens[i]);
            ring[i % RING].key_hash = kh;
            __builtin_prefetch(home_slot(m, kh), 0);
        }
    }
    return SK_OK;
}

int sk_hll_map_add_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                         const void *const *items, const size_t *item_lens, size_t n)
{
    if (m == NULL || (n != 0 && (keys == NULL || key_lens == NULL || items == NULL ||
                                 item_lens == NULL)))
        return SK_EINVAL;
    return add_batch(m, keys, key_lens, items, item_lens, NULL, n);
}

int sk_hll_map_add_hash_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                              const uint64_t *hashes, size_t n)
{
    if (m == NULL || (n != 0 && (keys == NULL || key_lens == NULL || hashes == NULL)))
        return SK_EINVAL;
    return add_batch(m, keys, key_lens, NULL, NULL, hashes, n);
}
