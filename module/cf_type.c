/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cf_type.c: the Cuckoo filter type of sketch.so, `sketch-cf`: a key holds
 * an sk_cuckoo, saved in the library's format (docs/cuckoo-format.md) by
 * the calls every one-string type shares (blob_type.c), rewritten to the
 * AOF as CF.IMPORT. The format carries how far a CF.LOADCHUNK restore has
 * come, so a filter half restored is saved, rewritten, copied and synced
 * as half restored, never as complete.
 */
#include "cf_type.h"

#include "common.h"

RedisModuleType *cf_type;
RedisModuleType *cf_rb_type;

static int size_of(const void *v, uint64_t *size)
{
    return sk_cuckoo_serialized_size(v, size);
}

static int serialize(const void *v, void *buf, size_t cap, size_t *len)
{
    return sk_cuckoo_serialize(v, buf, cap, len);
}

static int deserialize(void **out, const void *buf, size_t len, const sk_allocator *a)
{
    sk_cuckoo *c;
    int rc = sk_cuckoo_deserialize(&c, buf, len, a);
    *out = c;
    return rc;
}

static int rb_load(void **out, const sk_rdb_reader *r, int encver, uint64_t max_memory,
                   const sk_allocator *a)
{
    sk_cuckoo *v;
    int rc = sk_cuckoo_load_redisbloom(&v, r, encver, max_memory, a);
    *out = v;
    return rc;
}

static int rb_save(const void *value, const sk_rdb_writer *w)
{
    sk_cuckoo_save_redisbloom(value, w);
    return SK_OK;
}

const struct blob_family cf_family = {
    .what = "Cuckoo filter",
    .import = "CF.IMPORT",
    .event = "cf.import",
    .prefix = "ERR ",
    .no_key = "ERR not found",
    .type = &cf_type,
    .size = size_of,
    .serialize = serialize,
    .deserialize = deserialize,
    .rb_type = &cf_rb_type,
    .rb_name = "MBbloomCF",
    .rb_encver = SK_REDISBLOOM_CF_ENCVER,
    .rb_load = rb_load,
    .rb_save = rb_save,
};

static void cf_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rdb_save(&cf_family, io, value);
}

static void *cf_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rdb_load(&cf_family, io, encver);
}

static void cf_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_aof_rewrite(&cf_family, io, key, value);
}

static void cf_digest(RedisModuleDigest *md, void *value)
{
    blob_digest(&cf_family, md, value);
}

static size_t cf_mem_usage(const void *value)
{
    sk_cuckoo_info info;
    sk_cuckoo_get_info(value, &info);
    return info.memory;
}

static void cf_free(void *value)
{
    sk_cuckoo_free(value);
}

static void *cf_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_cuckoo *copy;
    return sk_cuckoo_copy(&copy, value) == SK_OK ? copy : NULL;
}

static void cf_rb_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rb_rdb_save(&cf_family, io, value);
}

static void *cf_rb_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rb_rdb_load(&cf_family, io, encver);
}

static void cf_rb_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_rb_aof_rewrite(&cf_family, io, key, value);
}

int cf_type_create(RedisModuleCtx *ctx)
{
    const RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = cf_rdb_load,
        .rdb_save = cf_rdb_save,
        .aof_rewrite = cf_aof_rewrite,
        .mem_usage = cf_mem_usage,
        .digest = cf_digest,
        .free = cf_free,
        .copy = cf_copy,
    };
    return blob_create_types(ctx, &cf_family, "sketch-cf", &methods, cf_rb_rdb_load,
                             cf_rb_rdb_save, cf_rb_aof_rewrite);
}
