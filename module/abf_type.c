/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abf_type.c: the aging Bloom filter type of sketch.so, `sketch-ab`: a key
 * holds an sk_aging_bloom, saved in the library's format
 * (docs/aging-bloom.md) as one string by the calls the one-string types
 * share (blob_type.c), rewritten to the AOF as ABF.IMPORT, digested as
 * that string, so that a primary and its replicas agree exactly when they
 * hold the same filter.
 *
 * The family has no RedisBloom type (RedisBloom has no aging filter): the
 * second type blob_type.c expects of a family is this one again, so that
 * every value it opens or stores is a `sketch-ab`.
 */
#include "abf_type.h"

#include "common.h"
#include "sketch/aging_bloom.h"

/* The encoding version the type registers: blob_type.c's one string. */
#define ABF_ENCODING_VERSION 0

RedisModuleType *abf_type;

static int size_of(const void *v, uint64_t *size)
{
    return sk_aging_bloom_serialized_size(v, size);
}

static int serialize(const void *v, void *buf, size_t cap, size_t *len)
{
    return sk_aging_bloom_serialize(v, buf, cap, len);
}

static int deserialize(void **out, const void *buf, size_t len, const sk_allocator *a)
{
    sk_aging_bloom *f;
    int rc = sk_aging_bloom_deserialize(&f, buf, len, a);
    *out = rc == SK_OK ? f : NULL;
    return rc;
}

const struct blob_family abf_family = {
    .what = "Bloom filter (ABF.*)",
    .import = "ABF.IMPORT",
    .event = "abf.import",
    .prefix = "ERR ",
    .no_key = "ERR not found",
    .type = &abf_type,
    .size = size_of,
    .serialize = serialize,
    .deserialize = deserialize,
    .rb_type = &abf_type,
    .rb_name = "sketch-ab",
};

static void abf_rdb_save(RedisModuleIO *io, void *value)
{
    blob_rdb_save(&abf_family, io, value);
}

static void *abf_rdb_load(RedisModuleIO *io, int encver)
{
    return blob_rdb_load(&abf_family, io, encver);
}

static void abf_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    blob_aof_rewrite(&abf_family, io, key, value);
}

static void abf_digest(RedisModuleDigest *md, void *value)
{
    blob_digest(&abf_family, md, value);
}

static size_t abf_mem_usage(const void *value)
{
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(value, &info);
    return info.memory;
}

/* Freed in the background past a few generations (Redis's lazy free). */
static size_t abf_free_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(value, &info);
    return info.generations;
}

static void abf_free(void *value)
{
    sk_aging_bloom_free(value);
}

static void *abf_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_aging_bloom *copy;
    return sk_aging_bloom_copy(&copy, value) == SK_OK ? copy : NULL;
}

int abf_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = abf_rdb_load,
        .rdb_save = abf_rdb_save,
        .aof_rewrite = abf_aof_rewrite,
        .mem_usage = abf_mem_usage,
        .digest = abf_digest,
        .free = abf_free,
        .free_effort = abf_free_effort,
        .copy = abf_copy,
    };
    abf_type = RM_CreateDataType(ctx, "sketch-ab", ABF_ENCODING_VERSION, &methods);
    return abf_type == NULL ? RM_ERR : RM_OK;
}
