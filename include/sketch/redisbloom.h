/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sketch/redisbloom.h: the values of RedisBloom 2.x's Redis data types read
 * into the library's families and written back, field for field, so that a
 * server with sketch.so loads RedisBloom's RDB files and DUMP payloads and
 * writes ones that RedisBloom loads.
 *
 * A Redis module value is a sequence of typed fields (unsigned, signed,
 * double, string), not one byte string, so a load reads through the
 * caller's sk_rdb_reader and a save writes through its sk_rdb_writer; the
 * module binds them to Redis's RDB calls, a test or a fuzzer to a buffer.
 *
 *     type        family      encvers read   written
 *     MBbloom--   sk_sbchain  0 to 4         4
 *     MBbloomCF   sk_cuckoo   4              4
 *     CMSk-TYPE   sk_cms      0              0
 *     TopK-TYPE   sk_topk     0              0
 *     TDIS-TYPE   sk_tdigest  0              0
 *
 * Each load checks every field against the others and against the
 * family's limits before it allocates, and fails with SK_ECORRUPT (or the
 * reader's error, SK_ETRUNCATED, or SK_EBUDGET past max_memory, 0 for
 * none; SK_EVERSION for an encver not in the table) without a partial
 * value. The field layouts are docs/redisbloom-rdb.md.
 */
#ifndef SKETCH_REDISBLOOM_H
#define SKETCH_REDISBLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/cms.h"
#include "sketch/core.h"
#include "sketch/cuckoo.h"
#include "sketch/sbchain.h"
#include "sketch/tdigest.h"
#include "sketch/topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each call reads the next field: SK_OK, or an error (SK_ETRUNCATED when
 * none is left) that the load returns. A string stays valid until the
 * reader's next call. */
typedef struct sk_rdb_reader {
    void *ctx;
    int (*load_unsigned)(void *ctx, uint64_t *out);
    int (*load_signed)(void *ctx, int64_t *out);
    int (*load_double)(void *ctx, double *out);
    int (*load_string)(void *ctx, const void **data, size_t *len);
} sk_rdb_reader;

typedef struct sk_rdb_writer {
    void *ctx;
    void (*save_unsigned)(void *ctx, uint64_t value);
    void (*save_signed)(void *ctx, int64_t value);
    void (*save_double)(void *ctx, double value);
    void (*save_string)(void *ctx, const void *data, size_t len);
} sk_rdb_writer;

#define SK_REDISBLOOM_BF_ENCVER 4
#define SK_REDISBLOOM_CF_ENCVER 4
#define SK_REDISBLOOM_CMS_ENCVER 0
#define SK_REDISBLOOM_TOPK_ENCVER 0
#define SK_REDISBLOOM_TDIGEST_ENCVER 0

SK_API int sk_sbchain_load_redisbloom(sk_sbchain **out, const sk_rdb_reader *r, int encver,
                                      uint64_t max_memory, const sk_allocator *allocator);
SK_API void sk_sbchain_save_redisbloom(const sk_sbchain *c, const sk_rdb_writer *w);

/* A filter still restoring from CF.LOADCHUNK pieces (sk_cuckoo_restoring)
 * is saved with its progress in the bits of max_iterations above the 16
 * that RedisBloom keeps, so that RedisBloom ignores it and a load here
 * restores the restoring state. Encvers 2 and 3 (RedisBloom 2.0) are
 * refused with SK_EINCOMPAT: 2.0 hashed items as no later release does,
 * so read today most of its items would answer "absent". The filter keeps
 * max_memory as its budget for growth. */
SK_API int sk_cuckoo_load_redisbloom(sk_cuckoo **out, const sk_rdb_reader *r, int encver,
                                     uint64_t max_memory, const sk_allocator *allocator);
SK_API void sk_cuckoo_save_redisbloom(const sk_cuckoo *c, const sk_rdb_writer *w);

/* Dimensions past SK_CMS_MAX_CELLS: SK_ETOOLARGE. */
SK_API int sk_cms_load_redisbloom(sk_cms **out, const sk_rdb_reader *r, int encver,
                                  uint64_t max_memory, const sk_allocator *allocator);
SK_API void sk_cms_save_redisbloom(const sk_cms *c, const sk_rdb_writer *w);

/* The heap is RedisBloom's raw structs, which the save assembles in a
 * block of k x 24 bytes: it can fail (SK_ENOMEM), and then writes
 * nothing. Its pointers are written as zeros; items whole (RedisBloom
 * stops at a NUL inside an item, whose entry a load here refuses). */
SK_API int sk_topk_load_redisbloom(sk_topk **out, const sk_rdb_reader *r, int encver,
                                   uint64_t max_memory, const sk_allocator *allocator);
SK_API int sk_topk_save_redisbloom(const sk_topk *t, const sk_rdb_writer *w);

/* RedisBloom saves a t-digest compressed: the save writes a compressed
 * copy, so it can fail (SK_ENOMEM) and then writes nothing; the live
 * digest is unchanged. The budget is checked as sk_tdigest_create checks
 * it, for a full digest of the compression. */
SK_API int sk_tdigest_load_redisbloom(sk_tdigest **out, const sk_rdb_reader *r, int encver,
                                      uint64_t max_memory, const sk_allocator *allocator);
SK_API int sk_tdigest_save_redisbloom(const sk_tdigest *t, const sk_rdb_writer *w);

#ifdef __cplusplus
}
#endif
#endif
