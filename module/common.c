/* SPDX-License-Identifier: BSD-3-Clause */
/* common.c: the helpers the command files share (see common.h). */
#include "common.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int arg_is(RedisModuleString *arg, const char *keyword)
{
    size_t len;
    const char *s = RM_StringPtrLen(arg, &len);
    return len == strlen(keyword) && strncasecmp(s, keyword, len) == 0;
}

int reply_status(RedisModuleCtx *ctx, int status)
{
    static const char prefix[] = "ERR ";
    char message[128];
    memcpy(message, prefix, sizeof prefix - 1);
    strncpy(message + sizeof prefix - 1, sk_strerror(status),
            sizeof message - sizeof prefix);
    message[sizeof message - 1] = '\0';
    return RM_ReplyWithError(ctx, message);
}

int reply_over_key_limit(RedisModuleCtx *ctx, const char *prefix, const char *what,
                         uint64_t bytes)
{
    char message[192];
    if (bytes == 0)
        snprintf(message, sizeof message,
                 "%sthe %s would take more than the module's MAX-KEY-MEMORY of %lld bytes",
                 prefix, what, module_config.max_key_memory);
    else
        snprintf(message, sizeof message,
                 "%sthe %s would take %llu bytes, more than the module's MAX-KEY-MEMORY of %lld",
                 prefix, what, (unsigned long long)bytes, module_config.max_key_memory);
    return RM_ReplyWithError(ctx, message);
}

static void *module_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return RM_TryAlloc(size); /* NULL when out of memory, where RM_Alloc aborts */
}

static void module_free(void *opaque, void *ptr, size_t size)
{
    (void)opaque;
    (void)size;
    RM_Free(ptr);
}

const sk_allocator module_allocator = {module_alloc, module_free, NULL, 0};

uint64_t key_limit(RedisModuleCtx *ctx)
{
    int flags = RM_GetContextFlags(ctx);
    return flags & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING)
               ? 0
               : (uint64_t)module_config.max_key_memory;
}

int register_commands(RedisModuleCtx *ctx, const struct command_entry *commands, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (RM_CreateCommand(ctx, commands[i].name, commands[i].fn, commands[i].flags, 1,
                             commands[i].lastkey, 1) != RM_OK)
            return RM_ERR;
    return RM_OK;
}

int reply_numkeys_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long numkeys;
    if (argc > 1)
        RM_KeyAtPos(ctx, 1);
    if (argc > 2 && RM_StringToLongLong(argv[2], &numkeys) == RM_OK)
        for (long long i = 0; i < numkeys && 3 + i < argc; i++)
            RM_KeyAtPos(ctx, (int)(3 + i));
    return RM_OK;
}
