/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_type.h: the count-min sketch type of sketch.so (cms_type.c), which
 * the CMS.* commands (cms_commands.c) store in keys.
 */
#ifndef SKETCH_MODULE_CMS_TYPE_H
#define SKETCH_MODULE_CMS_TYPE_H

#include "blob_type.h"
#include "rm_api.h"
#include "sketch.h"

extern RedisModuleType *cms_type;
extern const struct blob_family cms_family;

/* Opens key for a command: RM_OK with *sketch its sketch, or NULL if the
 * key is empty (then *key may be NULL, as bf_type.h says). Replies
 * WRONGTYPE and returns RM_ERR for a key of another type. */
int open_cms(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **key,
             sk_cms **sketch);

/* Creates the type with its persistence methods; RM_ERR on failure. */
int cms_type_create(RedisModuleCtx *ctx);

#endif
