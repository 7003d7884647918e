/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * td_reads.h: the TDIGEST.* reads (td_reads.c), which td_commands.c
 * registers with the rest of the family.
 */
#ifndef SKETCH_MODULE_TD_READS_H
#define SKETCH_MODULE_TD_READS_H

#include "rm_api.h"

int td_cmd_min(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_max(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_quantile(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_cdf(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_rank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_revrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_byrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_byrevrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_trimmed_mean(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int td_cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif
