/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic_file.h: files written so that a crash at any moment leaves either
 * the old file or the new one, and files read whole; shared by the savers
 * and loaders of every family with files. Internal.
 */
#ifndef SKETCH_ATOMIC_FILE_H
#define SKETCH_ATOMIC_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "sketch/core.h"

/* Writes the contents of a file to fd; SK_OK, or SK_EIO with errno set. */
typedef int (*sk__file_writer)(int fd, const void *ctx);

/* Writes path through `write`: a temporary file beside it, fsync, rename
 * over path, fsync of the directory. The file keeps the mode of the one it
 * replaces (a new one gets 0666 less the umask); through a symbolic link,
 * the file the link names is replaced and the link kept; a device, FIFO or
 * terminal is written through, not replaced. SK_OK, SK_ENOMEM, or SK_EIO
 * with errno set. */
int sk__atomic_write(const char *path, sk__file_writer write, const void *ctx);

/* sk__atomic_write of the len bytes at bytes. */
int sk__atomic_write_bytes(const char *path, const void *bytes, size_t len);

/* write(2) and zeros until all is written, through EINTR and short writes. */
int sk__write_all(int fd, const void *data, size_t len);
int sk__write_zeros(int fd, uint64_t count);

/* Reads a whole file, up to EOF whatever its size claims, into memory from
 * the allocator (to be freed with size *cap). SK_ETRUNCATED if it holds
 * more than max bytes; SK_EIO with errno set. */
int sk__read_file(const char *path, size_t max, const sk_allocator *a, uint8_t **data,
                  size_t *len, size_t *cap);

/* Reads a whole file of at most max bytes (sk__read_file) and hands its
 * bytes to parse(out, bytes, len, allocator, ctx), which reads an object
 * from them; the bytes are freed after, errno kept. parse's status. */
typedef int (*sk__file_parser)(void *out, const uint8_t *bytes, size_t len,
                               const sk_allocator *allocator, void *ctx);
int sk__open_file(const char *path, size_t max, const sk_allocator *allocator,
                  sk__file_parser parse, void *out, void *ctx);

#endif
