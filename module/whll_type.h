/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * whll_type.h: the sliding-window HyperLogLog type of sketch.so
 * (whll_type.c), `sketch-wh`, which the WHLL.* commands (whll_commands.c)
 * store in keys.
 */
#ifndef SKETCH_MODULE_WHLL_TYPE_H
#define SKETCH_MODULE_WHLL_TYPE_H

#include "rm_api.h"
#include "sketch/window_hll.h"

extern RedisModuleType *whll_type;

/* Creates the type with its persistence methods; RM_ERR on failure. */
int whll_type_create(RedisModuleCtx *ctx);

/* The sketch's serialized form (docs/window-hll-format.md) in memory of
 * Redis's allocator, to RM_Free; NULL if that memory could not be had. */
char *whll_serialize(const sk_window_hll *w, size_t *len);

/* The memory a sketch holds (its info's), which MAX-KEY-MEMORY limits. */
size_t whll_memory(const sk_window_hll *w);

#endif
