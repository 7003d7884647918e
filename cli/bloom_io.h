/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_io.h: how `sketch bloom` opens, commits and saves filter files
 * (bloom_io.c), and what it says when that fails: a damaged filter, a file
 * locked by another add, and a fault of a mapped file, which the library
 * cannot report (a file cut short under a reader, a full disk under an add
 * in place).
 */
#ifndef SKETCH_CLI_BLOOM_IO_H
#define SKETCH_CLI_BLOOM_IO_H

#include "sketch.h"

/* Opens the filter file at path with the library's flags, or dies with a
 * one-line message; a mapped or in-place filter's faults are reported as
 * messages too, exit 2. NULL for a file of the format before chunk sums
 * asked for in place, which the caller then opens whole and saves. */
sk_bloom *bloom_open_or_die(const char *path, unsigned flags);

/* Writes f atomically to path, or to standard output for "-", or dies. */
void bloom_save_or_die(const sk_bloom *f, const char *path);

/* Commits the adds to a filter open in place, or dies. */
void bloom_sync_or_die(sk_bloom *f, const char *path);

/* An add that failed with rc part way: in place, what was added is
 * committed first, so that the file's sums stay whole. */
_Noreturn void bloom_fail_add(sk_bloom *f, int in_place, const char *path, int rc);

#endif
