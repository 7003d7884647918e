/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map_internal.h: what the files of maps of sketches by key share: the
 * map, its records and its table (hll_map.c keeps them), for the batch
 * pipeline (hll_map_batch.c) and the group files (hll_map_file.c).
 *
 * A group does not start as a sketch. It starts as a record of its own in
 * an arena, holding its registers inline as a small register set of
 * hll_internal.h; the register that would be one too many for the set turns
 * the group into a real sk_hll, which is sparse itself until it grows, and
 * the record then holds its pointer. The map reads no field of a sketch:
 * both forms go through the calls of hll_internal.h.
 *
 * A record, 8-byte aligned in the arena (chunks that are never freed
 * before the map, so records never move):
 *
 *     offset  size  field
 *          0     4  key length
 *          4     1  registers in the set, 0..SK__HLL_SMALL_MAX, or PROMOTED
 *          8    24  the small register set, or the sk_hll pointer
 *         32     n  the key
 *
 * Groups are numbered in the order their keys first came; `records` holds
 * each group's record. The table is open addressing with linear probing,
 * a power of two of slots of (group number + 1, high 32 bits of the key's
 * hash), so a probe compares keys only when those 32 bits agree; it grows
 * at 70% load, rehashing every key (XXH3-64, seed 0).
 */
#ifndef SKETCH_HLL_MAP_INTERNAL_H
#define SKETCH_HLL_MAP_INTERNAL_H

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hll_internal.h"
#include "sketch/hll_map.h"

#define PROMOTED 0xff

#define REC_OFF_KEY_LEN 0
#define REC_OFF_STATE 4
#define REC_OFF_BODY 8
#define REC_OFF_KEY 32
_Static_assert(REC_OFF_KEY - REC_OFF_BODY == SK__HLL_SMALL_SIZE,
               "the body holds the small register set");
_Static_assert(REC_OFF_KEY - REC_OFF_BODY >= sizeof(sk_hll *), "or a pointer");
_Static_assert(SK__HLL_SMALL_MAX < PROMOTED, "the state tells them apart");

struct slot {
    uint32_t group; /* + 1; 0: empty */
    uint32_t tag;
};

struct chunk {
    struct chunk *next;
    size_t size; /* of this allocation */
};

struct sk_hll_map {
    unsigned precision;
    uint32_t size;
    uint32_t records_cap;
    uint8_t **records;
    struct slot *table;
    uint32_t table_cap; /* a power of two */
    struct chunk *chunks;
    uint8_t *free_at; /* in the newest chunk */
    size_t free_left;
    size_t arena_bytes;
    sk_allocator alloc;
};

static inline uint32_t rec_key_len(const uint8_t *r)
{
    uint32_t len;
    memcpy(&len, r + REC_OFF_KEY_LEN, sizeof len);
    return len;
}

static inline int rec_promoted(const uint8_t *r)
{
    return r[REC_OFF_STATE] == PROMOTED;
}

/* The sketch of a promoted record. */
static inline sk_hll *rec_sketch(const uint8_t *r)
{
    sk_hll *h;
    memcpy(&h, r + REC_OFF_BODY, sizeof h);
    return h;
}

static inline uint64_t key_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

/* The record of key's group (whose key hashes to hash), new and empty if it
 * had none; NULL with *rc (hll_map.c). */
uint8_t *sk__hll_map_group(sk_hll_map *m, const void *key, size_t len, uint64_t hash, int *rc);

/* Register idx of record r's group to max(register, value): 1 if it
 * changed, 0 if not, or SK_ENOMEM (hll_map.c). */
int sk__hll_map_set(const sk_hll_map *m, uint8_t *r, uint32_t idx, unsigned value);

/* For the group files: a map's allocator, and the key of group index
 * (< size) without its estimate (hll_map.c). */
const sk_allocator *sk__hll_map_allocator(const sk_hll_map *m);
int sk__hll_map_create(sk_hll_map **out, unsigned precision, const sk_allocator *allocator);
const uint8_t *sk__hll_map_key(const sk_hll_map *m, size_t index, size_t *len);

#endif
