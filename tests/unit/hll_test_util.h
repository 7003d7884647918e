/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_test_util.h: what the HyperLogLog unit tests (test_hll*.c) share,
 * defined in hll_test_util.c; include after <cmocka.h>. Every helper fails
 * the running test when a call it makes fails.
 */
#ifndef SKETCH_HLL_TEST_UTIL_H
#define SKETCH_HLL_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sketch.h"

/* The encoding and memory of a sketch, from sk_hll_get_info. */
int hll_is_sparse(const sk_hll *h);
size_t hll_memory(const sk_hll *h);

/* A new sketch of precision p. */
sk_hll *new_hll(unsigned p);

/* Adds the items "item-<i>" for i in [from, to). */
void add_items(sk_hll *h, unsigned from, unsigned to);

/* Serializes in the given format into a fresh buffer. */
uint8_t *serialize(const sk_hll *h, sk_hll_format format, size_t *len);

/* Two sketches are equal when their native serializations are: same
 * precision and the same value in every register. */
void assert_same_registers(const sk_hll *a, const sk_hll *b);

#endif
