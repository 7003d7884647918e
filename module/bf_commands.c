/*
 * bf_commands.c: the BF.* commands, answering as RedisBloom does, so that
 * its clients (redis-py's r.bf(), Jedis, go-redis, node-redis) work unchanged.
 *
 * A key holds an sk_bloom: scaling (a chain of layers, the default) or
 * NONSCALING (fixed size, refusing new items once full). The defaults are
 * RedisBloom's: error rate 0.01, capacity 100, expansion 2; the layout is
 * the library's automatic choice (blocked where it costs little memory).
 *
 * Memory: every filter lives in Redis's memory (module_allocator), and its
 * budget is the key's limit for what clients send; what the server replays
 * is never limited (key_limit, docs/limits.md).
 *
 * Persistence: RDB keeps a filter as its dump (docs/bloom-format.md): the
 * header, then the bit arrays in pieces of SAVE_PIECE read into a buffer on
 * the stack, so that a save takes no memory and a load never holds two
 * copies of a large filter; the header's checksums are checked once every
 * piece is in. The AOF rewrite and BF.SCANDUMP use the same dump, cut into
 * BF.LOADCHUNK pieces.
 *
 * BF.SCANDUMP's iterator is one more than the dump offset where the next
 * piece starts (0 only when there is none): BF.LOADCHUNK receives the
 * iterator returned with a piece, so it knows where that piece ends.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "module.h"

#define DEFAULT_ERROR_RATE 0.01
#define DEFAULT_CAPACITY 100
#define DEFAULT_EXPANSION 2
#define SAVE_PIECE (64u << 10)
#define SCANDUMP_PIECE (16u << 20)

RedisModuleType *bloom_type;

/* ---- creation and limits -------------------------------------------------- */

struct bloom_params {
    double error_rate;
    long long capacity;
    long long expansion;
    int nonscaling;
};

static int reply_too_large(RedisModuleCtx *ctx, uint64_t bytes)
{
    char message[160];
    snprintf(message, sizeof message,
             "ERR the filter would take %llu bytes, more than the module's "
             "MAX-KEY-MEMORY of %llu",
             (unsigned long long)bytes, (unsigned long long)module_config.max_key_memory);
    return RM_ReplyWithError(ctx, message);
}

/* The options of a new filter, in Redis's memory: the library enforces the
 * key's limit as the filter's budget. RedisBloom takes rates up to 1; above
 * 0.5 a filter of rate 0.5 serves them better than asked. */
static sk_bloom_options filter_options(const struct bloom_params *p)
{
    return (sk_bloom_options){
        .capacity = (uint64_t)p->capacity,
        .fp_rate = p->error_rate > SK_BLOOM_MAX_FP_RATE ? SK_BLOOM_MAX_FP_RATE : p->error_rate,
        .layout = SK_BLOOM_AUTO,
        .expansion = p->nonscaling ? 0 : (unsigned)p->expansion,
        .max_memory = module_config.max_key_memory,
        .allocator = &module_allocator,
    };
}

/* Creates a filter within the memory limit, or replies an error and
 * returns NULL. */
static sk_bloom *create_filter(RedisModuleCtx *ctx, const struct bloom_params *p)
{
    sk_bloom_options o = filter_options(p);
    sk_bloom *f;
    int rc = sk_bloom_create(&f, &o);
    if (rc == SK_EBUDGET && key_limit(ctx) == 0) {
        /* Replayed (see add_item): created without the limit, which then
         * applies to what clients add. */
        o.max_memory = 0;
        rc = sk_bloom_create(&f, &o);
        if (rc == SK_OK)
            sk_bloom_set_max_memory(f, module_config.max_key_memory);
    }
    if (rc == SK_OK)
        return f;
    sk_bloom_layer first;
    if (rc == SK_EBUDGET && sk_bloom_plan(&o, 0, &first) == SK_OK)
        reply_too_large(ctx, first.bytes);
    else if (rc == SK_ETOOLARGE)
        RM_ReplyWithError(ctx, "ERR the filter would take more than the library's limit of "
                               "2^48 bits per layer");
    else
        reply_status(ctx, rc);
    return NULL;
}

/* Opens key for the command: RM_OK with *filter its filter, or NULL if the
 * key is empty (then *key may be NULL: Redis 7.0 gives no handle for a
 * missing key opened to read, and CloseKey and KeyType accept NULL).
 * Replies WRONGTYPE and returns RM_ERR for a key of another type. */
static int open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                       RedisModuleKey **key, sk_bloom **filter)
{
    *key = RM_OpenKey(ctx, name, mode);
    *filter = NULL;
    int type = RM_KeyType(*key);
    if (type == RM_KEYTYPE_EMPTY)
        return RM_OK;
    if (type != RM_KEYTYPE_MODULE || RM_ModuleTypeGetType(*key) != bloom_type) {
        RM_CloseKey(*key);
        RM_ReplyWithError(ctx, RM_WRONGTYPE);
        return RM_ERR;
    }
    *filter = RM_ModuleTypeGetValue(*key);
    return RM_OK;
}

/* Adds one item, or replies the error that stops the command (full
 * NONSCALING filter, memory limit) and returns a negative value. */
static int add_item(RedisModuleCtx *ctx, sk_bloom *f, RedisModuleString *item)
{
    size_t len;
    const char *data = RM_StringPtrLen(item, &len);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    /* RedisBloom refuses new items past the capacity of a fixed filter. */
    if (info.expansion == 0 && info.count >= info.capacity && !sk_bloom_contains(f, data, len)) {
        RM_ReplyWithError(ctx, "ERR non scaling filter is full");
        return -1;
    }
    int rc = sk_bloom_add(f, data, len);
    if (rc == SK_EBUDGET && key_limit(ctx) == 0) {
        /* Replayed: the limit is not for the server's own history. Asked only
         * here, since the context's flags cost more than an add. */
        sk_bloom_set_max_memory(f, 0);
        rc = sk_bloom_add(f, data, len);
        sk_bloom_set_max_memory(f, module_config.max_key_memory);
    }
    if (rc >= 0)
        return rc;
    sk_bloom_layer next;
    if (rc == SK_EBUDGET && sk_bloom_get_layer(f, info.layers, &next) == SK_OK)
        reply_too_large(ctx, info.memory + next.bytes);
    else if (rc == SK_EFULL)
        RM_ReplyWithError(ctx, "ERR the filter is full: its next layer would be past the "
                               "library's limits");
    else
        reply_status(ctx, rc);
    return rc;
}

/* ---- commands ----------------------------------------------------------- */

static int parse_rate_and_capacity(RedisModuleCtx *ctx, RedisModuleString *rate_arg,
                                   RedisModuleString *capacity_arg, struct bloom_params *p)
{
    if (RM_StringToDouble(rate_arg, &p->error_rate) != RM_OK ||
        !(p->error_rate > 0 && p->error_rate < 1)) {
        RM_ReplyWithError(ctx, "ERR bad error rate");
        return RM_ERR;
    }
    if (p->error_rate < SK_BLOOM_MIN_FP_RATE) {
        RM_ReplyWithError(ctx, "ERR bad error rate: below 1e-15");
        return RM_ERR;
    }
    if (RM_StringToLongLong(capacity_arg, &p->capacity) != RM_OK || p->capacity <= 0) {
        RM_ReplyWithError(ctx, "ERR bad capacity");
        return RM_ERR;
    }
    return RM_OK;
}

static int parse_expansion(RedisModuleCtx *ctx, RedisModuleString *arg, struct bloom_params *p)
{
    if (RM_StringToLongLong(arg, &p->expansion) != RM_OK || p->expansion < 1 ||
        p->expansion > SK_BLOOM_MAX_EXPANSION) {
        RM_ReplyWithError(ctx, "ERR bad expansion");
        return RM_ERR;
    }
    return RM_OK;
}

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] */
static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct bloom_params p = {DEFAULT_ERROR_RATE, DEFAULT_CAPACITY, DEFAULT_EXPANSION, 0};
    if (parse_rate_and_capacity(ctx, argv[2], argv[3], &p) != RM_OK)
        return RM_OK;
    int expansion_given = 0;
    for (int i = 4; i < argc; i++) {
        if (arg_is(argv[i], "NONSCALING")) {
            p.nonscaling = 1;
        } else if (arg_is(argv[i], "EXPANSION")) {
            if (++i == argc)
                return RM_ReplyWithError(ctx, "ERR no expansion");
            if (parse_expansion(ctx, argv[i], &p) != RM_OK)
                return RM_OK;
            expansion_given = 1;
        } else {
            return RM_ReplyWithError(ctx, "ERR unknown argument");
        }
    }
    if (p.nonscaling && expansion_given)
        return RM_ReplyWithError(ctx, "ERR nonscaling filters cannot expand");
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ | RM_WRITE, &key, &f) != RM_OK)
        return RM_OK;
    if (RM_KeyType(key) != RM_KEYTYPE_EMPTY) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR item exists");
    }
    f = create_filter(ctx, &p);
    if (f != NULL) {
        RM_ModuleTypeSetValue(key, bloom_type, f);
        RM_ReplicateVerbatim(ctx);
        RM_ReplyWithSimpleString(ctx, "OK");
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* Adds the items and replies an integer (single) or an array of them;
 * returns whether any item was new. */
static int add_items(RedisModuleCtx *ctx, sk_bloom *f, RedisModuleString **items, int count,
                     int single)
{
    int changed = 0;
    if (!single)
        RM_ReplyWithArray(ctx, count);
    for (int i = 0; i < count; i++) {
        int rc = add_item(ctx, f, items[i]);
        if (rc < 0) {
            /* The error took this item's place in the array; the items not
             * tried get the same answer. */
            for (int j = i + 1; !single && j < count; j++)
                RM_ReplyWithError(ctx, "ERR not added: an earlier item failed");
            break;
        }
        changed |= rc;
        RM_ReplyWithLongLong(ctx, rc);
    }
    return changed;
}

/* Opens key for writing, creating a filter with p if it is empty. */
static RedisModuleKey *open_or_create(RedisModuleCtx *ctx, RedisModuleString *name,
                                      const struct bloom_params *p, int nocreate,
                                      sk_bloom **f, int *created)
{
    RedisModuleKey *key;
    *created = 0;
    if (open_filter(ctx, name, RM_READ | RM_WRITE, &key, f) != RM_OK)
        return NULL;
    if (*f != NULL)
        return key;
    if (nocreate) {
        RM_CloseKey(key);
        RM_ReplyWithError(ctx, "ERR not found");
        return NULL;
    }
    *f = create_filter(ctx, p);
    if (*f == NULL) {
        RM_CloseKey(key);
        return NULL;
    }
    RM_ModuleTypeSetValue(key, bloom_type, *f);
    *created = 1;
    return key;
}

/* BF.ADD key item; BF.MADD key item [item ...] */
static int add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single)
{
    if (single ? argc != 3 : argc < 3)
        return RM_WrongArity(ctx);
    struct bloom_params p = {DEFAULT_ERROR_RATE, DEFAULT_CAPACITY, DEFAULT_EXPANSION, 0};
    sk_bloom *f;
    int created;
    RedisModuleKey *key = open_or_create(ctx, argv[1], &p, 0, &f, &created);
    if (key == NULL)
        return RM_OK;
    int changed = add_items(ctx, f, argv + 2, argc - 2, single);
    if (changed || created)
        RM_ReplicateVerbatim(ctx);
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
 *           ITEMS item [item ...] */
static int cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    struct bloom_params p = {DEFAULT_ERROR_RATE, DEFAULT_CAPACITY, DEFAULT_EXPANSION, 0};
    int nocreate = 0, items = -1;
    for (int i = 2; i < argc && items < 0; i++) {
        if (arg_is(argv[i], "ITEMS")) {
            items = i + 1;
        } else if (arg_is(argv[i], "NOCREATE")) {
            nocreate = 1;
        } else if (arg_is(argv[i], "NONSCALING")) {
            p.nonscaling = 1;
        } else if (i + 1 < argc && arg_is(argv[i], "CAPACITY")) {
            if (RM_StringToLongLong(argv[++i], &p.capacity) != RM_OK || p.capacity <= 0)
                return RM_ReplyWithError(ctx, "ERR bad capacity");
        } else if (i + 1 < argc && arg_is(argv[i], "ERROR")) {
            if (RM_StringToDouble(argv[++i], &p.error_rate) != RM_OK ||
                !(p.error_rate >= SK_BLOOM_MIN_FP_RATE && p.error_rate < 1))
                return RM_ReplyWithError(ctx, "ERR bad error rate");
        } else if (i + 1 < argc && arg_is(argv[i], "EXPANSION")) {
            if (parse_expansion(ctx, argv[++i], &p) != RM_OK)
                return RM_OK;
        } else {
            return RM_ReplyWithError(ctx, "ERR unknown argument");
        }
    }
    if (items < 0 || items >= argc)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    int created;
    RedisModuleKey *key = open_or_create(ctx, argv[1], &p, nocreate, &f, &created);
    if (key == NULL)
        return RM_OK;
    int changed = add_items(ctx, f, argv + items, argc - items, 0);
    if (changed || created)
        RM_ReplicateVerbatim(ctx);
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.EXISTS key item; BF.MEXISTS key item [item ...] */
static int exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int single)
{
    if (single ? argc != 3 : argc < 3)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ, &key, &f) != RM_OK)
        return RM_OK;
    if (!single)
        RM_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *data = RM_StringPtrLen(argv[i], &len);
        RM_ReplyWithLongLong(ctx, f != NULL && sk_bloom_contains(f, data, len));
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

/* BF.CARD key */
static int cmd_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ, &key, &f) != RM_OK)
        return RM_OK;
    sk_bloom_info info = {0};
    if (f != NULL)
        sk_bloom_get_info(f, &info);
    RM_ReplyWithLongLong(ctx, (long long)info.count);
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION] */
static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RM_WrongArity(ctx);
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ, &key, &f) != RM_OK)
        return RM_OK;
    if (f == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    }
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    static const char *const names[5] = {"Capacity", "Size", "Number of filters",
                                         "Number of items inserted", "Expansion rate"};
    static const char *const keywords[5] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS",
                                            "EXPANSION"};
    long long values[5] = {(long long)info.capacity,
                           (long long)info.memory,
                           (long long)info.layers, (long long)info.count,
                           (long long)info.expansion};
    int only = -1;
    if (argc == 3) {
        for (int i = 0; i < 5; i++)
            if (arg_is(argv[2], keywords[i]))
                only = i;
        if (only < 0) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, "ERR Invalid information value");
        }
    }
    RM_ReplyWithArray(ctx, only < 0 ? 10 : 1);
    for (int i = 0; i < 5; i++) {
        if (only >= 0 && i != only)
            continue;
        if (only < 0)
            RM_ReplyWithSimpleString(ctx, names[i]);
        if (i == 4 && info.expansion == 0)
            RM_ReplyWithNull(ctx);
        else
            RM_ReplyWithLongLong(ctx, values[i]);
    }
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.SCANDUMP key iterator */
static int cmd_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    long long iterator;
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK || iterator < 0)
        return RM_ReplyWithError(ctx, "ERR invalid iterator");
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ, &key, &f) != RM_OK)
        return RM_OK;
    if (f == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    }
    uint64_t size = sk_bloom_dump_size(f);
    uint64_t start = iterator == 0 ? 0 : (uint64_t)iterator - 1;
    uint64_t len = iterator == 0 ? sk_bloom_dump_header_size(f)
                                 : (size > start ? size - start : 0);
    if (len > SCANDUMP_PIECE)
        len = SCANDUMP_PIECE;
    char *buf = len == 0 ? NULL : RM_TryAlloc(len);
    if (len > 0 && (buf == NULL || sk_bloom_dump_read(f, start, buf, len) != SK_OK)) {
        RM_Free(buf);
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR out of memory reading the filter");
    }
    RM_ReplyWithArray(ctx, 2);
    RM_ReplyWithLongLong(ctx, len == 0 ? 0 : (long long)(start + len + 1));
    RM_ReplyWithStringBuffer(ctx, len == 0 ? "" : buf, len);
    if (buf != NULL)
        RM_Free(buf);
    RM_CloseKey(key);
    return RM_OK;
}

/* BF.LOADCHUNK key iterator data */
static int cmd_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    long long iterator;
    size_t len;
    const char *data = RM_StringPtrLen(argv[3], &len);
    if (RM_StringToLongLong(argv[2], &iterator) != RM_OK || iterator <= 0 ||
        (uint64_t)iterator - 1 < len)
        return RM_ReplyWithError(ctx, "ERR invalid iterator");
    uint64_t start = (uint64_t)iterator - 1 - len;
    sk_bloom *f;
    RedisModuleKey *key;
    if (open_filter(ctx, argv[1], RM_READ | RM_WRITE, &key, &f) != RM_OK)
        return RM_OK;
    int rc;
    if (start == 0) {
        /* The header: a new, empty filter of its shape, on an empty key only,
         * so that no chunk can drop a filter that holds items. */
        if (f != NULL) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, "ERR item exists");
        }
        sk_bloom *restored;
        size_t header_len;
        uint64_t limit = key_limit(ctx);
        rc = sk_bloom_restore_begin(&restored, data, len, &header_len, &module_allocator, limit);
        if (rc == SK_EBUDGET) {
            RM_CloseKey(key);
            char message[160];
            snprintf(message, sizeof message,
                     "ERR the filter would take more than the module's MAX-KEY-MEMORY of %llu "
                     "bytes", (unsigned long long)limit);
            return RM_ReplyWithError(ctx, message);
        }
        if (rc == SK_OK && header_len != len) {
            sk_bloom_free(restored);
            rc = SK_ECORRUPT;
        }
        if (rc == SK_OK) {
            sk_bloom_set_max_memory(restored, module_config.max_key_memory);
            RM_ModuleTypeSetValue(key, bloom_type, restored);
        }
    } else if (f == NULL) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR not found");
    } else {
        rc = sk_bloom_restore_chunk(f, start, data, len);
        if (rc == SK_EINCOMPAT) {
            RM_CloseKey(key);
            return RM_ReplyWithError(ctx, "ERR the filter is complete: a restore starts with "
                                          "its header on an empty key");
        }
        if (rc == SK_OK && start + len == sk_bloom_dump_size(f) &&
            sk_bloom_restore_finish(f) != SK_OK) {
            /* Replicated as it came, so that replicas and the AOF, which
             * had every earlier chunk, drop the filter too. */
            RM_DeleteKey(key);
            RM_CloseKey(key);
            RM_ReplicateVerbatim(ctx);
            return RM_ReplyWithError(ctx, "ERR received bad data: checksum mismatch");
        }
    }
    if (rc != SK_OK) {
        RM_CloseKey(key);
        return RM_ReplyWithError(ctx, "ERR received bad data");
    }
    RM_ReplicateVerbatim(ctx);
    RM_CloseKey(key);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ---- the data type ------------------------------------------------------- */

/* Calls fn for the dump of f in order: the header in one piece, then the
 * arrays in pieces of at most SAVE_PIECE, each read into one buffer on the
 * stack, so that saving a filter takes no memory (a header larger than the
 * buffer, of more than a thousand layers, takes its own); -1 if that memory
 * could not be had. `end` is the dump offset where the piece ends. */
typedef void (*piece_fn)(void *arg, const char *bytes, size_t len, uint64_t end);

static int walk_dump(const sk_bloom *f, piece_fn fn, void *arg)
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
    uint64_t size = sk_bloom_dump_size(f);
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
    if (walk_dump(value, save_piece, &w) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory saving the header of a Bloom "
                                     "filter of more than a thousand layers");
}

static void *bloom_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != 0)
        return NULL;
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
    if (rc == SK_OK)
        rc = sk_bloom_restore_finish(f);
    if (rc != SK_OK) {
        RM_LogIOError(io, "warning", "sketch: bad Bloom filter data: %s", sk_strerror(rc));
        sk_bloom_free(f);
        return NULL;
    }
    /* A loaded filter keeps what it holds, even past the limit, and grows
     * within it like any other (docs/limits.md). */
    sk_bloom_set_max_memory(f, module_config.max_key_memory);
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
    if (walk_dump(value, emit_piece, &w) != 0)
        RM_LogIOError(io, "warning", "sketch: out of memory rewriting a Bloom filter");
}

static void digest_piece(void *arg, const char *bytes, size_t len, uint64_t end)
{
    (void)end;
    RM_DigestAddStringBuffer(arg, bytes, len);
}

/* DEBUG DIGEST-VALUE: the dump, so that two servers agree exactly when
 * their filters are the same. */
static void bloom_digest(RedisModuleDigest *md, void *value)
{
    walk_dump(value, digest_piece, md);
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

int bloom_register(RedisModuleCtx *ctx)
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
    bloom_type = RM_CreateDataType(ctx, "sketch-bf", 0, &methods);
    if (bloom_type == NULL)
        return RM_ERR;
    static const struct {
        const char *name;
        RedisModuleCmdFunc fn;
        const char *flags;
    } commands[] = {
        {"BF.RESERVE", cmd_reserve, "write deny-oom"},
        {"BF.ADD", cmd_add, "write deny-oom"},
        {"BF.MADD", cmd_madd, "write deny-oom"},
        {"BF.INSERT", cmd_insert, "write deny-oom"},
        {"BF.EXISTS", cmd_exists, "readonly fast"},
        {"BF.MEXISTS", cmd_mexists, "readonly fast"},
        {"BF.CARD", cmd_card, "readonly fast"},
        {"BF.INFO", cmd_info, "readonly fast"},
        {"BF.SCANDUMP", cmd_scandump, "readonly"},
        {"BF.LOADCHUNK", cmd_loadchunk, "write deny-oom"},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (RM_CreateCommand(ctx, commands[i].name, commands[i].fn, commands[i].flags, 1, 1,
                             1) != RM_OK)
            return RM_ERR;
    return RM_OK;
}
