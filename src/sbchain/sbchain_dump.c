/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbchain_dump.c: a scalable Bloom chain in the pieces of BF.SCANDUMP and
 * back from those of BF.LOADCHUNK, RedisBloom 2.x's bytes exactly, so that
 * either server restores the other's dump.
 *
 * BF.SCANDUMP k 0 gives iterator 1 and the header: 20 bytes of the chain
 * (items, links, options, expansion) and 53 per link (the layout is in
 * sbchain_internal.h and docs/redisbloom-bloom.md), every field
 * little-endian and packed, written byte by byte here so that any machine
 * writes the same. Then the arrays of the links, oldest first, are one
 * stream: the iterator is one more than the offset in that stream where
 * the next piece starts, a piece never crosses from one link's array into
 * the next, and after a piece the iterator is advanced by its length;
 * past the end it is 0. BF.LOADCHUNK is handed each piece with the
 * iterator that came with it, the one after the piece: the piece starts
 * at iterator - 1 - len.
 *
 * A restore checks the header as RedisBloom does (a whole number of links,
 * at least one, each keeping bloom_validate_integrity's rules, only known
 * options, the links' items summing to the chain's) and against our
 * limits before it allocates; it then takes pieces in order (one may
 * repeat bytes already come, as a retried LOADCHUNK does, but none may
 * leave a gap), and is complete when the last array byte has come. Until
 * then adds are refused.
 */
#include <string.h>

#include "common/format.h"
#include "sbchain_internal.h"

size_t sk_sbchain_dump_header_size(const sk_sbchain *c)
{
    return SK__SB_HDR_SIZE + (size_t)c->nlinks * SK__SB_LINK_SIZE;
}

void sk_sbchain_dump_header(const sk_sbchain *c, void *out)
{
    uint8_t *p = out;
    sk_store_le64(p + SK__SB_HDR_OFF_SIZE, c->count);
    sk_store_le32(p + SK__SB_HDR_OFF_NFILTERS, c->nlinks);
    sk_store_le32(p + SK__SB_HDR_OFF_OPTIONS, c->options);
    sk_store_le32(p + SK__SB_HDR_OFF_GROWTH, c->growth);
    for (uint32_t i = 0; i < c->nlinks; i++) {
        const struct sk__sblink *l = &c->links[i];
        uint8_t *q = p + SK__SB_HDR_SIZE + (size_t)i * SK__SB_LINK_SIZE;
        sk_store_le64(q + SK__SB_LINK_OFF_BYTES, l->bytes);
        sk_store_le64(q + SK__SB_LINK_OFF_BITS, l->bits);
        sk_store_le64(q + SK__SB_LINK_OFF_SIZE, l->count);
        sk_store_le_double(q + SK__SB_LINK_OFF_ERROR, l->error);
        sk_store_le_double(q + SK__SB_LINK_OFF_BPE, l->bpe);
        sk_store_le32(q + SK__SB_LINK_OFF_HASHES, l->hashes);
        sk_store_le64(q + SK__SB_LINK_OFF_ENTRIES, l->entries);
        q[SK__SB_LINK_OFF_N2] = l->n2;
    }
}

/* The link holding stream offset *at, which becomes the offset within it;
 * -1 past the last. */
static int locate(const sk_sbchain *c, uint64_t *at)
{
    for (uint32_t i = 0; i < c->nlinks; i++) {
        if (*at < c->links[i].bytes)
            return (int)i;
        *at -= c->links[i].bytes;
    }
    return -1;
}

int sk_sbchain_dump_piece(const sk_sbchain *c, uint64_t *iterator, size_t max,
                          const void **piece, size_t *len)
{
    if (c == NULL || iterator == NULL || *iterator == 0 || max == 0 || piece == NULL ||
        len == NULL)
        return SK_EINVAL;
    uint64_t at = *iterator - 1;
    /* A chain still restoring dumps only the bytes that came, so that a
     * copy made of its pieces (an AOF rewrite) is still restoring too. */
    uint64_t end = c->restoring ? c->restored : UINT64_MAX;
    int i = at < end ? locate(c, &at) : -1;
    if (i < 0) {
        *iterator = 0;
        *piece = NULL;
        *len = 0;
        return 0;
    }
    uint64_t rest = c->links[i].bytes - at;
    if (rest > end - (*iterator - 1))
        rest = end - (*iterator - 1);
    *len = rest < max ? (size_t)rest : max;
    *piece = c->links[i].bf + at;
    *iterator += *len;
    return 1;
}

/* The link of the header at `q`, checked as RedisBloom checks it. */
static int read_link(const uint8_t *q, struct sk__sblink *l)
{
    *l = (struct sk__sblink){
        .bytes = sk_load_le64(q + SK__SB_LINK_OFF_BYTES),
        .bits = sk_load_le64(q + SK__SB_LINK_OFF_BITS),
        .count = sk_load_le64(q + SK__SB_LINK_OFF_SIZE),
        .error = sk_load_le_double(q + SK__SB_LINK_OFF_ERROR),
        .bpe = sk_load_le_double(q + SK__SB_LINK_OFF_BPE),
        .hashes = sk_load_le32(q + SK__SB_LINK_OFF_HASHES),
        .entries = sk_load_le64(q + SK__SB_LINK_OFF_ENTRIES),
        .n2 = q[SK__SB_LINK_OFF_N2],
    };
    sk__sblink_bits_from_n2(l);
    return sk__sblink_valid(l);
}

int sk_sbchain_restore_begin(sk_sbchain **out, const void *header, size_t len,
                             uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (header == NULL || len < SK__SB_HDR_SIZE)
        return SK_ECORRUPT;
    const uint8_t *in = header;
    uint32_t n = sk_load_le32(in + SK__SB_HDR_OFF_NFILTERS);
    uint32_t options = sk_load_le32(in + SK__SB_HDR_OFF_OPTIONS);
    if (n == 0 || n > SK__SB_MAX_LINKS ||
        len != SK__SB_HDR_SIZE + (size_t)n * SK__SB_LINK_SIZE || (options & ~SK__SB_OPT_KNOWN))
        return SK_ECORRUPT;
    /* Every link and the sums before any memory is taken. */
    sk_allocator alloc;
    sk__allocator_init(&alloc, allocator);
    uint64_t items = 0, memory = sk__sbchain_fixed_memory(n);
    for (uint32_t i = 0; i < n; i++) {
        struct sk__sblink l;
        if (!read_link(in + SK__SB_HDR_SIZE + (size_t)i * SK__SB_LINK_SIZE, &l) ||
            l.count > UINT64_MAX - items)
            return SK_ECORRUPT;
        items += l.count;
        uint64_t cost = sk__sblink_cost(&alloc, l.bytes);
        if (cost == UINT64_MAX || cost > UINT64_MAX - memory)
            return SK_ENOMEM;
        memory += cost;
    }
    if (items != sk_load_le64(in + SK__SB_HDR_OFF_SIZE))
        return SK_ECORRUPT;
    if (max_memory != 0 && memory > max_memory)
        return SK_EBUDGET;
    sk_sbchain *c;
    int rc = sk__sbchain_alloc(&c, n, options, sk_load_le32(in + SK__SB_HDR_OFF_GROWTH), &alloc);
    if (rc != SK_OK)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        struct sk__sblink l;
        read_link(in + SK__SB_HDR_SIZE + (size_t)i * SK__SB_LINK_SIZE, &l);
        rc = sk__sbchain_push(c, &l, 0);
        if (rc != SK_OK) {
            sk_sbchain_free(c);
            return rc;
        }
    }
    c->count = items;
    c->max_memory = max_memory;
    c->restoring = 1;
    c->restored = 0;
    *out = c;
    return SK_OK;
}

int sk_sbchain_restore_piece(sk_sbchain *c, uint64_t iterator, const void *piece, size_t len)
{
    if (c == NULL || (piece == NULL && len > 0))
        return SK_EINVAL;
    if (!c->restoring)
        return SK_EINCOMPAT;
    /* RedisBloom's rule: the piece starts at iterator - len, at least 1. */
    if (len == 0 || iterator == 0 || iterator - 1 < len)
        return SK_ECORRUPT;
    uint64_t start = iterator - 1 - len;
    if (start > c->restored)
        return SK_ECORRUPT; /* a gap: a piece before it is missing */
    uint64_t within = start;
    int i = locate(c, &within);
    if (i < 0 || len > c->links[i].bytes - within)
        return SK_ECORRUPT; /* past the end, or across two links */
    memcpy(c->links[i].bf + within, piece, len);
    if (start + len > c->restored)
        c->restored = start + len;
    c->restoring = c->restored < sk__sbchain_total_bytes(c);
    return SK_OK;
}
