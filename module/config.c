/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c: the module's settings: load arguments, then module configs that
 * CONFIG GET and CONFIG SET read and change at run time (see config.h).
 *
 * Load arguments come in pairs, names in any case; RedisBloom's names are
 * taken as well, so that a server configured for it starts unchanged:
 *
 *     MAX-KEY-MEMORY <size>                    max-key-memory
 *     ERROR_RATE <rate>     bf-error-rate      defaults of a filter that
 *     INITIAL_SIZE <n>      bf-initial-size    BF.ADD, BF.MADD or BF.INSERT
 *     EXPANSION <n>         bf-expansion-factor  create (0: non-scaling)
 *     CF_MAX_EXPANSIONS <n> cf-max-expansions  the sub-filters past which a
 *                                              Cuckoo filter takes no adds
 *     REDISBLOOM-TYPES <0|1>                   new keys in RedisBloom's types
 *
 * and the other cf- settings of later RedisBloom releases are accepted
 * with a warning, since sketch's Cuckoo filters take RedisBloom 2.6's fixed
 * defaults. The load arguments become the defaults of the configs
 * sketch.max-key-memory, sketch.bf-error-rate, sketch.bf-initial-size,
 * sketch.bf-expansion-factor, sketch.cf-max-expansions and
 * sketch.redisbloom-types, which a line of
 * the server's configuration file (or --sketch.bf-error-rate 0.02) then
 * overrides.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_ERROR_RATE 0.01
#define DEFAULT_INITIAL_SIZE 100
#define DEFAULT_EXPANSION 2
#define DEFAULT_CF_MAX_EXPANSIONS 32
#define MAX_INITIAL_SIZE (1LL << 30)
#define MAX_RATE_TEXT 64

struct module_config module_config = {
    .max_key_memory = 1LL << 30,
    .bf_error_rate = DEFAULT_ERROR_RATE,
    .bf_initial_size = DEFAULT_INITIAL_SIZE,
    .bf_expansion = DEFAULT_EXPANSION,
    .cf_max_expansions = DEFAULT_CF_MAX_EXPANSIONS,
};

/* The error rate as it was written, so that CONFIG GET answers "0.02" rather
 * than the nearest double's 17 digits. */
static char rate_text[MAX_RATE_TEXT] = "0.01";
static RedisModuleString *rate_string;

int config_rate_valid(double rate)
{
    return rate > 0 && rate < 1 && rate >= SK_BLOOM_MIN_FP_RATE;
}

/* Copies an argument into text as a C string; 0 if it is empty or does not
 * fit, which no valid value does. */
static int terminated(const char *s, size_t len, char *text, size_t size)
{
    if (len == 0 || len >= size)
        return 0;
    memcpy(text, s, len);
    text[len] = '\0';
    return 1;
}

/* Parses "123", "64mb", "1gb" into bytes; 0 on error. */
static long long parse_size(const char *s, size_t len)
{
    char text[32];
    if (!terminated(s, len, text, sizeof text))
        return 0;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || !isdigit((unsigned char)text[0]) || errno != 0)
        return 0;
    uint64_t unit = 1;
    if (strcasecmp(end, "kb") == 0)
        unit = UINT64_C(1) << 10;
    else if (strcasecmp(end, "mb") == 0)
        unit = UINT64_C(1) << 20;
    else if (strcasecmp(end, "gb") == 0)
        unit = UINT64_C(1) << 30;
    else if (*end != '\0')
        return 0;
    if (value > UINT64_MAX / unit || value * unit > (uint64_t)INT64_MAX)
        return 0;
    return (long long)(value * unit);
}

static int parse_long(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    char text[32];
    if (!terminated(s, len, text, sizeof text))
        return 0;
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || value < lo || value > hi)
        return 0;
    *out = value;
    return 1;
}

/* Takes the rate if value is one, keeping its text for CONFIG GET. It is
 * read as BF.RESERVE reads a rate, and as RedisBloom reads ERROR_RATE: by
 * the server's own RM_StringToDouble, which refuses surrounding spaces. */
static int set_rate(RedisModuleString *value)
{
    size_t len;
    const char *s = RM_StringPtrLen(value, &len);
    char text[MAX_RATE_TEXT];
    double rate;
    if (!terminated(s, len, text, sizeof text) || RM_StringToDouble(value, &rate) != RM_OK ||
        !config_rate_valid(rate))
        return 0;
    module_config.bf_error_rate = rate;
    memcpy(rate_text, text, len + 1);
    return 1;
}

static int name_is(const char *name, size_t len, const char *a, const char *b)
{
    return (len == strlen(a) && strncasecmp(name, a, len) == 0) ||
           (b != NULL && len == strlen(b) && strncasecmp(name, b, len) == 0);
}

int config_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc % 2 != 0) {
        RM_Log(ctx, "warning", "sketch: module arguments come in pairs: name value");
        return RM_ERR;
    }
    for (int i = 0; i < argc; i += 2) {
        size_t nlen, vlen;
        const char *name = RM_StringPtrLen(argv[i], &nlen);
        const char *value = RM_StringPtrLen(argv[i + 1], &vlen);
        int ok;
        if (name_is(name, nlen, "MAX-KEY-MEMORY", NULL)) {
            module_config.max_key_memory = parse_size(value, vlen);
            ok = module_config.max_key_memory != 0;
        } else if (name_is(name, nlen, "ERROR_RATE", "bf-error-rate")) {
            ok = set_rate(argv[i + 1]);
        } else if (name_is(name, nlen, "INITIAL_SIZE", "bf-initial-size")) {
            ok = parse_long(value, vlen, 1, MAX_INITIAL_SIZE, &module_config.bf_initial_size);
        } else if (name_is(name, nlen, "EXPANSION", "bf-expansion-factor")) {
            ok = parse_long(value, vlen, 0, SK_BLOOM_MAX_EXPANSION, &module_config.bf_expansion);
        } else if (name_is(name, nlen, "CF_MAX_EXPANSIONS", "cf-max-expansions")) {
            ok = parse_long(value, vlen, 1, LLONG_MAX, &module_config.cf_max_expansions);
        } else if (name_is(name, nlen, "REDISBLOOM-TYPES", NULL)) {
            ok = parse_long(value, vlen, 0, 1, &module_config.redisbloom_types);
        } else if (nlen > 3 && (strncasecmp(name, "CF_", 3) == 0 || strncasecmp(name, "cf-", 3) == 0)) {
            RM_Log(ctx, "warning", "sketch: %.*s ignored: Cuckoo filters take RedisBloom 2.6's "
                   "defaults", (int)nlen, name);
            ok = 1;
        } else {
            RM_Log(ctx, "warning", "sketch: unknown module argument %.*s", (int)nlen, name);
            return RM_ERR;
        }
        if (!ok) {
            RM_Log(ctx, "warning",
                   "sketch: bad value for %.*s (MAX-KEY-MEMORY takes a size such as 512mb, "
                   "ERROR_RATE a rate in [1e-15, 1), INITIAL_SIZE 1 to 2^30, EXPANSION 0 to %d, "
                   "CF_MAX_EXPANSIONS at least 1, REDISBLOOM-TYPES 0 or 1)",
                   (int)nlen, name, SK_BLOOM_MAX_EXPANSION);
            return RM_ERR;
        }
    }
    return RM_OK;
}

/* ---- module configs ----------------------------------------------------- */

/* privdata of a numeric config: its field of module_config. */
static long long get_numeric(const char *name, void *privdata)
{
    (void)name;
    return *(long long *)privdata;
}

/* The server has checked the bounds given at registration. */
static int set_numeric(const char *name, long long value, void *privdata, RedisModuleString **err)
{
    (void)name;
    (void)err;
    *(long long *)privdata = value;
    return RM_OK;
}

static RedisModuleString *get_rate(const char *name, void *privdata)
{
    (void)name;
    (void)privdata;
    if (rate_string != NULL)
        RM_FreeString(NULL, rate_string);
    rate_string = RM_CreateString(NULL, rate_text, strlen(rate_text));
    return rate_string;
}

static int set_rate_config(const char *name, RedisModuleString *value, void *privdata,
                           RedisModuleString **err)
{
    (void)privdata;
    if (set_rate(value))
        return RM_OK;
    *err = RM_CreateStringPrintf(NULL, "%s must be a rate in [1e-15, 1)", name);
    return RM_ERR;
}

int config_register(RedisModuleCtx *ctx)
{
    char rate_default[MAX_RATE_TEXT];
    memcpy(rate_default, rate_text, sizeof rate_default);
    if (RM_RegisterNumericConfig(ctx, "max-key-memory", module_config.max_key_memory,
                                 RM_CONFIG_MEMORY, 1, INT64_MAX, get_numeric, set_numeric, NULL,
                                 &module_config.max_key_memory) != RM_OK ||
        RM_RegisterStringConfig(ctx, "bf-error-rate", rate_default, RM_CONFIG_DEFAULT, get_rate,
                                set_rate_config, NULL, NULL) != RM_OK ||
        RM_RegisterNumericConfig(ctx, "bf-initial-size", module_config.bf_initial_size,
                                 RM_CONFIG_DEFAULT, 1, MAX_INITIAL_SIZE, get_numeric, set_numeric,
                                 NULL, &module_config.bf_initial_size) != RM_OK ||
        RM_RegisterNumericConfig(ctx, "bf-expansion-factor", module_config.bf_expansion,
                                 RM_CONFIG_DEFAULT, 0, SK_BLOOM_MAX_EXPANSION, get_numeric,
                                 set_numeric, NULL, &module_config.bf_expansion) != RM_OK ||
        RM_RegisterNumericConfig(ctx, "cf-max-expansions", module_config.cf_max_expansions,
                                 RM_CONFIG_DEFAULT, 1, LLONG_MAX, get_numeric, set_numeric, NULL,
                                 &module_config.cf_max_expansions) != RM_OK ||
        RM_RegisterNumericConfig(ctx, "redisbloom-types", module_config.redisbloom_types,
                                 RM_CONFIG_DEFAULT, 0, 1, get_numeric, set_numeric, NULL,
                                 &module_config.redisbloom_types) != RM_OK) {
        RM_Log(ctx, "warning", "sketch: the server refused the module's configs");
        return RM_ERR;
    }
    return RM_LoadConfigs(ctx);
}
