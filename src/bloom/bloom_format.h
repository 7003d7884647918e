/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_format.h: the header and layer table of Bloom filter files and
 * dumps, shared by bloom_file.c and bloom_dump.c. Internal.
 */
#ifndef SKETCH_BLOOM_FORMAT_H
#define SKETCH_BLOOM_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "bloom_internal.h"

/* Bytes of the header and layer table of a filter of nlayers layers. */
size_t sk__bloom_header_size(unsigned nlayers);

/* Where the first bit array starts, where the one after an array of
 * `bytes` at `offset` starts, and where the last one ends: on page
 * boundaries in files, packed (8-byte aligned) in dumps. */
uint64_t sk__bloom_first_array(unsigned nlayers, int packed);
uint64_t sk__bloom_next_array(uint64_t offset, uint64_t bytes, int packed);
uint64_t sk__bloom_end(const sk_bloom *f, int packed);

/* The chunks of a layer's array and of all arrays, the bytes of the change
 * marks of `chunks` chunks, and the sum of one chunk as it is now. */
uint64_t sk__bloom_layer_chunks(const struct layer *l, unsigned shift);
uint64_t sk__bloom_chunks(const sk_bloom *f, unsigned shift);
uint64_t sk__bloom_marks_size(uint64_t chunks);
uint64_t sk__bloom_chunk_sum(const struct layer *l, uint64_t chunk, unsigned shift);

/* Whether chunk `chunk` (numbered over all layers) is marked as changing in
 * a version 2 file's marks. */
static inline int sk__bloom_chunk_marked(const uint8_t *marks, uint64_t chunk)
{
    return marks[chunk / 8] >> (chunk % 8) & 1;
}

/* Writes the header and layer table into head (sk__bloom_header_size
 * bytes): a dump's (packed), with the arrays' checksums as they are now, or
 * a file's, whose arrays have chunk sums of their own. */
void sk__bloom_encode_header(const sk_bloom *f, uint8_t *head, int packed);

/* Validates a header and layer table of `available` bytes, for a file or
 * dump whose whole size is `total` (UINT64_MAX: not known yet), and gives
 * the empty filter f its layout, rate, expansion and layer records, without
 * arrays; *table_end receives the header's size. */
int sk__bloom_decode_header(sk_bloom *f, const uint8_t *p, size_t available, uint64_t total,
                            size_t *table_end);

/* Whether a validated header is a dump's (packed arrays) rather than a
 * file's. */
int sk__bloom_is_packed(const uint8_t *header);

/* Recomputes each layer's checksum, or each chunk's sum, against the one
 * its header or file declared: SK_ECHECKSUM if one differs, except in a
 * chunk marked as changing. */
int sk__bloom_verify_arrays(const sk_bloom *f);

#endif
