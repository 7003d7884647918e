/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_redisbloom.c: a count-min sketch as RedisBloom 2.x keeps a CMSk-TYPE
 * value in an RDB file or a DUMP payload, read into an sk_cms and written
 * back (sketch/redisbloom.h, docs/redisbloom-rdb.md).
 *
 * The fields, encver 0 (the only one RedisBloom 2.x wrote):
 *
 *     unsigned  width     counters per row
 *     unsigned  depth     rows
 *     unsigned  total     the sum of the counts added (CMS.INFO's count)
 *     string    counters  width x depth uint32, row by row, in the byte
 *                         order of the host that saved it: little-endian,
 *                         as every platform RedisBloom is built for
 *
 * RedisBloom's rows and hashing are the family's (cms.c), so the counters
 * are taken as they stand and the loaded sketch answers as RedisBloom's.
 */
#include <string.h>

#include "cms_internal.h"
#include "common/rdb_fields.h"
#include "common/format.h"
#include "sketch/redisbloom.h"

#define FIELD_WIDTH 0 /* the order of the unsigned fields */
#define FIELD_DEPTH 1
#define FIELD_TOTAL 2
#define UNSIGNED_FIELDS 3
#define COUNTER_BYTES sizeof(uint32_t)

int sk_cms_load_redisbloom(sk_cms **out, const sk_rdb_reader *r, int encver,
                           uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (r == NULL)
        return SK_EINVAL;
    if (encver != SK_REDISBLOOM_CMS_ENCVER)
        return SK_EVERSION;
    uint64_t field[UNSIGNED_FIELDS];
    int rc = sk__rdb_load_unsigneds(r, field, UNSIGNED_FIELDS);
    if (rc != SK_OK)
        return rc;
    uint64_t width = field[FIELD_WIDTH], depth = field[FIELD_DEPTH];
    /* RedisBloom refuses a zero dimension too; past 32 bits a dimension is
     * not one its 32-bit hashes could use. */
    if (width == 0 || depth == 0 || width > UINT32_MAX || depth > UINT32_MAX)
        return SK_ECORRUPT;
    uint64_t cells = width * depth; /* both below 2^32: no overflow */
    if (cells > SK_CMS_MAX_CELLS || cells > SIZE_MAX / COUNTER_BYTES)
        return SK_ETOOLARGE;
    if (max_memory != 0) {
        sk_cms_options o = {.width = (uint32_t)width, .depth = (uint32_t)depth,
                            .allocator = allocator};
        uint64_t memory = sk_cms_create_memory(&o);
        if (memory == 0 || memory > max_memory)
            return SK_EBUDGET;
    }
    const void *data;
    size_t len;
    rc = r->load_string(r->ctx, &data, &len);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    if (len != cells * COUNTER_BYTES || (data == NULL && len > 0))
        return SK_ECORRUPT;
    sk_cms *c;
    rc = sk__cms_alloc(&c, (uint32_t)width, (uint32_t)depth, allocator);
    if (rc != SK_OK)
        return rc;
    const uint8_t *in = data;
    for (size_t i = 0; i < (size_t)cells; i++)
        c->counters[i] = sk_load_le32(in + i * COUNTER_BYTES);
    c->total = field[FIELD_TOTAL];
    *out = c;
    return SK_OK;
}

void sk_cms_save_redisbloom(const sk_cms *c, const sk_rdb_writer *w)
{
    if (c == NULL || w == NULL)
        return;
    size_t bytes = (size_t)sk__cms_cells(c) * COUNTER_BYTES;
    w->save_unsigned(w->ctx, c->width);
    w->save_unsigned(w->ctx, c->depth);
    w->save_unsigned(w->ctx, c->total);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    /* The counters in RedisBloom's (little-endian) order need a copy here.
     * Without memory for it the string is left empty, which every loader
     * refuses: a save that cannot be read back, rather than a wrong one. */
    uint8_t *le = sk__alloc(&c->alloc, bytes);
    if (le == NULL) {
        w->save_string(w->ctx, "", 0);
        return;
    }
    for (size_t i = 0; i < bytes / COUNTER_BYTES; i++)
        sk_store_le32(le + i * COUNTER_BYTES, c->counters[i]);
    w->save_string(w->ctx, le, bytes);
    sk__free(&c->alloc, le, bytes);
#else
    /* Little-endian: the counters are already RedisBloom's bytes. */
    w->save_string(w->ctx, c->counters, bytes);
#endif
}
