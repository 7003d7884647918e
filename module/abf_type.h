/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abf_type.h: the aging Bloom filter type of sketch.so (abf_type.c),
 * `sketch-ab`, which the ABF.* commands (abf_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_ABF_TYPE_H
#define SKETCH_MODULE_ABF_TYPE_H

#include "blob_type.h"
#include "rm_api.h"

extern RedisModuleType *abf_type;

/* The type's calls on its values, for the one-string machinery of
 * blob_type.h: save, load, AOF rewrite, digest, ABF.EXPORT and ABF.IMPORT. */
extern const struct blob_family abf_family;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int abf_type_create(RedisModuleCtx *ctx);

#endif
