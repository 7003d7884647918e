/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_util.h: what the C tests share (include after <cmocka.h>): the
 * SplitMix64 generator their items come from, and table-driven cmocka
 * tests.
 */
#ifndef SKETCH_TEST_UTIL_H
#define SKETCH_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>

/* The next value of the SplitMix64 sequence that *state is at (advanced). */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* SplitMix64 as a hash of x: the first value of the sequence seeded x. */
static inline uint64_t splitmix64_of(uint64_t x)
{
    return splitmix64(&x);
}

/* Asserts that two malloc'd byte strings are equal, and frees both. */
static inline void assert_same_bytes_free(uint8_t *x, size_t lx, uint8_t *y, size_t ly)
{
    assert_int_equal(lx, ly);
    assert_memory_equal(x, y, lx);
    free(x);
    free(y);
}

/* A cmocka test, for the table of main: the test `name` is run(state) with
 * *state a `type` holding the rest of the arguments (a compound literal of
 * main's block, which outlives the run). */
#define CASE_TEST(name, run, type, ...) {#name, run, NULL, NULL, &(type){__VA_ARGS__}}

#endif
