/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_chain.h: Bloom filter keys of RedisBloom's type, MBbloom--, which hold
 * RedisBloom's own filter (sk_sbchain) and keep its hashing, its bits and
 * its RDB encoding, so that a filter loaded from RedisBloom answers as it
 * did and saves in a form RedisBloom loads again (bf_chain.c). The BF.*
 * commands (bf_commands.c, bf_info.c, bf_dump.c) hand such keys here.
 */
#ifndef SKETCH_MODULE_BF_CHAIN_H
#define SKETCH_MODULE_BF_CHAIN_H

#include "rm_api.h"
#include "sketch.h"

extern RedisModuleType *chain_type;

int chain_type_create(RedisModuleCtx *ctx);

/* A new chain, error rate, capacity and expansion (0: non-scaling) as
 * BF.RESERVE takes them; NULL after replying why not. */
sk_sbchain *chain_create(RedisModuleCtx *ctx, double error_rate, long long capacity,
                         long long expansion);

/* Adds the items and replies a boolean (single) or an array of them that
 * ends at the first error; returns whether any was new, and in *applied
 * how many were added before that error. */
int chain_add_items(RedisModuleCtx *ctx, sk_sbchain *c, RedisModuleString **items, int count,
                    int single, int *applied);

/* BF.EXISTS and BF.MEXISTS's replies for the items. */
void chain_exists(RedisModuleCtx *ctx, const sk_sbchain *c, RedisModuleString **items,
                  int count, int single);

/* BF.CARD's count, BF.INFO's five values, BF.SCANDUMP's piece. */
uint64_t chain_count(const sk_sbchain *c);
void chain_info_values(const sk_sbchain *c, long long values[5], int *nonscaling);
int chain_scandump(RedisModuleCtx *ctx, const sk_sbchain *c, long long iterator);
int chain_debug(RedisModuleCtx *ctx, const sk_sbchain *c);

/* BF.LOADCHUNK's pieces: the header on an empty key, which the key then
 * holds restoring (a library status, nothing replied), and a chunk of a
 * chain being restored (RM_OK, or RM_ERR after replying why not). */
int chain_load_header(RedisModuleCtx *ctx, RedisModuleKey *key, const char *data, size_t len);
int chain_load_chunk(RedisModuleCtx *ctx, sk_sbchain *c, long long iterator, const char *data,
                     size_t len);

/* A chain whose restore has not finished is refused, its key closed and
 * the error replied (1); 0 otherwise. */
int chain_refuse_restoring(RedisModuleCtx *ctx, RedisModuleKey *key, const sk_sbchain *c);

#endif
