/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_probe.h: where an item's bits are and how they are read and set:
 * the probe kernels of every layout, inlined into the single calls
 * (bloom.c) and the batch pipeline (bloom_batch.c). Internal.
 *
 * Hashing
 * -------
 * An item is hashed once with XXH3-128; its two 64-bit halves h1 and h2 are
 * independent, so every position comes from 64 bits that do not overlap:
 * 32-bit hashes, or positions taken from the same bits, make the false-
 * positive rate climb far above its target past tens of millions of items.
 * A 64-bit value x is reduced to [0, n) by the multiply-high (x * n) >> 64,
 * which needs no division and no modulo bias.
 *
 * Classic layout: m bits; the k bits are reduce(x_i, m) for the 64-bit
 * linear congruential sequence x_0 = h1, x_(i+1) = x_i A + (h2 | 1), whose
 * top bits behave as independent draws. Plain double hashing, h1 + i h2, is
 * not good enough: its positions form an arithmetic progression mod m, so
 * two items with the same two residues collide on all k bits, a floor of
 * about n/m^2 under the rate that a small filter at a low rate (100 items
 * at 1e-6) misses fifty times over.
 *
 * Blocked layout: m/512 blocks of one 64-byte cache line; the block is
 * reduce(h1, m/512) and the k bit positions in it are the top 9 bits of k
 * successive values of a 64-bit linear congruential sequence seeded with h2.
 *
 * Split layout: the same lines, and in each one bit per lane (bloom_split.h).
 *
 * Threads
 * -------
 * A word is read with a relaxed atomic load. Bits are never cleared while
 * the filter is shared, so no stronger ordering is needed: whatever a
 * thread sees set stays set.
 *
 * A locked OR costs far more than a plain store, even on a line already in
 * L1 (it drains the store buffer and holds back later loads): 10-20 ns of a
 * blocked add here, three times the whole add of one writer. So only a
 * filter made for concurrent writers pays it, and only for the words that
 * lack a bit. Every other filter has one writer at a time and sets bits with
 * relaxed loads and stores (plain moves), which readers see either before
 * or after. In memory such an add writes back every word it touches, with
 * no branch on whether a bit was missing. A filter changed in place, and a
 * scalable one, stores only for an item that adds a bit: a page written for
 * nothing is a page the kernel writes back to the file, or copies in a
 * forked process (the Redis module forks for every save).
 */
#ifndef SKETCH_BLOOM_PROBE_H
#define SKETCH_BLOOM_PROBE_H

#include <stdatomic.h>
#include <stdint.h>

/* Inlined: the hash of a short item costs less than a call into the
 * shared library would. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_internal.h"
#include "bloom_math.h"
#include "bloom_split.h"
#include "bloom_word.h"

#define BLOCK_WORDS (SK__BLOOM_BLOCK_BITS / 64)
#define LCG_MUL UINT64_C(0x5851f42d4c957f2d)
#define LCG_ADD UINT64_C(0x14057b7ef767814f)

__extension__ typedef unsigned __int128 u128;

/* How adds set bits (see "Threads" above). */
enum writers {
    WRITERS_MANY,         /* locked ORs of the missing bits */
    WRITERS_ONE,          /* plain stores, only for an item that adds a bit */
    WRITERS_ONE_ALWAYS    /* plain stores of every word touched */
};

/* How adds to a filter of fixed size set bits. A filter changed in place
 * stores only for items that add a bit, which keeps its file's pages clean;
 * in memory, every word touched is written back, with no branch. */
static inline enum writers writers_of(const sk_bloom *f)
{
    if (f->flags & SK__BLOOM_MANY_WRITERS)
        return WRITERS_MANY;
    return f->file != NULL ? WRITERS_ONE : WRITERS_ONE_ALWAYS;
}

static __attribute__((noinline)) struct item_hash hash_long_item(const void *data, size_t len)
{
    XXH128_hash_t h = XXH3_128bits(data, len);
    return (struct item_hash){h.low64, h.high64};
}

/* Items of up to 16 bytes (keys, addresses, identifiers) are hashed inline,
 * where the compiler keeps only XXH3's short-input code; longer ones in a
 * call, so that the registers the long code needs are not saved and
 * restored around every short item. */
static inline __attribute__((always_inline)) struct item_hash hash_item(const void *data,
                                                                      size_t len)
{
    if (len > 16)
        return hash_long_item(data, len);
    XXH128_hash_t h = XXH3_128bits(data, len);
    return (struct item_hash){h.low64, h.high64};
}

/* The i-th hash of a batch (struct source, bloom_internal.h). */
static inline __attribute__((always_inline)) struct item_hash
source_hash(const struct source *s, size_t i)
{
    if (s->kind == SOURCE_HASHED)
        return s->hashed[i];
    if (s->kind == SOURCE_HASHES)
        return (struct item_hash){s->hashes[i].low, s->hashes[i].high};
    /* 8-byte items, the common keys, with the length a constant: XXH3
     * then drops its tests of the length and its shifts by it. */
    if (s->lens[i] == 8) {
        XXH128_hash_t h = XXH3_128bits(s->items[i], 8);
        return (struct item_hash){h.low64, h.high64};
    }
    return hash_item(s->items[i], s->lens[i]);
}

static inline uint64_t reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((u128)x * n) >> 64);
}

static inline _Atomic uint64_t *blocked_line(const struct layer *l, uint64_t h1)
{
    return l->words + reduce(h1, l->bits / SK__BLOOM_BLOCK_BITS) * BLOCK_WORDS;
}

/* Sets the bits of mask in *word; 1 if some were missing. The locked OR's
 * result is left unused so that it compiles to a single `lock or` rather
 * than a compare-and-swap loop; two threads adding the same new item at the
 * same moment may then both report it new. With one writer a relaxed store
 * does: nobody else changes the word. */
static inline int set_bits(_Atomic uint64_t *word, uint64_t mask, enum writers writers)
{
    uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
    if ((have & mask) == mask)
        return 0;
    if (writers != WRITERS_MANY)
        atomic_store_explicit(word, have | mask, memory_order_relaxed);
    else
        atomic_fetch_or_explicit(word, mask, memory_order_relaxed);
    return 1;
}

static inline int has_bits(const _Atomic uint64_t *word, uint64_t mask)
{
    return (atomic_load_explicit(word, memory_order_relaxed) & mask) == mask;
}

/* Public calls whose probe the split layout's vector code may be inlined
 * into are compiled twice, for AVX2 and for the baseline, and the loader
 * binds each to the one the processor runs (an ifunc): AVX2 has the
 * per-lane shifts and 32-bit multiplies the masks need, which the baseline
 * does lane by lane. SKETCH_PORTABLE builds the baseline alone, so that
 * tests can run it on any machine; so does clang, whose version 14 gives a
 * cloned function no symbol under its own name for callers in other files
 * (the fuzzing build links so), and so do sanitized builds, whose
 * instrumented resolvers would run before the sanitizer's runtime is up
 * (ThreadSanitizer crashes there). PROBE_CLONES_NOINLINE marks the
 * functions that must stay out of line, which GCC could inline clone into
 * clone. */
#if defined(SPLIT_VECTOR) && defined(__x86_64__) && !defined(SKETCH_PORTABLE) && \
    !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define PROBE_CLONES __attribute__((target_clones("avx2", "default")))
#define PROBE_IFUNC 1 /* bloom.c's single calls: variants written by hand */
#endif
#endif
#ifndef PROBE_CLONES
#define PROBE_CLONES
#endif
#define PROBE_CLONES_NOINLINE PROBE_CLONES __attribute__((noinline))

/* Bit by bit, stopping at the first that is clear: for one call at a time,
 * an absent item then runs a third of the instructions, so more calls fit
 * in the processor's window and more of their cache misses overlap, which
 * outweighs the mispredicted exits (docs/benchmarks.md). */
static inline int blocked_line_has(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        unsigned pos = (unsigned)(x >> 55);
        if (!has_bits(&line[pos >> 6], word_bit(pos & 63)))
            return 0;
    }
    return 1;
}

/* Every bit, with no branch after the load, for the batch ring: there the
 * line is in L1 when it is tested and the misses of many items overlap
 * already, so stopping early saves nothing, and a branch per bit, whose
 * outcome is random while the filter fills, would only add mispredictions.
 * Bit 0 of each term is the complement of one wanted bit; the bits above
 * it are ignored. */
static inline int blocked_line_has_all(const _Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t missing = 0, x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        unsigned pos = (unsigned)(x >> 55);
        missing |= ~word_value(&line[pos >> 6]) >> (pos & 63);
    }
    return (missing & 1) == 0;
}

/* The missing bits of an item in its line, bit i for its i-th position,
 * found without a branch per bit (whose outcome is random while the filter
 * fills); its positions are left in pos. */
static inline uint64_t blocked_missing(const _Atomic uint64_t *line, uint64_t h2, unsigned k,
                                       unsigned pos[SK_BLOOM_MAX_HASHES])
{
    uint64_t missing = 0, x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        pos[i] = (unsigned)(x >> 55);
        uint64_t have = atomic_load_explicit(&line[pos[i] >> 6], memory_order_relaxed);
        missing |= (uint64_t)((have & word_bit(pos[i] & 63)) == 0) << i;
    }
    return missing;
}

/* Sets an item's bits in its line; 1 if some were missing. Any number of
 * writers: each missing bit takes a locked OR (see set_bits). */
static inline int blocked_line_set_shared(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    unsigned pos[SK_BLOOM_MAX_HASHES];
    uint64_t missing = blocked_missing(line, h2, k, pos);
    for (uint64_t m = missing; m != 0; m &= m - 1) {
        unsigned p = pos[__builtin_ctzll(m)];
        atomic_fetch_or_explicit(&line[p >> 6], word_bit(p & 63), memory_order_relaxed);
    }
    return missing != 0;
}

/* One writer, storing only for an item that adds a bit: then every word is
 * written back with its bit set, one branch per item rather than per bit. */
static inline int blocked_line_set_if_new(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    unsigned pos[SK_BLOOM_MAX_HASHES];
    if (blocked_missing(line, h2, k, pos) == 0)
        return 0;
    for (unsigned i = 0; i < k; i++) {
        _Atomic uint64_t *word = &line[pos[i] >> 6];
        uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
        atomic_store_explicit(word, have | word_bit(pos[i] & 63), memory_order_relaxed);
    }
    return 1;
}

/* One writer, in memory: every word is written back with its bit
 * set, present or not, in one pass with no branch and no locked
 * instruction, 1.5 to 2 times as fast as the locked ORs. */
static inline int blocked_line_set_always(_Atomic uint64_t *line, uint64_t h2, unsigned k)
{
    uint64_t missing = 0, x = h2;
    for (unsigned i = 0; i < k; i++, x = x * LCG_MUL + LCG_ADD) {
        unsigned pos = (unsigned)(x >> 55);
        _Atomic uint64_t *word = &line[pos >> 6];
        uint64_t have = atomic_load_explicit(word, memory_order_relaxed);
        uint64_t bit = word_bit(pos & 63);
        missing |= bit & ~have;
        atomic_store_explicit(word, have | bit, memory_order_relaxed);
    }
    return missing != 0;
}

static inline int blocked_line_set(_Atomic uint64_t *line, uint64_t h2, unsigned k,
                                   enum writers writers)
{
    switch (writers) {
    case WRITERS_ONE_ALWAYS: return blocked_line_set_always(line, h2, k);
    case WRITERS_ONE: return blocked_line_set_if_new(line, h2, k);
    default: return blocked_line_set_shared(line, h2, k);
    }
}

static inline __attribute__((always_inline)) int
split_line_set(_Atomic uint64_t *line, uint64_t h2, unsigned k, enum writers writers)
{
    if (writers == WRITERS_ONE_ALWAYS)
        return split_line_set_always(line, h2, k);
    if (writers == WRITERS_ONE)
        return split_line_set_if_new(line, h2, k);
    return split_line_set_missing(line, h2, k, 1);
}

/* Sets an item's bits in a layer; 1 if any was missing. The caller counts. */
static inline int layer_set(struct layer *l, sk_bloom_layout layout, struct item_hash h,
                     enum writers writers)
{
    if (layout == SK_BLOOM_BLOCKED)
        return blocked_line_set(blocked_line(l, h.h1), h.h2, layer_hashes(l), writers);
    if (layout == SK_BLOOM_SPLIT)
        return split_line_set(blocked_line(l, h.h1), h.h2, layer_hashes(l), writers);
    int changed = 0;
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < layer_hashes(l); i++, x = x * LCG_MUL + step) {
        uint64_t bit = reduce(x, l->bits);
        changed |= set_bits(&l->words[bit >> 6], word_bit(bit & 63), writers);
    }
    return changed;
}

static inline void layer_count(struct layer *l, uint64_t added, enum writers writers)
{
    if (added == 0)
        return;
    if (writers != WRITERS_MANY)
        atomic_store_explicit(&l->count,
                              atomic_load_explicit(&l->count, memory_order_relaxed) + added,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&l->count, added, memory_order_relaxed);
}

static inline int layer_add(struct layer *l, sk_bloom_layout layout, struct item_hash h,
                     enum writers writers)
{
    int changed = layer_set(l, layout, h, writers);
    layer_count(l, (uint64_t)changed, writers);
    return changed;
}

static inline int layer_contains(const struct layer *l, sk_bloom_layout layout, struct item_hash h)
{
    if (layout == SK_BLOOM_BLOCKED)
        return blocked_line_has(blocked_line(l, h.h1), h.h2, layer_hashes(l));
    if (layout == SK_BLOOM_SPLIT)
        return split_line_has(blocked_line(l, h.h1), h.h2, layer_hashes(l));
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < layer_hashes(l); i++, x = x * LCG_MUL + step) {
        uint64_t bit = reduce(x, l->bits);
        if (!has_bits(&l->words[bit >> 6], word_bit(bit & 63)))
            return 0;
    }
    return 1;
}

/* The indices of the words an add of h may change in layer l, into words;
 * their number: one line's first for blocked and split filters, k for
 * classic. */
static inline unsigned layer_words(const struct layer *l, sk_bloom_layout layout,
                                   struct item_hash h, uint64_t words[SK_BLOOM_MAX_HASHES])
{
    if (layout != SK_BLOOM_CLASSIC) {
        words[0] = (uint64_t)(blocked_line(l, h.h1) - l->words);
        return 1;
    }
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < layer_hashes(l); i++, x = x * LCG_MUL + step)
        words[i] = reduce(x, l->bits) >> 6;
    return layer_hashes(l);
}

/* Starts loading the memory an item touches, without waiting for it. */
static inline void layer_prefetch(const struct layer *l, sk_bloom_layout layout,
                                  struct item_hash h, int for_write)
{
    if (layout != SK_BLOOM_CLASSIC) {
        if (for_write)
            __builtin_prefetch((const void *)blocked_line(l, h.h1), 1);
        else
            __builtin_prefetch((const void *)blocked_line(l, h.h1), 0);
        return;
    }
    uint64_t x = h.h1, step = h.h2 | 1;
    for (unsigned i = 0; i < layer_hashes(l); i++, x = x * LCG_MUL + step) {
        const void *p = (const void *)&l->words[reduce(x, l->bits) >> 6];
        if (for_write)
            __builtin_prefetch(p, 1);
        else
            __builtin_prefetch(p, 0);
    }
}

#endif
