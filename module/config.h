/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h: the module's settings (config.c): read from the load arguments
 * when the server loads sketch.so, then kept as module configs that CONFIG
 * GET and CONFIG SET read and change while it runs.
 */
#ifndef SKETCH_MODULE_CONFIG_H
#define SKETCH_MODULE_CONFIG_H

#include "rm_api.h"
#include "sketch.h"

struct module_config {
    /* The largest filter or sketch one key may hold, in bytes; creating or
     * growing past it is refused with an error. */
    long long max_key_memory;
    /* What BF.ADD, BF.MADD and BF.INSERT create a missing key with. */
    double bf_error_rate;
    long long bf_initial_size;
    long long bf_expansion; /* 0: non-scaling */
    /* The sub-filters at which a Cuckoo filter refuses adds, as
     * RedisBloom's CF_MAX_EXPANSIONS. */
    long long cf_max_expansions;
    /* 1: keys that commands create take RedisBloom's types (MBbloom--,
     * MBbloomCF, CMSk-TYPE, TopK-TYPE, TDIS-TYPE), whose RDB encoding
     * RedisBloom loads back; 0: sketch's own. */
    long long redisbloom_types;
};
extern struct module_config module_config;

/* Whether a filter can be built for this error rate. */
int config_rate_valid(double rate);

/* Reads the load arguments into module_config: RM_OK, or RM_ERR after
 * logging what is wrong. */
int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Registers the settings as module configs, the load arguments as their
 * defaults, and applies what the server's configuration sets. */
int config_register(RedisModuleCtx *ctx);

#endif
