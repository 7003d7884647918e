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
extern RedisModuleType *cms_rb_type; /* RedisBloom's: CMSk-TYPE */
extern const struct blob_family cms_family;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int cms_type_create(RedisModuleCtx *ctx);

#endif
