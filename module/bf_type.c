/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_type.c: the Bloom filter type of sketch.so: opening a key that holds
 * one (or must), and what the server calls to save, load, rewrite, digest, measure,
 * copy and free it.
 *
 * RDB keeps a filter as its dump (docs/bloom-format.md): the header, the
 * number of pieces, then the bit arrays in pieces of SAVE_PIECE read into a
 * buffer on the stack, so that a save takes no memory and a load never
 * holds two copies of a large filter; the header's checksums are checked
 * once every piece is in. The AOF rewrite emits the same dump as
 * BF.LOADCHUNK commands.
 *
 * A key whose BF.LOADCHUNK restore has not finished is carried as
 * unfinished by every copy (docs/redis-module.md): encoding version 1 ends
 * with its state (ENC_COMPLETE or ENC_RESTORING), the dump of such a filter
 * carries the sums its arrays must reach, and the AOF rewrite leaves out the
 * dump's last byte, which only the restore's last chunk brings, so that the
 * replay is unfinished too. Version 0, without the state, is complete.
 *
 * Whether a filter refuses new items once full is not in the dump: every
 * non-scaling filter of the module does, so a loaded one is told so
 * (bloom_adopt).
 */
#include "bf_type.h"

#include "bf_chain.h"
#include "common.h"

#define SAVE_PIECE (64u << 10)
#define ENCODING_VERSION 1
#define ENC_COMPLETE 0
#define ENC_RESTORING 1

RedisModuleType *bloom_type;

/* See bf_type.h. */
int open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
                sk_bloom **filter, sk_sbchain **chain)
{
    *key = RM_OpenKey(ctx, name, mode);
    *filter = NULL;
    if (chain != NULL)
        *chain = NULL;
    int type = RM_KeyType(*key);
    if (type == RM_KEYTYPE_EMPTY)
        return RM_OK;
    RedisModuleType *held = type == RM_KEYTYPE_MODULE ? RM_ModuleTypeGetType(*key) : NULL;
    if (held == chain_type && chain != NULL) {
        *chain = RM_ModuleTypeGetValue(*key);
        return RM_OK;
    }
    if (held != bloom_type) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return RM_ERR;
    }
    *filter = RM_ModuleTypeGetValue(*key);
    return RM_OK;
}

/* See bf_type.h. */
int open_existing(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key,
                  sk_bloom **filter, sk_sbchain **chain)
{
    if (open_filter(ctx, name, RM_READ, key, filter, chain) != RM_OK)
        return RM_ERR;
    if (*filter == NULL && (chain == NULL || *chain == NULL)) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, "ERR not found");
        return RM_ERR;
    }
    return RM_OK;
}

/* See bf_type.h. */
int add_each(RedisModuleCtx *ctx, void *filter, add_one_fn one, RedisModuleString **items,
             int count, int single, int *applied)
{
    int changed = 0;
    long replies = 0;
    *applied = 0;
    for (int i = 0; i < count; i++) {
        int rc = one(ctx, filter, items[i]);
        replies++;
        if (rc < 0)
            break;
        ++*applied;
        changed |= rc;
        RM_ReplyWithBool(ctx, rc);
    }
    if (!single)
        RM_ReplySetArrayLength(ctx, replies);
    return changed;
}

/* See bf_type.h. */
int refuse_restoring(RedisModuleCtx *ctx, RedisModuleKey *key, const sk_bloom *f)
{
    if (f == NULL || !sk_bloom_restoring(f))
        return 0;
    RM_CloseKey(key);
    RM_ReplyWithError(ctx, "ERR the filter is being restored: BF.LOADCHUNK its remaining "
                           "chunks first");
    return 1;
}

/* See bf_type.h. */
void bloom_adopt(sk_bloom *f)
{
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    sk_bloom_set_max_memory(f, (uint64_t)module_config.max_key_memory);
    sk_bloom_set_refuse_when_full(f, info.expansion == 0);
}

/* Calls fn for the first `size` bytes of the dump of f in order: the
 * header in one piece, then the arrays in pieces of at most SAVE_PIECE, each
 * read into one buffer on the stack, so that saving a filter takes no memory
 * (a header larger than the buffer, of more than a thousand layers, takes
 * its own); -1 if that memory could not be had. `end` is the dump offset
 * where the piece ends. */
typedef void (*piece_fn)(void *arg, const char *bytes, size_t len, uint64_t end);

static int walk_dump(const sk_bloom *f, uint64_t size, piece_fn fn, void *arg)
{
    char stack[SAVE_PIECE];
    size_t header = sk_bloom_dump_header_size(f);
    char *head = header <= sizeof stack ? stack : RM_TryAlloc(header);
    if (head == NULL)
        return -1;
    sk_bloom_dump_read(f, 0, head, header);
    fn(arg, head, header, header);
    if (head != stack)
        RM_Free(head);
    for (uint64_t at = header; at < size;) {
        size_t len = size - at < sizeof stack ? (size_t)(size - at) : sizeof stack;
        sk_bloom_dump_read(f, at, stack, len);
        at += len;
        fn(arg, stack, len, at);
    }
    return 0;
}

struct rdb_walk {
    RedisModuleIO *io;
    const sk_bloom *f;
};

/* RDB: the header, the number of pieces, the pieces. */
static void save_piece(void *arg, const char *bytes, size_t len, uint64_t end)
{
    struct rdb_walk *w = arg;
    RM_SaveStringBuffer(w->io, bytes, len);
    if (end == sk_bloom_dump_header_size(w->f)) {
        uint64_t rest = sk_bloom_dump_size(w->f) - end;
        RM_SaveUnsigned(w->io, (rest + SAVE_PIECE - 1) / SAVE_PIECE);
    }
}

static void bloom_rdb_save(RedisModuleIO *io, void *value)
{
    struct rdb_walk w = {io, value};
    if (walk_dump(value, sk_bloom_dump_size(value), save_piece, &w) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory saving the header of a Bloom "
                                     "filter of more than a thousand layers");
    RM_SaveUnsigned(io, sk_bloom_restoring(value) ? ENC_RESTORING : ENC_COMPLETE);
}

/* Only the restore's last chunk brings the dump's last byte (it finishes the
 * restore), so an unfinished one has it zero: the AOF rewrite relies on it,
 * and a saved value without it was not made by BF.LOADCHUNK. */
static int last_byte_unset(const sk_bloom *f)
{
    unsigned char last;
    return sk_bloom_dump_read(f, sk_bloom_dump_size(f) - 1, &last, 1) == SK_OK && last == 0;
}

static void *bloom_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver < 0 || encver > ENCODING_VERSION) {
        RM_LogIOError(io, "warning", "sketch: Bloom filter encoding %d is newer than this "
                                     "module's %d", encver, ENCODING_VERSION);
        return NULL;
    }
    size_t len;
    char *header = RM_LoadStringBuffer(io, &len);
    if (header == NULL || RM_IsIOError(io))
        return NULL;
    sk_bloom *f;
    size_t header_len;
    /* RESTORE from a client gets the key's limit; an RDB being loaded, or a
     * replica given a key by its primary, none (docs/limits.md). */
    int flags = RM_GetContextFlags(RM_GetContextFromIO(io));
    uint64_t limit = flags & (RM_CTX_FLAGS_LOADING | RM_CTX_FLAGS_SLAVE)
                         ? 0
                         : module_config.max_key_memory;
    int rc = sk_bloom_restore_begin(&f, header, len, &header_len, &module_allocator, limit);
    RM_Free(header);
    if (rc == SK_EBUDGET) {
        /* The server's reply to RESTORE is its own "Bad data format". */
        RM_LogIOError(io, "warning", "sketch: RESTORE refused: the filter would take more "
                                     "than the module's MAX-KEY-MEMORY of %llu bytes",
                      (unsigned long long)limit);
        return NULL;
    }
    if (rc != SK_OK || header_len != len) {
        if (rc == SK_OK)
            sk_bloom_free(f);
        RM_LogIOError(io, "warning", "sketch: bad Bloom filter header");
        return NULL;
    }
    uint64_t pieces = RM_LoadUnsigned(io), at = header_len;
    for (uint64_t i = 0; i < pieces && !RM_IsIOError(io); i++) {
        char *piece = RM_LoadStringBuffer(io, &len);
        if (piece == NULL) {
            rc = SK_ETRUNCATED;
            break;
        }
        rc = sk_bloom_restore_chunk(f, at, piece, len);
        RM_Free(piece);
        if (rc != SK_OK)
            break;
        at += len;
    }
    if (rc == SK_OK && (RM_IsIOError(io) || at != sk_bloom_dump_size(f)))
        rc = SK_ETRUNCATED;
    uint64_t state = encver >= 1 ? RM_LoadUnsigned(io) : ENC_COMPLETE;
    if (rc == SK_OK && (RM_IsIOError(io) || (state != ENC_COMPLETE && state != ENC_RESTORING)))
        rc = SK_ECORRUPT;
    if (rc == SK_OK && state == ENC_COMPLETE)
        rc = sk_bloom_restore_finish(f);
    else if (rc == SK_OK && !last_byte_unset(f))
        rc = SK_ECORRUPT;
    if (rc != SK_OK) {
        RM_LogIOError(io, "warning", "sketch: bad Bloom filter data: %s", sk_strerror(rc));
        sk_bloom_free(f);
        return NULL;
    }
    /* A loaded filter keeps what it holds, even past the limit, and grows
     * within it like any other (docs/limits.md). */
    bloom_adopt(f);
    return f;
}

struct aof_walk {
    RedisModuleIO *io;
    RedisModuleString *key;
};

static void emit_piece(void *arg, const char *bytes, size_t len, uint64_t end)
{
    struct aof_walk *w = arg;
    RM_EmitAOF(w->io, "BF.LOADCHUNK", "slb", w->key, (long long)(end + 1), bytes, len);
}

static void bloom_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    struct aof_walk w = {io, key};
    uint64_t size = sk_bloom_dump_size(value) - (sk_bloom_restoring(value) ? 1 : 0);
    if (walk_dump(value, size, emit_piece, &w) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a Bloom filter");
}

static void digest_piece(void *arg, const char *bytes, size_t len, uint64_t end)
{
    (void)end;
    RM_DigestAddStringBuffer(arg, bytes, len);
}

/* DEBUG DIGEST-VALUE: the dump and whether its restore is unfinished, so
 * that two servers agree exactly when their filters are the same. */
static void bloom_digest(RedisModuleDigest *md, void *value)
{
    walk_dump(value, sk_bloom_dump_size(value), digest_piece, md);
    RM_DigestAddLongLong(md, sk_bloom_restoring(value));
    RM_DigestEndSequence(md);
}

/* Freed in the background past a few layers (Redis's lazy free). */
static size_t bloom_free_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    sk_bloom_info info;
    sk_bloom_get_info(value, &info);
    return info.layers;
}

static size_t bloom_mem_usage(const void *value)
{
    sk_bloom_info info;
    sk_bloom_get_info(value, &info);
    return info.memory;
}

static void bloom_free(void *value)
{
    sk_bloom_free(value);
}

static void *bloom_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_bloom *copy;
    return sk_bloom_copy(&copy, value) == SK_OK ? copy : NULL;
}

int bloom_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = bloom_rdb_load,
        .rdb_save = bloom_rdb_save,
        .aof_rewrite = bloom_aof_rewrite,
        .mem_usage = bloom_mem_usage,
        .digest = bloom_digest,
        .free = bloom_free,
        .free_effort = bloom_free_effort,
        .copy = bloom_copy,
    };
    bloom_type = RM_CreateDataType(ctx, "sketch-bf", ENCODING_VERSION, &methods);
    return bloom_type == NULL ? RM_ERR : RM_OK;
}
