/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * td_type.c: the t-digest type of sketch.so, `sketch-td`: a key holds an
 * sk_tdigest, buffer and all, saved in the library's format
 * (docs/tdigest-format.md) by the calls every one-string type shares
 * (blob_type.c), rewritten to the AOF as TDIGEST.IMPORT. Saving never
 * compresses a digest, so a key read back compresses at the same add.
 */
#include "td_type.h"

#include "common.h"
#include "rb_io.h"

RedisModuleType *td_type;
RedisModuleType *td_rb_type;

int64_t td_total_weight(const sk_tdigest *t)
{
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    return info.merged_weight + info.unmerged_weight;
}

static int size_of(const void *v, uint64_t *size)
{
    return sk_tdigest_serialized_size(v, size);
}

static int serialize(const void *v, void *buf, size_t cap, size_t *len)
{
    return sk_tdigest_serialize(v, buf, cap, len);
}

static int deserialize(void **out, const void *buf, size_t len, const sk_allocator *a)
{
    sk_tdigest *t;
    int rc = sk_tdigest_deserialize(&t, buf, len, a);
    *out = t;
    return rc;
}

static int rb_load(void **out, const sk_rdb_reader *r, int encver, uint64_t max_memory,
                   const sk_allocator *a)
{
    sk_tdigest *v;
    int rc = sk_tdigest_load_redisbloom(&v, r, encver, max_memory, a);
    *out = v;
    return rc;
}

static int rb_save(const void *value, const sk_rdb_writer *w)
{
    return sk_tdigest_save_redisbloom(value, w);
}

const struct blob_family td_family = {
    .what = "t-digest",
    .import = "TDIGEST.IMPORT",
    .event = "tdigest.import",
    .prefix = TD_E_PREFIX,
    .no_key = TD_E_PREFIX "key does not exist",
    .type = &td_type,
    .size = size_of,
    .serialize = serialize,
    .deserialize = deserialize,
    .rb_type = &td_rb_type,
    .rb_name = "TDIS-TYPE",
    .rb_encver = SK_REDISBLOOM_TDIGEST_ENCVER,
    .rb_load = rb_load,
    .rb_save = rb_save,
};

sk_tdigest *td_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                             RedisModuleKey **key)
{
    return blob_open_existing(&td_family, ctx, name, mode, key);
}

static void td_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rdb_save(&td_family, io, value);
}

uint64_t td_full_memory(const sk_tdigest *t)
{
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    sk_tdigest_options o = {.compression = info.compression};
    return sk_tdigest_create_memory(&o);
}

/* A RESTORE from a client is held to the key's limit by the capacity the
 * digest's compression allows, which its adds may come to take, as
 * TDIGEST.CREATE is: a payload of few nodes may carry a huge compression. */
static sk_tdigest *within_limit(RedisModuleIO *io, sk_tdigest *t)
{
    uint64_t limit = restore_limit(io);
    if (t != NULL && limit != 0 && td_full_memory(t) > limit) {
        rb_log_refused(io, "t-digest", SK_EBUDGET, limit);
        sk_tdigest_free(t);
        return NULL;
    }
    return t;
}

static void *td_rdb_load(RedisModuleIO *io, int encver)
{
    return within_limit(io, blob_rdb_load(&td_family, io, encver));
}

static void td_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_aof_rewrite(&td_family, io, key, value);
}

static void td_digest(RedisModuleDigest *md, void *value)
{
    blob_digest(&td_family, md, value);
}

static size_t td_mem_usage(const void *value)
{
    sk_tdigest_info info;
    sk_tdigest_get_info(value, &info);
    return info.memory;
}

static void td_free(void *value)
{
    sk_tdigest_free(value);
}

static void *td_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_tdigest *copy;
    return sk_tdigest_copy(&copy, value) == SK_OK ? copy : NULL;
}

static void td_rb_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rb_rdb_save(&td_family, io, value);
}

static void *td_rb_rdb_load(RedisModuleIO *io, int encver)
{
    return within_limit(io, blob_rb_rdb_load(&td_family, io, encver));
}

static void td_rb_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_rb_aof_rewrite(&td_family, io, key, value);
}

int td_type_create(RedisModuleCtx *ctx)
{
    const RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = td_rdb_load,
        .rdb_save = td_rdb_save,
        .aof_rewrite = td_aof_rewrite,
        .mem_usage = td_mem_usage,
        .digest = td_digest,
        .free = td_free,
        .copy = td_copy,
    };
    return blob_create_types(ctx, &td_family, "sketch-td", &methods, td_rb_rdb_load,
                             td_rb_rdb_save, td_rb_aof_rewrite);
}
