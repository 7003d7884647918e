/* SPDX-License-Identifier: BSD-3-Clause */
/* hll_test_util.c: see hll_test_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sketch.h"
#include "../common/test_util.h"
#include "hll_test_util.h"

int hll_is_sparse(const sk_hll *h)
{
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    return info.encoding == SK_HLL_SPARSE;
}

size_t hll_memory(const sk_hll *h)
{
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    return info.memory;
}

sk_hll *new_hll(unsigned p)
{
    sk_hll *h = NULL;
    assert_int_equal(sk_hll_new(&h, p), SK_OK);
    assert_non_null(h);
    return h;
}

void add_items(sk_hll *h, unsigned from, unsigned to)
{
    char item[32];
    for (unsigned i = from; i < to; i++) {
        int len = snprintf(item, sizeof item, "item-%u", i);
        assert_true(sk_hll_add(h, item, (size_t)len) >= 0);
    }
}

uint8_t *serialize(const sk_hll *h, sk_hll_format format, size_t *len)
{
    uint64_t cap;
    assert_int_equal(sk_hll_serialized_size(h, format, &cap), SK_OK);
    assert_true(cap > 0);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(sk_hll_serialize(h, format, buf, cap, len), SK_OK);
    assert_int_equal(*len, cap);
    return buf;
}

void assert_same_registers(const sk_hll *a, const sk_hll *b)
{
    size_t la, lb;
    uint8_t *sa = serialize(a, SK_HLL_NATIVE, &la);
    uint8_t *sb = serialize(b, SK_HLL_NATIVE, &lb);
    assert_same_bytes_free(sa, la, sb, lb);
}
