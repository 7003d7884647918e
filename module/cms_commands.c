/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_commands.c: the CMS.* commands, answering as RedisBloom 2.6 does
 * (replies, RESP3 types and error texts, which have no "ERR " prefix), so
 * that its clients work unchanged; and two of sketch's own, CMS.EXPORT and
 * CMS.IMPORT, which move a sketch as the library's bytes, as HLL.EXPORT and
 * HLL.IMPORT do.
 *
 *   CMS.INITBYDIM key width depth
 *   CMS.INITBYPROB key error probability
 *   CMS.INCRBY key item increment [item increment ...]
 *   CMS.QUERY key item [item ...]
 *   CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight [weight ...]]
 *   CMS.INFO key
 *   CMS.EXPORT key
 *   CMS.IMPORT key bytes
 *
 * A key holds an sk_cms (cms_type.c) in Redis's memory, created within the
 * key's limit (key_limit): RedisBloom has none, and allocates whatever
 * width x depth asks. Checks run in RedisBloom's order, so that a command
 * wrong in two ways gets its error: CMS.INITBY* asks whether the key
 * exists before reading its numbers; CMS.INCRBY reads every increment
 * before it adds any, so that a bad one changes nothing.
 *
 * Replication carries what a command did: CMS.INITBYPROB goes as
 * CMS.INITBYDIM with the dimensions it computed; the rest are deterministic
 * on the same sketch and go verbatim.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cms_type.h"
#include "common.h"
#include "module.h"

/* Opens a key that must hold a sketch: NULL after replying the error. */
static sk_cms *open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                             RedisModuleKey **key)
{
    return blob_open_existing(&cms_family, ctx, name, mode, key);
}

/* ---- creation --------------------------------------------------------------- */

/* Creates the sketch o asks for within the key's limit, or replies why not
 * and returns NULL. */
static sk_cms *create_sketch(RedisModuleCtx *ctx, sk_cms_options o)
{
    o.max_memory = key_limit(ctx);
    o.allocator = &module_allocator;
    sk_cms *c;
    int rc = sk_cms_create(&c, &o);
    if (rc == SK_OK)
        return c;
    if (rc == SK_EBUDGET) {
        reply_over_key_limit(ctx, "CMS: ", "sketch", sk_cms_create_memory(&o));
        return NULL;
    }
    char message[160];
    if (rc == SK_ETOOLARGE)
        snprintf(message, sizeof message, "CMS: the sketch would have more than 2^32 counters");
    else if (rc == SK_ENOMEM)
        snprintf(message, sizeof message, "CMS: Insufficient memory to create the key");
    else
        snprintf(message, sizeof message, "CMS: invalid init arguments");
    RM_ReplyWithError(ctx, message);
    return NULL;
}

/* The dimensions of CMS.INITBYDIM: RedisBloom's long long of at least 1; a
 * width or depth past 32 bits is past any sketch the library makes. */
static int parse_dimension(RedisModuleCtx *ctx, RedisModuleString *arg, const char *error,
                           uint32_t *out)
{
    long long v;
    if (RM_StringToLongLong(arg, &v) != RM_OK || v < 1) {
        RM_ReplyWithError(ctx, error);
        return RM_ERR;
    }
    if (v > UINT32_MAX) {
        RM_ReplyWithError(ctx, "CMS: the sketch would have more than 2^32 counters");
        return RM_ERR;
    }
    *out = (uint32_t)v;
    return RM_OK;
}

static int parse_fraction(RedisModuleCtx *ctx, RedisModuleString *arg, const char *error,
                          double *out)
{
    if (RM_StringToDouble(arg, out) != RM_OK || !(*out > 0 && *out < 1)) {
        RM_ReplyWithError(ctx, error);
        return RM_ERR;
    }
    return RM_OK;
}

/* CMS.INITBYDIM key width depth; CMS.INITBYPROB key error probability */
static int init_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int by_prob)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "CMS: key already exists");
    }
    sk_cms_options o = {0};
    int rc = by_prob
                 ? parse_fraction(ctx, argv[2], "CMS: invalid overestimation value", &o.error)
                 : parse_dimension(ctx, argv[2], "CMS: invalid width", &o.width);
    if (rc == RM_OK)
        rc = by_prob ? parse_fraction(ctx, argv[3], "CMS: invalid prob value", &o.delta)
                     : parse_dimension(ctx, argv[3], "CMS: invalid depth", &o.depth);
    sk_cms *c = rc == RM_OK ? create_sketch(ctx, o) : NULL;
    if (c == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, blob_type_for(&cms_family, key), c);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, by_prob ? "cms.initbyprob" : "cms.initbydim",
                           argv[1]);
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    char width[16], depth[16];
    snprintf(width, sizeof width, "%u", (unsigned)info.width);
    snprintf(depth, sizeof depth, "%u", (unsigned)info.depth);
    RM_Replicate(ctx, "CMS.INITBYDIM", "scc", argv[1], width, depth);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

static int cmd_initbydim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return init_command(ctx, argv, argc, 0);
}

static int cmd_initbyprob(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return init_command(ctx, argv, argc, 1);
}

/* ---- counting --------------------------------------------------------------- */

/* CMS.INCRBY key item increment [item increment ...]: each item's estimate
 * after its add, or "CMS: INCRBY overflow" where that reached UINT32_MAX,
 * as RedisBloom replies (the counters stay there, and the total counts the
 * increment). */
static int cmd_incrby(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4 || argc % 2 == 1)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cms *c = open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (c == NULL)
        return RM_OK;
    for (int i = 3; i < argc; i += 2) {
        long long v;
        const char *error = RM_StringToLongLong(argv[i], &v) != RM_OK ? "CMS: Cannot parse number"
                            : v < 0 ? "CMS: Number cannot be negative"
                                    : NULL;
        if (error != NULL) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, error);
        }
    }
    RM_ReplyWithArray(ctx, (argc - 2) / 2);
    int changed = 0;
    for (int i = 2; i < argc; i += 2) {
        long long increment;
        RM_StringToLongLong(argv[i + 1], &increment); /* read above */
        changed |= increment > 0;
        size_t len;
        const char *item = RM_StringPtrLen(argv[i], &len);
        uint32_t estimate;
        sk_cms_add(c, item, len, (uint64_t)increment, &estimate);
        if (estimate == UINT32_MAX)
            RM_ReplyWithError(ctx, "CMS: INCRBY overflow");
        else
            RM_ReplyWithLongLong(ctx, estimate);
    }
    RM_CloseKey(key);
    /* Increments of 0 change nothing, and are neither announced nor sent. */
    if (changed) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cms.incrby", argv[1]);
        RM_ReplicateVerbatim(ctx);
    }
    return RM_OK;
}

/* CMS.QUERY key item [item ...] */
static int cmd_query(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cms *c = open_existing(ctx, argv[1], RM_READ, &key);
    if (c == NULL)
        return RM_OK;
    RM_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *item = RM_StringPtrLen(argv[i], &len);
        RM_ReplyWithLongLong(ctx, sk_cms_count(c, item, len));
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* ---- merging ---------------------------------------------------------------- */

/* The first argument that is WEIGHTS, in any case, as RedisBloom finds it:
 * a source key of that name is taken for the keyword. */
static int weights_at(RedisModuleString **args, int n)
{
    for (int i = 0; i < n; i++)
        if (arg_is(args[i], "WEIGHTS"))
            return i;
    return -1;
}

/* Reads the sources and weights of CMS.MERGE (args: what follows numkeys)
 * into srcs and weights, or replies the error of the first that is wrong. */
static int merge_sources(RedisModuleCtx *ctx, const sk_cms *dst, RedisModuleString **args,
                         int n, long long numkeys, const sk_cms **srcs, int64_t *weights)
{
    int at = weights_at(args, n);
    if (at < 0 && numkeys != n)
        return RM_ReplyWithError(ctx, "CMS: wrong number of keys"), RM_ERR;
    if (at >= 0 && (at != numkeys || n != 1 + 2 * numkeys))
        return RM_ReplyWithError(ctx, "CMS: wrong number of keys/weights"), RM_ERR;
    sk_cms_info want, info;
    sk_cms_get_info(dst, &want);
    for (int i = 0; i < numkeys; i++) {
        long long w = 1;
        if (at >= 0 && RM_StringToLongLong(args[numkeys + 1 + i], &w) != RM_OK)
            return RM_ReplyWithError(ctx, "CMS: invalid weight value"), RM_ERR;
        weights[i] = w;
        RedisModuleKey *key;
        sk_cms *c = open_existing(ctx, args[i], RM_READ, &key);
        if (c == NULL)
            return RM_ERR;
        RM_CloseKey(key); /* the value stays while the command runs */
        sk_cms_get_info(c, &info);
        if (info.width != want.width || info.depth != want.depth)
            return RM_ReplyWithError(ctx, "CMS: width/depth is not equal"), RM_ERR;
        srcs[i] = c;
    }
    return RM_OK;
}

/* CMS.MERGE destination numkeys source [source ...] [WEIGHTS weight ...]:
 * the destination, which must exist, becomes the weighted sum; if a
 * counter would leave [0, 2^32) or the total [0, 2^63), nothing changes. */
static int cmd_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (RM_IsKeysPositionRequest(ctx))
        return reply_numkeys_keys(ctx, argv, argc);
    if (argc < 4)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cms *dst = open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (dst == NULL)
        return RM_OK;
    long long numkeys;
    const char *error = NULL;
    if (RM_StringToLongLong(argv[2], &numkeys) != RM_OK)
        error = "CMS: invalid numkeys";
    else if (numkeys <= 0)
        error = "CMS: Number of keys must be positive";
    else if (numkeys > argc) /* then too many for the arguments, which the next check says */
        numkeys = argc;
    const sk_cms **srcs = NULL;
    int64_t *weights = NULL;
    if (error == NULL) {
        srcs = RM_TryAlloc((size_t)numkeys * sizeof *srcs);
        weights = RM_TryAlloc((size_t)numkeys * sizeof *weights);
        if (srcs == NULL || weights == NULL)
            error = "CMS: Insufficient memory";
    }
    int merged = 0, overflow = 0;
    if (error != NULL)
        RM_ReplyWithError(ctx, error);
    else if (merge_sources(ctx, dst, argv + 3, argc - 3, numkeys, srcs, weights) == RM_OK)
        merged = !(overflow = sk_cms_merge_weighted(dst, srcs, weights, (size_t)numkeys) != SK_OK);
    RM_Free(srcs);
    RM_Free(weights);
    RM_CloseKey(key);
    if (overflow)
        return RM_ReplyWithError(ctx, "CMS: MERGE overflow");
    if (!merged)
        return RM_OK;
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cms.merge", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- describing and moving ---------------------------------------------------- */

/* CMS.INFO key: width, depth and count, a map in RESP3 */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cms *c = open_existing(ctx, argv[1], RM_READ, &key);
    if (c == NULL)
        return RM_OK;
    sk_cms_info info;
    sk_cms_get_info(c, &info);
    RM_CloseKey(key);
    RM_ReplyWithMap(ctx, 3);
    RM_ReplyWithSimpleString(ctx, "width");
    RM_ReplyWithLongLong(ctx, info.width);
    RM_ReplyWithSimpleString(ctx, "depth");
    RM_ReplyWithLongLong(ctx, info.depth);
    RM_ReplyWithSimpleString(ctx, "count");
    /* The total saturates at 2^64 - 1; RedisBloom's wraps, and prints as a
     * signed number past 2^63. */
    return RM_ReplyWithLongLong(ctx, info.total > LLONG_MAX ? LLONG_MAX : (long long)info.total);
}

/* CMS.EXPORT key; CMS.IMPORT key bytes: the sketch as the library's bytes
 * (docs/cms-format.md), and back. */
static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_export_command(&cms_family, ctx, argv, argc);
}

static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_import_command(&cms_family, ctx, argv, argc);
}

int cms_register(RedisModuleCtx *ctx)
{
    if (cms_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"cms.initbydim", cmd_initbydim, "write deny-oom", 1},
        {"cms.initbyprob", cmd_initbyprob, "write deny-oom", 1},
        {"cms.incrby", cmd_incrby, "write deny-oom fast", 1},
        {"cms.query", cmd_query, "readonly fast", 1},
        /* its sources: in its key specs (command_docs.c) and asked of it */
        {"cms.merge", cmd_merge, "write deny-oom getkeys-api", 1},
        {"cms.info", cmd_info, "readonly fast", 1},
        {"cms.export", cmd_export, "readonly", 1},
        {"cms.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
