/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/frequent.h: frequent items: the heaviest items of a stream, each
 * with an estimated count and bounds that always hold, in m counters
 * (Space-Saving, mergeable; the guarantee is in src/frequent/frequent.c).
 *
 *     sk_frequent *f;
 *     if (sk_frequent_new(&f, 4096) != SK_OK) ...   // 4096 counters
 *     sk_frequent_add(f, "10.0.0.1", 8, 1);         // seen once
 *     sk_frequent_entry top[10];
 *     int n = sk_frequent_list(f, top, 10);         // heaviest first
 *     // top[i].lower <= true count of top[i].item <= top[i].upper
 *     sk_frequent_free(f);
 *
 * Over a stream of total weight N, every count is at most N/m above the
 * truth and never below it, and every item whose true count is above
 * N/m (above info.threshold, which is at most N/m) is listed. Summaries of
 * the same m merge, with the same guarantee for the union stream. Memory
 * grows with the items seen, up to m counters and their items' bytes.
 * Concurrent readers are fine; a writer needs exclusive access.
 */
#ifndef SKETCH_FREQUENT_H
#define SKETCH_FREQUENT_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_frequent sk_frequent;

#define SK_FREQUENT_DEFAULT_COUNTERS 4096u
#define SK_FREQUENT_MAX_COUNTERS (1u << 26)
#define SK_FREQUENT_MAX_ITEM (UINT32_C(1) << 31) /* bytes of one item */

/* Zeroed fields take the defaults. */
typedef struct sk_frequent_options {
    uint32_t counters;             /* m, 1..SK_FREQUENT_MAX_COUNTERS */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_frequent_options;

SK_API int sk_frequent_create(sk_frequent **out, const sk_frequent_options *opts);
SK_API int sk_frequent_new(sk_frequent **out, uint32_t counters); /* 0: the default */
SK_API void sk_frequent_free(sk_frequent *f);
SK_API int sk_frequent_copy(sk_frequent **out, const sk_frequent *src);
SK_API int sk_frequent_clear(sk_frequent *f); /* keeps m */

/* Adds `weight` sightings of the item (weight 0 does nothing). SK_EINVAL
 * for an item longer than SK_FREQUENT_MAX_ITEM or a total past
 * UINT64_MAX; SK_ENOMEM; on an error the summary is unchanged. */
SK_API int sk_frequent_add(sk_frequent *f, const void *item, size_t len, uint64_t weight);

/* dst becomes the summary of both streams; SK_EINCOMPAT if their m differ.
 * dst may be src. On an error dst is unchanged. */
SK_API int sk_frequent_merge(sk_frequent *dst, const sk_frequent *src);

typedef struct sk_frequent_entry {
    const void *item; /* the summary's own bytes, valid until it changes */
    size_t len;
    uint64_t count;   /* the estimate, which is upper: never below the truth */
    uint64_t lower;   /* the true count is in [lower, upper] */
    uint64_t upper;
} sk_frequent_entry;

/* The items kept, heaviest first (ties by their bytes), into out[0..cap):
 * how many were written, or SK_ENOMEM for the order it sorts. */
SK_API int sk_frequent_list(const sk_frequent *f, sk_frequent_entry *out, size_t cap);

/* 1 and the item's entry if it is kept; 0 if not, with lower 0 and
 * count = upper = the threshold, which bounds its true count. */
SK_API int sk_frequent_query(const sk_frequent *f, const void *item, size_t len,
                             sk_frequent_entry *out);

typedef struct sk_frequent_info {
    uint32_t counters;  /* m */
    size_t items;       /* kept now, at most m */
    uint64_t total;     /* N: the weight added, merges included */
    uint64_t threshold; /* an item not kept was seen at most this often; every
                           upper - lower is at most this; at most N/m */
    size_t memory;      /* all it holds, items included (core.h) */
} sk_frequent_info;
SK_API void sk_frequent_get_info(const sk_frequent *f, sk_frequent_info *info);

#ifdef __cplusplus
}
#endif
#endif
