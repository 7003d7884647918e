/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_format.c: a top-k sketch as one byte string and back, in the layout
 * src/common/format.h gives (SK_TOPK_*) and docs/topk-format.md explains:
 * a 48-byte header, the buckets, the heap's entries, then their items.
 */
#include <math.h>
#include <string.h>

/* XXH3_state_t: the checksum runs over two separate spans. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/murmur2.h"
#include "topk_internal.h"

static uint64_t body_size(const sk_topk *t)
{
    uint64_t items = 0;
    for (uint32_t i = 0; i < t->k; i++)
        if (t->heap[i].item != NULL)
            items += t->heap[i].len;
    return (uint64_t)t->width * t->depth * SK_TOPK_BUCKET_SIZE +
           (uint64_t)t->k * SK_TOPK_ENTRY_SIZE + items;
}

int sk_topk_serialized_size(const sk_topk *t, uint64_t *size)
{
    if (t == NULL || size == NULL)
        return SK_EINVAL;
    *size = SK_TOPK_HEADER_SIZE + body_size(t);
    return SK_OK;
}

/* XXH3-64 of the header's first SK_TOPK_OFF_CHECKSUM bytes and the body. */
static uint64_t checksum(const uint8_t *header, const uint8_t *body, size_t body_len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_TOPK_OFF_CHECKSUM);
    XXH3_64bits_update(&state, body, body_len);
    return XXH3_64bits_digest(&state);
}

int sk_topk_serialize(const sk_topk *t, void *buf, size_t cap, size_t *len)
{
    if (t == NULL || (buf == NULL && cap > 0))
        return SK_EINVAL;
    uint64_t body = body_size(t);
    if (SK_TOPK_HEADER_SIZE + body > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf;
    memset(out, 0, SK_TOPK_HEADER_SIZE);
    memcpy(out + SK_TOPK_OFF_MAGIC, SK_TOPK_MAGIC, 4);
    out[SK_TOPK_OFF_VERSION] = SK_TOPK_VERSION;
    out[SK_TOPK_OFF_HASH] = SK_TOPK_HASH_MURMUR2;
    sk_store_le32(out + SK_TOPK_OFF_K, t->k);
    sk_store_le32(out + SK_TOPK_OFF_WIDTH, t->width);
    sk_store_le32(out + SK_TOPK_OFF_DEPTH, t->depth);
    uint64_t decay_bits;
    memcpy(&decay_bits, &t->decay, sizeof decay_bits);
    sk_store_le64(out + SK_TOPK_OFF_DECAY, decay_bits);
    sk_store_le64(out + SK_TOPK_OFF_RNG, t->rng);
    uint8_t *p = out + SK_TOPK_HEADER_SIZE;
    size_t buckets = (size_t)t->width * t->depth;
    for (size_t i = 0; i < buckets; i++, p += SK_TOPK_BUCKET_SIZE) {
        sk_store_le32(p + SK_TOPK_BUCKET_OFF_FP, t->buckets[i].fp);
        sk_store_le32(p + SK_TOPK_BUCKET_OFF_COUNT, t->buckets[i].count);
    }
    for (uint32_t i = 0; i < t->k; i++, p += SK_TOPK_ENTRY_SIZE) {
        const struct sk__topk_entry *e = &t->heap[i];
        sk_store_le32(p + SK_TOPK_ENTRY_OFF_FP, e->fp);
        sk_store_le32(p + SK_TOPK_ENTRY_OFF_COUNT, e->count);
        sk_store_le32(p + SK_TOPK_ENTRY_OFF_LEN, e->item != NULL ? e->len : SK_TOPK_NO_ITEM);
    }
    for (uint32_t i = 0; i < t->k; i++) {
        const struct sk__topk_entry *e = &t->heap[i];
        if (e->item != NULL && e->len > 0) {
            memcpy(p, e->item, e->len);
            p += e->len;
        }
    }
    sk_store_le64(out + SK_TOPK_OFF_CHECKSUM,
                  checksum(out, out + SK_TOPK_HEADER_SIZE, (size_t)body));
    if (len != NULL)
        *len = (size_t)(SK_TOPK_HEADER_SIZE + body);
    return SK_OK;
}

/* The heap's entries and items into t, checked against what the header
 * said and what is left of the input. */
static int read_heap(sk_topk *t, const uint8_t *entries, const uint8_t *items, size_t items_len)
{
    size_t at = 0;
    for (uint32_t i = 0; i < t->k; i++) {
        const uint8_t *p = entries + (size_t)i * SK_TOPK_ENTRY_SIZE;
        uint32_t fp = sk_load_le32(p + SK_TOPK_ENTRY_OFF_FP);
        uint32_t count = sk_load_le32(p + SK_TOPK_ENTRY_OFF_COUNT);
        uint32_t len = sk_load_le32(p + SK_TOPK_ENTRY_OFF_LEN);
        if (len == SK_TOPK_NO_ITEM) {
            if (fp != 0 || count != 0)
                return SK_ECORRUPT;
            continue;
        }
        /* An entry's fingerprint is its item's: queries find it by both. */
        if (len > items_len - at || fp != sk_murmur2(items + at, len, SK__TOPK_FP_SEED))
            return SK_ECORRUPT;
        char *item = sk__topk_item_copy(t, items + at, len);
        if (item == NULL)
            return SK_ENOMEM;
        t->heap[i] = (struct sk__topk_entry){fp, count, len, item};
        at += len;
    }
    return at == items_len ? SK_OK : SK_ECORRUPT;
}

int sk_topk_deserialize(sk_topk **out, const void *buf, size_t len, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL && len > 0)
        return SK_EINVAL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_TOPK_OFF_MAGIC, SK_TOPK_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_TOPK_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_TOPK_OFF_VERSION] != SK_TOPK_VERSION)
        return SK_EVERSION;
    if (in[SK_TOPK_OFF_HASH] != SK_TOPK_HASH_MURMUR2 || in[SK_TOPK_OFF_RESERVED] ||
        in[SK_TOPK_OFF_RESERVED + 1] || sk_load_le32(in + SK_TOPK_OFF_RESERVED2))
        return SK_ECORRUPT;
    uint32_t k = sk_load_le32(in + SK_TOPK_OFF_K);
    uint32_t width = sk_load_le32(in + SK_TOPK_OFF_WIDTH);
    uint32_t depth = sk_load_le32(in + SK_TOPK_OFF_DEPTH);
    uint64_t decay_bits = sk_load_le64(in + SK_TOPK_OFF_DECAY);
    double decay;
    memcpy(&decay, &decay_bits, sizeof decay);
    if (k == 0 || width == 0 || depth == 0 || !(decay > 0 && decay <= 1) ||
        k > SK_TOPK_MAX_K || (uint64_t)width * depth > SK_TOPK_MAX_BUCKETS)
        return SK_ECORRUPT;
    /* The fixed parts must be there before anything is allocated for them. */
    uint64_t fixed = (uint64_t)width * depth * SK_TOPK_BUCKET_SIZE +
                     (uint64_t)k * SK_TOPK_ENTRY_SIZE;
    if (fixed > len - SK_TOPK_HEADER_SIZE)
        return SK_ETRUNCATED;
    size_t body = len - SK_TOPK_HEADER_SIZE;
    if (checksum(in, in + SK_TOPK_HEADER_SIZE, body) != sk_load_le64(in + SK_TOPK_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    sk_topk *t;
    int rc = sk__topk_alloc(&t, k, width, depth, decay, 0, allocator);
    if (rc != SK_OK)
        return rc;
    t->rng = sk_load_le64(in + SK_TOPK_OFF_RNG);
    const uint8_t *p = in + SK_TOPK_HEADER_SIZE;
    size_t buckets = (size_t)width * depth;
    for (size_t i = 0; i < buckets; i++, p += SK_TOPK_BUCKET_SIZE)
        t->buckets[i] = (struct sk__topk_bucket){sk_load_le32(p + SK_TOPK_BUCKET_OFF_FP),
                                                 sk_load_le32(p + SK_TOPK_BUCKET_OFF_COUNT)};
    const uint8_t *items = p + (size_t)k * SK_TOPK_ENTRY_SIZE;
    rc = read_heap(t, p, items, (size_t)(in + len - items));
    if (rc != SK_OK) {
        sk_topk_free(t);
        return rc;
    }
    *out = t;
    return SK_OK;
}
