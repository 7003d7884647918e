/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_hll_groups.c: sk_hll_map_deserialize on any bytes, the group files
 * of `sketch count --by -o` (format.h, SKHG), with the magic put in front.
 *
 * The first input byte is a control byte: bit 0 asks for the header's and
 * the records' checksums to be made right, so that the fuzzer gets past
 * them to the records. Whatever reads without error must behave: it
 * serializes to exactly the bytes it was read from, reads back to the same
 * groups, merges into a copy of itself unchanged, and gives every group's
 * sketch and estimate.
 */
#include "fuzz_util.h"
#include "sketch.h"

/* Sets both checksums of a group file whose header is all there. */
static void fix_checksums(uint8_t *buf, size_t len)
{
    if (len < SK_HG_HEADER_SIZE + SK_HG_TRAILER_SIZE)
        return;
    sk_store_le32(buf + SK_HG_OFF_CHECKSUM, XXH32(buf, SK_HG_OFF_CHECKSUM, 0));
    size_t records = len - SK_HG_HEADER_SIZE - SK_HG_TRAILER_SIZE;
    sk_store_le64(buf + len - SK_HG_TRAILER_SIZE, XXH3_64bits(buf + SK_HG_HEADER_SIZE, records));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t control = data[0];
    size_t len = size - 1 + 4;
    uint8_t *buf = malloc(len);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, SK_HG_MAGIC, 4);
    memcpy(buf + 4, data + 1, size - 1);
    if (control & 1)
        fix_checksums(buf, len);
    sk_hll_map *m;
    int rc = sk_hll_map_deserialize(&m, buf, len, NULL);
    if (rc != SK_OK) {
        FUZZ_CHECK(rc < 0 && m == NULL);
        free(buf);
        return 0;
    }
    uint64_t size2;
    FUZZ_CHECK(sk_hll_map_serialized_size(m, &size2) == SK_OK);
    FUZZ_CHECK(size2 == len);
    uint8_t *again = malloc(len);
    size_t len2;
    FUZZ_CHECK(again != NULL);
    FUZZ_CHECK(sk_hll_map_serialize(m, again, len, &len2) == SK_OK);
    FUZZ_CHECK(len2 == len && memcmp(again, buf, len) == 0);
    sk_hll_map *copy;
    FUZZ_CHECK(sk_hll_map_deserialize(&copy, again, len2, NULL) == SK_OK);
    FUZZ_CHECK(sk_hll_map_merge(copy, m) == SK_OK);
    FUZZ_CHECK(sk_hll_map_size(copy) == sk_hll_map_size(m));
    for (size_t g = 0; g < sk_hll_map_size(m); g++) {
        sk_hll_map_entry a, b;
        FUZZ_CHECK(sk_hll_map_get(m, g, &a) == SK_OK);
        FUZZ_CHECK(sk_hll_map_get(copy, g, &b) == SK_OK);
        FUZZ_CHECK(a.key_len == b.key_len && memcmp(a.key, b.key, a.key_len) == 0);
        FUZZ_CHECK(a.estimate.count == b.estimate.count);
        sk_hll *h;
        FUZZ_CHECK(sk_hll_map_sketch(m, g, &h) == SK_OK);
        FUZZ_CHECK(sk_hll_count(h) == a.estimate.count);
        sk_hll_free(h);
    }
    sk_hll_map_free(copy);
    sk_hll_map_free(m);
    free(again);
    free(buf);
    return 0;
}
