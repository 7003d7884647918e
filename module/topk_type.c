/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_type.c: the top-k type of sketch.so, `sketch-tk`: a key holds an
 * sk_topk, saved in the library's format (docs/topk-format.md) by
 * the calls every one-string type shares (blob_type.c), rewritten to the
 * AOF as TOPK.IMPORT.
 */
#include "topk_type.h"

#include "common.h"

RedisModuleType *topk_type;
RedisModuleType *topk_rb_type;

static int size_of(const void *v, uint64_t *size)
{
    return sk_topk_serialized_size(v, size);
}

static int serialize(const void *v, void *buf, size_t cap, size_t *len)
{
    return sk_topk_serialize(v, buf, cap, len);
}

static int deserialize(void **out, const void *buf, size_t len, const sk_allocator *a)
{
    sk_topk *t;
    int rc = sk_topk_deserialize(&t, buf, len, a);
    *out = t;
    return rc;
}

static int rb_load(void **out, const sk_rdb_reader *r, int encver, uint64_t max_memory,
                   const sk_allocator *a)
{
    sk_topk *v;
    int rc = sk_topk_load_redisbloom(&v, r, encver, max_memory, a);
    *out = v;
    return rc;
}

static int rb_save(const void *value, const sk_rdb_writer *w)
{
    return sk_topk_save_redisbloom(value, w);
}

const struct blob_family topk_family = {
    .what = "top-k sketch",
    .import = "TOPK.IMPORT",
    .event = "topk.import",
    .prefix = "TopK: ",
    .no_key = "TopK: key does not exist",
    .type = &topk_type,
    .size = size_of,
    .serialize = serialize,
    .deserialize = deserialize,
    .rb_type = &topk_rb_type,
    .rb_name = "TopK-TYPE",
    .rb_encver = SK_REDISBLOOM_TOPK_ENCVER,
    .rb_load = rb_load,
    .rb_save = rb_save,
};

static void topk_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rdb_save(&topk_family, io, value);
}

static void *topk_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rdb_load(&topk_family, io, encver);
}

static void topk_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_aof_rewrite(&topk_family, io, key, value);
}

static void topk_digest(RedisModuleDigest *md, void *value)
{
    blob_digest(&topk_family, md, value);
}

static size_t topk_mem_usage(const void *value)
{
    sk_topk_info info;
    sk_topk_get_info(value, &info);
    return info.memory;
}

static void topk_free(void *value)
{
    sk_topk_free(value);
}

static void *topk_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_topk *copy;
    return sk_topk_copy(&copy, value) == SK_OK ? copy : NULL;
}

static void topk_rb_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rb_rdb_save(&topk_family, io, value);
}

static void *topk_rb_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rb_rdb_load(&topk_family, io, encver);
}

static void topk_rb_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_rb_aof_rewrite(&topk_family, io, key, value);
}

int topk_type_create(RedisModuleCtx *ctx)
{
    const RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = topk_rdb_load,
        .rdb_save = topk_rdb_save,
        .aof_rewrite = topk_aof_rewrite,
        .mem_usage = topk_mem_usage,
        .digest = topk_digest,
        .free = topk_free,
        .copy = topk_copy,
    };
    return blob_create_types(ctx, &topk_family, "sketch-tk", &methods, topk_rb_rdb_load,
                             topk_rb_rdb_save, topk_rb_aof_rewrite);
}
