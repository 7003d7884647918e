/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_cms.c: sk_cms_deserialize on "SKCM" + any bytes.
 *
 * The first input byte is a control byte: bit 0 asks for the checksum to be
 * made right, so that mutations reach the checks behind it. Whatever reads
 * without error must behave: it serializes back to the very bytes it was
 * read from, answers queries, takes adds, and merges into a copy of itself.
 */
#include "fuzz_util.h"
#include "sketch.h"

static void behave(const sk_cms *c, const uint8_t *bytes, size_t len)
{
    uint64_t size;
    FUZZ_CHECK(sk_cms_serialized_size(c, &size) == SK_OK && size == len);
    uint8_t *again = malloc(len);
    size_t len2;
    FUZZ_CHECK(again != NULL);
    FUZZ_CHECK(sk_cms_serialize(c, again, len, &len2) == SK_OK);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    free(again);

    sk_cms *copy;
    FUZZ_CHECK(sk_cms_copy(&copy, c) == SK_OK);
    uint32_t before = sk_cms_count(copy, "item", 4), after;
    FUZZ_CHECK(sk_cms_add(copy, "item", 4, 3, &after) == SK_OK);
    FUZZ_CHECK(after >= before && sk_cms_count(copy, "item", 4) == after);
    int rc = sk_cms_merge(copy, c);
    FUZZ_CHECK(rc == SK_OK || rc == SK_EINVAL);
    if (rc == SK_OK)
        FUZZ_CHECK(sk_cms_count(copy, "item", 4) >= after);
    sk_cms_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len;
    uint8_t *buf = fuzz_framed(SK_CMS_MAGIC, data + 1, size - 1,
                               data[0] & 1 ? fuzz_fix_cms_checksum : NULL, &len);
    sk_cms *c;
    if (sk_cms_deserialize(&c, buf, len, NULL) == SK_OK) {
        behave(c, buf, len);
        sk_cms_free(c);
    }
    free(buf);
    return 0;
}
