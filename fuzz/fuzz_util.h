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

static inline uint32_t fuzz_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void fuzz_store_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Sets the checksum of a native HyperLogLog (docs/hll-format.md). */
static inline void fuzz_fix_hll_checksum(uint8_t *buf, size_t len)
{
    if (len >= 16)
        fuzz_store_le32(buf + 12, XXH32(buf + 16, len - 16, XXH32(buf, 12, 0)));
}

/* The layer count of a Bloom file or dump whose header and layer table are
 * all in buf, or 0. */
static inline uint32_t fuzz_bloom_table_layers(const uint8_t *buf, size_t len)
{
    if (len < 40)
        return 0;
    uint32_t layers = fuzz_le32(buf + 8);
    if (layers == 0 || layers > 64 || len < 40 + (size_t)layers * 48)
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
    XXH32_update(state, buf, 32);
    XXH32_update(state, buf + 40, (size_t)layers * 48);
    fuzz_store_le32(buf + 32, XXH32_digest(state));
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
        uint8_t *e = buf + 40 + (size_t)i * 48;
        uint64_t bits = 0, offset = 0;
        for (int b = 0; b < 8; b++) {
            bits |= (uint64_t)e[b] << (8 * b);
            offset |= (uint64_t)e[32 + b] << (8 * b);
        }
        uint64_t bytes = (bits + 63) / 64 * 8;
        if (offset > len || bytes > len - offset)
            return;
        uint64_t sum = XXH3_64bits(buf + offset, (size_t)bytes);
        for (int b = 0; b < 8; b++)
            e[40 + b] = (uint8_t)(sum >> (8 * b));
    }
    fuzz_fix_bloom_checksum(buf, len);
}

#endif
