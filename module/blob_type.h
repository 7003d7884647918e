/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blob_type.h: what the types of sketch.so whose values save as one string
 * of the library's format share (blob_type.c): the count-min sketch
 * (cms_type.c), top-k (topk_type.c), the Cuckoo filter (cf_type.c) and the
 * t-digest (td_type.c). RDB keeps the string, whose checksum guards what a
 * load reads; the AOF rewrite writes it as the family's IMPORT command;
 * DEBUG DIGEST-VALUE digests it.
 *
 * Each of these families has a second type, RedisBloom's of the same
 * values (CMSk-TYPE, TopK-TYPE, MBbloomCF, TDIS-TYPE), whose keys hold the
 * same library objects but save in RedisBloom's encoding
 * (sketch/redisbloom.h), so that RedisBloom's RDB files and DUMP payloads
 * load here and ours load back into RedisBloom. Commands take keys of
 * either type; a new key gets the family's own type unless the module's
 * redisbloom-types setting asks for RedisBloom's.
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
    RedisModuleType **rb_type; /* RedisBloom's type, once created */
    const char *rb_name;       /* its name: "CMSk-TYPE" */
    int rb_encver;             /* the encoding version it saves */
    int (*rb_load)(void **out, const sk_rdb_reader *r, int encver, uint64_t max_memory,
                   const sk_allocator *a);
    int (*rb_save)(const void *value, const sk_rdb_writer *w);
};

/* Whether the key holds a value of either of the family's types. */
int blob_holds(const struct blob_family *f, RedisModuleKey *key);

/* The type a value stored in key takes: the type the key holds, or for an
 * empty key the one the redisbloom-types setting gives new keys. */
RedisModuleType *blob_type_for(const struct blob_family *f, RedisModuleKey *key);

/* Creates the family's two types: its own with `methods`, RedisBloom's with
 * the same methods but for the three that save and load, given here. */
int blob_create_types(RedisModuleCtx *ctx, const struct blob_family *f, const char *name,
                      const RedisModuleTypeMethods *methods,
                      void *(*rb_rdb_load)(RedisModuleIO *io, int encver),
                      void (*rb_rdb_save)(RedisModuleIO *io, void *value),
                      void (*rb_aof_rewrite)(RedisModuleIO *io, RedisModuleString *key,
                                             void *value));

/* Opens key for a command: RM_OK with *value its value of either of the
 * family's types, or NULL if the key is empty (then *key may be NULL, as
 * bf_type.h says). Replies WRONGTYPE and returns RM_ERR for a key of
 * another type. */
int blob_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
              const struct blob_family *f, RedisModuleKey **key, void **value);

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
/* The callbacks of RedisBloom's type: its fields through the library's
 * codec, and the AOF's IMPORT naming that type. */
void blob_rb_rdb_save(const struct blob_family *f, RedisModuleIO *io, void *value);
void *blob_rb_rdb_load(const struct blob_family *f, RedisModuleIO *io, int encver);
void blob_rb_aof_rewrite(const struct blob_family *f, RedisModuleIO *io,
                         RedisModuleString *key, void *value);

/* FAMILY.EXPORT key: the value as the library's bytes. */
int blob_export_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc);
/* FAMILY.IMPORT key bytes [SKETCH | REDISBLOOM]: the key (empty or of the
 * family) holds the value the bytes give, within the key's limit, as SET
 * replaces a value, in the type named (the AOF's rewrites name it), else
 * in blob_type_for's. */
int blob_import_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc);

#endif
