/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rm_api.h: the part of the Redis module API that sketch.so uses, declared
 * here because Debian ships redis-server without its module header.
 *
 * The server hands OnLoad a context whose first field points to a function
 * GetApi(name, &fnptr); every API function is looked up by its name,
 * "RedisModule_" followed by the name used here, and called with the plain C
 * calling convention. rm_bind looks up every one of them and fails if any is
 * missing, so that a server lacking one refuses the module at load time
 * instead of crashing when a command first calls it. Names are prefixed
 * RM_ in C to keep them apart from any real redismodule.h.
 *
 * Handles stay incomplete types: the module never looks inside them. The one
 * structure whose layout must match the server's is the table of type
 * methods, defined below field by field (version 3: up to defrag).
 */
#ifndef SKETCH_RM_API_H
#define SKETCH_RM_API_H

#include <stddef.h>
#include <stdint.h>

#define RM_OK 0
#define RM_ERR 1
#define RM_READ 1
#define RM_WRITE 2
#define RM_KEYTYPE_EMPTY 0
#define RM_KEYTYPE_STRING 1
#define RM_KEYTYPE_MODULE 6
#define RM_POSTPONED_ARRAY_LEN -1
/* GetAbsExpire of a key without a time to live. */
#define RM_NO_EXPIRE -1
#define RM_TYPE_METHOD_VERSION 3
/* SetModuleOptions: loads report errors through IsIOError instead of
 * stopping the server, so a corrupt RESTORE payload is refused. */
#define RM_OPTIONS_HANDLE_IO_ERRORS 1
/* GetContextFlags: the server is a replica; the command came over the
 * replication link; the server is loading an RDB or replaying the AOF; the
 * client speaks RESP3. */
#define RM_CTX_FLAGS_SLAVE (1 << 3)
#define RM_CTX_FLAGS_REPLICATED (1 << 12)
#define RM_CTX_FLAGS_LOADING (1 << 13)
#define RM_CTX_FLAGS_RESP3 (1 << 22)
/* NotifyKeyspaceEvent: the class of events that commands of module types
 * emit, enabled by "g" (generic) in notify-keyspace-events. */
#define RM_NOTIFY_GENERIC (1 << 2)
/* Register*Config flags: the value may be written as a memory size
 * ("512mb"). */
#define RM_CONFIG_DEFAULT 0
#define RM_CONFIG_MEMORY (1u << 7)

#define RM_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;

typedef struct RedisModuleCommand RedisModuleCommand;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef long long (*RedisModuleConfigGetNumericFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetNumericFunc)(const char *name, long long val, void *privdata,
                                               RedisModuleString **err);
typedef RedisModuleString *(*RedisModuleConfigGetStringFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetStringFunc)(const char *name, RedisModuleString *val,
                                              void *privdata, RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx, void *privdata,
                                          RedisModuleString **err);

/* SetCommandInfo's tables (COMMAND DOCS, key specs for ACL and cluster).
 * The version record tells the server the size of each element, so a
 * server that knows fewer fields steps over the arrays correctly. */
enum rm_arg_type {
    RM_ARG_STRING,
    RM_ARG_INTEGER,
    RM_ARG_DOUBLE,
    RM_ARG_KEY,
    RM_ARG_PATTERN,
    RM_ARG_UNIX_TIME,
    RM_ARG_PURE_TOKEN,
    RM_ARG_ONEOF,
    RM_ARG_BLOCK
};
#define RM_ARG_OPTIONAL (1 << 0)
#define RM_ARG_MULTIPLE (1 << 1)

enum rm_begin_search { RM_BS_INVALID, RM_BS_UNKNOWN, RM_BS_INDEX, RM_BS_KEYWORD };
enum rm_find_keys { RM_FK_OMITTED, RM_FK_UNKNOWN, RM_FK_RANGE, RM_FK_KEYNUM };

#define RM_KEY_RO (1ULL << 0)
#define RM_KEY_RW (1ULL << 1)
#define RM_KEY_OW (1ULL << 2)
#define RM_KEY_ACCESS (1ULL << 4)
#define RM_KEY_UPDATE (1ULL << 5)
#define RM_KEY_INSERT (1ULL << 6)

typedef struct RedisModuleCommandArg {
    const char *name;
    enum rm_arg_type type;
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags;
    const char *deprecated_since;
    struct RedisModuleCommandArg *subargs;
    const char *display_text;
} RedisModuleCommandArg;

typedef struct {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;

typedef struct {
    const char *notes;
    uint64_t flags;
    enum rm_begin_search begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    enum rm_find_keys find_keys_type;
    union {
        struct {
            int lastkey;
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx;
            int firstkey;
            int keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;

typedef struct {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;

typedef struct {
    const RedisModuleCommandInfoVersion *version;
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history;
    const char *tips;
    int arity;
    RedisModuleCommandKeySpec *key_specs;
    RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

typedef struct RedisModuleTypeMethods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key, void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
    int (*aux_load)(RedisModuleIO *rdb, int encver, int when);
    void (*aux_save)(RedisModuleIO *rdb, int when);
    int aux_save_triggers;
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value);
    int (*defrag)(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
} RedisModuleTypeMethods;

/* X(return type, name, parameters): every function the module binds. */
#define RM_API_FUNCTIONS(X)                                                                 \
    X(void, SetModuleAttribs, (RedisModuleCtx * ctx, const char *name, int ver, int apiver)) \
    X(void, SetModuleOptions, (RedisModuleCtx * ctx, int options))                         \
    X(int, CreateCommand,                                                                   \
      (RedisModuleCtx * ctx, const char *name, RedisModuleCmdFunc func, const char *flags,  \
       int firstkey, int lastkey, int keystep))                                             \
    X(RedisModuleType *, CreateDataType,                                                    \
      (RedisModuleCtx * ctx, const char *name, int encver, RedisModuleTypeMethods *methods)) \
    X(int, ModuleTypeSetValue, (RedisModuleKey * key, RedisModuleType *type, void *value))   \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey * key))                         \
    X(void *, ModuleTypeGetValue, (RedisModuleKey * key))                                   \
    X(void *, OpenKey, (RedisModuleCtx * ctx, RedisModuleString *name, int mode))           \
    X(void, CloseKey, (RedisModuleKey * key))                                               \
    X(int, KeyType, (RedisModuleKey * key))                                                 \
    X(int, DeleteKey, (RedisModuleKey * key))                                               \
    X(char *, StringDMA, (RedisModuleKey * key, size_t *len, int mode))                     \
    X(int, StringSet, (RedisModuleKey * key, RedisModuleString *str))                       \
    X(int, ReplyWithError, (RedisModuleCtx * ctx, const char *err))                         \
    X(int, ReplyWithLongLong, (RedisModuleCtx * ctx, long long value))                      \
    X(int, ReplyWithDouble, (RedisModuleCtx * ctx, double value))                           \
    X(int, ReplyWithArray, (RedisModuleCtx * ctx, long len))                                \
    X(void, ReplySetArrayLength, (RedisModuleCtx * ctx, long len))                          \
    X(int, ReplyWithSimpleString, (RedisModuleCtx * ctx, const char *msg))                  \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx * ctx, const char *buf, size_t len))     \
    X(int, ReplyWithNull, (RedisModuleCtx * ctx))                                           \
    X(int, WrongArity, (RedisModuleCtx * ctx))                                              \
    X(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len))              \
    X(int, StringToLongLong, (const RedisModuleString *str, long long *value))              \
    X(int, StringToDouble, (const RedisModuleString *str, double *value))                   \
    X(RedisModuleString *, CreateString, (RedisModuleCtx * ctx, const char *ptr, size_t len)) \
    X(void, FreeString, (RedisModuleCtx * ctx, RedisModuleString *str))                     \
    X(int, ReplicateVerbatim, (RedisModuleCtx * ctx))                                       \
    X(int, Replicate, (RedisModuleCtx * ctx, const char *cmdname, const char *fmt, ...))    \
    X(long long, GetAbsExpire, (RedisModuleKey * key))                                      \
    X(int, SetAbsExpire, (RedisModuleKey * key, long long expire))                          \
    X(void, DigestAddLongLong, (RedisModuleDigest * md, long long ll))                      \
    X(void, SaveUnsigned, (RedisModuleIO * io, uint64_t value))                             \
    X(uint64_t, LoadUnsigned, (RedisModuleIO * io))                                         \
    X(void, SaveStringBuffer, (RedisModuleIO * io, const char *str, size_t len))            \
    X(char *, LoadStringBuffer, (RedisModuleIO * io, size_t *len))                          \
    X(void, SaveSigned, (RedisModuleIO * io, int64_t value))                                \
    X(int64_t, LoadSigned, (RedisModuleIO * io))                                            \
    X(void, SaveDouble, (RedisModuleIO * io, double value))                                 \
    X(double, LoadDouble, (RedisModuleIO * io))                                             \
    X(const RedisModuleString *, GetKeyNameFromIO, (RedisModuleIO * io))                    \
    X(int, IsIOError, (RedisModuleIO * io))                                                 \
    X(void, EmitAOF, (RedisModuleIO * io, const char *cmd, const char *fmt, ...))           \
    X(void, LogIOError, (RedisModuleIO * io, const char *level, const char *fmt, ...))      \
    X(void, Log, (RedisModuleCtx * ctx, const char *level, const char *fmt, ...))           \
    X(void *, TryAlloc, (size_t bytes))                                                    \
    X(void, Free, (void *ptr))                                                              \
    X(int, GetContextFlags, (RedisModuleCtx * ctx))                                         \
    X(RedisModuleCtx *, GetContextFromIO, (RedisModuleIO * io))                             \
    X(void, DigestAddStringBuffer, (RedisModuleDigest * md, const char *ele, size_t len))   \
    X(void, DigestEndSequence, (RedisModuleDigest * md))                                   \
    X(int, ReplyWithBool, (RedisModuleCtx * ctx, int b))                                    \
    X(int, ReplyWithMap, (RedisModuleCtx * ctx, long len))                                  \
    X(int, NotifyKeyspaceEvent,                                                             \
      (RedisModuleCtx * ctx, int type, const char *event, RedisModuleString *key))          \
    X(RedisModuleString *, CreateStringPrintf, (RedisModuleCtx * ctx, const char *fmt, ...)) \
    X(int, RegisterNumericConfig,                                                           \
      (RedisModuleCtx * ctx, const char *name, long long default_val, unsigned int flags,   \
       long long min, long long max, RedisModuleConfigGetNumericFunc getfn,                 \
       RedisModuleConfigSetNumericFunc setfn, RedisModuleConfigApplyFunc applyfn,           \
       void *privdata))                                                                     \
    X(int, RegisterStringConfig,                                                            \
      (RedisModuleCtx * ctx, const char *name, const char *default_val, unsigned int flags, \
       RedisModuleConfigGetStringFunc getfn, RedisModuleConfigSetStringFunc setfn,          \
       RedisModuleConfigApplyFunc applyfn, void *privdata))                                 \
    X(int, LoadConfigs, (RedisModuleCtx * ctx))                                             \
    X(RedisModuleCommand *, GetCommand, (RedisModuleCtx * ctx, const char *name))           \
    X(int, SetCommandInfo, (RedisModuleCommand * command, const RedisModuleCommandInfo *info)) \
    X(int, IsKeysPositionRequest, (RedisModuleCtx * ctx))                                   \
    X(void, KeyAtPos, (RedisModuleCtx * ctx, int pos))                                     \
    X(long long, Milliseconds, (void))

/* Functions of newer servers (Redis 7.2+, Valkey 7.2+): bound when the server
 * has them, NULL otherwise. */
#define RM_API_OPTIONAL(X)                                                                  \
    X(int, AddACLCategory, (RedisModuleCtx * ctx, const char *name))                        \
    X(int, SetCommandACLCategories, (RedisModuleCommand * command, const char *categories))

#define RM_DECLARE(ret, name, params) extern ret(*RM_##name) params;
RM_API_FUNCTIONS(RM_DECLARE)
RM_API_OPTIONAL(RM_DECLARE)
#undef RM_DECLARE

/* Looks up every function; RM_ERR if the server lacks one of
 * RM_API_FUNCTIONS. */
int rm_bind(RedisModuleCtx *ctx);

#endif
