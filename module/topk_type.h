/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_type.h: the top-k type of sketch.so (topk_type.c), which the TOPK.*
 * commands (topk_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_TOPK_TYPE_H
#define SKETCH_MODULE_TOPK_TYPE_H

#include "blob_type.h"
#include "rm_api.h"
#include "sketch.h"

extern RedisModuleType *topk_type;
extern RedisModuleType *topk_rb_type; /* RedisBloom's: TopK-TYPE */
extern const struct blob_family topk_family;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int topk_type_create(RedisModuleCtx *ctx);

#endif
