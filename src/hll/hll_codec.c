/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_codec.c: the serialized forms of a HyperLogLog behind the public
 * calls: which format a string is in (by its first four bytes), how large
 * and in which encoding a sketch is written, and sketch files (the reading
 * of a whole file is shared with the files of maps, hll_map_file.c).
 *
 * The two formats themselves are in hll_native.c and hll_redis.c; files
 * are written through the library's one atomic-file helper, so a crash
 * during a save leaves the old file or the new one.
 */
#include <errno.h>
#include <string.h>

#include "common/atomic_file.h"
#include "common/format.h"
#include "hll_internal.h"

int sk_hll_serialized_size(const sk_hll *h, sk_hll_format format, uint64_t *size)
{
    if (h == NULL || size == NULL)
        return SK_EINVAL;
    int sparse;
    size_t n;
    if (format == SK_HLL_NATIVE) {
        *size = sk__hll_native_size(h, &sparse);
        return SK_OK;
    }
    if (format != SK_HLL_REDIS)
        return SK_EINVAL;
    if (h->precision < SK_HLL_REDIS_PRECISION)
        return SK_EINCOMPAT;
    /* Without memory to fold a finer sketch the dense size, the larger of
     * the two, is always enough. */
    if (sk__hll_redis_size(h, &n, &sparse) != SK_OK)
        n = SK_REDIS_HLL_HEADER_SIZE + SK_REDIS_HLL_REGISTERS * 6 / 8;
    *size = n;
    return SK_OK;
}

int sk_hll_serialize(const sk_hll *h, sk_hll_format format, void *buf, size_t cap,
                     size_t *len)
{
    if (h == NULL || buf == NULL || len == NULL)
        return SK_EINVAL;
    if (format == SK_HLL_NATIVE)
        return sk__hll_native_write(h, buf, cap, len);
    if (format != SK_HLL_REDIS)
        return SK_EINVAL;
    if (h->precision < SK_HLL_REDIS_PRECISION)
        return SK_EINCOMPAT;
    return sk__hll_redis_write(h, buf, cap, len);
}

int sk_hll_deserialize(sk_hll **out, const void *buf, size_t len, sk_hll_format *format,
                       const sk_allocator *allocator)
{
    if (out == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    *out = NULL;
    const uint8_t *bytes = buf;
    size_t prefix = len < 4 ? len : 4;
    if (prefix > 0 && memcmp(bytes, SK_HLL_NATIVE_MAGIC, prefix) == 0) {
        if (format != NULL)
            *format = SK_HLL_NATIVE;
        return len < 4 ? SK_ETRUNCATED : sk__hll_native_read(out, bytes, len, allocator);
    }
    if (prefix > 0 && memcmp(bytes, SK_REDIS_HLL_MAGIC, prefix) == 0) {
        if (format != NULL)
            *format = SK_HLL_REDIS;
        return len < 4 ? SK_ETRUNCATED : sk__hll_redis_read(out, bytes, len, allocator);
    }
    return SK_EFORMAT;
}

int sk_hll_serialized_encoding(const sk_hll *h, sk_hll_format format)
{
    if (h == NULL || (format != SK_HLL_NATIVE && format != SK_HLL_REDIS))
        return SK_EINVAL;
    int sparse;
    size_t size;
    if (format == SK_HLL_NATIVE) {
        sk__hll_native_size(h, &sparse);
    } else {
        if (h->precision < SK_HLL_REDIS_PRECISION)
            return SK_EINCOMPAT;
        int rc = sk__hll_redis_size(h, &size, &sparse);
        if (rc != SK_OK)
            return rc;
    }
    return sparse ? SK_HLL_SPARSE : SK_HLL_DENSE;
}

int sk_hll_save(const sk_hll *h, sk_hll_format format, const char *path)
{
    if (h == NULL || path == NULL)
        return SK_EINVAL;
    uint64_t cap;
    int rc = sk_hll_serialized_size(h, format, &cap);
    if (rc != SK_OK)
        return rc;
    uint8_t *buf = sk__alloc(&h->alloc, cap);
    if (buf == NULL)
        return SK_ENOMEM;
    size_t len;
    rc = sk_hll_serialize(h, format, buf, cap, &len);
    if (rc == SK_OK)
        rc = sk__atomic_write_bytes(path, buf, len);
    int saved_errno = errno;
    sk__free(&h->alloc, buf, cap);
    errno = saved_errno;
    return rc;
}

static int parse_sketch(void *out, const uint8_t *bytes, size_t len, const sk_allocator *a,
                        void *format)
{
    return sk_hll_deserialize(out, bytes, len, format, a);
}

int sk_hll_open(sk_hll **out, const char *path, sk_hll_format *format,
                const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    return sk__open_file(path, SK_HLL_MAX_SERIALIZED_SIZE, allocator, parse_sketch, out, format);
}
