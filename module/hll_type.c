/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_type.c: the HyperLogLog type of sketch.so: what the server calls to
 * save, load, rewrite, digest, measure, copy and free a sketch that the
 * HLL.* commands (hll_commands.c) keep in a key.
 *
 * RDB keeps a sketch in sketch's own format (docs/hll-format.md), one
 * string; the AOF rewrite writes the same bytes as HLL.IMPORT.
 */
#include "hll_type.h"

#include "common.h"

RedisModuleType *hll_type;

/* Calls fn with h in sketch's own format, written into a buffer on the
 * stack up to precision 16 (larger sketches take memory of their own); -1
 * if that memory could not be had. So a save takes no memory for the
 * sketches most keys hold. */
#define SAVE_BUFFER (64u << 10)
_Static_assert(SAVE_BUFFER >= 16 + ((1u << 16) * 6 / 8), "a dense p = 16 sketch fits");

static int with_native(const sk_hll *h, void (*fn)(void *arg, const char *bytes, size_t len),
                       void *arg)
{
    char stack[SAVE_BUFFER];
    uint64_t cap;
    size_t len;
    sk_hll_serialized_size(h, SK_HLL_NATIVE, &cap); /* native: always SK_OK */
    char *buf = cap <= sizeof stack ? stack : RM_TryAlloc(cap);
    if (buf == NULL || sk_hll_serialize(h, SK_HLL_NATIVE, buf, cap, &len) != SK_OK) {
        if (buf != stack)
            RM_Free(buf);
        return -1;
    }
    fn(arg, buf, len);
    if (buf != stack)
        RM_Free(buf);
    return 0;
}

static void save_bytes(void *arg, const char *bytes, size_t len)
{
    RM_SaveStringBuffer(arg, bytes, len);
}

static void hll_rdb_save(RedisModuleIO *io, void *value)
{
    if (with_native(value, save_bytes, io) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory saving a HyperLogLog");
}

static void *hll_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != 0)
        return NULL;
    size_t len;
    char *buf = RM_LoadStringBuffer(io, &len);
    if (buf == NULL || RM_IsIOError(io))
        return NULL;
    sk_hll *h;
    sk_hll_format format;
    int status = sk_hll_deserialize(&h, buf, len, &format, &module_allocator);
    RM_Free(buf);
    if (status != SK_OK || format != SK_HLL_NATIVE) {
        if (status == SK_OK)
            sk_hll_free(h);
        RM_LogIOError(io, "warning", "sketch: bad HyperLogLog data");
        return NULL;
    }
    return h;
}

struct aof_target {
    RedisModuleIO *io;
    RedisModuleString *key;
};

static void emit_import(void *arg, const char *bytes, size_t len)
{
    struct aof_target *t = arg;
    RM_EmitAOF(t->io, "HLL.IMPORT", "sb", t->key, bytes, len);
}

static void hll_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    struct aof_target t = {io, key};
    if (with_native(value, emit_import, &t) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting the AOF");
}

static void digest_bytes(void *arg, const char *bytes, size_t len)
{
    RM_DigestAddStringBuffer(arg, bytes, len);
}

/* DEBUG DIGEST-VALUE: the serialized sketch. */
static void hll_digest(RedisModuleDigest *md, void *value)
{
    with_native(value, digest_bytes, md);
    RM_DigestEndSequence(md);
}

static size_t hll_mem_usage(const void *value)
{
    sk_hll_info info;
    sk_hll_get_info(value, &info);
    return info.memory;
}

static void hll_free(void *value)
{
    sk_hll_free(value);
}

static void *hll_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_hll *copy;
    return sk_hll_copy(&copy, value) == SK_OK ? copy : NULL;
}

int hll_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = hll_rdb_load,
        .rdb_save = hll_rdb_save,
        .aof_rewrite = hll_aof_rewrite,
        .mem_usage = hll_mem_usage,
        .digest = hll_digest,
        .free = hll_free,
        .copy = hll_copy,
    };
    hll_type = RM_CreateDataType(ctx, "sketch-hl", 0, &methods);
    return hll_type == NULL ? RM_ERR : RM_OK;
}
