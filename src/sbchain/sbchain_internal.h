/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbchain_internal.h: the scalable Bloom chain's object and the facts of
 * RedisBloom 2.x that its three files share: the option bits, the sizing of
 * a link, the integrity rules a link read from outside must keep, and the
 * byte layout of BF.SCANDUMP's header. sbchain.c runs the chain,
 * sbchain_dump.c dumps and restores it in pieces, sbchain_redisbloom.c
 * reads and writes its RDB fields. Internal.
 */
#ifndef SKETCH_SBCHAIN_INTERNAL_H
#define SKETCH_SBCHAIN_INTERNAL_H

#include <stdint.h>

#include "common/alloc.h"
#include "sketch/sbchain.h"

/* RedisBloom's chain options, the `options` of its dumps and RDB fields. */
#define SK__SB_OPT_NOROUND 1u      /* bits = entries x bpe, not a power of 2 */
#define SK__SB_OPT_ENTS_IS_BITS 2u /* entries is log2 of the bits */
#define SK__SB_OPT_FORCE64 4u      /* MurmurHash64A; without it, 32-bit MurmurHash2 */
#define SK__SB_OPT_NO_SCALING 8u   /* one link; a full one refuses adds */
#define SK__SB_OPT_KNOWN                                                                  \
    (SK__SB_OPT_NOROUND | SK__SB_OPT_ENTS_IS_BITS | SK__SB_OPT_FORCE64 | SK__SB_OPT_NO_SCALING)
/* What BF.RESERVE and BF.ADD give every filter they create. */
#define SK__SB_OPT_RESERVE (SK__SB_OPT_NOROUND | SK__SB_OPT_FORCE64)

/* Limits of our own, far past any filter RedisBloom makes, so that a
 * corrupt field cannot ask for absurd memory: a link's array (2^45 bytes,
 * 32 TB), the links of a chain (each new link halves the error rate, which
 * reaches 0, and RedisBloom's sizing refuses it, after about 1075 links),
 * and the hashes of a link (ceil(ln 2 x bpe) is at most 1075 for any error
 * rate a double holds). */
#define SK__SB_MAX_LINK_BYTES (UINT64_C(1) << 45)
#define SK__SB_MAX_LINKS 4096u
#define SK__SB_MAX_HASHES 2048u

/* ---- BF.SCANDUMP's header: packed, little-endian ------------------------ */
#define SK__SB_HDR_OFF_SIZE 0      /* u64 items of all links */
#define SK__SB_HDR_OFF_NFILTERS 8  /* u32 links */
#define SK__SB_HDR_OFF_OPTIONS 12  /* u32 SK__SB_OPT_* */
#define SK__SB_HDR_OFF_GROWTH 16   /* u32 expansion */
#define SK__SB_HDR_SIZE 20
/* then per link, at SK__SB_HDR_SIZE + i x SK__SB_LINK_SIZE: */
#define SK__SB_LINK_OFF_BYTES 0    /* u64 bytes of the array */
#define SK__SB_LINK_OFF_BITS 8     /* u64 bits = bytes x 8 */
#define SK__SB_LINK_OFF_SIZE 16    /* u64 items in this link */
#define SK__SB_LINK_OFF_ERROR 24   /* f64 its error rate */
#define SK__SB_LINK_OFF_BPE 32     /* f64 bits per entry */
#define SK__SB_LINK_OFF_HASHES 40  /* u32 hashes */
#define SK__SB_LINK_OFF_ENTRIES 44 /* u64 capacity */
#define SK__SB_LINK_OFF_N2 52      /* u8 log2 of the modulus, 0: modulo bits */
#define SK__SB_LINK_SIZE 53

/* One classic Bloom filter of the chain, RedisBloom's `struct bloom` and
 * its item count. */
struct sk__sblink {
    uint64_t entries; /* capacity: a new link comes when count reaches it */
    uint64_t count;   /* items whose add set a bit here */
    uint64_t bits;    /* bytes x 8 */
    uint64_t bytes;
    double error, bpe;
    uint32_t hashes;
    uint8_t n2;       /* > 0: bit positions are mod 2^n2, else mod bits */
    uint8_t *bf;      /* bit x is bf[x >> 3] & 1 << (x & 7) */
    struct sk__array array;
};

struct sk_sbchain {
    sk_allocator alloc;
    struct sk__sblink *links; /* oldest first, nlinks of a table of links_cap */
    uint32_t nlinks, links_cap;
    uint32_t options;         /* SK__SB_OPT_* */
    uint32_t growth;          /* RedisBloom keeps it, 2 by default, even when non-scaling */
    uint64_t count;           /* items of all links */
    uint64_t max_memory;      /* 0: none */
    uint64_t array_bytes;     /* sum of the links' bytes */
    uint64_t array_cost;      /* what their arrays take from the allocator */
    int restoring;            /* a restore has not brought every array byte yet */
    uint64_t restored;        /* the array bytes it has brought, in order */
};

/* A link's shape as RedisBloom's bloom_init computes it for `entries`
 * items at `error` with `options` (its array not allocated): SK_OK, or
 * SK_EINVAL where bloom_init fails, SK_ETOOLARGE past SK__SB_MAX_LINK_BYTES. */
int sk__sblink_plan(struct sk__sblink *link, uint64_t entries, double error, unsigned options);

/* RedisBloom 2.0 saved 0 for the bits of a link sized by a power of two
 * (n2 > 0) and derived them from n2 when it ran: gives such a link the
 * bits bloom_init gives it, 2^n2 in whole 64-bit words, so that it loads
 * (RedisBloom 2.2 and later refuse it). Other links are left alone. */
void sk__sblink_bits_from_n2(struct sk__sblink *link);

/* 1 if a link read from outside keeps RedisBloom's integrity rules
 * (bloom_validate_integrity) and our limits. */
int sk__sblink_valid(const struct sk__sblink *link);

/* An empty chain record with room for `links` links and nothing in them
 * (SK_ENOMEM); free it with sk_sbchain_free. */
int sk__sbchain_alloc(sk_sbchain **out, uint32_t links, uint32_t options, uint32_t growth,
                      const sk_allocator *a);

/* Appends a link of this shape (bf and array ignored) with a zeroed
 * array, growing the table if it must: SK_EBUDGET if the chain would then
 * hold more than `max_memory` (0: none), SK_ENOMEM; the chain unchanged. */
int sk__sbchain_push(sk_sbchain *c, const struct sk__sblink *shape, uint64_t max_memory);

/* What a link's array of `bytes` takes from the allocator; UINT64_MAX if
 * it cannot be allocated at all. */
uint64_t sk__sblink_cost(const sk_allocator *a, uint64_t bytes);

/* What a chain record with a table of `links_cap` links takes. */
uint64_t sk__sbchain_fixed_memory(uint32_t links_cap);

/* Bytes of all links' arrays (the end of the dumped stream). */
uint64_t sk__sbchain_total_bytes(const sk_sbchain *c);

/* Zeroes the arrays' bytes from `at` (an offset in the dumped stream) to
 * their end. */
void sk__sbchain_clear_after(sk_sbchain *c, uint64_t at);

#endif
