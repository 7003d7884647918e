/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_format.c: the header and layer table of Bloom filter files
 * (version 2) and dumps (version 1), and of both for split filters
 * (version 3), written and validated, and the chunk
 * sums of files (the byte table is in format.h, the prose in
 * docs/bloom-format.md).
 *
 * Files and dumps share the header; they differ in where the bit arrays
 * sit and in what their checksums cover. In files each array starts on a
 * page boundary, so that the file maps into memory with every word aligned,
 * and every chunk of an array (64 KiB) has a sum of its own, kept after the
 * arrays, so that an add that changes a few chunks of a large file in place
 * rewrites the sums of those chunks alone. In dumps the arrays are packed,
 * each right after the previous part, and each has one checksum in the
 * layer table. The header and table are checked whenever they are read; the
 * arrays' sums only when asked (a file) or once every piece is in (a dump),
 * since that reads every array.
 *
 * What a filter keeps of the file or dump it was read from, its source, is
 * made here too: the checksums and chunk sums the header declares, and
 * hooks for the core that allow every write (bloom_in_place.c replaces
 * them for files open in place).
 */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <sys/mman.h>

/* Inlined, so that XXH32_state_t can live on the stack. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_format.h"
#include "bloom_math.h"
#include "common/format.h"

_Static_assert(SK_BF_BLOCK_BITS == SK__BLOOM_BLOCK_BITS, "one block is one cache line");

/* A source's hooks: writes need nothing of a file read into memory or
 * mapped privately, nor of a dump. */
static int allow_write(sk_bloom *f, const struct item_hash *h, size_t n)
{
    (void)f;
    (void)h;
    (void)n;
    return SK_OK;
}

static size_t checksums_bytes(unsigned n)
{
    return (size_t)n * sizeof(uint64_t);
}

/* Checksums that a copy must carry: those of an unfinished restore, which
 * its arrays will match only once every piece is in. */
static int copy_source(sk_bloom *dst, const sk_bloom *src)
{
    const struct sk__bloom_source *s = sk__bloom_source(src);
    if (!(src->flags & SK__BLOOM_RESTORING) || s->checksums == NULL)
        return SK_OK;
    int rc = sk__bloom_source_attach(dst);
    if (rc != SK_OK)
        return rc;
    struct sk__bloom_source *d = sk__bloom_source(dst);
    d->checksums = sk__alloc(&dst->alloc, checksums_bytes(s->nchecksums));
    if (d->checksums == NULL)
        return SK_ENOMEM;
    memcpy(d->checksums, s->checksums, checksums_bytes(s->nchecksums));
    d->nchecksums = s->nchecksums;
    d->hooks.memory += checksums_bytes(s->nchecksums);
    return SK_OK;
}

int sk__bloom_source_attach(sk_bloom *f)
{
    struct sk__bloom_source *s = sk__zalloc(&f->alloc, sizeof *s);
    if (s == NULL)
        return SK_ENOMEM;
    s->hooks = (struct sk__bloom_file){.before_write = allow_write, .copy = copy_source,
                                       .release = sk__bloom_source_release,
                                       .memory = sizeof *s};
    f->file = &s->hooks;
    sk__bloom_update_paths(f);
    return SK_OK;
}

void sk__bloom_source_release(sk_bloom *f)
{
    struct sk__bloom_source *s = sk__bloom_source(f);
    if (s->file_copy.block != NULL)
        sk__array_free(&f->alloc, &s->file_copy);
    else if (s->map != NULL)
        munmap(s->map, s->map_len);
    sk__free(&f->alloc, s->checksums, checksums_bytes(s->nchecksums));
    sk__free(&f->alloc, s, sizeof *s);
    f->file = NULL;
    sk__bloom_update_paths(f);
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

size_t sk__bloom_header_size(unsigned nlayers)
{
    return SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * nlayers;
}

uint64_t sk__bloom_first_array(unsigned nlayers, int packed)
{
    return align_up(sk__bloom_header_size(nlayers),
                    packed ? SK_BF_DUMP_ALIGN : SK_BF_FILE_ALIGN);
}

uint64_t sk__bloom_next_array(uint64_t offset, uint64_t bytes, int packed)
{
    return align_up(offset + bytes, packed ? SK_BF_DUMP_ALIGN : SK_BF_FILE_ALIGN);
}

uint64_t sk__bloom_end(const sk_bloom *f, int packed)
{
    uint64_t at = sk__bloom_first_array(f->nlayers, packed);
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        at = sk__bloom_next_array(at, layer_nwords(&sk__bloom_layers(f)[i]) * 8, packed);
    return at + layer_nwords(&sk__bloom_layers(f)[f->nlayers - 1]) * 8;
}

uint64_t sk__bloom_layer_chunks(const struct layer *l, unsigned shift)
{
    return (layer_nwords(l) * 8 + ((uint64_t)1 << shift) - 1) >> shift;
}

uint64_t sk__bloom_chunks(const sk_bloom *f, unsigned shift)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < f->nlayers; i++)
        n += sk__bloom_layer_chunks(&sk__bloom_layers(f)[i], shift);
    return n;
}

uint64_t sk__bloom_marks_size(uint64_t chunks)
{
    return (chunks + 63) / 64 * SK_BF_MARK_WORD;
}

uint64_t sk__bloom_chunk_sum(const struct layer *l, uint64_t chunk, unsigned shift)
{
    uint64_t start = chunk << shift, bytes = layer_nwords(l) * 8;
    uint64_t len = bytes - start < ((uint64_t)1 << shift) ? bytes - start : (uint64_t)1 << shift;
    return XXH3_64bits((const uint8_t *)(const void *)l->words + start, (size_t)len);
}

/* The checksum a restore was given for layer i; 0 for a layer it grew
 * since. */
static uint64_t restoring_checksum(const sk_bloom *f, unsigned i)
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    return i < s->nchecksums ? s->checksums[i] : 0;
}

static uint32_t header_checksum(const uint8_t *head, unsigned nlayers)
{
    XXH32_state_t state;
    XXH32_reset(&state, 0);
    XXH32_update(&state, head, SK_BF_CHECKSUMMED_HEADER);
    XXH32_update(&state, head + SK_BF_HEADER_SIZE,
                 sk__bloom_header_size(nlayers) - SK_BF_HEADER_SIZE);
    return XXH32_digest(&state);
}

void sk__bloom_encode_header(const sk_bloom *f, uint8_t *head, int packed)
{
    memset(head, 0, sk__bloom_header_size(f->nlayers));
    memcpy(head + SK_BF_OFF_MAGIC, SK_BF_MAGIC, 4);
    /* Only split filters take version 3, so that every other file stays
     * readable by the versions of sketch before it. */
    head[SK_BF_OFF_VERSION] = f->layout == SK_BLOOM_SPLIT ? SK_BF_VERSION_SPLIT
                              : packed                    ? SK_BF_VERSION_DUMP
                                                          : SK_BF_VERSION_FILE;
    head[SK_BF_OFF_CHUNK_SHIFT] = packed ? 0 : SK_BF_CHUNK_SHIFT;
    head[SK_BF_OFF_LAYOUT] = f->layout == SK_BLOOM_BLOCKED ? SK_BF_LAYOUT_BLOCKED
                             : f->layout == SK_BLOOM_SPLIT ? SK_BF_LAYOUT_SPLIT
                                                           : SK_BF_LAYOUT_CLASSIC;
    head[SK_BF_OFF_HASH] = SK_BF_HASH_XXH3_128;
    head[SK_BF_OFF_PACKED] = packed ? SK_BF_ARRAYS_PACKED : SK_BF_ARRAYS_ALIGNED;
    sk_store_le32(head + SK_BF_OFF_LAYERS, f->nlayers);
    sk_store_le32(head + SK_BF_OFF_EXPANSION, f->expansion);
    sk_store_le_double(head + SK_BF_OFF_FP_RATE, f->fp_rate);
    uint64_t offset = sk__bloom_first_array(f->nlayers, packed);
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        uint8_t *e = head + sk__bloom_header_size(i);
        sk_store_le64(e + SK_BF_LAYER_OFF_BITS, l->bits);
        sk_store_le32(e + SK_BF_LAYER_OFF_HASHES, layer_hashes(l));
        sk_store_le64(e + SK_BF_LAYER_OFF_CAPACITY, layer_capacity(l));
        sk_store_le64(e + SK_BF_LAYER_OFF_COUNT,
                      atomic_load_explicit(&l->count, memory_order_relaxed));
        sk_store_le64(e + SK_BF_LAYER_OFF_ARRAY, offset);
        /* An unfinished restore keeps the sums it was given, which its
         * arrays will match only once every piece is in. */
        if (packed)
            sk_store_le64(e + SK_BF_LAYER_OFF_CHECKSUM,
                          (f->flags & SK__BLOOM_RESTORING) ? restoring_checksum(f, i)
                                       : XXH3_64bits((const void *)l->words,
                                                     (size_t)layer_nwords(l) * 8));
        offset = sk__bloom_next_array(offset, layer_nwords(l) * 8, packed);
    }
    sk_store_le32(head + SK_BF_OFF_CHECKSUM, header_checksum(head, f->nlayers));
}

static int valid_rate(double fp_rate)
{
    return fp_rate == 0 || (fp_rate >= SK_BLOOM_MIN_FP_RATE && fp_rate <= SK_BLOOM_MAX_FP_RATE);
}

/* Version 1 has whole-array sums, version 2 chunk sums, and version 3
 * either: chunk sums for files, whole-array sums for dumps, the split
 * layout, which only version 3 may have. */
static int valid_version(const uint8_t *p)
{
    int chunked = p[SK_BF_OFF_PACKED] == SK_BF_ARRAYS_ALIGNED &&
                  p[SK_BF_OFF_CHUNK_SHIFT] >= SK_BF_MIN_CHUNK_SHIFT &&
                  p[SK_BF_OFF_CHUNK_SHIFT] <= SK_BF_MAX_CHUNK_SHIFT;
    switch (p[SK_BF_OFF_VERSION]) {
    case SK_BF_VERSION_DUMP: return p[SK_BF_OFF_CHUNK_SHIFT] == 0;
    case SK_BF_VERSION_FILE: return chunked;
    default:
        return p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_SPLIT &&
               (chunked || (p[SK_BF_OFF_PACKED] == SK_BF_ARRAYS_PACKED &&
                            p[SK_BF_OFF_CHUNK_SHIFT] == 0));
    }
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* The fixed part of the header: SK_OK with the number of layers. */
static int decode_fixed(const uint8_t *p, size_t available, uint32_t *nlayers)
{
    if (available < 4 || memcmp(p + SK_BF_OFF_MAGIC, SK_BF_MAGIC, 4) != 0)
        return available < 4 && memcmp(p, SK_BF_MAGIC, available) == 0 ? SK_ETRUNCATED
                                                                        : SK_EFORMAT;
    if (available < SK_BF_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (p[SK_BF_OFF_VERSION] != SK_BF_VERSION_DUMP && p[SK_BF_OFF_VERSION] != SK_BF_VERSION_FILE &&
        p[SK_BF_OFF_VERSION] != SK_BF_VERSION_SPLIT)
        return SK_EVERSION;
    uint32_t layers = sk_load_le32(p + SK_BF_OFF_LAYERS);
    uint32_t expansion = sk_load_le32(p + SK_BF_OFF_EXPANSION);
    if (p[SK_BF_OFF_LAYOUT] > SK_BF_LAYOUT_SPLIT ||
        (p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_SPLIT) != (p[SK_BF_OFF_VERSION] == SK_BF_VERSION_SPLIT) ||
        p[SK_BF_OFF_HASH] != SK_BF_HASH_XXH3_128 ||
        p[SK_BF_OFF_PACKED] > SK_BF_ARRAYS_PACKED || !valid_version(p) || layers == 0 ||
        (expansion == 0 && layers != 1) || expansion > SK_BLOOM_MAX_EXPANSION ||
        !all_zero(p + SK_BF_OFF_RESERVED, SK_BF_OFF_CHECKSUM - SK_BF_OFF_RESERVED) ||
        sk_load_le32(p + SK_BF_OFF_RESERVED2) != 0 ||
        !valid_rate(sk_load_le_double(p + SK_BF_OFF_FP_RATE)))
        return SK_ECORRUPT;
    if (available < sk__bloom_header_size(layers))
        return SK_ETRUNCATED;
    if (header_checksum(p, layers) != sk_load_le32(p + SK_BF_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    *nlayers = layers;
    return SK_OK;
}

int sk__bloom_decode_header(sk_bloom *f, const uint8_t *p, size_t available, uint64_t total,
                            size_t *table_end)
{
    uint32_t nlayers;
    int rc = decode_fixed(p, available, &nlayers);
    if (rc != SK_OK)
        return rc;
    f->layout = p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_BLOCKED ? SK_BLOOM_BLOCKED
                : p[SK_BF_OFF_LAYOUT] == SK_BF_LAYOUT_SPLIT ? SK_BLOOM_SPLIT
                                                            : SK_BLOOM_CLASSIC;
    f->expansion = (uint16_t)sk_load_le32(p + SK_BF_OFF_EXPANSION);
    f->fp_rate = sk_load_le_double(p + SK_BF_OFF_FP_RATE);
    int packed = p[SK_BF_OFF_PACKED] == SK_BF_ARRAYS_PACKED;
    unsigned shift = p[SK_BF_OFF_CHUNK_SHIFT];
    if (f->file == NULL && (rc = sk__bloom_source_attach(f)) != SK_OK)
        return rc;
    struct sk__bloom_source *s = sk__bloom_source(f);
    if (shift == 0) {
        s->checksums = sk__alloc(&f->alloc, checksums_bytes(nlayers));
        if (s->checksums == NULL)
            return SK_ENOMEM;
        s->nchecksums = nlayers;
        s->hooks.memory += checksums_bytes(nlayers);
    }
    uint64_t offset = sk__bloom_first_array(nlayers, packed), end = 0;
    for (unsigned i = 0; i < nlayers; i++) {
        const uint8_t *e = p + sk__bloom_header_size(i);
        uint64_t bits = sk_load_le64(e + SK_BF_LAYER_OFF_BITS);
        uint32_t hashes = sk_load_le32(e + SK_BF_LAYER_OFF_HASHES);
        if (bits == 0 || bits > SK_BLOOM_MAX_BITS || hashes == 0 ||
            hashes > SK_BLOOM_MAX_HASHES ||
            (f->layout != SK_BLOOM_CLASSIC && bits % SK_BF_BLOCK_BITS != 0) ||
            (f->layout == SK_BLOOM_SPLIT && !sk__bloom_split_hashes_valid(hashes)) ||
            sk_load_le32(e + SK_BF_LAYER_OFF_RESERVED) != 0 ||
            (shift != 0 && sk_load_le64(e + SK_BF_LAYER_OFF_CHECKSUM) != 0))
            return SK_ECORRUPT;
        uint64_t bytes = sk__bloom_words(f->layout, bits) * 8;
        /* Each array lies where the ones before it end, and a table of huge
         * arrays must not wrap the 64-bit offsets around. */
        if (sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY) != offset || offset > UINT64_MAX / 2)
            return SK_ECORRUPT;
        sk_bloom_layer shape = {.bits = bits, .hashes = hashes,
                                .capacity = sk_load_le64(e + SK_BF_LAYER_OFF_CAPACITY),
                                .bytes = bytes,
                                .count = sk_load_le64(e + SK_BF_LAYER_OFF_COUNT)};
        rc = sk__bloom_push_shape(f, &shape);
        if (rc != SK_OK)
            return rc;
        if (shift == 0)
            s->checksums[i] = sk_load_le64(e + SK_BF_LAYER_OFF_CHECKSUM);
        end = offset + bytes;
        offset = sk__bloom_next_array(offset, bytes, packed);
    }
    sk__bloom_update_paths(f);
    s->chunk_shift = shift;
    if (shift != 0) {
        uint64_t chunks = sk__bloom_chunks(f, shift);
        end += chunks * SK_BF_SUM_SIZE + sk__bloom_marks_size(chunks);
    }
    if (total != UINT64_MAX && end != total)
        return SK_ETRUNCATED;
    *table_end = sk__bloom_header_size(nlayers);
    return SK_OK;
}

int sk__bloom_is_packed(const uint8_t *header)
{
    return header[SK_BF_OFF_PACKED] == SK_BF_ARRAYS_PACKED;
}
