/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cf_type.h: the Cuckoo filter type of sketch.so (cf_type.c), which the CF.*
 * commands (cf_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_CF_TYPE_H
#define SKETCH_MODULE_CF_TYPE_H

#include "blob_type.h"
#include "rm_api.h"
#include "sketch.h"

extern RedisModuleType *cf_type;
extern RedisModuleType *cf_rb_type; /* RedisBloom's: MBbloomCF */
extern const struct blob_family cf_family;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int cf_type_create(RedisModuleCtx *ctx);

#endif
