/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_format.h: what the file code shares (bloom_format.c, bloom_file.c,
 * bloom_dump.c, bloom_in_place.c): what a filter keeps of the file or dump
 * it was read from, the header and layer table of both, chunk sums, and
 * files opened in place. Internal; the core (bloom.c) includes none of it.
 */
#ifndef SKETCH_BLOOM_FORMAT_H
#define SKETCH_BLOOM_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "bloom_internal.h"

struct sk__in_place;

/* What a filter read from a file or dump keeps of it (f->file). */
struct sk__bloom_source {
    struct sk__bloom_file hooks; /* first: f->file points here */
    void *map; /* the file: mapped, or its copy */
    size_t map_len;
    struct sk__array file_copy; /* holds the copy; block NULL when mapped */
    /* Of a version 2 file: where its chunk sums and change marks are in
     * `map`, the chunks' size, and the layers the sums describe. */
    uint8_t *sums;
    uint8_t *marks;
    unsigned chunk_shift; /* 0 when the file or dump has whole-array checksums */
    unsigned file_layers;
    /* Of a dump or a version 1 file: each layer's checksum as declared. */
    uint64_t *checksums;
    unsigned nchecksums;
    struct sk__in_place *in_place; /* opened with SK_BLOOM_IN_PLACE */
};

/* f's source; f->file must be set. */
static inline struct sk__bloom_source *sk__bloom_source(const sk_bloom *f)
{
    return (struct sk__bloom_source *)(void *)f->file;
}

/* Gives f an empty source whose hooks allow every write and free what it
 * holds: SK_ENOMEM. */
int sk__bloom_source_attach(sk_bloom *f);

/* The release hook of a source: frees the copy or mapping and checksums. */
void sk__bloom_source_release(sk_bloom *f);

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

/* Files opened in place (bloom_in_place.c). Takes over fd, the file f was
 * opened from in place and parsed from: once it returns, sk_bloom_free
 * closes it, whatever it returns. From then on, before an item's bits, or
 * all bits, change, the chunks they lie in are checked against their sums
 * and marked as changing (SK_ECHECKSUM for a damaged chunk, SK_EIO); a
 * commit writes the sums of the marked chunks and the header, and clears
 * the marks. */
int sk__bloom_begin_in_place(sk_bloom *f, int fd, const char *path);
int sk__bloom_commit_in_place(sk_bloom *f);

/* The path of the file f was opened from in place. */
const char *sk__bloom_in_place_path(const sk_bloom *f);

/* Advisory locks (open file description locks, fcntl(2)) on bytes of the
 * file that no read or write needs: the header's, held shared by readers
 * while they read a file and exclusively while an add in place rewrites
 * sums and header (type F_RDLCK, F_WRLCK or F_UNLCK; waits), and the
 * writer's, held by a filter open in place (SK_EIO with EWOULDBLOCK if
 * another holds it). A file system without such locks goes without. */
int sk__bloom_lock_header(int fd, short type);
int sk__bloom_lock_writer(int fd);

#endif
