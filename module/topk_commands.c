/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_commands.c: the TOPK.* commands, answering as RedisBloom 2.6 does
 * (replies, RESP3 types and error texts, prefixed "TopK: "), and two of
 * sketch's own, TOPK.EXPORT and TOPK.IMPORT, which move a sketch as the
 * library's bytes.
 *
 *   TOPK.RESERVE key k [width depth decay]
 *   TOPK.ADD key item [item ...]
 *   TOPK.INCRBY key item increment [item increment ...]
 *   TOPK.QUERY key item [item ...]
 *   TOPK.COUNT key item [item ...]
 *   TOPK.LIST key [WITHCOUNT]
 *   TOPK.INFO key
 *   TOPK.EXPORT key
 *   TOPK.IMPORT key bytes
 *
 * A key holds an sk_topk (topk_type.c) in Redis's memory, created within
 * the key's limit. Its decays come from a generator the sketch carries, so
 * every write is deterministic on the same sketch and replicates verbatim:
 * a replica holds the same sketch as its primary, which RedisBloom's
 * rand() does not give. TOPK.INCRBY reads every increment before it adds
 * any, so that a bad one changes nothing (RedisBloom adds those before it,
 * and replicates them all).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "module.h"
#include "topk_type.h"

#define E_INCREMENT                                                                        \
    "TopK: increment must be an integer greater or equal to 0                            " \
    "and smaller or equal to 100,000"

/* Opens a key that must hold a sketch: NULL after replying the error. */
static sk_topk *open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                              RedisModuleKey **key)
{
    return blob_open_existing(&topk_family, ctx, name, mode, key);
}

/* An argument in [1, UINT32_MAX], or the error replied. */
static int parse_u32(RedisModuleCtx *ctx, RedisModuleString *arg, const char *error,
                     uint32_t *out)
{
    long long v;
    if (RM_StringToLongLong(arg, &v) != RM_OK || v < 1 || v > UINT32_MAX) {
        RM_ReplyWithError(ctx, error);
        return RM_ERR;
    }
    *out = (uint32_t)v;
    return RM_OK;
}

/* The sketch the options ask for within the key's limit, or NULL after
 * replying why not. */
static sk_topk *create_sketch(RedisModuleCtx *ctx, sk_topk_options o)
{
    o.max_memory = key_limit(ctx);
    o.allocator = &module_allocator;
    sk_topk *t;
    int rc = sk_topk_create(&t, &o);
    if (rc == SK_OK)
        return t;
    if (rc == SK_EBUDGET) {
        reply_over_key_limit(ctx, "TopK: ", "sketch", sk_topk_create_memory(&o));
        return NULL;
    }
    char message[160];
    if (rc == SK_ETOOLARGE)
        snprintf(message, sizeof message,
                 "TopK: k is at most %u, width x depth at most 2^32", SK_TOPK_MAX_K);
    else
        snprintf(message, sizeof message, "ERR Insufficient memory to create topk data "
                                          "structure");
    RM_ReplyWithError(ctx, message);
    return NULL;
}

/* TOPK.RESERVE key k [width depth decay] */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 6)
        return RM_WrongArity(ctx);
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "TopK: key already exists");
    }
    sk_topk_options o = {0};
    int rc = parse_u32(ctx, argv[2], "TopK: invalid k", &o.k);
    if (rc == RM_OK && argc == 6) {
        rc = parse_u32(ctx, argv[3], "TopK: invalid width", &o.width);
        if (rc == RM_OK)
            rc = parse_u32(ctx, argv[4], "TopK: invalid depth", &o.depth);
        if (rc == RM_OK && (RM_StringToDouble(argv[5], &o.decay) != RM_OK ||
                            !(o.decay > 0 && o.decay <= 1))) {
            RM_ReplyWithError(ctx, "TopK: invalid decay value. must be '<= 1' & '> 0'");
            rc = RM_ERR;
        }
    }
    sk_topk *t = rc == RM_OK ? create_sketch(ctx, o) : NULL;
    if (t == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, blob_type_for(&topk_family, key), t);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "topk.reserve", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* TOPK.ADD key item [item ...]; TOPK.INCRBY key item increment [...]: for
 * each item, the item it pushed out of the top k, or a null. */
static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int by)
{
    if (by ? argc < 4 || argc % 2 == 1 : argc < 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_topk *t = open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (t == NULL)
        return RM_OK;
    int step = by ? 2 : 1;
    RM_ReplyWithArray(ctx, (argc - 2) / step);
    for (int i = 3; by && i < argc; i += 2) {
        long long v;
        if (RM_StringToLongLong(argv[i], &v) != RM_OK || v < 0 || v > SK_TOPK_MAX_INCREMENT) {
            /* Nothing added: the error in every place, which for one item is
             * RedisBloom's reply (for more, RedisBloom's ends short). */
            for (int j = 2; j < argc; j += 2)
                RM_ReplyWithError(ctx, E_INCREMENT);
            RM_CloseKey(key);
            return RM_OK;
        }
    }
    for (int i = 2; i < argc; i += step) {
        long long increment = 1;
        if (by)
            RM_StringToLongLong(argv[i + 1], &increment); /* read above */
        size_t len, out_len;
        const char *item = RM_StringPtrLen(argv[i], &len);
        const void *out;
        int rc = sk_topk_add(t, item, len, (uint32_t)increment, &out, &out_len);
        if (rc == 1)
            RM_ReplyWithStringBuffer(ctx, out, out_len);
        else if (rc == 0)
            RM_ReplyWithNull(ctx);
        else
            RM_ReplyWithError(ctx, "TopK: out of memory for the item");
    }
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, by ? "topk.incrby" : "topk.add", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_OK;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 0);
}

static int cmd_incrby(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 1);
}

/* TOPK.QUERY (in the top k: a boolean in RESP3, 1 or 0 in RESP2) and
 * TOPK.COUNT (its estimate) of items. */
static int read_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int count)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_topk *t = open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    RM_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *item = RM_StringPtrLen(argv[i], &len);
        if (count)
            RM_ReplyWithLongLong(ctx, sk_topk_count(t, item, len));
        else
            RM_ReplyWithBool(ctx, sk_topk_query(t, item, len));
    }
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_query(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return read_command(ctx, argv, argc, 0);
}

static int cmd_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return read_command(ctx, argv, argc, 1);
}

/* TOPK.LIST key [WITHCOUNT]: the items, heaviest first, each followed by
 * its count with WITHCOUNT, which RedisBloom takes in any case and as any
 * prefix of itself. */
static int cmd_list(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RM_WrongArity(ctx);
    int with_count = 0;
    if (argc == 3) {
        size_t len;
        const char *word = RM_StringPtrLen(argv[2], &len);
        if (len > strlen("WITHCOUNT") || strncasecmp(word, "WITHCOUNT", len) != 0)
            return RM_ReplyWithError(ctx, "WITHCOUNT keyword expected");
        with_count = 1;
    }
    RedisModuleKey *key;
    sk_topk *t = open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    sk_topk_info info;
    sk_topk_get_info(t, &info);
    sk_topk_entry *top = RM_TryAlloc((size_t)info.k * sizeof *top);
    int n = top != NULL ? sk_topk_list(t, top, info.k) : SK_ENOMEM;
    if (n < 0) {
        RM_Free(top);
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "TopK: out of memory for the list");
    }
    RM_ReplyWithArray(ctx, (long)n * (1 + with_count));
    for (int i = 0; i < n; i++) {
        RM_ReplyWithStringBuffer(ctx, top[i].item, top[i].len);
        if (with_count)
            RM_ReplyWithLongLong(ctx, top[i].count);
    }
    RM_Free(top);
    RM_CloseKey(key);
    return RM_OK;
}

/* TOPK.INFO key: k, width, depth and decay, a map in RESP3 */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_topk *t = open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    sk_topk_info info;
    sk_topk_get_info(t, &info);
    RM_CloseKey(key);
    RM_ReplyWithMap(ctx, 4);
    RM_ReplyWithSimpleString(ctx, "k");
    RM_ReplyWithLongLong(ctx, info.k);
    RM_ReplyWithSimpleString(ctx, "width");
    RM_ReplyWithLongLong(ctx, info.width);
    RM_ReplyWithSimpleString(ctx, "depth");
    RM_ReplyWithLongLong(ctx, info.depth);
    RM_ReplyWithSimpleString(ctx, "decay");
    return RM_ReplyWithDouble(ctx, info.decay);
}

/* TOPK.EXPORT key; TOPK.IMPORT key bytes: the sketch as the library's bytes
 * (docs/topk-format.md), and back. */
static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_export_command(&topk_family, ctx, argv, argc);
}

static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_import_command(&topk_family, ctx, argv, argc);
}

int topk_register(RedisModuleCtx *ctx)
{
    if (topk_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"topk.reserve", cmd_reserve, "write deny-oom", 1},
        {"topk.add", cmd_add, "write deny-oom", 1},
        {"topk.incrby", cmd_incrby, "write deny-oom", 1},
        {"topk.query", cmd_query, "readonly", 1},
        {"topk.count", cmd_count, "readonly", 1},
        {"topk.list", cmd_list, "readonly", 1},
        {"topk.info", cmd_info, "readonly fast", 1},
        {"topk.export", cmd_export, "readonly", 1},
        {"topk.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
