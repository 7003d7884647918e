/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h: what the command files of sketch.so share: the module's
 * settings (config.h), its allocator, the key limit and the small helpers
 * for arguments and replies. This file calls none of the command files.
 */
#ifndef SKETCH_MODULE_COMMON_H
#define SKETCH_MODULE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "rm_api.h"
#include "sketch.h"

/* Redis's allocator, for every byte a filter or sketch holds, so that
 * used_memory, MEMORY USAGE and maxmemory see it; no huge-page advice,
 * since the memory returns to Redis's allocator for other uses when a key
 * is freed, and Redis keeps transparent huge pages off for itself
 * (disable-thp) for latency. */
extern const sk_allocator module_allocator;

/* The memory limit of one key for the command running in ctx:
 * MAX-KEY-MEMORY for what clients send, none (0) for what the server
 * replays (the AOF, an RDB, the replication stream from a primary), which
 * must rebuild every key it held. */
uint64_t key_limit(RedisModuleCtx *ctx);

/* Replies "ERR <reason>" for a library status code. */
int reply_status(RedisModuleCtx *ctx, int status);

/* Replies that a new value would pass the key's MAX-KEY-MEMORY:
 * "<prefix>the <what> would take <bytes> bytes, more than ...", or without
 * its size when bytes is 0 (a restore's header does not say it). */
int reply_over_key_limit(RedisModuleCtx *ctx, const char *prefix, const char *what,
                         uint64_t bytes);

/* A command to register: its name in lower case, as RedisBloom registers
 * its own (the server names a command in its arity errors as it was
 * registered), and its flags; its keys are its first argument, or its key
 * specs say otherwise (command_docs.c). */
struct command_entry {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    int lastkey; /* of the first-last-step key range (first 1, step 1) */
};
int register_commands(RedisModuleCtx *ctx, const struct command_entry *commands, size_t n);

/* Where the keys of a command "NAME destination numkeys source..." are
 * (CMS.MERGE, TDIGEST.MERGE), for servers that ask the command (Redis
 * 7.0's cluster routing reads only the first-last-step range, not key
 * specs): the destination and the numkeys keys after numkeys, as far as
 * there are arguments. */
int reply_numkeys_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* The argument as a NUL-free case-insensitive keyword comparison. */
int arg_is(RedisModuleString *arg, const char *keyword);

#endif
