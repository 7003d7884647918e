/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_tdigest.c: sk_tdigest_deserialize on "SKTD" + any bytes.
 *
 * The first input byte is a control byte: bit 0 asks for the checksum to be
 * made right, so that mutations reach the checks behind it. Whatever reads
 * without error must behave: it serializes back to the very bytes it was
 * read from; every read answers without changing it; a copy takes adds,
 * compresses, and merges it; and its weights stay what they were plus what
 * was added.
 */
#include <math.h>

#include "fuzz_util.h"
#include "sketch.h"

static uint8_t *bytes_of(const sk_tdigest *t, size_t *len)
{
    uint64_t size;
    FUZZ_CHECK(sk_tdigest_serialized_size(t, &size) == SK_OK);
    uint8_t *buf = malloc(size);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(sk_tdigest_serialize(t, buf, size, len) == SK_OK && *len == size);
    return buf;
}

static void read_everything(const sk_tdigest *t)
{
    static const double q[] = {0, 0.001, 0.5, 0.3, 0.999, 1};
    static const double x[] = {-INFINITY, -1e308, -1, 0, 0.5, 7, 1e308, INFINITY};
    static const int64_t r[] = {0, 1, 2, 100, INT64_MAX};
    double out[8], mean;
    int64_t ranks[8];
    FUZZ_CHECK(sk_tdigest_quantiles(t, q, out, 6) == SK_OK);
    FUZZ_CHECK(sk_tdigest_cdf(t, x, out, 8) == SK_OK);
    FUZZ_CHECK(sk_tdigest_rank(t, x, ranks, 8, 0) == SK_OK);
    FUZZ_CHECK(sk_tdigest_rank(t, x, ranks, 8, 1) == SK_OK);
    FUZZ_CHECK(sk_tdigest_by_rank(t, r, out, 5, 0) == SK_OK);
    FUZZ_CHECK(sk_tdigest_by_rank(t, r, out, 5, 1) == SK_OK);
    FUZZ_CHECK(sk_tdigest_trimmed_mean(t, 0.1, 0.9, &mean) == SK_OK);
}

static void behave(const sk_tdigest *t, const uint8_t *bytes, size_t len)
{
    size_t len2;
    uint8_t *again = bytes_of(t, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    read_everything(t);
    free(again);
    again = bytes_of(t, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0); /* reads changed nothing */
    free(again);

    sk_tdigest_info before, after;
    sk_tdigest_get_info(t, &before);
    sk_tdigest *copy;
    FUZZ_CHECK(sk_tdigest_copy(&copy, t) == SK_OK);
    int added = 0;
    for (int i = 0; i < 40; i++) {
        int rc = sk_tdigest_add(copy, i * 0.25 - 3, 1 + (uint64_t)i % 3);
        /* SK_EFULL: centroids that fill the capacity alone, which only a
         * digest written by hand can hold */
        FUZZ_CHECK(rc == SK_OK || rc == SK_ETOOLARGE || rc == SK_EFULL);
        added += rc == SK_OK ? 1 + i % 3 : 0;
    }
    FUZZ_CHECK(sk_tdigest_compress(copy) >= 0);
    sk_tdigest_get_info(copy, &after);
    int64_t total_before = before.merged_weight + before.unmerged_weight;
    int64_t total_after = after.merged_weight + after.unmerged_weight;
    /* past 2^53 a compression rounds the total as a double, as RedisBloom's */
    FUZZ_CHECK(total_before > (INT64_C(1) << 52) || total_after == total_before + added);
    read_everything(copy);
    int rc = sk_tdigest_merge(copy, t);
    FUZZ_CHECK(rc == SK_OK || rc == SK_ETOOLARGE || rc == SK_EFULL);
    read_everything(copy);
    sk_tdigest_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len;
    uint8_t *buf = fuzz_framed(SK_TDIGEST_MAGIC, data + 1, size - 1,
                               data[0] & 1 ? fuzz_fix_tdigest_checksum : NULL, &len);
    sk_tdigest *t;
    if (sk_tdigest_deserialize(&t, buf, len, NULL) == SK_OK) {
        behave(t, buf, len);
        sk_tdigest_free(t);
    }
    free(buf);
    return 0;
}
