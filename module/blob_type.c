/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blob_type.c: see blob_type.h. Saves serialize into a buffer on the stack
 * up to SAVE_BUFFER, which holds the values most keys hold (a 2000 x 7
 * count-min sketch takes 56 KB); a larger one is written into memory of
 * its own for the length of the save.
 */
#include "blob_type.h"

#include <stdio.h>

#include "common.h"
#include "rb_io.h"

#define SAVE_BUFFER (64u << 10)
#define ENCODING_VERSION 0

int blob_holds(const struct blob_family *f, RedisModuleKey *key)
{
    if (RM_KeyType(key) != RM_KEYTYPE_MODULE)
        return 0;
    RedisModuleType *type = RM_ModuleTypeGetType(key);
    return type == *f->type || type == *f->rb_type;
}

RedisModuleType *blob_type_for(const struct blob_family *f, RedisModuleKey *key)
{
    if (blob_holds(f, key))
        return RM_ModuleTypeGetType(key);
    return module_config.redisbloom_types ? *f->rb_type : *f->type;
}

int blob_create_types(RedisModuleCtx *ctx, const struct blob_family *f, const char *name,
                      const RedisModuleTypeMethods *methods,
                      void *(*rb_rdb_load)(RedisModuleIO *io, int encver),
                      void (*rb_rdb_save)(RedisModuleIO *io, void *value),
                      void (*rb_aof_rewrite)(RedisModuleIO *io, RedisModuleString *key,
                                             void *value))
{
    /* The server keeps the pointers it is given, not copies. */
    static RedisModuleTypeMethods tables[8];
    static size_t used;
    if (used + 2 > sizeof tables / sizeof tables[0])
        return RM_ERR;
    RedisModuleTypeMethods *own = &tables[used++], *rb = &tables[used++];
    *own = *methods;
    *rb = *methods;
    rb->rdb_load = rb_rdb_load;
    rb->rdb_save = rb_rdb_save;
    rb->aof_rewrite = rb_aof_rewrite;
    *f->type = RM_CreateDataType(ctx, name, ENCODING_VERSION, own);
    *f->rb_type = RM_CreateDataType(ctx, f->rb_name, f->rb_encver, rb);
    return *f->type == NULL || *f->rb_type == NULL ? RM_ERR : RM_OK;
}

/* See blob_type.h. */
int blob_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
              const struct blob_family *f, RedisModuleKey **key, void **value)
{
    *key = RM_OpenKey(ctx, name, mode);
    *value = NULL;
    int kind = RM_KeyType(*key);
    if (kind == RM_KEYTYPE_EMPTY)
        return RM_OK;
    if (!blob_holds(f, *key)) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return RM_ERR;
    }
    *value = RM_ModuleTypeGetValue(*key);
    return RM_OK;
}

/* See blob_type.h. */
void *blob_open_existing(const struct blob_family *f, RedisModuleCtx *ctx,
                         RedisModuleString *name, int mode, RedisModuleKey **key)
{
    void *value;
    if (blob_open(ctx, name, mode, f, key, &value) != RM_OK)
        return NULL;
    if (value == NULL) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, f->no_key);
    }
    return value;
}

/* Calls fn with the value's string; -1 if the memory for it could not be had. */
static int with_bytes(const struct blob_family *f, const void *value,
                      void (*fn)(void *arg, const char *bytes, size_t len), void *arg)
{
    char stack[SAVE_BUFFER];
    uint64_t size;
    size_t len;
    if (f->size(value, &size) != SK_OK)
        return -1;
    char *buf = size <= sizeof stack ? stack : size <= SIZE_MAX ? RM_TryAlloc(size) : NULL;
    if (buf == NULL || f->serialize(value, buf, (size_t)size, &len) != SK_OK) {
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

void blob_rdb_save(const struct blob_family *f, RedisModuleIO *io, void *value)
{
    if (with_bytes(f, value, save_bytes, io) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory saving a %s", f->what);
}

void *blob_rdb_load(const struct blob_family *f, RedisModuleIO *io, int encver)
{
    if (encver != ENCODING_VERSION) {
        RM_LogIOError(io, "warning", "sketch: %s encoding %d is not this module's %d", f->what,
                      encver, ENCODING_VERSION);
        return NULL;
    }
    size_t len;
    char *buf = RM_LoadStringBuffer(io, &len);
    if (buf == NULL || RM_IsIOError(io))
        return NULL;
    /* The string's size stands for the value's. */
    uint64_t limit = restore_limit(io);
    if (limit != 0 && len > limit) {
        RM_Free(buf);
        RM_LogIOError(io, "warning", "sketch: RESTORE refused: the %s would take more than "
                                     "the module's MAX-KEY-MEMORY of %llu bytes",
                      f->what, (unsigned long long)limit);
        return NULL;
    }
    void *value;
    int rc = f->deserialize(&value, buf, len, &module_allocator);
    RM_Free(buf);
    if (rc != SK_OK) {
        RM_LogIOError(io, "warning", "sketch: bad %s data: %s", f->what, sk_strerror(rc));
        return NULL;
    }
    return value;
}

void blob_rb_rdb_save(const struct blob_family *f, RedisModuleIO *io, void *value)
{
    sk_rdb_writer w;
    rb_writer_init(&w, io);
    if (f->rb_save(value, &w) != SK_OK)
        RM_LogIOError(io, "warning", "sketch: out of memory saving a %s", f->what);
}

void *blob_rb_rdb_load(const struct blob_family *f, RedisModuleIO *io, int encver)
{
    struct rb_reader rd;
    rb_reader_init(&rd, io);
    uint64_t limit = restore_limit(io);
    void *value = NULL;
    int rc = f->rb_load(&value, &rd.r, encver, limit, &module_allocator);
    rb_reader_finish(&rd);
    if (rc != SK_OK) {
        rb_log_refused(io, f->rb_name, rc, limit);
        return NULL;
    }
    return value;
}

struct aof_target {
    const struct blob_family *f;
    RedisModuleIO *io;
    RedisModuleString *key;
    const char *type;
};

static void emit_import(void *arg, const char *bytes, size_t len)
{
    struct aof_target *t = arg;
    RM_EmitAOF(t->io, t->f->import, "sbc", t->key, bytes, len, t->type);
}

static void aof_rewrite(const struct blob_family *f, RedisModuleIO *io, RedisModuleString *key,
                        void *value, const char *type)
{
    struct aof_target t = {f, io, key, type};
    if (with_bytes(f, value, emit_import, &t) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a %s", f->what);
}

void blob_aof_rewrite(const struct blob_family *f, RedisModuleIO *io, RedisModuleString *key,
                      void *value)
{
    aof_rewrite(f, io, key, value, "SKETCH");
}

void blob_rb_aof_rewrite(const struct blob_family *f, RedisModuleIO *io,
                         RedisModuleString *key, void *value)
{
    aof_rewrite(f, io, key, value, "REDISBLOOM");
}

static void digest_bytes(void *arg, const char *bytes, size_t len)
{
    RM_DigestAddStringBuffer(arg, bytes, len);
}

void blob_digest(const struct blob_family *f, RedisModuleDigest *md, void *value)
{
    with_bytes(f, value, digest_bytes, md);
    RM_DigestEndSequence(md);
}

/* The value from a client's bytes, within the key's limit; NULL after
 * replying why not. */
static void *import_bytes(const struct blob_family *f, RedisModuleCtx *ctx,
                          RedisModuleString *bytes)
{
    size_t len;
    const char *data = RM_StringPtrLen(bytes, &len);
    uint64_t limit = key_limit(ctx);
    char message[160];
    void *value = NULL;
    int rc = limit != 0 && len > limit ? SK_EBUDGET
                                       : f->deserialize(&value, data, len, &module_allocator);
    if (rc == SK_OK)
        return value;
    if (rc == SK_EBUDGET)
        snprintf(message, sizeof message,
                 "%sthe sketch would take more than the module's MAX-KEY-MEMORY of %lld",
                 f->prefix, module_config.max_key_memory);
    else
        snprintf(message, sizeof message, "%snot a %s: %s", f->prefix, f->what,
                 sk_strerror(rc));
    RM_ReplyWithError(ctx, message);
    return NULL;
}

int blob_import_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 4)
        return RM_WrongArity(ctx);
    RedisModuleType *named = NULL;
    if (argc == 4 && arg_is(argv[3], "REDISBLOOM"))
        named = *f->rb_type;
    else if (argc == 4 && arg_is(argv[3], "SKETCH"))
        named = *f->type;
    else if (argc == 4) {
        char message[96];
        snprintf(message, sizeof message, "%sthe type is SKETCH or REDISBLOOM", f->prefix);
        return RM_ReplyWithError(ctx, message);
    }
    RedisModuleKey *key;
    void *existing, *value;
    if (blob_open(ctx, argv[1], RM_READ | RM_WRITE, f, &key, &existing) != RM_OK)
        return RM_OK;
    if ((value = import_bytes(f, ctx, argv[2])) == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, named != NULL ? named : blob_type_for(f, key), value);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, f->event, argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

int blob_export_command(const struct blob_family *f, RedisModuleCtx *ctx,
                        RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    void *value = blob_open_existing(f, ctx, argv[1], RM_READ, &key);
    if (value == NULL)
        return RM_OK;
    uint64_t size;
    size_t len;
    char *buf = NULL;
    if (f->size(value, &size) != SK_OK || size > SIZE_MAX ||
        (buf = RM_TryAlloc((size_t)size)) == NULL ||
        f->serialize(value, buf, (size_t)size, &len) != SK_OK) {
        char message[96];
        snprintf(message, sizeof message, "%sInsufficient memory", f->prefix);
        RM_ReplyWithError(ctx, message);
    } else {
        RM_ReplyWithStringBuffer(ctx, buf, len);
    }
    RM_Free(buf);
    RM_CloseKey(key);
    return RM_OK;
}
