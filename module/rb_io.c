/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rb_io.c: see rb_io.h. With RM_OPTIONS_HANDLE_IO_ERRORS a load that runs
 * past the value's fields returns zero and sets the IO's error flag rather
 * than stopping the server, so each read checks the flag and reports the
 * value truncated, and the loader refuses it whole.
 */
#include "rb_io.h"

#include "common.h"

static int load_unsigned(void *ctx, uint64_t *out)
{
    struct rb_reader *rd = ctx;
    *out = RM_LoadUnsigned(rd->io);
    return RM_IsIOError(rd->io) ? SK_ETRUNCATED : SK_OK;
}

static int load_signed(void *ctx, int64_t *out)
{
    struct rb_reader *rd = ctx;
    *out = RM_LoadSigned(rd->io);
    return RM_IsIOError(rd->io) ? SK_ETRUNCATED : SK_OK;
}

static int load_double(void *ctx, double *out)
{
    struct rb_reader *rd = ctx;
    *out = RM_LoadDouble(rd->io);
    return RM_IsIOError(rd->io) ? SK_ETRUNCATED : SK_OK;
}

static int load_string(void *ctx, const void **data, size_t *len)
{
    struct rb_reader *rd = ctx;
    RM_Free(rd->last);
    rd->last = RM_LoadStringBuffer(rd->io, len);
    if (rd->last == NULL || RM_IsIOError(rd->io))
        return SK_ETRUNCATED;
    *data = rd->last;
    return SK_OK;
}

void rb_reader_init(struct rb_reader *rd, RedisModuleIO *io)
{
    rd->r = (sk_rdb_reader){rd, load_unsigned, load_signed, load_double, load_string};
    rd->io = io;
    rd->last = NULL;
}

void rb_reader_finish(struct rb_reader *rd)
{
    RM_Free(rd->last);
    rd->last = NULL;
}

static void save_unsigned(void *ctx, uint64_t value)
{
    RM_SaveUnsigned(ctx, value);
}

static void save_signed(void *ctx, int64_t value)
{
    RM_SaveSigned(ctx, value);
}

static void save_double(void *ctx, double value)
{
    RM_SaveDouble(ctx, value);
}

static void save_string(void *ctx, const void *data, size_t len)
{
    RM_SaveStringBuffer(ctx, data, len);
}

void rb_writer_init(sk_rdb_writer *w, RedisModuleIO *io)
{
    *w = (sk_rdb_writer){io, save_unsigned, save_signed, save_double, save_string};
}

uint64_t restore_limit(RedisModuleIO *io)
{
    int flags = RM_GetContextFlags(RM_GetContextFromIO(io));
    return flags & (RM_CTX_FLAGS_LOADING | RM_CTX_FLAGS_SLAVE)
               ? 0
               : (uint64_t)module_config.max_key_memory;
}

void rb_log_refused(RedisModuleIO *io, const char *type, int status, uint64_t limit)
{
    const RedisModuleString *name = RM_GetKeyNameFromIO(io);
    size_t len = 0;
    const char *key = name != NULL ? RM_StringPtrLen(name, &len) : "";
    if (status == SK_EBUDGET)
        RM_LogIOError(io, "warning", "sketch: key '%.*s': the %s value would take more than "
                      "the module's MAX-KEY-MEMORY of %llu bytes", (int)len, key, type,
                      (unsigned long long)limit);
    else if (status == SK_EINCOMPAT)
        RM_LogIOError(io, "warning", "sketch: key '%.*s': a %s value of RedisBloom 2.0, "
                      "which hashed items as later releases do not: refused rather than "
                      "answer \"absent\" for items it holds; re-create it "
                      "(docs/redisbloom-migration.md)", (int)len, key, type);
    else
        RM_LogIOError(io, "warning", "sketch: key '%.*s': bad %s value: %s", (int)len, key,
                      type, sk_strerror(status));
}
