/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_topk.c: sk_topk_deserialize on "SKTK" + any bytes.
 *
 * The first input byte is a control byte: bit 0 asks for the checksum to be
 * made right, so that mutations reach the checks behind it. Whatever reads
 * without error must behave: it serializes back to the very bytes it was
 * read from, lists at most k items each in the top, takes adds, and copies.
 */
#include "fuzz_util.h"
#include "sketch.h"

static void behave(sk_topk *t, const uint8_t *bytes, size_t len)
{
    uint64_t size;
    FUZZ_CHECK(sk_topk_serialized_size(t, &size) == SK_OK && size == len);
    uint8_t *again = malloc(len);
    size_t len2;
    FUZZ_CHECK(again != NULL);
    FUZZ_CHECK(sk_topk_serialize(t, again, len, &len2) == SK_OK);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    free(again);

    sk_topk_info info;
    sk_topk_get_info(t, &info);
    sk_topk_entry top[64];
    int n = sk_topk_list(t, top, 64);
    FUZZ_CHECK(n >= 0 && (uint32_t)n <= info.k);
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(sk_topk_query(t, top[i].item, top[i].len) == 1);
        FUZZ_CHECK(i == 0 || top[i].count <= top[i - 1].count);
    }
    sk_topk *copy;
    FUZZ_CHECK(sk_topk_copy(&copy, t) == SK_OK);
    for (uint32_t i = 0; i < 64; i++) {
        char item[8] = {'i', (char)('a' + i % 26), (char)('a' + i / 26)};
        FUZZ_CHECK(sk_topk_add(copy, item, 3, 1 + i % 5, NULL, NULL) >= 0);
    }
    sk_topk_count(copy, "ia", 2);
    sk_topk_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len;
    uint8_t *buf = fuzz_framed(SK_TOPK_MAGIC, data + 1, size - 1,
                               data[0] & 1 ? fuzz_fix_topk_checksum : NULL, &len);
    sk_topk *t;
    if (sk_topk_deserialize(&t, buf, len, NULL) == SK_OK) {
        behave(t, buf, len);
        sk_topk_free(t);
    }
    free(buf);
    return 0;
}
