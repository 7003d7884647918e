/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * whll_commands.c: the WHLL.* commands: distinct counts over sliding
 * windows of time, on the library's sliding-window HyperLogLog
 * (sketch/window_hll.h). Times are milliseconds; a command that does not
 * name one takes the server's clock.
 *
 *   WHLL.RESERVE key horizon_ms [RESOLUTION ms] [PRECISION p]
 *                                     an empty sketch answering windows up
 *                                     to the horizon, times cut into slots
 *                                     of the resolution (1000), precision
 *                                     4..18 (14)
 *   WHLL.ADD key element [element ...]
 *                                     the elements, seen now; 1 if some
 *                                     window's count may have changed
 *   WHLL.ADDAT key time_ms element [element ...]
 *                                     the same, seen at time_ms: late by up
 *                                     to the horizon, older ones dropped
 *   WHLL.COUNT key window_ms [TIME ms]
 *                                     the distinct elements of the window
 *                                     ending at TIME (default: now, or the
 *                                     newest time added if that is later)
 *   WHLL.MERGE destkey sourcekey [sourcekey ...]
 *                                     destkey becomes the union, itself
 *                                     included
 *   WHLL.INFO key                     Precision, Horizon, Resolution,
 *                                     Newest, Pairs, Memory
 *   WHLL.EXPORT key                   the sketch in the library's format
 *   WHLL.IMPORT key bytes             the key becomes that sketch (what the
 *                                     AOF rewrite writes)
 *
 * A key that WHLL.ADD or WHLL.ADDAT finds missing is created with a horizon
 * of a day, a resolution of a second and precision 14. Every sketch lives
 * in Redis's memory, created within the key's limit (key_limit), which the
 * library then enforces on its adds.
 *
 * Replication is deterministic: WHLL.ADD goes as WHLL.ADDAT with the time it
 * used, so a replica or an AOF replay whose clock differs holds the same
 * pairs; a key an add created goes first as WHLL.RESERVE with its
 * parameters; an add stopped by an error goes as the elements it added
 * before it; an add that changed nothing goes nowhere.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "module.h"
#include "whll_type.h"

/* What WHLL.ADD and WHLL.ADDAT create a missing key with: windows up to a
 * day, in slots of a second. */
#define DEFAULT_HORIZON_MS 86400000ULL
#define DEFAULT_RESOLUTION_MS 1000ULL

struct whll_params {
    unsigned long long horizon, resolution;
    unsigned precision;
};

static const struct whll_params default_params = {DEFAULT_HORIZON_MS, DEFAULT_RESOLUTION_MS,
                                                  SK_HLL_DEFAULT_PRECISION};

/* A count as an integer reply, saturating rather than wrapping negative. */
static long long count_reply(uint64_t count)
{
    return count > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)count;
}

/* Reads a time in milliseconds, 0..SK_WINDOW_HLL_MAX_TIME, or replies the
 * error and returns RM_ERR. */
static int parse_time(RedisModuleCtx *ctx, RedisModuleString *arg, uint64_t *out)
{
    long long v;
    if (RM_StringToLongLong(arg, &v) != RM_OK || v < 0 ||
        (unsigned long long)v > SK_WINDOW_HLL_MAX_TIME) {
        RM_ReplyWithError(ctx, "ERR bad time: an integer of milliseconds from 0 to 2^62");
        return RM_ERR;
    }
    *out = (uint64_t)v;
    return RM_OK;
}

/* Reads a duration in milliseconds, 1..SK_WINDOW_HLL_MAX_TIME, or replies
 * "ERR bad <what>: ..." and returns RM_ERR. */
static int parse_duration(RedisModuleCtx *ctx, RedisModuleString *arg, const char *what,
                          unsigned long long *out)
{
    long long v;
    if (RM_StringToLongLong(arg, &v) != RM_OK || v < 1 ||
        (unsigned long long)v > SK_WINDOW_HLL_MAX_TIME) {
        char message[128];
        snprintf(message, sizeof message,
                 "ERR bad %s: an integer of milliseconds from 1 to 2^62", what);
        RM_ReplyWithError(ctx, message);
        return RM_ERR;
    }
    *out = (unsigned long long)v;
    return RM_OK;
}

/* Creates a sketch of p within the key's limit, or replies why not and
 * returns NULL. */
static sk_window_hll *create_sketch(RedisModuleCtx *ctx, const struct whll_params *p)
{
    sk_window_hll_options o = {
        .precision = p->precision,
        .horizon = p->horizon,
        .resolution = p->resolution,
        .max_memory = key_limit(ctx),
        .allocator = &module_allocator,
    };
    sk_window_hll *w;
    int rc = sk_window_hll_create(&w, &o);
    if (rc == SK_OK)
        return w;
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "sketch", 0);
    else if (rc == SK_ETOOLARGE)
        RM_ReplyWithError(ctx, "ERR the horizon holds more than 2^24 slots of the resolution");
    else
        reply_status(ctx, rc);
    return NULL;
}

/* Opens key: RM_OK with *w its sketch, or NULL for an empty key (whose
 * *key may then be NULL: Redis 7.0 opens a missing key to read as NULL).
 * Replies WRONGTYPE and returns RM_ERR for a key of another type. */
static int open_key(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                    RedisModuleKey **key, sk_window_hll **w)
{
    *key = RM_OpenKey(ctx, name, mode);
    *w = NULL;
    int type = RM_KeyType(*key);
    if (type == RM_KEYTYPE_EMPTY)
        return RM_OK;
    if (type != RM_KEYTYPE_MODULE || RM_ModuleTypeGetType(*key) != whll_type) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return RM_ERR;
    }
    *w = RM_ModuleTypeGetValue(*key);
    return RM_OK;
}

/* Replicates "WHLL.RESERVE key horizon RESOLUTION r PRECISION p" with a
 * sketch's parameters. */
static void replicate_reserve(RedisModuleCtx *ctx, RedisModuleString *name,
                              const sk_window_hll *w)
{
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    char horizon[24], resolution[24], precision[8];
    snprintf(horizon, sizeof horizon, "%llu", (unsigned long long)info.horizon);
    snprintf(resolution, sizeof resolution, "%llu", (unsigned long long)info.resolution);
    snprintf(precision, sizeof precision, "%u", info.precision);
    RM_Replicate(ctx, "WHLL.RESERVE", "scccccc", name, horizon, "RESOLUTION", resolution,
                 "PRECISION", precision);
}

/* WHLL.RESERVE key horizon_ms [RESOLUTION ms] [PRECISION p] */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3 || argc % 2 == 0)
        return RM_WrongArity(ctx);
    struct whll_params p = default_params;
    if (parse_duration(ctx, argv[2], "horizon", &p.horizon) != RM_OK)
        return RM_OK;
    for (int i = 3; i < argc; i += 2) {
        long long v;
        if (arg_is(argv[i], "RESOLUTION")) {
            if (parse_duration(ctx, argv[i + 1], "resolution", &p.resolution) != RM_OK)
                return RM_OK;
        } else if (arg_is(argv[i], "PRECISION")) {
            if (RM_StringToLongLong(argv[i + 1], &v) != RM_OK || v < SK_HLL_MIN_PRECISION ||
                v > SK_HLL_MAX_PRECISION)
                return RM_ReplyWithError(ctx, "ERR bad precision: an integer from 4 to 18");
            p.precision = (unsigned)v;
        } else {
            return RM_ReplyWithError(ctx, "ERR syntax error: the options are RESOLUTION ms "
                                          "and PRECISION p");
        }
    }
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR item exists");
    }
    sk_window_hll *w = create_sketch(ctx, &p);
    if (w == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, whll_type, w);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "whll.reserve", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* Replies the error of an add that failed. */
static void reply_add_error(RedisModuleCtx *ctx, int rc)
{
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "sketch", 0);
    else
        reply_status(ctx, rc);
}

/* WHLL.ADD key element [element ...] (at_time 0, the server's clock);
 * WHLL.ADDAT key time_ms element [element ...] (at_time 1). */
static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int at_time)
{
    int first = at_time ? 3 : 2;
    if (argc < first + 1)
        return RM_WrongArity(ctx);
    uint64_t time;
    if (at_time) {
        if (parse_time(ctx, argv[2], &time) != RM_OK)
            return RM_OK;
    } else {
        long long now = RM_Milliseconds();
        time = now < 0 ? 0 : (uint64_t)now;
    }
    sk_window_hll *w;
    RedisModuleKey *key;
    if (open_key(ctx, argv[1], RM_READ | RM_WRITE, &key, &w) != RM_OK)
        return RM_OK;
    int created = 0;
    if (w == NULL) {
        if ((w = create_sketch(ctx, &default_params)) == NULL) {
            RM_CloseKey(key);
            return RM_OK;
        }
        RM_ModuleTypeSetValue(key, whll_type, w);
        created = 1;
    }
    /* A sketch loaded or imported carries no limit, and CONFIG SET may have
     * changed it since; the server's own history has none (key_limit). */
    sk_window_hll_set_max_memory(w, key_limit(ctx));
    int changed = 0, rc = 0, applied = 0;
    for (int i = first; i < argc; i++, applied++) {
        size_t len;
        const char *data = RM_StringPtrLen(argv[i], &len);
        if ((rc = sk_window_hll_add(w, data, len, time)) < 0)
            break;
        changed |= rc;
    }
    RM_CloseKey(key);
    if (changed || created)
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, at_time ? "whll.addat" : "whll.add",
                               argv[1]);
    /* What was done: a sketch made with its parameters, then the elements
     * added before an error, at the time used. An add that changed nothing
     * left the sketch as it was, so it is not sent. */
    if (at_time && !created && rc >= 0 && changed) {
        RM_ReplicateVerbatim(ctx);
    } else {
        if (created)
            replicate_reserve(ctx, argv[1], w);
        if (changed)
            RM_Replicate(ctx, "WHLL.ADDAT", "slv", argv[1], (long long)time, argv + first,
                         (size_t)applied);
    }
    if (rc < 0) {
        reply_add_error(ctx, rc);
        return RM_OK;
    }
    return RM_ReplyWithLongLong(ctx, changed || created);
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 0);
}

static int cmd_addat(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 1);
}

/* WHLL.COUNT key window_ms [TIME ms] */
static int cmd_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3 && argc != 5)
        return RM_WrongArity(ctx);
    unsigned long long window;
    uint64_t end = 0;
    int given = argc == 5;
    if (parse_duration(ctx, argv[2], "window", &window) != RM_OK)
        return RM_OK;
    if (given && !arg_is(argv[3], "TIME"))
        return RM_ReplyWithError(ctx, "ERR syntax error: the option is TIME ms");
    if (given && parse_time(ctx, argv[4], &end) != RM_OK)
        return RM_OK;
    sk_window_hll *w;
    RedisModuleKey *key;
    if (open_key(ctx, argv[1], RM_READ, &key, &w) != RM_OK)
        return RM_OK;
    if (w == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithLongLong(ctx, 0);
    }
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    char message[160];
    if (window > info.horizon) {
        RM_CloseKey(key);
        snprintf(message, sizeof message,
                 "ERR bad window: the key answers windows up to its horizon of %llu ms",
                 (unsigned long long)info.horizon);
        return RM_ReplyWithError(ctx, message);
    }
    if (!given) {
        /* The newest time's slot ends every window that can be asked; a
         * clock behind it (times added from the future) counts there. */
        long long now = RM_Milliseconds();
        end = now < 0 ? 0 : (uint64_t)now > SK_WINDOW_HLL_MAX_TIME ? SK_WINDOW_HLL_MAX_TIME
                                                                    : (uint64_t)now;
        if (!info.empty && end < info.newest)
            end = info.newest;
    }
    uint64_t count;
    int rc = sk_window_hll_count(w, window, end, &count);
    RM_CloseKey(key);
    if (rc == SK_EINVAL && !info.empty && end / info.resolution < info.newest / info.resolution) {
        snprintf(message, sizeof message,
                 "ERR bad time: windows end no earlier than the newest time added, %llu",
                 (unsigned long long)info.newest);
        return RM_ReplyWithError(ctx, message);
    }
    if (rc != SK_OK)
        return reply_status(ctx, rc);
    return RM_ReplyWithLongLong(ctx, count_reply(count));
}

/* Reads key for a merge: its sketch, or NULL for an empty key with
 * *status RM_OK; RM_ERR after replying WRONGTYPE. */
static sk_window_hll *read_sketch(RedisModuleCtx *ctx, RedisModuleString *name, int *status)
{
    sk_window_hll *w;
    RedisModuleKey *key;
    if ((*status = open_key(ctx, name, RM_READ, &key, &w)) == RM_OK)
        RM_CloseKey(key);
    return w;
}

/* WHLL.MERGE destkey sourcekey [sourcekey ...]: the union is built on a copy
 * of the destination (or of the first source when the destination is
 * empty), so that an error leaves the destination as it was; it keeps its
 * time to live, as PFMERGE does. */
static int cmd_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    int status;
    sk_window_hll *u = NULL;
    for (int i = 1; i < argc; i++) {
        const sk_window_hll *w = read_sketch(ctx, argv[i], &status);
        int rc = SK_OK;
        if (status != RM_OK) {
            sk_window_hll_free(u);
            return RM_OK;
        }
        if (w != NULL && u == NULL) {
            if ((rc = sk_window_hll_copy(&u, w)) == SK_OK)
                sk_window_hll_set_max_memory(u, key_limit(ctx));
        } else if (w != NULL) {
            rc = sk_window_hll_merge(u, w);
        }
        if (rc == SK_EINCOMPAT) {
            sk_window_hll_free(u);
            return RM_ReplyWithError(ctx, "ERR the sketches differ in precision, horizon or "
                                          "resolution");
        }
        if (rc != SK_OK) {
            sk_window_hll_free(u);
            reply_add_error(ctx, rc);
            return RM_OK;
        }
    }
    /* No sketch anywhere: the destination becomes an empty one of the
     * defaults, as PFMERGE makes an empty HyperLogLog. */
    if (u == NULL && (u = create_sketch(ctx, &default_params)) == NULL)
        return RM_OK;
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ | RM_WRITE);
    long long expire = RM_GetAbsExpire(key);
    RM_ModuleTypeSetValue(key, whll_type, u);
    if (expire != RM_NO_EXPIRE)
        RM_SetAbsExpire(key, expire);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "whll.merge", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* WHLL.INFO key: a map in RESP3, a flat array in RESP2; Newest is null
 * while nothing has been added. */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_window_hll *w;
    RedisModuleKey *key;
    if (open_key(ctx, argv[1], RM_READ, &key, &w) != RM_OK)
        return RM_OK;
    if (w == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    }
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    RM_CloseKey(key);
    RM_ReplyWithMap(ctx, 6);
    RM_ReplyWithSimpleString(ctx, "Precision");
    RM_ReplyWithLongLong(ctx, info.precision);
    RM_ReplyWithSimpleString(ctx, "Horizon");
    RM_ReplyWithLongLong(ctx, (long long)info.horizon);
    RM_ReplyWithSimpleString(ctx, "Resolution");
    RM_ReplyWithLongLong(ctx, (long long)info.resolution);
    RM_ReplyWithSimpleString(ctx, "Newest");
    if (info.empty)
        RM_ReplyWithNull(ctx);
    else
        RM_ReplyWithLongLong(ctx, (long long)info.newest);
    RM_ReplyWithSimpleString(ctx, "Pairs");
    RM_ReplyWithLongLong(ctx, count_reply(info.pairs));
    RM_ReplyWithSimpleString(ctx, "Memory");
    return RM_ReplyWithLongLong(ctx, (long long)info.memory);
}

/* WHLL.EXPORT key: null for an empty key. */
static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_window_hll *w;
    RedisModuleKey *key;
    if (open_key(ctx, argv[1], RM_READ, &key, &w) != RM_OK)
        return RM_OK;
    size_t len;
    char *buf = w != NULL ? whll_serialize(w, &len) : NULL;
    RM_CloseKey(key);
    if (w == NULL)
        return RM_ReplyWithNull(ctx);
    if (buf == NULL)
        return reply_status(ctx, SK_ENOMEM);
    RM_ReplyWithStringBuffer(ctx, buf, len);
    RM_Free(buf);
    return RM_OK;
}

/* WHLL.IMPORT key bytes: the key, empty or a sketch, becomes the sketch in
 * bytes, within the key's limit, replacing it as SET does. */
static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    sk_window_hll *existing;
    RedisModuleKey *key;
    if (open_key(ctx, argv[1], RM_READ | RM_WRITE, &key, &existing) != RM_OK)
        return RM_OK;
    size_t len;
    const char *bytes = RM_StringPtrLen(argv[2], &len);
    uint64_t limit = key_limit(ctx);
    sk_window_hll *w;
    int rc = limit != 0 && len > limit
                 ? SK_EBUDGET
                 : sk_window_hll_deserialize(&w, bytes, len, &module_allocator);
    /* In memory a sketch takes more than its bytes (8 a sparse pair, 6 a
     * dense register): the limit holds what it takes. */
    if (rc == SK_OK && limit != 0 && whll_memory(w) > limit) {
        sk_window_hll_free(w);
        rc = SK_EBUDGET;
    }
    if (rc != SK_OK) {
        RM_CloseKey(key);
        if (rc == SK_EBUDGET)
            return reply_over_key_limit(ctx, "ERR ", "sketch", 0);
        char message[128];
        snprintf(message, sizeof message, "ERR not a window HyperLogLog: %s", sk_strerror(rc));
        return RM_ReplyWithError(ctx, message);
    }
    RM_ModuleTypeSetValue(key, whll_type, w);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "whll.import", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

int whll_register(RedisModuleCtx *ctx)
{
    if (whll_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"whll.reserve", cmd_reserve, "write deny-oom", 1},
        {"whll.add", cmd_add, "write deny-oom fast", 1},
        {"whll.addat", cmd_addat, "write deny-oom fast", 1},
        {"whll.count", cmd_count, "readonly", 1},
        {"whll.merge", cmd_merge, "write deny-oom", -1},
        {"whll.info", cmd_info, "readonly fast", 1},
        {"whll.export", cmd_export, "readonly", 1},
        {"whll.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
