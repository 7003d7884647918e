/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.c: sketch.so, Bloom filters, HyperLogLog, count-min sketches and
 * top-k for Redis and Valkey.
 *
 *     redis-server --loadmodule /path/to/sketch.so [MAX-KEY-MEMORY <size>]
 *                  [ERROR_RATE <rate>] [INITIAL_SIZE <n>] [EXPANSION <n>]
 *
 * MAX-KEY-MEMORY (default 1gb; a number with an optional kb, mb or gb) is the
 * most memory one key's filter or sketch may take: BF.RESERVE of an absurd
 * capacity, or a scaling filter that would grow past it, gets an error
 * instead of exhausting the server. The settings, RedisBloom's names among
 * them, are in config.c, and CONFIG SET changes them at run time.
 *
 * The commands are in bf_commands.c, bf_info.c and bf_dump.c (BF.*),
 * cms_commands.c (CMS.*), topk_commands.c (TOPK.*), cf_commands.c and
 * cf_dump.c (CF.*) and td_commands.c (TDIGEST.*), all compatible with
 * RedisBloom, and hll_commands.c (HLL.*), their descriptions in
 * command_docs.c. Each family keeps its values in a type of its own
 * (bf_type.c, cms_type.c, topk_type.c, cf_type.c, td_type.c, hll_type.c),
 * saved in RDB and AOF, copied by
 * DUMP/RESTORE and MIGRATE, and replicated as the commands applied them.
 * Aging Bloom filters, which forget, are ABF.* (abf_commands.c, abf_type.c).
 * Distinct counts over sliding windows of time are WHLL.* (whll_commands.c,
 * whll_type.c).
 */
#include "command_docs.h"
#include "common.h"
#include "config.h"
#include "module.h"

#define MODULE_NAME "sketch"
/* MODULE LIST's "ver", in Redis's convention (RedisBloom 2.6.28 says 20628):
 * MAJOR * 10000 + MINOR * 100 + PATCH of the library's version. */
#define MODULE_VERSION (SK_VERSION_MAJOR * 10000 + SK_VERSION_MINOR * 100 + SK_VERSION_PATCH)

__attribute__((visibility("default"))) int
RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rm_bind(ctx) != RM_OK)
        return RM_ERR;
    RM_SetModuleAttribs(ctx, MODULE_NAME, MODULE_VERSION, 1);
    RM_SetModuleOptions(ctx, RM_OPTIONS_HANDLE_IO_ERRORS);
    if (config_load(ctx, argv, argc) != RM_OK)
        return RM_ERR;
    if (config_register(ctx) != RM_OK || bloom_register(ctx) != RM_OK ||
        hll_register(ctx) != RM_OK || cms_register(ctx) != RM_OK ||
        topk_register(ctx) != RM_OK || cf_register(ctx) != RM_OK ||
        td_register(ctx) != RM_OK || whll_register(ctx) != RM_OK ||
        abf_register(ctx) != RM_OK ||
        commands_describe(ctx) != RM_OK)
        return RM_ERR;
    return RM_OK;
}
