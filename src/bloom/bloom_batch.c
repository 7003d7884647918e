/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_batch.c: the batch calls, which keep the memory accesses of many
 * items in flight at once.
 *
 * They run as a ring: item i is hashed and its memory prefetched while item
 * i - BATCH, whose lines have had BATCH items' time to arrive, is looked up
 * or set. Unlike hashing a batch and then working through it, the ring
 * never waits with nothing in flight. A filter of one blocked or split
 * layer, the common large case, keeps only its cache-line pointer and second hash per
 * slot: at 100M items that halves the time per query here.
 */
#include "bloom_probe.h"

/* Items hashed, and announced to a filter's file (bloom_internal.h), before
 * their bits are set: a file open in place then flushes its change marks
 * once for all of them. */
#define TOUCH_BATCH 1024

/* Items in flight at once: enough to cover a memory latency with the loads
 * of the others (64 outstanding lines measured twice as fast as 16 here),
 * few enough that their lines stay in the L1 cache. */
#define BATCH 64

/* Inlined into each public call, so that the tests of where the hashes
 * come from and of the layout are constants there. */
static inline __attribute__((always_inline)) void
line_add_ring(struct layer *l, sk_bloom_layout layout, unsigned k, const struct source *items,
              size_t n, uint8_t *added, enum writers writers)
{
    _Atomic uint64_t *lines[BATCH];
    uint64_t h2[BATCH];
    uint64_t new_items = 0;
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH) {
            int changed = layout == SK_BLOOM_SPLIT
                              ? split_line_set(lines[slot], h2[slot], k, writers)
                              : blocked_line_set(lines[slot], h2[slot], k, writers);
            new_items += (uint64_t)changed;
            if (added != NULL)
                added[i - BATCH] = (uint8_t)changed;
        }
        if (i < n) {
            struct item_hash h = source_hash(items, i);
            lines[slot] = blocked_line(l, h.h1);
            h2[slot] = h.h2;
            __builtin_prefetch((const void *)lines[slot], 1);
        }
    }
    layer_count(l, new_items, writers); /* once, not per item */
}

static inline __attribute__((always_inline)) void
line_contains_ring(const struct layer *l, sk_bloom_layout layout, unsigned k,
                   const struct source *items, size_t n, uint8_t *found)
{
    const _Atomic uint64_t *lines[BATCH];
    uint64_t h2[BATCH];
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH)
            found[i - BATCH] = (uint8_t)(layout == SK_BLOOM_SPLIT
                                             ? split_line_has(lines[slot], h2[slot], k)
                                             : blocked_line_has_all(lines[slot], h2[slot], k));
        if (i < n) {
            struct item_hash h = source_hash(items, i);
            lines[slot] = blocked_line(l, h.h1);
            h2[slot] = h.h2;
            __builtin_prefetch((const void *)lines[slot], 0);
        }
    }
}

/* A filter read from a file: its file's hook before each TOUCH_BATCH
 * items' bits change, then the items, through the ring when the filter is
 * fixed and has room for them all, else one by one. */
static inline __attribute__((always_inline)) int
add_batch_file(sk_bloom *f, const struct source *items, size_t n, uint8_t *added)
{
    struct item_hash h[TOUCH_BATCH];
    for (size_t done = 0; done < n;) {
        size_t count = n - done < TOUCH_BATCH ? n - done : TOUCH_BATCH;
        for (size_t i = 0; i < count; i++)
            h[i] = source_hash(items, done + i);
        int rc = f->file->before_write(f, h, count);
        const struct source hashed = {.kind = SOURCE_HASHED, .hashed = h};
        int room = f->expansion == 0 &&
                   (!(f->flags & SK__BLOOM_REFUSE_FULL) ||
                    atomic_load_explicit(&f->first.count, memory_order_relaxed) + count <=
                        layer_capacity(&f->first));
        if (rc == SK_OK && room && f->layout == SK_BLOOM_SPLIT) {
            line_add_ring(&f->first, SK_BLOOM_SPLIT, layer_hashes(&f->first), &hashed, count,
                          added != NULL ? added + done : NULL, writers_of(f));
            done += count;
            continue;
        }
        if (rc == SK_OK && room && f->layout == SK_BLOOM_BLOCKED) {
            line_add_ring(&f->first, SK_BLOOM_BLOCKED, layer_hashes(&f->first), &hashed, count,
                          added != NULL ? added + done : NULL, writers_of(f));
            done += count;
            continue;
        }
        for (size_t i = 0; i < count && rc == SK_OK; i++) {
            int r = sk__bloom_add_hashed(f, h[i]);
            if (r < 0)
                rc = r;
            else if (added != NULL)
                added[done + i] = (uint8_t)r;
        }
        if (rc != SK_OK)
            return rc;
        done += count;
    }
    return SK_OK;
}

/* Whether adding n items to f needs nothing but setting bits: f->plain,
 * or a fixed filter that refuses when full with room for all n. */
static inline __attribute__((always_inline)) int plain_for(const sk_bloom *f, size_t n)
{
    return f->plain ||
           (f->expansion == 0 && f->file == NULL &&
            atomic_load_explicit(&f->first.count, memory_order_relaxed) + n <=
                layer_capacity(&f->first));
}

static inline __attribute__((always_inline)) int
add_batch(sk_bloom *f, const struct source *items, size_t n, uint8_t *added)
{
    if (f->file != NULL)
        return add_batch_file(f, items, n, added);
    /* The common filter's ring, with its lanes and writers constants. */
    if (f->fast & SK__BLOOM_FAST_ADD) {
        line_add_ring(&f->first, SK_BLOOM_SPLIT, 8, items, n, added, WRITERS_ONE_ALWAYS);
        return SK_OK;
    }
    int plain = plain_for(f, n);
    if (plain && f->layout == SK_BLOOM_BLOCKED) {
        line_add_ring(&f->first, SK_BLOOM_BLOCKED, layer_hashes(&f->first), items, n, added,
                      writers_of(f));
        return SK_OK;
    }
    if (plain && f->layout == SK_BLOOM_SPLIT) {
        line_add_ring(&f->first, SK_BLOOM_SPLIT, layer_hashes(&f->first), items, n, added,
                      writers_of(f));
        return SK_OK;
    }
    struct item_hash h[BATCH];
    uint64_t new_items = 0;
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH) {
            int rc;
            if (plain) {
                rc = layer_set(&f->first, f->layout, h[slot], writers_of(f));
                new_items += (uint64_t)rc;
            } else {
                rc = sk__bloom_add_hashed(f, h[slot]);
                if (rc < 0)
                    return rc;
            }
            if (added != NULL)
                added[i - BATCH] = (uint8_t)rc;
        }
        if (i < n) {
            h[slot] = source_hash(items, i);
            /* A scalable filter's adds may grow it, so only its lookups are
             * worth prefetching, and those are spread over every layer. */
            if (plain)
                layer_prefetch(&f->first, f->layout, h[slot], 1);
        }
    }
    if (plain)
        layer_count(&f->first, new_items, writers_of(f));
    return SK_OK;
}

static inline __attribute__((always_inline)) void
contains_batch(const sk_bloom *f, const struct source *items, size_t n, uint8_t *found)
{
    /* Read once: the stores into found may alias anything. */
    const struct layer *layers = sk__bloom_layers(f);
    const unsigned nlayers = f->nlayers;
    const sk_bloom_layout layout = f->layout;
    if (f->fast & SK__BLOOM_FAST_CONTAINS) {
        line_contains_ring(&layers[0], SK_BLOOM_SPLIT, 8, items, n, found);
        return;
    }
    if (nlayers == 1 && layout == SK_BLOOM_BLOCKED) {
        line_contains_ring(&layers[0], SK_BLOOM_BLOCKED, layer_hashes(&layers[0]), items, n, found);
        return;
    }
    if (nlayers == 1 && layout == SK_BLOOM_SPLIT) {
        line_contains_ring(&layers[0], SK_BLOOM_SPLIT, layer_hashes(&layers[0]), items, n, found);
        return;
    }
    struct item_hash h[BATCH];
    for (size_t i = 0; i < n + BATCH; i++) {
        size_t slot = i % BATCH;
        if (i >= BATCH)
            found[i - BATCH] = (uint8_t)sk__bloom_contains_hashed(f, h[slot]);
        if (i < n) {
            h[slot] = source_hash(items, i);
            for (unsigned l = 0; l < nlayers; l++)
                layer_prefetch(&layers[l], layout, h[slot], 0);
        }
    }
}

/* flatten: the hash of each item inlined into the ring too, which the
 * compiler would otherwise leave a call for its size. */
PROBE_CLONES __attribute__((flatten)) int sk_bloom_add_batch(sk_bloom *f, const void *const *items,
                                                const size_t *lens, size_t n, uint8_t *added)
{
    return add_batch(f, &(struct source){.kind = SOURCE_ITEMS, .items = items, .lens = lens}, n, added);
}

PROBE_CLONES __attribute__((flatten)) int sk_bloom_add_hash_batch(sk_bloom *f,
                                                                  const sk_bloom_hash *hashes,
                                                                  size_t n, uint8_t *added)
{
    return add_batch(f, &(struct source){.kind = SOURCE_HASHES, .hashes = hashes}, n, added);
}

PROBE_CLONES __attribute__((flatten)) void sk_bloom_contains_batch(const sk_bloom *f,
                                                      const void *const *items,
                                                      const size_t *lens, size_t n,
                                                      uint8_t *found)
{
    contains_batch(f, &(struct source){.kind = SOURCE_ITEMS, .items = items, .lens = lens}, n, found);
}

PROBE_CLONES void sk_bloom_contains_hash_batch(const sk_bloom *f, const sk_bloom_hash *hashes, size_t n,
                                  uint8_t *found)
{
    contains_batch(f, &(struct source){.kind = SOURCE_HASHES, .hashes = hashes}, n, found);
}
