/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_format.c: a t-digest as one byte string and back, in the layout
 * src/common/format.h gives (SK_TDIGEST_*) and docs/tdigest-format.md
 * explains: a 72-byte header, then the centroids and the buffer as they
 * stand, so that a digest read back compresses when the original would
 * have, and answers as it would have.
 */
#include <float.h>
#include <math.h>
#include <string.h>

/* XXH3_state_t: the checksum runs over two separate spans. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/format.h"
#include "tdigest_internal.h"

static uint64_t serialized_size(const sk_tdigest *t)
{
    return SK_TDIGEST_HEADER_SIZE + (uint64_t)sk__tdigest_nodes(t) * SK_TDIGEST_NODE_SIZE;
}

static uint64_t checksum(const uint8_t *header, const uint8_t *nodes, size_t nodes_len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_TDIGEST_OFF_CHECKSUM);
    XXH3_64bits_update(&state, nodes, nodes_len);
    return XXH3_64bits_digest(&state);
}

int sk_tdigest_serialized_size(const sk_tdigest *t, uint64_t *size)
{
    if (t == NULL || size == NULL)
        return SK_EINVAL;
    *size = serialized_size(t);
    return SK_OK;
}

int sk_tdigest_serialize(const sk_tdigest *t, void *buf, size_t cap, size_t *len)
{
    if (t == NULL || (buf == NULL && cap > 0))
        return SK_EINVAL;
    uint64_t size = serialized_size(t);
    if (size > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf;
    memset(out, 0, SK_TDIGEST_HEADER_SIZE);
    memcpy(out + SK_TDIGEST_OFF_MAGIC, SK_TDIGEST_MAGIC, 4);
    out[SK_TDIGEST_OFF_VERSION] = SK_TDIGEST_VERSION;
    sk_store_le32(out + SK_TDIGEST_OFF_COMPRESSION, t->compression);
    sk_store_le32(out + SK_TDIGEST_OFF_MERGED, t->merged);
    sk_store_le32(out + SK_TDIGEST_OFF_UNMERGED, t->unmerged);
    sk_store_le64(out + SK_TDIGEST_OFF_COMPRESSIONS, (uint64_t)t->total_compressions);
    sk_store_le64(out + SK_TDIGEST_OFF_MERGED_WEIGHT, (uint64_t)t->merged_weight);
    sk_store_le64(out + SK_TDIGEST_OFF_UNMERGED_WEIGHT, (uint64_t)t->unmerged_weight);
    sk_store_le_double(out + SK_TDIGEST_OFF_MIN, t->min);
    sk_store_le_double(out + SK_TDIGEST_OFF_MAX, t->max);
    uint8_t *nodes = out + SK_TDIGEST_HEADER_SIZE;
    uint32_t n = sk__tdigest_nodes(t);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *node = nodes + (size_t)i * SK_TDIGEST_NODE_SIZE;
        sk_store_le_double(node + SK_TDIGEST_NODE_OFF_MEAN, t->mean[i]);
        sk_store_le64(node + SK_TDIGEST_NODE_OFF_WEIGHT, (uint64_t)t->weight[i]);
    }
    sk_store_le64(out + SK_TDIGEST_OFF_CHECKSUM,
                  checksum(out, nodes, (size_t)n * SK_TDIGEST_NODE_SIZE));
    if (len != NULL)
        *len = (size_t)size;
    return SK_OK;
}

/* The nodes agree with the header: weights of at least 1 whose sum fits
 * (so that no later compression overflows), and a buffer whose weights
 * add up to its total. Means may be anything a digest can come to hold:
 * centroids of values near +-DBL_MAX overflow to infinities, and their
 * differences to NaN, as in RedisBloom, and reads of them stay in bounds. */
static int check_nodes(const uint8_t *nodes, uint32_t merged, uint32_t unmerged,
                       int64_t unmerged_weight)
{
    uint64_t sum = 0, buffered = 0;
    for (uint32_t i = 0; i < merged + unmerged; i++) {
        const uint8_t *node = nodes + (size_t)i * SK_TDIGEST_NODE_SIZE;
        uint64_t weight = sk_load_le64(node + SK_TDIGEST_NODE_OFF_WEIGHT);
        if (weight == 0 || weight > (uint64_t)INT64_MAX - sum)
            return SK_ECORRUPT;
        sum += weight;
        if (i >= merged)
            buffered += weight;
    }
    return buffered == (uint64_t)unmerged_weight ? SK_OK : SK_ECORRUPT;
}

static int check_header(const uint8_t *in, uint32_t *compression, uint32_t *merged,
                        uint32_t *unmerged)
{
    if (in[SK_TDIGEST_OFF_RESERVED] != 0 || in[SK_TDIGEST_OFF_RESERVED + 1] != 0 ||
        in[SK_TDIGEST_OFF_RESERVED + 2] != 0 || sk_load_le32(in + SK_TDIGEST_OFF_RESERVED2) != 0)
        return SK_ECORRUPT;
    *compression = sk_load_le32(in + SK_TDIGEST_OFF_COMPRESSION);
    *merged = sk_load_le32(in + SK_TDIGEST_OFF_MERGED);
    *unmerged = sk_load_le32(in + SK_TDIGEST_OFF_UNMERGED);
    if (*compression == 0 || *compression > SK_TDIGEST_MAX_COMPRESSION ||
        (uint64_t)*merged + *unmerged > 6 * (uint64_t)*compression + 10)
        return SK_ECORRUPT;
    int64_t compressions = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_COMPRESSIONS);
    int64_t merged_weight = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_MERGED_WEIGHT);
    int64_t unmerged_weight = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_UNMERGED_WEIGHT);
    if (compressions < 0 || merged_weight < 0 || unmerged_weight < 0 ||
        merged_weight > INT64_MAX - unmerged_weight ||
        (double)merged_weight + (double)unmerged_weight >= 9223372036854775808.0 ||
        (*merged == 0) != (merged_weight == 0))
        return SK_ECORRUPT;
    double min = sk_load_le_double(in + SK_TDIGEST_OFF_MIN);
    double max = sk_load_le_double(in + SK_TDIGEST_OFF_MAX);
    if (*merged + *unmerged == 0)
        return min == DBL_MAX && max == -DBL_MAX ? SK_OK : SK_ECORRUPT;
    return isfinite(min) && isfinite(max) && min <= max ? SK_OK : SK_ECORRUPT;
}

int sk_tdigest_deserialize(sk_tdigest **out, const void *buf, size_t len,
                           const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL && len > 0)
        return SK_EINVAL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_TDIGEST_OFF_MAGIC, SK_TDIGEST_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_TDIGEST_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_TDIGEST_OFF_VERSION] != SK_TDIGEST_VERSION)
        return SK_EVERSION;
    uint32_t compression, merged, unmerged;
    int rc = check_header(in, &compression, &merged, &unmerged);
    if (rc != SK_OK)
        return rc;
    /* Sizes are checked before anything is allocated, and a digest takes
     * room for the nodes it holds, not for its capacity: a header cannot
     * ask for more memory than its bytes hold nodes for. */
    uint64_t n = (uint64_t)merged + unmerged;
    if ((len - SK_TDIGEST_HEADER_SIZE) % SK_TDIGEST_NODE_SIZE != 0 ||
        (len - SK_TDIGEST_HEADER_SIZE) / SK_TDIGEST_NODE_SIZE != n)
        return SK_ETRUNCATED;
    const uint8_t *nodes = in + SK_TDIGEST_HEADER_SIZE;
    if (checksum(in, nodes, (size_t)n * SK_TDIGEST_NODE_SIZE) !=
        sk_load_le64(in + SK_TDIGEST_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    int64_t unmerged_weight = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_UNMERGED_WEIGHT);
    if ((rc = check_nodes(nodes, merged, unmerged, unmerged_weight)) != SK_OK)
        return rc;
    sk_tdigest *t;
    if ((rc = sk__tdigest_alloc(&t, compression, allocator)) != SK_OK)
        return rc;
    if ((rc = sk__tdigest_reserve(t, (uint32_t)n)) != SK_OK) {
        sk_tdigest_free(t);
        return rc;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *node = nodes + (size_t)i * SK_TDIGEST_NODE_SIZE;
        t->mean[i] = sk_load_le_double(node + SK_TDIGEST_NODE_OFF_MEAN);
        t->weight[i] = (int64_t)sk_load_le64(node + SK_TDIGEST_NODE_OFF_WEIGHT);
    }
    t->merged = merged;
    t->unmerged = unmerged;
    t->merged_weight = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_MERGED_WEIGHT);
    t->unmerged_weight = unmerged_weight;
    t->total_compressions = (int64_t)sk_load_le64(in + SK_TDIGEST_OFF_COMPRESSIONS);
    t->min = sk_load_le_double(in + SK_TDIGEST_OFF_MIN);
    t->max = sk_load_le_double(in + SK_TDIGEST_OFF_MAX);
    *out = t;
    return SK_OK;
}
