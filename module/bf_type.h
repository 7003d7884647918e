/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_type.h: the Bloom filter type of sketch.so (bf_type.c), which the BF.*
 * commands (bf_commands.c, bf_info.c, bf_dump.c) store in keys.
 */
#ifndef SKETCH_MODULE_BF_TYPE_H
#define SKETCH_MODULE_BF_TYPE_H

#include "rm_api.h"
#include "sketch.h"

extern RedisModuleType *bloom_type;

/* Opens key for a command: RM_OK with *filter its filter, or (when chain
 * is not NULL) *chain its filter of RedisBloom's type (bf_chain.h), or
 * both NULL if the key is empty (then *key may be NULL: Redis 7.0 gives no
 * handle for a missing key opened to read, and CloseKey and KeyType accept
 * NULL). Replies WRONGTYPE and returns RM_ERR for a key of another type. */
int open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                sk_bloom **filter, sk_sbchain **chain);

/* Opens a key that must hold a filter, to read: RM_ERR after replying an
 * error ("ERR not found" for an empty key). */
int open_existing(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key,
                  sk_bloom **filter, sk_sbchain **chain);

/* For a command that reads, adds or dumps items: a filter whose BF.LOADCHUNK
 * restore has not finished is refused, its key closed and the error
 * replied (1); 0 for any other filter, or none. */
int refuse_restoring(RedisModuleCtx *ctx, RedisModuleKey *key, const sk_bloom *f);

/* Makes a filter, created by a command or loaded from a dump (RDB,
 * RESTORE, BF.LOADCHUNK), one of the module's: the key's memory limit as
 * its budget, non-scaling ones refusing new items once full, which dumps
 * do not record. */
void bloom_adopt(sk_bloom *f);

/* Adds each item with one (which replies its error and returns a negative
 * value for an item it refuses, else 1 if the item was new, 0 if not),
 * replying a boolean per item until the first refusal, after the array
 * reply the command opened unless single; returns whether any was new,
 * and in *applied how many went in. */
typedef int (*add_one_fn)(RedisModuleCtx *ctx, void *filter, RedisModuleString *item);
int add_each(RedisModuleCtx *ctx, void *filter, add_one_fn one, RedisModuleString **items,
             int count, int single, int *applied);

/* Creates the type with its persistence methods; RM_ERR on failure. */
int bloom_type_create(RedisModuleCtx *ctx);

#endif
