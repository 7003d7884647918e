/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.h: the families of sketch.so that module.c registers, each as its
 * commands with their data type: BF.* (bf_commands.c), HLL.*
 * (hll_commands.c), CMS.* (cms_commands.c), TOPK.* (topk_commands.c) and
 * CF.* (cf_commands.c) and TDIGEST.* (td_commands.c).
 */
#ifndef SKETCH_MODULE_H
#define SKETCH_MODULE_H

#include "rm_api.h"

/* Registers the BF.* commands and the Bloom type; RM_ERR on failure. */
int bloom_register(RedisModuleCtx *ctx);
/* Registers the HLL.* commands and the HyperLogLog type. */
int hll_register(RedisModuleCtx *ctx);
/* Registers the CMS.* commands and the count-min sketch type. */
int cms_register(RedisModuleCtx *ctx);
/* Registers the TOPK.* commands and the top-k type. */
int topk_register(RedisModuleCtx *ctx);
/* Registers the CF.* commands and the Cuckoo filter type. */
int cf_register(RedisModuleCtx *ctx);
/* Registers the TDIGEST.* commands and the t-digest type. */
int td_register(RedisModuleCtx *ctx);
/* Registers the WHLL.* commands and the sliding-window HyperLogLog type. */
int whll_register(RedisModuleCtx *ctx);
/* Registers the ABF.* commands and the aging Bloom filter type. */
int abf_register(RedisModuleCtx *ctx);

#endif
