/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_file.c: Bloom filter files: saved atomically, opened by reading
 * them into memory, or by mapping them (the layout of format.h, with every
 * bit array on a page boundary).
 *
 * A filter read into memory is its own: whatever happens to the file later
 * (truncated by cp, rewritten in place by rsync --inplace) cannot change it
 * or fault its accesses, and a save writes only what it read and changed.
 * A mapped filter (SK_BLOOM_MAP) reads only the pages its operations touch,
 * so a query of a 1 GB filter reads a few pages, at the price of depending
 * on the file: a page of a file that shrank faults (SIGBUS). Either way
 * changes stay in memory until the filter is saved, which writes a new file
 * and renames it over the old one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "common/atomic_file.h"
#include "bloom_format.h"
#include "common/format.h"

/* The chunk sums of every array, in file order and byte order, from the
 * allocator; NULL if out of memory. */
static uint8_t *compute_sums(const sk_bloom *f, uint64_t chunks)
{
    uint8_t *sums = sk__alloc(&f->alloc, (size_t)(chunks * SK_BF_SUM_SIZE));
    if (sums == NULL)
        return NULL;
    uint8_t *at = sums;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        sk__bloom_advise(f, i, MADV_SEQUENTIAL);
        for (uint64_t c = 0; c < sk__bloom_layer_chunks(l, SK_BF_CHUNK_SHIFT); c++) {
            sk_store_le64(at, sk__bloom_chunk_sum(l, c, SK_BF_CHUNK_SHIFT));
            at += SK_BF_SUM_SIZE;
        }
        sk__bloom_advise(f, i, MADV_RANDOM);
    }
    return sums;
}

static int write_filter(int fd, const void *ctx)
{
    const sk_bloom *f = ctx;
    size_t table_end = sk__bloom_header_size(f->nlayers);
    uint64_t chunks = sk__bloom_chunks(f, SK_BF_CHUNK_SHIFT);
    /* Sums first, so that the file is written in one sequential pass, which
     * pipes and devices need. */
    uint8_t *sums = compute_sums(f, chunks);
    uint8_t *head = sums == NULL ? NULL : sk__alloc(&f->alloc, table_end);
    if (head == NULL) {
        sk__free(&f->alloc, sums, (size_t)(chunks * SK_BF_SUM_SIZE));
        return SK_ENOMEM;
    }
    sk__bloom_encode_header(f, head, 0);
    int rc = sk__write_all(fd, head, table_end);
    sk__free(&f->alloc, head, table_end);
    uint64_t written = table_end, offset = sk__bloom_first_array(f->nlayers, 0);
    for (unsigned i = 0; rc == SK_OK && i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        rc = sk__write_zeros(fd, offset - written);
        if (rc == SK_OK)
            rc = sk__write_all(fd, (const void *)l->words, (size_t)layer_nwords(l) * 8);
        written = offset + layer_nwords(l) * 8;
        offset = sk__bloom_next_array(offset, layer_nwords(l) * 8, 0);
    }
    if (rc == SK_OK)
        rc = sk__write_all(fd, sums, (size_t)(chunks * SK_BF_SUM_SIZE));
    if (rc == SK_OK)
        rc = sk__write_zeros(fd, sk__bloom_marks_size(chunks));
    sk__free(&f->alloc, sums, (size_t)(chunks * SK_BF_SUM_SIZE));
    return rc;
}

int sk_bloom_save(const sk_bloom *f, const char *path)
{
    if (f == NULL || path == NULL)
        return SK_EINVAL;
    return sk__atomic_write(path, write_filter, f);
}

/* A version 2 file's chunks against their sums; a marked chunk may differ,
 * since an add is changing it or was interrupted while it did. */
static int verify_chunks(const sk_bloom *f)
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    uint64_t chunk = 0;
    for (unsigned i = 0; i < f->nlayers && i < s->file_layers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        sk__bloom_advise(f, i, MADV_SEQUENTIAL);
        uint64_t n = sk__bloom_layer_chunks(l, s->chunk_shift);
        int rc = SK_OK;
        for (uint64_t c = 0; c < n && rc == SK_OK; c++, chunk++)
            if (sk__bloom_chunk_sum(l, c, s->chunk_shift) !=
                    sk_load_le64(s->sums + chunk * SK_BF_SUM_SIZE) &&
                !sk__bloom_chunk_marked(s->marks, chunk))
                rc = SK_ECHECKSUM;
        sk__bloom_advise(f, i, MADV_RANDOM);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

int sk__bloom_verify_arrays(const sk_bloom *f)
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    if (s->chunk_shift != 0)
        return verify_chunks(f);
    for (unsigned i = 0; i < f->nlayers && i < s->nchecksums; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        sk__bloom_advise(f, i, MADV_SEQUENTIAL);
        uint64_t sum = XXH3_64bits((const void *)l->words, (size_t)layer_nwords(l) * 8);
        sk__bloom_advise(f, i, MADV_RANDOM);
        if (sum != s->checksums[i])
            return SK_ECHECKSUM;
    }
    return SK_OK;
}

static int parse_file(sk_bloom *f, uint8_t *p, size_t size, unsigned flags)
{
    size_t table_end;
    int rc = sk__bloom_decode_header(f, p, size, size, &table_end);
    if (rc != SK_OK)
        return rc;
    int packed = sk__bloom_is_packed(p);
    uint64_t offset = sk__bloom_first_array(f->nlayers, packed);
    for (unsigned i = 0; i < f->nlayers; i++) {
        struct layer *l = &sk__bloom_layers(f)[i];
        l->words = (_Atomic uint64_t *)(void *)(p + offset);
        offset = sk__bloom_next_array(offset, layer_nwords(l) * 8, packed);
    }
    struct sk__bloom_source *s = sk__bloom_source(f);
    if (s->chunk_shift != 0) {
        uint64_t chunks = sk__bloom_chunks(f, s->chunk_shift);
        s->sums = p + sk__bloom_end(f, 0);
        s->marks = s->sums + chunks * SK_BF_SUM_SIZE;
        s->file_layers = f->nlayers;
        for (uint64_t w = 0; w < sk__bloom_marks_size(chunks); w += SK_BF_MARK_WORD)
            s->hooks.interrupted +=
                (uint64_t)__builtin_popcountll(sk_load_le64(s->marks + w));
    }
    return (flags & SK_BLOOM_VERIFY) ? sk__bloom_verify_arrays(f) : SK_OK;
}

/* Reads size bytes of fd into f's own memory; SK_ETRUNCATED if the file
 * has become shorter. */
static int copy_file(int fd, sk_bloom *f, size_t size)
{
    struct sk__bloom_source *s = sk__bloom_source(f);
    uint8_t *p = sk__array_alloc(&f->alloc, size, &s->file_copy);
    if (p == NULL)
        return SK_ENOMEM;
    for (size_t have = 0; have < size;) {
        ssize_t n = pread(fd, p + have, size - have, (off_t)have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return SK_EIO;
        if (n == 0)
            return SK_ETRUNCATED;
        have += (size_t)n;
    }
    s->map = p;
    s->map_len = size;
    s->hooks.memory += s->file_copy.block_len;
    return SK_OK;
}

/* Maps the regular file open as fd, or reads it, into f: SK_OK, SK_EFORMAT
 * for an empty one, or SK_EIO with errno set. In place, the mapping is
 * shared and writable, so that stores reach the file. */
static int load_file(int fd, sk_bloom *f, unsigned flags)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return SK_EIO;
    if (!S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return SK_EIO;
    }
    if (st.st_size == 0)
        return SK_EFORMAT;
    if ((uint64_t)st.st_size > SIZE_MAX)
        return SK_ETOOLARGE;
    if (!(flags & (SK_BLOOM_MAP | SK_BLOOM_IN_PLACE)))
        return copy_file(fd, f, (size_t)st.st_size);
    int shared = (flags & SK_BLOOM_IN_PLACE) != 0;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                     shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return SK_EIO;
    struct sk__bloom_source *s = sk__bloom_source(f);
    s->map = map;
    s->map_len = (size_t)st.st_size;
    s->hooks.memory += s->map_len;
    /* Queries touch scattered pages: read-ahead would read megabytes around
     * each one. Whole-filter scans ask for sequential reads while they run. */
    madvise(map, s->map_len, MADV_RANDOM);
    return SK_OK;
}

/* Reads or maps the file and validates it, holding the header's read lock
 * (bloom_in_place.c), so that an add in place never shows it half-written. */
static int read_filter(int fd, sk_bloom *f, unsigned flags)
{
    int rc = sk__bloom_lock_header(fd, F_RDLCK);
    if (rc == SK_OK)
        rc = load_file(fd, f, flags);
    if (rc == SK_OK)
        rc = parse_file(f, sk__bloom_source(f)->map, sk__bloom_source(f)->map_len, flags);
    int e = errno;
    sk__bloom_lock_header(fd, F_UNLCK);
    errno = e;
    return rc;
}

int sk_bloom_open(sk_bloom **out, const char *path, unsigned flags,
                  const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (path == NULL || (flags & ~(SK_BLOOM_VERIFY | SK_BLOOM_MAP | SK_BLOOM_IN_PLACE)) != 0)
        return SK_EINVAL;
    int in_place = (flags & SK_BLOOM_IN_PLACE) != 0;
    sk_bloom *f = sk__bloom_alloc(SK_BLOOM_BLOCKED, 0, 0, allocator, 0);
    if (f == NULL)
        return SK_ENOMEM;
    if (sk__bloom_source_attach(f) != SK_OK) {
        sk_bloom_free(f);
        return SK_ENOMEM;
    }
    /* Non-blocking, so that a FIFO without a writer is refused, not waited on. */
    int fd = open(path, (in_place ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
    int rc = fd < 0 ? SK_EIO : SK_OK;
    if (rc == SK_OK && in_place)
        rc = sk__bloom_lock_writer(fd);
    if (rc == SK_OK)
        rc = read_filter(fd, f, flags);
    int taken = 0; /* fd, by the filter open in place */
    if (rc == SK_OK && in_place) {
        taken = sk__bloom_source(f)->chunk_shift != 0;
        rc = taken ? sk__bloom_begin_in_place(f, fd, path) : SK_EINCOMPAT;
    }
    int e = errno;
    if (fd >= 0 && !taken)
        close(fd);
    if (rc != SK_OK) {
        sk_bloom_free(f);
        errno = e;
        return rc;
    }
    *out = f;
    return SK_OK;
}

int sk_bloom_sync(sk_bloom *f)
{
    if (f == NULL)
        return SK_EINVAL;
    if (f->file == NULL || sk__bloom_source(f)->in_place == NULL)
        return SK_EINCOMPAT;
    if (f->nlayers == sk__bloom_source(f)->file_layers)
        return sk__bloom_commit_in_place(f);
    /* A new layer lies outside the file, which is then written whole; the
     * chunks no add touched are checked first, since the new file's sums
     * would otherwise certify them. */
    int rc = sk__bloom_verify_arrays(f);
    return rc != SK_OK ? rc : sk_bloom_save(f, sk__bloom_in_place_path(f));
}
