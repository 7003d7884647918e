/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbchain_redisbloom.c: a scalable Bloom chain as the fields of
 * RedisBloom's MBbloom-- RDB value, read for every encoding version 0..4
 * and written as version 4, so that sketch.so loads RedisBloom's RDB files
 * and DUMP payloads and RedisBloom loads sketch.so's.
 *
 * The fields (docs/redisbloom-bloom.md), all unsigned but the doubles and
 * the array:
 *
 *     size, nfilters, options (encver >= 2), growth (encver >= 4, else 2)
 *     per link: entries, error (double), hashes, bpe (double),
 *               bits, n2 (encver >= 1; at 0 bits is entries x bpe, n2 0),
 *               the array (a string of bytes = bits / 8), size
 *
 * Restore progress. A chain still restoring from BF.LOADCHUNK pieces is
 * not complete, and a save must not pass it off as one. RedisBloom keeps
 * options and growth in 32-bit unsigned variables, so it drops the upper
 * 32 bits of those 64-bit fields; we carry P = (array bytes restored) + 1
 * there, 0 for a complete chain: P >> 32 in options' upper half, P's low
 * 32 bits in growth's. RedisBloom loads such a value as the chain it was
 * when its own restore stopped (the bytes come so far, zeros after);
 * we load it still restoring, waiting for the piece after byte P - 1.
 *
 * A load checks each field against the others and our limits before it
 * trusts it: nfilters 1..SK__SB_MAX_LINKS, only known options, each link
 * keeping bloom_validate_integrity's rules, its string exactly `bytes`
 * long, the links' sizes summing to the chain's, the progress within the
 * arrays, and every allocation within max_memory (SK_EBUDGET) and checked
 * before it is made. Any failure frees what was built: no partial value.
 */
#include <string.h>

#include "sbchain_internal.h"
#include "sketch/redisbloom.h"

/* The encoding versions where RedisBloom added fields. */
#define ENCVER_BITS 1    /* bits and n2 of each link */
#define ENCVER_OPTIONS 2 /* the chain's options */
#define ENCVER_GROWTH 4  /* the chain's growth; before it, 2 */
#define OLD_GROWTH 2u
#define HALF 32
#define LOW_HALF UINT64_C(0xffffffff)
#define MAX_N2 63u

void sk_sbchain_save_redisbloom(const sk_sbchain *c, const sk_rdb_writer *w)
{
    uint64_t progress = c->restoring ? c->restored + 1 : 0;
    w->save_unsigned(w->ctx, c->count);
    w->save_unsigned(w->ctx, c->nlinks);
    w->save_unsigned(w->ctx, (uint64_t)c->options | (progress >> HALF) << HALF);
    w->save_unsigned(w->ctx, (uint64_t)c->growth | (progress & LOW_HALF) << HALF);
    for (uint32_t i = 0; i < c->nlinks; i++) {
        const struct sk__sblink *l = &c->links[i];
        w->save_unsigned(w->ctx, l->entries);
        w->save_double(w->ctx, l->error);
        w->save_unsigned(w->ctx, l->hashes);
        w->save_double(w->ctx, l->bpe);
        w->save_unsigned(w->ctx, l->bits);
        w->save_unsigned(w->ctx, l->n2);
        w->save_string(w->ctx, l->bf, (size_t)l->bytes);
        w->save_unsigned(w->ctx, l->count);
    }
}

/* The fields of one link up to its array (the string, read by the caller). */
static int read_link_fields(const sk_rdb_reader *r, int encver, struct sk__sblink *l)
{
    uint64_t hashes, n2 = 0;
    int rc;
    *l = (struct sk__sblink){0};
    if ((rc = r->load_unsigned(r->ctx, &l->entries)) != SK_OK ||
        (rc = r->load_double(r->ctx, &l->error)) != SK_OK ||
        (rc = r->load_unsigned(r->ctx, &hashes)) != SK_OK ||
        (rc = r->load_double(r->ctx, &l->bpe)) != SK_OK)
        return rc;
    if (encver >= ENCVER_BITS) {
        if ((rc = r->load_unsigned(r->ctx, &l->bits)) != SK_OK ||
            (rc = r->load_unsigned(r->ctx, &n2)) != SK_OK)
            return rc;
    } else {
        /* RedisBloom 1.0 saved no bits: entries x bpe, as it computes them. */
        double bits = (double)l->entries * l->bpe;
        if (!(bits >= 0) || !(bits < 18446744073709551616.0))
            return SK_ECORRUPT;
        l->bits = (uint64_t)bits;
    }
    if (hashes > UINT32_MAX || n2 > MAX_N2 || l->bits % 8 != 0)
        return SK_ECORRUPT;
    l->hashes = (uint32_t)hashes;
    l->n2 = (uint8_t)n2;
    sk__sblink_bits_from_n2(l);
    l->bytes = l->bits / 8; /* the string's length must be this */
    return sk__sblink_valid(l) ? SK_OK : SK_ECORRUPT;
}

static int load_links(sk_sbchain *c, const sk_rdb_reader *r, int encver, uint32_t n,
                      uint64_t max_memory)
{
    for (uint32_t i = 0; i < n; i++) {
        struct sk__sblink l;
        const void *data;
        size_t len;
        int rc = read_link_fields(r, encver, &l);
        if (rc != SK_OK)
            return rc;
        if ((rc = r->load_string(r->ctx, &data, &len)) != SK_OK)
            return rc;
        if (len != l.bytes || data == NULL)
            return SK_ECORRUPT;
        if ((rc = sk__sbchain_push(c, &l, max_memory)) != SK_OK)
            return rc;
        memcpy(c->links[i].bf, data, len);
        if ((rc = r->load_unsigned(r->ctx, &c->links[i].count)) != SK_OK)
            return rc;
        if (c->links[i].count > UINT64_MAX - c->count)
            return SK_ECORRUPT;
        c->count += c->links[i].count;
    }
    return SK_OK;
}

int sk_sbchain_load_redisbloom(sk_sbchain **out, const sk_rdb_reader *r, int encver,
                               uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (r == NULL)
        return SK_EINVAL;
    if (encver < 0 || encver > SK_REDISBLOOM_BF_ENCVER)
        return SK_EVERSION;
    uint64_t size, nfilters, options = 0, growth = OLD_GROWTH;
    int rc;
    if ((rc = r->load_unsigned(r->ctx, &size)) != SK_OK ||
        (rc = r->load_unsigned(r->ctx, &nfilters)) != SK_OK)
        return rc;
    if (nfilters == 0 || nfilters > SK__SB_MAX_LINKS)
        return SK_ECORRUPT;
    if (encver >= ENCVER_OPTIONS && (rc = r->load_unsigned(r->ctx, &options)) != SK_OK)
        return rc;
    if (encver >= ENCVER_GROWTH && (rc = r->load_unsigned(r->ctx, &growth)) != SK_OK)
        return rc;
    uint64_t progress = (options >> HALF) << HALF | growth >> HALF;
    if (((uint32_t)options & ~SK__SB_OPT_KNOWN) != 0)
        return SK_ECORRUPT;
    if (max_memory != 0 && sk__sbchain_fixed_memory((uint32_t)nfilters) > max_memory)
        return SK_EBUDGET;
    sk_sbchain *c;
    rc = sk__sbchain_alloc(&c, (uint32_t)nfilters, (uint32_t)options, (uint32_t)growth,
                           allocator);
    if (rc != SK_OK)
        return rc;
    rc = load_links(c, r, encver, (uint32_t)nfilters, max_memory);
    if (rc == SK_OK && c->count != size)
        rc = SK_ECORRUPT;
    if (rc == SK_OK && progress != 0) {
        if (progress - 1 >= sk__sbchain_total_bytes(c))
            rc = SK_ECORRUPT; /* a chain with every byte is complete: saved with 0 */
        c->restoring = 1;
        c->restored = progress - 1;
        /* The bytes past it have not come: zeros, as in any restore, so
         * that its copies agree however they were made. */
        if (rc == SK_OK)
            sk__sbchain_clear_after(c, c->restored);
    }
    if (rc != SK_OK) {
        sk_sbchain_free(c);
        return rc;
    }
    c->max_memory = max_memory;
    *out = c;
    return SK_OK;
}
