/* SPDX-License-Identifier: BSD-3-Clause */
/* module_harness.c: see module_harness.h. */
#include "module_harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "module.h"
#include "module_harness_io.h"

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

typedef int (*get_api_fn)(const char *name, void *out);

struct RedisModuleCtx {
    get_api_fn get_api; /* first, as the module expects */
    int replied_error;
};

struct RedisModuleString {
    size_t len;
    char *ptr;
};

struct RedisModuleType {
    RedisModuleTypeMethods methods;
    int encver;
};

enum { KIND_EMPTY = RM_KEYTYPE_EMPTY, KIND_STRING = RM_KEYTYPE_STRING,
       KIND_MODULE = RM_KEYTYPE_MODULE };

struct entry {
    char *name;
    size_t namelen;
    int kind;
    RedisModuleType *type;
    void *value;
    char *str;
    size_t strlen;
};

struct RedisModuleKey {
    struct entry *e;
};

static struct entry **entries;
static size_t entry_count, entry_cap;
static int open_keys;

struct command {
    char name[32];
    RedisModuleCmdFunc fn;
};
static struct command commands[96];
static int command_count;
static RedisModuleType *types[HARNESS_TYPES];
static int type_count;

/* ---- keyspace ---------------------------------------------------------- */

static struct entry *find(const char *name, size_t len)
{
    for (size_t i = 0; i < entry_count; i++)
        if (entries[i]->namelen == len && memcmp(entries[i]->name, name, len) == 0)
            return entries[i];
    return NULL;
}

static struct entry *create(const char *name, size_t len)
{
    if (entry_count == entry_cap) {
        entry_cap = entry_cap ? entry_cap * 2 : 8;
        entries = realloc(entries, entry_cap * sizeof *entries);
        if (entries == NULL)
            harness_fail("out of memory");
    }
    struct entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        harness_fail("out of memory");
    e->name = harness_xmalloc(len);
    memcpy(e->name, name, len);
    e->namelen = len;
    entries[entry_count++] = e;
    return e;
}

static void clear_value(struct entry *e)
{
    if (e->kind == KIND_MODULE)
        e->type->methods.free(e->value);
    free(e->str);
    e->kind = KIND_EMPTY;
    e->type = NULL;
    e->value = NULL;
    e->str = NULL;
    e->strlen = 0;
}

static void remove_if_empty(struct entry *e)
{
    if (e->kind != KIND_EMPTY)
        return;
    for (size_t i = 0; i < entry_count; i++)
        if (entries[i] == e) {
            entries[i] = entries[--entry_count];
            free(e->name);
            free(e);
            return;
        }
}

void harness_flush(void)
{
    while (entry_count > 0) {
        struct entry *e = entries[entry_count - 1];
        clear_value(e);
        remove_if_empty(e);
    }
}

void harness_delete(const char *key, size_t keylen)
{
    struct entry *e = find(key, keylen);
    if (e != NULL) {
        clear_value(e);
        remove_if_empty(e);
    }
}

void harness_set_string(const char *key, size_t keylen, const void *value, size_t len)
{
    struct entry *e = find(key, keylen);
    if (e == NULL)
        e = create(key, keylen);
    clear_value(e);
    e->kind = KIND_STRING;
    e->str = harness_xmalloc(len);
    memcpy(e->str, value, len);
    e->strlen = len;
}

void *harness_value(int which, const char *key)
{
    struct entry *e = find(key, strlen(key));
    return e != NULL && e->kind == KIND_MODULE && e->type == types[which] ? e->value : NULL;
}

/* ---- the API ------------------------------------------------------------- */

static void h_SetModuleAttribs(RedisModuleCtx *ctx, const char *name, int ver, int apiver)
{
    (void)ctx, (void)name, (void)ver, (void)apiver;
}

static void h_SetModuleOptions(RedisModuleCtx *ctx, int options)
{
    (void)ctx, (void)options;
}

static int h_CreateCommand(RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc func,
                           const char *flags, int firstkey, int lastkey, int keystep)
{
    (void)ctx, (void)flags, (void)firstkey, (void)lastkey, (void)keystep;
    if (command_count == (int)(sizeof commands / sizeof commands[0]) ||
        strlen(name) >= sizeof commands[0].name)
        return RM_ERR;
    strcpy(commands[command_count].name, name);
    commands[command_count++].fn = func;
    return RM_OK;
}

/* The types by name, in the order of module_harness.h's indices. */
static const char *const type_names[HARNESS_TYPES] = {
    "sketch-bf", "sketch-hl", "sketch-cm", "sketch-tk", "sketch-cf", "sketch-td",
    "MBbloom--", "CMSk-TYPE", "TopK-TYPE", "MBbloomCF", "TDIS-TYPE",
    "sketch-ab", "sketch-wh"};

static RedisModuleType *h_CreateDataType(RedisModuleCtx *ctx, const char *name, int encver,
                                         RedisModuleTypeMethods *methods)
{
    (void)ctx;
    int which = -1;
    for (int i = 0; i < HARNESS_TYPES; i++)
        if (strcmp(type_names[i], name) == 0)
            which = i;
    if (which < 0 || types[which] != NULL)
        harness_fail("bad data type registration");
    RedisModuleType *t = harness_xmalloc(sizeof *t);
    t->methods = *methods;
    t->encver = encver;
    types[which] = t;
    type_count++;
    return t;
}

static int h_ModuleTypeSetValue(RedisModuleKey *key, RedisModuleType *type, void *value)
{
    if (key == NULL)
        return RM_ERR;
    clear_value(key->e);
    key->e->kind = KIND_MODULE;
    key->e->type = type;
    key->e->value = value;
    return RM_OK;
}

static RedisModuleType *h_ModuleTypeGetType(RedisModuleKey *key)
{
    return key != NULL && key->e->kind == KIND_MODULE ? key->e->type : NULL;
}

static void *h_ModuleTypeGetValue(RedisModuleKey *key)
{
    return key != NULL && key->e->kind == KIND_MODULE ? key->e->value : NULL;
}

/* Like Redis 7.0: a missing key opened to read gives no handle. */
static void *h_OpenKey(RedisModuleCtx *ctx, RedisModuleString *name, int mode)
{
    (void)ctx;
    struct entry *e = find(name->ptr, name->len);
    if (e == NULL) {
        if (!(mode & RM_WRITE))
            return NULL;
        e = create(name->ptr, name->len);
    }
    RedisModuleKey *key = harness_xmalloc(sizeof *key);
    key->e = e;
    open_keys++;
    return key;
}

static void h_CloseKey(RedisModuleKey *key)
{
    if (key == NULL)
        return;
    remove_if_empty(key->e);
    free(key);
    open_keys--;
}

static int h_KeyType(RedisModuleKey *key)
{
    return key == NULL ? RM_KEYTYPE_EMPTY : key->e->kind;
}

static int h_DeleteKey(RedisModuleKey *key)
{
    if (key == NULL)
        return RM_ERR;
    clear_value(key->e);
    return RM_OK;
}

static char *h_StringDMA(RedisModuleKey *key, size_t *len, int mode)
{
    (void)mode;
    if (key == NULL || key->e->kind != KIND_STRING) {
        *len = 0;
        return NULL;
    }
    *len = key->e->strlen;
    return key->e->str;
}

static int h_StringSet(RedisModuleKey *key, RedisModuleString *str)
{
    if (key == NULL)
        return RM_ERR;
    harness_set_string(key->e->name, key->e->namelen, str->ptr, str->len);
    return RM_OK;
}

static void check_line(const char *s)
{
    if (strchr(s, '\r') != NULL || strchr(s, '\n') != NULL)
        harness_fail("a reply line holds a line break");
}

static int h_ReplyWithError(RedisModuleCtx *ctx, const char *err)
{
    check_line(err);
    ctx->replied_error = 1;
    return RM_OK;
}

static int h_ReplyWithLongLong(RedisModuleCtx *ctx, long long value)
{
    (void)ctx, (void)value;
    return RM_OK;
}

static int h_ReplyWithDouble(RedisModuleCtx *ctx, double value)
{
    (void)ctx, (void)value;
    return RM_OK;
}

static int h_ReplyWithArray(RedisModuleCtx *ctx, long len)
{
    (void)ctx, (void)len;
    return RM_OK;
}

static void h_ReplySetArrayLength(RedisModuleCtx *ctx, long len)
{
    (void)ctx, (void)len;
}

static int h_ReplyWithSimpleString(RedisModuleCtx *ctx, const char *msg)
{
    (void)ctx;
    check_line(msg);
    return RM_OK;
}

static volatile unsigned char reply_sink;

static int h_ReplyWithStringBuffer(RedisModuleCtx *ctx, const char *buf, size_t len)
{
    (void)ctx;
    unsigned char x = 0;
    for (size_t i = 0; i < len; i++) /* every byte must be readable */
        x ^= (unsigned char)buf[i];
    reply_sink = x;
    return RM_OK;
}

static int h_ReplyWithNull(RedisModuleCtx *ctx)
{
    (void)ctx;
    return RM_OK;
}

static int h_WrongArity(RedisModuleCtx *ctx)
{
    ctx->replied_error = 1;
    return RM_OK;
}

static const char *h_StringPtrLen(const RedisModuleString *str, size_t *len)
{
    if (len != NULL)
        *len = str->len;
    return str->ptr;
}

/* Redis's rules: the whole string, no spaces, in range. */
static int h_StringToLongLong(const RedisModuleString *str, long long *value)
{
    char buf[32];
    if (str->len == 0 || str->len >= sizeof buf)
        return RM_ERR;
    memcpy(buf, str->ptr, str->len);
    buf[str->len] = '\0';
    if (!(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
        return RM_ERR;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno != 0 || end != buf + str->len)
        return RM_ERR;
    *value = v;
    return RM_OK;
}

static int h_StringToDouble(const RedisModuleString *str, double *value)
{
    char buf[64];
    if (str->len == 0 || str->len >= sizeof buf || str->ptr[0] == ' ')
        return RM_ERR;
    memcpy(buf, str->ptr, str->len);
    buf[str->len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + str->len || v != v || (errno == ERANGE && v != 0))
        return RM_ERR;
    *value = v;
    return RM_OK;
}

static RedisModuleString *h_CreateString(RedisModuleCtx *ctx, const char *ptr, size_t len)
{
    (void)ctx;
    RedisModuleString *s = harness_xmalloc(sizeof *s);
    s->ptr = harness_xmalloc(len + 1);
    memcpy(s->ptr, ptr, len);
    s->ptr[len] = '\0';
    s->len = len;
    return s;
}

static void h_FreeString(RedisModuleCtx *ctx, RedisModuleString *str)
{
    (void)ctx;
    if (str != NULL) {
        free(str->ptr);
        free(str);
    }
}

static int h_ReplicateVerbatim(RedisModuleCtx *ctx)
{
    (void)ctx;
    return RM_OK;
}

static int h_Replicate(RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...)
{
    (void)ctx, (void)cmdname, (void)fmt;
    return RM_OK;
}

/* Keys of the harness have no time to live. */
static long long h_GetAbsExpire(RedisModuleKey *key)
{
    (void)key;
    return RM_NO_EXPIRE;
}

static int h_SetAbsExpire(RedisModuleKey *key, long long expire)
{
    (void)key, (void)expire;
    return RM_OK;
}

/* The AOF rewrite: the emitted command runs at once. */
static void h_EmitAOF(RedisModuleIO *rio, const char *cmd, const char *fmt, ...)
{
    (void)rio;
    const char *argv[16];
    size_t lens[16];
    int argc = 0;
    argv[argc] = cmd;
    lens[argc++] = strlen(cmd);
    char numbers[16][24];
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f != '\0'; f++) {
        if (argc == 16)
            harness_fail("too many AOF arguments");
        if (*f == 's') {
            RedisModuleString *s = va_arg(ap, RedisModuleString *);
            argv[argc] = s->ptr;
            lens[argc++] = s->len;
        } else if (*f == 'c') {
            argv[argc] = va_arg(ap, const char *);
            lens[argc] = strlen(argv[argc]);
            argc++;
        } else if (*f == 'l') {
            long long v = va_arg(ap, long long);
            snprintf(numbers[argc], sizeof numbers[argc], "%lld", v);
            argv[argc] = numbers[argc];
            lens[argc] = strlen(argv[argc]);
            argc++;
        } else if (*f == 'b') {
            argv[argc] = va_arg(ap, const char *);
            lens[argc++] = va_arg(ap, size_t);
        } else {
            harness_fail("unknown EmitAOF format");
        }
    }
    va_end(ap);
    if (harness_command(argc, argv, lens) != 0)
        harness_fail("a command of the AOF rewrite failed");
}

static void h_Free(void *ptr)
{
    free(ptr);
}

static void *h_TryAlloc(size_t bytes)
{
    return malloc(bytes);
}

/* A client's command on a primary that is not loading: every limit applies. */
static int h_GetContextFlags(RedisModuleCtx *ctx)
{
    (void)ctx;
    return 0;
}

/* A load or save is of no key in particular here. */
static const RedisModuleString *h_GetKeyNameFromIO(RedisModuleIO *io)
{
    (void)io;
    return NULL;
}

static RedisModuleCtx *h_GetContextFromIO(RedisModuleIO *io)
{
    (void)io;
    return NULL;
}

static int h_ReplyWithBool(RedisModuleCtx *ctx, int b)
{
    (void)ctx, (void)b;
    return RM_OK;
}

static int h_ReplyWithMap(RedisModuleCtx *ctx, long len)
{
    (void)ctx, (void)len;
    return RM_OK;
}

static int h_NotifyKeyspaceEvent(RedisModuleCtx *ctx, int type, const char *event,
                                 RedisModuleString *key)
{
    (void)ctx, (void)type, (void)event, (void)key;
    return RM_OK;
}

static RedisModuleString *h_CreateStringPrintf(RedisModuleCtx *ctx, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return h_CreateString(ctx, buf, n < 0 ? 0 : n >= (int)sizeof buf ? sizeof buf - 1 : (size_t)n);
}

/* Configs keep the values of the load arguments: nothing sets them. */
static int h_RegisterNumericConfig(RedisModuleCtx *ctx, const char *name, long long default_val,
                                   unsigned int flags, long long min, long long max,
                                   RedisModuleConfigGetNumericFunc getfn,
                                   RedisModuleConfigSetNumericFunc setfn,
                                   RedisModuleConfigApplyFunc applyfn, void *privdata)
{
    (void)ctx, (void)name, (void)default_val, (void)flags, (void)min, (void)max, (void)getfn,
        (void)setfn, (void)applyfn, (void)privdata;
    return RM_OK;
}

static int h_RegisterStringConfig(RedisModuleCtx *ctx, const char *name, const char *default_val,
                                  unsigned int flags, RedisModuleConfigGetStringFunc getfn,
                                  RedisModuleConfigSetStringFunc setfn,
                                  RedisModuleConfigApplyFunc applyfn, void *privdata)
{
    (void)ctx, (void)name, (void)default_val, (void)flags, (void)getfn, (void)setfn,
        (void)applyfn, (void)privdata;
    return RM_OK;
}

static int h_LoadConfigs(RedisModuleCtx *ctx)
{
    (void)ctx;
    return RM_OK;
}

/* Any non-NULL handle: SetCommandInfo only reads the tables. */
static RedisModuleCommand *h_GetCommand(RedisModuleCtx *ctx, const char *name)
{
    (void)ctx;
    return (RedisModuleCommand *)(uintptr_t)name;
}

/* Walks every argument table, so that a malformed one shows up under the
 * sanitizers. */
static size_t count_args(const RedisModuleCommandArg *args)
{
    size_t n = 0;
    for (; args != NULL && args->name != NULL; args++)
        n += 1 + count_args(args->subargs);
    return n;
}

static int h_SetCommandInfo(RedisModuleCommand *command, const RedisModuleCommandInfo *info)
{
    (void)command;
    if (info->version == NULL || info->summary == NULL || count_args(info->args) == 0 ||
        info->key_specs == NULL || info->key_specs[0].begin_search_type == RM_BS_INVALID)
        harness_fail("a command's description is incomplete");
    return RM_OK;
}

/* The harness never asks a command for its keys' positions. */
static int h_IsKeysPositionRequest(RedisModuleCtx *ctx)
{
    (void)ctx;
    return 0;
}

static void h_KeyAtPos(RedisModuleCtx *ctx, int pos)
{
    (void)ctx;
    (void)pos;
    harness_fail("KeyAtPos outside a keys-position request");
}

/* The server's clock, fixed so that a replayed input runs the same: the
 * time-window commands see one moment unless they are given times. */
static long long h_Milliseconds(void)
{
    return 1700000000000LL;
}

/* GetApi: the module binds every function by its name. */
typedef void (*any_fn)(void);
static const struct {
    const char *name;
    any_fn fn;
} api_table[] = {
#define API_ENTRY(ret, name, params) {"RedisModule_" #name, (any_fn)h_##name},
    RM_API_FUNCTIONS(API_ENTRY)
#undef API_ENTRY
};

static int get_api(const char *name, void *out)
{
    for (size_t i = 0; i < sizeof api_table / sizeof api_table[0]; i++)
        if (strcmp(api_table[i].name, name) == 0) {
            memcpy(out, &api_table[i].fn, sizeof api_table[i].fn);
            return RM_OK;
        }
    return RM_ERR;
}

/* ---- driving the module ------------------------------------------------ */

void harness_init(void)
{
    if (type_count == HARNESS_TYPES)
        return;
    RedisModuleCtx ctx = {get_api, 0};
    RedisModuleString *args[2] = {h_CreateString(NULL, "MAX-KEY-MEMORY", 14),
                                  h_CreateString(NULL, "16mb", 4)};
    if (RedisModule_OnLoad(&ctx, args, 2) != RM_OK || type_count != HARNESS_TYPES)
        harness_fail("the module did not load");
    h_FreeString(NULL, args[0]);
    h_FreeString(NULL, args[1]);
}

int harness_command(int argc, const char *const *argv, const size_t *lens)
{
    harness_init();
    RedisModuleCmdFunc fn = NULL;
    for (int i = 0; i < command_count; i++)
        if (strlen(commands[i].name) == lens[0] &&
            strncasecmp(commands[i].name, argv[0], lens[0]) == 0)
            fn = commands[i].fn;
    if (fn == NULL)
        return -1;
    RedisModuleString **strs = harness_xmalloc((size_t)argc * sizeof *strs);
    for (int i = 0; i < argc; i++)
        strs[i] = h_CreateString(NULL, argv[i], lens[i]);
    RedisModuleCtx ctx = {get_api, 0};
    int before = open_keys;
    fn(&ctx, strs, argc);
    if (open_keys != before)
        harness_fail("a command left a key open");
    for (int i = 0; i < argc; i++)
        h_FreeString(NULL, strs[i]);
    free(strs);
    return ctx.replied_error;
}

const RedisModuleTypeMethods *harness_type(int which)
{
    harness_init();
    return &types[which]->methods;
}

int harness_encver(int which)
{
    harness_init();
    return types[which]->encver;
}

void harness_aof_rewrite(int which, const char *key, void *value)
{
    harness_init();
    harness_delete(key, strlen(key)); /* the rewrite writes a fresh key */
    RedisModuleString *name = h_CreateString(NULL, key, strlen(key));
    struct harness_io *io = harness_io_writer();
    types[which]->methods.aof_rewrite(HARNESS_IO(io), name, value);
    harness_io_free(io);
    h_FreeString(NULL, name);
}
