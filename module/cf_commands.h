/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cf_commands.h: what the CF.* command files share: cf_commands.c, which
 * registers them all, and cf_dump.c (CF.SCANDUMP and CF.LOADCHUNK).
 */
#ifndef SKETCH_MODULE_CF_COMMANDS_H
#define SKETCH_MODULE_CF_COMMANDS_H

#include "rm_api.h"
#include "sketch.h"

/* Opens key for a command: RM_OK with *c its filter, or NULL if the key is
 * empty. Replies and returns RM_ERR, the key closed, for a key of another
 * type (WRONGTYPE) or a filter whose restore has not finished. */
int cf_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
            sk_cuckoo **c);

int cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif
