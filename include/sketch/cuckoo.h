/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/cuckoo.h: cuckoo filters: set membership with deletes, in about a
 * byte per item (as RedisBloom's CF.* keeps them).
 *
 *     sk_cuckoo *c;
 *     if (sk_cuckoo_new(&c, 100000) != SK_OK) ...   // room for 100,000 items
 *     sk_cuckoo_add(c, "10.0.0.1", 8);              // 1: added
 *     if (sk_cuckoo_contains(c, "10.0.0.1", 8)) ...  // maybe present
 *     sk_cuckoo_delete(c, "10.0.0.1", 8);           // 1: one copy gone
 *     sk_cuckoo_free(c);
 *
 * An item is an 8-bit fingerprint in one of two buckets of bucket_size
 * slots; an absent item matches with probability about 2 x bucket_size x
 * load / 255. Items hash, land and move as in RedisBloom, so that the same
 * commands give the same answers and the same bytes. Delete only what was
 * added: deleting an item never added may remove another's fingerprint.
 * Concurrent readers are fine; a writer needs exclusive access. The
 * formats are docs/cuckoo-format.md.
 */
#ifndef SKETCH_CUCKOO_H
#define SKETCH_CUCKOO_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_cuckoo sk_cuckoo;

#define SK_CUCKOO_MAX_BUCKET_SIZE 255
#define SK_CUCKOO_MAX_ITERATIONS 65535
#define SK_CUCKOO_MAX_EXPANSION 32768
#define SK_CUCKOO_MAX_FILTERS 65535
#define SK_CUCKOO_MAX_BUCKETS (UINT64_C(1) << 55) /* of one sub-filter, as RedisBloom's */

/* Zeroed fields but capacity take the defaults: buckets of 2, 20 moves
 * before an add gives up on a full sub-filter, and a fixed size. */
typedef struct sk_cuckoo_options {
    uint64_t capacity;       /* >= 2 x bucket_size; buckets: capacity / bucket_size,
                                rounded up to a power of 2 */
    uint32_t bucket_size;    /* slots per bucket, 1..255 */
    uint32_t max_iterations; /* 1..65535 */
    uint32_t expansion;      /* 0: fixed; n: a full filter adds a sub-filter with n^i times
                                the first's buckets (n rounded up to a power of 2) */
    uint64_t max_memory;     /* 0: none; else SK_EBUDGET past it, growth included */
    const sk_allocator *allocator; /* NULL: malloc */
} sk_cuckoo_options;

SK_API int sk_cuckoo_create(sk_cuckoo **out, const sk_cuckoo_options *opts);
SK_API uint64_t sk_cuckoo_create_memory(const sk_cuckoo_options *opts); /* 0 if invalid */
SK_API int sk_cuckoo_new(sk_cuckoo **out, uint64_t capacity);
SK_API void sk_cuckoo_free(sk_cuckoo *c);
SK_API int sk_cuckoo_copy(sk_cuckoo **out, const sk_cuckoo *src);
SK_API int sk_cuckoo_clear(sk_cuckoo *c); /* back to one empty sub-filter */
/* The budget growth is held to from now on (0: none), whatever it was
 * created or read with. */
SK_API void sk_cuckoo_set_max_memory(sk_cuckoo *c, uint64_t bytes);

/* 1 when added; sk_cuckoo_add_unique gives 0, adding nothing, if the item
 * may be present. SK_EFULL if a fixed filter has no room, SK_EBUDGET,
 * SK_ETOOLARGE or SK_ENOMEM if it could not grow: the filter unchanged. */
SK_API int sk_cuckoo_add(sk_cuckoo *c, const void *data, size_t len);
SK_API int sk_cuckoo_add_unique(sk_cuckoo *c, const void *data, size_t len);
SK_API int sk_cuckoo_contains(const sk_cuckoo *c, const void *data, size_t len);
/* out[i] = sk_cuckoo_contains(items[i]), the lookups overlapped. */
SK_API void sk_cuckoo_contains_many(const sk_cuckoo *c, const void *const *items,
                                    const size_t *lens, size_t n, uint8_t *out);
SK_API uint64_t sk_cuckoo_count(const sk_cuckoo *c, const void *data, size_t len);
/* 1 if a copy of the item's fingerprint went, 0 if none was there. */
SK_API int sk_cuckoo_delete(sk_cuckoo *c, const void *data, size_t len);
/* Moves fingerprints into older sub-filters, freeing the newest ones it
 * empties (deletes do this on their own past 10% of the items): 1 if
 * anything changed, the count of deletes included, else 0. */
SK_API int sk_cuckoo_compact(sk_cuckoo *c);

typedef struct sk_cuckoo_info {
    uint64_t buckets;   /* of the first sub-filter */
    uint32_t filters;   /* sub-filters */
    uint64_t slots;     /* of all of them */
    uint64_t items;     /* added less deleted */
    uint64_t deletes;   /* since the last compaction */
    uint32_t bucket_size, max_iterations, expansion;
    size_t memory;      /* all it holds (core.h) */
} sk_cuckoo_info;
SK_API void sk_cuckoo_get_info(const sk_cuckoo *c, sk_cuckoo_info *info);

/* The filter as one byte string (docs/cuckoo-format.md). */
SK_API int sk_cuckoo_serialized_size(const sk_cuckoo *c, uint64_t *size);
SK_API int sk_cuckoo_serialize(const sk_cuckoo *c, void *buf, size_t cap, size_t *len);
SK_API int sk_cuckoo_deserialize(sk_cuckoo **out, const void *buf, size_t len,
                                 const sk_allocator *allocator);

/* The filter in pieces, as CF.SCANDUMP gives them (RedisBloom's bytes): a
 * header of SK_CUCKOO_DUMP_HEADER_SIZE, then the buckets. The iterator
 * starts at 1; each piece (at most max bytes) advances it, and 0 pieces
 * are left when it returns 0. */
#define SK_CUCKOO_DUMP_HEADER_SIZE 38
SK_API void sk_cuckoo_dump_header(const sk_cuckoo *c, uint8_t out[SK_CUCKOO_DUMP_HEADER_SIZE]);
SK_API int sk_cuckoo_dump_piece(const sk_cuckoo *c, uint64_t *iterator, size_t max,
                                const void **piece, size_t *len);
/* A filter from a dump's header, restoring until its last byte comes:
 * until then sk_cuckoo_restoring() is 1, adds and deletes are refused
 * (SK_EINCOMPAT), queries answer from the slots come so far, and it takes
 * the pieces, each with the iterator it came with, in order, each within
 * one sub-filter. */
SK_API int sk_cuckoo_restore_begin(sk_cuckoo **out, const void *header, size_t len,
                                   uint64_t max_memory, const sk_allocator *allocator);
SK_API int sk_cuckoo_restore_piece(sk_cuckoo *c, uint64_t iterator, const void *piece,
                                   size_t len);
SK_API int sk_cuckoo_restoring(const sk_cuckoo *c);

#ifdef __cplusplus
}
#endif
#endif
