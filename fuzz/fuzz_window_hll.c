/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_window_hll.c: sk_window_hll_deserialize on "SKWH" + any bytes.
 *
 * The first input byte is a control byte: bit 0 asks for the checksum to be
 * made right, so that mutations reach the checks behind it. Whatever reads
 * without error must behave: it serializes back to the very bytes it was
 * read from; counts of every window answer and agree with the snapshot's
 * plain sketch; reads change nothing; a copy takes adds at, before and
 * far beyond its newest time, and merges with the original.
 */
#include "fuzz_util.h"
#include "sketch.h"

static uint8_t *bytes_of(const sk_window_hll *w, size_t *len)
{
    uint64_t size;
    FUZZ_CHECK(sk_window_hll_serialized_size(w, &size) == SK_OK);
    uint8_t *buf = malloc(size);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(sk_window_hll_serialize(w, buf, size, len) == SK_OK && *len == size);
    return buf;
}

static void read_windows(const sk_window_hll *w)
{
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    sk_hll *h;
    FUZZ_CHECK(sk_hll_new(&h, info.precision) == SK_OK);
    const uint64_t windows[] = {1, info.resolution, info.horizon / 3 + 1, info.horizon};
    for (size_t k = 0; k < sizeof windows / sizeof *windows; k++) {
        uint64_t count, now = info.newest + (k & 1) * info.resolution;
        if (windows[k] > info.horizon || now > SK_WINDOW_HLL_MAX_TIME)
            continue;
        FUZZ_CHECK(sk_window_hll_count(w, windows[k], now, &count) == SK_OK);
        FUZZ_CHECK(sk_window_hll_snapshot(w, windows[k], now, h) == SK_OK);
        FUZZ_CHECK(sk_hll_count(h) == count);
    }
    sk_hll_free(h);
}

static void behave(const sk_window_hll *w, const uint8_t *bytes, size_t len)
{
    size_t len2;
    uint8_t *again = bytes_of(w, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    free(again);
    read_windows(w);
    again = bytes_of(w, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0); /* reads changed nothing */
    free(again);

    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    sk_window_hll *copy;
    FUZZ_CHECK(sk_window_hll_copy(&copy, w) == SK_OK);
    const uint64_t times[] = {info.newest, info.newest / 2, info.newest + info.horizon / 2,
                              info.newest + 3 * info.horizon, (UINT64_C(1) << 40) + 5};
    for (int i = 0; i < 40; i++) {
        uint64_t t = times[i % 5];
        if (t > SK_WINDOW_HLL_MAX_TIME)
            continue;
        FUZZ_CHECK(sk_window_hll_add(copy, &i, sizeof i, t) >= 0);
    }
    read_windows(copy);
    FUZZ_CHECK(sk_window_hll_merge(copy, w) == SK_OK);
    read_windows(copy);
    sk_window_hll_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len;
    uint8_t *buf = fuzz_framed(SK_WH_MAGIC, data + 1, size - 1,
                               data[0] & 1 ? fuzz_fix_window_hll_checksum : NULL, &len);
    sk_window_hll *w;
    if (sk_window_hll_deserialize(&w, buf, len, NULL) == SK_OK) {
        behave(w, buf, len);
        sk_window_hll_free(w);
    }
    free(buf);
    return 0;
}
