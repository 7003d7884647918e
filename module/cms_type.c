/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_type.c: the count-min sketch type of sketch.so, `sketch-cm`: a key
 * holds an sk_cms, saved in the library's format (docs/cms-format.md) by
 * the calls every one-string type shares (blob_type.c), rewritten to the
 * AOF as CMS.IMPORT.
 */
#include "cms_type.h"

#include "common.h"

RedisModuleType *cms_type;
RedisModuleType *cms_rb_type;

static int size_of(const void *v, uint64_t *size)
{
    return sk_cms_serialized_size(v, size);
}

static int serialize(const void *v, void *buf, size_t cap, size_t *len)
{
    return sk_cms_serialize(v, buf, cap, len);
}

static int deserialize(void **out, const void *buf, size_t len, const sk_allocator *a)
{
    sk_cms *c;
    int rc = sk_cms_deserialize(&c, buf, len, a);
    *out = c;
    return rc;
}

static int rb_load(void **out, const sk_rdb_reader *r, int encver, uint64_t max_memory,
                   const sk_allocator *a)
{
    sk_cms *v;
    int rc = sk_cms_load_redisbloom(&v, r, encver, max_memory, a);
    *out = v;
    return rc;
}

static int rb_save(const void *value, const sk_rdb_writer *w)
{
    sk_cms_save_redisbloom(value, w);
    return SK_OK;
}

const struct blob_family cms_family = {
    .what = "count-min sketch",
    .import = "CMS.IMPORT",
    .event = "cms.import",
    .prefix = "CMS: ",
    .no_key = "CMS: key does not exist",
    .type = &cms_type,
    .size = size_of,
    .serialize = serialize,
    .deserialize = deserialize,
    .rb_type = &cms_rb_type,
    .rb_name = "CMSk-TYPE",
    .rb_encver = SK_REDISBLOOM_CMS_ENCVER,
    .rb_load = rb_load,
    .rb_save = rb_save,
};

static void cms_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rdb_save(&cms_family, io, value);
}

static void *cms_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rdb_load(&cms_family, io, encver);
}

static void cms_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_aof_rewrite(&cms_family, io, key, value);
}

static void cms_digest(RedisModuleDigest *md, void *value)
{
    blob_digest(&cms_family, md, value);
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

static void cms_rb_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rb_rdb_save(&cms_family, io, value);
}

static void *cms_rb_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rb_rdb_load(&cms_family, io, encver);
}

static void cms_rb_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_rb_aof_rewrite(&cms_family, io, key, value);
}

int cms_type_create(RedisModuleCtx *ctx)
{
    const RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = cms_rdb_load,
        .rdb_save = cms_rdb_save,
        .aof_rewrite = cms_aof_rewrite,
        .mem_usage = cms_mem_usage,
        .digest = cms_digest,
        .free = cms_free,
        .copy = cms_copy,
    };
    return blob_create_types(ctx, &cms_family, "sketch-cm", &methods, cms_rb_rdb_load,
                             cms_rb_rdb_save, cms_rb_aof_rewrite);
}
