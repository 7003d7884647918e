/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo_redisbloom.c: a cuckoo filter as RedisBloom 2.x keeps an MBbloomCF
 * value in an RDB file or a DUMP payload, read into an sk_cuckoo and
 * written back (sketch/redisbloom.h, docs/redisbloom-rdb.md).
 *
 * The fields, encver 4 (RedisBloom 2.2 on):
 *
 *     unsigned  filters         sub-filters
 *     unsigned  buckets         of the first
 *     unsigned  items           added less deleted
 *     unsigned  deletes         since the last compaction
 *     unsigned  bucket_size     slots per bucket
 *     unsigned  max_iterations  (bits 16 up: the restore mark, below)
 *     unsigned  expansion
 *     then per sub-filter:
 *     unsigned  buckets         its own
 *     string    slots           buckets x bucket_size fingerprints
 *
 * Encvers 2 and 3 (RedisBloom 1.99 to 2.0) are refused with SK_EINCOMPAT:
 * those releases hashed an item with 32-bit MurmurHash2 (fingerprint from
 * its top byte, bucket by a 32-bit modulo), which later releases and the
 * library do not, so read with today's hashing most items it holds would
 * answer "absent", as they do in RedisBloom 2.2 and later.
 *
 * The restore mark. RedisBloom holds max_iterations in 16 bits and drops
 * the rest of the field, so the bits above carry what RedisBloom has no
 * notion of: a filter still restoring from CF.LOADCHUNK pieces saves
 * (restored + 1) << 16 there, restored being the slot bytes that have come
 * (at most MARK_MAX - 1). RedisBloom loads such a filter as the slots
 * stand; a load here resumes the restore where it was. 0 above the 16
 * bits: complete.
 *
 * What RedisBloom's sub-filters need and the family keeps only as a rule,
 * each sub-filter's size (buckets x expansion^i), is checked against the
 * rule. The counts of items and deletes are taken as they come, as
 * RedisBloom, CF.LOADCHUNK and the library's own format take them: they
 * are what CF.INFO reports, and no slot depends on them.
 */
#include <string.h>

#include "cuckoo_internal.h"
#include "common/rdb_fields.h"
#include "sketch/redisbloom.h"

/* RedisBloom 1.99 to 2.0's, refused */
#define ENCVER_OLD_HASHING_FIRST 2
#define ENCVER_OLD_HASHING_LAST 3

/* The header's unsigned fields, in their order. */
enum { F_FILTERS, F_BUCKETS, F_ITEMS, F_DELETES, F_BUCKET_SIZE, F_ITERATIONS, F_EXPANSION,
       HEADER_FIELDS };

#define ITERATION_BITS 16 /* what RedisBloom keeps of max_iterations */
#define ITERATION_MASK ((UINT64_C(1) << ITERATION_BITS) - 1)
#define MARK_MAX (UINT64_C(1) << (64 - ITERATION_BITS)) /* marks are below it */

static int read_header(const sk_rdb_reader *r, uint64_t f[HEADER_FIELDS])
{
    for (int i = 0; i < HEADER_FIELDS; i++) {
        int rc = r->load_unsigned(r->ctx, &f[i]);
        if (rc != SK_OK)
            return sk__rdb_status(rc);
        /* RedisBloom refuses these two at once; so does this, before
         * reading further. */
        if (i == F_BUCKETS && (f[F_FILTERS] == 0 || f[F_BUCKETS] == 0))
            return SK_ECORRUPT;
    }
    return SK_OK;
}

/* The slot bytes of every sub-filter, or 0 if a sub-filter is past
 * SK_CUCKOO_MAX_BUCKETS or the sum past 64 bits. */
static uint64_t total_slots(uint64_t buckets, uint32_t bucket_size, uint32_t expansion,
                            uint32_t filters)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < filters; i++) {
        uint64_t n = sk__cuckoo_sub_buckets(buckets, expansion, i);
        if (n == 0)
            return 0;
        uint64_t bytes = n * bucket_size; /* n <= 2^55, bucket_size < 2^8 */
        if (bytes > UINT64_MAX - total)
            return 0;
        total += bytes;
    }
    return total;
}

/* What a filter of this shape takes, as cuckoo_memory.c counts it: the
 * object, its table of sub-filters (doubled from 4 as it grows) and their
 * arrays with their padding; UINT64_MAX past 64 bits. */
static uint64_t shape_memory(const sk_allocator *a, uint64_t buckets, uint32_t bucket_size,
                             uint32_t expansion, uint32_t filters)
{
    sk_allocator alloc;
    sk__allocator_init(&alloc, a);
    uint32_t table = 4;
    while (table < filters)
        table = table > SK_CUCKOO_MAX_FILTERS / 2 ? SK_CUCKOO_MAX_FILTERS : table * 2;
    uint64_t total = sizeof(sk_cuckoo) + (uint64_t)table * sizeof(struct sk__cuckoo_sub);
    for (uint32_t i = 0; i < filters; i++) {
        uint64_t bytes = sk__cuckoo_sub_buckets(buckets, expansion, i) * bucket_size;
        if (bytes > SIZE_MAX / 2)
            return UINT64_MAX;
        uint64_t cost = sk__array_cost(&alloc, (size_t)bytes + SK__CUCKOO_PAD);
        if (cost > UINT64_MAX - total)
            return UINT64_MAX;
        total += cost;
    }
    return total;
}

/* Sub-filter i's size field and its slots, checked against the size the
 * rule gives; *data and *len receive the slots, valid until the reader's
 * next call. */
static int read_sub(const sk_rdb_reader *r, uint64_t buckets, uint32_t bucket_size,
                    const void **data, size_t *len)
{
    uint64_t stated;
    int rc = r->load_unsigned(r->ctx, &stated);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    if (stated != buckets)
        return SK_ECORRUPT;
    rc = r->load_string(r->ctx, data, len);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    return *len == buckets * bucket_size && *data != NULL ? SK_OK : SK_ECORRUPT;
}

/* The sub-filters, each allocated only once its slots have come, so that
 * no array is larger than bytes the reader holds: the first with the
 * filter, the others by growth, which gives them the rule's sizes. */
static int read_filters(sk_cuckoo **out, const sk_rdb_reader *r,
                        const uint64_t f[HEADER_FIELDS], uint32_t iterations,
                        uint64_t max_memory, const sk_allocator *allocator)
{
    uint32_t filters = (uint32_t)f[F_FILTERS], b = (uint32_t)f[F_BUCKET_SIZE];
    uint32_t expansion = (uint32_t)f[F_EXPANSION];
    sk_cuckoo *c = NULL;
    int rc = SK_OK;
    for (uint32_t i = 0; i < filters && rc == SK_OK; i++) {
        const void *data;
        size_t len;
        uint64_t buckets = sk__cuckoo_sub_buckets(f[F_BUCKETS], expansion, i);
        rc = read_sub(r, buckets, b, &data, &len);
        if (rc == SK_OK && i == 0)
            rc = sk__cuckoo_alloc(&c, f[F_BUCKETS], b, iterations, expansion, 1, max_memory,
                                  allocator);
        else if (rc == SK_OK)
            rc = sk__cuckoo_grow(c);
        if (rc == SK_OK)
            memcpy(c->subs[i].slots, data, len);
    }
    if (rc != SK_OK) {
        sk_cuckoo_free(c);
        return rc == SK_EINVAL ? SK_ECORRUPT : rc;
    }
    *out = c;
    return SK_OK;
}

int sk_cuckoo_load_redisbloom(sk_cuckoo **out, const sk_rdb_reader *r, int encver,
                              uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (r == NULL)
        return SK_EINVAL;
    if (encver >= ENCVER_OLD_HASHING_FIRST && encver <= ENCVER_OLD_HASHING_LAST)
        return SK_EINCOMPAT;
    if (encver != SK_REDISBLOOM_CF_ENCVER)
        return SK_EVERSION;
    uint64_t f[HEADER_FIELDS];
    int rc = read_header(r, f);
    if (rc != SK_OK)
        return rc;
    uint64_t mark = f[F_ITERATIONS] >> ITERATION_BITS;
    uint64_t iterations = f[F_ITERATIONS] & ITERATION_MASK;
    /* Each within RedisBloom's limits, which are the family's: the shape
     * check takes 32-bit values, so wider ones are refused first. */
    if (f[F_FILTERS] > SK_CUCKOO_MAX_FILTERS || f[F_BUCKET_SIZE] > SK_CUCKOO_MAX_BUCKET_SIZE ||
        f[F_EXPANSION] > SK_CUCKOO_MAX_EXPANSION ||
        !sk__cuckoo_shape_ok(f[F_BUCKETS], (uint32_t)f[F_BUCKET_SIZE], (uint32_t)iterations,
                             (uint32_t)f[F_EXPANSION], f[F_FILTERS]))
        return SK_ECORRUPT;
    uint32_t filters = (uint32_t)f[F_FILTERS], bucket_size = (uint32_t)f[F_BUCKET_SIZE];
    uint32_t expansion = (uint32_t)f[F_EXPANSION];
    /* Every sub-filter of the size growth would give it, as RedisBloom's
     * CF.ADD would have made it. */
    uint64_t slots = total_slots(f[F_BUCKETS], bucket_size, expansion, filters);
    if (slots == 0 || (mark != 0 && mark - 1 >= slots))
        return SK_ECORRUPT;
    uint64_t memory = shape_memory(allocator, f[F_BUCKETS], bucket_size, expansion, filters);
    if (memory == UINT64_MAX)
        return SK_ETOOLARGE;
    if (max_memory != 0 && memory > max_memory)
        return SK_EBUDGET;
    sk_cuckoo *c;
    rc = read_filters(&c, r, f, (uint32_t)iterations, max_memory, allocator);
    if (rc != SK_OK)
        return rc;
    c->items = f[F_ITEMS];
    c->deletes = f[F_DELETES];
    c->restoring = mark != 0;
    c->restored = mark != 0 ? mark - 1 : 0;
    *out = c;
    return SK_OK;
}

void sk_cuckoo_save_redisbloom(const sk_cuckoo *c, const sk_rdb_writer *w)
{
    if (c == NULL || w == NULL)
        return;
    uint64_t iterations = c->max_iterations;
    if (sk_cuckoo_restoring(c)) {
        /* Past MARK_MAX - 2 bytes (256 TiB) the mark says less came than
         * did: the restore then takes pieces again from there. */
        uint64_t restored = c->restored < MARK_MAX - 2 ? c->restored : MARK_MAX - 2;
        iterations |= (restored + 1) << ITERATION_BITS;
    }
    w->save_unsigned(w->ctx, c->filters);
    w->save_unsigned(w->ctx, c->buckets);
    w->save_unsigned(w->ctx, c->items);
    w->save_unsigned(w->ctx, c->deletes);
    w->save_unsigned(w->ctx, c->bucket_size);
    w->save_unsigned(w->ctx, iterations);
    w->save_unsigned(w->ctx, c->expansion);
    for (uint32_t i = 0; i < c->filters; i++) {
        const struct sk__cuckoo_sub *sub = &c->subs[i];
        w->save_unsigned(w->ctx, sub->buckets);
        w->save_string(w->ctx, sub->slots, (size_t)(sub->buckets * c->bucket_size));
    }
}
