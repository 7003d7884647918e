/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bf_commands.c: the BF.* commands, answering as RedisBloom does, so that
 * its clients (redis-py's r.bf(), Jedis, go-redis, node-redis) work
 * unchanged, in RESP2 and in RESP3. docs/redis-module.md lists the few
 * answers that differ, and why.
 *
 * A key holds an sk_bloom (bf_type.c): scaling (a chain of layers, the
 * default) or non-scaling (fixed size, refusing new items once full). A
 * missing key that BF.ADD, BF.MADD or BF.INSERT writes to is created with
 * the module's defaults (config.c: RedisBloom's 0.01, 100 and expansion 2
 * unless configured); the layout is the library's automatic choice
 * (split or blocked where they cost little memory, else classic).
 *
 * Replies: booleans, maps and nulls are sent with the server's typed
 * replies, which it writes as RESP2's integers, flat arrays and nil bulk
 * strings to a client that has not said HELLO 3. BF.MADD and BF.INSERT stop
 * at the first item that fails and end their array with its error, so that
 * a client sees which items were refused.
 *
 * Memory: every filter lives in Redis's memory (module_allocator), and its
 * budget is the key's limit for what clients send; what the server replays
 * is never limited (key_limit, docs/limits.md). The library enforces both
 * the budget and the refusal of a full non-scaling filter
 * (refuse_when_full); this file only chooses which add to call and turns
 * status codes into RedisBloom's replies.
 *
 * Replication carries what a command did, not what it was asked: a filter it
 * created goes as BF.RESERVE with the parameters it was made with (the
 * defaults may differ on the replica), and items as far as the first one
 * refused (a full fixed filter, the memory limit), as BF.MADD.
 *
 * A key whose BF.LOADCHUNK restore has not finished holds a filter with some
 * of its bits: it takes nothing but the restore's next chunks, and answers
 * no query, until the last chunk completes it (docs/redis-module.md).
 *
 * A key of RedisBloom's type (loaded from RedisBloom, or made while the
 * redisbloom-types setting is on) holds RedisBloom's own filter; each
 * command parses its arguments here and hands such a key to bf_chain.c.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bf_chain.h"
#include "bf_commands.h"
#include "bf_type.h"
#include "common.h"
#include "module.h"


/* ---- creation and limits -------------------------------------------------- */

struct bloom_params {
    double error_rate;
    long long capacity;
    long long expansion; /* 0: non-scaling */
};

static struct bloom_params default_params(void)
{
    return (struct bloom_params){module_config.bf_error_rate, module_config.bf_initial_size,
                                 module_config.bf_expansion};
}

static int reply_too_large(RedisModuleCtx *ctx, uint64_t bytes)
{
    return reply_over_key_limit(ctx, "ERR ", "filter", bytes);
}

/* The options of a new filter, in Redis's memory, created within `limit`
 * (key_limit). RedisBloom takes rates up to 1; above 0.5 a filter of rate
 * 0.5 serves them better than asked. Non-scaling filters refuse new items
 * once full, as RedisBloom's do. */
static sk_bloom_options filter_options(const struct bloom_params *p, uint64_t limit)
{
    return (sk_bloom_options){
        .capacity = (uint64_t)p->capacity,
        .fp_rate = p->error_rate > SK_BLOOM_MAX_FP_RATE ? SK_BLOOM_MAX_FP_RATE : p->error_rate,
        .layout = SK_BLOOM_AUTO,
        .expansion = (unsigned)p->expansion,
        .max_memory = limit,
        .allocator = &module_allocator,
        .refuse_when_full = 1,
    };
}

/* Creates a filter within the key's limit, or replies an error and returns
 * NULL. One the server replays is created without it; its budget is then
 * the limit for what clients add. */
static sk_bloom *create_filter(RedisModuleCtx *ctx, const struct bloom_params *p)
{
    sk_bloom_options o = filter_options(p, key_limit(ctx));
    sk_bloom *f;
    int rc = sk_bloom_create(&f, &o);
    if (rc == SK_OK) {
        bloom_adopt(f);
        return f;
    }
    if (rc == SK_EBUDGET)
        reply_too_large(ctx, sk_bloom_create_memory(&o));
    else if (rc == SK_ETOOLARGE)
        RM_ReplyWithError(ctx, "ERR the filter would take more than the library's limit of "
                               "2^48 bits per layer");
    else
        reply_status(ctx, rc);
    return NULL;
}

/* Adds one item, or replies the error that stops the command (full
 * non-scaling filter, memory limit) and returns a negative value. */
static int add_item(RedisModuleCtx *ctx, sk_bloom *f, RedisModuleString *item)
{
    size_t len;
    const char *data = RM_StringPtrLen(item, &len);
    /* CONFIG SET may have changed the limit since the filter was made. */
    sk_bloom_set_max_memory(f, (uint64_t)module_config.max_key_memory);
    int rc = sk_bloom_add(f, data, len);
    /* Replayed: the limit is not for the server's own history. Asked only
     * here, since the context's flags cost more than an add. */
    if (rc == SK_EBUDGET && key_limit(ctx) == 0)
        rc = sk_bloom_add_unlimited(f, data, len);
    if (rc >= 0)
        return rc;
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    sk_bloom_layer next;
    if (rc == SK_EBUDGET && sk_bloom_get_layer(f, info.layers, &next) == SK_OK)
        reply_too_large(ctx, info.memory + next.bytes);
    else if (rc == SK_EFULL && info.expansion == 0)
        RM_ReplyWithError(ctx, "ERR non scaling filter is full");
    else if (rc == SK_EFULL)
        RM_ReplyWithError(ctx, "ERR the filter is full: its next layer would be past the "
                               "library's limits");
    else
        reply_status(ctx, rc);
    return rc;
}

static int add_one(RedisModuleCtx *ctx, void *filter, RedisModuleString *item)
{
    return add_item(ctx, filter, item);
}

/* open_filter, refusing a filter whose restore has not finished. */
static int open_complete(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         RedisModuleKey **key, sk_bloom **filter, sk_sbchain **chain)
{
    if (open_filter(ctx, name, mode, key, filter, chain) != RM_OK ||
        refuse_restoring(ctx, *key, *filter) || chain_refuse_restoring(ctx, *key, *chain))
        return RM_ERR;
    return RM_OK;
}

/* A new filter for an empty key, in the type new keys take: set in the
 * key, or NULL after replying why not. */
static void *create_in(RedisModuleCtx *ctx, RedisModuleKey *key, const struct bloom_params *p)
{
    if (module_config.redisbloom_types) {
        sk_sbchain *c = chain_create(ctx, p->error_rate, p->capacity, p->expansion);
        if (c != NULL)
            RM_ModuleTypeSetValue(key, chain_type, c);
        return c;
    }
    sk_bloom *f = create_filter(ctx, p);
    if (f != NULL)
        RM_ModuleTypeSetValue(key, bloom_type, f);
    return f;
}

/* ---- arguments ------------------------------------------------------------ */

/* RedisBloom's texts: BF.RESERVE's start with "ERR", BF.INSERT's do not. */
struct parse_errors {
    const char *rate_syntax, *rate_range, *capacity_syntax, *capacity_range, *expansion_syntax,
        *expansion_range;
};

static const struct parse_errors reserve_errors = {
    "ERR bad error rate",
    "ERR error rate must be in the range (0.000000, 1.000000)",
    "ERR bad capacity",
    "ERR (capacity should be larger than 0)",
    "ERR bad expansion",
    "ERR expansion must be in the range [0, 32768]",
};

static const struct parse_errors insert_errors = {
    "Bad error rate", "Bad error rate", "Bad capacity",
    "Bad capacity",   "Bad expansion",  "Bad expansion",
};

static int parse_rate(RedisModuleCtx *ctx, RedisModuleString *arg, const struct parse_errors *e,
                      double *rate)
{
    if (RM_StringToDouble(arg, rate) != RM_OK) {
        RM_ReplyWithError(ctx, e->rate_syntax);
        return RM_ERR;
    }
    if (!(*rate > 0 && *rate < 1)) {
        RM_ReplyWithError(ctx, e->rate_range);
        return RM_ERR;
    }
    /* Past the library's floor, which RedisBloom does not have. */
    if (!config_rate_valid(*rate)) {
        RM_ReplyWithError(ctx, "ERR error rate must be at least 1e-15");
        return RM_ERR;
    }
    return RM_OK;
}

/* An integer in [lo, hi], replying the syntax or the range error. */
static int parse_integer(RedisModuleCtx *ctx, RedisModuleString *arg, long long lo,
                         long long hi, const char *syntax_error, const char *range_error,
                         long long *value)
{
    if (RM_StringToLongLong(arg, value) != RM_OK) {
        RM_ReplyWithError(ctx, syntax_error);
        return RM_ERR;
    }
    if (*value < lo || *value > hi) {
        RM_ReplyWithError(ctx, range_error);
        return RM_ERR;
    }
    return RM_OK;
}

static int parse_capacity(RedisModuleCtx *ctx, RedisModuleString *arg,
                          const struct parse_errors *e, long long *capacity)
{
    return parse_integer(ctx, arg, 1, LLONG_MAX, e->capacity_syntax, e->capacity_range,
                         capacity);
}

static int parse_expansion(RedisModuleCtx *ctx, RedisModuleString *arg,
                           const struct parse_errors *e, long long *expansion)
{
    return parse_integer(ctx, arg, 0, SK_BLOOM_MAX_EXPANSION, e->expansion_syntax,
                         e->expansion_range, expansion);
}

/* ---- creating and adding ---------------------------------------------------- */

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]
 * EXPANSION 0 is NONSCALING; NONSCALING with another expansion is refused. */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct bloom_params p = default_params();
    if (parse_rate(ctx, argv[2], &reserve_errors, &p.error_rate) != RM_OK ||
        parse_capacity(ctx, argv[3], &reserve_errors, &p.capacity) != RM_OK)
        return RM_OK;
    int nonscaling = 0, expansion_given = 0;
    for (int i = 4; i < argc; i++) {
        if (arg_is(argv[i], "NONSCALING")) {
            nonscaling = 1;
        } else if (arg_is(argv[i], "EXPANSION")) {
            if (++i == argc)
                return RM_ReplyWithError(ctx, "ERR no expansion");
            if (parse_expansion(ctx, argv[i], &reserve_errors, &p.expansion) != RM_OK)
                return RM_OK;
            expansion_given = 1;
        } else {
            return RM_ReplyWithError(ctx, "ERR unknown argument");
        }
    }
    if (nonscaling && expansion_given && p.expansion != 0)
        return RM_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    if (nonscaling)
        p.expansion = 0;
    sk_bloom *f;
    sk_sbchain *c;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ | RM_WRITE, &key, &f, &c) != RM_OK)
        return RM_OK;
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR item exists");
    }
    if (create_in(ctx, key, &p) != NULL) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "bf.reserve", argv[1]);
        RM_ReplicateVerbatim(ctx);
        RM_ReplyWithSimpleString(ctx, "OK");
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* Items handed to the library's batch calls at once, whose memory accesses
 * it overlaps. */
#define ITEM_BATCH 256

static void batch_of(RedisModuleString **items, int count, const void **data, size_t *lens)
{
    for (int i = 0; i < count; i++)
        data[i] = RM_StringPtrLen(items[i], &lens[i]);
}

/* Adds the items and replies a boolean (single) or an array of them that
 * ends at the first error; returns whether any item was new, and in
 * *applied how many were added before that error. */
static int add_items(RedisModuleCtx *ctx, sk_bloom *f, RedisModuleString **items, int count,
                     int single, int *applied)
{
    int changed = 0;
    if (!single)
        RM_ReplyWithArray(ctx, RM_POSTPONED_ARRAY_LEN);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    /* A fixed filter with room for every item refuses none, and does not
     * grow: one batch call per ITEM_BATCH items. */
    if (!single && info.expansion == 0 && info.count + (uint64_t)count <= info.capacity) {
        const void *data[ITEM_BATCH];
        size_t lens[ITEM_BATCH];
        uint8_t added[ITEM_BATCH];
        for (int done = 0; done < count; done += ITEM_BATCH) {
            int n = count - done < ITEM_BATCH ? count - done : ITEM_BATCH;
            batch_of(items + done, n, data, lens);
            sk_bloom_add_batch(f, data, lens, (size_t)n, added);
            for (int i = 0; i < n; i++) {
                changed |= added[i];
                RM_ReplyWithBool(ctx, added[i]);
            }
        }
        RM_ReplySetArrayLength(ctx, count);
        *applied = count;
        return changed;
    }
    return add_each(ctx, f, add_one, items, count, single, applied);
}

/* Opens key for writing, creating a filter with p if it is empty: *f or
 * *c is the filter. */
static RedisModuleKey *open_or_create(RedisModuleCtx *ctx, RedisModuleString *name,
                                      const struct bloom_params *p, int nocreate,
                                      sk_bloom **f, sk_sbchain **c, int *created)
{
    RedisModuleKey *key;
    *created = 0;
    if (open_complete(ctx, name, RM_READ | RM_WRITE, &key, f, c) != RM_OK)
        return NULL;
    if (*f != NULL || *c != NULL)
        return key;
    if (nocreate) {
        RM_CloseKey(key);
        RM_ReplyWithError(ctx, "ERR not found");
        return NULL;
    }
    void *made = create_in(ctx, key, p);
    if (made == NULL) {
        RM_CloseKey(key);
        return NULL;
    }
    if (module_config.redisbloom_types)
        *c = made;
    else
        *f = made;
    *created = 1;
    return key;
}

/* What a command that adds did to a key: whether it created the filter,
 * and with which parameters; the items it was given, how many of them it
 * added before an error stopped it, and whether any was new. */
struct adds {
    int created;
    const struct bloom_params *params;
    RedisModuleString **items;
    int count, applied, changed;
};

/* The end of every command that adds: what changed is announced, as Redis's
 * own commands do, and replicated as it was done (see the top of the file);
 * a command done whole on a filter that was there goes verbatim. */
static void added(RedisModuleCtx *ctx, RedisModuleString *name, const char *event,
                  const struct adds *a)
{
    if (!a->changed && !a->created)
        return;
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, event, name);
    if (!a->created && a->applied == a->count) {
        RM_ReplicateVerbatim(ctx);
        return;
    }
    if (a->created) {
        char rate[32], capacity[24], expansion[24];
        snprintf(rate, sizeof rate, "%.17g", a->params->error_rate);
        snprintf(capacity, sizeof capacity, "%lld", a->params->capacity);
        snprintf(expansion, sizeof expansion, "%lld", a->params->expansion);
        RM_Replicate(ctx, "BF.RESERVE", "scccc", name, rate, capacity, "EXPANSION", expansion);
    }
    if (a->applied > 0)
        RM_Replicate(ctx, "BF.MADD", "sv", name, a->items, (size_t)a->applied);
}

/* BF.ADD key item; BF.MADD key item [item ...] */
static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single)
{
    if (single ? argc != 3 : argc < 3)
        return RM_WrongArity(ctx);
    struct bloom_params p = default_params();
    sk_bloom *f;
    sk_sbchain *c;
    int created;
    RedisModuleKey *key = open_or_create(ctx, argv[1], &p, 0, &f, &c, &created);
    if (key == NULL)
        return RM_OK;
    struct adds a = {created, &p, argv + 2, argc - 2, 0, 0};
    a.changed = f != NULL ? add_items(ctx, f, a.items, a.count, single, &a.applied)
                          : chain_add_items(ctx, c, a.items, a.count, single, &a.applied);
    added(ctx, argv[1], single ? "bf.add" : "bf.madd", &a);
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 1);
}

static int cmd_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_command(ctx, argv, argc, 0);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING]
 *           ITEMS item [item ...]
 * The options shape a filter the command creates and are ignored for one
 * that exists; they follow BF.RESERVE's rules. */
static int cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct bloom_params p = default_params();
    int nocreate = 0, nonscaling = 0, expansion_given = 0, items = -1;
    for (int i = 2; i < argc && items < 0; i++) {
        int takes_value = arg_is(argv[i], "CAPACITY") || arg_is(argv[i], "ERROR") ||
                          arg_is(argv[i], "EXPANSION");
        if (takes_value && i + 1 == argc)
            return RM_WrongArity(ctx);
        if (arg_is(argv[i], "ITEMS")) {
            items = i + 1;
        } else if (arg_is(argv[i], "NOCREATE")) {
            nocreate = 1;
        } else if (arg_is(argv[i], "NONSCALING")) {
            nonscaling = 1;
        } else if (arg_is(argv[i], "CAPACITY")) {
            if (parse_capacity(ctx, argv[++i], &insert_errors, &p.capacity) != RM_OK)
                return RM_OK;
        } else if (arg_is(argv[i], "ERROR")) {
            if (parse_rate(ctx, argv[++i], &insert_errors, &p.error_rate) != RM_OK)
                return RM_OK;
        } else if (arg_is(argv[i], "EXPANSION")) {
            if (parse_expansion(ctx, argv[++i], &insert_errors, &p.expansion) != RM_OK)
                return RM_OK;
            expansion_given = 1;
        } else {
            return RM_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (items < 0 || items >= argc)
        return RM_WrongArity(ctx);
    if (nonscaling && expansion_given && p.expansion != 0)
        return RM_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    if (nonscaling)
        p.expansion = 0;
    sk_bloom *f;
    sk_sbchain *c;
    int created;
    RedisModuleKey *key = open_or_create(ctx, argv[1], &p, nocreate, &f, &c, &created);
    if (key == NULL)
        return RM_OK;
    struct adds a = {created, &p, argv + items, argc - items, 0, 0};
    a.changed = f != NULL ? add_items(ctx, f, a.items, a.count, 0, &a.applied)
                          : chain_add_items(ctx, c, a.items, a.count, 0, &a.applied);
    added(ctx, argv[1], "bf.insert", &a);
    RM_CloseKey(key);
    return RM_OK;
}

/* ---- reading ---------------------------------------------------------------- */

/* BF.EXISTS key item; BF.MEXISTS key item [item ...] */
static int exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single)
{
    if (single ? argc != 3 : argc < 3)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    sk_sbchain *c;
    RedisModuleKey *key;
    if (open_complete(ctx, argv[1], RM_READ, &key, &f, &c) != RM_OK)
        return RM_OK;
    if (c != NULL) {
        chain_exists(ctx, c, argv + 2, argc - 2, single);
        RM_CloseKey(key);
        return RM_OK;
    }
    if (!single)
        RM_ReplyWithArray(ctx, argc - 2);
    const void *data[ITEM_BATCH];
    size_t lens[ITEM_BATCH];
    uint8_t found[ITEM_BATCH];
    for (int done = 2; done < argc; done += ITEM_BATCH) {
        int n = argc - done < ITEM_BATCH ? argc - done : ITEM_BATCH;
        if (f != NULL) {
            batch_of(argv + done, n, data, lens);
            sk_bloom_contains_batch(f, data, lens, (size_t)n, found);
        } else {
            memset(found, 0, (size_t)n);
        }
        for (int i = 0; i < n; i++)
            RM_ReplyWithBool(ctx, found[i]);
    }
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, 1);
}

static int cmd_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, 0);
}

int bloom_register(RedisModuleCtx *ctx)
{
    if (bloom_type_create(ctx) != RM_OK || chain_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"bf.reserve", cmd_reserve, "write deny-oom", 1},
        {"bf.add", cmd_add, "write deny-oom", 1},
        {"bf.madd", cmd_madd, "write deny-oom", 1},
        {"bf.insert", cmd_insert, "write deny-oom", 1},
        {"bf.exists", cmd_exists, "readonly fast", 1},
        {"bf.mexists", cmd_mexists, "readonly fast", 1},
        {"bf.card", bf_card, "readonly fast", 1},
        {"bf.info", bf_info, "readonly fast", 1},
        {"bf.debug", bf_debug, "readonly", 1},
        {"bf.scandump", bf_scandump, "readonly", 1},
        {"bf.loadchunk", bf_loadchunk, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
