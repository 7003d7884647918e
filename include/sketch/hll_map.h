/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/hll_map.h: many HyperLogLog sketches by key, for counting distinct
 * items per group ("unique visitors per page", "distinct ports per source")
 * in one pass, with memory that follows the data: a group costs bytes, not
 * kilobytes, while its count is small.
 *
 *     sk_hll_map *m;
 *     sk_hll_map_new(&m, SK_HLL_DEFAULT_PRECISION);
 *     sk_hll_map_add(m, "/home", 5, "alice", 5);
 *     sk_hll_map_add(m, "/home", 5, "bob", 3);
 *     sk_hll_map_add(m, "/cart", 5, "alice", 5);
 *     for (size_t i = 0; i < sk_hll_map_size(m); i++) {
 *         sk_hll_map_entry e;
 *         sk_hll_map_get(m, i, &e);       // "/home" 2, then "/cart" 1
 *     }
 *     sk_hll_map_free(m);
 *
 * Every group's sketch is the sketch sk_hll_add would build from the same
 * items at the same precision: its count, bounds and serialized bytes are
 * those. A map is not thread-safe; threads keep a map each and merge them.
 */
#ifndef SKETCH_HLL_MAP_H
#define SKETCH_HLL_MAP_H

#include "sketch/hll_extra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_hll_map sk_hll_map;

/* Keys are byte strings of at most SK_HLL_MAP_MAX_KEY bytes; a map holds
 * at most SK_HLL_MAP_MAX_GROUPS of them. */
#define SK_HLL_MAP_MAX_KEY 65535
#define SK_HLL_MAP_MAX_GROUPS (UINT32_C(1) << 30)

/* A map is made with the options of its groups' sketches. */
typedef sk_hll_options sk_hll_map_options;
SK_API int sk_hll_map_create(sk_hll_map **out, const sk_hll_map_options *opts);
SK_API int sk_hll_map_new(sk_hll_map **out, unsigned precision);
SK_API void sk_hll_map_free(sk_hll_map *m);
SK_API int sk_hll_map_copy(sk_hll_map **out, const sk_hll_map *src);
SK_API int sk_hll_map_clear(sk_hll_map *m); /* no groups left; keeps the precision */

/* Adds an item (or its sk_hll_hash) to the sketch of key, which starts
 * empty: 1 if a register changed, 0 if not, or SK_ENOMEM, SK_EINVAL (a key
 * too long) or SK_EFULL (too many groups), with the map unchanged. */
SK_API int sk_hll_map_add(sk_hll_map *m, const void *key, size_t key_len, const void *item,
                          size_t item_len);
SK_API int sk_hll_map_add_hash(sk_hll_map *m, const void *key, size_t key_len, uint64_t hash);

/* The same for n items (or hashes) at once, item i of key i: several times
 * faster once the groups' sketches are larger than the cache. After an
 * error some items may be in and the groups of others may exist empty;
 * adding them again does no harm. */
SK_API int sk_hll_map_add_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                                const void *const *items, const size_t *item_lens, size_t n);
SK_API int sk_hll_map_add_hash_batch(sk_hll_map *m, const void *const *keys,
                                     const size_t *key_lens, const uint64_t *hashes, size_t n);

/* Group `index` (0..size-1, in the order keys first came): its key, valid
 * until the map next changes, and its estimate. sk_hll_map_find gives the
 * index of key's group or -1; sk_hll_map_sketch a copy of its sketch, the
 * caller's to free. */
typedef struct sk_hll_map_entry {
    const void *key;
    size_t key_len;
    sk_hll_estimate estimate;
} sk_hll_map_entry;
SK_API size_t sk_hll_map_size(const sk_hll_map *m);
SK_API int sk_hll_map_get(const sk_hll_map *m, size_t index, sk_hll_map_entry *out);
SK_API int64_t sk_hll_map_find(const sk_hll_map *m, const void *key, size_t key_len);
SK_API int sk_hll_map_sketch(const sk_hll_map *m, size_t index, sk_hll **out);

/* Every group of src into the group of the same key of dst, of the same
 * precision (SK_EINCOMPAT); on SK_ENOMEM or SK_EFULL dst holds a part of
 * src. sk_hll_map_merge_sketch merges one sketch into key's group. */
SK_API int sk_hll_map_merge(sk_hll_map *dst, const sk_hll_map *src);
SK_API int sk_hll_map_merge_sketch(sk_hll_map *m, const void *key, size_t key_len,
                                   const sk_hll *h);

typedef struct sk_hll_map_info {
    unsigned precision;
    size_t groups;
    size_t memory; /* every byte it holds (core.h); visits every group */
} sk_hll_map_info;
SK_API void sk_hll_map_get_info(const sk_hll_map *m, sk_hll_map_info *info);

/* The map in sketch's group format (docs/hll-format.md), as the calls of
 * sk_hll: sk_hll_map_serialized_size makes the sketches to measure them
 * (SK_ENOMEM); sk_hll_map_deserialize reads any byte string to a map or an
 * error; sk_hll_map_save writes a file atomically, sk_hll_map_open reads
 * one. */
SK_API int sk_hll_map_serialized_size(const sk_hll_map *m, uint64_t *size);
SK_API int sk_hll_map_serialize(const sk_hll_map *m, void *buf, size_t cap, size_t *len);
SK_API int sk_hll_map_deserialize(sk_hll_map **out, const void *buf, size_t len,
                                  const sk_allocator *allocator);
SK_API int sk_hll_map_save(const sk_hll_map *m, const char *path);
SK_API int sk_hll_map_open(sk_hll_map **out, const char *path, const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif

#endif
