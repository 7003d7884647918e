/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cf_dump.c: CF.SCANDUMP and CF.LOADCHUNK, which move a Cuckoo filter
 * between servers in pieces, in RedisBloom's bytes (docs/cuckoo-format.md):
 * a 38-byte header at iterator 0, then the slots, so that a dump taken
 * from either server restores on the other.
 *
 * A restore begins with the header on an empty key, which then holds a
 * filter that answers nothing and takes only the restore's next pieces
 * (cf_open), in order, until its last slot has come. Unlike RedisBloom,
 * which does not send them, every piece replicates, so replicas end with
 * the same filter.
 */

#include "cf_commands.h"
#include "cf_type.h"
#include "common.h"

/* The most one CF.SCANDUMP reply carries, as RedisBloom's. */
#define SCANDUMP_PIECE (16u << 20)

/* CF.SCANDUMP key iterator: [next iterator, piece], or [0, nil] when done
 * or when the filter holds no item. */
int cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    long long iterator;
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK || iterator < 0)
        return RM_ReplyWithError(ctx, "Invalid position");
    RedisModuleKey *key;
    sk_cuckoo *c;
    if (cf_open(ctx, argv[1], RM_READ, &key, &c) != RM_OK)
        return RM_OK;
    if (c == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    }
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    RM_ReplyWithArray(ctx, 2);
    uint64_t next = (uint64_t)iterator;
    const void *piece = NULL;
    size_t len = 0;
    uint8_t header[SK_CUCKOO_DUMP_HEADER_SIZE];
    if (info.items == 0) {
        next = 0;
    } else if (iterator == 0) {
        sk_cuckoo_dump_header(c, header);
        next = 1;
        piece = header;
        len = sizeof header;
    } else if (sk_cuckoo_dump_piece(c, &next, SCANDUMP_PIECE, &piece, &len) != 1) {
        next = 0;
    }
    RM_ReplyWithLongLong(ctx, (long long)next);
    if (next == 0)
        RM_ReplyWithNull(ctx);
    else
        RM_ReplyWithStringBuffer(ctx, piece, len);
    RM_CloseKey(key);
    return RM_OK;
}

/* The header: a new filter of its shape on the empty key, restoring. */
static int load_header(RedisModuleCtx *ctx, RedisModuleKey *key, const char *data, size_t len)
{
    if (len != SK_CUCKOO_DUMP_HEADER_SIZE) {
        RM_ReplyWithError(ctx, "Invalid header");
        return RM_ERR;
    }
    uint64_t limit = key_limit(ctx);
    sk_cuckoo *c;
    int rc = sk_cuckoo_restore_begin(&c, data, len, limit, &module_allocator);
    if (rc == SK_EBUDGET) {
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
        return RM_ERR;
    }
    if (rc != SK_OK) {
        RM_ReplyWithError(ctx, "Couldn't create filter!");
        return RM_ERR;
    }
    /* The pieces are RedisBloom's bytes, as its AOF rewrite replays them,
     * so the filter takes its type, which saves as RedisBloom loads. */
    RM_ModuleTypeSetValue(key, cf_rb_type, c);
    return RM_OK;
}

/* CF.LOADCHUNK key iterator data */
int cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    long long iterator;
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK || iterator == 0)
        return RM_ReplyWithError(ctx, "Invalid position");
    size_t len;
    const char *data = RM_StringPtrLen(argv[3], &len);
    RedisModuleKey *key;
    void *value;
    if (blob_open(ctx, argv[1], RM_READ | RM_WRITE, &cf_family, &key, &value) != RM_OK)
        return RM_OK;
    sk_cuckoo *c = value;
    int rc = RM_ERR;
    if (iterator == 1 && c != NULL) {
        RM_ReplyWithError(ctx, "ERR item exists");
    } else if (iterator == 1) {
        rc = load_header(ctx, key, data, len);
    } else if (c == NULL) {
        RM_ReplyWithError(ctx, "ERR not found");
    } else if (!sk_cuckoo_restoring(c)) {
        RM_ReplyWithError(ctx, "ERR the filter is complete: a restore starts with its header "
                               "on an empty key");
    } else if (iterator < 0 || sk_cuckoo_restore_piece(c, (uint64_t)iterator, data, len) != SK_OK) {
        RM_ReplyWithError(ctx, "Couldn't load chunk!");
    } else {
        rc = RM_OK;
    }
    RM_CloseKey(key);
    if (rc != RM_OK)
        return RM_OK;
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cf.loadchunk", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}
