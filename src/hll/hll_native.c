/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_native.c: sketch's own HyperLogLog format, version 1, read and
 * written (the byte table is in format.h, the prose in docs/hll-format.md).
 *
 * The header carries the precision and the hash, so a sketch of any
 * precision keeps its meaning wherever it goes, and a checksum over the
 * whole string. The body is either every register packed to 6 bits, as
 * Redis packs them (12 KB at p = 14), or the nonzero registers as 4-byte
 * entries (index << 6 | value) in increasing index order, whichever is
 * smaller. The reader accepts a string only if every field, length, value
 * and the checksum is exactly as described, so any byte string gives a
 * sketch or an error, never a sketch that is not one.
 */
#include <string.h>

#include <xxhash.h>

#include "common/format.h"
#include "hll_internal.h"

static uint32_t nonzero_registers(const sk_hll *h)
{
    if (h->registers == NULL)
        return h->sparse_len;
    uint32_t m = sk__hll_registers(h->precision), nonzero = 0;
    for (uint32_t i = 0; i < m; i++)
        nonzero += h->registers[i] != 0;
    return nonzero;
}

static uint32_t checksum(const uint8_t *header, const uint8_t *body, size_t body_len)
{
    return XXH32(body, body_len, XXH32(header, SK_HLL_OFF_CHECKSUM, 0));
}

size_t sk__hll_native_size(const sk_hll *h, int *sparse)
{
    size_t entries = nonzero_registers(h);
    size_t sparse_body = entries * SK_HLL_SPARSE_ENTRY_SIZE;
    *sparse = sparse_body < sk__hll_dense_size(h->precision);
    return SK_HLL_NATIVE_HEADER_SIZE + (*sparse ? sparse_body : sk__hll_dense_size(h->precision));
}

/* Writes the nonzero registers as sparse entries; returns their number. */
static uint32_t write_entries(const sk_hll *h, uint8_t *body)
{
    uint32_t entries = 0;
    if (h->registers == NULL) {
        for (; entries < h->sparse_len; entries++) {
            uint32_t idx = h->sparse[entries] >> 8, value = h->sparse[entries] & 0xff;
            sk_store_le32(body + SK_HLL_SPARSE_ENTRY_SIZE * entries, idx << 6 | value);
        }
        return entries;
    }
    uint32_t m = sk__hll_registers(h->precision);
    for (uint32_t i = 0; i < m; i++)
        if (h->registers[i] != 0)
            sk_store_le32(body + SK_HLL_SPARSE_ENTRY_SIZE * entries++, i << 6 | h->registers[i]);
    return entries;
}

/* Reads the entries of a sparse body, checking each one. */
static int read_sparse(sk_hll *h, const uint8_t *body, size_t len)
{
    uint32_t m = sk__hll_registers(h->precision);
    size_t entries = len / SK_HLL_SPARSE_ENTRY_SIZE; /* the header's count, checked */
    for (size_t i = 0; i < entries; i++) {
        uint32_t entry = sk_load_le32(body + SK_HLL_SPARSE_ENTRY_SIZE * i);
        uint32_t idx = entry >> 6, value = entry & 63;
        int ordered =
            i == 0 || idx > sk_load_le32(body + SK_HLL_SPARSE_ENTRY_SIZE * (i - 1)) >> 6;
        if (idx >= m || value == 0 || value > sk__hll_max_rank(h->precision) || !ordered)
            return SK_ECORRUPT;
        /* Entries arrive in index order, so every set appends. */
        int rc = sk__hll_set(h, idx, value);
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

int sk__hll_native_write(const sk_hll *h, uint8_t *buf, size_t cap, size_t *len)
{
    int sparse;
    size_t size = sk__hll_native_size(h, &sparse);
    if (cap < size)
        return SK_ENOSPACE;
    uint8_t *body = buf + SK_HLL_NATIVE_HEADER_SIZE;
    uint32_t entries = 0;
    if (sparse)
        entries = write_entries(h, body);
    else
        sk__hll_pack6(h, body);
    memcpy(buf + SK_HLL_OFF_MAGIC, SK_HLL_NATIVE_MAGIC, 4);
    buf[SK_HLL_OFF_VERSION] = SK_HLL_NATIVE_VERSION;
    buf[SK_HLL_OFF_ENCODING] = sparse ? SK_HLL_NATIVE_SPARSE : SK_HLL_NATIVE_DENSE;
    buf[SK_HLL_OFF_PRECISION] = (uint8_t)h->precision;
    buf[SK_HLL_OFF_HASH] = SK_HLL_NATIVE_HASH_MURMUR64A_REDIS;
    sk_store_le32(buf + SK_HLL_OFF_ENTRIES, entries);
    sk_store_le32(buf + SK_HLL_OFF_CHECKSUM,
                  checksum(buf, body, size - SK_HLL_NATIVE_HEADER_SIZE));
    *len = size;
    return SK_OK;
}

int sk__hll_native_read(sk_hll **out, const uint8_t *buf, size_t len, const sk_allocator *a)
{
    if (len < SK_HLL_NATIVE_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (buf[SK_HLL_OFF_VERSION] != SK_HLL_NATIVE_VERSION)
        return SK_EVERSION;
    unsigned encoding = buf[SK_HLL_OFF_ENCODING], precision = buf[SK_HLL_OFF_PRECISION];
    if (encoding > SK_HLL_NATIVE_SPARSE || precision < SK_HLL_MIN_PRECISION ||
        precision > SK_HLL_MAX_PRECISION || buf[SK_HLL_OFF_HASH] != SK_HLL_NATIVE_HASH_MURMUR64A_REDIS)
        return SK_ECORRUPT;
    uint32_t entries = sk_load_le32(buf + SK_HLL_OFF_ENTRIES);
    size_t body_len = len - SK_HLL_NATIVE_HEADER_SIZE;
    const uint8_t *body = buf + SK_HLL_NATIVE_HEADER_SIZE;
    if (encoding == SK_HLL_NATIVE_DENSE) {
        if (entries != 0)
            return SK_ECORRUPT;
        if (body_len != sk__hll_dense_size(precision))
            return SK_ETRUNCATED;
    } else {
        if (entries > sk__hll_registers(precision))
            return SK_ECORRUPT;
        if (body_len != (size_t)entries * SK_HLL_SPARSE_ENTRY_SIZE)
            return SK_ETRUNCATED;
    }
    if (checksum(buf, body, body_len) != sk_load_le32(buf + SK_HLL_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    return sk__hll_read_body(out, precision, a, encoding == SK_HLL_NATIVE_DENSE, body, body_len,
                             read_sparse);
}
