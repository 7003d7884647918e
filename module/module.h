/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.h: the two halves of sketch.so that module.c registers: the BF.*
 * commands with their data type (bf_commands.c) and the HLL.* commands with
 * theirs (hll_commands.c).
 */
#ifndef SKETCH_MODULE_H
#define SKETCH_MODULE_H

#include "rm_api.h"

/* Registers the BF.* commands and the Bloom type; RM_ERR on failure. */
int bloom_register(RedisModuleCtx *ctx);
/* Registers the HLL.* commands and the HyperLogLog type. */
int hll_register(RedisModuleCtx *ctx);

#endif
