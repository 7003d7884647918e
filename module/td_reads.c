/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * td_reads.c: the TDIGEST.* reads, answering as RedisBloom 2.6 does:
 *
 *   TDIGEST.MIN key, TDIGEST.MAX key, TDIGEST.INFO key
 *   TDIGEST.QUANTILE key quantile [quantile ...]
 *   TDIGEST.CDF key value [value ...]
 *   TDIGEST.RANK | REVRANK key value [value ...]
 *   TDIGEST.BYRANK | BYREVRANK key rank [rank ...]
 *   TDIGEST.TRIMMED_MEAN key low_cut_quantile high_cut_quantile
 *
 * RedisBloom's reads compress the digest they read (merge its buffer into
 * its centroids), and its later answers depend on where that happened. A
 * primary here compresses where RedisBloom does, so that it answers as
 * RedisBloom would, and sends TDIGEST.COMPRESS to its replicas and the AOF,
 * so that they hold the same digest (RedisBloom's replicas, which never see
 * the reads, drift from their primary). A replica's reads answer from a
 * compressed copy and change nothing.
 */
#include <math.h>

#include "common.h"
#include "td_reads.h"
#include "td_type.h"

/* Merges the buffer where RedisBloom's read would: in place on a primary,
 * sent on as TDIGEST.COMPRESS when it changed the digest; a replica's read
 * works on a copy instead (the library's reads make one). */
static void compress_as_read(RedisModuleCtx *ctx, RedisModuleString *name, sk_tdigest *t,
                             const sk_tdigest_info *info)
{
    /* The server's flags cost more than the read: asked only when needed. */
    if (info->unmerged_nodes == 0 || (RM_GetContextFlags(ctx) & RM_CTX_FLAGS_SLAVE))
        return;
    if (sk_tdigest_compress(t) == 1)
        RM_Replicate(ctx, "TDIGEST.COMPRESS", "s", name);
}

/* TDIGEST.MIN key; TDIGEST.MAX key: NaN while empty */
static int min_max(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int max)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    RM_CloseKey(key);
    return RM_ReplyWithDouble(ctx, max ? info.max : info.min);
}

int td_cmd_min(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return min_max(ctx, argv, argc, 0);
}

int td_cmd_max(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return min_max(ctx, argv, argc, 1);
}

static int reply_doubles(RedisModuleCtx *ctx, const double *v, int n)
{
    RM_ReplyWithArray(ctx, n);
    for (int i = 0; i < n; i++)
        RM_ReplyWithDouble(ctx, v[i]);
    return RM_OK;
}

/* What a read of numbers takes: the key's digest, and its arguments from
 * the third on, read as doubles (as_rank: as ranks, integers of at least
 * 0) in one block of memory; NULL after replying an error. */
#define READ_ARGS_ON_STACK 16

struct read_args {
    RedisModuleKey *key;
    sk_tdigest *t;
    int n;
    double *x;     /* the arguments, */
    int64_t *rank; /* or as ranks, */
    double *out;   /* and room for an answer each: */
    double stack[2 * READ_ARGS_ON_STACK]; /* here for a few, else allocated */
};

static void close_read(struct read_args *r)
{
    if (r->out != r->stack)
        RM_Free(r->out);
    RM_CloseKey(r->key);
}

static int open_read(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int as_rank,
                     const char *parse_error, struct read_args *r)
{
    if (argc < 3)
        return RM_WrongArity(ctx), RM_ERR;
    if ((r->t = td_open_existing(ctx, argv[1], RM_READ, &r->key)) == NULL)
        return RM_ERR;
    r->n = argc - 2;
    r->out = r->n <= READ_ARGS_ON_STACK
                 ? r->stack
                 : RM_TryAlloc((size_t)r->n * (sizeof *r->out + sizeof *r->x));
    r->x = r->out == NULL ? NULL : r->out + r->n;
    r->rank = (int64_t *)r->x;
    const char *error = r->out == NULL ? TD_E_NO_MEMORY : NULL;
    for (int i = 0; error == NULL && i < r->n; i++) {
        long long v;
        if (!as_rank && (RM_StringToDouble(argv[2 + i], &r->x[i]) != RM_OK || isnan(r->x[i])))
            error = parse_error;
        else if (as_rank && RM_StringToLongLong(argv[2 + i], &v) != RM_OK)
            error = parse_error;
        else if (as_rank && (r->rank[i] = v) < 0)
            error = TD_E_PREFIX "rank needs to be non negative";
    }
    if (error == NULL)
        return RM_OK;
    close_read(r);
    return RM_ReplyWithError(ctx, error), RM_ERR;
}

/* TDIGEST.QUANTILE key quantile [quantile ...] */
int td_cmd_quantile(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    struct read_args r;
    if (open_read(ctx, argv, argc, 0, TD_E_PREFIX "error parsing quantile", &r) != RM_OK)
        return RM_OK;
    for (int i = 0; i < r.n; i++)
        if (!(r.x[i] >= 0 && r.x[i] <= 1)) {
            close_read(&r);
            return RM_ReplyWithError(ctx, TD_E_PREFIX "quantile should be in [0,1]");
        }
    sk_tdigest_info info;
    sk_tdigest_get_info(r.t, &info);
    compress_as_read(ctx, argv[1], r.t, &info);
    int rc = sk_tdigest_quantiles(r.t, r.x, r.out, (size_t)r.n);
    rc == SK_OK ? reply_doubles(ctx, r.out, r.n) : RM_ReplyWithError(ctx, TD_E_NO_MEMORY);
    close_read(&r);
    return RM_OK;
}

/* TDIGEST.CDF key value [value ...] */
int td_cmd_cdf(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    struct read_args r;
    if (open_read(ctx, argv, argc, 0, TD_E_PREFIX "error parsing cdf", &r) != RM_OK)
        return RM_OK;
    sk_tdigest_info info;
    sk_tdigest_get_info(r.t, &info);
    compress_as_read(ctx, argv[1], r.t, &info);
    int rc = sk_tdigest_cdf(r.t, r.x, r.out, (size_t)r.n);
    rc == SK_OK ? reply_doubles(ctx, r.out, r.n) : RM_ReplyWithError(ctx, TD_E_NO_MEMORY);
    close_read(&r);
    return RM_OK;
}

/* TDIGEST.RANK and REVRANK key value [value ...]: RedisBloom reads the
 * CDF, and so compresses, only for a value within [min, max]. */
static int rank_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int reverse)
{
    struct read_args r;
    if (open_read(ctx, argv, argc, 0, TD_E_PREFIX "error parsing value", &r) != RM_OK)
        return RM_OK;
    sk_tdigest_info info;
    sk_tdigest_get_info(r.t, &info);
    for (int i = 0; i < r.n; i++)
        if (info.merged_weight + info.unmerged_weight > 0 && r.x[i] >= info.min &&
            r.x[i] <= info.max) {
            compress_as_read(ctx, argv[1], r.t, &info);
            break;
        }
    int64_t *ranks = (int64_t *)r.out;
    if (sk_tdigest_rank(r.t, r.x, ranks, (size_t)r.n, reverse) != SK_OK) {
        RM_ReplyWithError(ctx, TD_E_NO_MEMORY);
    } else {
        RM_ReplyWithArray(ctx, r.n);
        for (int i = 0; i < r.n; i++)
            RM_ReplyWithLongLong(ctx, ranks[i]);
    }
    close_read(&r);
    return RM_OK;
}

int td_cmd_rank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rank_command(ctx, argv, argc, 0);
}

int td_cmd_revrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rank_command(ctx, argv, argc, 1);
}

/* TDIGEST.BYRANK and BYREVRANK key rank [rank ...]: RedisBloom reads a
 * quantile, and so compresses, only for a rank in (0, total weight). */
static int by_rank_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int reverse)
{
    struct read_args r;
    if (open_read(ctx, argv, argc, 1, TD_E_PREFIX "error parsing rank", &r) != RM_OK)
        return RM_OK;
    sk_tdigest_info info;
    sk_tdigest_get_info(r.t, &info);
    double size = (double)(info.merged_weight + info.unmerged_weight);
    for (int i = 0; i < r.n; i++)
        if (r.rank[i] > 0 && (double)r.rank[i] < size) {
            compress_as_read(ctx, argv[1], r.t, &info);
            break;
        }
    int rc = sk_tdigest_by_rank(r.t, r.rank, r.out, (size_t)r.n, reverse);
    rc == SK_OK ? reply_doubles(ctx, r.out, r.n) : RM_ReplyWithError(ctx, TD_E_NO_MEMORY);
    close_read(&r);
    return RM_OK;
}

int td_cmd_byrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return by_rank_command(ctx, argv, argc, 0);
}

int td_cmd_byrevrank(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return by_rank_command(ctx, argv, argc, 1);
}

/* TDIGEST.TRIMMED_MEAN key low_cut_quantile high_cut_quantile */
int td_cmd_trimmed_mean(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    double lo, hi, mean;
    const char *error = NULL;
    if (RM_StringToDouble(argv[2], &lo) != RM_OK)
        error = TD_E_PREFIX "error parsing low_cut_percentile";
    else if (RM_StringToDouble(argv[3], &hi) != RM_OK)
        error = TD_E_PREFIX "error parsing high_cut_percentile";
    else if (lo < 0 || lo > 1 || hi < 0 || hi > 1)
        error = TD_E_PREFIX "low_cut_percentile and high_cut_percentile should be in [0,1]";
    else if (lo >= hi)
        error = TD_E_PREFIX "low_cut_percentile should be lower than high_cut_percentile";
    if (error == NULL) {
        sk_tdigest_info info;
        sk_tdigest_get_info(t, &info);
        compress_as_read(ctx, argv[1], t, &info);
        if (sk_tdigest_trimmed_mean(t, lo, hi, &mean) != SK_OK)
            error = TD_E_NO_MEMORY;
    }
    RM_CloseKey(key);
    return error != NULL ? RM_ReplyWithError(ctx, error) : RM_ReplyWithDouble(ctx, mean);
}

/* TDIGEST.INFO key: RedisBloom's nine fields, a map in RESP3; "Memory
 * usage" is what the digest holds now, not RedisBloom's full capacity. */
int td_cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_tdigest *t = td_open_existing(ctx, argv[1], RM_READ, &key);
    if (t == NULL)
        return RM_OK;
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    RM_CloseKey(key);
    const struct {
        const char *name;
        long long value;
    } fields[] = {
        {"Compression", info.compression},
        {"Capacity", info.capacity},
        {"Merged nodes", info.merged_nodes},
        {"Unmerged nodes", info.unmerged_nodes},
        {"Merged weight", info.merged_weight},
        {"Unmerged weight", info.unmerged_weight},
        {"Observations", info.merged_weight + info.unmerged_weight},
        {"Total compressions", info.total_compressions},
        {"Memory usage", (long long)info.memory},
    };
    RM_ReplyWithMap(ctx, sizeof fields / sizeof fields[0]);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        RM_ReplyWithSimpleString(ctx, fields[i].name);
        RM_ReplyWithLongLong(ctx, fields[i].value);
    }
    return RM_OK;
}

