/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * td_type.h: the t-digest type of sketch.so (td_type.c), which the
 * TDIGEST.* commands (td_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_TD_TYPE_H
#define SKETCH_MODULE_TD_TYPE_H

#include "blob_type.h"
#include "rm_api.h"
#include "sketch.h"

/* RedisBloom's prefix of every TDIGEST.* error. */
#define TD_E_PREFIX "ERR T-Digest: "
#define TD_E_NO_MEMORY TD_E_PREFIX "Insufficient memory"

extern RedisModuleType *td_type;
extern RedisModuleType *td_rb_type; /* RedisBloom's: TDIS-TYPE */
extern const struct blob_family td_family;

/* Opens a key that must hold a digest, for TDIGEST.* (td_commands.c,
 * td_reads.c): NULL after replying the error. */
sk_tdigest *td_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                             RedisModuleKey **key);

/* The weight a digest holds, centroids and buffer. */
int64_t td_total_weight(const sk_tdigest *t);

/* The memory the digest may come to take: its full capacity. */
uint64_t td_full_memory(const sk_tdigest *t);

/* Creates the type with its persistence methods; RM_ERR on failure. */
int td_type_create(RedisModuleCtx *ctx);

#endif
