/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_type.h: the HyperLogLog type of sketch.so (hll_type.c), which the
 * HLL.* commands (hll_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_HLL_TYPE_H
#define SKETCH_MODULE_HLL_TYPE_H

#include "rm_api.h"

extern RedisModuleType *hll_type;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int hll_type_create(RedisModuleCtx *ctx);

#endif
