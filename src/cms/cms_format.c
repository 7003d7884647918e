/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_format.c: a count-min sketch as one byte string and back, in the
 * layout src/common/format.h gives (SK_CMS_*) and docs/cms-format.md
 * explains: a 32-byte header, then the counters, little-endian, row by row.
 */
#include <string.h>

/* XXH3_state_t: the checksum runs over two separate spans. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "cms_internal.h"
#include "common/format.h"

static uint64_t serialized_size(const sk_cms *c)
{
    return SK_CMS_HEADER_SIZE + sk__cms_cells(c) * sizeof(uint32_t);
}

/* XXH3-64 of the header's first SK_CMS_OFF_CHECKSUM bytes and the
 * counters, wherever the counters are. */
static uint64_t checksum(const uint8_t *header, const uint8_t *counters, size_t counters_len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_CMS_OFF_CHECKSUM);
    XXH3_64bits_update(&state, counters, counters_len);
    return XXH3_64bits_digest(&state);
}

int sk_cms_serialized_size(const sk_cms *c, uint64_t *size)
{
    if (c == NULL || size == NULL)
        return SK_EINVAL;
    *size = serialized_size(c);
    return SK_OK;
}

int sk_cms_serialize(const sk_cms *c, void *buf, size_t cap, size_t *len)
{
    if (c == NULL || (buf == NULL && cap > 0))
        return SK_EINVAL;
    uint64_t size = serialized_size(c);
    if (size > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf;
    memset(out, 0, SK_CMS_HEADER_SIZE);
    memcpy(out + SK_CMS_OFF_MAGIC, SK_CMS_MAGIC, 4);
    out[SK_CMS_OFF_VERSION] = SK_CMS_VERSION;
    out[SK_CMS_OFF_HASH] = SK_CMS_HASH_MURMUR2;
    sk_store_le32(out + SK_CMS_OFF_WIDTH, c->width);
    sk_store_le32(out + SK_CMS_OFF_DEPTH, c->depth);
    sk_store_le64(out + SK_CMS_OFF_TOTAL, c->total);
    uint8_t *counters = out + SK_CMS_HEADER_SIZE;
    size_t cells = (size_t)sk__cms_cells(c);
    for (size_t i = 0; i < cells; i++)
        sk_store_le32(counters + i * 4, c->counters[i]);
    sk_store_le64(out + SK_CMS_OFF_CHECKSUM, checksum(out, counters, cells * 4));
    if (len != NULL)
        *len = (size_t)size;
    return SK_OK;
}

int sk_cms_deserialize(sk_cms **out, const void *buf, size_t len, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL && len > 0)
        return SK_EINVAL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_CMS_OFF_MAGIC, SK_CMS_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_CMS_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_CMS_OFF_VERSION] != SK_CMS_VERSION)
        return SK_EVERSION;
    uint32_t width = sk_load_le32(in + SK_CMS_OFF_WIDTH);
    uint32_t depth = sk_load_le32(in + SK_CMS_OFF_DEPTH);
    uint64_t cells = (uint64_t)width * depth;
    if (in[SK_CMS_OFF_HASH] != SK_CMS_HASH_MURMUR2 || in[SK_CMS_OFF_RESERVED] != 0 ||
        in[SK_CMS_OFF_RESERVED + 1] != 0 || cells == 0 || cells > SK_CMS_MAX_CELLS)
        return SK_ECORRUPT;
    /* Sizes are checked before anything is allocated: a header cannot ask
     * for more memory than its bytes hold counters for. */
    if ((len - SK_CMS_HEADER_SIZE) / 4 != cells || (len - SK_CMS_HEADER_SIZE) % 4 != 0)
        return SK_ETRUNCATED;
    const uint8_t *counters = in + SK_CMS_HEADER_SIZE;
    if (checksum(in, counters, (size_t)cells * 4) != sk_load_le64(in + SK_CMS_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    sk_cms *c;
    int rc = sk__cms_alloc(&c, width, depth, allocator);
    if (rc != SK_OK)
        return rc;
    for (size_t i = 0; i < (size_t)cells; i++)
        c->counters[i] = sk_load_le32(counters + i * 4);
    c->total = sk_load_le64(in + SK_CMS_OFF_TOTAL);
    *out = c;
    return SK_OK;
}
