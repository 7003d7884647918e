/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbchain_test_util.h: what the scalable Bloom chain's unit tests
 * (test_sbchain*.c) share, defined in sbchain_test_util.c; include after
 * <cmocka.h>. Every helper fails the running test when a call it makes
 * fails.
 */
#ifndef SKETCH_SBCHAIN_TEST_UTIL_H
#define SKETCH_SBCHAIN_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sbchain/sbchain_internal.h"
#include "sketch.h"

/* Item i of a style, as the harness made them: 0 "item:<i + salt>", 1
 * i % 23 pseudo-random bytes (the empty item among them). */
size_t item(int style, uint64_t i, uint64_t salt, unsigned char *buf);

/* The SCANDUMP header of a chain, in a fresh buffer of *len bytes. */
uint8_t *header_of(const sk_sbchain *c, size_t *len);

/* XXH64 of the SCANDUMP header and the arrays, as the harness computed it. */
uint64_t digest(const sk_sbchain *c);

/* The same bits and the same BF.INFO figures. */
void assert_same_chain(const sk_sbchain *a, const sk_sbchain *b);

/* A new chain of these options. */
sk_sbchain *make(uint64_t cap, double rate, unsigned exp, int non_scaling);

/* An allocator that counts what is out and fails the allocation numbered
 * fail_at (from 0; -1: never). */
struct counting {
    long fail_at, calls;
    size_t out;
};
void *counting_alloc(void *opaque, size_t size);
void counting_free(void *opaque, void *ptr, size_t size);

/* RedisBloom's empty chain of 1000 at 0.01 with options 0 (RedisBloom
 * 1.x: MurmurHash2, bits a power of 2), as its BF.SCANDUMP header: one
 * link's. */
extern const uint8_t OLD_HEADER[SK__SB_HDR_SIZE + SK__SB_LINK_SIZE];
#define OLD_DIGEST UINT64_C(0xcfc57174b4c8112d) /* after 20000 items of style 0 */

/* Restores a chain from its header and zeroed arrays, in pieces of at
 * most 4096 bytes, none across two links: the header's nfilters (offset
 * 8) links each give their bytes first (at 20 + 53 i). */
sk_sbchain *restore_empty(const uint8_t *header, size_t len);

#endif
