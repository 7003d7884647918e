/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_aging_bloom.c: sk_aging_bloom_deserialize on "SKAB" + any bytes.
 *
 * The first input byte is a control byte: bit 0 asks for the checksums to
 * be made right, each generation's dump's and then the whole's, so that
 * mutations reach the checks behind them. Whatever reads without error
 * must behave: it serializes back to the very bytes it was read from,
 * answers queries at any time, and a copy of it takes adds, serializes,
 * reads back to the same bytes, and merges as its window allows.
 */
#include "fuzz_util.h"
#include "sketch.h"

/* The generations' dumps' checksums, where their records are whole, then
 * the checksum of the whole (docs/aging-bloom.md). */
static void fix_checksums(uint8_t *buf, size_t len)
{
    if (len < SK_AB_HEADER_SIZE)
        return;
    size_t at = SK_AB_HEADER_SIZE;
    for (unsigned i = 0; i < buf[SK_AB_OFF_GENERATIONS] && len - at >= SK_AB_GEN_OFF_DUMP; i++) {
        uint64_t dump = sk_load_le64(buf + at + SK_AB_GEN_OFF_LENGTH);
        at += SK_AB_GEN_OFF_DUMP;
        if (dump > len - at)
            break;
        fuzz_fix_bloom_dump_checksums(buf + at, (size_t)dump);
        at += (size_t)dump;
    }
    fuzz_fix_xxh3_checksum(buf, len, SK_AB_OFF_CHECKSUM, SK_AB_HEADER_SIZE);
}

static uint8_t *serialized(const sk_aging_bloom *f, size_t *len)
{
    uint64_t size;
    FUZZ_CHECK(sk_aging_bloom_serialized_size(f, &size) == SK_OK);
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(sk_aging_bloom_serialize(f, buf, size, len) == SK_OK && *len == size);
    return buf;
}

static void behave(sk_aging_bloom *f, const uint8_t *bytes, size_t len)
{
    size_t len2;
    uint8_t *again = serialized(f, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    free(again);

    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(f, &info);
    FUZZ_CHECK(info.generations >= SK_AGING_BLOOM_MIN_GENERATIONS &&
               info.generations <= SK_AGING_BLOOM_MAX_GENERATIONS && info.span > 0);
    const uint64_t times[] = {0, info.newest, info.newest + info.span, UINT64_MAX};
    for (unsigned i = 0; i < 4; i++) {
        int rc = sk_aging_bloom_contains(f, "item", 4, times[i]);
        FUZZ_CHECK(rc == 0 || rc == 1);
    }
    sk_aging_bloom *copy;
    if (sk_aging_bloom_copy(&copy, f) != SK_OK)
        return;
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t now = info.newest + i * (info.span / 8 + 1);
        int rc = sk_aging_bloom_add(copy, &i, sizeof i, now);
        FUZZ_CHECK(rc == 0 || rc == 1 || rc == SK_ENOMEM || rc == SK_EFULL);
        if (rc == 1)
            FUZZ_CHECK(sk_aging_bloom_contains(copy, &i, sizeof i, now) == 1);
    }
    size_t clen, clen2;
    uint8_t *cbytes = serialized(copy, &clen);
    sk_aging_bloom *back;
    FUZZ_CHECK(sk_aging_bloom_deserialize(&back, cbytes, clen, NULL) == SK_OK);
    uint8_t *cagain = serialized(back, &clen2);
    FUZZ_CHECK(clen2 == clen && memcmp(cagain, cbytes, clen) == 0);
    int rc = sk_aging_bloom_merge(back, f);
    FUZZ_CHECK(info.window == 0 ? rc == SK_EINCOMPAT : rc == SK_OK || rc == SK_ENOMEM);
    free(cagain);
    free(cbytes);
    sk_aging_bloom_free(back);
    sk_aging_bloom_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len;
    uint8_t *buf = fuzz_framed(SK_AB_MAGIC, data + 1, size - 1,
                               data[0] & 1 ? fix_checksums : NULL, &len);
    sk_aging_bloom *f;
    if (sk_aging_bloom_deserialize(&f, buf, len, NULL) == SK_OK) {
        behave(f, buf, len);
        sk_aging_bloom_free(f);
    }
    free(buf);
    return 0;
}
