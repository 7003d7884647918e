/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * td_commands.c: the TDIGEST.* commands, answering as RedisBloom 2.6 does
 * (replies, RESP3 types and "ERR T-Digest: ..." errors), so that its
 * clients work unchanged; and three of sketch's own: TDIGEST.EXPORT and
 * TDIGEST.IMPORT, which move a digest as the library's bytes, and
 * TDIGEST.COMPRESS.
 *
 *   TDIGEST.CREATE key [COMPRESSION compression]
 *   TDIGEST.ADD key value [value ...]
 *   TDIGEST.RESET key
 *   TDIGEST.MERGE destination numkeys source [source ...]
 *                 [COMPRESSION compression] [OVERRIDE]
 *   TDIGEST.COMPRESS key, TDIGEST.EXPORT key, TDIGEST.IMPORT key bytes
 *
 * and registers the reads of td_reads.c.
 *
 * RedisBloom's reads compress the digest they read, and so do the reads
 * here (td_reads.c says how), flagged may-replicate, as PFCOUNT is: CLIENT
 * PAUSE WRITE holds them, and read-only scripts refuse them. TDIGEST.MERGE
 * compresses its sources in place, as RedisBloom's does; its replicas,
 * given the same command, do the same. Every write replicates what it did:
 * TDIGEST.CREATE and TDIGEST.MERGE with the compression they used, an ADD
 * cut short with the values it added.
 */
#include <math.h>
#include <string.h>

#include "common.h"
#include "module.h"
#include "td_reads.h"
#include "td_type.h"


/* ---- creation --------------------------------------------------------------- */

static int parse_compression(RedisModuleCtx *ctx, RedisModuleString *arg, long long *out)
{
    const char *error = NULL;
    if (RM_StringToLongLong(arg, out) != RM_OK)
        error = TD_E_PREFIX "error parsing compression parameter";
    else if (*out <= 0)
        error = TD_E_PREFIX "compression parameter needs to be a positive integer";
    else if (*out > SK_TDIGEST_MAX_COMPRESSION) /* RedisBloom's capacity would overflow */
        error = TD_E_PREFIX "compression parameter needs to be at most 357913939";
    if (error != NULL)
        RM_ReplyWithError(ctx, error);
    return error == NULL ? RM_OK : RM_ERR;
}

/* An empty digest within the key's limit, or NULL after replying why not. */
static sk_tdigest *create_digest(RedisModuleCtx *ctx, long long compression)
{
    sk_tdigest_options o = {.compression = (uint32_t)compression,
                            .max_memory = key_limit(ctx),
                            .allocator = &module_allocator};
    sk_tdigest *t;
    int rc = sk_tdigest_create(&t, &o);
    if (rc == SK_OK)
        return t;
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, TD_E_PREFIX, "t-digest", sk_tdigest_create_memory(&o));
    else
        RM_ReplyWithError(ctx, TD_E_PREFIX "allocation failed");
    return NULL;
}

/* TDIGEST.CREATE key [COMPRESSION compression]: the keyword may stand in
 * either place, as RedisBloom finds it; the number is the last argument. */
static int cmd_create(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 4)
        return RM_WrongArity(ctx);
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    int kind = RM_KeyType(key);
    long long compression = SK_TDIGEST_DEFAULT_COMPRESSION;
    sk_tdigest *t = NULL;
    if (kind != RM_KEYTYPE_EMPTY)
        RM_ReplyWithError(ctx, blob_holds(&td_family, key)
                                   ? TD_E_PREFIX "key already exists"
                                   : RM_WRONGTYPE);
    else if (argc == 4 && !arg_is(argv[2], "COMPRESSION") && !arg_is(argv[3], "COMPRESSION"))
        RM_ReplyWithError(ctx, TD_E_PREFIX "wrong keyword");
    else if (argc == 2 || parse_compression(ctx, argv[3], &compression) == RM_OK)
        t = create_digest(ctx, compression);
    if (t == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, blob_type_for(&td_family, key), t);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "tdigest.create", argv[1]);
    RM_Replicate(ctx, "TDIGEST.CREATE", "scl", argv[1], "COMPRESSION", compression);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- adding ----------------------------------------------------------------- */

/* TDIGEST.ADD key value [value ...]: every value is read before any is
 * added, so that a bad one changes nothing. */
static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (t == NULL)
        return RM_OK;
    int n = argc - 2;
    double stack[32];
    double *values = n <= 32 ? stack : RM_TryAlloc((size_t)n * sizeof *values);
    const char *error = values == NULL ? TD_E_NO_MEMORY : NULL;
    for (int i = 0; error == NULL && i < n; i++) {
        if (RM_StringToDouble(argv[2 + i], &values[i]) != RM_OK || isnan(values[i]))
            error = TD_E_PREFIX "error parsing val parameter";
        else if (!isfinite(values[i]))
            error = TD_E_PREFIX "val parameter needs to be a finite number";
    }
    int added = 0, rc = SK_OK;
    while (error == NULL && added < n && (rc = sk_tdigest_add(t, values[added], 1)) == SK_OK)
        added++;
    if (values != stack)
        RM_Free(values);
    RM_CloseKey(key);
    if (added > 0) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "tdigest.add", argv[1]);
        if (added == n)
            RM_ReplicateVerbatim(ctx);
        else
            RM_Replicate(ctx, "TDIGEST.ADD", "sv", argv[1], argv + 2, (size_t)added);
    }
    if (error == NULL && rc != SK_OK)
        error = rc == SK_ENOMEM ? TD_E_NO_MEMORY : TD_E_PREFIX "overflow detected";
    return error != NULL ? RM_ReplyWithError(ctx, error) : RM_ReplyWithSimpleString(ctx, "OK");
}

/* TDIGEST.RESET key */
static int cmd_reset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (t == NULL)
        return RM_OK;
    sk_tdigest_clear(t);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "tdigest.reset", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* TDIGEST.COMPRESS key: merges the buffer now, as a read of RedisBloom's
 * would; 1 if it held values, 0 if not. */
static int cmd_compress(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ | RM_WRITE, &key);
    if (t == NULL)
        return RM_OK;
    int changed = sk_tdigest_compress(t);
    RM_CloseKey(key);
    if (changed == 1)
        RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithLongLong(ctx, changed);
}

/* ---- merging ---------------------------------------------------------------- */

static int index_of(RedisModuleString **args, int n, const char *keyword)
{
    for (int i = 0; i < n; i++)
        if (arg_is(args[i], keyword))
            return i;
    return -1;
}

static int same_name(RedisModuleString *a, RedisModuleString *b)
{
    size_t la, lb;
    const char *pa = RM_StringPtrLen(a, &la), *pb = RM_StringPtrLen(b, &lb);
    return la == lb && memcmp(pa, pb, la) == 0;
}

/* What TDIGEST.MERGE was asked: its compression (0: the largest of the
 * sources') and OVERRIDE, read in RedisBloom's order; RM_ERR after
 * replying the first error. */
struct merge_request {
    long long numkeys;
    long long compression;
    int use_largest;
    int override;
};

static int parse_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                       const sk_tdigest *dst, struct merge_request *m)
{
    if (RM_StringToLongLong(argv[2], &m->numkeys) != RM_OK)
        return RM_ReplyWithError(ctx, TD_E_PREFIX "error parsing numkeys"), RM_ERR;
    if (m->numkeys <= 0)
        return RM_ReplyWithError(ctx, TD_E_PREFIX "numkeys needs to be a positive integer"), RM_ERR;
    if (m->numkeys > argc - 3)
        return RM_WrongArity(ctx), RM_ERR;
    sk_tdigest_info info;
    sk_tdigest_get_info(dst, &info); /* compression 0 for no destination */
    m->compression = info.compression;
    m->use_largest = dst == NULL;
    m->override = 0;
    int rest = (int)m->numkeys + 3;
    if (rest >= argc)
        return RM_OK;
    int at = index_of(argv + rest, argc - rest, "COMPRESSION");
    if (at >= 0) {
        m->use_largest = 0;
        if (rest + at + 1 >= argc)
            return RM_WrongArity(ctx), RM_ERR;
        if (parse_compression(ctx, argv[rest + at + 1], &m->compression) != RM_OK)
            return RM_ERR;
    }
    if (index_of(argv + rest, argc - rest, "OVERRIDE") >= 0) {
        m->override = 1;
        if (at < 0) { /* the largest of the sources, the destination's left out */
            m->use_largest = 1;
            m->compression = 0;
        }
    } else if (at < 0) {
        return RM_ReplyWithError(ctx, TD_E_PREFIX "wrong keyword"), RM_ERR;
    }
    return RM_OK;
}

/* The sources of TDIGEST.MERGE into srcs, the compression raised to the
 * largest where asked; RM_ERR after replying the first missing key. */
static int merge_sources(RedisModuleCtx *ctx, RedisModuleString **argv, sk_tdigest *dst,
                         struct merge_request *m, sk_tdigest **srcs)
{
    for (long long i = 0; i < m->numkeys; i++) {
        RedisModuleString *name = argv[3 + i];
        if (same_name(name, argv[1])) {
            if (dst == NULL)
                return RM_ReplyWithError(ctx, TD_E_PREFIX "key does not exist"), RM_ERR;
            srcs[i] = dst;
        } else {
            RedisModuleKey *key;
            if ((srcs[i] = td_open_existing(ctx, name, RM_READ, &key)) == NULL)
                return RM_ERR;
            RM_CloseKey(key); /* the value stays while the command runs */
        }
        sk_tdigest_info info;
        sk_tdigest_get_info(srcs[i], &info);
        if (m->use_largest && info.compression > m->compression)
            m->compression = info.compression;
    }
    return RM_OK;
}

/* Whether the weights to merge add up below 2^63 (RedisBloom answers
 * "overflow detected" half way; here nothing changes first). */
static int weights_fit(sk_tdigest *const *srcs, long long n, const sk_tdigest *also)
{
    double sum = also != NULL ? (double)td_total_weight(also) : 0;
    for (long long i = 0; i < n; i++)
        sum += (double)td_total_weight(srcs[i]);
    return sum < 9223372036854775808.0 * (1 - 1e-15); /* well inside, whatever rounding */
}

/* The new digest: the old destination's centroids unless OVERRIDE, then
 * each source's, each compressed in place first as RedisBloom's merge
 * compresses them (the replicas, given the same command, do the same). */
static sk_tdigest *merge_into_new(RedisModuleCtx *ctx, sk_tdigest *dst, sk_tdigest **srcs,
                                  const struct merge_request *m)
{
    sk_tdigest *out = create_digest(ctx, m->compression);
    if (out == NULL)
        return NULL;
    int rc = SK_OK;
    if (dst != NULL && !m->override) {
        sk_tdigest_compress(dst);
        rc = sk_tdigest_merge(out, dst);
    }
    for (long long i = 0; rc == SK_OK && i < m->numkeys; i++) {
        sk_tdigest_compress(srcs[i]);
        rc = sk_tdigest_merge(out, srcs[i]);
    }
    if (rc != SK_OK) {
        sk_tdigest_free(out);
        RM_ReplyWithError(ctx, rc == SK_ENOMEM ? TD_E_NO_MEMORY : TD_E_PREFIX "overflow detected");
        return NULL;
    }
    return out;
}

static int cmd_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (RM_IsKeysPositionRequest(ctx))
        return reply_numkeys_keys(ctx, argv, argc);
    if (argc < 4)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    void *existing;
    if (blob_open(ctx, argv[1], RM_READ, &td_family, &key, &existing) != RM_OK)
        return RM_OK;
    RM_CloseKey(key);
    sk_tdigest *dst = existing, **srcs = NULL, *out = NULL;
    struct merge_request m;
    if (parse_merge(ctx, argv, argc, dst, &m) != RM_OK)
        return RM_OK;
    if ((srcs = RM_TryAlloc((size_t)m.numkeys * sizeof *srcs)) == NULL)
        RM_ReplyWithError(ctx, TD_E_NO_MEMORY);
    else if (merge_sources(ctx, argv, dst, &m, srcs) != RM_OK)
        ;
    else if (!weights_fit(srcs, m.numkeys, m.override ? NULL : dst))
        RM_ReplyWithError(ctx, TD_E_PREFIX "overflow detected");
    else
        out = merge_into_new(ctx, dst, srcs, &m);
    RM_Free(srcs);
    if (out == NULL)
        return RM_OK;
    key = RM_OpenKey(ctx, argv[1], RM_WRITE);
    RM_ModuleTypeSetValue(key, blob_type_for(&td_family, key), out);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "tdigest.merge", argv[1]);
    RM_Replicate(ctx, "TDIGEST.MERGE", m.override ? "slvclc" : "slvcl", argv[1], m.numkeys,
                 argv + 3, (size_t)m.numkeys, "COMPRESSION", m.compression, "OVERRIDE");
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- moving ------------------------------------------------------------------- */

static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_export_command(&td_family, ctx, argv, argc);
}

/* TDIGEST.IMPORT key bytes: the digest's full capacity, which its adds may
 * come to take, must be within the key's limit, as at TDIGEST.CREATE. */
static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    size_t len;
    const char *bytes = argc == 3 ? RM_StringPtrLen(argv[2], &len) : NULL;
    sk_tdigest *t;
    if (bytes != NULL && sk_tdigest_deserialize(&t, bytes, len, NULL) == SK_OK) {
        uint64_t full = td_full_memory(t), limit = key_limit(ctx);
        sk_tdigest_free(t);
        if (limit != 0 && full > limit)
            return reply_over_key_limit(ctx, TD_E_PREFIX, "t-digest", full);
    }
    return blob_import_command(&td_family, ctx, argv, argc);
}

int td_register(RedisModuleCtx *ctx)
{
    if (td_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"tdigest.create", cmd_create, "write deny-oom", 1},
        {"tdigest.add", cmd_add, "write deny-oom", 1},
        {"tdigest.reset", cmd_reset, "write", 1},
        /* its sources: in its key specs (command_docs.c) and asked of it */
        {"tdigest.merge", cmd_merge, "write deny-oom getkeys-api", 1},
        {"tdigest.min", td_cmd_min, "readonly", 1},
        {"tdigest.max", td_cmd_max, "readonly", 1},
        {"tdigest.quantile", td_cmd_quantile, "readonly may-replicate", 1},
        {"tdigest.cdf", td_cmd_cdf, "readonly may-replicate", 1},
        {"tdigest.rank", td_cmd_rank, "readonly may-replicate", 1},
        {"tdigest.revrank", td_cmd_revrank, "readonly may-replicate", 1},
        {"tdigest.byrank", td_cmd_byrank, "readonly may-replicate", 1},
        {"tdigest.byrevrank", td_cmd_byrevrank, "readonly may-replicate", 1},
        {"tdigest.trimmed_mean", td_cmd_trimmed_mean, "readonly may-replicate", 1},
        {"tdigest.info", td_cmd_info, "readonly", 1},
        {"tdigest.compress", cmd_compress, "write", 1},
        {"tdigest.export", cmd_export, "readonly", 1},
        {"tdigest.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
