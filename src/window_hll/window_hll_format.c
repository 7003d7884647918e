/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_hll_format.c: a sliding-window HyperLogLog as bytes, and files of
 * them. The layout is src/common/format.h's SK_WH_* (docs/window-hll-format.md):
 * a header, then every register's live pairs, each written as its age
 * (newest slot - slot) and rank, so the bytes do not depend on where the
 * sketch's internal base stood. Expired pairs are not written. A reader
 * checks every pair against the frontier's order, so that any byte string
 * gives a sketch whose lists the algorithm can trust, or an error.
 */
#include <errno.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/alloc.h"
#include "common/atomic_file.h"
#include "common/format.h"
#include "hll/hll_internal.h"
#include "window_hll/window_hll_internal.h"

/* The largest form: every register full, at the finest precision. */
#define MAX_SERIALIZED_SIZE                                                                   \
    (SK_WH_HEADER_SIZE +                                                                      \
     ((size_t)1 << SK_HLL_MAX_PRECISION) * (1 + SK__WH_MAX_PAIRS * SK_WH_PAIR_SIZE))

static uint64_t checksum(const uint8_t *header, const uint8_t *body, size_t body_len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_WH_OFF_CHECKSUM);
    XXH3_64bits_update(&state, body, body_len);
    return XXH3_64bits_digest(&state);
}

/* The first live pair of a list: the live pairs are its tail. */
static unsigned live_from(const sk_window_hll *w, const uint32_t *list, unsigned n)
{
    uint64_t cutoff = sk__wh_cutoff(w, w->newest);
    unsigned i = 0;
    while (i < n && sk__wh_pair_slot(w, list[i]) < cutoff)
        i++;
    return i;
}

static uint64_t live_count(const sk_window_hll *w)
{
    uint64_t pairs = 0;
    uint32_t cursor = 0, j;
    const uint32_t *list;
    unsigned n;
    while (sk__wh_next(w, &cursor, &j, &list, &n))
        pairs += n - live_from(w, list, n);
    return pairs;
}

int sk_window_hll_serialized_size(const sk_window_hll *w, uint64_t *size)
{
    if (w == NULL || size == NULL)
        return SK_EINVAL;
    *size = SK_WH_HEADER_SIZE + sk__hll_registers(w->precision) +
            live_count(w) * SK_WH_PAIR_SIZE;
    return SK_OK;
}

int sk_window_hll_serialize(const sk_window_hll *w, void *buf, size_t cap, size_t *len)
{
    uint64_t size;
    if (buf == NULL && cap > 0)
        return SK_EINVAL;
    int rc = sk_window_hll_serialized_size(w, &size);
    if (rc != SK_OK)
        return rc;
    if (size > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf, *body = out + SK_WH_HEADER_SIZE, *at = body;
    uint32_t m = sk__hll_registers(w->precision), cursor = 0, next = 0, j;
    const uint32_t *list;
    unsigned n;
    /* Registers without pairs are a zero byte each. */
    while (sk__wh_next(w, &cursor, &j, &list, &n)) {
        memset(at, 0, j - next);
        at += j - next;
        next = j + 1;
        unsigned first = live_from(w, list, n);
        *at++ = (uint8_t)(n - first);
        for (unsigned i = first; i < n; i++) {
            uint64_t age = w->newest - sk__wh_pair_slot(w, list[i]);
            sk_store_le32(at, sk__wh_pair(age, sk__wh_pair_rank(list[i])));
            at += SK_WH_PAIR_SIZE;
        }
    }
    memset(at, 0, m - next);
    at += m - next;
    memset(out, 0, SK_WH_HEADER_SIZE);
    memcpy(out + SK_WH_OFF_MAGIC, SK_WH_MAGIC, 4);
    out[SK_WH_OFF_VERSION] = SK_WH_VERSION;
    out[SK_WH_OFF_PRECISION] = (uint8_t)w->precision;
    out[SK_WH_OFF_HASH] = SK_WH_HASH_MURMUR64A_REDIS;
    out[SK_WH_OFF_FLAGS] = w->empty ? SK_WH_FLAG_EMPTY : 0;
    sk_store_le64(out + SK_WH_OFF_RESOLUTION, w->resolution);
    sk_store_le64(out + SK_WH_OFF_HORIZON, w->horizon);
    sk_store_le64(out + SK_WH_OFF_NEWEST, w->empty ? 0 : w->newest);
    sk_store_le64(out + SK_WH_OFF_PAIRS, (size - SK_WH_HEADER_SIZE - m) / SK_WH_PAIR_SIZE);
    sk_store_le64(out + SK_WH_OFF_CHECKSUM, checksum(out, body, (size_t)(at - body)));
    *len = (size_t)size;
    return SK_OK;
}

/* Reads one register's list at *at (end: the body's end), checking the
 * frontier's order, into pairs re-encoded against w's base. */
static int read_list(const sk_window_hll *w, const uint8_t **at, const uint8_t *end,
                     uint32_t *pairs, unsigned *n)
{
    if (*at >= end)
        return SK_ETRUNCATED;
    unsigned count = *(*at)++, max_rank = sk__hll_max_rank(w->precision);
    if (count > max_rank || count > w->slots || (w->empty && count != 0))
        return SK_ECORRUPT;
    if ((size_t)(end - *at) < (size_t)count * SK_WH_PAIR_SIZE)
        return SK_ETRUNCATED;
    uint64_t prev_age = 0;
    unsigned prev_rank = 0;
    for (unsigned i = 0; i < count; i++, *at += SK_WH_PAIR_SIZE) {
        uint32_t word = sk_load_le32(*at);
        uint64_t age = word >> SK__WH_RANK_BITS;
        unsigned rank = sk__wh_pair_rank(word);
        if (rank == 0 || rank > max_rank || age >= w->slots || age > w->newest)
            return SK_ECORRUPT;
        if (i > 0 && (age >= prev_age || rank >= prev_rank))
            return SK_ECORRUPT;
        prev_age = age;
        prev_rank = rank;
        pairs[i] = sk__wh_pair(w->newest - age - w->base, rank);
    }
    *n = count;
    return SK_OK;
}

static int read_body(sk_window_hll *w, const uint8_t *body, size_t len, uint64_t pairs)
{
    const uint8_t *at = body, *end = body + len;
    uint32_t m = sk__hll_registers(w->precision), list[SK__WH_MAX_PAIRS];
    for (uint32_t j = 0; j < m; j++) {
        unsigned n;
        int rc = read_list(w, &at, end, list, &n);
        if (rc == SK_OK)
            rc = sk__wh_store(w, j, list, n);
        if (rc != SK_OK)
            return rc;
    }
    if (at != end)
        return SK_ETRUNCATED;
    return w->pairs == pairs ? SK_OK : SK_ECORRUPT;
}

int sk_window_hll_deserialize(sk_window_hll **out, const void *buf, size_t len,
                              const sk_allocator *allocator)
{
    if (out == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    *out = NULL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_WH_OFF_MAGIC, SK_WH_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_WH_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_WH_OFF_VERSION] != SK_WH_VERSION)
        return SK_EVERSION;
    unsigned precision = in[SK_WH_OFF_PRECISION], flags = in[SK_WH_OFF_FLAGS];
    uint64_t resolution = sk_load_le64(in + SK_WH_OFF_RESOLUTION);
    uint64_t horizon = sk_load_le64(in + SK_WH_OFF_HORIZON);
    uint64_t newest = sk_load_le64(in + SK_WH_OFF_NEWEST);
    uint64_t pairs = sk_load_le64(in + SK_WH_OFF_PAIRS);
    const uint8_t *body = in + SK_WH_HEADER_SIZE;
    size_t body_len = len - SK_WH_HEADER_SIZE;
    if (checksum(in, body, body_len) != sk_load_le64(in + SK_WH_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    if (in[SK_WH_OFF_HASH] != SK_WH_HASH_MURMUR64A_REDIS || (flags & ~SK_WH_FLAG_EMPTY) != 0 ||
        ((flags & SK_WH_FLAG_EMPTY) && newest != 0) ||
        newest > SK_WINDOW_HLL_MAX_TIME / (resolution ? resolution : 1))
        return SK_ECORRUPT;
    sk_window_hll *w;
    int rc = sk__wh_new(&w, precision, horizon, resolution, 0, allocator);
    if (rc != SK_OK)
        return rc == SK_ENOMEM ? rc : SK_ECORRUPT;
    w->empty = (flags & SK_WH_FLAG_EMPTY) != 0;
    w->newest = newest;
    w->base = sk__wh_cutoff(w, newest);
    if ((rc = read_body(w, body, body_len, pairs)) != SK_OK) {
        sk_window_hll_free(w);
        return rc;
    }
    *out = w;
    return SK_OK;
}

int sk_window_hll_save(const sk_window_hll *w, const char *path)
{
    uint64_t size;
    if (path == NULL)
        return SK_EINVAL;
    int rc = sk_window_hll_serialized_size(w, &size);
    if (rc != SK_OK)
        return rc;
    uint8_t *buf = sk__alloc(&w->alloc, (size_t)size);
    if (buf == NULL)
        return SK_ENOMEM;
    size_t len;
    rc = sk_window_hll_serialize(w, buf, (size_t)size, &len);
    if (rc == SK_OK)
        rc = sk__atomic_write_bytes(path, buf, len);
    int saved_errno = errno;
    sk__free(&w->alloc, buf, (size_t)size);
    errno = saved_errno;
    return rc;
}

static int parse_sketch(void *out, const uint8_t *bytes, size_t len, const sk_allocator *a,
                        void *ctx)
{
    (void)ctx;
    return sk_window_hll_deserialize(out, bytes, len, a);
}

int sk_window_hll_open(sk_window_hll **out, const char *path, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    return sk__open_file(path, MAX_SERIALIZED_SIZE, allocator, parse_sketch, out, NULL);
}
