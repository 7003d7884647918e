/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_util.h: what the fuzz targets share: the libFuzzer entry point's
 * declaration, a reader that takes fields from the input, a check that
 * aborts (a crash the fuzzer records), and the checksum fix-ups that let
 * inputs reach past the checksums of the formats.
 */
#ifndef SKETCH_FUZZ_UTIL_H
#define SKETCH_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* Takes fields off the front of the input; past the end everything is 0. */
struct fuzz_reader {
    const uint8_t *p;
    size_t left;
};

static inline uint64_t fuzz_take(struct fuzz_reader *r, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && r->left > 0; i++, r->left--)
        v |= (uint64_t)*r->p++ << (8 * i);
    return v;
}

/* Up to n bytes of the input; *len receives how many there were. */
static inline const uint8_t *fuzz_bytes(struct fuzz_reader *r, size_t n, size_t *len)
{
    const uint8_t *p = r->p;
    *len = n < r->left ? n : r->left;
    r->p += *len;
    r->left -= *len;
    return p;
}

/* Sets the checksum of a native HyperLogLog (docs/hll-format.md). */
static inline void fuzz_fix_hll_checksum(uint8_t *buf, size_t len)
{
    if (len >= SK_HLL_NATIVE_HEADER_SIZE)
        sk_store_le32(buf + SK_HLL_OFF_CHECKSUM,
                      XXH32(buf + SK_HLL_NATIVE_HEADER_SIZE, len - SK_HLL_NATIVE_HEADER_SIZE,
                            XXH32(buf, SK_HLL_OFF_CHECKSUM, 0)));
}

/* Sets the XXH3-64 checksum that the count-min, top-k, Cuckoo and t-digest
 * formats keep at `at`: of the header up to it, then everything after the
 * header of `header` bytes. */
static inline void fuzz_fix_xxh3_checksum(uint8_t *buf, size_t len, size_t at, size_t header)
{
    if (len < header)
        return;
    XXH3_state_t *state = XXH3_createState();
    if (state == NULL)
        return;
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, buf, at);
    XXH3_64bits_update(state, buf + header, len - header);
    sk_store_le64(buf + at, XXH3_64bits_digest(state));
    XXH3_freeState(state);
}

/* Sets the checksum of a serialized count-min sketch (docs/cms-format.md). */
static inline void fuzz_fix_cms_checksum(uint8_t *buf, size_t len)
{
    fuzz_fix_xxh3_checksum(buf, len, SK_CMS_OFF_CHECKSUM, SK_CMS_HEADER_SIZE);
}

/* Sets the checksum of a serialized top-k sketch (docs/topk-format.md). */
static inline void fuzz_fix_topk_checksum(uint8_t *buf, size_t len)
{
    fuzz_fix_xxh3_checksum(buf, len, SK_TOPK_OFF_CHECKSUM, SK_TOPK_HEADER_SIZE);
}

/* Sets the checksum of a serialized Cuckoo filter (docs/cuckoo-format.md). */
static inline void fuzz_fix_cuckoo_checksum(uint8_t *buf, size_t len)
{
    fuzz_fix_xxh3_checksum(buf, len, SK_CUCKOO_OFF_CHECKSUM, SK_CUCKOO_HEADER_SIZE);
}

/* Sets the checksum of a serialized t-digest (docs/tdigest-format.md). */
static inline void fuzz_fix_tdigest_checksum(uint8_t *buf, size_t len)
{
    fuzz_fix_xxh3_checksum(buf, len, SK_TDIGEST_OFF_CHECKSUM, SK_TDIGEST_HEADER_SIZE);
}

/* Sets the checksum of a serialized window HyperLogLog
 * (docs/window-hll-format.md). */
static inline void fuzz_fix_window_hll_checksum(uint8_t *buf, size_t len)
{
    fuzz_fix_xxh3_checksum(buf, len, SK_WH_OFF_CHECKSUM, SK_WH_HEADER_SIZE);
}

/* A serialized form to read: the 4-byte magic, then the input's bytes, its
 * checksum made right by fix if fix is not NULL; *len its length. */
static inline uint8_t *fuzz_framed(const char *magic, const uint8_t *data, size_t size,
                                   void (*fix)(uint8_t *, size_t), size_t *len)
{
    *len = 4 + size;
    uint8_t *buf = malloc(*len);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, magic, 4);
    if (size > 0)
        memcpy(buf + 4, data, size);
    if (fix != NULL)
        fix(buf, *len);
    return buf;
}

/* The layer count of a Bloom file or dump whose header and layer table are
 * all in buf, or 0. */
static inline uint32_t fuzz_bloom_table_layers(const uint8_t *buf, size_t len)
{
    if (len < SK_BF_HEADER_SIZE)
        return 0;
    uint32_t layers = sk_load_le32(buf + SK_BF_OFF_LAYERS);
    if (layers == 0 || (len - SK_BF_HEADER_SIZE) / SK_BF_LAYER_SIZE < layers)
        return 0;
    return layers;
}

/* Sets the header checksum of a Bloom file or dump (docs/bloom-format.md)
 * when its layer count is plausible and the table is all there. */
static inline void fuzz_fix_bloom_checksum(uint8_t *buf, size_t len)
{
    uint32_t layers = fuzz_bloom_table_layers(buf, len);
    if (layers == 0)
        return;
    XXH32_state_t *state = XXH32_createState();
    if (state == NULL)
        return;
    XXH32_reset(state, 0);
    XXH32_update(state, buf, SK_BF_CHECKSUMMED_HEADER);
    XXH32_update(state, buf + SK_BF_HEADER_SIZE, (size_t)layers * SK_BF_LAYER_SIZE);
    sk_store_le32(buf + SK_BF_OFF_CHECKSUM, XXH32_digest(state));
    XXH32_freeState(state);
}

/* Sets the array checksums (XXH3-64 of each layer's bytes) of a packed dump
 * whose arrays are all there, then the header checksum. */
static inline void fuzz_fix_bloom_dump_checksums(uint8_t *buf, size_t len)
{
    uint32_t layers = fuzz_bloom_table_layers(buf, len);
    if (layers == 0)
        return;
    for (uint32_t i = 0; i < layers; i++) {
        uint8_t *e = buf + SK_BF_HEADER_SIZE + (size_t)i * SK_BF_LAYER_SIZE;
        uint64_t bits = sk_load_le64(e + SK_BF_LAYER_OFF_BITS);
        uint64_t offset = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY);
        uint64_t bytes = (bits + 63) / 64 * 8;
        if (offset > len || bytes > len - offset)
            return;
        sk_store_le64(e + SK_BF_LAYER_OFF_CHECKSUM, XXH3_64bits(buf + offset, (size_t)bytes));
    }
    fuzz_fix_bloom_checksum(buf, len);
}

#endif
