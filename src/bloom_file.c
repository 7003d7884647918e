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

#include "atomic_file.h"
#include "bloom_format.h"

static int write_filter(int fd, const void *ctx)
{
    const sk_bloom *f = ctx;
    size_t table_end = sk__bloom_header_size(f->nlayers);
    uint8_t *head = sk__alloc(&f->alloc, table_end);
    if (head == NULL)
        return SK_ENOMEM;
    sk__bloom_encode_header(f, head, 0);
    int rc = sk__write_all(fd, head, table_end);
    sk__free(&f->alloc, head, table_end);
    uint64_t written = table_end, offset = sk__bloom_first_array(f->nlayers, 0);
    for (unsigned i = 0; rc == SK_OK && i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        rc = sk__write_zeros(fd, offset - written);
        if (rc == SK_OK)
            rc = sk__write_all(fd, (const void *)l->words, (size_t)l->nwords * 8);
        written = offset + l->nwords * 8;
        offset = sk__bloom_next_array(offset, l->nwords * 8, 0);
    }
    return rc;
}

int sk_bloom_save(const sk_bloom *f, const char *path)
{
    if (f == NULL || path == NULL)
        return SK_EINVAL;
    return sk__atomic_write(path, write_filter, f);
}

/* Recomputes each layer's checksum against the one its header declared. */
int sk__bloom_verify_arrays(const sk_bloom *f)
{
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        sk__bloom_advise(l, MADV_SEQUENTIAL);
        uint64_t sum = XXH3_64bits((const void *)l->words, (size_t)l->nwords * 8);
        sk__bloom_advise(l, MADV_RANDOM);
        if (sum != l->checksum)
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
        struct layer *l = &f->layers[i];
        l->words = (_Atomic uint64_t *)(void *)(p + offset);
        l->storage = STORAGE_FILE;
        offset = sk__bloom_next_array(offset, l->nwords * 8, packed);
    }
    return (flags & SK_BLOOM_VERIFY) ? sk__bloom_verify_arrays(f) : SK_OK;
}

/* Reads size bytes of fd into f's own memory; SK_ETRUNCATED if the file
 * has become shorter. */
static int copy_file(int fd, sk_bloom *f, size_t size)
{
    uint8_t *p = sk__array_alloc(&f->alloc, size, &f->file_copy);
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
    f->map = p;
    f->map_len = size;
    return SK_OK;
}

/* Opens the regular file at path and maps it or reads it into f: SK_OK,
 * SK_EFORMAT for an empty one, or SK_EIO with errno set. */
static int load_file(const char *path, sk_bloom *f, int mapped)
{
    /* Non-blocking, so that a FIFO without a writer is refused, not waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return SK_EIO;
    struct stat st;
    int rc = SK_OK, e = 0;
    if (fstat(fd, &st) != 0) {
        rc = SK_EIO;
        e = errno;
    } else if (!S_ISREG(st.st_mode)) {
        rc = SK_EIO;
        e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    } else if (st.st_size == 0) {
        rc = SK_EFORMAT;
    } else if ((uint64_t)st.st_size > SIZE_MAX) {
        rc = SK_ETOOLARGE;
    } else if (!mapped) {
        rc = copy_file(fd, f, (size_t)st.st_size);
        e = errno;
    } else {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            rc = SK_EIO;
            e = errno;
        } else {
            f->map = map;
            f->map_len = (size_t)st.st_size;
            /* Queries touch scattered pages: read-ahead would read megabytes
             * around each one. Whole-filter scans ask for sequential reads
             * while they run. */
            madvise(map, f->map_len, MADV_RANDOM);
        }
    }
    close(fd);
    errno = e;
    return rc;
}

int sk_bloom_open(sk_bloom **out, const char *path, unsigned flags,
                  const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (path == NULL || (flags & ~(SK_BLOOM_VERIFY | SK_BLOOM_MAP)) != 0)
        return SK_EINVAL;
    sk_bloom *f = sk__bloom_alloc(SK_BLOOM_BLOCKED, 0, 0, allocator);
    if (f == NULL)
        return SK_ENOMEM;
    int rc = load_file(path, f, (flags & SK_BLOOM_MAP) != 0);
    if (rc == SK_OK)
        rc = parse_file(f, f->map, f->map_len, flags);
    if (rc != SK_OK) {
        int e = errno;
        sk_bloom_free(f);
        errno = e;
        return rc;
    }
    *out = f;
    return SK_OK;
}
