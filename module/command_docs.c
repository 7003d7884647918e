/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * command_docs.c: what the server tells clients and operators about each
 * command of sketch.so: COMMAND DOCS (summary, complexity, arguments, the
 * module version it came in), the key specs that ACL key patterns and
 * Redis Cluster read, and the ACL categories.
 *
 * ACL categories need Redis 7.2 or Valkey 7.2 (AddACLCategory and
 * SetCommandACLCategories): there the BF.* (and ABF.*) commands are in @bloom, the
 * CMS.* ones in @cms, the TOPK.* ones in @topk, the CF.* ones in @cuckoo,
 * the TDIGEST.* ones in @tdigest,
 * the HLL.* (and WHLL.*) ones in Redis's own @hyperloglog, and each in @read
 * or @write, and
 * in @fast if its flags say fast (@slow otherwise), as Redis's own commands
 * are. Redis 7.0 has neither call, puts module
 * commands in no category, and an operator names them one by one
 * (docs/redis-module.md shows the ACL line).
 */
#include "command_docs.h"

#include <stddef.h>

#include "rm_api.h"

static const RedisModuleCommandInfoVersion info_version = {
    .version = 1,
    .sizeof_historyentry = sizeof(RedisModuleCommandHistoryEntry),
    .sizeof_keyspec = sizeof(RedisModuleCommandKeySpec),
    .sizeof_arg = sizeof(RedisModuleCommandArg),
};

/* One key spec: the keys from the first argument to lastkey (0: that one
 * alone, -1: the last argument). */
#define KEY_RANGE(flag_bits, last)                                                          \
    {                                                                                       \
        {                                                                                   \
            .flags = (flag_bits), .begin_search_type = RM_BS_INDEX, .bs.index.pos = 1,      \
            .find_keys_type = RM_FK_RANGE, .fk.range = {(last), 1, 0},                      \
        },                                                                                  \
        {0}                                                                                 \
    }
#define KEY(flag_bits) KEY_RANGE(flag_bits, 0)
#define KEYS(flag_bits) KEY_RANGE(flag_bits, -1)

#define ARG_KEY {.name = "key", .type = RM_ARG_KEY, .key_spec_index = 0}
#define ARG(n, t) {.name = (n), .type = (t), .key_spec_index = -1}
#define ARG_MANY(n, t) {.name = (n), .type = (t), .key_spec_index = -1, .flags = RM_ARG_MULTIPLE}
#define TOKEN(n, tok)                                                                       \
    {.name = (n), .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = (tok),          \
     .flags = RM_ARG_OPTIONAL}
#define OPTION(n, tok, sub)                                                                 \
    {.name = (n), .type = RM_ARG_BLOCK, .key_spec_index = -1, .token = (tok),               \
     .flags = RM_ARG_OPTIONAL, .subargs = (sub)}

/* ---- BF.* ------------------------------------------------------------------- */

static RedisModuleCommandKeySpec key_insert[2] = KEY(RM_KEY_RW | RM_KEY_ACCESS | RM_KEY_INSERT);
static RedisModuleCommandKeySpec key_create[2] = KEY(RM_KEY_RW | RM_KEY_INSERT);
static RedisModuleCommandKeySpec key_read[2] = KEY(RM_KEY_RO | RM_KEY_ACCESS);
static RedisModuleCommandKeySpec key_meta[2] = KEY(RM_KEY_RO);
static RedisModuleCommandKeySpec key_update[2] = KEY(RM_KEY_RW | RM_KEY_UPDATE);
static RedisModuleCommandKeySpec keys_read[2] = KEYS(RM_KEY_RO | RM_KEY_ACCESS);
/* HLL.COMPARE's two keys: the first and the one after it. */
static RedisModuleCommandKeySpec key_pair_read[2] = KEY_RANGE(RM_KEY_RO | RM_KEY_ACCESS, 1);

static RedisModuleCommandArg expansion_value[] = {ARG("expansion", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg capacity_value[] = {ARG("capacity", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg error_value[] = {ARG("error", RM_ARG_DOUBLE), {0}};

static RedisModuleCommandArg bf_reserve_args[] = {
    ARG_KEY,
    ARG("error_rate", RM_ARG_DOUBLE),
    ARG("capacity", RM_ARG_INTEGER),
    OPTION("expansion", "EXPANSION", expansion_value),
    TOKEN("nonscaling", "NONSCALING"),
    {0}};
static RedisModuleCommandArg key_item_args[] = {ARG_KEY, ARG("item", RM_ARG_STRING), {0}};
static RedisModuleCommandArg key_items_args[] = {ARG_KEY, ARG_MANY("item", RM_ARG_STRING), {0}};
static RedisModuleCommandArg bf_insert_args[] = {
    ARG_KEY,
    OPTION("capacity", "CAPACITY", capacity_value),
    OPTION("error", "ERROR", error_value),
    OPTION("expansion", "EXPANSION", expansion_value),
    TOKEN("nocreate", "NOCREATE"),
    TOKEN("nonscaling", "NONSCALING"),
    {.name = "items", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "ITEMS"},
    ARG_MANY("item", RM_ARG_STRING),
    {0}};
static RedisModuleCommandArg key_args[] = {ARG_KEY, {0}};
static RedisModuleCommandArg info_fields[] = {
    {.name = "capacity", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "CAPACITY"},
    {.name = "size", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "SIZE"},
    {.name = "filters", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "FILTERS"},
    {.name = "items", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "ITEMS"},
    {.name = "expansion", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1,
     .token = "EXPANSION"},
    {0}};
static RedisModuleCommandArg bf_info_args[] = {
    ARG_KEY,
    {.name = "single_value", .type = RM_ARG_ONEOF, .key_spec_index = -1,
     .flags = RM_ARG_OPTIONAL, .subargs = info_fields},
    {0}};
static RedisModuleCommandArg scandump_args[] = {ARG_KEY, ARG("iterator", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg loadchunk_args[] = {
    ARG_KEY, ARG("iterator", RM_ARG_INTEGER), ARG("data", RM_ARG_STRING), {0}};

/* ---- HLL.* ------------------------------------------------------------------ */

static RedisModuleCommandArg hll_reserve_args[] = {
    ARG_KEY, ARG("precision", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg hll_add_args[] = {
    ARG_KEY,
    {.name = "element", .type = RM_ARG_STRING, .key_spec_index = -1,
     .flags = RM_ARG_OPTIONAL | RM_ARG_MULTIPLE},
    {0}};
static RedisModuleCommandArg keys_args[] = {
    {.name = "key", .type = RM_ARG_KEY, .key_spec_index = 0, .flags = RM_ARG_MULTIPLE}, {0}};
static RedisModuleCommandArg hll_merge_args[] = {
    {.name = "destkey", .type = RM_ARG_KEY, .key_spec_index = 0},
    {.name = "sourcekey", .type = RM_ARG_KEY, .key_spec_index = 1, .flags = RM_ARG_MULTIPLE},
    {0}};
static RedisModuleCommandArg hll_compare_args[] = {
    {.name = "key1", .type = RM_ARG_KEY, .key_spec_index = 0},
    {.name = "key2", .type = RM_ARG_KEY, .key_spec_index = 0},
    {0}};
static RedisModuleCommandArg hll_import_args[] = {ARG_KEY, ARG("value", RM_ARG_STRING), {0}};

/* HLL.MERGE writes its first key and reads the rest. */
static RedisModuleCommandKeySpec merge_keys[3] = {
    {.flags = RM_KEY_RW | RM_KEY_ACCESS | RM_KEY_INSERT, .begin_search_type = RM_BS_INDEX,
     .bs.index.pos = 1, .find_keys_type = RM_FK_RANGE, .fk.range = {0, 1, 0}},
    {.flags = RM_KEY_RO | RM_KEY_ACCESS, .begin_search_type = RM_BS_INDEX, .bs.index.pos = 2,
     .find_keys_type = RM_FK_RANGE, .fk.range = {-1, 1, 0}},
    {0}};
static RedisModuleCommandKeySpec key_overwrite[2] = KEY(RM_KEY_OW | RM_KEY_UPDATE);

/* ---- CMS.* ------------------------------------------------------------------ */

static RedisModuleCommandKeySpec key_count[2] = KEY(RM_KEY_RW | RM_KEY_ACCESS | RM_KEY_UPDATE);
/* CMS.MERGE writes its first key and reads the numkeys keys after numkeys. */
static RedisModuleCommandKeySpec cms_merge_keys[3] = {
    {.flags = RM_KEY_RW | RM_KEY_UPDATE, .begin_search_type = RM_BS_INDEX, .bs.index.pos = 1,
     .find_keys_type = RM_FK_RANGE, .fk.range = {0, 1, 0}},
    {.flags = RM_KEY_RO | RM_KEY_ACCESS, .begin_search_type = RM_BS_INDEX, .bs.index.pos = 2,
     .find_keys_type = RM_FK_KEYNUM, .fk.keynum = {0, 1, 1}},
    {0}};

static RedisModuleCommandArg cms_initbydim_args[] = {
    ARG_KEY, ARG("width", RM_ARG_INTEGER), ARG("depth", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cms_initbyprob_args[] = {
    ARG_KEY, ARG("error", RM_ARG_DOUBLE), ARG("probability", RM_ARG_DOUBLE), {0}};
static RedisModuleCommandArg item_increment[] = {
    ARG("item", RM_ARG_STRING), ARG("increment", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cms_incrby_args[] = {
    ARG_KEY,
    {.name = "items", .type = RM_ARG_BLOCK, .key_spec_index = -1, .flags = RM_ARG_MULTIPLE,
     .subargs = item_increment},
    {0}};
static RedisModuleCommandArg weight_values[] = {ARG_MANY("weight", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cms_merge_args[] = {
    {.name = "destination", .type = RM_ARG_KEY, .key_spec_index = 0},
    ARG("numkeys", RM_ARG_INTEGER),
    {.name = "source", .type = RM_ARG_KEY, .key_spec_index = 1, .flags = RM_ARG_MULTIPLE},
    OPTION("weights", "WEIGHTS", weight_values),
    {0}};
/* The IMPORT of the families that have a type of RedisBloom's too: which
 * type the key takes (blob_type.h). */
static RedisModuleCommandArg import_types[] = {
    {.name = "sketch", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "SKETCH"},
    {.name = "redisbloom", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1,
     .token = "REDISBLOOM"},
    {0}};
static RedisModuleCommandArg cms_import_args[] = {
    ARG_KEY, ARG("bytes", RM_ARG_STRING),
    {.name = "type", .type = RM_ARG_ONEOF, .key_spec_index = -1, .flags = RM_ARG_OPTIONAL,
     .subargs = import_types},
    {0}};

/* ---- TOPK.* ----------------------------------------------------------------- */

static RedisModuleCommandArg topk_shape[] = {
    ARG("width", RM_ARG_INTEGER), ARG("depth", RM_ARG_INTEGER), ARG("decay", RM_ARG_DOUBLE), {0}};
static RedisModuleCommandArg topk_reserve_args[] = {
    ARG_KEY, ARG("topk", RM_ARG_INTEGER),
    {.name = "params", .type = RM_ARG_BLOCK, .key_spec_index = -1, .flags = RM_ARG_OPTIONAL,
     .subargs = topk_shape},
    {0}};
static RedisModuleCommandArg topk_list_args[] = {
    ARG_KEY, TOKEN("withcount", "WITHCOUNT"), {0}};

/* ---- CF.* -------------------------------------------------------------------- */

static RedisModuleCommandArg cf_bucketsize[] = {ARG("bucketsize", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cf_maxiterations[] = {ARG("maxiterations", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cf_expansion[] = {ARG("expansion", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cf_capacity[] = {ARG("capacity", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg cf_reserve_args[] = {
    ARG_KEY, ARG("capacity", RM_ARG_INTEGER),
    OPTION("bucketsize", "BUCKETSIZE", cf_bucketsize),
    OPTION("maxiterations", "MAXITERATIONS", cf_maxiterations),
    OPTION("expansion", "EXPANSION", cf_expansion), {0}};
static RedisModuleCommandArg cf_insert_args[] = {
    ARG_KEY, OPTION("capacity", "CAPACITY", cf_capacity), TOKEN("nocreate", "NOCREATE"),
    {.name = "items", .type = RM_ARG_PURE_TOKEN, .key_spec_index = -1, .token = "ITEMS"},
    ARG_MANY("item", RM_ARG_STRING), {0}};

/* ---- TDIGEST.* ------------------------------------------------------------- */

/* TDIGEST.MERGE replaces its first key and reads the numkeys keys after
 * numkeys. */
static RedisModuleCommandKeySpec td_merge_keys[3] = {
    {.flags = RM_KEY_RW | RM_KEY_UPDATE, .begin_search_type = RM_BS_INDEX,
     .bs.index.pos = 1, .find_keys_type = RM_FK_RANGE, .fk.range = {0, 1, 0}},
    {.flags = RM_KEY_RO | RM_KEY_ACCESS, .begin_search_type = RM_BS_INDEX, .bs.index.pos = 2,
     .find_keys_type = RM_FK_KEYNUM, .fk.keynum = {0, 1, 1}},
    {0}};
static RedisModuleCommandArg td_compression[] = {ARG("compression", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg td_create_args[] = {
    ARG_KEY, OPTION("compression", "COMPRESSION", td_compression), {0}};
static RedisModuleCommandArg td_values_args[] = {ARG_KEY, ARG_MANY("value", RM_ARG_DOUBLE), {0}};
static RedisModuleCommandArg td_quantile_args[] = {
    ARG_KEY, ARG_MANY("quantile", RM_ARG_DOUBLE), {0}};
static RedisModuleCommandArg td_rank_args[] = {ARG_KEY, ARG_MANY("rank", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg td_trimmed_args[] = {
    ARG_KEY, ARG("low_cut_quantile", RM_ARG_DOUBLE), ARG("high_cut_quantile", RM_ARG_DOUBLE),
    {0}};
static RedisModuleCommandArg td_merge_args[] = {
    {.name = "destination", .type = RM_ARG_KEY, .key_spec_index = 0},
    ARG("numkeys", RM_ARG_INTEGER),
    {.name = "source", .type = RM_ARG_KEY, .key_spec_index = 1, .flags = RM_ARG_MULTIPLE},
    OPTION("compression", "COMPRESSION", td_compression),
    TOKEN("override", "OVERRIDE"),
    {0}};

/* ---- WHLL.* ----------------------------------------------------------------- */

static RedisModuleCommandArg whll_resolution[] = {ARG("resolution", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg whll_precision[] = {ARG("precision", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg whll_time[] = {ARG("time", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg whll_reserve_args[] = {
    ARG_KEY, ARG("horizon", RM_ARG_INTEGER),
    OPTION("resolution", "RESOLUTION", whll_resolution),
    OPTION("precision", "PRECISION", whll_precision), {0}};
static RedisModuleCommandArg whll_add_args[] = {ARG_KEY, ARG_MANY("element", RM_ARG_STRING), {0}};
static RedisModuleCommandArg whll_addat_args[] = {
    ARG_KEY, ARG("time", RM_ARG_INTEGER), ARG_MANY("element", RM_ARG_STRING), {0}};
static RedisModuleCommandArg whll_count_args[] = {
    ARG_KEY, ARG("window", RM_ARG_INTEGER), OPTION("time", "TIME", whll_time), {0}};
static RedisModuleCommandArg whll_import_args[] = {ARG_KEY, ARG("bytes", RM_ARG_STRING), {0}};

/* ---- ABF.* ------------------------------------------------------------------ */

static RedisModuleCommandArg abf_window[] = {ARG("window", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg abf_generations[] = {ARG("generations", RM_ARG_INTEGER), {0}};
static RedisModuleCommandArg abf_reserve_args[] = {
    ARG_KEY, ARG("error_rate", RM_ARG_DOUBLE), ARG("capacity", RM_ARG_INTEGER),
    OPTION("window", "WINDOW", abf_window),
    OPTION("generations", "GENERATIONS", abf_generations), {0}};
static RedisModuleCommandArg abf_at_args[] = {
    ARG_KEY, ARG("time", RM_ARG_INTEGER), ARG_MANY("item", RM_ARG_STRING), {0}};
static RedisModuleCommandArg abf_import_args[] = {
    ARG_KEY, ARG("bytes", RM_ARG_STRING), TOKEN("sketch", "SKETCH"), {0}};

struct command_doc {
    const char *name;
    const char *summary;
    const char *complexity;
    const char *since;
    int arity;
    const char *categories; /* for servers with SetCommandACLCategories */
    RedisModuleCommandKeySpec *keys;
    RedisModuleCommandArg *args;
};

#define K_ITEMS "O(k * n), where k is the number of hashes of the newest layer and n the items"
#define K_LOOKUP "O(k * l), where k is the number of hashes and l the number of layers"
#define K_UNION "O(m * k), where m is the number of registers and k the number of keys"
#define K_REGISTERS "O(m), where m is the number of registers"

#define K_CF_ITEMS "O(n * f), where n is the number of items and f of sub-filters"
#define K_CF_SLOTS "O(s), where s is the number of slots"

#define K_TD_READ "O(c + n), where c is the capacity and n the number of arguments"
#define K_TD_NODES "O(c), where c is the capacity (6 x compression + 10)"

#define K_WHLL_ITEMS "O(n * l), where n is the number of elements and l the pairs of a register"
#define K_WHLL_PAIRS "O(m * l), where m is the number of registers and l the pairs of each"

#define K_ABF_ITEMS "O(n * k), where n is the number of items and k of hashes"
#define K_ABF_LOOKUP "O(n * k * g), where n is the number of items, k of hashes, g of generations"
#define K_ABF_BITS "O(b), where b is the number of bits of all generations"

static const struct command_doc docs[] = {
    {"bf.reserve", "Creates an empty Bloom filter", "O(1)", "0.1.0", -4, "write slow bloom",
     key_create, bf_reserve_args},
    {"bf.add", "Adds an item to a Bloom filter, creating the filter if it does not exist",
     K_ITEMS, "0.1.0", 3, "write slow bloom", key_insert, key_item_args},
    {"bf.madd", "Adds items to a Bloom filter, creating the filter if it does not exist",
     K_ITEMS, "0.1.0", -3, "write slow bloom", key_insert, key_items_args},
    {"bf.insert", "Adds items to a Bloom filter, creating it with the given options if needed",
     K_ITEMS, "0.1.0", -4, "write slow bloom", key_insert, bf_insert_args},
    {"bf.exists", "Tells whether an item may be in a Bloom filter", K_LOOKUP, "0.1.0", 3,
     "read fast bloom", key_read, key_item_args},
    {"bf.mexists", "Tells whether each of the items may be in a Bloom filter", K_LOOKUP,
     "0.1.0", -3, "read fast bloom", key_read, key_items_args},
    {"bf.card", "Returns the number of items added to a Bloom filter", "O(1)", "0.1.0", 2,
     "read fast bloom", key_meta, key_args},
    {"bf.info", "Returns the capacity, size, layers, items and expansion of a Bloom filter",
     "O(1)", "0.1.0", -2, "read fast bloom", key_meta, bf_info_args},
    {"bf.debug", "Returns the size, hashes, capacity, items and rate of each layer",
     "O(l), where l is the number of layers", "0.2.0", 2, "read slow bloom", key_meta,
     key_args},
    {"bf.scandump", "Returns the next piece of a Bloom filter's dump",
     "O(n), where n is the size of the piece", "0.1.0", 3, "read slow bloom", key_read,
     scandump_args},
    {"bf.loadchunk", "Restores a piece of a Bloom filter's dump that BF.SCANDUMP returned",
     "O(n), where n is the size of the piece", "0.1.0", 4, "write slow bloom", key_update,
     loadchunk_args},
    {"hll.reserve", "Creates an empty HyperLogLog sketch of a given precision", "O(1)",
     "0.1.0", 3, "write slow hyperloglog", key_create, hll_reserve_args},
    {"hll.add", "Adds elements to a HyperLogLog sketch, creating it if it does not exist",
     "O(1) for each element", "0.1.0", -2, "write fast hyperloglog", key_insert, hll_add_args},
    {"hll.count", "Returns the estimated number of distinct elements of the union of sketches",
     K_UNION, "0.1.0", -2,
     "read slow hyperloglog", keys_read, keys_args},
    {"hll.estimate", "Returns the estimate of the union with its standard error and bounds",
     K_UNION, "0.1.0", -2,
     "read slow hyperloglog", keys_read, keys_args},
    {"hll.merge", "Merges sketches into the first key, keeping its kind",
     K_UNION, "0.1.0", -3,
     "write slow hyperloglog", merge_keys, hll_merge_args},
    {"hll.compare",
     "Estimates the union, intersection, differences and Jaccard index of two sketches",
     K_REGISTERS, "0.2.0", 3, "read slow hyperloglog", key_pair_read, hll_compare_args},
    {"hll.info", "Returns the precision, registers, encoding, count, error and memory",
     K_REGISTERS, "0.1.0", 2, "read slow hyperloglog", key_meta,
     key_args},
    {"hll.export", "Returns a sketch in the format of the library and the command",
     K_REGISTERS, "0.1.0", 2, "read slow hyperloglog", key_read,
     key_args},
    {"hll.import", "Stores a sketch of any format the library reads",
     K_REGISTERS, "0.1.0", 3, "write slow hyperloglog",
     key_overwrite, hll_import_args},
    {"cms.initbydim", "Creates an empty count-min sketch of a given width and depth",
     "O(w * d), where w is the width and d the depth", "0.3.0", 4, "write slow cms",
     key_create, cms_initbydim_args},
    {"cms.initbyprob", "Creates an empty count-min sketch for an error and its probability",
     "O(w * d), where w is the width and d the depth", "0.3.0", 4, "write slow cms",
     key_create, cms_initbyprob_args},
    {"cms.incrby", "Adds counts of items to a count-min sketch and returns their estimates",
     "O(n * d), where n is the number of items and d the depth", "0.3.0", -4, "write fast cms",
     key_count, cms_incrby_args},
    {"cms.query", "Returns the estimated counts of items in a count-min sketch",
     "O(n * d), where n is the number of items and d the depth", "0.3.0", -3, "read fast cms",
     key_read, key_items_args},
    {"cms.merge", "Sets a count-min sketch to the weighted sum of sketches of its dimensions",
     "O(k * w * d), where k is the number of sources, w the width and d the depth", "0.3.0",
     -4, "write slow cms", cms_merge_keys, cms_merge_args},
    {"cms.info", "Returns the width, depth and total count of a count-min sketch", "O(1)",
     "0.3.0", 2, "read fast cms", key_meta, key_args},
    {"cms.export", "Returns a count-min sketch in the format of the library and the command",
     "O(w * d), where w is the width and d the depth", "0.3.0", 2, "read slow cms", key_read,
     key_args},
    {"cms.import", "Stores a count-min sketch in the format of the library and the command",
     "O(w * d), where w is the width and d the depth", "0.3.0", -3, "write slow cms",
     key_overwrite, cms_import_args},
    {"topk.reserve", "Creates an empty top-k sketch", "O(w * d + k)", "0.3.0", -3,
     "write slow topk", key_create, topk_reserve_args},
    {"topk.add", "Adds items to a top-k sketch and returns the items they pushed out",
     "O(n * (d + k)), where n is the number of items, d the depth", "0.3.0", -3,
     "write slow topk", key_count, key_items_args},
    {"topk.incrby", "Adds counts of items to a top-k sketch and returns the items they pushed out",
     "O(n * (d + k)), where n is the number of items, d the depth", "0.3.0", -4,
     "write slow topk", key_count, cms_incrby_args},
    {"topk.query", "Tells whether each item is in the top k", "O(n * k)", "0.3.0", -3,
     "read slow topk", key_read, key_items_args},
    {"topk.count", "Returns the estimated counts of items in a top-k sketch",
     "O(n * (d + k))", "0.3.0", -3, "read slow topk", key_read, key_items_args},
    {"topk.list", "Returns the top k items, heaviest first, with their counts if asked",
     "O(k log k)", "0.3.0", -2, "read slow topk", key_read, topk_list_args},
    {"topk.info", "Returns the k, width, depth and decay of a top-k sketch", "O(1)", "0.3.0",
     2, "read fast topk", key_meta, key_args},
    {"topk.export", "Returns a top-k sketch in the format of the library", "O(w * d + k)",
     "0.3.0", 2, "read slow topk", key_read, key_args},
    {"topk.import", "Stores a top-k sketch in the format of the library", "O(w * d + k)",
     "0.3.0", -3, "write slow topk", key_overwrite, cms_import_args},
    {"cf.reserve", "Creates an empty Cuckoo filter", "O(s), where s is the number of slots",
     "0.3.0", -3, "write slow cuckoo", key_create, cf_reserve_args},
    {"cf.add", "Adds an item to a Cuckoo filter, creating the filter if it does not exist",
     K_CF_ITEMS, "0.3.0", 3, "write slow cuckoo", key_insert, key_item_args},
    {"cf.addnx", "Adds an item to a Cuckoo filter unless it may be there already", K_CF_ITEMS,
     "0.3.0", 3, "write slow cuckoo", key_insert, key_item_args},
    {"cf.insert", "Adds items to a Cuckoo filter, creating it with the given capacity if needed",
     K_CF_ITEMS, "0.3.0", -4, "write slow cuckoo", key_insert, cf_insert_args},
    {"cf.insertnx", "Adds each item to a Cuckoo filter unless it may be there already",
     K_CF_ITEMS, "0.3.0", -4, "write slow cuckoo", key_insert, cf_insert_args},
    {"cf.exists", "Tells whether an item may be in a Cuckoo filter", K_CF_ITEMS, "0.3.0", 3,
     "read fast cuckoo", key_read, key_item_args},
    {"cf.mexists", "Tells whether each of the items may be in a Cuckoo filter", K_CF_ITEMS,
     "0.3.0", -3, "read fast cuckoo", key_read, key_items_args},
    {"cf.count", "Returns how many times an item may have been added to a Cuckoo filter",
     K_CF_ITEMS, "0.3.0", 3, "read fast cuckoo", key_read, key_item_args},
    {"cf.del", "Deletes one copy of an item from a Cuckoo filter", K_CF_ITEMS, "0.3.0", 3,
     "write fast cuckoo", key_update, key_item_args},
    {"cf.compact", "Moves items into older sub-filters and frees the emptied ones", K_CF_SLOTS,
     "0.3.0", 2, "write slow cuckoo", key_update, key_args},
    {"cf.scandump", "Returns the next piece of a Cuckoo filter's dump",
     "O(n), where n is the size of the piece", "0.3.0", 3, "read slow cuckoo", key_read,
     scandump_args},
    {"cf.loadchunk", "Restores a piece of a Cuckoo filter's dump that CF.SCANDUMP returned",
     "O(n), where n is the size of the piece", "0.3.0", 4, "write slow cuckoo", key_update,
     loadchunk_args},
    {"cf.info", "Returns the size, buckets, sub-filters, items and settings of a Cuckoo filter",
     "O(f), where f is the number of sub-filters", "0.3.0", 2, "read fast cuckoo", key_meta,
     key_args},
    {"cf.debug", "Returns a Cuckoo filter's settings and counts as one line",
     "O(f), where f is the number of sub-filters", "0.3.0", 2, "read fast cuckoo", key_meta,
     key_args},
    {"cf.export", "Returns a Cuckoo filter in the format of the library", K_CF_SLOTS, "0.3.0",
     2, "read slow cuckoo", key_read, key_args},
    {"cf.import", "Stores a Cuckoo filter in the format of the library", K_CF_SLOTS, "0.3.0", -3,
     "write slow cuckoo", key_overwrite, cms_import_args},
    {"tdigest.create", "Creates an empty t-digest", "O(1)", "0.3.0", -2, "write fast tdigest",
     key_create, td_create_args},
    {"tdigest.add", "Adds values to a t-digest", "O(n), where n is the number of values",
     "0.3.0", -3, "write fast tdigest", key_update, td_values_args},
    {"tdigest.reset", "Empties a t-digest, keeping its compression", "O(1)", "0.3.0", 2,
     "write fast tdigest", key_update, key_args},
    {"tdigest.merge", "Merges t-digests into a new one at the destination",
     "O(k * c), where k is the number of sources and c the capacity", "0.3.0", -4,
     "write slow tdigest", td_merge_keys, td_merge_args},
    {"tdigest.min", "Returns the smallest value added to a t-digest", "O(1)", "0.3.0", 2,
     "read fast tdigest", key_read, key_args},
    {"tdigest.max", "Returns the largest value added to a t-digest", "O(1)", "0.3.0", 2,
     "read fast tdigest", key_read, key_args},
    {"tdigest.quantile", "Returns the values at quantiles of a t-digest", K_TD_READ, "0.3.0", -3,
     "read slow tdigest", key_read, td_quantile_args},
    {"tdigest.cdf", "Returns the fractions of a t-digest's weight at or below values",
     K_TD_READ, "0.3.0", -3, "read slow tdigest", key_read, td_values_args},
    {"tdigest.rank", "Returns the estimated ranks of values in a t-digest", K_TD_READ, "0.3.0",
     -3, "read slow tdigest", key_read, td_values_args},
    {"tdigest.revrank", "Returns the estimated reverse ranks of values in a t-digest",
     K_TD_READ, "0.3.0", -3, "read slow tdigest", key_read, td_values_args},
    {"tdigest.byrank", "Returns the values at ranks of a t-digest", K_TD_READ, "0.3.0", -3,
     "read slow tdigest", key_read, td_rank_args},
    {"tdigest.byrevrank", "Returns the values at reverse ranks of a t-digest", K_TD_READ,
     "0.3.0", -3, "read slow tdigest", key_read, td_rank_args},
    {"tdigest.trimmed_mean", "Returns the mean of a t-digest's values between two quantiles",
     K_TD_NODES, "0.3.0", 4, "read slow tdigest", key_read, td_trimmed_args},
    {"tdigest.info", "Returns the compression, capacity, nodes and weights of a t-digest",
     "O(1)", "0.3.0", 2, "read fast tdigest", key_meta, key_args},
    {"tdigest.compress", "Merges a t-digest's buffered values into its centroids now",
     K_TD_NODES, "0.3.0", 2, "write slow tdigest", key_update, key_args},
    {"tdigest.export", "Returns a t-digest in the format of the library", K_TD_NODES, "0.3.0",
     2, "read slow tdigest", key_read, key_args},
    {"tdigest.import", "Stores a t-digest in the format of the library", K_TD_NODES, "0.3.0", -3,
     "write slow tdigest", key_overwrite, cms_import_args},
    {"whll.reserve", "Creates an empty sliding-window HyperLogLog", "O(m), where m is the "
     "number of registers", "0.3.0", -3, "write slow hyperloglog", key_create,
     whll_reserve_args},
    {"whll.add", "Adds elements seen now to a sliding-window HyperLogLog, creating it if needed",
     K_WHLL_ITEMS, "0.3.0", -3, "write fast hyperloglog", key_insert, whll_add_args},
    {"whll.addat", "Adds elements seen at a time to a sliding-window HyperLogLog", K_WHLL_ITEMS,
     "0.3.0", -4, "write fast hyperloglog", key_insert, whll_addat_args},
    {"whll.count", "Returns the estimated distinct elements of a window ending now or at a time",
     K_WHLL_PAIRS, "0.3.0", -3, "read slow hyperloglog", key_read, whll_count_args},
    {"whll.merge", "Merges sliding-window HyperLogLogs into the first key", K_WHLL_PAIRS,
     "0.3.0", -3, "write slow hyperloglog", merge_keys, hll_merge_args},
    {"whll.info", "Returns the precision, horizon, resolution, newest time, pairs and memory",
     "O(1)", "0.3.0", 2, "read fast hyperloglog", key_meta, key_args},
    {"whll.export", "Returns a sliding-window HyperLogLog in the format of the library",
     K_WHLL_PAIRS, "0.3.0", 2, "read slow hyperloglog", key_read, key_args},
    {"whll.import", "Stores a sliding-window HyperLogLog in the format of the library",
     K_WHLL_PAIRS, "0.3.0", 3, "write slow hyperloglog", key_overwrite, whll_import_args},
    {"abf.reserve", "Creates an empty aging Bloom filter of a count or a time window",
     K_ABF_BITS, "0.3.0", -4, "write slow bloom", key_create, abf_reserve_args},
    {"abf.add", "Adds an item now to an aging Bloom filter, creating the filter if needed",
     K_ABF_ITEMS, "0.3.0", 3, "write slow bloom", key_insert, key_item_args},
    {"abf.madd", "Adds items now to an aging Bloom filter, creating the filter if needed",
     K_ABF_ITEMS, "0.3.0", -3, "write slow bloom", key_insert, key_items_args},
    {"abf.addat", "Adds items at a time to an aging Bloom filter, creating it if needed",
     K_ABF_ITEMS, "0.3.0", -4, "write slow bloom", key_insert, abf_at_args},
    {"abf.exists", "Tells whether an item may have been added within the window ending now",
     K_ABF_LOOKUP, "0.3.0", 3, "read fast bloom", key_read, key_item_args},
    {"abf.mexists", "Tells whether each item may have been added within the window ending now",
     K_ABF_LOOKUP, "0.3.0", -3, "read fast bloom", key_read, key_items_args},
    {"abf.existsat", "Tells whether each item may have been added within the window ending at a "
     "time", K_ABF_LOOKUP, "0.3.0", -4, "read fast bloom", key_read, abf_at_args},
    {"abf.info", "Returns the capacity, rate, generations, window, items and memory of a filter",
     "O(1)", "0.3.0", 2, "read fast bloom", key_meta, key_args},
    {"abf.export", "Returns an aging Bloom filter in the format of the library", K_ABF_BITS,
     "0.3.0", 2, "read slow bloom", key_read, key_args},
    {"abf.import", "Stores an aging Bloom filter in the format of the library", K_ABF_BITS,
     "0.3.0", -3, "write slow bloom", key_overwrite, abf_import_args},
};

int commands_describe(RedisModuleCtx *ctx)
{
    /* Redis's own @hyperloglog needs no adding; @bloom, @cms, @topk,
     * @cuckoo and @tdigest, RedisBloom's names in Redis 8, are new. */
    static const char *const categories[] = {"bloom", "cms", "topk", "cuckoo", "tdigest"};
    for (size_t i = 0; i < sizeof categories / sizeof categories[0]; i++)
        if (RM_AddACLCategory != NULL && RM_SetCommandACLCategories != NULL &&
            RM_AddACLCategory(ctx, categories[i]) != RM_OK) {
            RM_Log(ctx, "warning", "sketch: the server refused the ACL category %s",
                   categories[i]);
            return RM_ERR;
        }
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        const struct command_doc *d = &docs[i];
        RedisModuleCommand *command = RM_GetCommand(ctx, d->name);
        RedisModuleCommandInfo info = {
            .version = &info_version,
            .summary = d->summary,
            .complexity = d->complexity,
            .since = d->since,
            .arity = d->arity,
            .key_specs = d->keys,
            .args = d->args,
        };
        if (command == NULL || RM_SetCommandInfo(command, &info) != RM_OK) {
            RM_Log(ctx, "warning", "sketch: the server refused the description of %s", d->name);
            return RM_ERR;
        }
        if (RM_SetCommandACLCategories != NULL &&
            RM_SetCommandACLCategories(command, d->categories) != RM_OK) {
            RM_Log(ctx, "warning", "sketch: the server refused the ACL categories of %s",
                   d->name);
            return RM_ERR;
        }
    }
    return RM_OK;
}
