/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_chain.c: see bf_chain.h. The type saves RedisBloom's fields through
 * the library's codec (sketch/redisbloom.h), and its AOF rewrite is
 * RedisBloom's too: the BF.SCANDUMP header and chunks as BF.LOADCHUNK
 * commands, which this module and RedisBloom both replay. A chain still
 * restoring saves how far it came in bits RedisBloom ignores, and its
 * rewrite leaves out the chunks it has not had, so no copy of it is ever
 * taken for complete here.
 */
#include "bf_chain.h"

#include <stdio.h>

#include "bf_type.h"
#include "common.h"
#include "rb_io.h"

/* BF.SCANDUMP's chunk: RedisBloom's MAX_SCANDUMP_SIZE, so that a client
 * sees the chunks it saw there. */
#define CHAIN_PIECE (16u << 20)
/* Room for one line of BF.DEBUG: seven numbers and their names. */
#define DEBUG_LINE 224

RedisModuleType *chain_type;

static void chain_rdb_save(RedisModuleIO *io, void *value)
{
    sk_rdb_writer w;
    rb_writer_init(&w, io);
    sk_sbchain_save_redisbloom(value, &w);
}

static void *chain_rdb_load(RedisModuleIO *io, int encver)
{
    struct rb_reader rd;
    rb_reader_init(&rd, io);
    uint64_t limit = restore_limit(io);
    sk_sbchain *c = NULL;
    int rc = sk_sbchain_load_redisbloom(&c, &rd.r, encver, limit, &module_allocator);
    rb_reader_finish(&rd);
    if (rc != SK_OK) {
        rb_log_refused(io, "MBbloom--", rc, limit);
        return NULL;
    }
    sk_sbchain_set_max_memory(c, (uint64_t)module_config.max_key_memory);
    return c;
}

/* Calls fn with the header, then each chunk, with the iterator
 * BF.LOADCHUNK takes it with; -1 if the header's memory could not be had. */
typedef void (*piece_fn)(void *arg, long long iterator, const void *bytes, size_t len);

static int walk_pieces(const sk_sbchain *c, piece_fn fn, void *arg)
{
    size_t header_len = sk_sbchain_dump_header_size(c);
    char *header = RM_TryAlloc(header_len);
    if (header == NULL)
        return -1;
    sk_sbchain_dump_header(c, header);
    fn(arg, 1, header, header_len);
    RM_Free(header);
    uint64_t iterator = 1;
    const void *piece;
    size_t len;
    while (sk_sbchain_dump_piece(c, &iterator, CHAIN_PIECE, &piece, &len) == 1)
        fn(arg, (long long)iterator, piece, len);
    return 0;
}

struct aof_walk {
    RedisModuleIO *io;
    RedisModuleString *key;
};

static void emit_piece(void *arg, long long iterator, const void *bytes, size_t len)
{
    struct aof_walk *w = arg;
    RM_EmitAOF(w->io, "BF.LOADCHUNK", "slb", w->key, iterator, bytes, len);
}

static void chain_aof_rewrite(RedisModuleIO *io, RedisModuleString *key, void *value)
{
    struct aof_walk w = {io, key};
    if (walk_pieces(value, emit_piece, &w) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a Bloom filter");
}

static void digest_piece(void *arg, long long iterator, const void *bytes, size_t len)
{
    (void)iterator;
    RM_DigestAddStringBuffer(arg, bytes, len);
}

static void chain_digest(RedisModuleDigest *md, void *value)
{
    walk_pieces(value, digest_piece, md);
    RM_DigestAddLongLong(md, sk_sbchain_restoring(value));
    RM_DigestEndSequence(md);
}

static size_t chain_mem_usage(const void *value)
{
    sk_sbchain_info info;
    sk_sbchain_get_info(value, &info);
    return info.memory;
}

static void chain_free(void *value)
{
    sk_sbchain_free(value);
}

static void *chain_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    sk_sbchain *copy;
    return sk_sbchain_copy(&copy, value) == SK_OK ? copy : NULL;
}

int chain_type_create(RedisModuleCtx *ctx)
{
    static RedisModuleTypeMethods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = chain_rdb_load,
        .rdb_save = chain_rdb_save,
        .aof_rewrite = chain_aof_rewrite,
        .mem_usage = chain_mem_usage,
        .digest = chain_digest,
        .free = chain_free,
        .copy = chain_copy,
    };
    chain_type = RM_CreateDataType(ctx, "MBbloom--", SK_REDISBLOOM_BF_ENCVER, &methods);
    return chain_type == NULL ? RM_ERR : RM_OK;
}

sk_sbchain *chain_create(RedisModuleCtx *ctx, double error_rate, long long capacity,
                         long long expansion)
{
    sk_sbchain_options o = {
        .capacity = (uint64_t)capacity,
        .fp_rate = error_rate,
        .expansion = expansion > 0 ? (unsigned)expansion : 0,
        .non_scaling = expansion == 0,
        .max_memory = key_limit(ctx),
        .allocator = &module_allocator,
    };
    sk_sbchain *c;
    int rc = sk_sbchain_create(&c, &o);
    if (rc == SK_OK) {
        sk_sbchain_set_max_memory(c, (uint64_t)module_config.max_key_memory);
        return c;
    }
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
    else
        reply_status(ctx, rc);
    return NULL;
}

/* Adds one item, or replies the error that stops the command and returns
 * a negative value. */
static int add_item(RedisModuleCtx *ctx, void *chain, RedisModuleString *item)
{
    sk_sbchain *c = chain;
    size_t len;
    const char *data = RM_StringPtrLen(item, &len);
    int rc = sk_sbchain_add(c, data, len);
    if (rc >= 0)
        return rc;
    if (rc == SK_EFULL)
        RM_ReplyWithError(ctx, "ERR non scaling filter is full");
    else if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
    else
        RM_ReplyWithError(ctx, "ERR problem inserting into filter");
    return rc;
}

int chain_add_items(RedisModuleCtx *ctx, sk_sbchain *c, RedisModuleString **items, int count,
                    int single, int *applied)
{
    if (!single)
        RM_ReplyWithArray(ctx, RM_POSTPONED_ARRAY_LEN);
    /* CONFIG SET may have changed the limit since the chain was made; the
     * server's own history has none. Asked once: the context's flags cost
     * as much as an add. */
    sk_sbchain_set_max_memory(c, key_limit(ctx));
    return add_each(ctx, c, add_item, items, count, single, applied);
}

void chain_exists(RedisModuleCtx *ctx, const sk_sbchain *c, RedisModuleString **items,
                  int count, int single)
{
    if (!single)
        RM_ReplyWithArray(ctx, count);
    for (int i = 0; i < count; i++) {
        size_t len;
        const char *data = RM_StringPtrLen(items[i], &len);
        RM_ReplyWithBool(ctx, sk_sbchain_contains(c, data, len) == 1);
    }
}

uint64_t chain_count(const sk_sbchain *c)
{
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    return info.count;
}

void chain_info_values(const sk_sbchain *c, long long values[5], int *nonscaling)
{
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    values[0] = (long long)info.capacity;
    values[1] = (long long)info.redisbloom_size;
    values[2] = (long long)info.links;
    values[3] = (long long)info.count;
    values[4] = (long long)info.expansion;
    *nonscaling = info.expansion == 0;
}

int chain_scandump(RedisModuleCtx *ctx, const sk_sbchain *c, long long iterator)
{
    RM_ReplyWithArray(ctx, 2);
    if (iterator == 0) {
        size_t len = sk_sbchain_dump_header_size(c);
        char *header = RM_TryAlloc(len);
        if (header == NULL) {
            RM_ReplyWithLongLong(ctx, 0);
            return RM_ReplyWithStringBuffer(ctx, "", 0);
        }
        sk_sbchain_dump_header(c, header);
        RM_ReplyWithLongLong(ctx, 1);
        RM_ReplyWithStringBuffer(ctx, header, len);
        RM_Free(header);
        return RM_OK;
    }
    uint64_t next = iterator < 0 ? 0 : (uint64_t)iterator;
    const void *piece = NULL;
    size_t len = 0;
    if (next == 0 || sk_sbchain_dump_piece(c, &next, CHAIN_PIECE, &piece, &len) != 1) {
        RM_ReplyWithLongLong(ctx, 0);
        return RM_ReplyWithStringBuffer(ctx, "", 0);
    }
    RM_ReplyWithLongLong(ctx, (long long)next);
    return RM_ReplyWithStringBuffer(ctx, piece, len);
}

/* RedisBloom's BF.DEBUG: "size:<items>", then a line per link. */
int chain_debug(RedisModuleCtx *ctx, const sk_sbchain *c)
{
    sk_sbchain_info info;
    sk_sbchain_get_info(c, &info);
    char line[DEBUG_LINE];
    RM_ReplyWithArray(ctx, 1 + (long)info.links);
    int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)info.count);
    RM_ReplyWithStringBuffer(ctx, line, (size_t)n);
    sk_sbchain_link l;
    for (unsigned i = 0; sk_sbchain_get_link(c, i, &l) == SK_OK; i++) {
        n = snprintf(line, sizeof line,
                     "bytes:%llu bits:%llu hashes:%u hashwidth:%u capacity:%llu size:%llu "
                     "ratio:%g",
                     (unsigned long long)l.bytes, (unsigned long long)l.bits, l.hashes,
                     l.hash_bits, (unsigned long long)l.capacity, (unsigned long long)l.count,
                     l.fp_rate);
        RM_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    return RM_OK;
}

int chain_load_header(RedisModuleCtx *ctx, RedisModuleKey *key, const char *data, size_t len)
{
    sk_sbchain *c;
    int rc = sk_sbchain_restore_begin(&c, data, len, key_limit(ctx), &module_allocator);
    if (rc != SK_OK)
        return rc;
    sk_sbchain_set_max_memory(c, (uint64_t)module_config.max_key_memory);
    RM_ModuleTypeSetValue(key, chain_type, c);
    return SK_OK;
}

int chain_load_chunk(RedisModuleCtx *ctx, sk_sbchain *c, long long iterator, const char *data,
                     size_t len)
{
    int rc = sk_sbchain_restore_piece(c, (uint64_t)iterator, data, len);
    if (rc == SK_EINCOMPAT) {
        RM_ReplyWithError(ctx, "ERR the filter is complete: a restore starts with its header "
                               "on an empty key");
        return RM_ERR;
    }
    if (rc != SK_OK) {
        RM_ReplyWithError(ctx, "ERR received bad data");
        return RM_ERR;
    }
    return RM_OK;
}

int chain_refuse_restoring(RedisModuleCtx *ctx, RedisModuleKey *key, const sk_sbchain *c)
{
    if (c == NULL || !sk_sbchain_restoring(c))
        return 0;
    RM_CloseKey(key);
    RM_ReplyWithError(ctx, "ERR the filter is being restored: BF.LOADCHUNK its remaining "
                           "chunks first");
    return 1;
}
