/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo_format.c: a cuckoo filter as one byte string and back (SKCF, the
 * layout src/common/format.h gives and docs/cuckoo-format.md explains),
 * and in the pieces of CF.SCANDUMP and CF.LOADCHUNK: RedisBloom's 38-byte
 * header, then the slots, so that either server takes the other's dump.
 *
 * A dump's iterator is one more than the slot offset where the next piece
 * starts; a piece ends at its sub-filter's end, so that each piece is one
 * array's bytes, and a restore refuses one that is not, as RedisBloom's
 * does. A restore takes pieces in order (a piece may repeat what came
 * before, as a retried one does), and is complete when the last slot has
 * come.
 */
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/format.h"
#include "cuckoo_internal.h"

/* XXH3-64 of the header's first SK_CUCKOO_OFF_CHECKSUM bytes and the slots. */
static uint64_t checksum(const sk_cuckoo *c, const uint8_t *header)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_CUCKOO_OFF_CHECKSUM);
    for (uint32_t i = 0; i < c->filters; i++)
        XXH3_64bits_update(&state, c->subs[i].slots, c->subs[i].buckets * c->bucket_size);
    return XXH3_64bits_digest(&state);
}

int sk_cuckoo_serialized_size(const sk_cuckoo *c, uint64_t *size)
{
    if (c == NULL || size == NULL)
        return SK_EINVAL;
    *size = SK_CUCKOO_HEADER_SIZE + sk__cuckoo_slot_bytes(c);
    return SK_OK;
}

static void write_header(const sk_cuckoo *c, uint8_t *out)
{
    memset(out, 0, SK_CUCKOO_HEADER_SIZE);
    memcpy(out + SK_CUCKOO_OFF_MAGIC, SK_CUCKOO_MAGIC, 4);
    out[SK_CUCKOO_OFF_VERSION] = SK_CUCKOO_VERSION;
    out[SK_CUCKOO_OFF_HASH] = SK_CUCKOO_HASH_MURMUR64A;
    out[SK_CUCKOO_OFF_BUCKET_SIZE] = (uint8_t)c->bucket_size;
    sk_store_le32(out + SK_CUCKOO_OFF_FILTERS, c->filters);
    sk_store_le32(out + SK_CUCKOO_OFF_EXPANSION, c->expansion);
    sk_store_le32(out + SK_CUCKOO_OFF_ITERATIONS, c->max_iterations);
    sk_store_le64(out + SK_CUCKOO_OFF_BUCKETS, c->buckets);
    sk_store_le64(out + SK_CUCKOO_OFF_ITEMS, c->items);
    sk_store_le64(out + SK_CUCKOO_OFF_DELETES, c->deletes);
    sk_store_le64(out + SK_CUCKOO_OFF_RESTORED,
                  c->restoring ? c->restored : sk__cuckoo_slot_bytes(c));
}

int sk_cuckoo_serialize(const sk_cuckoo *c, void *buf, size_t cap, size_t *len)
{
    if (c == NULL || (buf == NULL && cap > 0))
        return SK_EINVAL;
    uint64_t size = SK_CUCKOO_HEADER_SIZE + sk__cuckoo_slot_bytes(c);
    if (size > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf;
    write_header(c, out);
    uint8_t *p = out + SK_CUCKOO_HEADER_SIZE;
    for (uint32_t i = 0; i < c->filters; i++) {
        size_t bytes = (size_t)(c->subs[i].buckets * c->bucket_size);
        memcpy(p, c->subs[i].slots, bytes);
        p += bytes;
    }
    sk_store_le64(out + SK_CUCKOO_OFF_CHECKSUM, checksum(c, out));
    if (len != NULL)
        *len = (size_t)size;
    return SK_OK;
}

int sk_cuckoo_deserialize(sk_cuckoo **out, const void *buf, size_t len,
                          const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL && len > 0)
        return SK_EINVAL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_CUCKOO_OFF_MAGIC, SK_CUCKOO_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_CUCKOO_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_CUCKOO_OFF_VERSION] != SK_CUCKOO_VERSION)
        return SK_EVERSION;
    uint64_t buckets = sk_load_le64(in + SK_CUCKOO_OFF_BUCKETS);
    uint32_t filters = sk_load_le32(in + SK_CUCKOO_OFF_FILTERS);
    uint32_t expansion = sk_load_le32(in + SK_CUCKOO_OFF_EXPANSION);
    uint32_t iterations = sk_load_le32(in + SK_CUCKOO_OFF_ITERATIONS);
    uint32_t b = in[SK_CUCKOO_OFF_BUCKET_SIZE];
    if (in[SK_CUCKOO_OFF_HASH] != SK_CUCKOO_HASH_MURMUR64A || in[SK_CUCKOO_OFF_RESERVED] ||
        sk_load_le32(in + SK_CUCKOO_OFF_RESERVED2) ||
        !sk__cuckoo_shape_ok(buckets, b, iterations, expansion, filters))
        return SK_ECORRUPT;
    /* The slots must all be there before anything is allocated for them. */
    uint64_t slots = 0;
    for (uint32_t i = 0; i < filters; i++) {
        uint64_t n = sk__cuckoo_sub_buckets(buckets, expansion, i);
        if (n == 0)
            return SK_ECORRUPT;
        slots += n * b;
        if (slots > len - SK_CUCKOO_HEADER_SIZE)
            return SK_ETRUNCATED;
    }
    if (slots != len - SK_CUCKOO_HEADER_SIZE)
        return SK_ETRUNCATED;
    uint64_t restored = sk_load_le64(in + SK_CUCKOO_OFF_RESTORED);
    if (restored > slots)
        return SK_ECORRUPT;
    sk_cuckoo *c;
    int rc = sk__cuckoo_alloc(&c, buckets, b, iterations, expansion, filters, 0, allocator);
    if (rc != SK_OK)
        return rc == SK_EINVAL ? SK_ECORRUPT : rc;
    const uint8_t *p = in + SK_CUCKOO_HEADER_SIZE;
    for (uint32_t i = 0; i < filters; i++) {
        size_t bytes = (size_t)(c->subs[i].buckets * b);
        memcpy(c->subs[i].slots, p, bytes);
        p += bytes;
    }
    if (checksum(c, in) != sk_load_le64(in + SK_CUCKOO_OFF_CHECKSUM)) {
        sk_cuckoo_free(c);
        return SK_ECHECKSUM;
    }
    c->items = sk_load_le64(in + SK_CUCKOO_OFF_ITEMS);
    c->deletes = sk_load_le64(in + SK_CUCKOO_OFF_DELETES);
    c->restoring = restored < slots;
    c->restored = restored;
    *out = c;
    return SK_OK;
}

/* ---- CF.SCANDUMP and CF.LOADCHUNK --------------------------------------- */

void sk_cuckoo_dump_header(const sk_cuckoo *c, uint8_t out[SK_CUCKOO_DUMP_HEADER_SIZE])
{
    sk_store_le64(out + SK_CUCKOO_DUMP_OFF_ITEMS, c->items);
    sk_store_le64(out + SK_CUCKOO_DUMP_OFF_BUCKETS, c->buckets);
    sk_store_le64(out + SK_CUCKOO_DUMP_OFF_DELETES, c->deletes);
    sk_store_le64(out + SK_CUCKOO_DUMP_OFF_FILTERS, c->filters);
    out[SK_CUCKOO_DUMP_OFF_BUCKET_SIZE] = (uint8_t)c->bucket_size;
    out[SK_CUCKOO_DUMP_OFF_BUCKET_SIZE + 1] = 0;
    out[SK_CUCKOO_DUMP_OFF_ITERATIONS] = (uint8_t)c->max_iterations;
    out[SK_CUCKOO_DUMP_OFF_ITERATIONS + 1] = (uint8_t)(c->max_iterations >> 8);
    out[SK_CUCKOO_DUMP_OFF_EXPANSION] = (uint8_t)c->expansion;
    out[SK_CUCKOO_DUMP_OFF_EXPANSION + 1] = (uint8_t)(c->expansion >> 8);
}

/* The sub-filter holding slot offset *at, which becomes the offset within
 * it; -1 past the last. Sub-filters of one size are found by a division;
 * growing ones number at most 56 before they pass SK_CUCKOO_MAX_BUCKETS. */
static int locate(const sk_cuckoo *c, uint64_t *at)
{
    if (c->expansion <= 1) {
        uint64_t bytes = c->buckets * c->bucket_size, i = *at / bytes;
        if (i >= c->filters)
            return -1;
        *at -= i * bytes;
        return (int)i;
    }
    for (uint32_t i = 0; i < c->filters; i++) {
        uint64_t bytes = c->subs[i].buckets * c->bucket_size;
        if (*at < bytes)
            return (int)i;
        *at -= bytes;
    }
    return -1;
}

int sk_cuckoo_dump_piece(const sk_cuckoo *c, uint64_t *iterator, size_t max, const void **piece,
                         size_t *len)
{
    if (c == NULL || iterator == NULL || *iterator == 0 || max == 0)
        return SK_EINVAL;
    uint64_t at = *iterator - 1;
    int i = locate(c, &at);
    if (i < 0)
        return 0;
    uint64_t rest = c->subs[i].buckets * c->bucket_size - at;
    *len = rest < max ? (size_t)rest : max;
    *piece = c->subs[i].slots + at;
    *iterator += *len;
    return 1;
}

static uint16_t load_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

int sk_cuckoo_restore_begin(sk_cuckoo **out, const void *header, size_t len, uint64_t max_memory,
                            const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (header == NULL || len != SK_CUCKOO_DUMP_HEADER_SIZE)
        return SK_ECORRUPT;
    const uint8_t *in = header;
    uint64_t filters = sk_load_le64(in + SK_CUCKOO_DUMP_OFF_FILTERS);
    uint64_t buckets = sk_load_le64(in + SK_CUCKOO_DUMP_OFF_BUCKETS);
    uint32_t b = load_le16(in + SK_CUCKOO_DUMP_OFF_BUCKET_SIZE);
    uint32_t iterations = load_le16(in + SK_CUCKOO_DUMP_OFF_ITERATIONS);
    uint32_t expansion = load_le16(in + SK_CUCKOO_DUMP_OFF_EXPANSION);
    if (!sk__cuckoo_shape_ok(buckets, b, iterations, expansion, filters))
        return SK_ECORRUPT;
    sk_cuckoo *c;
    int rc = sk__cuckoo_alloc(&c, buckets, b, iterations, expansion, (uint32_t)filters,
                              max_memory, allocator);
    if (rc != SK_OK)
        return rc == SK_EINVAL ? SK_ECORRUPT : rc;
    c->items = sk_load_le64(in + SK_CUCKOO_DUMP_OFF_ITEMS);
    c->deletes = sk_load_le64(in + SK_CUCKOO_DUMP_OFF_DELETES);
    c->restoring = 1;
    c->restored = 0;
    *out = c;
    return SK_OK;
}

int sk_cuckoo_restore_piece(sk_cuckoo *c, uint64_t iterator, const void *piece, size_t len)
{
    if (c == NULL || (piece == NULL && len > 0))
        return SK_EINVAL;
    if (!sk_cuckoo_restoring(c))
        return SK_EINCOMPAT;
    uint64_t total = sk__cuckoo_slot_bytes(c);
    if (len == 0 || iterator == 0 || iterator - 1 < len)
        return SK_ECORRUPT;
    uint64_t start = iterator - 1 - len;
    if (start > c->restored || iterator - 1 > total)
        return SK_ECORRUPT;
    uint64_t within = start;
    int i = locate(c, &within);
    if (len > c->subs[i].buckets * c->bucket_size - within)
        return SK_ECORRUPT; /* it crosses into the next sub-filter */
    memcpy(c->subs[i].slots + within, piece, len);
    uint64_t at = start + len;
    if (at > c->restored)
        c->restored = at;
    c->restoring = c->restored < total;
    return SK_OK;
}
