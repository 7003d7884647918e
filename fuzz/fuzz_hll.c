/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_hll.c: sk_hll_deserialize on any bytes, in one format per build:
 * FUZZ_HLL_MAGIC is "SKHL" (sketch's own format) or "HYLL" (Redis's string),
 * put in front of the input so every input reaches that format's reader.
 *
 * The first input byte is a control byte: bit 0 asks for the native
 * checksum to be made right, so the fuzzer gets past it to the body checks.
 * Whatever reads without error must behave: it serializes in both formats
 * and reads back to the same count, and merges, folds, adds and estimates.
 */
#include "fuzz_util.h"
#include "sketch.h"

#ifndef FUZZ_HLL_MAGIC
#define FUZZ_HLL_MAGIC "SKHL"
#endif

static void round_trip(const sk_hll *h, sk_hll_format format)
{
    uint64_t cap;
    size_t len;
    int rc = sk_hll_serialized_size(h, format, &cap);
    if (rc != SK_OK) {
        FUZZ_CHECK(rc == SK_EINCOMPAT && format == SK_HLL_REDIS && sk_hll_precision(h) < 14);
        return;
    }
    uint8_t *buf = malloc(cap);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(sk_hll_serialize(h, format, buf, cap, &len) == SK_OK);
    FUZZ_CHECK(len == cap);
    sk_hll *back;
    sk_hll_format got;
    FUZZ_CHECK(sk_hll_deserialize(&back, buf, len, &got, NULL) == SK_OK);
    FUZZ_CHECK(got == format);
    if (format == SK_HLL_NATIVE) {
        FUZZ_CHECK(sk_hll_precision(back) == sk_hll_precision(h));
        FUZZ_CHECK(sk_hll_count(back) == sk_hll_count(h));
        /* A second trip gives the same bytes. */
        uint8_t *again = malloc(cap);
        size_t len2;
        FUZZ_CHECK(again != NULL);
        FUZZ_CHECK(sk_hll_serialize(back, format, again, cap, &len2) == SK_OK);
        FUZZ_CHECK(len2 == len && memcmp(again, buf, len) == 0);
        free(again);
    } else {
        sk_hll *folded;
        FUZZ_CHECK(sk_hll_copy(&folded, h) == SK_OK);
        FUZZ_CHECK(sk_hll_fold(folded, 14) == SK_OK);
        FUZZ_CHECK(sk_hll_count(back) == sk_hll_count(folded));
        sk_hll_free(folded);
    }
    sk_hll_free(back);
    free(buf);
}

/* A comparison of any two sketches is numbers in order: no NaN, bounds
 * around the estimate, fractions within [0, 1]. */
static void check_comparison(const sk_hll *a, const sk_hll *b)
{
    sk_hll_comparison c;
    FUZZ_CHECK(sk_hll_compare(a, b, &c) == SK_OK);
    const sk_hll_part *parts[] = {&c.either, &c.both, &c.a_only, &c.b_only, &c.jaccard,
                                  &c.retained};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        const sk_hll_part *part = parts[i];
        FUZZ_CHECK(part->estimate >= 0 && part->standard_error >= 0);
        for (int k = 0; k < 3; k++)
            FUZZ_CHECK(part->lower[k] <= part->estimate && part->estimate <= part->upper[k]);
        if (i >= 4)
            FUZZ_CHECK(part->upper[2] <= 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t control = data[0];
    data++, size--;
    uint8_t *buf = malloc(size + 4);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, FUZZ_HLL_MAGIC, 4);
    if (size > 0)
        memcpy(buf + 4, data, size);
    if ((control & 1) && memcmp(FUZZ_HLL_MAGIC, "SKHL", 4) == 0)
        fuzz_fix_hll_checksum(buf, size + 4);
    /* A cut-off prefix must fail cleanly too: one read of every length
     * would be quadratic, so the control byte picks one. */
    sk_hll *h = NULL;
    sk_hll_format format;
    size_t cut = (size + 4) * (control >> 1) / 128;
    if (sk_hll_deserialize(&h, buf, cut, &format, NULL) == SK_OK)
        sk_hll_free(h);
    int rc = sk_hll_deserialize(&h, buf, size + 4, &format, NULL);
    if (rc != SK_OK) {
        FUZZ_CHECK(h == NULL);
        FUZZ_CHECK(rc < 0 && sk_strerror(rc) != NULL);
        free(buf);
        return 0;
    }
    FUZZ_CHECK(format == (memcmp(FUZZ_HLL_MAGIC, "SKHL", 4) == 0 ? SK_HLL_NATIVE
                                                                  : SK_HLL_REDIS));
    unsigned p = sk_hll_precision(h);
    FUZZ_CHECK(p >= SK_HLL_MIN_PRECISION && p <= SK_HLL_MAX_PRECISION);
    uint64_t count = sk_hll_count(h);
    sk_hll_estimate est;
    sk_hll_estimate_with_bounds(h, &est);
    FUZZ_CHECK(est.count == count);
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    FUZZ_CHECK(info.memory > 0);
    FUZZ_CHECK(sk_hll_serialized_encoding(h, SK_HLL_NATIVE) >= 0);
    round_trip(h, SK_HLL_NATIVE);
    round_trip(h, SK_HLL_REDIS);

    /* Merging into an empty sketch of the same precision changes nothing. */
    sk_hll *u;
    FUZZ_CHECK(sk_hll_new(&u, p) == SK_OK);
    FUZZ_CHECK(sk_hll_merge(u, h) == SK_OK);
    FUZZ_CHECK(sk_hll_count(u) == count);
    /* Any registers compare with themselves and with an empty sketch. */
    check_comparison(h, h);
    check_comparison(h, u);
    /* Adding items keeps it working; folding to the lowest precision too. */
    for (unsigned i = 0; i < 64; i++)
        FUZZ_CHECK(sk_hll_add(u, &i, sizeof i) >= 0);
    FUZZ_CHECK(sk_hll_merge(h, u) == SK_OK);
    FUZZ_CHECK(sk_hll_fold(u, SK_HLL_MIN_PRECISION) == SK_OK);
    (void)sk_hll_count(u);
    round_trip(u, SK_HLL_NATIVE);
    sk_hll_free(u);
    sk_hll_free(h);
    free(buf);
    return 0;
}
