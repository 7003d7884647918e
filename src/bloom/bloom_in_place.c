/* SPDX-License-Identifier: BSD-3-Clause */
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
 * itself (a commit cut short wrote only some of their sums). A chunk that
 * differs without a mark is damage, and stays reported. What a crash
 * costs: the counts of the adds since the last commit (not their bits);
 * after a power failure also those adds' bits, which only a commit
 * flushes; and a device that does not write a page atomically could tear a
 * header being rewritten then.
 *
 * Readers hold the header lock shared while they read a file
 * (bloom_file.c), so a commit never shows them half-written sums or header.
 * Bits an add sets between commits may show up in a read at any time, which
 * only ever adds items.
 *
 * Threads may add to a fixed filter in place at once, as to one in memory:
 * each chunk has a state in memory, and the one thread that moves it from
 * unchecked to checking checks and marks it while the others wait. Every
 * add flushes the marks before it sets bits if one of its chunks has a mark
 * that no flush has covered yet. Sync, merge, clear and scalable filters
 * need exclusive access.
 *
 * The core reaches all this through the hooks of the filter's source
 * (bloom_format.h), which sk__bloom_begin_in_place sets: before bits
 * change, and when the filter is freed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bloom_format.h"
#include "bloom_probe.h"
#include "common/format.h"

/* The bytes the advisory locks cover: advisory locks need not cover what
 * they protect, only be taken by everyone on the same bytes. */
#define HEADER_LOCK_BYTE 0
#define WRITER_LOCK_BYTE 1

/* What this process knows of a chunk since the last commit. */
enum chunk_state {
    CHUNK_UNCHECKED, /* not yet checked against its sum */
    CHUNK_CHECKING,  /* a thread is checking and marking it */
    CHUNK_MARKED,    /* checked and marked, the mark maybe not yet on the disk */
    CHUNK_DURABLE,   /* marked, and the mark flushed: bits may change */
    CHUNK_DAMAGED    /* differs from its sum: refused */
};

struct sk__in_place {
    int fd;
    char *path;
    size_t path_size;
    uint64_t last_base; /* the index, among all chunks, of the last layer's first */
    uint64_t chunks;
    _Atomic uint8_t *state; /* an enum chunk_state per chunk */
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

/* Flushes the marks (a few pages at most: one bit per chunk) to the disk. */
static int flush_marks(const sk_bloom *f)
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    uintptr_t start = (uintptr_t)s->marks & ~(uintptr_t)(SK_BF_FILE_ALIGN - 1);
    uintptr_t end = (uintptr_t)s->marks + (uintptr_t)sk__bloom_marks_size(s->in_place->chunks);
    return msync((void *)start, end - start, MS_SYNC) == 0 ? SK_OK : SK_EIO;
}

/* Checks and marks chunk `local` of layer l, chunk `chunk` among all;
 * *unflushed becomes 1 if its mark may not be on the disk yet. */
static int touch_chunk(sk_bloom *f, const struct layer *l, uint64_t local, uint64_t chunk,
                       int *unflushed)
{
    const struct sk__bloom_source *src = sk__bloom_source(f);
    _Atomic uint8_t *state = &src->in_place->state[chunk];
    for (;;) {
        uint8_t s = atomic_load_explicit(state, memory_order_acquire);
        switch (s) {
        case CHUNK_DURABLE: return SK_OK;
        case CHUNK_MARKED: *unflushed = 1; return SK_OK;
        case CHUNK_DAMAGED: return SK_ECHECKSUM;
        case CHUNK_CHECKING: sched_yield(); continue;
        default: break;
        }
        if (!atomic_compare_exchange_weak_explicit(state, &s, CHUNK_CHECKING,
                                                   memory_order_acquire, memory_order_relaxed))
            continue;
        if (sk__bloom_chunk_sum(l, local, src->chunk_shift) !=
            sk_load_le64(src->sums + chunk * SK_BF_SUM_SIZE)) {
            atomic_store_explicit(state, CHUNK_DAMAGED, memory_order_release);
            return SK_ECHECKSUM;
        }
        /* Other threads mark other chunks of the same byte. */
        atomic_fetch_or_explicit((_Atomic uint8_t *)(void *)&src->marks[chunk / 8],
                                 (uint8_t)(1u << (chunk % 8)), memory_order_relaxed);
        atomic_store_explicit(state, CHUNK_MARKED, memory_order_release);
        *unflushed = 1;
        return SK_OK;
    }
}

/* The chunks an add of h may change, among all: in the newest layer, which
 * is where adds go, while it is the file's. Their number. */
static unsigned item_chunks(const sk_bloom *f, struct item_hash h,
                            uint64_t chunks[SK_BLOOM_MAX_HASHES])
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    if (f->nlayers != s->file_layers)
        return 0; /* a layer of memory: the file is rewritten whole */
    const struct layer *l = &sk__bloom_layers(f)[f->nlayers - 1];
    unsigned n = layer_words(l, f->layout, h, chunks);
    for (unsigned i = 0; i < n; i++)
        chunks[i] = s->in_place->last_base + (chunks[i] * 8 >> s->chunk_shift);
    return n;
}

static int touch_item(sk_bloom *f, struct item_hash h, int *unflushed)
{
    const struct layer *l = &sk__bloom_layers(f)[f->nlayers - 1];
    uint64_t chunks[SK_BLOOM_MAX_HASHES];
    unsigned n = item_chunks(f, h, chunks);
    for (unsigned i = 0; i < n; i++) {
        int rc = touch_chunk(f, l, chunks[i] - sk__bloom_source(f)->in_place->last_base,
                             chunks[i], unflushed);
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

/* After a flush of the marks: the chunks of these items may change. */
static void made_durable(sk_bloom *f, const struct item_hash *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t chunks[SK_BLOOM_MAX_HASHES];
        unsigned k = item_chunks(f, h[i], chunks);
        for (unsigned j = 0; j < k; j++) {
            uint8_t marked = CHUNK_MARKED;
            _Atomic uint8_t *state = &sk__bloom_source(f)->in_place->state[chunks[j]];
            atomic_compare_exchange_strong_explicit(state, &marked,
                                                    CHUNK_DURABLE, memory_order_relaxed,
                                                    memory_order_relaxed);
        }
    }
}

/* The chunks of every layer of the file. */
static int touch_all(sk_bloom *f)
{
    const struct sk__bloom_source *s = sk__bloom_source(f);
    uint64_t chunk = 0;
    int unflushed = 0;
    for (unsigned i = 0; i < f->nlayers && i < s->file_layers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        uint64_t n = sk__bloom_layer_chunks(l, s->chunk_shift);
        for (uint64_t c = 0; c < n; c++, chunk++) {
            int rc = touch_chunk(f, l, c, chunk, &unflushed);
            if (rc != SK_OK)
                return rc;
        }
    }
    if (!unflushed)
        return SK_OK;
    int rc = flush_marks(f);
    for (uint64_t c = 0; rc == SK_OK && c < chunk; c++)
        atomic_store_explicit(&s->in_place->state[c], CHUNK_DURABLE, memory_order_relaxed);
    return rc;
}

/* The source's hook before bits change (bloom_internal.h): steps 1 and 2
 * of the order above, one flush of the marks for all n items. */
static int before_write(sk_bloom *f, const struct item_hash *h, size_t n)
{
    if (h == NULL)
        return touch_all(f);
    int unflushed = 0, rc = SK_OK;
    for (size_t i = 0; i < n && rc == SK_OK; i++)
        rc = touch_item(f, h[i], &unflushed);
    if (rc == SK_OK && unflushed) {
        rc = flush_marks(f);
        if (rc == SK_OK)
            made_durable(f, h, n);
    }
    return rc;
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
    struct sk__bloom_source *s = sk__bloom_source(f);
    uint64_t chunk = 0;
    for (unsigned i = 0; i < f->nlayers; i++) {
        const struct layer *l = &sk__bloom_layers(f)[i];
        uint64_t n = sk__bloom_layer_chunks(l, s->chunk_shift);
        for (uint64_t c = 0; c < n; c++, chunk++)
            if (sk__bloom_chunk_marked(s->marks, chunk))
                sk_store_le64(s->sums + chunk * SK_BF_SUM_SIZE,
                              sk__bloom_chunk_sum(l, c, s->chunk_shift));
    }
    size_t head_len = sk__bloom_header_size(f->nlayers);
    uint8_t *head = sk__alloc(&f->alloc, head_len);
    if (head == NULL)
        return SK_ENOMEM;
    sk__bloom_encode_header(f, head, 0);
    int fd = s->in_place->fd;
    /* One write(2) of the header: a process killed during it has written
     * all of it or none. */
    int rc = pwrite_all(fd, head, head_len, 0);
    sk__free(&f->alloc, head, head_len);
    if (rc == SK_OK && fdatasync(fd) != 0)
        rc = SK_EIO;
    if (rc != SK_OK)
        return rc;
    memset(s->marks, 0, (size_t)sk__bloom_marks_size(chunk));
    /* Summed from the bytes as they are, so checked; unmarked again. */
    for (uint64_t c = 0; c < chunk; c++)
        if (atomic_load_explicit(&s->in_place->state[c], memory_order_relaxed) != CHUNK_DAMAGED)
            atomic_store_explicit(&s->in_place->state[c], CHUNK_UNCHECKED, memory_order_relaxed);
    return fdatasync(fd) == 0 ? SK_OK : SK_EIO;
}

int sk__bloom_commit_in_place(sk_bloom *f)
{
    int fd = sk__bloom_source(f)->in_place->fd;
    int rc = sk__bloom_lock_header(fd, F_WRLCK);
    if (rc != SK_OK)
        return rc;
    rc = commit(f);
    int e = errno;
    sk__bloom_lock_header(fd, F_UNLCK);
    errno = e;
    return rc;
}

/* The source's release hook: the file closed, the in-place state freed,
 * then what every source holds. */
static void release(sk_bloom *f)
{
    struct sk__in_place *ip = sk__bloom_source(f)->in_place;
    close(ip->fd);
    if (ip->path != NULL)
        sk__free(&f->alloc, ip->path, ip->path_size);
    if (ip->state != NULL)
        sk__free(&f->alloc, (void *)ip->state, (size_t)ip->chunks);
    sk__free(&f->alloc, ip, sizeof *ip);
    sk__bloom_source_release(f);
}

int sk__bloom_begin_in_place(sk_bloom *f, int fd, const char *path)
{
    struct sk__bloom_source *s = sk__bloom_source(f);
    struct sk__in_place *ip = sk__zalloc(&f->alloc, sizeof *ip);
    if (ip == NULL) {
        close(fd);
        return SK_ENOMEM;
    }
    s->in_place = ip;
    s->hooks.before_write = before_write;
    s->hooks.release = release;
    ip->fd = fd;
    ip->chunks = sk__bloom_chunks(f, s->chunk_shift);
    ip->path_size = strlen(path) + 1;
    ip->path = sk__alloc(&f->alloc, ip->path_size);
    ip->state = sk__zalloc(&f->alloc, (size_t)ip->chunks);
    if (ip->path == NULL || ip->state == NULL)
        return SK_ENOMEM;
    memcpy(ip->path, path, ip->path_size);
    for (unsigned i = 0; i + 1 < f->nlayers; i++)
        ip->last_base += sk__bloom_layer_chunks(&sk__bloom_layers(f)[i], s->chunk_shift);
    /* An interrupted add's chunks cannot be checked, and their marks are on
     * the disk already. */
    for (uint64_t c = 0; c < ip->chunks; c++)
        if (sk__bloom_chunk_marked(s->marks, c))
            atomic_store_explicit(&ip->state[c], CHUNK_DURABLE, memory_order_relaxed);
    return SK_OK;
}

const char *sk__bloom_in_place_path(const sk_bloom *f)
{
    return sk__bloom_source(f)->in_place->path;
}
