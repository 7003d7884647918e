/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map_file.c: maps of sketches by key as bytes and files, the group
 * format of format.h (prose in docs/hll-format.md).
 *
 * A group file is a header, one record per group (its key and its sketch in
 * sketch's own HyperLogLog format, so that a group's bytes are exactly what
 * `sketch hll` would save of it), and a checksum of the records. It is
 * written in one pass, from the public calls of the map: each group's
 * sketch is made, serialized and written in turn, so that writing a map of
 * millions of small groups takes no more memory than its largest sketch.
 * Reading checks everything before it is believed: the header's checksum,
 * every length against what is left, every sketch, that no key comes
 * twice, and the records' checksum.
 */
#include <string.h>

#include "common/alloc.h"
#include "common/atomic_file.h"
#include "common/format.h"
#include "hll_map_internal.h"

/* Where the bytes of a map go: a buffer, or a file. */
struct sink {
    uint8_t *buf; /* NULL: only count them */
    size_t cap, len;
    int fd; /* >= 0: write them there */
    XXH3_state_t sum;
};

static int put(struct sink *s, const void *data, size_t n)
{
    if (s->fd >= 0)
        return sk__write_all(s->fd, data, n);
    if (s->buf != NULL) {
        if (n > s->cap - s->len)
            return SK_ENOSPACE;
        memcpy(s->buf + s->len, data, n);
    }
    s->len += n;
    return SK_OK;
}

static void header(const sk_hll_map *m, uint8_t head[SK_HG_HEADER_SIZE])
{
    memset(head, 0, SK_HG_HEADER_SIZE);
    memcpy(head + SK_HG_OFF_MAGIC, SK_HG_MAGIC, 4);
    head[SK_HG_OFF_VERSION] = SK_HG_VERSION;
    head[SK_HG_OFF_PRECISION] = (uint8_t)m->precision;
    sk_store_le64(head + SK_HG_OFF_GROUPS, sk_hll_map_size(m));
    sk_store_le32(head + SK_HG_OFF_CHECKSUM, XXH32(head, SK_HG_OFF_CHECKSUM, 0));
}

/* Writes the whole map into s. */
static int write_map(const sk_hll_map *m, struct sink *s)
{
    uint8_t head[SK_HG_HEADER_SIZE];
    header(m, head);
    int rc = put(s, head, sizeof head);
    XXH3_64bits_reset(&s->sum);
    for (size_t g = 0; rc == SK_OK && g < sk_hll_map_size(m); g++) {
        size_t key_len;
        const uint8_t *key = sk__hll_map_key(m, g, &key_len);
        sk_hll *h;
        rc = sk_hll_map_sketch(m, g, &h);
        if (rc != SK_OK)
            break;
        uint64_t cap;
        size_t len;
        sk_hll_serialized_size(h, SK_HLL_NATIVE, &cap);
        uint8_t *bytes = sk__alloc(sk__hll_map_allocator(m), cap);
        rc = bytes == NULL ? SK_ENOMEM : sk_hll_serialize(h, SK_HLL_NATIVE, bytes, cap, &len);
        sk_hll_free(h);
        if (rc == SK_OK) {
            uint8_t rec[SK_HG_REC_OFF_KEY];
            sk_store_le32(rec + SK_HG_REC_OFF_KEY_LEN, (uint32_t)key_len);
            sk_store_le32(rec + SK_HG_REC_OFF_SKETCH_LEN, (uint32_t)len);
            XXH3_64bits_update(&s->sum, rec, sizeof rec);
            XXH3_64bits_update(&s->sum, key, key_len);
            XXH3_64bits_update(&s->sum, bytes, len);
            rc = put(s, rec, sizeof rec);
            if (rc == SK_OK)
                rc = put(s, key, key_len);
            if (rc == SK_OK)
                rc = put(s, bytes, len);
        }
        if (bytes != NULL)
            sk__free(sk__hll_map_allocator(m), bytes, cap);
    }
    if (rc != SK_OK)
        return rc;
    uint8_t trailer[SK_HG_TRAILER_SIZE];
    sk_store_le64(trailer, XXH3_64bits_digest(&s->sum));
    return put(s, trailer, sizeof trailer);
}

int sk_hll_map_serialized_size(const sk_hll_map *m, uint64_t *size)
{
    if (m == NULL || size == NULL)
        return SK_EINVAL;
    struct sink s = {.fd = -1};
    int rc = write_map(m, &s);
    *size = s.len;
    return rc;
}

int sk_hll_map_serialize(const sk_hll_map *m, void *buf, size_t cap, size_t *len)
{
    if (m == NULL || buf == NULL || len == NULL)
        return SK_EINVAL;
    struct sink s = {.buf = buf, .cap = cap, .fd = -1};
    int rc = write_map(m, &s);
    *len = rc == SK_OK ? s.len : 0;
    return rc;
}

static int write_file(int fd, const void *ctx)
{
    struct sink s = {.fd = fd};
    return write_map(ctx, &s);
}

int sk_hll_map_save(const sk_hll_map *m, const char *path)
{
    if (m == NULL || path == NULL)
        return SK_EINVAL;
    return sk__atomic_write(path, write_file, m);
}

static int read_map(sk_hll_map *m, const uint8_t *p, size_t len, const sk_allocator *a)
{
    uint64_t groups = sk_load_le64(p + SK_HG_OFF_GROUPS);
    size_t at = SK_HG_HEADER_SIZE, end = len - SK_HG_TRAILER_SIZE;
    XXH3_state_t sum;
    XXH3_64bits_reset(&sum);
    for (uint64_t g = 0; g < groups; g++) {
        if (end - at < SK_HG_REC_OFF_KEY)
            return SK_ETRUNCATED;
        uint32_t key_len = sk_load_le32(p + at + SK_HG_REC_OFF_KEY_LEN);
        uint32_t sketch_len = sk_load_le32(p + at + SK_HG_REC_OFF_SKETCH_LEN);
        if (key_len > SK_HLL_MAP_MAX_KEY)
            return SK_ECORRUPT;
        if ((uint64_t)key_len + sketch_len > end - at - SK_HG_REC_OFF_KEY)
            return SK_ETRUNCATED;
        const uint8_t *key = p + at + SK_HG_REC_OFF_KEY, *bytes = key + key_len;
        sk_hll *h;
        sk_hll_format format;
        int rc = sk_hll_deserialize(&h, bytes, sketch_len, &format, a);
        if (rc != SK_OK)
            return rc == SK_ENOMEM ? rc : SK_ECORRUPT;
        if (format != SK_HLL_NATIVE || sk_hll_precision(h) != m->precision ||
            sk_hll_map_find(m, key, key_len) >= 0)
            rc = SK_ECORRUPT;
        else
            rc = sk_hll_map_merge_sketch(m, key, key_len, h);
        sk_hll_free(h);
        if (rc != SK_OK)
            return rc;
        size_t rec = SK_HG_REC_OFF_KEY + (size_t)key_len + sketch_len;
        XXH3_64bits_update(&sum, p + at, rec);
        at += rec;
    }
    if (at != end)
        return SK_ETRUNCATED;
    return XXH3_64bits_digest(&sum) == sk_load_le64(p + end) ? SK_OK : SK_ECHECKSUM;
}

int sk_hll_map_deserialize(sk_hll_map **out, const void *buf, size_t len,
                           const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL)
        return SK_EINVAL;
    const uint8_t *p = buf;
    if (len < 4 || memcmp(p, SK_HG_MAGIC, 4) != 0)
        return len < 4 && memcmp(p, SK_HG_MAGIC, len) == 0 ? SK_ETRUNCATED : SK_EFORMAT;
    if (len < SK_HG_HEADER_SIZE + SK_HG_TRAILER_SIZE)
        return SK_ETRUNCATED;
    if (p[SK_HG_OFF_VERSION] != SK_HG_VERSION)
        return SK_EVERSION;
    if (sk_load_le32(p + SK_HG_OFF_CHECKSUM) != XXH32(p, SK_HG_OFF_CHECKSUM, 0))
        return SK_ECHECKSUM;
    unsigned precision = p[SK_HG_OFF_PRECISION];
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION ||
        p[SK_HG_OFF_RESERVED] != 0 || p[SK_HG_OFF_RESERVED + 1] != 0 ||
        sk_load_le32(p + SK_HG_OFF_RESERVED2) != 0 ||
        sk_load_le64(p + SK_HG_OFF_GROUPS) > SK_HLL_MAP_MAX_GROUPS)
        return SK_ECORRUPT;
    sk_hll_map *m;
    int rc = sk__hll_map_create(&m, precision, allocator);
    if (rc != SK_OK)
        return rc;
    rc = read_map(m, p, len, allocator);
    if (rc != SK_OK) {
        sk_hll_map_free(m);
        return rc;
    }
    *out = m;
    return SK_OK;
}

static int parse_map(void *out, const uint8_t *bytes, size_t len, const sk_allocator *a,
                     void *ctx)
{
    (void)ctx;
    return sk_hll_map_deserialize(out, bytes, len, a);
}

int sk_hll_map_open(sk_hll_map **out, const char *path, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    return sk__open_file(path, SIZE_MAX / 2, allocator, parse_map, out, NULL);
}
