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

const struct blob_family cf_family = {"Cuckoo filter", "CF.IMPORT", "cf.import", "ERR ",
                                      "ERR not found", &cf_type, size_of, serialize,
                                      deserialize};

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

int cf_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = cf_rdb_load,
        .rdb_save = cf_rdb_save,
        .aof_rewrite = cf_aof_rewrite,
        .mem_usage = cf_mem_usage,
        .digest = cf_digest,
        .free = cf_free,
        .copy = cf_copy,
    };
    cf_type = RM_CreateDataType(ctx, "sketch-cf", 0, &methods);
    return cf_type == NULL ? RM_ERR : RM_OK;
}
