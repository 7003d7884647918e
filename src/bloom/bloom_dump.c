/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_dump.c: a Bloom filter as one byte string, the dump: the header of
 * format.h with the bit arrays packed right after the layer table, for
 * keeping a filter somewhere other than a file (a database value, a network
 * message). A dump can be read in pieces and a filter rebuilt from pieces,
 * so neither side needs a second copy of a large filter; the one-call
 * serialize and deserialize are built on the pieces.
 */
#include <string.h>

#include "bloom_format.h"
#include "bloom_math.h"
#include "common/format.h"

uint64_t sk_bloom_dump_size(const sk_bloom *f)
{
    return sk__bloom_end(f, 1);
}

size_t sk_bloom_dump_header_size(const sk_bloom *f)
{
    return sk__bloom_header_size(f->nlayers);
}

/* Copies between the caller's buffer and the parts of the layer arrays
 * that bytes [offset, offset + len) of a dump cover, in order. SK_EINVAL if
 * the range is not within the arrays. */
static int copy_spans(const sk_bloom *f, uint64_t offset, size_t len, uint8_t *buf, int in)
{
    uint64_t size = sk_bloom_dump_size(f);
    if (offset < sk__bloom_header_size(f->nlayers) || offset > size || len > size - offset)
        return SK_EINVAL;
    uint64_t start = sk__bloom_first_array(f->nlayers, 1);
    for (unsigned i = 0; i < f->nlayers && len > 0; i++) {
        struct layer *l = &sk__bloom_layers(f)[i];
        uint64_t bytes = layer_nwords(l) * 8, next = sk__bloom_next_array(start, bytes, 1);
        if (offset < start + bytes) {
            uint64_t at = offset - start;
            size_t chunk = bytes - at < len ? (size_t)(bytes - at) : len;
            uint8_t *array = (uint8_t *)(void *)l->words + at;
            if (in)
                memcpy(array, buf, chunk);
            else
                memcpy(buf, array, chunk);
            buf += chunk;
            offset += chunk;
            len -= chunk;
        }
        start = next;
    }
    return SK_OK;
}

int sk_bloom_dump_read(const sk_bloom *f, uint64_t offset, void *buf, size_t len)
{
    if (f == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    size_t head_len = sk__bloom_header_size(f->nlayers);
    uint8_t *out = buf;
    if (offset == 0 && len >= head_len) {
        /* The whole header: encoded in place, so that a save needs no memory. */
        sk__bloom_encode_header(f, out, 1);
        out += head_len;
        offset = head_len;
        len -= head_len;
    } else if (offset < head_len && len > 0) {
        uint8_t *head = sk__alloc(&f->alloc, head_len);
        if (head == NULL)
            return SK_ENOMEM;
        sk__bloom_encode_header(f, head, 1);
        size_t chunk = head_len - (size_t)offset < len ? head_len - (size_t)offset : len;
        memcpy(out, head + offset, chunk);
        sk__free(&f->alloc, head, head_len);
        out += chunk;
        offset += chunk;
        len -= chunk;
    }
    return len == 0 ? SK_OK : copy_spans(f, offset, len, out, 0);
}

/* The bytes of the first array a header of `len` bytes declares, read
 * before the header is validated, only so that a small one is allocated
 * with the filter's record; 0 if the header is too short to tell. */
static uint64_t first_array_hint(const uint8_t *p, size_t len, sk_bloom_layout *layout)
{
    if (len < sk__bloom_header_size(1))
        return 0;
    *layout = p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_CLASSIC ? SK_BLOOM_CLASSIC
              : p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_SPLIT ? SK_BLOOM_SPLIT
                                                          : SK_BLOOM_BLOCKED;
    uint64_t bits = sk_load_le64(p + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_BITS);
    return bits > SK_BLOOM_MAX_BITS ? 0 : sk__bloom_words(*layout, bits) * 8;
}

/* restore_begin for a dump of `total` bytes (UINT64_MAX: not known), so
 * that a header declaring more than the bytes at hand allocates nothing. */
static int begin(sk_bloom **out, const void *header, size_t len, uint64_t total,
                 size_t *header_len, const sk_allocator *allocator, uint64_t max_memory)
{
    sk_bloom_layout layout = SK_BLOOM_BLOCKED;
    uint64_t first = first_array_hint(header, len, &layout);
    sk_bloom *f = sk__bloom_alloc(layout, 0, 0, allocator, first);
    if (f == NULL)
        return SK_ENOMEM;
    f->max_memory = max_memory;
    int rc = sk__bloom_decode_header(f, header, len, total, header_len);
    if (rc == SK_OK && !sk__bloom_is_packed(header))
        rc = SK_ECORRUPT; /* a file's header, not a dump's */
    if (rc == SK_OK)
        rc = sk__bloom_alloc_arrays(f);
    if (rc == SK_OK)
        f->flags |= SK__BLOOM_RESTORING;
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

int sk_bloom_restore_begin(sk_bloom **out, const void *header, size_t len,
                           size_t *header_len, const sk_allocator *allocator,
                           uint64_t max_memory)
{
    if (out == NULL || header == NULL || header_len == NULL)
        return SK_EINVAL;
    *out = NULL;
    return begin(out, header, len, UINT64_MAX, header_len, allocator, max_memory);
}

int sk_bloom_restore_chunk(sk_bloom *f, uint64_t offset, const void *data, size_t len)
{
    if (f == NULL || (data == NULL && len > 0))
        return SK_EINVAL;
    if (!(f->flags & SK__BLOOM_RESTORING))
        return SK_EINCOMPAT;
    return len == 0 ? SK_OK : copy_spans(f, offset, len, (uint8_t *)(uintptr_t)data, 1);
}

int sk_bloom_restore_finish(sk_bloom *f)
{
    if (f == NULL)
        return SK_EINVAL;
    if (!(f->flags & SK__BLOOM_RESTORING))
        return SK_EINCOMPAT;
    int rc = sk__bloom_verify_arrays(f);
    if (rc == SK_OK) {
        /* Complete: an in-memory filter, which needs no checksums. */
        f->flags &= (uint8_t)~SK__BLOOM_RESTORING;
        f->file->release(f);
    }
    return rc;
}

int sk_bloom_restoring(const sk_bloom *f)
{
    return f != NULL && (f->flags & SK__BLOOM_RESTORING) != 0;
}

int sk_bloom_serialized_size(const sk_bloom *f, uint64_t *size)
{
    if (f == NULL || size == NULL)
        return SK_EINVAL;
    *size = sk_bloom_dump_size(f);
    return SK_OK;
}

int sk_bloom_serialize(const sk_bloom *f, void *buf, size_t cap, size_t *len)
{
    if (f == NULL || buf == NULL || len == NULL)
        return SK_EINVAL;
    uint64_t size = sk_bloom_dump_size(f);
    if (size > cap)
        return SK_ENOSPACE;
    int rc = sk_bloom_dump_read(f, 0, buf, (size_t)size);
    if (rc == SK_OK)
        *len = (size_t)size;
    return rc;
}

int sk_bloom_deserialize(sk_bloom **out, const void *buf, size_t len,
                         const sk_allocator *allocator)
{
    if (out == NULL || (buf == NULL && len > 0))
        return SK_EINVAL;
    *out = NULL;
    sk_bloom *f;
    size_t header_len;
    int rc = begin(&f, len ? buf : "", len, len, &header_len, allocator, 0);
    if (rc != SK_OK)
        return rc;
    rc = sk_bloom_restore_chunk(f, header_len, (const uint8_t *)buf + header_len,
                                    len - header_len);
    if (rc == SK_OK)
        rc = sk_bloom_restore_finish(f);
    if (rc != SK_OK) {
        sk_bloom_free(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}
