/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/window_hll.h: a sliding-window HyperLogLog: the number of distinct
 * items whose times fall in the last w time units, for any w up to a
 * horizon, in memory that grows with the logarithm of the stream.
 *
 *     sk_window_hll *w;                            // windows up to 1 h, 1 s apart
 *     if (sk_window_hll_new(&w, 3600, 1) != SK_OK) ...
 *     sk_window_hll_add(w, "10.0.0.1", 8, now);    // times: the caller's clock
 *     uint64_t n;
 *     sk_window_hll_count(w, 600, now, &n);        // distinct in the last 10 min
 *     sk_window_hll_free(w);
 *
 * Times are integers in a unit the caller chooses (seconds, milliseconds);
 * the horizon and the resolution are in that unit, and a time counts in
 * the slot floor(time / resolution). A window of w units ending at now
 * covers the ceil(w / resolution) slots ending with now's, so it reaches
 * back up to one slot further than w. Its estimate is the plain
 * HyperLogLog's of the items in those slots (sketch/hll.h: the same hash,
 * registers and estimator, so the same error). An add may come late by up
 * to the horizon: an item older than that is in no window that can still
 * be asked and is dropped (the add returns 0). Concurrent readers are fine;
 * a writer needs exclusive access. The format is docs/window-hll-format.md.
 */
#ifndef SKETCH_WINDOW_HLL_H
#define SKETCH_WINDOW_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"
#include "sketch/hll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_window_hll sk_window_hll;

#define SK_WINDOW_HLL_MAX_SLOTS (UINT32_C(1) << 24) /* horizon / resolution */
#define SK_WINDOW_HLL_MAX_TIME (UINT64_C(1) << 62)

/* Zeroed fields take the defaults; the horizon is required. */
typedef struct sk_window_hll_options {
    unsigned precision;   /* 4..18; 0: SK_HLL_DEFAULT_PRECISION */
    uint64_t horizon;     /* the longest window, in time units */
    uint64_t resolution;  /* time units a slot; 0: 1 */
    uint64_t max_memory;  /* 0: none; else an add that would pass it fails with SK_EBUDGET */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_window_hll_options;

SK_API int sk_window_hll_create(sk_window_hll **out, const sk_window_hll_options *opts);
SK_API int sk_window_hll_new(sk_window_hll **out, uint64_t horizon, uint64_t resolution);
SK_API void sk_window_hll_free(sk_window_hll *w);
SK_API int sk_window_hll_copy(sk_window_hll **out, const sk_window_hll *src);
SK_API int sk_window_hll_clear(sk_window_hll *w);

/* Adds an item seen at `time` (<= SK_WINDOW_HLL_MAX_TIME, else SK_EINVAL):
 * 1 if the sketch changed, 0 if not (no window's count can have), or
 * SK_ENOMEM or SK_EBUDGET with the sketch unchanged. By hash: sk_hll_hash's. */
SK_API int sk_window_hll_add(sk_window_hll *w, const void *data, size_t len, uint64_t time);
SK_API int sk_window_hll_add_hash(sk_window_hll *w, uint64_t hash, uint64_t time);

/* The distinct items of the window of `window` units (1..horizon) ending at
 * `now`, which must be no earlier than the newest time added (SK_EINVAL):
 * an older window has lost the items that newer ones outranked. */
SK_API int sk_window_hll_count(const sk_window_hll *w, uint64_t window, uint64_t now,
                               uint64_t *count);
/* The same window as a plain HyperLogLog: dst, of the same precision
 * (SK_EINCOMPAT), gets exactly the registers its items would have set. */
SK_API int sk_window_hll_snapshot(const sk_window_hll *w, uint64_t window, uint64_t now,
                                  sk_hll *dst);

/* dst becomes the union of both streams (same precision, horizon and
 * resolution, else SK_EINCOMPAT). */
SK_API int sk_window_hll_merge(sk_window_hll *dst, const sk_window_hll *src);

typedef struct sk_window_hll_info {
    unsigned precision;
    uint64_t horizon, resolution;
    int empty;           /* nothing added since creation or clear */
    uint64_t newest;     /* the slot of the newest time added, as a time: slot x resolution */
    uint64_t pairs;      /* (time, rank) pairs held, some possibly expired */
    size_t memory;       /* all it holds (core.h) */
} sk_window_hll_info;
SK_API void sk_window_hll_get_info(const sk_window_hll *w, sk_window_hll_info *info);
/* The budget of max_memory for a sketch read from bytes or a file, which
 * carry none (0: none); it holds for the adds to come. */
SK_API void sk_window_hll_set_max_memory(sk_window_hll *w, uint64_t bytes);

SK_API int sk_window_hll_serialized_size(const sk_window_hll *w, uint64_t *size);
SK_API int sk_window_hll_serialize(const sk_window_hll *w, void *buf, size_t cap, size_t *len);
SK_API int sk_window_hll_deserialize(sk_window_hll **out, const void *buf, size_t len,
                                     const sk_allocator *allocator);
/* Files hold the serialized form, written atomically (as sk_hll_save). */
SK_API int sk_window_hll_save(const sk_window_hll *w, const char *path);
SK_API int sk_window_hll_open(sk_window_hll **out, const char *path,
                              const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
