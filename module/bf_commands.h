/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_commands.h: the BF.* commands written outside bf_commands.c, which
 * registers every BF.* command from one table: those that describe a
 * filter (bf_info.c) and those that move it in pieces (bf_dump.c).
 */
#ifndef SKETCH_MODULE_BF_COMMANDS_H
#define SKETCH_MODULE_BF_COMMANDS_H

#include "rm_api.h"

int bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif
