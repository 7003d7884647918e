/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abf_commands.c: the ABF.* commands, an aging Bloom filter per key
 * (sketch/aging_bloom.h): "was this item added within the last N adds",
 * or "within the last T milliseconds", with old items forgotten.
 *
 *   ABF.RESERVE key error_rate capacity [WINDOW ms] [GENERATIONS g]
 *                                     a filter of the last `capacity` adds,
 *                                     or with WINDOW of the last ms
 *                                     milliseconds (holding `capacity` items
 *                                     at the rate), of g generations (2..64)
 *   ABF.ADD key item                  1 if the item is new, 0 if it may have
 *   ABF.MADD key item [item ...]      been added within the window; a missing
 *                                     key is created with capacity 100, rate
 *                                     0.01 and a count window, as BF.ADD does
 *   ABF.ADDAT key time_ms item [...]  the same at a given time (an array)
 *   ABF.EXISTS key item               1 if the item may have been added
 *   ABF.MEXISTS key item [item ...]   within the window ending now, 0 if
 *   ABF.EXISTSAT key time_ms item ... certainly not (0 for a missing key)
 *   ABF.INFO key                      the filter's parameters and counts
 *   ABF.EXPORT key / ABF.IMPORT key bytes [SKETCH]
 *                                     the filter in the library's format
 *
 * Times are milliseconds of the server's clock (RedisModule_Milliseconds)
 * unless a command gives one; a count window ignores them. Booleans are
 * the server's typed replies: integers in RESP2, booleans in RESP3. An
 * add that fails (the key's memory limit) ends MADD's and ADDAT's array
 * with its error, as BF.MADD does.
 *
 * Replication carries what a command did, with the time it used: adds go
 * as ABF.ADDAT with that time, as far as the first item refused, when they
 * changed the filter (which an add of an item already there does too: a
 * count window counts it, a time window may start a generation; a time
 * window's add of an item its generation has, or of one older than every
 * generation, does not); a filter an add created goes first as ABF.RESERVE
 * with the parameters it was made with.
 * So a replica, whatever its clock, holds the primary's filter byte for
 * byte; its reads at the server's time use its own clock.
 */
#include <limits.h>
#include <stdio.h>

#include "abf_type.h"
#include "bf_type.h"
#include "common.h"
#include "module.h"
#include "sketch/aging_bloom.h"

/* What ABF.ADD gives a missing key: BF.ADD's defaults, a count window. */
#define ABF_DEFAULT_CAPACITY 100
#define ABF_DEFAULT_ERROR_RATE 0.01

struct abf_params {
    double error_rate;
    long long capacity;
    long long window; /* 0: a count window */
    long long generations;
};

static struct abf_params default_params(void)
{
    return (struct abf_params){ABF_DEFAULT_ERROR_RATE, ABF_DEFAULT_CAPACITY, 0,
                               SK_AGING_BLOOM_DEFAULT_GENERATIONS};
}

/* The server's clock; before 1970 (a clock set wrong) counts as 0. */
static uint64_t server_time(void)
{
    long long ms = RM_Milliseconds();
    return ms > 0 ? (uint64_t)ms : 0;
}

/* ---- arguments ------------------------------------------------------------ */

/* Replies error; RM_ERR, for the parsers' returns. */
static int refuse(RedisModuleCtx *ctx, const char *error)
{
    RM_ReplyWithError(ctx, error);
    return RM_ERR;
}

/* An integer in [lo, hi], replying `error` otherwise. */
static int parse_integer(RedisModuleCtx *ctx, RedisModuleString *arg, long long lo,
                         long long hi, const char *error, long long *value)
{
    if (RM_StringToLongLong(arg, value) != RM_OK || *value < lo || *value > hi)
        return refuse(ctx, error);
    return RM_OK;
}

/* The time of a command: argv[2] for the ...AT commands, else the
 * server's clock. */
static int command_time(RedisModuleCtx *ctx, RedisModuleString **argv, int at, uint64_t *time)
{
    long long t;
    if (!at) {
        *time = server_time();
        return RM_OK;
    }
    if (parse_integer(ctx, argv[2], 0, LLONG_MAX, "ERR bad time: milliseconds, an integer from 0",
                      &t) != RM_OK)
        return RM_ERR;
    *time = (uint64_t)t;
    return RM_OK;
}

/* key error_rate capacity [WINDOW ms] [GENERATIONS g], from argv[2]. */
static int parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                         struct abf_params *p)
{
    if (RM_StringToDouble(argv[2], &p->error_rate) != RM_OK)
        return refuse(ctx, "ERR bad error rate");
    if (!(p->error_rate > 0 && p->error_rate < 1))
        return refuse(ctx, "ERR error rate must be in the range (0, 1)");
    if (!config_rate_valid(p->error_rate))
        return refuse(ctx, "ERR error rate must be at least 1e-15");
    if (parse_integer(ctx, argv[3], 1, LLONG_MAX, "ERR bad capacity: an integer from 1",
                      &p->capacity) != RM_OK)
        return RM_ERR;
    for (int i = 4; i < argc; i += 2) {
        int window = arg_is(argv[i], "WINDOW");
        if (!window && !arg_is(argv[i], "GENERATIONS"))
            return refuse(ctx, "ERR unknown argument");
        if (i + 1 == argc)
            return refuse(ctx, window ? "ERR WINDOW needs milliseconds"
                                      : "ERR GENERATIONS needs a number");
        int rc = window ? parse_integer(ctx, argv[i + 1], 1, LLONG_MAX,
                                        "ERR bad window: milliseconds, an integer from 1",
                                        &p->window)
                        : parse_integer(ctx, argv[i + 1], SK_AGING_BLOOM_MIN_GENERATIONS,
                                        SK_AGING_BLOOM_MAX_GENERATIONS,
                                        "ERR bad generations: an integer from 2 to 64",
                                        &p->generations);
        if (rc != RM_OK)
            return RM_ERR;
    }
    return RM_OK;
}

/* ---- creating --------------------------------------------------------------- */

/* A new filter within the key's limit (key_limit: none for what the server
 * replays), or NULL after replying why not. */
static sk_aging_bloom *create_filter(RedisModuleCtx *ctx, const struct abf_params *p)
{
    sk_aging_bloom_options o = {
        .capacity = (uint64_t)p->capacity,
        .fp_rate = p->error_rate,
        .generations = (unsigned)p->generations,
        .window = (uint64_t)p->window,
        .layout = SK_BLOOM_AUTO,
        .max_memory = key_limit(ctx),
        .allocator = &module_allocator,
    };
    sk_aging_bloom *f;
    int rc = sk_aging_bloom_create(&f, &o);
    if (rc == SK_OK)
        return f;
    if (rc == SK_EBUDGET) {
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
    } else if (rc == SK_ETOOLARGE || rc == SK_EINVAL) {
        char message[128];
        snprintf(message, sizeof message, "ERR the filter cannot be made: %s",
                 sk_strerror(rc));
        RM_ReplyWithError(ctx, message);
    } else {
        reply_status(ctx, rc);
    }
    return NULL;
}

/* ABF.RESERVE key error_rate capacity [WINDOW ms] [GENERATIONS g] */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct abf_params p = default_params();
    if (parse_reserve(ctx, argv, argc, &p) != RM_OK)
        return RM_OK;
    RedisModuleKey *key;
    void *existing;
    if (blob_open(ctx, argv[1], RM_READ | RM_WRITE, &abf_family, &key, &existing) != RM_OK)
        return RM_OK;
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR item exists");
    }
    sk_aging_bloom *f = create_filter(ctx, &p);
    if (f != NULL) {
        RM_ModuleTypeSetValue(key, abf_type, f);
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "abf.reserve", argv[1]);
        RM_ReplicateVerbatim(ctx);
        RM_ReplyWithSimpleString(ctx, "OK");
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* ---- adding ----------------------------------------------------------------- */

/* The filter an add goes to, and the time it is made at (add_each's
 * filter argument). */
struct timed_filter {
    sk_aging_bloom *f;
    uint64_t now;
};

static int add_one(RedisModuleCtx *ctx, void *arg, RedisModuleString *item)
{
    struct timed_filter *t = arg;
    size_t len;
    const char *data = RM_StringPtrLen(item, &len);
    int rc = sk_aging_bloom_add(t->f, data, len, t->now);
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "filter", 0);
    else if (rc < 0)
        reply_status(ctx, rc);
    return rc;
}

/* Replicates what an add did (see the top of the file). */
static void replicate_adds(RedisModuleCtx *ctx, RedisModuleString *name, int created,
                           const struct abf_params *p, int verbatim, uint64_t now,
                           RedisModuleString **items, int applied)
{
    if (created) {
        char rate[32], capacity[24], generations[8];
        snprintf(rate, sizeof rate, "%.17g", p->error_rate);
        snprintf(capacity, sizeof capacity, "%lld", p->capacity);
        snprintf(generations, sizeof generations, "%lld", p->generations);
        RM_Replicate(ctx, "ABF.RESERVE", "scccc", name, rate, capacity, "GENERATIONS",
                     generations);
    }
    if (applied == 0)
        return;
    if (verbatim && !created)
        RM_ReplicateVerbatim(ctx);
    else
        RM_Replicate(ctx, "ABF.ADDAT", "slv", name, (long long)now, items, (size_t)applied);
}

/* ABF.ADD key item; ABF.MADD key item [item ...]; ABF.ADDAT key time_ms
 * item [item ...] (at: the time is argv[2]). */
static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single,
                       int at, const char *event)
{
    int first = at ? 3 : 2;
    if (single ? argc != 3 : argc < first + 1)
        return RM_WrongArity(ctx);
    struct timed_filter t = {NULL, 0};
    if (command_time(ctx, argv, at, &t.now) != RM_OK)
        return RM_OK;
    RedisModuleKey *key;
    void *value;
    if (blob_open(ctx, argv[1], RM_READ | RM_WRITE, &abf_family, &key, &value) != RM_OK)
        return RM_OK;
    struct abf_params p = default_params();
    int created = value == NULL;
    if (created) {
        if ((value = create_filter(ctx, &p)) == NULL) {
            RM_CloseKey(key);
            return RM_OK;
        }
        RM_ModuleTypeSetValue(key, abf_type, value);
    }
    t.f = value;
    /* A filter loaded or imported carries no limit, and CONFIG SET may have
     * changed it since; the server's own history has none (key_limit). */
    sk_aging_bloom_set_max_memory(t.f, key_limit(ctx));
    sk_aging_bloom_info before, after;
    sk_aging_bloom_get_info(t.f, &before);
    if (!single)
        RM_ReplyWithArray(ctx, RM_POSTPONED_ARRAY_LEN);
    int applied;
    add_each(ctx, &t, add_one, argv + first, argc - first, single, &applied);
    sk_aging_bloom_get_info(t.f, &after);
    /* An add that set a bit counts; one that started a generation moves
     * the newest; a count window's newest counts every add. */
    if (created || after.newest != before.newest || after.count != before.count) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, event, argv[1]);
        replicate_adds(ctx, argv[1], created, &p, at && applied == argc - first, t.now,
                       argv + first, applied);
    }
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 1, 0, "abf.add");
}

static int cmd_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 0, 0, "abf.madd");
}

static int cmd_addat(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 0, 1, "abf.addat");
}

/* ---- reading ---------------------------------------------------------------- */

/* ABF.EXISTS key item; ABF.MEXISTS key item [item ...]; ABF.EXISTSAT key
 * time_ms item [item ...] (at: the time is argv[2]). */
static int exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single,
                          int at)
{
    int first = at ? 3 : 2;
    if (single ? argc != 3 : argc < first + 1)
        return RM_WrongArity(ctx);
    uint64_t now;
    if (command_time(ctx, argv, at, &now) != RM_OK)
        return RM_OK;
    RedisModuleKey *key;
    void *f;
    if (blob_open(ctx, argv[1], RM_READ, &abf_family, &key, &f) != RM_OK)
        return RM_OK;
    if (!single)
        RM_ReplyWithArray(ctx, argc - first);
    for (int i = first; i < argc; i++) {
        size_t len;
        const char *data = RM_StringPtrLen(argv[i], &len);
        RM_ReplyWithBool(ctx, f != NULL && sk_aging_bloom_contains(f, data, len, now) > 0);
    }
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, 1, 0);
}

static int cmd_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, 0, 0);
}

static int cmd_existsat(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, 0, 1);
}

/* A field of ABF.INFO whose value is a count, saturating past 2^63. */
static void reply_count(RedisModuleCtx *ctx, const char *name, uint64_t n)
{
    RM_ReplyWithSimpleString(ctx, name);
    RM_ReplyWithLongLong(ctx, n > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)n);
}

/* ABF.INFO's map: the fields below, in this order. */
#define INFO_FIELDS 11

/* ABF.INFO key: a map (a flat array in RESP2), as BF.INFO's. */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    const sk_aging_bloom *f = blob_open_existing(&abf_family, ctx, argv[1], RM_READ, &key);
    if (f == NULL)
        return RM_OK;
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(f, &info);
    RM_CloseKey(key);
    RM_ReplyWithMap(ctx, INFO_FIELDS);
    reply_count(ctx, "Capacity", info.capacity);
    RM_ReplyWithSimpleString(ctx, "Error rate");
    RM_ReplyWithDouble(ctx, info.fp_rate);
    reply_count(ctx, "Generations", info.generations);
    reply_count(ctx, "Window", info.window);
    reply_count(ctx, "Span", info.span);
    reply_count(ctx, "Newest", info.newest);
    reply_count(ctx, "Items", info.count);
    reply_count(ctx, "Bits", info.bits);
    reply_count(ctx, "Hashes", info.hashes);
    RM_ReplyWithSimpleString(ctx, "Generation error rate");
    RM_ReplyWithDouble(ctx, info.generation_fp_rate);
    reply_count(ctx, "Memory", info.memory);
    return RM_OK;
}

/* ABF.EXPORT key */
static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_export_command(&abf_family, ctx, argv, argc);
}

/* ABF.IMPORT key bytes [SKETCH]: SKETCH, the one type, is what the AOF
 * rewrite writes (blob_type.c). */
static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc == 4 && !arg_is(argv[3], "SKETCH"))
        return RM_ReplyWithError(ctx, "ERR the type is SKETCH, or none");
    return blob_import_command(&abf_family, ctx, argv, argc);
}

int abf_register(RedisModuleCtx *ctx)
{
    if (abf_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"abf.reserve", cmd_reserve, "write deny-oom", 1},
        {"abf.add", cmd_add, "write deny-oom", 1},
        {"abf.madd", cmd_madd, "write deny-oom", 1},
        {"abf.addat", cmd_addat, "write deny-oom", 1},
        {"abf.exists", cmd_exists, "readonly fast", 1},
        {"abf.mexists", cmd_mexists, "readonly fast", 1},
        {"abf.existsat", cmd_existsat, "readonly fast", 1},
        {"abf.info", cmd_info, "readonly fast", 1},
        {"abf.export", cmd_export, "readonly", 1},
        {"abf.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
