/* common.c: the module's settings and shared helpers (see common.h). */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct module_config module_config = {.max_key_memory = UINT64_C(1) << 30};

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

/* Parses "123", "64mb", "1gb" into bytes; 0 on error. */
static uint64_t parse_size(RedisModuleString *arg)
{
    size_t len;
    const char *s = RM_StringPtrLen(arg, &len);
    char text[32];
    if (len == 0 || len >= sizeof text)
        return 0;
    memcpy(text, s, len);
    text[len] = '\0';
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || !isdigit((unsigned char)text[0]) || errno != 0)
        return 0;
    uint64_t unit = 1;
    if (strcasecmp(end, "kb") == 0)
        unit = UINT64_C(1) << 10;
    else if (strcasecmp(end, "mb") == 0)
        unit = UINT64_C(1) << 20;
    else if (strcasecmp(end, "gb") == 0)
        unit = UINT64_C(1) << 30;
    else if (*end != '\0')
        return 0;
    if (value > UINT64_MAX / unit)
        return 0;
    return value * unit;
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
    return flags & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING) ? 0
                                                                      : module_config.max_key_memory;
}

int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    for (int i = 0; i < argc; i += 2) {
        if (!arg_is(argv[i], "MAX-KEY-MEMORY") || i + 1 == argc) {
            RM_Log(ctx, "warning", "sketch: unknown or incomplete module argument");
            return RM_ERR;
        }
        module_config.max_key_memory = parse_size(argv[i + 1]);
        if (module_config.max_key_memory == 0) {
            RM_Log(ctx, "warning", "sketch: MAX-KEY-MEMORY takes a size such as 512mb");
            return RM_ERR;
        }
    }
    return RM_OK;
}
