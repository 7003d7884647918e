/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module_harness_io.h: the functions of module/rm_api.h that
 * module_harness_io.c stands in for, named h_<function> as the harness's
 * GetApi table names them all.
 */
#ifndef SKETCH_FUZZ_MODULE_HARNESS_IO_H
#define SKETCH_FUZZ_MODULE_HARNESS_IO_H

#include "module_harness.h"

/* Prints what went wrong in the harness itself and aborts. */
void harness_fail(const char *what);
/* malloc, or harness_fail. */
void *harness_xmalloc(size_t n);

void h_SaveUnsigned(RedisModuleIO *rio, uint64_t value);
void h_SaveStringBuffer(RedisModuleIO *rio, const char *str, size_t len);
uint64_t h_LoadUnsigned(RedisModuleIO *rio);
char *h_LoadStringBuffer(RedisModuleIO *rio, size_t *len);
void h_SaveSigned(RedisModuleIO *rio, int64_t value);
int64_t h_LoadSigned(RedisModuleIO *rio);
void h_SaveDouble(RedisModuleIO *rio, double value);
double h_LoadDouble(RedisModuleIO *rio);
int h_IsIOError(RedisModuleIO *rio);
void h_LogIOError(RedisModuleIO *io, const char *level, const char *fmt, ...);
void h_Log(RedisModuleCtx *ctx, const char *level, const char *fmt, ...);
void h_DigestAddStringBuffer(RedisModuleDigest *md, const char *ele, size_t len);
void h_DigestAddLongLong(RedisModuleDigest *md, long long ll);
void h_DigestEndSequence(RedisModuleDigest *md);

#endif
