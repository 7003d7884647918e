/*
 * module.h: what the parts of sketch.so share: the two data types, the
 * module's settings, and small reply helpers.
 */
#ifndef SKETCH_MODULE_H
#define SKETCH_MODULE_H

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

extern RedisModuleType *bloom_type;
extern RedisModuleType *hll_type;

/* Registers the BF.* commands and the Bloom type; RM_ERR on failure. */
int bloom_register(RedisModuleCtx *ctx);
/* Registers the HLL.* commands and the HyperLogLog type. */
int hll_register(RedisModuleCtx *ctx);

/* Replies "ERR <reason>" for a library status code. */
int reply_status(RedisModuleCtx *ctx, int status);

/* The argument as a NUL-free case-insensitive keyword comparison. */
int arg_is(RedisModuleString *arg, const char *keyword);

#endif
