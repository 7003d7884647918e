/*
 * bloom_in_place.c: adds to a Bloom filter file in place (SK_BLOOM_IN_PLACE).
 * The file is mapped shared and writable, so an add changes the pages it
 * touches and no others, and costs time in proportion to the items added,
 * not to the size of the file.
 *
 * The crash guarantee rests on the chunk sums and change marks of version 2
 * files (format.h) and on one order of writes:
 *
 *   1. Before the first bit of a chunk changes, the chunk is checked against
 *      its sum (a damaged chunk is refused: a new sum would hide the damage)
 *      and marked, and the mark is flushed to the disk before the chunk
 *      changes.
 *   2. Bits are set by stores into the shared mapping: once an add has
 *      returned, its bits are in the page cache, which a killed process
 *      cannot take with it.
 *   3. A commit (sk_bloom_sync) writes the sums of the marked chunks, then
 *      the header with the new counts in one write(2), flushes the file,
 *      clears the marks and flushes again.
 *
 * So a process killed at any point leaves every chunk either matching its
 * sum or marked. Opens report how many are marked
 * (sk_bloom_info.interrupted_chunks) and accept a marked chunk that differs
 * from its sum; the next commit re-sums them with the chunks it changed
 * itself (a commit cut short wrote only some of their sums). A chunk that differs without a mark is damage, and stays
 * reported. What a crash costs: the counts of the adds since the last
 * commit (not their bits); after a power failure also those adds' bits,
 * which only a commit flushes; and a device that does not write a page
 * atomically could tear a header being rewritten then.
 *
 * Readers hold the header lock shared while they read a file
 * (bloom_file.c), so a commit never shows them half-written sums or header.
 * Bits an add sets between commits may show up in a read at any time, which
 * only ever adds items. Adds in place need exclusive access: marking is not
 * atomic between threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bloom_format.h"
#include "bloom_probe.h"
#include "format.h"

/* The bytes the advisory locks cover: advisory locks need not cover what
 * they protect, only be taken by everyone on the same bytes. */
#define HEADER_LOCK_BYTE 0
#define WRITER_LOCK_BYTE 1

/* Items hashed, and their chunks marked, before their bits are set: one
 * flush of the marks for all of them. */
#define TOUCH_BATCH 1024

struct sk__in_place {
    int fd;
    char *path;
    size_t path_size;
    uint64_t last_base;   /* the index, among all chunks, of the last one's first */
};

static int set_lock(int fd, int cmd, short type, off_t byte)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};
    int rc;
    do
        rc = fcntl(fd, cmd, &fl);
    while (rc != 0 && errno == EINTR);
    if (rc == 0 || errno == EINVAL || errno == ENOLCK || errno == EOPNOTSUPP)
        return SK_OK;
    if (errno == EAGAIN || errno == EACCES)
        errno = EWOULDBLOCK;
    return SK_EIO;
}

int sk__bloom_lock_header(int fd, short type)
{
    return set_lock(fd, F_OFD_SETLKW, type, HEADER_LOCK_BYTE);
}

int sk__bloom_lock_writer(int fd)
{
    return set_lock(fd, F_OFD_SETLK, F_WRLCK, WRITER_LOCK_BYTE);
}

static int is_marked(const sk_bloom *f, uint64_t chunk)
{
    return f->marks[chunk / 8] >> (chunk % 8) & 1;
}

/* Flushes the marks (a few pages at most: one bit per chunk) to the disk. */
static int flush_marks(const sk_bloom *f)
{
    uint64_t chunks = sk__bloom_chunks(f, f->chunk_shift);
    uintptr_t start = (uintptr_t)f->marks & ~(uintptr_t)(SK_BF_FILE_ALIGN - 1);
    uintptr_t end = (uintptr_t)f->marks + (uintptr_t)sk__bloom_marks_size(chunks);
    return msync((void *)start, end - start, MS_SYNC) == 0 ? SK_OK : SK_EIO;
}

/* Checks and marks chunk `local` of layer l, chunk `chunk` among all;
 * *fresh becomes 1 if it had no mark. */
static int touch_chunk(sk_bloom *f, const struct layer *l, uint64_t local, uint64_t chunk,
                       int *fresh)
{
    if (is_marked(f, chunk))
        return SK_OK;
    if (sk__bloom_chunk_sum(l, local, f->chunk_shift) !=
        sk_load_le64(f->sums + chunk * SK_BF_SUM_SIZE))
        return SK_ECHECKSUM;
    f->marks[chunk / 8] |= (uint8_t)(1u << (chunk % 8));
    *fresh = 1;
    return SK_OK;
}

/* Checks and marks the chunks an add of h may change: in the newest
 * layer, which is where adds go, while it is the file's. */
static int touch_item(sk_bloom *f, struct item_hash h, int *fresh)
{
    const struct sk__in_place *ip = f->in_place;
    if (f->nlayers != f->file_layers)
        return SK_OK; /* a layer of memory: the file is rewritten whole */
    const struct layer *l = &f->layers[f->nlayers - 1];
    uint64_t words[SK_BLOOM_MAX_HASHES];
    unsigned n = layer_words(l, f->layout, h, words);
    for (unsigned i = 0; i < n; i++) {
        uint64_t local = words[i] * 8 >> f->chunk_shift;
        int rc = touch_chunk(f, l, local, ip->last_base + local, fresh);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

int sk__bloom_in_place_touch(sk_bloom *f, struct item_hash h)
{
    int fresh = 0, rc = touch_item(f, h, &fresh);
    return rc == SK_OK && fresh ? flush_marks(f) : rc;
}

int sk__bloom_in_place_touch_all(sk_bloom *f)
{
    uint64_t chunk = 0;
    int fresh = 0;
    for (unsigned i = 0; i < f->nlayers && i < f->file_layers; i++) {
        const struct layer *l = &f->layers[i];
        uint64_t n = sk__bloom_layer_chunks(l, f->chunk_shift);
        for (uint64_t c = 0; c < n; c++, chunk++) {
            int rc = touch_chunk(f, l, c, chunk, &fresh);
            if (rc != SK_OK)
                return rc;
        }
    }
    return fresh ? flush_marks(f) : SK_OK;
}

int sk__bloom_in_place_add_batch(sk_bloom *f, const void *const *items, const size_t *lens,
                                 size_t n, uint8_t *added)
{
    struct item_hash h[TOUCH_BATCH];
    for (size_t done = 0; done < n;) {
        size_t count = n - done < TOUCH_BATCH ? n - done : TOUCH_BATCH;
        int fresh = 0, rc = SK_OK;
        for (size_t i = 0; i < count && rc == SK_OK; i++) {
            h[i] = hash_item(items[done + i], lens[done + i]);
            rc = touch_item(f, h[i], &fresh);
        }
        if (rc == SK_OK && fresh)
            rc = flush_marks(f);
        for (size_t i = 0; i < count && rc == SK_OK; i++) {
            int r = sk__bloom_add_hashed(f, h[i]);
            if (r < 0)
                rc = r;
            else if (added != NULL)
                added[done + i] = (uint8_t)r;
        }
        if (rc != SK_OK)
            return rc;
        done += count;
    }
    return SK_OK;
}

static int pwrite_all(int fd, const uint8_t *p, size_t len, off_t at)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return SK_EIO;
        p += n;
        len -= (size_t)n;
        at += n;
    }
    return SK_OK;
}

/* Step 3 of the order above, under the header lock. */
static int commit(sk_bloom *f)
{
    uint64_t chunk = 0;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &f->layers[i];
        uint64_t n = sk__bloom_layer_chunks(l, f->chunk_shift);
        for (uint64_t c = 0; c < n; c++, chunk++)
            if (is_marked(f, chunk))
                sk_store_le64(f->sums + chunk * SK_BF_SUM_SIZE,
                              sk__bloom_chunk_sum(l, c, f->chunk_shift));
    }
    size_t head_len = sk__bloom_header_size(f->nlayers);
    uint8_t *head = sk__alloc(&f->alloc, head_len);
    if (head == NULL)
        return SK_ENOMEM;
    sk__bloom_encode_header(f, head, 0);
    int fd = f->in_place->fd;
    /* One write(2) of the header: a process killed during it has written
     * all of it or none. */
    int rc = pwrite_all(fd, head, head_len, 0);
    sk__free(&f->alloc, head, head_len);
    if (rc == SK_OK && fdatasync(fd) != 0)
        rc = SK_EIO;
    if (rc != SK_OK)
        return rc;
    memset(f->marks, 0, (size_t)sk__bloom_marks_size(chunk));
    return fdatasync(fd) == 0 ? SK_OK : SK_EIO;
}

int sk__bloom_commit_in_place(sk_bloom *f)
{
    int fd = f->in_place->fd;
    int rc = sk__bloom_lock_header(fd, F_WRLCK);
    if (rc != SK_OK)
        return rc;
    rc = commit(f);
    int e = errno;
    sk__bloom_lock_header(fd, F_UNLCK);
    errno = e;
    return rc;
}

int sk__bloom_begin_in_place(sk_bloom *f, int fd, const char *path)
{
    struct sk__in_place *ip = sk__zalloc(&f->alloc, sizeof *ip);
    size_t size = strlen(path) + 1;
    char *copy = ip == NULL ? NULL : sk__alloc(&f->alloc, size);
    if (copy == NULL) {
        if (ip != NULL)
            sk__free(&f->alloc, ip, sizeof *ip);
        return SK_ENOMEM;
    }
    memcpy(copy, path, size);
    *ip = (struct sk__in_place){.fd = fd, .path = copy, .path_size = size};
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        ip->last_base += sk__bloom_layer_chunks(&f->layers[i], f->chunk_shift);
    f->in_place = ip;
    return SK_OK;
}

void sk__bloom_end_in_place(sk_bloom *f)
{
    struct sk__in_place *ip = f->in_place;
    if (ip == NULL)
        return;
    close(ip->fd);
    sk__free(&f->alloc, ip->path, ip->path_size);
    sk__free(&f->alloc, ip, sizeof *ip);
    f->in_place = NULL;
}

int sk__bloom_in_place_grew(const sk_bloom *f)
{
    return f->nlayers != f->file_layers;
}

const char *sk__bloom_in_place_path(const sk_bloom *f)
{
    return f->in_place->path;
}
