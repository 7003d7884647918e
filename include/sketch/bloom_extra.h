/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/bloom_extra.h: the Bloom filter calls beyond the everyday ones of
 * sketch/bloom.h: sizing and planning, batches, calls by hash, threads,
 * budgets, layers and estimates, files changed in place, and dumps in
 * pieces.
 *
 * Threads. A filter of fixed size may be used by any number of threads at
 * once for add and contains: bits are only ever set, each with a relaxed
 * atomic OR of a 64-bit word (or, with one writer, a relaxed atomic store),
 * and read with relaxed atomic loads (split filters: vector loads of whole
 * lines, which bits that are only ever set make as good). An add that has
 * returned is seen by every contains that starts after it in happens-before
 * order (the same thread, or any thread that synchronized with it); a
 * contains concurrent with the add of the same item may answer either way.
 * Adds from several threads at once need concurrent_writers (or
 * sk_bloom_set_concurrent_writers); by default one thread at a time adds.
 * Scalable filters, merge, intersect, clear, save and free need exclusive
 * access.
 */
#ifndef SKETCH_BLOOM_EXTRA_H
#define SKETCH_BLOOM_EXTRA_H

#include "sketch/bloom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layer i of a scalable filter of rate p has rate p/2^(i+1) up to layer
 * SK_BLOOM_RATE_HALVINGS, then p 2^-H 6/(pi^2 j^2) for its j-th layer past
 * it, so that even a chain of thousands of layers sums to p. */
#define SK_BLOOM_RATE_HALVINGS 40

/* The shape of one layer. */
typedef struct sk_bloom_layer {
    uint64_t bits;
    unsigned hashes;
    uint64_t capacity;
    double fp_rate;       /* the rate it is sized for; 0 for explicit sizes */
    uint64_t bytes;       /* of its bit array */
    uint64_t count;       /* items added that set a bit (0 for a planned layer) */
} sk_bloom_layer;

/* The smallest bit count m and the hash count k with which *layout meets
 * false-positive rate fp_rate at `capacity` items, by the exact rate of the
 * layout with integer k: for classic, about the textbook m = -n ln p /
 * (ln 2)^2 and k = (m/n) ln 2. SK_BLOOM_AUTO is replaced by the choice.
 * Any rate in (0, 0.5] is sized, also those below SK_BLOOM_MIN_FP_RATE that
 * the later layers of a scalable filter get; SK_ETOOLARGE past the limits. */
SK_API int sk_bloom_size_for(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                             uint64_t *bits, unsigned *hashes);

/* Layer `index` (0 the first) of a filter created with opts, as it would be,
 * without allocating anything: SK_EFULL if the chain cannot reach it. */
SK_API int sk_bloom_plan(const sk_bloom_options *opts, unsigned index, sk_bloom_layer *out);

/* The memory (core.h) a filter created with opts would hold, which
 * max_memory is held against; 0 for options sk_bloom_create refuses for
 * another reason. */
SK_API uint64_t sk_bloom_create_memory(const sk_bloom_options *opts);

/* sk_bloom_add with no memory budget for this one add, for replaying adds
 * that were accepted once (a log, a replica); it needs exclusive access. */
SK_API int sk_bloom_add_unlimited(sk_bloom *f, const void *data, size_t len);

/* sk_bloom_add and sk_bloom_contains for n items at once, items[i] of
 * lens[i] bytes, with the memory accesses of many items in flight together:
 * several times faster than one at a time once the filter is larger than
 * the cache. `added` (may be NULL) and `found` receive one 0/1 byte per
 * item. An add batch that fails stops at the item that could not be added;
 * those before it are in. */
SK_API int sk_bloom_add_batch(sk_bloom *f, const void *const *items, const size_t *lens,
                              size_t n, uint8_t *added);
SK_API void sk_bloom_contains_batch(const sk_bloom *f, const void *const *items,
                                    const size_t *lens, size_t n, uint8_t *found);

/* The same by an item's hash, for callers that hash once for many filters
 * or have a hash already: what sk_bloom_add(f, data, len) does is exactly
 * sk_bloom_add_hash(f, sk_bloom_hash_bytes(data, len)). The hash is
 * XXH3-128 (seed 0) of the bytes, its low and high 64-bit halves; a
 * caller's own hash must be as good (its halves independent and uniform).
 * sk_bloom_hash_u64 widens a 64-bit hash, the high half a bijective mix of
 * it: two items then share all their bits when their 64-bit hashes are
 * equal, which among n items happens with probability about n^2 / 2^65. */
typedef struct sk_bloom_hash {
    uint64_t low, high;
} sk_bloom_hash;
SK_API sk_bloom_hash sk_bloom_hash_bytes(const void *data, size_t len);
SK_API sk_bloom_hash sk_bloom_hash_u64(uint64_t hash);
SK_API int sk_bloom_add_hash(sk_bloom *f, sk_bloom_hash h);
SK_API int sk_bloom_contains_hash(const sk_bloom *f, sk_bloom_hash h);
SK_API int sk_bloom_add_hash_batch(sk_bloom *f, const sk_bloom_hash *hashes, size_t n,
                                   uint8_t *added);
SK_API void sk_bloom_contains_hash_batch(const sk_bloom *f, const sk_bloom_hash *hashes,
                                         size_t n, uint8_t *found);

/* Whether adds to f may come from many threads at once (on != 0), as
 * concurrent_writers of sk_bloom_options, for a filter read from a file or
 * dump; call it while no add runs. Off by default: one thread at a time
 * adds (adds from different threads ordered by happens-before: a mutex, a
 * join), while any number may query, and adds set bits with relaxed atomic
 * loads and stores (plain moves), 1.5 to 3 times as fast as the locked ORs
 * that concurrent writers need. Such an add to a filter in memory writes
 * its words back whether or not a bit changed, which needs no branch; a
 * filter changed in place writes only for items that add a bit, so that
 * pages of its file are not dirtied for nothing. Two threads adding at once
 * without it may lose each other's bits: false negatives. Scalable
 * filters need exclusive access whatever it says. */
SK_API void sk_bloom_set_concurrent_writers(sk_bloom *f, int on);

/* The memory budget of a filter read from a file or dump (0: none), as
 * max_memory of sk_bloom_options. */
SK_API void sk_bloom_set_max_memory(sk_bloom *f, uint64_t bytes);

/* Whether f refuses new items once full, as refuse_when_full of
 * sk_bloom_options, for a filter read from a file or dump, which do not
 * record it; call it while no add runs. */
SK_API void sk_bloom_set_refuse_when_full(sk_bloom *f, int on);

/* Layer `index` of f; from index = layers on, the layers growth would add
 * next (SK_EFULL past the limits). */
SK_API int sk_bloom_get_layer(const sk_bloom *f, unsigned index, sk_bloom_layer *out);

/* The false-positive rate the filter would have after `items` distinct
 * items, from the exact formula of its layout. */
SK_API double sk_bloom_expected_fp_rate(const sk_bloom *f, uint64_t items);

/* The number of distinct items, estimated from the bits set (reads every
 * bit array). */
SK_API uint64_t sk_bloom_estimate_items(const sk_bloom *f);

/* A file opened with SK_BLOOM_IN_PLACE is mapped shared and writable, and
 * adds, merges and clears change it directly: an add of a few items to a
 * 1 GB file reads and writes a few chunks of 64 KiB, checking each against
 * its sum before its first change (SK_ECHECKSUM: damaged, and left alone).
 * sk_bloom_sync then writes the sums and counts and flushes the file. An
 * add that has returned survives the process being killed; one that a
 * crash interrupted leaves its chunks marked, which the next open reports
 * in sk_bloom_info.interrupted_chunks, and the next sk_bloom_sync re-sums
 * (the crash guarantee in full is in docs/bloom-format.md). Any number of
 * threads may add to a fixed filter open in place, as under "Threads"
 * above; merge, clear and sync need exclusive access. One process at a
 * time may hold a file in place (SK_EIO with errno EWOULDBLOCK);
 * SK_EINCOMPAT for a file of the format before chunk sums, which
 * sk_bloom_save rewrites in the new one. A mapped file (SK_BLOOM_MAP or
 * SK_BLOOM_IN_PLACE) that shrinks while open raises SIGBUS on an access
 * past its new end.
 *
 * sk_bloom_sync makes the changes to a filter open in place durable: the
 * sums of the chunks changed, the counts, a flush. A scalable filter that has grown a
 * layer since it was opened is written whole instead, as by sk_bloom_save
 * to its path, after its untouched chunks are checked. SK_EINCOMPAT for a
 * filter not open in place. */
SK_API int sk_bloom_sync(sk_bloom *f);

/* The dump in pieces, so that neither side needs a second copy of a large
 * filter. sk_bloom_dump_read copies bytes [offset, offset + len) of the
 * dump; the header part (the first sk_bloom_dump_header_size bytes) carries
 * checksums of the arrays as they are when it is read.
 * sk_bloom_restore_begin builds an empty filter of the shape a header
 * describes and tells how many bytes the header took (SK_EBUDGET, with
 * nothing allocated, if the filter would hold more than max_memory, unless
 * that is 0); sk_bloom_restore_chunk copies array bytes found at `offset` of
 * the dump into it; sk_bloom_restore_finish checks the arrays against the
 * header's checksums (SK_ECHECKSUM). Chunks and the finish are refused
 * (SK_EINCOMPAT) once a restore has finished, and for any other filter.
 * sk_bloom_restoring is 1 from the begin until a finish succeeds; the dump of
 * such a filter carries the header's checksums, not those of its arrays as
 * they are, so that it restores into the same unfinished state, and so does
 * sk_bloom_copy. Its bits are not all in yet: it answers queries wrongly. */
SK_API uint64_t sk_bloom_dump_size(const sk_bloom *f);
SK_API size_t sk_bloom_dump_header_size(const sk_bloom *f);
SK_API int sk_bloom_dump_read(const sk_bloom *f, uint64_t offset, void *buf, size_t len);
SK_API int sk_bloom_restore_begin(sk_bloom **out, const void *header, size_t len,
                                  size_t *header_len, const sk_allocator *allocator,
                                  uint64_t max_memory);
SK_API int sk_bloom_restore_chunk(sk_bloom *f, uint64_t offset, const void *data,
                                  size_t len);
SK_API int sk_bloom_restore_finish(sk_bloom *f);
SK_API int sk_bloom_restoring(const sk_bloom *f);

#ifdef __cplusplus
}
#endif

#endif
