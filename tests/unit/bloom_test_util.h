/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_test_util.h: what the Bloom filter unit tests (test_bloom*.c) share,
 * defined in bloom_test_util.c; include after <cmocka.h>.
 *
 * Items are 8-byte counters (the hardest input for a weak hash): the items
 * added have bit 62 clear and the absent ones probed for false positives
 * have it set (ABSENT_BIT), so the two sets never meet.
 *
 * Files go to a fresh directory under $TMPDIR (or /tmp): setup_dir and
 * teardown_dir, the group setup and teardown of a test program, make it
 * and remove it with what it holds.
 */
#ifndef SKETCH_BLOOM_TEST_UTIL_H
#define SKETCH_BLOOM_TEST_UTIL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "sketch.h"

#define ABSENT_BIT (UINT64_C(1) << 62)

/* The directory of the files; path_of names a file in it. */
extern char tmpdir[PATH_MAX - 64];
void path_of(char *buf, const char *name);
int setup_dir(void **state);
int teardown_dir(void **state);

static inline int add_key(sk_bloom *f, uint64_t key)
{
    return sk_bloom_add(f, &key, sizeof key);
}

static inline int has_key(const sk_bloom *f, uint64_t key)
{
    return sk_bloom_contains(f, &key, sizeof key);
}

static inline sk_bloom_info info_of(const sk_bloom *f)
{
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    return info;
}

/* Items: adding ranges, and asking for them. */
uint64_t add_range(sk_bloom *f, uint64_t from, uint64_t to);
void add_range_batch(sk_bloom *f, uint64_t from, uint64_t to);
void assert_all_found(const sk_bloom *f, uint64_t from, uint64_t to);
uint64_t count_found(const sk_bloom *f, uint64_t base, uint64_t count);

/* Filters, created or asserted to fail. */
sk_bloom *new_filter(uint64_t capacity, double fp_rate, sk_bloom_layout layout);
sk_bloom *new_scalable(uint64_t capacity, double fp_rate, unsigned expansion,
                       sk_bloom_layout layout);
sk_bloom *new_explicit(uint64_t bits, unsigned hashes, sk_bloom_layout layout);

/* Two filters alike. */
sk_bloom *round_trip_dump(const sk_bloom *f);
void assert_same_info(const sk_bloom *a, const sk_bloom *b);
/* A filter with no items, of one layer, of these shape and settings. */
void assert_fresh_info(sk_bloom_info info, sk_bloom_layout layout, uint64_t bits,
                       unsigned hashes, uint64_t capacity, double fp_rate, unsigned expansion);
void assert_same_answers(const sk_bloom *f, const sk_bloom *g, uint64_t added,
                         uint64_t queries);

/* Files: their bytes, saving and opening, damage. */
uint8_t *read_whole(const char *path, size_t *len);
void assert_same_file(const char *a, const char *b);
void write_whole(const char *path, const void *data, size_t len);
void save_ok(const sk_bloom *f, const char *path);
void assert_reopens(const sk_bloom *f, uint64_t added);
uint8_t *saved_bytes(const sk_bloom *f, size_t *len);
sk_bloom *open_ok(const char *path, unsigned flags);
int open_bytes(const void *data, size_t len, unsigned flags, sk_bloom **out);
void fix_checksum(uint8_t *file);
int damage_ok(size_t off, int rc);

#endif
