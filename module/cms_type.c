/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_type.c: the count-min sketch type of sketch.so: opening a key that
 * holds one, and what the server calls to save, load, rewrite, digest,
 * measure, copy and free it.
 *
 * RDB keeps a sketch in the library's format (docs/cms-format.md), one
 * string, so that its checksum guards what a load reads; the AOF rewrite
 * writes the same bytes as CMS.IMPORT. Both serialize into a buffer on the
 * stack up to SAVE_BUFFER, which holds the sketches most keys hold (a
 * width of 2000 and a depth of 7 take 56 KB); a larger one is written into
 * memory of its own for the length of the save.
 */
#include "cms_type.h"

#include "common.h"

#define SAVE_BUFFER (64u << 10)
#define ENCODING_VERSION 0

RedisModuleType *cms_type;

/* See cms_type.h. */
int open_cms(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
             sk_cms **sketch)
{
    *key = RM_OpenKey(ctx, name, mode);
    *sketch = NULL;
    int type = RM_KeyType(*key);
    if (type == RM_KEYTYPE_EMPTY)
        return RM_OK;
    if (type != RM_KEYTYPE_MODULE || RM_ModuleTypeGetType(*key) != cms_type) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return RM_ERR;
    }
    *sketch = RM_ModuleTypeGetValue(*key);
    return RM_OK;
}

/* Calls fn with c serialized; -1 if the memory for it could not be had. */
static int with_bytes(const sk_cms *c, void (*fn)(void *arg, const char *bytes, size_t len),
                      void *arg)
{
    char stack[SAVE_BUFFER];
    uint64_t size;
    size_t len;
    sk_cms_serialized_size(c, &size);
    char *buf = size <= sizeof stack ? stack : size <= SIZE_MAX ? RM_TryAlloc(size) : NULL;
    if (buf == NULL || sk_cms_serialize(c, buf, (size_t)size, &len) != SK_OK) {
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

static void cms_rdb_save(RedisModuleIO *io, void *value)
{
    if (with_bytes(value, save_bytes, io) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory saving a count-min sketch");
}

static void *cms_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != ENCODING_VERSION) {
        RM_LogIOError(io, "warning", "sketch: count-min sketch encoding %d is not this "
                                     "module's %d", encver, ENCODING_VERSION);
        return NULL;
    }
    size_t len;
    char *buf = RM_LoadStringBuffer(io, &len);
    if (buf == NULL || RM_IsIOError(io))
        return NULL;
    /* RESTORE from a client gets the key's limit, which the serialized
     * size (the counters and a 32-byte header) stands for; an RDB being
     * loaded, or a replica given a key by its primary, none. */
    int flags = RM_GetContextFlags(RM_GetContextFromIO(io));
    uint64_t limit = flags & (RM_CTX_FLAGS_LOADING | RM_CTX_FLAGS_SLAVE)
                         ? 0
                         : (uint64_t)module_config.max_key_memory;
    if (limit != 0 && len > limit) {
        RM_Free(buf);
        RM_LogIOError(io, "warning", "sketch: RESTORE refused: the sketch would take more "
                                     "than the module's MAX-KEY-MEMORY of %llu bytes",
                      (unsigned long long)limit);
        return NULL;
    }
    sk_cms *c;
    int rc = sk_cms_deserialize(&c, buf, len, &module_allocator);
    RM_Free(buf);
    if (rc != SK_OK) {
        RM_LogIOError(io, "warning", "sketch: bad count-min sketch data: %s", sk_strerror(rc));
        return NULL;
    }
    return c;
}

struct aof_target {
    RedisModuleIO *io;
    RedisModuleString *key;
};

static void emit_import(void *arg, const char *bytes, size_t len)
{
    struct aof_target *t = arg;
    RM_EmitAOF(t->io, "CMS.IMPORT", "sb", t->key, bytes, len);
}

static void cms_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    struct aof_target t = {io, key};
    if (with_bytes(value, emit_import, &t) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a count-min sketch");
}

static void digest_bytes(void *arg, const char *bytes, size_t len)
{
    RM_DigestAddStringBuffer(arg, bytes, len);
}

/* DEBUG DIGEST-VALUE: the serialized sketch, dimensions, total and counters. */
static void cms_digest(RedisModuleDigest *md, void *value)
{
    with_bytes(value, digest_bytes, md);
    RM_DigestEndSequence(md);
}

static size_t cms_mem_usage(const void *value)
{
    sk_cms_info info;
    sk_cms_get_info(value, &info);
    return info.memory;
}

static void cms_free(void *value)
{
    sk_cms_free(value);
}

static void *cms_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_cms *copy;
    return sk_cms_copy(&copy, value) == SK_OK ? copy : NULL;
}

int cms_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = cms_rdb_load,
        .rdb_save = cms_rdb_save,
        .aof_rewrite = cms_aof_rewrite,
        .mem_usage = cms_mem_usage,
        .digest = cms_digest,
        .free = cms_free,
        .copy = cms_copy,
    };
    cms_type = RM_CreateDataType(ctx, "sketch-cm", ENCODING_VERSION, &methods);
    return cms_type == NULL ? RM_ERR : RM_OK;
}
