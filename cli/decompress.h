/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decompress.h: compressed input (gzip, zstd, xz), told apart by its first
 * bytes and decompressed as it is read, so that `sketch count log.gz`
 * counts the lines of the log, not of its compressed bytes.
 */
#ifndef SKETCH_CLI_DECOMPRESS_H
#define SKETCH_CLI_DECOMPRESS_H

#include <stddef.h>
#include <sys/types.h>

enum codec { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD, CODEC_XZ };

/* The longest magic number: the bytes codec_detect needs to decide. */
#define CODEC_MAGIC_MAX 6

/* The codec whose magic number head[0..len) starts with. */
enum codec codec_detect(const unsigned char *head, size_t len);
const char *codec_name(enum codec codec);

struct decoder;

/* A decoder of the data of fd, whose first prefix_len bytes have already
 * been read into prefix; NULL when out of memory. */
struct decoder *decoder_new(enum codec codec, int fd, const void *prefix, size_t prefix_len);
void decoder_free(struct decoder *d);

/* Decompresses on a thread of its own from now on, ahead of the reads
 * (without one if none can be had); 0, or ENOMEM. */
int decoder_start_thread(struct decoder *d);

/* Up to len decompressed bytes; 0 at the clean end of the input; -1 with
 * errno set: EBADMSG for data that is corrupt, cut short or followed by
 * garbage (decoder_error says which), else the read's error. */
ssize_t decoder_read(struct decoder *d, void *out, size_t len);
const char *decoder_error(const struct decoder *d);

#endif
