/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/aging_bloom.h: an aging Bloom filter: "was this item seen within
 * the last N adds", or "within the last T time units", at a false-positive
 * rate that holds at every moment, with old items forgotten.
 *
 *     sk_aging_bloom *f;                    // the last 1M adds, 1% false positives
 *     if (sk_aging_bloom_new(&f, 1000000, 0.01) != SK_OK) ...
 *     if (sk_aging_bloom_contains(f, url, len, 0) == 0)
 *         sk_aging_bloom_add(f, url, len, 0);   // first request: remember it
 *     sk_aging_bloom_free(f);
 *
 * The filter is a ring of g generations (plain Bloom filters, sketch/bloom.h),
 * each sized for capacity / (g - 1) items at the rate 1 - (1 - P)^(1/g), so
 * that all g together answer at rate P or better. Adds go to the newest
 * generation; when it has taken its share (or, with a time window, when its
 * span of window / (g - 1) time units ends) the oldest is emptied and becomes
 * the newest. So an item is kept for at least the window (capacity adds, or
 * `window` time units) and forgotten before g / (g - 1) windows have passed:
 * docs/aging-bloom.md says exactly when. Times are the caller's integers, in
 * any unit; with a count window they are ignored. Concurrent readers are
 * fine; a writer needs exclusive access. The format is docs/aging-bloom.md.
 */
#ifndef SKETCH_AGING_BLOOM_H
#define SKETCH_AGING_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/bloom.h"
#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_aging_bloom sk_aging_bloom;

#define SK_AGING_BLOOM_MIN_GENERATIONS 2
#define SK_AGING_BLOOM_MAX_GENERATIONS 64
#define SK_AGING_BLOOM_DEFAULT_GENERATIONS 4

/* Zeroed fields take the defaults; the capacity is required. */
typedef struct sk_aging_bloom_options {
    uint64_t capacity;     /* items a window holds at fp_rate */
    double fp_rate;        /* of the whole filter; 0: SK_BLOOM_DEFAULT_FP_RATE */
    unsigned generations;  /* 2..64; 0: SK_AGING_BLOOM_DEFAULT_GENERATIONS */
    uint64_t window;       /* 0: the last `capacity` adds; else time units */
    sk_bloom_layout layout;
    uint64_t max_memory;   /* 0: none; else SK_EBUDGET past it */
    const sk_allocator *allocator; /* NULL: malloc and mmap */
} sk_aging_bloom_options;

SK_API int sk_aging_bloom_create(sk_aging_bloom **out, const sk_aging_bloom_options *opts);
SK_API int sk_aging_bloom_new(sk_aging_bloom **out, uint64_t capacity, double fp_rate);
SK_API void sk_aging_bloom_free(sk_aging_bloom *f);
SK_API int sk_aging_bloom_copy(sk_aging_bloom **out, const sk_aging_bloom *src);
SK_API int sk_aging_bloom_clear(sk_aging_bloom *f);

/* sk_aging_bloom_add: 1 if the item was not in the filter before, 0 if it
 * may have been (or, with a time window, if `now` is so old that its
 * generation is gone: it is forgotten at once), or SK_ENOMEM, SK_EBUDGET,
 * SK_EINVAL, or SK_EFULL if a time window's generation can grow no more
 * (a Bloom chain's limits). sk_aging_bloom_contains: 1 if the item may
 * have been added within the window ending at `now` (a time earlier than
 * the newest add counts as the newest), 0 if certainly not. */
SK_API int sk_aging_bloom_add(sk_aging_bloom *f, const void *data, size_t len, uint64_t now);
SK_API int sk_aging_bloom_contains(const sk_aging_bloom *f, const void *data, size_t len,
                                   uint64_t now);

/* dst becomes the union of dst and src: both with the same time window and
 * sizes (SK_EINCOMPAT otherwise, and for count windows, whose generations
 * are not aligned in time). */
SK_API int sk_aging_bloom_merge(sk_aging_bloom *dst, const sk_aging_bloom *src);

typedef struct sk_aging_bloom_info {
    uint64_t capacity;
    double fp_rate;
    unsigned generations;
    uint64_t window;         /* 0: a count window */
    uint64_t span;           /* adds or time units a generation is the newest */
    uint64_t newest;         /* count window: adds so far; time: the newest generation's start */
    uint64_t count;          /* items whose add set a bit, in the generations held */
    uint64_t bits;           /* of all generations */
    unsigned hashes;         /* of a generation */
    double generation_fp_rate;
    size_t memory;           /* all it holds (core.h) */
} sk_aging_bloom_info;
SK_API void sk_aging_bloom_get_info(const sk_aging_bloom *f, sk_aging_bloom_info *info);
/* The budget of max_memory for a filter read from bytes or a file, which
 * carry none (0: none); it holds for the adds to come. */
SK_API void sk_aging_bloom_set_max_memory(sk_aging_bloom *f, uint64_t bytes);

SK_API int sk_aging_bloom_serialized_size(const sk_aging_bloom *f, uint64_t *size);
SK_API int sk_aging_bloom_serialize(const sk_aging_bloom *f, void *buf, size_t cap,
                                    size_t *len);
SK_API int sk_aging_bloom_deserialize(sk_aging_bloom **out, const void *buf, size_t len,
                                      const sk_allocator *allocator);
SK_API int sk_aging_bloom_save(const sk_aging_bloom *f, const char *path);
SK_API int sk_aging_bloom_open(sk_aging_bloom **out, const char *path,
                               const sk_allocator *allocator);

#ifdef __cplusplus
}
#endif
#endif
