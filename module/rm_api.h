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
#define RM_TYPE_METHOD_VERSION 3
/* SetModuleOptions: loads report errors through IsIOError instead of
 * stopping the server, so a corrupt RESTORE payload is refused. */
#define RM_OPTIONS_HANDLE_IO_ERRORS 1
/* GetContextFlags: the server is a replica; the command came over the
 * replication link; the server is loading an RDB or replaying the AOF. */
#define RM_CTX_FLAGS_SLAVE (1 << 3)
#define RM_CTX_FLAGS_REPLICATED (1 << 12)
#define RM_CTX_FLAGS_LOADING (1 << 13)

#define RM_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

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
    X(void, SaveUnsigned, (RedisModuleIO * io, uint64_t value))                             \
    X(uint64_t, LoadUnsigned, (RedisModuleIO * io))                                         \
    X(void, SaveStringBuffer, (RedisModuleIO * io, const char *str, size_t len))            \
    X(char *, LoadStringBuffer, (RedisModuleIO * io, size_t *len))                          \
    X(int, IsIOError, (RedisModuleIO * io))                                                 \
    X(void, EmitAOF, (RedisModuleIO * io, const char *cmd, const char *fmt, ...))           \
    X(void, LogIOError, (RedisModuleIO * io, const char *level, const char *fmt, ...))      \
    X(void, Log, (RedisModuleCtx * ctx, const char *level, const char *fmt, ...))           \
    X(void *, TryAlloc, (size_t bytes))                                                    \
    X(void, Free, (void *ptr))                                                              \
    X(int, GetContextFlags, (RedisModuleCtx * ctx))                                         \
    X(RedisModuleCtx *, GetContextFromIO, (RedisModuleIO * io))                             \
    X(void, DigestAddStringBuffer, (RedisModuleDigest * md, const char *ele, size_t len))   \
    X(void, DigestEndSequence, (RedisModuleDigest * md))

#define RM_DECLARE(ret, name, params) extern ret(*RM_##name) params;
RM_API_FUNCTIONS(RM_DECLARE)
#undef RM_DECLARE

/* Looks up every function; RM_ERR if the server lacks one. */
int rm_bind(RedisModuleCtx *ctx);

#endif
