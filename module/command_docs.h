/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * command_docs.h: the descriptions of sketch.so's commands for COMMAND
 * DOCS, key specs and ACL categories (command_docs.c).
 */
#ifndef SKETCH_MODULE_COMMAND_DOCS_H
#define SKETCH_MODULE_COMMAND_DOCS_H

#include "rm_api.h"

/* Describes every registered command; RM_ERR if the server refuses. */
int commands_describe(RedisModuleCtx *ctx);

#endif
