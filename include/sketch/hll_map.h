/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/hll_map.h: many HyperLogLog sketches by key, for counting distinct
 * items per group ("unique visitors per page", "distinct ports per source")
 * in one pass, with memory that follows the data: a group costs bytes, not
 * kilobytes, while its count is small.
 *
 *     sk_hll_map *m;
 *     sk_hll_map_create(&m, 14, NULL);
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
 * items at the same precision: its count, its bounds and its serialized
 * bytes are those. A map is not thread-safe; threads keep a map each and
 * merge them.
 */
#ifndef SKETCH_HLL_MAP_H
#define SKETCH_HLL_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"
#include "sketch/hll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_hll_map sk_hll_map;

/* Keys are byte strings of at most SK_HLL_MAP_MAX_KEY bytes; a map holds
 * at most SK_HLL_MAP_MAX_GROUPS of them. */
#define SK_HLL_MAP_MAX_KEY 65535
#define SK_HLL_MAP_MAX_GROUPS (UINT32_C(1) << 30)

/* An empty map whose sketches have this precision (4..18); NULL allocator:
 * malloc. */
SK_API int sk_hll_map_create(sk_hll_map **out, unsigned precision,
                             const sk_allocator *allocator);
SK_API void sk_hll_map_free(sk_hll_map *m);

/* Adds an item (or its sk_hll_hash) to the sketch of key, which starts
 * empty: 1 if a register changed, 0 if not, or SK_ENOMEM, SK_EINVAL (a key
 * too long) or SK_EFULL (too many groups), with the map unchanged. */
SK_API int sk_hll_map_add(sk_hll_map *m, const void *key, size_t key_len, const void *item,
                          size_t item_len);
SK_API int sk_hll_map_add_hash(sk_hll_map *m, const void *key, size_t key_len, uint64_t hash);

/* The same for n items at once, item i of key i: several times faster once
 * the groups' sketches are larger than the cache, with the memory accesses
 * of many items in flight together. After an error some items may be in
 * and the groups of others may exist empty; adding them again does no
 * harm. */
SK_API int sk_hll_map_add_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                                const void *const *items, const size_t *item_lens, size_t n);

/* Merges every group of src into the group of the same key of dst, which
 * must have the same precision (SK_EINCOMPAT). On SK_ENOMEM or SK_EFULL, dst
 * holds a part of src's items. */
SK_API int sk_hll_map_merge(sk_hll_map *dst, const sk_hll_map *src);

/* The groups, numbered 0..size-1 in the order their keys first came. */
SK_API size_t sk_hll_map_size(const sk_hll_map *m);
SK_API unsigned sk_hll_map_precision(const sk_hll_map *m);

typedef struct sk_hll_map_entry {
    const void *key;      /* valid until the map next changes */
    size_t key_len;
    sk_hll_estimate estimate;
} sk_hll_map_entry;
SK_API int sk_hll_map_get(const sk_hll_map *m, size_t index, sk_hll_map_entry *out);

/* The index of key's group, or -1 if it has none. */
SK_API int64_t sk_hll_map_find(const sk_hll_map *m, const void *key, size_t key_len);

/* A sketch of group `index`, the caller's to free (allocator: the map's). */
SK_API int sk_hll_map_sketch(const sk_hll_map *m, size_t index, sk_hll **out);

/* Merges the sketch h into the group of key (for reading groups back). */
SK_API int sk_hll_map_merge_sketch(sk_hll_map *m, const void *key, size_t key_len,
                                   const sk_hll *h);

/* The map as bytes in sketch's group format (docs/hll-format.md): each
 * group's key and sketch, in group order. sk_hll_map_serialized_size makes
 * the sketches to measure them (SK_ENOMEM); sk_hll_map_serialize gives
 * SK_ENOSPACE if cap is short. sk_hll_map_deserialize reads any byte string
 * to a map or an error (SK_EFORMAT, SK_EVERSION, SK_ETRUNCATED,
 * SK_ECORRUPT, SK_ECHECKSUM, SK_ENOMEM). sk_hll_map_save writes a file
 * atomically (a crash leaves the old file or the new one; SK_EIO with
 * errno); sk_hll_map_load reads one. */
SK_API int sk_hll_map_serialized_size(const sk_hll_map *m, uint64_t *size);
SK_API int sk_hll_map_serialize(const sk_hll_map *m, void *buf, size_t cap, size_t *len);
SK_API int sk_hll_map_deserialize(sk_hll_map **out, const void *buf, size_t len,
                                  const sk_allocator *allocator);
SK_API int sk_hll_map_save(const sk_hll_map *m, const char *path);
SK_API int sk_hll_map_load(sk_hll_map **out, const char *path, const sk_allocator *allocator);

/* Every byte the map holds. */
SK_API size_t sk_hll_map_memory(const sk_hll_map *m);

#ifdef __cplusplus
}
#endif

#endif
