/* SPDX-License-Identifier: BSD-3-Clause */
/* sbchain_test_util.c: see sbchain_test_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "sbchain/sbchain_internal.h"
#include "sketch.h"
#include "sbchain_test_util.h"

size_t item(int style, uint64_t i, uint64_t salt, unsigned char *buf)
{
    if (style == 0)
        return (size_t)sprintf((char *)buf, "item:%llu", (unsigned long long)(i + salt));
    size_t len = (size_t)(i % 23);
    uint64_t x = i * UINT64_C(0x9e3779b97f4a7c15) + salt;
    for (size_t k = 0; k < len; k++) {
        x ^= x >> 29;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        buf[k] = (unsigned char)(x >> 56);
    }
    return len;
}

uint8_t *header_of(const sk_sbchain *c, size_t *len)
{
    *len = sk_sbchain_dump_header_size(c);
    uint8_t *h = malloc(*len);
    assert_non_null(h);
    sk_sbchain_dump_header(c, h);
    return h;
}

uint64_t digest(const sk_sbchain *c)
{
    XXH64_state_t st;
    XXH64_reset(&st, 0);
    size_t hl;
    uint8_t *h = header_of(c, &hl);
    XXH64_update(&st, h, hl);
    free(h);
    uint64_t it = 1;
    const void *p;
    size_t len;
    while (sk_sbchain_dump_piece(c, &it, 4096, &p, &len) == 1)
        XXH64_update(&st, p, len);
    assert_int_equal(it, 0);
    return XXH64_digest(&st);
}

void assert_same_chain(const sk_sbchain *a, const sk_sbchain *b)
{
    assert_int_equal(digest(a), digest(b));
    sk_sbchain_info x, y;
    sk_sbchain_get_info(a, &x);
    sk_sbchain_get_info(b, &y);
    assert_int_equal(x.capacity, y.capacity);
    assert_int_equal(x.count, y.count);
    assert_int_equal(x.links, y.links);
    assert_int_equal(x.expansion, y.expansion);
}

sk_sbchain *make(uint64_t cap, double rate, unsigned exp, int non_scaling)
{
    sk_sbchain *c = NULL;
    sk_sbchain_options o = {.capacity = cap, .fp_rate = rate, .expansion = exp,
                            .non_scaling = non_scaling};
    assert_int_equal(sk_sbchain_create(&c, &o), SK_OK);
    return c;
}

void *counting_alloc(void *opaque, size_t size)
{
    struct counting *k = opaque;
    if (k->calls++ == k->fail_at)
        return NULL;
    k->out += size;
    return malloc(size);
}

void counting_free(void *opaque, void *ptr, size_t size)
{
    struct counting *k = opaque;
    k->out -= size;
    free(ptr);
}

const uint8_t OLD_HEADER[SK__SB_HDR_SIZE + SK__SB_LINK_SIZE] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7b, 0x14, 0xae, 0x47,
    0xe1, 0x7a, 0x74, 0x3f, 0xe9, 0x86, 0x2f, 0xb2, 0x35, 0x0e, 0x26, 0x40,
    0x08, 0x00, 0x00, 0x00, 0xcd, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0e,
};

sk_sbchain *restore_empty(const uint8_t *header, size_t len)
{
    static const uint8_t zeros[4096];
    sk_sbchain *c = NULL;
    assert_int_equal(sk_sbchain_restore_begin(&c, header, len, 0, NULL), SK_OK);
    uint64_t it = 1;
    uint32_t links = (uint32_t)header[8] | (uint32_t)header[9] << 8;
    for (uint32_t i = 0; i < links; i++) {
        uint64_t bytes = 0;
        for (int b = 7; b >= 0; b--)
            bytes = bytes << 8 | header[20 + 53 * i + (unsigned)b];
        for (uint64_t done = 0; done < bytes;) {
            size_t n = bytes - done < sizeof zeros ? (size_t)(bytes - done) : sizeof zeros;
            it += n;
            done += n;
            assert_int_equal(sk_sbchain_restore_piece(c, it, zeros, n), SK_OK);
        }
    }
    assert_false(sk_sbchain_restoring(c));
    return c;
}
