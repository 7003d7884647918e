/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbchain.c: RedisBloom 2.x's scalable Bloom filter (the value of its
 * MBbloom-- keys), bit for bit, so that sketch.so answers for a key loaded
 * from RedisBloom exactly as RedisBloom would have, and writes the same
 * bits for the same adds.
 *
 * The algorithm
 * -------------
 * A chain is a list of links, each a classic Bloom filter of m bits and k
 * hashes sized for `entries` items at error rate p:
 *
 *     bpe = |ln p| / ln(2)^2     bits per entry
 *     m   = (uint64)(entries x bpe), at least 1, rounded up to whole
 *           64-bit words (bytes = 8 ceil(m / 64), m = 8 bytes)
 *     k   = ceil(0.693147180559945 x bpe)
 *
 * (chains of RedisBloom 1.x without the NOROUND option round m up to a
 * power of 2 instead, and add the items the spare bits hold to entries;
 * with ENTS_IS_BITS, entries gives log2 m.) An item hashes to two 64-bit
 * values, a = MurmurHash64A(item, seed 0xc6a4a7935bd1e995) and
 * b = MurmurHash64A(item, seed a) (with the FORCE64 option, which every
 * chain of RedisBloom 2.x has; older ones use 32-bit MurmurHash2 with seed
 * 0x9747b28c, then seed a), and its k bits are (a + i b) mod 2^64 mod M for
 * i = 0..k-1, where M is 2^n2 when the link has n2 > 0, else m.
 *
 * An add asks every link, newest first; if one holds all the item's bits,
 * the item may be present and nothing changes (0). Otherwise, if the
 * newest link has as many items as its entries, a new link comes with
 * entries x expansion items at half the newest's error rate (a
 * non-scaling chain refuses instead: SK_EFULL), and the item's bits are
 * set in the newest link, whose count and the chain's go up by one (1).
 * The first link gets fp_rate / 2 (fp_rate when non-scaling), so the
 * rates of the links sum to less than fp_rate however many come.
 *
 * The layout
 * ----------
 * Each link keeps RedisBloom's fields (entries, count, bits, bytes, error,
 * bpe, hashes, n2) and its array; bit x is bit x & 7 of byte x >> 3, the
 * bytes exactly those BF.SCANDUMP sends. The links sit oldest first in a
 * table that doubles as they come. Array bytes and what the arrays take
 * are kept as running totals for the budget and sk_sbchain_get_info.
 *
 * Floating point: the sizing must round as RedisBloom's does, so this
 * file is compiled with -ffp-contract=off (no fused multiply-adds).
 */
#include <math.h>
#include <string.h>

#include "common/murmur2.h"
#include "common/murmur64a.h"
#include "sbchain_internal.h"

#define DEFAULT_FP_RATE 0.01
#define DEFAULT_EXPANSION 2u
/* Each link's error rate is the previous one's times this. */
#define TIGHTENING_RATIO 0.5
/* RedisBloom's constants, as it writes them: ln 2 and ln(2)^2. */
#define LN2 0.693147180559945
#define LN2_SQUARED 0.480453013918201
#define SEED64 UINT64_C(0xc6a4a7935bd1e995)
#define SEED32 UINT32_C(0x9747b28c)
#define WORD_BITS 64
#define MIN_TABLE 4u

/* x86-64 sizes of RedisBloom's SBChain (a pointer, two size_t, two
 * unsigned) and SBLink (struct bloom, 56 bytes, and a size_t): BF.INFO's
 * Size sums them with the arrays, whatever machine we run on. */
#define REDISBLOOM_CHAIN_RECORD 32u
#define REDISBLOOM_LINK_RECORD 64u

/* ---- sizing, as RedisBloom's bloom_init -------------------------------- */

static double bits_per_entry(double error)
{
    double bpe = -(log(error) / LN2_SQUARED);
    return bpe < 0 ? -bpe : bpe;
}

static int hashes_for(double bpe, uint32_t *hashes)
{
    /* Checked before the conversion, which a huge bpe would overflow. */
    if (!(bpe >= 0) || LN2 * bpe > SK__SB_MAX_HASHES)
        return 0;
    *hashes = (uint32_t)(int)ceil(LN2 * bpe);
    return 1;
}

int sk__sblink_plan(struct sk__sblink *link, uint64_t entries, double error, unsigned options)
{
    if (entries < 1 || !(error > 0) || !(error < 1.0))
        return SK_EINVAL;
    const double max_bits = (double)(SK__SB_MAX_LINK_BYTES * 8);
    struct sk__sblink l = {.entries = entries, .error = error, .bpe = bits_per_entry(error)};
    uint64_t bits;
    if (options & SK__SB_OPT_ENTS_IS_BITS) {
        /* 2^64 bits would not fit; bloom_init's own limit is 64. */
        if (entries >= WORD_BITS)
            return SK_EINVAL;
        l.n2 = (uint8_t)entries;
        bits = UINT64_C(1) << l.n2;
        if (bits > max_bits)
            return SK_ETOOLARGE;
        double items = (double)bits / l.bpe;
        if (!(items < 18446744073709551616.0))
            return SK_ETOOLARGE;
        l.entries = (uint64_t)items;
    } else if (options & SK__SB_OPT_NOROUND) {
        double want = (double)entries * l.bpe;
        if (!(want < max_bits))
            return SK_ETOOLARGE;
        bits = (uint64_t)want;
        if (bits == 0)
            bits = 1; /* a tiny bpe still gets a bit */
    } else {
        /* m is the power of 2 above entries x bpe; the spare bits hold
         * more items, which entries counts. */
        double want = (double)entries * l.bpe;
        double bn2 = logb(want);
        if (bn2 < 0 || bn2 >= WORD_BITS - 1 || !(want < max_bits))
            return bn2 < 0 ? SK_EINVAL : SK_ETOOLARGE;
        l.n2 = (uint8_t)(bn2 + 1);
        bits = UINT64_C(1) << l.n2;
        if (bits > max_bits)
            return SK_ETOOLARGE;
        uint64_t spare_bits = (uint64_t)((double)bits - want);
        uint64_t spare_items = (uint64_t)((double)spare_bits / l.bpe);
        l.entries += spare_items;
    }
    l.bytes = bits % WORD_BITS ? (bits / WORD_BITS + 1) * 8 : bits / 8;
    l.bits = l.bytes * 8;
    if (!hashes_for(l.bpe, &l.hashes))
        return SK_EINVAL;
    *link = l;
    return SK_OK;
}

void sk__sblink_bits_from_n2(struct sk__sblink *l)
{
    if (l->bits != 0 || l->n2 == 0 || l->n2 >= WORD_BITS)
        return;
    uint64_t bits = UINT64_C(1) << l->n2;
    l->bits = (bits + WORD_BITS - 1) / WORD_BITS * WORD_BITS;
}

int sk__sblink_valid(const struct sk__sblink *l)
{
    uint32_t hashes;
    /* bloom_validate_integrity's rules, then ours: a finite bpe, and an
     * array that can exist. */
    return l->error > 0 && l->error < 1.0 && l->n2 < WORD_BITS &&
           (l->n2 == 0 || l->bits >= UINT64_C(1) << l->n2) && l->bits != 0 &&
           l->bytes <= SK__SB_MAX_LINK_BYTES && l->bits == l->bytes * 8 &&
           hashes_for(l->bpe, &hashes) && hashes == l->hashes;
}

/* ---- memory ------------------------------------------------------------ */

uint64_t sk__sblink_cost(const sk_allocator *a, uint64_t bytes)
{
    return bytes > SIZE_MAX / 2 ? UINT64_MAX : sk__array_cost(a, (size_t)bytes);
}

uint64_t sk__sbchain_fixed_memory(uint32_t links_cap)
{
    return sizeof(sk_sbchain) + (uint64_t)links_cap * sizeof(struct sk__sblink);
}

int sk__sbchain_alloc(sk_sbchain **out, uint32_t links, uint32_t options, uint32_t growth,
                      const sk_allocator *a)
{
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    sk_sbchain *c = sk__zalloc(&alloc, sizeof *c);
    if (c == NULL)
        return SK_ENOMEM;
    *c = (sk_sbchain){.alloc = alloc, .options = options, .growth = growth};
    if (links > 0) {
        c->links = sk__zalloc(&alloc, links * sizeof *c->links);
        if (c->links == NULL) {
            sk__free(&alloc, c, sizeof *c);
            return SK_ENOMEM;
        }
        c->links_cap = links;
    }
    *out = c;
    return SK_OK;
}

static uint32_t table_for(uint32_t cap, uint32_t links)
{
    if (links <= cap)
        return cap;
    cap = cap < MIN_TABLE ? MIN_TABLE : cap;
    while (cap < links)
        cap = cap > SK__SB_MAX_LINKS / 2 ? SK__SB_MAX_LINKS : cap * 2;
    return cap;
}

static size_t memory_of(const sk_sbchain *c)
{
    return (size_t)(sk__sbchain_fixed_memory(c->links_cap) + c->array_cost);
}

int sk__sbchain_push(sk_sbchain *c, const struct sk__sblink *shape, uint64_t max_memory)
{
    if (c->nlinks >= SK__SB_MAX_LINKS)
        return SK_EFULL;
    uint64_t cost = sk__sblink_cost(&c->alloc, shape->bytes);
    if (cost == UINT64_MAX)
        return SK_ENOMEM;
    uint32_t cap = table_for(c->links_cap, c->nlinks + 1);
    if (max_memory != 0) {
        uint64_t after = sk__sbchain_fixed_memory(cap) + c->array_cost + cost;
        if (after > max_memory)
            return SK_EBUDGET;
    }
    if (cap != c->links_cap) {
        struct sk__sblink *table = sk__zalloc(&c->alloc, cap * sizeof *table);
        if (table == NULL)
            return SK_ENOMEM;
        if (c->nlinks > 0)
            memcpy(table, c->links, c->nlinks * sizeof *table);
        sk__free(&c->alloc, c->links, c->links_cap * sizeof *table);
        c->links = table;
        c->links_cap = cap;
    }
    struct sk__sblink link = *shape;
    link.bf = sk__array_alloc(&c->alloc, (size_t)link.bytes, &link.array);
    if (link.bf == NULL)
        return SK_ENOMEM; /* a grown table stays: it is only room */
    c->links[c->nlinks++] = link;
    c->array_bytes += link.bytes;
    c->array_cost += cost;
    return SK_OK;
}

/* ---- the chain --------------------------------------------------------- */

int sk_sbchain_create(sk_sbchain **out, const sk_sbchain_options *opts)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (opts == NULL || opts->capacity == 0)
        return SK_EINVAL;
    double rate = opts->fp_rate == 0 ? DEFAULT_FP_RATE : opts->fp_rate;
    if (!(rate > 0) || !(rate < 1))
        return SK_EINVAL;
    uint32_t options = SK__SB_OPT_RESERVE | (opts->non_scaling ? SK__SB_OPT_NO_SCALING : 0);
    double first = opts->non_scaling ? rate : rate * TIGHTENING_RATIO;
    struct sk__sblink shape;
    int rc = sk__sblink_plan(&shape, opts->capacity, first, options);
    if (rc != SK_OK)
        return rc;
    sk_sbchain *c;
    unsigned growth = opts->expansion == 0 ? DEFAULT_EXPANSION : opts->expansion;
    rc = sk__sbchain_alloc(&c, 0, options, growth, opts->allocator);
    if (rc != SK_OK)
        return rc;
    rc = sk__sbchain_push(c, &shape, opts->max_memory);
    if (rc != SK_OK) {
        sk_sbchain_free(c);
        return rc;
    }
    c->max_memory = opts->max_memory;
    *out = c;
    return SK_OK;
}

int sk_sbchain_new(sk_sbchain **out, uint64_t capacity, double fp_rate)
{
    return sk_sbchain_create(out, &(sk_sbchain_options){.capacity = capacity,
                                                        .fp_rate = fp_rate});
}

void sk_sbchain_free(sk_sbchain *c)
{
    if (c == NULL)
        return;
    sk_allocator a = c->alloc;
    for (uint32_t i = 0; i < c->nlinks; i++)
        sk__array_free(&a, &c->links[i].array);
    sk__free(&a, c->links, c->links_cap * sizeof *c->links);
    sk__free(&a, c, sizeof *c);
}

int sk_sbchain_copy(sk_sbchain **out, const sk_sbchain *src)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (src == NULL)
        return SK_EINVAL;
    sk_sbchain *c;
    int rc = sk__sbchain_alloc(&c, src->nlinks, src->options, src->growth, &src->alloc);
    if (rc != SK_OK)
        return rc;
    for (uint32_t i = 0; i < src->nlinks; i++) {
        rc = sk__sbchain_push(c, &src->links[i], 0);
        if (rc != SK_OK) {
            sk_sbchain_free(c);
            return rc;
        }
        c->links[i].count = src->links[i].count;
        memcpy(c->links[i].bf, src->links[i].bf, (size_t)src->links[i].bytes);
    }
    c->count = src->count;
    c->max_memory = src->max_memory;
    c->restoring = src->restoring;
    c->restored = src->restored;
    *out = c;
    return SK_OK;
}

void sk_sbchain_set_max_memory(sk_sbchain *c, uint64_t bytes)
{
    if (c != NULL)
        c->max_memory = bytes;
}

uint64_t sk__sbchain_total_bytes(const sk_sbchain *c)
{
    return c->array_bytes;
}

void sk__sbchain_clear_after(sk_sbchain *c, uint64_t at)
{
    for (uint32_t i = 0; i < c->nlinks; i++) {
        struct sk__sblink *l = &c->links[i];
        if (at < l->bytes) {
            memset(l->bf + at, 0, (size_t)(l->bytes - at));
            at = 0;
        } else {
            at -= l->bytes;
        }
    }
}

/* ---- items ------------------------------------------------------------- */

struct item_hash {
    uint64_t a, b;
};

/* RedisBloom hands the length on as an int: items of 2 GB or more (which
 * Redis's 512 MB strings never are) would hash differently there. */
static struct item_hash hash_item(const sk_sbchain *c, const void *data, size_t len)
{
    struct item_hash h;
    if (c->options & SK__SB_OPT_FORCE64) {
        h.a = sk_murmur64a(data, len, SEED64);
        h.b = sk_murmur64a(data, len, h.a);
    } else {
        h.a = sk_murmur2(data, len, SEED32);
        h.b = sk_murmur2(data, len, (uint32_t)h.a);
    }
    return h;
}

/* The i-th bit of the item in the link: (a + i b) mod 2^64, then mod the
 * link's modulus, a mask when it is 2^n2. */
static uint64_t bit_of(const struct sk__sblink *l, struct item_hash h, uint64_t i)
{
    uint64_t x = h.a + i * h.b;
    return l->n2 > 0 ? x & ((UINT64_C(1) << l->n2) - 1) : x % l->bits;
}

static int link_has(const struct sk__sblink *l, struct item_hash h)
{
    for (uint64_t i = 0; i < l->hashes; i++) {
        uint64_t x = bit_of(l, h, i);
        if (!(l->bf[x >> 3] & (1u << (x & 7))))
            return 0;
    }
    return 1;
}

/* Sets the item's bits: 1 if one of them was clear. */
static int link_set(struct sk__sblink *l, struct item_hash h)
{
    int was_clear = 0;
    for (uint64_t i = 0; i < l->hashes; i++) {
        uint64_t x = bit_of(l, h, i);
        uint8_t mask = (uint8_t)(1u << (x & 7));
        if (!(l->bf[x >> 3] & mask)) {
            l->bf[x >> 3] |= mask;
            was_clear = 1;
        }
    }
    return was_clear;
}

static int chain_has(const sk_sbchain *c, struct item_hash h)
{
    for (uint32_t i = c->nlinks; i-- > 0;)
        if (link_has(&c->links[i], h))
            return 1;
    return 0;
}

/* The link after the newest, as RedisBloom sizes it: SK_EFULL where it
 * could not (a capacity past 2^64, a rate rounded to 0, an array past our
 * limit). */
static int grow(sk_sbchain *c)
{
    const struct sk__sblink *newest = &c->links[c->nlinks - 1];
    if (c->growth != 0 && newest->entries > UINT64_MAX / c->growth)
        return SK_EFULL;
    struct sk__sblink shape;
    if (sk__sblink_plan(&shape, newest->entries * c->growth, newest->error * TIGHTENING_RATIO,
                        c->options) != SK_OK)
        return SK_EFULL;
    return sk__sbchain_push(c, &shape, c->max_memory);
}

int sk_sbchain_add(sk_sbchain *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    if (c->restoring)
        return SK_EINCOMPAT;
    struct item_hash h = hash_item(c, data, len);
    if (chain_has(c, h))
        return 0;
    const struct sk__sblink *newest = &c->links[c->nlinks - 1];
    if (newest->count >= newest->entries) {
        if (c->options & SK__SB_OPT_NO_SCALING)
            return SK_EFULL;
        int rc = grow(c);
        if (rc != SK_OK)
            return rc;
    }
    struct sk__sblink *l = &c->links[c->nlinks - 1];
    if (!link_set(l, h))
        return 0; /* a link of no hashes: RedisBloom counts nothing either */
    l->count++;
    c->count++;
    return 1;
}

int sk_sbchain_contains(const sk_sbchain *c, const void *data, size_t len)
{
    if (c == NULL || (data == NULL && len > 0))
        return 0;
    return chain_has(c, hash_item(c, data, len));
}

void sk_sbchain_get_info(const sk_sbchain *c, sk_sbchain_info *info)
{
    uint64_t capacity = 0, size = REDISBLOOM_CHAIN_RECORD;
    for (uint32_t i = 0; i < c->nlinks; i++) {
        capacity += c->links[i].entries;
        size += REDISBLOOM_LINK_RECORD + c->links[i].bytes;
    }
    *info = (sk_sbchain_info){
        .capacity = capacity,
        .count = c->count,
        .links = c->nlinks,
        .expansion = (c->options & SK__SB_OPT_NO_SCALING) ? 0 : c->growth,
        .fp_rate = c->links[0].error,
        .array_bytes = c->array_bytes,
        .redisbloom_size = size,
        .memory = memory_of(c),
    };
}

int sk_sbchain_restoring(const sk_sbchain *c)
{
    return c != NULL && c->restoring;
}

int sk_sbchain_get_link(const sk_sbchain *c, unsigned index, sk_sbchain_link *out)
{
    if (index >= c->nlinks)
        return SK_EINVAL;
    const struct sk__sblink *l = &c->links[index];
    *out = (sk_sbchain_link){
        .bytes = l->bytes,
        /* RedisBloom reports a power-of-two link's modulus when bits is 0 */
        .bits = l->bits != 0 ? l->bits : UINT64_C(1) << l->n2,
        .capacity = l->entries,
        .count = l->count,
        .hashes = l->hashes,
        .hash_bits = c->options & SK__SB_OPT_FORCE64 ? 64 : 32,
        .fp_rate = l->error,
    };
    return SK_OK;
}
