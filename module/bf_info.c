/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_info.c: the BF.* commands that describe a filter: BF.CARD, BF.INFO
 * and BF.DEBUG, in RedisBloom's replies (RESP2 and RESP3).
 */
#include <stdio.h>
#include <string.h>

#include "bf_chain.h"
#include "bf_commands.h"
#include "bf_type.h"
#include "common.h"

/* Room for one line of BF.DEBUG: six numbers of at most 20 digits and
 * their names. */
#define DEBUG_LINE 192

/* BF.CARD key */
int bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    sk_sbchain *c;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ, &key, &f, &c) != RM_OK)
        return RM_OK;
    sk_bloom_info info = {0};
    if (f != NULL)
        sk_bloom_get_info(f, &info);
    RM_ReplyWithLongLong(ctx, (long long)(c != NULL ? chain_count(c) : info.count));
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]: a map of
 * the five (a flat array in RESP2); one field alone is a map of one in
 * RESP3 and, as in RedisBloom, an array of just its value in RESP2. Size is
 * the bytes the filter holds. */
int bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_bloom *f;
    sk_sbchain *c;
    if (open_existing(ctx, argv[1], &key, &f, &c) != RM_OK)
        return RM_OK;
    static const char *const names[5] = {"Capacity", "Size", "Number of filters",
                                         "Number of items inserted", "Expansion rate"};
    static const char *const keywords[5] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS",
                                            "EXPANSION"};
    long long values[5];
    int nonscaling;
    if (c != NULL) {
        chain_info_values(c, values, &nonscaling);
    } else {
        sk_bloom_info info;
        sk_bloom_get_info(f, &info);
        long long mine[5] = {(long long)info.capacity, (long long)info.memory,
                             (long long)info.layers, (long long)info.count,
                             (long long)info.expansion};
        memcpy(values, mine, sizeof values);
        nonscaling = info.expansion == 0;
    }
    int only = -1;
    if (argc == 3) {
        for (int i = 0; i < 5; i++)
            if (arg_is(argv[2], keywords[i]))
                only = i;
        if (only < 0) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, "Invalid information value");
        }
    }
    int named = only < 0 || (RM_GetContextFlags(ctx) & RM_CTX_FLAGS_RESP3);
    if (named)
        RM_ReplyWithMap(ctx, only < 0 ? 5 : 1);
    else
        RM_ReplyWithArray(ctx, 1);
    for (int i = 0; i < 5; i++) {
        if (only >= 0 && i != only)
            continue;
        if (named)
            RM_ReplyWithSimpleString(ctx, names[i]);
        if (i == 4 && nonscaling)
            RM_ReplyWithNull(ctx);
        else
            RM_ReplyWithLongLong(ctx, values[i]);
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.DEBUG key: "size:<items>", then a line per layer in RedisBloom's
 * shape; hashwidth is 64 since every index comes from one 64-bit hash. */
int bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_bloom *f;
    sk_sbchain *c;
    if (open_existing(ctx, argv[1], &key, &f, &c) != RM_OK)
        return RM_OK;
    if (c != NULL) {
        chain_debug(ctx, c);
        RM_CloseKey(key);
        return RM_OK;
    }
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    char line[DEBUG_LINE];
    RM_ReplyWithArray(ctx, 1 + (long)info.layers);
    int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)info.count);
    RM_ReplyWithStringBuffer(ctx, line, (size_t)n);
    for (unsigned i = 0; i < info.layers; i++) {
        sk_bloom_layer layer;
        sk_bloom_get_layer(f, i, &layer);
        n = snprintf(line, sizeof line,
                     "bytes:%llu bits:%llu hashes:%u hashwidth:64 capacity:%llu size:%llu "
                     "ratio:%g",
                     (unsigned long long)layer.bytes, (unsigned long long)layer.bits,
                     layer.hashes, (unsigned long long)layer.capacity,
                     (unsigned long long)layer.count, layer.fp_rate);
        RM_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    RM_CloseKey(key);
    return RM_OK;
}
