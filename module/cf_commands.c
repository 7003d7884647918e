/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cf_commands.c: the CF.* commands, answering as RedisBloom 2.6 does
 * (replies, RESP3 types and error texts), and two of sketch's own,
 * CF.EXPORT and CF.IMPORT, which move a filter as the library's bytes.
 * CF.SCANDUMP and CF.LOADCHUNK are in cf_dump.c.
 *
 *   CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
 *   CF.ADD key item                CF.ADDNX key item
 *   CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item [item ...]
 *   CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item [item ...]
 *   CF.EXISTS key item             CF.MEXISTS key item [item ...]
 *   CF.COUNT key item              CF.DEL key item
 *   CF.COMPACT key   CF.INFO key   CF.DEBUG key
 *   CF.EXPORT key    CF.IMPORT key bytes
 *
 * A key holds an sk_cuckoo (cf_type.c) in Redis's memory, created and
 * grown within the key's limit. An add that some items did not go in
 * replicates as CF.INSERT of those that did (with CAPACITY when the command
 * created the filter), since an item refused for the key's limit or
 * CF_MAX_EXPANSIONS on the primary must not go in on a replica, whose
 * limits may differ; what else writes is deterministic and replicates
 * verbatim.
 */
#include <stdio.h>
#include <string.h>

#include "cf_commands.h"
#include "cf_type.h"
#include "common.h"
#include "module.h"

#define DEFAULT_CAPACITY 1024 /* of a filter that CF.ADD or CF.INSERT creates */
#define DEFAULT_BUCKET_SIZE 2
#define DEFAULT_MAX_ITERATIONS 20
#define DEFAULT_EXPANSION 1
#define APPLIED_ON_STACK 64 /* items an add keeps track of without allocating */
#define HEADER_BYTES 40    /* CF.INFO's Size, RedisBloom's measure: its filter's header, */
#define SUBFILTER_BYTES 16 /* a descriptor per sub-filter, and the slots */

static int resp3(RedisModuleCtx *ctx)
{
    return (RM_GetContextFlags(ctx) & RM_CTX_FLAGS_RESP3) != 0;
}

/* Closes the key of a filter whose restore has not finished, after
 * replying that it is; 0 for any other. */
static int refuse_restoring(RedisModuleCtx *ctx, RedisModuleKey *key, const sk_cuckoo *c)
{
    if (c == NULL || !sk_cuckoo_restoring(c))
        return 0;
    RM_CloseKey(key);
    RM_ReplyWithError(ctx, "ERR the filter is being restored: CF.LOADCHUNK its remaining "
                           "chunks first");
    return 1;
}

/* See cf_commands.h. */
int cf_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
            sk_cuckoo **c)
{
    void *value;
    if (blob_open(ctx, name, mode, &cf_family, key, &value) != RM_OK)
        return RM_ERR;
    *c = value;
    return refuse_restoring(ctx, *key, *c) ? RM_ERR : RM_OK;
}

/* A filter of these settings within the key's limit, or NULL after
 * replying why not. */
static sk_cuckoo *create_filter(RedisModuleCtx *ctx, long long capacity, long long b,
                                long long iterations, long long expansion)
{
    sk_cuckoo_options o = {.capacity = (uint64_t)capacity, .bucket_size = (uint32_t)b,
                           .max_iterations = (uint32_t)iterations,
                           .expansion = (uint32_t)expansion, .max_memory = key_limit(ctx),
                           .allocator = &module_allocator};
    sk_cuckoo *c;
    int rc = sk_cuckoo_create(&c, &o);
    if (rc == SK_OK)
        return c;
    if (rc == SK_EBUDGET)
        reply_over_key_limit(ctx, "ERR ", "filter", sk_cuckoo_create_memory(&o));
    else
        RM_ReplyWithError(ctx, "ERR Insufficient memory to create filter");
    return NULL;
}

/* ---- CF.RESERVE --------------------------------------------------------------- */

/* The option's value, where RedisBloom looks for it: after the first
 * argument, command and key included, that names it. 0 if absent, -1
 * after replying an error. */
static int option(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const char *name,
                  long long lo, long long hi, long long *value)
{
    char message[96];
    for (int i = 0; i < argc; i++) {
        if (!arg_is(argv[i], name))
            continue;
        if (i + 1 == argc || RM_StringToLongLong(argv[i + 1], value) != RM_OK) {
            snprintf(message, sizeof message, "Couldn't parse %s", name);
            RM_ReplyWithError(ctx, message);
            return -1;
        }
        if (*value < lo || *value > hi) {
            snprintf(message, sizeof message,
                     "%s: value must be an integer between %lld and %lld, inclusive.", name, lo,
                     hi);
            RM_ReplyWithError(ctx, message);
            return -1;
        }
        return 1;
    }
    return 0;
}

static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3 || argc % 2 == 0)
        return RM_WrongArity(ctx);
    long long capacity, iterations = DEFAULT_MAX_ITERATIONS, b = DEFAULT_BUCKET_SIZE,
                        expansion = DEFAULT_EXPANSION;
    if (RM_StringToLongLong(argv[2], &capacity) != RM_OK)
        return RM_ReplyWithError(ctx, "Bad capacity");
    if (option(ctx, argv, argc, "MAXITERATIONS", 1, SK_CUCKOO_MAX_ITERATIONS, &iterations) < 0 ||
        option(ctx, argv, argc, "BUCKETSIZE", 1, SK_CUCKOO_MAX_BUCKET_SIZE, &b) < 0 ||
        option(ctx, argv, argc, "EXPANSION", 0, SK_CUCKOO_MAX_EXPANSION, &expansion) < 0)
        return RM_OK;
    if (b * 2 > capacity)
        return RM_ReplyWithError(ctx, "Capacity must be at least (BucketSize * 2)");
    RedisModuleKey *key;
    void *existing;
    if (blob_open(ctx, argv[1], RM_READ | RM_WRITE, &cf_family, &key, &existing) != RM_OK)
        return RM_OK;
    sk_cuckoo *c = NULL;
    if (existing != NULL)
        RM_ReplyWithError(ctx, "ERR item exists");
    else
        c = create_filter(ctx, capacity, b, iterations, expansion);
    if (c == NULL) {
        RM_CloseKey(key);
        return RM_OK;
    }
    RM_ModuleTypeSetValue(key, blob_type_for(&cf_family, key), c);
    RM_CloseKey(key);
    RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cf.reserve", argv[1]);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX ------------------------- */

struct insert_options {
    int nx;         /* ADDNX, INSERTNX: only what is not already there */
    int multi;      /* INSERT, INSERTNX: an array of answers */
    int create;     /* not NOCREATE */
    long long capacity;
};

/* The answer for one item; 0 to go on, -1 when the command ends on it. */
static int reply_insert(RedisModuleCtx *ctx, const struct insert_options *o, int resp3, int rc)
{
    int as_bool = resp3 && (!o->nx || !o->multi);
    if (rc == 1 || rc == 0) {
        if (as_bool)
            RM_ReplyWithBool(ctx, rc);
        else
            RM_ReplyWithLongLong(ctx, rc);
        return 0;
    }
    if (!o->multi) {
        RM_ReplyWithError(ctx, rc == SK_EFULL ? "Filter is full" : "Memory allocation failure");
        return -1;
    }
    if (rc == SK_EFULL && resp3 && !o->nx)
        RM_ReplyWithBool(ctx, 0);
    else
        RM_ReplyWithLongLong(ctx, -1);
    return 0;
}

/* What the command applied, as a command that applies the same: itself
 * when every item went in (the filter it creates has fixed settings, and a
 * replica or a replay holds it to no limit), else the items that went in,
 * on a filter created as this one was. */
static void replicate_insert(RedisModuleCtx *ctx, RedisModuleString *name, int created,
                             long long capacity, RedisModuleString **applied, size_t n,
                             size_t asked)
{
    if (n == asked && n > 0) {
        RM_ReplicateVerbatim(ctx);
        return;
    }
    char cap[24];
    snprintf(cap, sizeof cap, "%lld", capacity);
    if (n == 0 && created)
        RM_Replicate(ctx, "CF.RESERVE", "sc", name, cap);
    else if (created)
        RM_Replicate(ctx, "CF.INSERT", "scccv", name, "CAPACITY", cap, "ITEMS", applied, n);
    else if (n > 0)
        RM_Replicate(ctx, "CF.INSERT", "sccv", name, "NOCREATE", "ITEMS", applied, n);
}

static int insert_items(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleString **items,
                        size_t n, const struct insert_options *o)
{
    RedisModuleKey *key;
    sk_cuckoo *c;
    if (cf_open(ctx, name, RM_READ | RM_WRITE, &key, &c) != RM_OK)
        return RM_OK;
    int created = 0;
    if (c == NULL && !o->create) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    }
    if (c == NULL) {
        if (o->capacity < 2 * DEFAULT_BUCKET_SIZE) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, "ERR Could not create filter");
        }
        c = create_filter(ctx, o->capacity, DEFAULT_BUCKET_SIZE, DEFAULT_MAX_ITERATIONS,
                          DEFAULT_EXPANSION);
        if (c == NULL) {
            RM_CloseKey(key);
            return RM_OK;
        }
        RM_ModuleTypeSetValue(key, blob_type_for(&cf_family, key), c);
        created = 1;
    }
    sk_cuckoo_info info;
    sk_cuckoo_get_info(c, &info);
    /* Growth within this command's limit: none for what the server
     * replays, which was applied where it first ran. */
    int flags = RM_GetContextFlags(ctx);
    int replayed = (flags & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING)) != 0;
    sk_cuckoo_set_max_memory(c, replayed ? 0 : (uint64_t)module_config.max_key_memory);
    RedisModuleString *few[APPLIED_ON_STACK];
    RedisModuleString **applied = n <= APPLIED_ON_STACK ? few : RM_TryAlloc(n * sizeof *applied);
    int refused = !replayed && info.filters >= module_config.cf_max_expansions;
    size_t asked = n;
    if (refused || applied == NULL) {
        RM_ReplyWithError(ctx, refused ? "Maximum expansions reached" : "Memory allocation failure");
        n = 0;
    } else if (o->multi) {
        RM_ReplyWithArray(ctx, (long)n);
    }
    size_t went_in = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *item = RM_StringPtrLen(items[i], &len);
        int rc = o->nx ? sk_cuckoo_add_unique(c, item, len) : sk_cuckoo_add(c, item, len);
        if (rc == 1)
            applied[went_in++] = items[i];
        if (reply_insert(ctx, o, (flags & RM_CTX_FLAGS_RESP3) != 0, rc) < 0)
            break;
    }
    RM_CloseKey(key);
    if (created || went_in > 0)
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, o->multi ? "cf.insert" : "cf.add", name);
    replicate_insert(ctx, name, created, o->capacity, applied, went_in, asked);
    if (applied != few)
        RM_Free(applied);
    return RM_OK;
}

/* The command name's last letter: CF.ADDNX and CF.INSERTNX end in X. */
static int ends_with(RedisModuleString *command, char upper)
{
    size_t len;
    const char *s = RM_StringPtrLen(command, &len);
    return len > 0 && (s[len - 1] == upper || s[len - 1] == upper + ('a' - 'A'));
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    struct insert_options o = {.nx = ends_with(argv[0], 'X'), .create = 1,
                               .capacity = DEFAULT_CAPACITY};
    return insert_items(ctx, argv[1], argv + 2, 1, &o);
}

/* Its options are told apart by their first letter, as RedisBloom reads
 * them: CAPACITY, ITEMS and NOCREATE. */
static int cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct insert_options o = {.nx = ends_with(argv[0], 'X'), .multi = 1, .create = 1,
                               .capacity = DEFAULT_CAPACITY};
    int at = 2, items = -1;
    while (at < argc && items < 0) {
        size_t len;
        const char *s = RM_StringPtrLen(argv[at], &len);
        char first = len > 0 ? (char)(s[0] | 0x20) : '\0';
        if (first == 'c') {
            if (++at == argc)
                return RM_WrongArity(ctx);
            if (RM_StringToLongLong(argv[at++], &o.capacity) != RM_OK)
                return RM_ReplyWithError(ctx, "Bad capacity");
            if (o.capacity < 2 * DEFAULT_BUCKET_SIZE)
                return RM_ReplyWithError(ctx, "Capacity must be at least (BucketSize * 2)");
        } else if (first == 'i') {
            items = ++at;
        } else if (first == 'n') {
            o.create = 0;
            at++;
        } else {
            return RM_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (items < 0 || items == argc)
        return RM_WrongArity(ctx);
    return insert_items(ctx, argv[1], argv + items, (size_t)(argc - items), &o);
}

/* ---- CF.EXISTS, CF.MEXISTS and CF.COUNT ---------------------------------- */

#define BATCH 64 /* items asked together, their lookups overlapped */

/* A missing key, or one of another type, answers 0 for every item, as
 * RedisBloom's does. */
static int cmd_check(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    size_t len;
    const char *name = RM_StringPtrLen(argv[0], &len);
    int multi = len > 3 && (name[3] | 0x20) == 'm';
    int count = ends_with(argv[0], 'T');
    if ((!multi && argc != 3) || (multi && argc < 3))
        return RM_WrongArity(ctx);
    RedisModuleKey *key = RM_OpenKey(ctx, argv[1], RM_READ);
    sk_cuckoo *c = NULL;
    if (blob_holds(&cf_family, key))
        c = RM_ModuleTypeGetValue(key);
    if (refuse_restoring(ctx, key, c))
        return RM_OK;
    int as_bool = !count && resp3(ctx);
    if (multi)
        RM_ReplyWithArray(ctx, argc - 2);
    for (int at = 2; at < argc; at += BATCH) {
        int n = argc - at < BATCH ? argc - at : BATCH;
        const void *items[BATCH];
        size_t lens[BATCH];
        uint8_t found[BATCH];
        uint64_t counts[BATCH];
        for (int i = 0; i < n; i++) {
            items[i] = RM_StringPtrLen(argv[at + i], &lens[i]);
            found[i] = 0;
            counts[i] = 0;
        }
        if (c != NULL && count)
            for (int i = 0; i < n; i++)
                counts[i] = sk_cuckoo_count(c, items[i], lens[i]);
        else if (c != NULL && n == 1)
            found[0] = (uint8_t)sk_cuckoo_contains(c, items[0], lens[0]);
        else if (c != NULL)
            sk_cuckoo_contains_many(c, items, lens, (size_t)n, found);
        for (int i = 0; i < n; i++) {
            if (as_bool)
                RM_ReplyWithBool(ctx, found[i]);
            else
                RM_ReplyWithLongLong(ctx, count ? (long long)counts[i] : found[i]);
        }
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* ---- CF.DEL and CF.COMPACT ------------------------------------------------ */

/* Opens a key that must hold a filter; NULL after replying `missing` for
 * a missing key or one of another type, as RedisBloom does. */
static sk_cuckoo *open_filter(RedisModuleCtx *ctx, RedisModuleString *name, const char *missing,
                              RedisModuleKey **key)
{
    *key = RM_OpenKey(ctx, name, RM_READ | RM_WRITE);
    if (!blob_holds(&cf_family, *key)) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, missing);
        return NULL;
    }
    sk_cuckoo *c = RM_ModuleTypeGetValue(*key);
    return refuse_restoring(ctx, *key, c) ? NULL : c;
}

static int cmd_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cuckoo *c = open_filter(ctx, argv[1], "Not found", &key);
    if (c == NULL)
        return RM_OK;
    size_t len;
    const char *item = RM_StringPtrLen(argv[2], &len);
    int deleted = sk_cuckoo_delete(c, item, len) == 1;
    RM_CloseKey(key);
    if (deleted) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cf.del", argv[1]);
        RM_ReplicateVerbatim(ctx);
    }
    return resp3(ctx) ? RM_ReplyWithBool(ctx, deleted) : RM_ReplyWithLongLong(ctx, deleted);
}

static int cmd_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    RedisModuleKey *key;
    sk_cuckoo *c = open_filter(ctx, argv[1], "Cuckoo filter was not found", &key);
    if (c == NULL)
        return RM_OK;
    int changed = sk_cuckoo_compact(c);
    RM_CloseKey(key);
    if (changed) {
        RM_NotifyKeyspaceEvent(ctx, RM_NOTIFY_GENERIC, "cf.compact", argv[1]);
        RM_ReplicateVerbatim(ctx);
    }
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- CF.INFO and CF.DEBUG ------------------------------------------------- */

static sk_cuckoo *open_existing(RedisModuleCtx *ctx, RedisModuleString *name,
                                RedisModuleKey **key)
{
    sk_cuckoo *c;
    if (cf_open(ctx, name, RM_READ, key, &c) != RM_OK)
        return NULL;
    if (c == NULL) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, "ERR not found");
    }
    return c;
}

/* The figures of `key` of CF.INFO and CF.DEBUG, or RM_ERR after replying
 * why not. */
static int info_of(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, sk_cuckoo_info *info)
{
    if (argc != 2) {
        RM_WrongArity(ctx);
        return RM_ERR;
    }
    RedisModuleKey *key;
    sk_cuckoo *c = open_existing(ctx, argv[1], &key);
    if (c == NULL)
        return RM_ERR;
    sk_cuckoo_get_info(c, info);
    RM_CloseKey(key);
    return RM_OK;
}

static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    sk_cuckoo_info info;
    if (info_of(ctx, argv, argc, &info) != RM_OK)
        return RM_OK;
    const struct {
        const char *name;
        uint64_t value;
    } fields[] = {
        {"Size", HEADER_BYTES + SUBFILTER_BYTES * (uint64_t)info.filters + info.slots},
        {"Number of buckets", info.buckets},
        {"Number of filters", info.filters},
        {"Number of items inserted", info.items},
        {"Number of items deleted", info.deletes},
        {"Bucket size", info.bucket_size},
        {"Expansion rate", info.expansion},
        {"Max iterations", info.max_iterations},
    };
    RM_ReplyWithMap(ctx, sizeof fields / sizeof fields[0]);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        RM_ReplyWithSimpleString(ctx, fields[i].name);
        RM_ReplyWithLongLong(ctx, (long long)fields[i].value);
    }
    return RM_OK;
}

static int cmd_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    sk_cuckoo_info info;
    if (info_of(ctx, argv, argc, &info) != RM_OK)
        return RM_OK;
    char text[192];
    int len = snprintf(text, sizeof text,
                       "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%u "
                       "max_iterations:%u expansion:%u",
                       info.bucket_size, (unsigned long long)info.buckets,
                       (unsigned long long)info.items, (unsigned long long)info.deletes,
                       info.filters, info.max_iterations, info.expansion);
    return RM_ReplyWithStringBuffer(ctx, text, (size_t)len);
}

/* ---- CF.EXPORT and CF.IMPORT ----------------------------------------------- */

static int cmd_export(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_export_command(&cf_family, ctx, argv, argc);
}

static int cmd_import(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return blob_import_command(&cf_family, ctx, argv, argc);
}

int cf_register(RedisModuleCtx *ctx)
{
    if (cf_type_create(ctx) != RM_OK)
        return RM_ERR;
    static const struct command_entry commands[] = {
        {"cf.reserve", cmd_reserve, "write deny-oom", 1},
        {"cf.add", cmd_add, "write deny-oom", 1},
        {"cf.addnx", cmd_add, "write deny-oom", 1},
        {"cf.insert", cmd_insert, "write deny-oom", 1},
        {"cf.insertnx", cmd_insert, "write deny-oom", 1},
        {"cf.exists", cmd_check, "readonly fast", 1},
        {"cf.mexists", cmd_check, "readonly fast", 1},
        {"cf.count", cmd_check, "readonly fast", 1},
        {"cf.del", cmd_del, "write fast", 1},
        {"cf.compact", cmd_compact, "write", 1},
        {"cf.scandump", cf_scandump, "readonly", 1},
        {"cf.loadchunk", cf_loadchunk, "write deny-oom", 1},
        {"cf.info", cmd_info, "readonly fast", 1},
        {"cf.debug", cmd_debug, "readonly fast", 1},
        {"cf.export", cmd_export, "readonly", 1},
        {"cf.import", cmd_import, "write deny-oom", 1},
    };
    return register_commands(ctx, commands, sizeof commands / sizeof commands[0]);
}
