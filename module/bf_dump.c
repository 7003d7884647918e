/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_dump.c: BF.SCANDUMP and BF.LOADCHUNK, which move a filter between
 * servers in pieces of its dump (docs/bloom-format.md), as RedisBloom's
 * clients expect: the header first, then the bit arrays.
 *
 * BF.SCANDUMP's iterator is one more than the dump offset where the next
 * piece starts (0 only when there is none): BF.LOADCHUNK receives the
 * iterator returned with a piece, so it knows where that piece ends.
 *
 * A restore begins with the header on an empty key, which then holds an
 * unfinished filter that answers nothing and takes only the restore's next
 * chunks (refuse_restoring, bf_type.c); the chunk that completes the dump
 * checks every sum, and a mismatch drops the key, on replicas too.
 */

#include "bf_chain.h"
#include "bf_commands.h"
#include "bf_type.h"
#include "common.h"

/* The most one BF.SCANDUMP reply carries, far below what a client or the
 * server (proto-max-bulk-len, 512 MB) takes in one bulk string. */
#define SCANDUMP_PIECE (16u << 20)

/* BF.SCANDUMP key iterator */
int bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_bloom *f;
    sk_sbchain *c;
    if (open_existing(ctx, argv[1], &key, &f, &c) != RM_OK || refuse_restoring(ctx, key, f) ||
        chain_refuse_restoring(ctx, key, c))
        return RM_OK;
    long long iterator;
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "Second argument must be numeric");
    }
    if (c != NULL) {
        chain_scandump(ctx, c, iterator);
        RM_CloseKey(key);
        return RM_OK;
    }
    uint64_t size = sk_bloom_dump_size(f);
    uint64_t start = iterator <= 0 ? 0 : (uint64_t)iterator - 1;
    uint64_t len = iterator == 0  ? sk_bloom_dump_header_size(f)
                   : iterator < 0 ? 0
                                  : (size > start ? size - start : 0);
    if (len > SCANDUMP_PIECE)
        len = SCANDUMP_PIECE;
    char *buf = len == 0 ? NULL : RM_TryAlloc(len);
    if (len > 0 && (buf == NULL || sk_bloom_dump_read(f, start, buf, len) != SK_OK)) {
        RM_Free(buf);
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR out of memory reading the filter");
    }
    RM_ReplyWithArray(ctx, 2);
    RM_ReplyWithLongLong(ctx, len == 0 ? 0 : (long long)(start + len + 1));
    RM_ReplyWithStringBuffer(ctx, len == 0 ? "" : buf, len);
    if (buf != NULL)
        RM_Free(buf);
    RM_CloseKey(key);
    return RM_OK;
}

/* The header piece of BF.LOADCHUNK: a new, empty filter of its shape, on an
 * empty key only, so that no chunk can drop a filter that holds items. */
static int load_header(RedisModuleCtx *ctx, RedisModuleKey *key, const char *data, size_t len)
{
    sk_bloom *restored;
    size_t header_len;
    uint64_t limit = key_limit(ctx);
    int rc = sk_bloom_restore_begin(&restored, data, len, &header_len, &module_allocator, limit);
    if (rc == SK_EBUDGET) {
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
        return RM_ERR;
    }
    if (rc == SK_OK && header_len != len) {
        sk_bloom_free(restored);
        rc = SK_ECORRUPT;
    }
    if (rc != SK_OK) {
        RM_ReplyWithError(ctx, "ERR received bad data");
        return RM_ERR;
    }
    bloom_adopt(restored);
    RM_ModuleTypeSetValue(key, bloom_type, restored);
    return RM_OK;
}

/* A piece of the bit arrays; the last one checks the whole filter. */
static int load_chunk(RedisModuleCtx *ctx, RedisModuleKey *key, sk_bloom *f, uint64_t start,
                      const char *data, size_t len)
{
    int rc = sk_bloom_restore_chunk(f, start, data, len);
    if (rc == SK_EINCOMPAT) {
        RM_ReplyWithError(ctx, "ERR the filter is complete: a restore starts with its header "
                               "on an empty key");
        return RM_ERR;
    }
    if (rc == SK_OK && start + len == sk_bloom_dump_size(f) && sk_bloom_restore_finish(f) != SK_OK) {
        /* Replicated as it came, so that replicas and the AOF, which had
         * every earlier chunk, drop the filter too. */
        RM_DeleteKey(key);
        RM_ReplicateVerbatim(ctx);
        RM_ReplyWithError(ctx, "ERR received bad data: checksum mismatch");
        return RM_ERR;
    }
    if (rc != SK_OK) {
        RM_ReplyWithError(ctx, "ERR received bad data");
        return RM_ERR;
    }
    return RM_OK;
}

/* The header of RedisBloom's BF.SCANDUMP, on an empty key. */
static int load_chain_header(RedisModuleCtx *ctx, RedisModuleKey *key, const char *data,
                             size_t len)
{
    int rc = chain_load_header(ctx, key, data, len);
    if (rc == SK_OK)
        return RM_OK;
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
    else
        RM_ReplyWithError(ctx, "ERR received bad data");
    return RM_ERR;
}

/* BF.LOADCHUNK key iterator data. RedisBloom's dump gives its header with
 * iterator 1, this module's with the offset after it, so 1 tells them
 * apart; their chunks both end at iterator - 1. */
int bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    long long iterator;
    size_t len;
    const char *data = RM_StringPtrLen(argv[3], &len);
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK)
        return RM_ReplyWithError(ctx, "ERR Second argument must be numeric");
    int chain_header = iterator == 1;
    if (iterator <= 0 || (!chain_header && (uint64_t)iterator - 1 < len))
        return RM_ReplyWithError(ctx, "ERR received bad data");
    uint64_t start = chain_header ? 0 : (uint64_t)iterator - 1 - len;
    sk_bloom *f;
    sk_sbchain *c;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ | RM_WRITE, &key, &f, &c) != RM_OK)
        return RM_OK;
    int held = f != NULL || c != NULL;
    int header = chain_header || (start == 0 && c == NULL);
    const char *refused = header && held ? "ERR item exists"
                          : !header && !held ? "ERR not found"
                                             : NULL;
    int rc = RM_ERR;
    if (refused != NULL)
        RM_ReplyWithError(ctx, refused);
    else if (chain_header)
        rc = load_chain_header(ctx, key, data, len);
    else if (header)
        rc = load_header(ctx, key, data, len);
    else if (c != NULL)
        rc = chain_load_chunk(ctx, c, iterator, data, len);
    else
        rc = load_chunk(ctx, key, f, start, data, len);
    if (rc == RM_OK) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "bf.loadchunk", argv[1]);
        RM_ReplicateVerbatim(ctx);
        RM_ReplyWithSimpleString(ctx, "OK");
    }
    RM_CloseKey(key);
    return RM_OK;
}
