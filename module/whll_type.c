/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * whll_type.c: the sliding-window HyperLogLog type of sketch.so,
 * `sketch-wh`: what the server calls to save, load, rewrite, digest,
 * measure, copy and free the sk_window_hll that the WHLL.* commands
 * (whll_commands.c) keep in a key.
 *
 * RDB keeps a sketch as one string of the library's serialized form
 * (docs/window-hll-format.md), which checks itself on load, so a corrupt
 * RDB or RESTORE payload is refused rather than trusted; the AOF rewrite
 * writes the same bytes as WHLL.IMPORT. The digest is those bytes too:
 * servers that applied the same adds at the same times hold the same
 * pairs, so DEBUG DIGEST-VALUE agrees between a primary and its replicas.
 *
 * A sketch's size grows with its pairs (a few hundred KB at precision 14),
 * so a save serializes into memory of its own, held for the length of the
 * save, unlike the fixed-size HyperLogLog's stack buffer.
 */
#include "whll_type.h"

#include "common.h"
#include "rb_io.h"

RedisModuleType *whll_type;

/* The version of the RDB encoding: one string of the library's format. */
#define WHLL_ENCODING_VERSION 0

char *whll_serialize(const sk_window_hll *w, size_t *len)
{
    uint64_t size;
    if (sk_window_hll_serialized_size(w, &size) != SK_OK || size > SIZE_MAX)
        return NULL;
    char *buf = RM_TryAlloc(size > 0 ? (size_t)size : 1);
    if (buf != NULL && sk_window_hll_serialize(w, buf, (size_t)size, len) != SK_OK) {
        RM_Free(buf);
        buf = NULL;
    }
    return buf;
}

static void whll_rdb_save(RedisModuleIO *io, void *value)
{
    size_t len;
    char *buf = whll_serialize(value, &len);
    if (buf == NULL) {
        RM_LogIOError(io, "warning", "sketch: out of memory saving a window HyperLogLog");
        return;
    }
    RM_SaveStringBuffer(io, buf, len);
    RM_Free(buf);
}

static void *whll_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != WHLL_ENCODING_VERSION) {
        RM_LogIOError(io, "warning",
                      "sketch: window HyperLogLog encoding %d is not this module's %d", encver,
                      WHLL_ENCODING_VERSION);
        return NULL;
    }
    size_t len;
    char *buf = RM_LoadStringBuffer(io, &len);
    if (buf == NULL || RM_IsIOError(io)) {
        RM_Free(buf);
        return NULL;
    }
    /* A client's RESTORE stays within the key's limit: a sketch takes at
     * least its string's size in memory (more: 8 bytes a sparse pair, 6 a
     * dense register), so a longer string is refused before it is read. */
    uint64_t limit = restore_limit(io);
    sk_window_hll *w = NULL;
    int rc = limit != 0 && len > limit
                 ? SK_EBUDGET
                 : sk_window_hll_deserialize(&w, buf, len, &module_allocator);
    RM_Free(buf);
    if (rc == SK_OK && limit != 0 && whll_memory(w) > limit) {
        sk_window_hll_free(w);
        rc = SK_EBUDGET;
    }
    if (rc == SK_EBUDGET) {
        RM_LogIOError(io, "warning", "sketch: RESTORE refused: the window HyperLogLog would "
                                     "take more than the module's MAX-KEY-MEMORY of %llu bytes",
                      (unsigned long long)limit);
        return NULL;
    }
    if (rc != SK_OK) {
        RM_LogIOError(io, "warning", "sketch: bad window HyperLogLog data: %s",
                      sk_strerror(rc));
        return NULL;
    }
    return w;
}

static void whll_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    size_t len;
    char *buf = whll_serialize(value, &len);
    if (buf == NULL) {
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a window HyperLogLog");
        return;
    }
    RM_EmitAOF(io, "WHLL.IMPORT", "sb", key, buf, len);
    RM_Free(buf);
}

static void whll_digest(RedisModuleDigest *md, void *value)
{
    size_t len;
    char *buf = whll_serialize(value, &len);
    if (buf != NULL)
        RM_DigestAddStringBuffer(md, buf, len);
    RM_Free(buf);
    RM_DigestEndSequence(md);
}

size_t whll_memory(const sk_window_hll *w)
{
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    return info.memory;
}

static size_t whll_mem_usage(const void *value)
{
    return whll_memory(value);
}

static void whll_free(void *value)
{
    sk_window_hll_free(value);
}

static void *whll_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_window_hll *copy;
    return sk_window_hll_copy(&copy, value) == SK_OK ? copy : NULL;
}

int whll_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = whll_rdb_load,
        .rdb_save = whll_rdb_save,
        .aof_rewrite = whll_aof_rewrite,
        .mem_usage = whll_mem_usage,
        .digest = whll_digest,
        .free = whll_free,
        .copy = whll_copy,
    };
    whll_type = RM_CreateDataType(ctx, "sketch-wh", WHLL_ENCODING_VERSION, &methods);
    return whll_type == NULL ? RM_ERR : RM_OK;
}
