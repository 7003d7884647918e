/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_commands.c: the HLL.* commands: what PF* lacks, in its spirit.
 *
 *   HLL.RESERVE key precision         an empty sketch of precision 4..18
 *   HLL.ADD key [element ...]         like PFADD: 1 if a register changed or
 *                                     the key was created (precision 14)
 *   HLL.COUNT key [key ...]           the count of the union, like PFCOUNT
 *   HLL.ESTIMATE key [key ...]        [count, relative standard error, then
 *                                     lower and upper bounds at 1, 2, 3 sd]
 *   HLL.MERGE dest src [src ...]      dest becomes the union, dest included;
 *                                     a native PF dest stays a PF key
 *   HLL.COMPARE key1 key2             what two sketches say of both sets: the
 *                                     union, the intersection, each one's
 *                                     part outside the other, the Jaccard
 *                                     index and the share of key1 in key2,
 *                                     each with its standard error and bounds
 *                                     at 2 sd, by joint maximum likelihood
 *                                     (docs/hll-compare.md); a map of 25
 *   HLL.INFO key                      precision, registers, encoding, count,
 *                                     standard error, serialized bytes
 *   HLL.EXPORT key                    the sketch as a Redis HyperLogLog
 *                                     string, to SET into a native key
 *   HLL.IMPORT key value              the key (empty, a sketch or a PF key)
 *                                     becomes the sketch in value: a Redis
 *                                     HyperLogLog string (what GET of a PF key
 *                                     returns) or sketch's own format
 *
 * Every command that reads sketches also reads native PF keys (strings
 * holding a Redis HyperLogLog), so a union can mix both. Sketches of
 * different precision are combined at the smallest. A union is the
 * register-wise maximum of byte-per-register arrays and one histogram pass,
 * a few microseconds per key, where PFCOUNT of several keys decodes and
 * re-packs 6-bit registers key by key.
 *
 * The sketches are kept in keys of the type of hll_type.c.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "hll_type.h"
#include "module.h"

/* A count as an integer reply: an estimate beyond 2^63 (registers no real
 * stream produces) saturates rather than wrapping negative. */
/* An empty sketch in Redis's memory. */
static int new_sketch(sk_hll **out, unsigned precision)
{
    sk_hll_options opts = {.precision = precision, .allocator = &module_allocator};
    return sk_hll_create(out, &opts);
}

static long long count_reply(uint64_t count)
{
    return count > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)count;
}

/* A bound as an integer reply, whatever the double holds. */
static long long bound_reply(double x)
{
    if (!(x > 0))
        return 0;
    return x >= 0x1p63 ? LLONG_MAX : (long long)x;
}

/* Reads key as a sketch: *out is a sketch owned by the key (our type), a
 * new sketch decoded from a native PF string (*owned = 1: free it), or NULL
 * for an empty key. Replies an error and returns RM_ERR otherwise. */
static int read_sketch(RedisModuleCtx *ctx, RedisModuleString *name, sk_hll **out,
                       int *owned)
{
    RedisModuleKey *key = RM_OpenKey(ctx, name, RM_READ);
    *out = NULL;
    *owned = 0;
    int type = RM_KeyType(key), rc = RM_OK;
    if (type == RM_KEYTYPE_MODULE && RM_ModuleTypeGetType(key) == hll_type) {
        *out = RM_ModuleTypeGetValue(key);
    } else if (type == RM_KEYTYPE_STRING) {
        size_t len;
        const char *bytes = RM_StringDMA(key, &len, RM_READ);
        sk_hll_format format;
        int status = sk_hll_deserialize(out, bytes, len, &format, &module_allocator);
        if (status != SK_OK || format != SK_HLL_REDIS) {
            sk_hll_free(*out);
            *out = NULL;
            RM_ReplyWithError(ctx, "WRONGTYPE Key is not a valid HyperLogLog string value.");
            rc = RM_ERR;
        } else {
            *owned = 1;
        }
    } else if (type != RM_KEYTYPE_EMPTY) {
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        rc = RM_ERR;
    }
    RM_CloseKey(key);
    return rc;
}

/* The union of the sketches in keys[0..count), as a new sketch (an empty
 * one of precision 14 if every key is empty), or NULL after replying an
 * error. */
static sk_hll *read_union(RedisModuleCtx *ctx, RedisModuleString **keys, int count)
{
    sk_hll *result = NULL;
    for (int i = 0; i < count; i++) {
        sk_hll *h;
        int owned;
        if (read_sketch(ctx, keys[i], &h, &owned) != RM_OK) {
            sk_hll_free(result);
            return NULL;
        }
        if (h == NULL)
            continue;
        int status = result == NULL ? sk_hll_copy(&result, h) : sk_hll_merge(result, h);
        if (owned)
            sk_hll_free(h);
        if (status != SK_OK) {
            sk_hll_free(result);
            reply_status(ctx, status);
            return NULL;
        }
    }
    if (result == NULL && new_sketch(&result, SK_HLL_DEFAULT_PRECISION) != SK_OK) {
        reply_status(ctx, SK_ENOMEM);
        return NULL;
    }
    return result;
}

/* Opens key for writing: *h is its sketch, or NULL if it is empty. */
static RedisModuleKey *open_for_write(RedisModuleCtx *ctx, RedisModuleString *name, sk_hll **h)
{
    RedisModuleKey *key = RM_OpenKey(ctx, name, RM_READ | RM_WRITE);
    *h = NULL;
    int type = RM_KeyType(key);
    if (type == RM_KEYTYPE_EMPTY)
        return key;
    if (type != RM_KEYTYPE_MODULE || RM_ModuleTypeGetType(key) != hll_type) {
        RM_CloseKey(key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return NULL;
    }
    *h = RM_ModuleTypeGetValue(key);
    return key;
}

/* HLL.RESERVE key precision */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    long long precision;
    if (RM_StringToLongLong(argv[2], &precision) != RM_OK ||
        precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        return RM_ReplyWithError(ctx, "ERR bad precision: an integer from 4 to 18");
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR item exists");
    }
    sk_hll *h;
    int status = new_sketch(&h, (unsigned)precision);
    if (status != SK_OK) {
        RM_CloseKey(key);
        return reply_status(ctx, status);
    }
    RM_ModuleTypeSetValue(key, hll_type, h);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "hll.reserve", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* HLL.ADD key [element ...] */
static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RM_WrongArity(ctx);
    sk_hll *h;
    RedisModuleKey *key = open_for_write(ctx, argv[1], &h);
    if (key == NULL)
        return RM_OK;
    int changed = 0;
    if (h == NULL) {
        if (new_sketch(&h, SK_HLL_DEFAULT_PRECISION) != SK_OK) {
            RM_CloseKey(key);
            return reply_status(ctx, SK_ENOMEM);
        }
        RM_ModuleTypeSetValue(key, hll_type, h);
        changed = 1;
    }
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *data = RM_StringPtrLen(argv[i], &len);
        int rc = sk_hll_add(h, data, len);
        if (rc < 0) {
            RM_CloseKey(key);
            return reply_status(ctx, rc);
        }
        changed |= rc;
    }
    RM_CloseKey(key);
    if (changed) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "hll.add", argv[1]);
        RM_ReplicateVerbatim(ctx);
    }
    return RM_ReplyWithLongLong(ctx, changed);
}

/* HLL.COUNT key [key ...] */
static int cmd_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RM_WrongArity(ctx);
    if (argc == 2) { /* one key: no copy needed */
        sk_hll *h;
        int owned;
        if (read_sketch(ctx, argv[1], &h, &owned) != RM_OK)
            return RM_OK;
        long long count = h != NULL ? count_reply(sk_hll_count(h)) : 0;
        if (owned)
            sk_hll_free(h);
        return RM_ReplyWithLongLong(ctx, count);
    }
    sk_hll *u = read_union(ctx, argv + 1, argc - 1);
    if (u == NULL)
        return RM_OK;
    long long count = count_reply(sk_hll_count(u));
    sk_hll_free(u);
    return RM_ReplyWithLongLong(ctx, count);
}

/* HLL.ESTIMATE key [key ...] */
static int cmd_estimate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RM_WrongArity(ctx);
    sk_hll *u = read_union(ctx, argv + 1, argc - 1);
    if (u == NULL)
        return RM_OK;
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(u, &e);
    sk_hll_free(u);
    RM_ReplyWithArray(ctx, 8);
    RM_ReplyWithLongLong(ctx, count_reply(e.count));
    RM_ReplyWithDouble(ctx, e.relative_error);
    for (int k = 0; k < 3; k++) {
        RM_ReplyWithLongLong(ctx, bound_reply(floor(e.lower[k])));
        RM_ReplyWithLongLong(ctx, bound_reply(ceil(e.upper[k])));
    }
    return RM_OK;
}

/* HLL.COMPARE replies the bounds at this many standard errors (95.45%),
 * the ones a dashboard shows; the library has them at 1, 2 and 3. */
#define COMPARE_BOUND_SD 2
/* The reply's map entries: precision, then four (the value, _error, _lower,
 * _upper) for each of the six parts. */
#define COMPARE_PARTS 6
#define COMPARE_PART_FIELDS 4
#define COMPARE_FIELDS (1 + COMPARE_PARTS * COMPARE_PART_FIELDS)
/* Room for the longest field name, "intersection_error", and its NUL. */
#define COMPARE_NAME_MAX 32

/* An estimated count as an integer reply, rounded, saturating like
 * bound_reply. */
static long long estimate_reply(double x)
{
    if (!(x > 0))
        return 0;
    return x >= 0x1p63 ? LLONG_MAX : llround(x);
}

/* Replies the name of a field: a part's name and the suffix. */
static void reply_field_name(RedisModuleCtx *ctx, const char *name, const char *suffix)
{
    char field[COMPARE_NAME_MAX];
    snprintf(field, sizeof field, "%s%s", name, suffix);
    RM_ReplyWithSimpleString(ctx, field);
}

/* Replies the four fields of one part of a comparison: name, name_error,
 * name_lower, name_upper. A count's estimate and bounds are integers (the
 * bounds widened outwards to whole items), a fraction's are doubles. */
static void reply_part(RedisModuleCtx *ctx, const char *name, const sk_hll_part *part,
                       int is_count)
{
    double lower = part->lower[COMPARE_BOUND_SD - 1], upper = part->upper[COMPARE_BOUND_SD - 1];
    reply_field_name(ctx, name, "");
    if (is_count)
        RM_ReplyWithLongLong(ctx, estimate_reply(part->estimate));
    else
        RM_ReplyWithDouble(ctx, part->estimate);
    reply_field_name(ctx, name, "_error");
    RM_ReplyWithDouble(ctx, part->standard_error);
    reply_field_name(ctx, name, "_lower");
    if (is_count)
        RM_ReplyWithLongLong(ctx, bound_reply(floor(lower)));
    else
        RM_ReplyWithDouble(ctx, lower);
    reply_field_name(ctx, name, "_upper");
    if (is_count)
        RM_ReplyWithLongLong(ctx, bound_reply(ceil(upper)));
    else
        RM_ReplyWithDouble(ctx, upper);
}

/* HLL.COMPARE key1 key2 */
static int cmd_compare(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    sk_hll *h[2];
    int owned[2];
    if (read_sketch(ctx, argv[1], &h[0], &owned[0]) != RM_OK)
        return RM_OK;
    if (read_sketch(ctx, argv[2], &h[1], &owned[1]) != RM_OK) {
        if (owned[0])
            sk_hll_free(h[0]);
        return RM_OK;
    }
    /* A missing key is an empty sketch of the other key's precision, so
     * that it lowers nothing (of the default one if both are missing). */
    int status = SK_OK;
    for (int i = 0; i < 2 && status == SK_OK; i++) {
        if (h[i] != NULL)
            continue;
        const sk_hll *other = h[1 - i];
        unsigned p = other != NULL ? sk_hll_precision(other) : SK_HLL_DEFAULT_PRECISION;
        status = new_sketch(&h[i], p);
        owned[i] = status == SK_OK;
    }
    sk_hll_comparison c;
    if (status == SK_OK)
        status = sk_hll_compare(h[0], h[1], &c);
    for (int i = 0; i < 2; i++)
        if (owned[i])
            sk_hll_free(h[i]);
    if (status != SK_OK)
        return reply_status(ctx, status);
    const struct {
        const char *name;
        const sk_hll_part *part;
        int is_count;
    } parts[] = {
        {"union", &c.either, 1},   {"intersection", &c.both, 1},
        {"a_only", &c.a_only, 1},  {"b_only", &c.b_only, 1},
        {"jaccard", &c.jaccard, 0}, {"a_in_b", &c.retained, 0},
    };
    _Static_assert(sizeof parts / sizeof parts[0] == COMPARE_PARTS, "every part is replied");
    RM_ReplyWithMap(ctx, COMPARE_FIELDS);
    RM_ReplyWithSimpleString(ctx, "precision");
    RM_ReplyWithLongLong(ctx, c.precision);
    for (int i = 0; i < COMPARE_PARTS; i++)
        reply_part(ctx, parts[i].name, parts[i].part, parts[i].is_count);
    return RM_OK;
}

/* Serializes h in format into a new buffer, or replies an error. */
static char *serialize(RedisModuleCtx *ctx, const sk_hll *h, sk_hll_format format,
                       size_t *len)
{
    uint64_t cap;
    if (sk_hll_serialized_size(h, format, &cap) != SK_OK) {
        RM_ReplyWithError(ctx, "ERR a Redis HyperLogLog needs precision 14 or more");
        return NULL;
    }
    char *buf = malloc(cap);
    int status = buf == NULL ? SK_ENOMEM : sk_hll_serialize(h, format, buf, cap, len);
    if (status != SK_OK) {
        free(buf);
        reply_status(ctx, status);
        return NULL;
    }
    return buf;
}

/* HLL.MERGE dest src [src ...]: dest keeps its kind, a native PF key
 * receiving the union as a Redis HyperLogLog string (which needs precision
 * 14), any other key a sketch; and its time to live, as PFMERGE keeps it
 * (setting a key's value clears it). */
static int cmd_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    sk_hll *u = read_union(ctx, argv + 1, argc - 1); /* dest is part of the union */
    if (u == NULL)
        return RM_OK;
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    long long expire = RM_GetAbsExpire(key);
    if (RM_KeyType(key) == RM_KEYTYPE_STRING) {
        size_t len;
        char *buf = serialize(ctx, u, SK_HLL_REDIS, &len);
        sk_hll_free(u);
        if (buf == NULL) {
            RM_CloseKey(key);
            return RM_OK;
        }
        RedisModuleString *value = RM_CreateString(ctx, buf, len);
        free(buf);
        RM_StringSet(key, value);
        RM_FreeString(ctx, value);
    } else {
        RM_ModuleTypeSetValue(key, hll_type, u);
    }
    if (expire != RM_NO_EXPIRE)
        RM_SetAbsExpire(key, expire);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "hll.merge", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* HLL.INFO key */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_hll *h;
    int owned;
    if (read_sketch(ctx, argv[1], &h, &owned) != RM_OK)
        return RM_OK;
    if (h == NULL)
        return RM_ReplyWithError(ctx, "ERR not found");
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    RM_ReplyWithMap(ctx, 6);
    RM_ReplyWithSimpleString(ctx, "Precision");
    RM_ReplyWithLongLong(ctx, sk_hll_precision(h));
    RM_ReplyWithSimpleString(ctx, "Registers");
    RM_ReplyWithLongLong(ctx, 1LL << sk_hll_precision(h));
    RM_ReplyWithSimpleString(ctx, "Encoding");
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    RM_ReplyWithSimpleString(ctx, info.encoding == SK_HLL_SPARSE ? "sparse" : "dense");
    RM_ReplyWithSimpleString(ctx, "Count");
    RM_ReplyWithLongLong(ctx, count_reply(e.count));
    RM_ReplyWithSimpleString(ctx, "Standard error");
    RM_ReplyWithDouble(ctx, e.relative_error);
    RM_ReplyWithSimpleString(ctx, "Memory");
    RM_ReplyWithLongLong(ctx, (long long)info.memory);
    if (owned)
        sk_hll_free(h);
    return RM_OK;
}

/* HLL.EXPORT key */
static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_hll *h;
    int owned;
    if (read_sketch(ctx, argv[1], &h, &owned) != RM_OK)
        return RM_OK;
    if (h == NULL)
        return RM_ReplyWithNull(ctx);
    size_t len;
    char *buf = serialize(ctx, h, SK_HLL_REDIS, &len);
    if (owned)
        sk_hll_free(h);
    if (buf == NULL)
        return RM_OK;
    RM_ReplyWithStringBuffer(ctx, buf, len);
    free(buf);
    return RM_OK;
}

/* HLL.IMPORT key value */
static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    size_t len;
    const char *bytes = RM_StringPtrLen(argv[2], &len);
    sk_hll *h;
    int status = sk_hll_deserialize(&h, bytes, len, NULL, &module_allocator);
    if (status != SK_OK) {
        char message[128];
        snprintf(message, sizeof message, "ERR not a HyperLogLog: %s", sk_strerror(status));
        return RM_ReplyWithError(ctx, message);
    }
    /* The key may be empty, a sketch, or a native PF key: no other value is
     * replaced. */
    sk_hll *existing;
    int owned;
    if (read_sketch(ctx, argv[1], &existing, &owned) != RM_OK) {
        sk_hll_free(h);
        return RM_OK;
    }
    if (owned)
        sk_hll_free(existing);
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    RM_ModuleTypeSetValue(key, hll_type, h);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "hll.import", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

int hll_register(RedisModuleCtx *ctx)
{
    if (hll_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"HLL.RESERVE", cmd_reserve, "write deny-oom", 1},
        {"HLL.ADD", cmd_add, "write deny-oom fast", 1},
        {"HLL.COUNT", cmd_count, "readonly", -1},
        {"HLL.ESTIMATE", cmd_estimate, "readonly", -1},
        {"HLL.MERGE", cmd_merge, "write deny-oom", -1},
        {"HLL.COMPARE", cmd_compare, "readonly", 2},
        {"HLL.INFO", cmd_info, "readonly", 1},
        {"HLL.EXPORT", cmd_export, "readonly", 1},
        {"HLL.IMPORT", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
