/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blob_type.h: what the types of sketch.so whose values save as one string
 * of the library's format share (blob_type.c): the count-min sketch
 * (cms_type.c) and top-k (topk_type.c). RDB keeps the string, whose
 * checksum guards what a load reads; the AOF rewrite writes it as the
 * family's IMPORT command; DEBUG DIGEST-VALUE digests it.
 */
#ifndef SKETCH_MODULE_BLOB_TYPE_H
#define SKETCH_MODULE_BLOB_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "rm_api.h"
#include "sketch.h"

/* A family's calls on its values, each as the library's for that family. */
struct blob_family {
    const char *what;        /* for logs and errors: "count-min sketch" */
    const char *import;      /* the command that stores the string: "CMS.IMPORT" */
    const char *event;       /* its keyspace event: "cms.import" */
    const char *prefix;      /* of the family's errors: "CMS: " */
    const char *no_key;      /* its error for a missing key */
    RedisModuleType **type;  /* the type, once created */
    int (*size)(const void *value, uint64_t *size);
    int (*serialize)(const void *value, void *buf, size_t cap, size_t *len);
    int (*deserialize)(void **out, const void *buf, size_t len, const sk_allocator *a);
};

/* Opens key for a command: RM_OK with *value its value of `type`, or NULL
 * if the key is empty (then *key may be NULL, as bf_type.h says). Replies
 * WRONGTYPE and returns RM_ERR for a key of another type. */
int blob_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
              RedisModuleKey **key, void **value);

/* blob_open for a key that must hold a value of the family's type: NULL
 * after replying the error (the family's no_key for an empty key). */
void *blob_open_existing(const struct blob_family *f, RedisModuleCtx *ctx,
                         RedisModuleString *name, int mode, RedisModuleKey **key);

/* The type's callbacks, given the family. */
void blob_rdb_save(const struct blob_family *f, RedisModuleIO *io, void *value);
void *blob_rdb_load(const struct blob_family *f, RedisModuleIO *io, int encver);
void blob_aof_rewrite(const struct blob_family *f, RedisModuleIO *io, RedisModuleString *key,
                      void *value);
void blob_digest(const struct blob_family *f, RedisModuleDigest *md, void *value);

/* FAMILY.EXPORT key: the value as the library's bytes. */
int blob_export_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc);
/* FAMILY.IMPORT key bytes: the key (empty or of the type) holds the value
 * the bytes give, within the key's limit, as SET replaces a value. */
int blob_import_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc);

#endif
