/*
 * common.h: what the command files of sketch.so share: the module's
 * settings and the small helpers for arguments and replies. module.c reads
 * the settings from the load arguments; bf_commands.c and hll_commands.c
 * use them. This file calls none of them.
 */
#ifndef SKETCH_MODULE_COMMON_H
#define SKETCH_MODULE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "rm_api.h"
#include "sketch.h"

/* Settings, from the module's load arguments. */
struct module_config {
    /* The largest filter or sketch one key may hold, in bytes; creating or
     * growing past it is refused with an error. */
    uint64_t max_key_memory;
};
extern struct module_config module_config;

/* Reads the load arguments into module_config: RM_OK, or RM_ERR after
 * logging what is wrong. */
int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Replies "ERR <reason>" for a library status code. */
int reply_status(RedisModuleCtx *ctx, int status);

/* The argument as a NUL-free case-insensitive keyword comparison. */
int arg_is(RedisModuleString *arg, const char *keyword);

#endif
