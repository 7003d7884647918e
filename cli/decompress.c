/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decompress.c: gzip, zstd and xz input, recognized by its first bytes and
 * decompressed as it is read (see decompress.h).
 *
 * gzip goes through ISA-L's igzip, which inflates several times as fast as
 * zlib on x86; zstd through libzstd and xz through liblzma. Concatenated
 * members and frames (what `cat a.gz b.gz` and parallel compressors make)
 * are read one after another, as gzip -d does. Input ends cleanly only at
 * the end of a member or frame: a stream cut short is an error, and so is
 * anything after the last member that does not start another.
 *
 * With decoder_start_thread, decompression runs on a thread of its own a
 * few blocks ahead of the reader, so that on two cores counting costs about
 * what decompressing alone does.
 */
#include "decompress.h"

#include <errno.h>
#include <pthread.h>
#include <isa-l/igzip_lib.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define IN_SIZE (256u << 10)

static const unsigned char gzip_magic[] = {0x1f, 0x8b};
static const unsigned char zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
static const unsigned char xz_magic[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};

/* Decompressed blocks queued between the decoding thread and the reader. */
#define BLOCKS 4
#define BLOCK_SIZE (1u << 20)

struct block {
    unsigned char *data;
    size_t len;
};

struct decoder {
    enum codec codec;
    int fd;
    unsigned char *in;
    size_t in_pos, in_len;
    int in_eof;
    int member_done; /* between members or frames: the input may end here */
    const char *error;
    struct inflate_state *gz;
    ZSTD_DStream *zs;
    lzma_stream xz;
    /* The decoding thread fills blocks[first..first+queued) in turn. */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct block blocks[BLOCKS];
    unsigned first, queued;
    size_t taken;     /* bytes of blocks[first] already read */
    int finished;     /* the thread has queued its last block */
    int stopping;     /* the reader is done: the thread is to end */
    int thread_errno; /* 0, or what ended the input */
    int threaded;
};

static int starts_with(const unsigned char *head, size_t len, const unsigned char *magic,
                       size_t magic_len)
{
    return len >= magic_len && memcmp(head, magic, magic_len) == 0;
}

enum codec codec_detect(const unsigned char *head, size_t len)
{
    if (starts_with(head, len, gzip_magic, sizeof gzip_magic))
        return CODEC_GZIP;
    if (starts_with(head, len, zstd_magic, sizeof zstd_magic))
        return CODEC_ZSTD;
    if (starts_with(head, len, xz_magic, sizeof xz_magic))
        return CODEC_XZ;
    return CODEC_NONE;
}

const char *codec_name(enum codec codec)
{
    static const char *const names[] = {"plain", "gzip", "zstd", "xz"};
    return names[codec];
}

struct decoder *decoder_new(enum codec codec, int fd, const void *prefix, size_t prefix_len)
{
    struct decoder *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->codec = codec;
    d->fd = fd;
    d->in = malloc(IN_SIZE > prefix_len ? IN_SIZE : prefix_len);
    int ok = d->in != NULL;
    if (ok && prefix_len > 0) {
        memcpy(d->in, prefix, prefix_len);
        d->in_len = prefix_len;
    }
    if (ok && codec == CODEC_GZIP) {
        d->gz = malloc(sizeof *d->gz);
        ok = d->gz != NULL;
        if (ok) {
            isal_inflate_init(d->gz);
            d->gz->crc_flag = ISAL_GZIP;
        }
    } else if (ok && codec == CODEC_ZSTD) {
        d->zs = ZSTD_createDStream();
        ok = d->zs != NULL && !ZSTD_isError(ZSTD_initDStream(d->zs));
    } else if (ok && codec == CODEC_XZ) {
        lzma_stream init = LZMA_STREAM_INIT;
        d->xz = init;
        /* Files of several blocks (xz -T) decode on every core. */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        lzma_mt mt = {
            .flags = LZMA_CONCATENATED,
            .threads = cores > 1 ? (uint32_t)cores : 1,
            .memlimit_threading = lzma_physmem() / 4,
            .memlimit_stop = UINT64_MAX,
        };
        ok = lzma_stream_decoder_mt(&d->xz, &mt) == LZMA_OK;
    }
    if (!ok) {
        decoder_free(d);
        return NULL;
    }
    return d;
}

void decoder_free(struct decoder *d)
{
    if (d == NULL)
        return;
    if (d->threaded) {
        pthread_mutex_lock(&d->lock);
        d->stopping = 1;
        pthread_cond_broadcast(&d->changed);
        pthread_mutex_unlock(&d->lock);
        pthread_join(d->thread, NULL);
        pthread_mutex_destroy(&d->lock);
        pthread_cond_destroy(&d->changed);
    }
    for (unsigned i = 0; i < BLOCKS; i++)
        free(d->blocks[i].data);
    free(d->gz);
    ZSTD_freeDStream(d->zs);
    if (d->codec == CODEC_XZ)
        lzma_end(&d->xz);
    free(d->in);
    free(d);
}

const char *decoder_error(const struct decoder *d)
{
    return d->error;
}

/* More compressed bytes, when all that was read has been used. */
static int fill(struct decoder *d)
{
    if (d->in_pos < d->in_len || d->in_eof)
        return 0;
    for (;;) {
        ssize_t n = read(d->fd, d->in, IN_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        d->in_pos = 0;
        d->in_len = (size_t)n;
        d->in_eof = n == 0;
        return 0;
    }
}

static ssize_t fail(struct decoder *d, const char *what)
{
    d->error = what;
    errno = EBADMSG;
    return -1;
}

/* One step of gzip; returns the bytes written to out, 0 if none yet. */
static ssize_t gzip_step(struct decoder *d, unsigned char *out, size_t len)
{
    struct inflate_state *s = d->gz;
    if (d->member_done) {
        /* What follows a member must be another one. */
        if (d->in_len - d->in_pos < sizeof gzip_magic && !d->in_eof) {
            memmove(d->in, d->in + d->in_pos, d->in_len - d->in_pos);
            d->in_len -= d->in_pos;
            d->in_pos = 0;
            ssize_t n = read(d->fd, d->in + d->in_len, IN_SIZE - d->in_len);
            if (n < 0)
                return errno == EINTR ? 0 : -1;
            d->in_len += (size_t)n;
            d->in_eof = n == 0;
            return 0;
        }
        if (!starts_with(d->in + d->in_pos, d->in_len - d->in_pos, gzip_magic,
                         sizeof gzip_magic))
            return fail(d, "trailing garbage after gzip data");
        isal_inflate_reset(s);
        s->crc_flag = ISAL_GZIP;
        d->member_done = 0;
    }
    s->next_in = d->in + d->in_pos;
    s->avail_in = (uint32_t)(d->in_len - d->in_pos);
    s->next_out = out;
    s->avail_out = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    int rc = isal_inflate(s);
    d->in_pos = d->in_len - s->avail_in;
    if (rc < 0)
        return fail(d, rc == ISAL_INCORRECT_CHECKSUM ? "gzip data whose checksum is wrong"
                                                     : "corrupt gzip data");
    if (s->block_state == ISAL_BLOCK_FINISH)
        d->member_done = 1;
    return (ssize_t)((size_t)(s->next_out - out));
}

static ssize_t zstd_step(struct decoder *d, unsigned char *out, size_t len)
{
    ZSTD_inBuffer in = {d->in, d->in_len, d->in_pos};
    ZSTD_outBuffer o = {out, len, 0};
    size_t rc = ZSTD_decompressStream(d->zs, &o, &in);
    d->in_pos = in.pos;
    if (ZSTD_isError(rc))
        return fail(d, "corrupt zstd data");
    /* 0: a frame has ended, and the next byte may start another. */
    d->member_done = rc == 0;
    return (ssize_t)o.pos;
}

static ssize_t xz_step(struct decoder *d, unsigned char *out, size_t len)
{
    d->xz.next_in = d->in + d->in_pos;
    d->xz.avail_in = d->in_len - d->in_pos;
    d->xz.next_out = out;
    d->xz.avail_out = len;
    lzma_ret rc = lzma_code(&d->xz, d->in_eof ? LZMA_FINISH : LZMA_RUN);
    d->in_pos = d->in_len - d->xz.avail_in;
    ssize_t n = (ssize_t)(len - d->xz.avail_out);
    if (rc == LZMA_STREAM_END) {
        d->member_done = 1;
        return n;
    }
    if (rc == LZMA_MEMLIMIT_ERROR || rc == LZMA_MEM_ERROR) {
        errno = ENOMEM;
        return -1;
    }
    if (rc != LZMA_OK && rc != LZMA_BUF_ERROR)
        return fail(d, "corrupt xz data");
    return n;
}

/* decode(), without the thread: on the caller's. */
static ssize_t decode(struct decoder *d, void *out, size_t len)
{
    for (;;) {
        if (fill(d) != 0)
            return -1;
        if (d->in_eof && d->in_pos == d->in_len) {
            if (d->codec == CODEC_XZ && !d->member_done) {
                /* liblzma needs LZMA_FINISH to tell the end of its input. */
                ssize_t n = xz_step(d, out, len);
                if (n != 0 || d->member_done)
                    return n;
            }
            if (!d->member_done)
                return fail(d, d->codec == CODEC_GZIP   ? "truncated gzip data"
                               : d->codec == CODEC_ZSTD ? "truncated zstd data"
                                                        : "truncated xz data");
            return 0;
        }
        ssize_t n = d->codec == CODEC_GZIP   ? gzip_step(d, out, len)
                    : d->codec == CODEC_ZSTD ? zstd_step(d, out, len)
                                             : xz_step(d, out, len);
        if (n != 0)
            return n;
    }
}

/* ---- the decoding thread ------------------------------------------------- */

static void *decode_thread(void *arg)
{
    struct decoder *d = arg;
    for (;;) {
        pthread_mutex_lock(&d->lock);
        while (d->queued == BLOCKS && !d->stopping)
            pthread_cond_wait(&d->changed, &d->lock);
        int stop = d->stopping;
        struct block *b = &d->blocks[(d->first + d->queued) % BLOCKS];
        pthread_mutex_unlock(&d->lock);
        if (stop)
            return NULL;
        b->len = 0;
        int err = 0, end = 0;
        while (b->len < BLOCK_SIZE) {
            ssize_t n = decode(d, b->data + b->len, BLOCK_SIZE - b->len);
            if (n < 0)
                err = errno;
            if (n <= 0) {
                end = 1;
                break;
            }
            b->len += (size_t)n;
        }
        pthread_mutex_lock(&d->lock);
        if (b->len > 0)
            d->queued++;
        if (end) {
            d->finished = 1;
            d->thread_errno = err;
        }
        pthread_cond_broadcast(&d->changed);
        pthread_mutex_unlock(&d->lock);
        if (end)
            return NULL;
    }
}

int decoder_start_thread(struct decoder *d)
{
    for (unsigned i = 0; i < BLOCKS; i++)
        if ((d->blocks[i].data = malloc(BLOCK_SIZE)) == NULL)
            return ENOMEM;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->changed, NULL);
    if (pthread_create(&d->thread, NULL, decode_thread, d) != 0) {
        pthread_mutex_destroy(&d->lock);
        pthread_cond_destroy(&d->changed);
        return 0; /* no thread: decode on the reader's */
    }
    d->threaded = 1;
    return 0;
}

ssize_t decoder_read(struct decoder *d, void *out, size_t len)
{
    if (!d->threaded)
        return decode(d, out, len);
    pthread_mutex_lock(&d->lock);
    while (d->queued == 0 && !d->finished)
        pthread_cond_wait(&d->changed, &d->lock);
    if (d->queued == 0) {
        int err = d->thread_errno;
        pthread_mutex_unlock(&d->lock);
        errno = err;
        return err != 0 ? -1 : 0;
    }
    struct block *b = &d->blocks[d->first];
    pthread_mutex_unlock(&d->lock);
    size_t n = b->len - d->taken < len ? b->len - d->taken : len;
    memcpy(out, b->data + d->taken, n);
    d->taken += n;
    if (d->taken == b->len) {
        pthread_mutex_lock(&d->lock);
        d->first = (d->first + 1) % BLOCKS;
        d->queued--;
        d->taken = 0;
        pthread_cond_broadcast(&d->changed);
        pthread_mutex_unlock(&d->lock);
    }
    return (ssize_t)n;
}
