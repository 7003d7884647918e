/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module_harness_io.c: the streams a data type's methods write to and read
 * from in the harness (module_harness.h): RDB streams in the harness's own
 * byte layout, digests that read every byte, and logs that format every
 * line and drop it; and the harness's way out when it cannot go on.
 */
#include "module_harness_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct harness_io {
    const uint8_t *in;
    size_t len, pos;
    uint8_t *out;
    size_t outlen, outcap;
    int error;
};

void harness_fail(const char *what)
{
    fprintf(stderr, "module harness: %s\n", what);
    abort();
}

void *harness_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        harness_fail("out of memory");
    return p;
}

static void put(struct harness_io *io, const void *data, size_t len)
{
    if (io->in != NULL)
        harness_fail("saving into a stream opened for loading");
    if (io->outcap - io->outlen < len) {
        size_t cap = io->outcap ? io->outcap : 256;
        while (cap - io->outlen < len)
            cap *= 2;
        io->out = realloc(io->out, cap);
        if (io->out == NULL)
            harness_fail("out of memory");
        io->outcap = cap;
    }
    memcpy(io->out + io->outlen, data, len);
    io->outlen += len;
}

void h_SaveUnsigned(RedisModuleIO *rio, uint64_t value)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(value >> (8 * i));
    put((struct harness_io *)(void *)rio, b, 8);
}

void h_SaveStringBuffer(RedisModuleIO *rio, const char *str, size_t len)
{
    uint8_t b[4];
    if (len > UINT32_MAX)
        harness_fail("string buffer too large for the harness");
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(len >> (8 * i));
    put((struct harness_io *)(void *)rio, b, 4);
    put((struct harness_io *)(void *)rio, str, len);
}

static int take(struct harness_io *io, size_t n, const uint8_t **p)
{
    if (io->error || io->in == NULL || io->len - io->pos < n) {
        io->error = 1;
        return 0;
    }
    *p = io->in + io->pos;
    io->pos += n;
    return 1;
}

uint64_t h_LoadUnsigned(RedisModuleIO *rio)
{
    const uint8_t *p;
    if (!take((struct harness_io *)(void *)rio, 8, &p))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

char *h_LoadStringBuffer(RedisModuleIO *rio, size_t *len)
{
    struct harness_io *io = (struct harness_io *)(void *)rio;
    const uint8_t *p;
    if (!take(io, 4, &p))
        return NULL;
    size_t n = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
    if (!take(io, n, &p))
        return NULL;
    char *buf = harness_xmalloc(n);
    memcpy(buf, p, n);
    *len = n;
    return buf;
}

/* Signed and double fields are the unsigned field's 8 bytes, as Redis
 * writes a double's bits and a signed value's two's complement. */
void h_SaveSigned(RedisModuleIO *rio, int64_t value)
{
    h_SaveUnsigned(rio, (uint64_t)value);
}

int64_t h_LoadSigned(RedisModuleIO *rio)
{
    uint64_t v = h_LoadUnsigned(rio);
    int64_t out;
    memcpy(&out, &v, sizeof out);
    return out;
}

void h_SaveDouble(RedisModuleIO *rio, double value)
{
    uint64_t v;
    memcpy(&v, &value, sizeof v);
    h_SaveUnsigned(rio, v);
}

double h_LoadDouble(RedisModuleIO *rio)
{
    uint64_t v = h_LoadUnsigned(rio);
    double out;
    memcpy(&out, &v, sizeof out);
    return out;
}

int h_IsIOError(RedisModuleIO *rio)
{
    return ((struct harness_io *)(void *)rio)->error;
}

/* Log lines are formatted, so that a bad format or argument shows up under
 * the sanitizers, and dropped. */
static void format_and_drop(const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
}

#define FORMAT_AND_DROP(fmt)                                                                       \
    do {                                                                                           \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        format_and_drop(fmt, ap);                                                                  \
        va_end(ap);                                                                                \
    } while (0)

void h_LogIOError(RedisModuleIO *io, const char *level, const char *fmt, ...)
{
    (void)io, (void)level;
    FORMAT_AND_DROP(fmt);
}

void h_Log(RedisModuleCtx *ctx, const char *level, const char *fmt, ...)
{
    (void)ctx, (void)level;
    FORMAT_AND_DROP(fmt);
}

/* Digests read every byte they are fed, so that the sanitizers see each
 * one; the sum is kept where the compiler cannot drop it. */
static unsigned char digest_sum;

void h_DigestAddStringBuffer(RedisModuleDigest *md, const char *ele, size_t len)
{
    (void)md;
    for (size_t i = 0; i < len; i++)
        digest_sum = (unsigned char)(digest_sum + (unsigned char)ele[i]);
}

void h_DigestAddLongLong(RedisModuleDigest *md, long long ll)
{
    h_DigestAddStringBuffer(md, (const char *)&ll, sizeof ll);
}

void h_DigestEndSequence(RedisModuleDigest *md)
{
    (void)md;
}

struct harness_io *harness_io_reader(const uint8_t *data, size_t len)
{
    struct harness_io *io = calloc(1, sizeof *io);
    if (io == NULL)
        harness_fail("out of memory");
    io->in = data != NULL ? data : (const uint8_t *)"";
    io->len = len;
    return io;
}

struct harness_io *harness_io_writer(void)
{
    struct harness_io *io = calloc(1, sizeof *io);
    if (io == NULL)
        harness_fail("out of memory");
    return io;
}

const uint8_t *harness_io_bytes(struct harness_io *io, size_t *len)
{
    *len = io->outlen;
    return io->out;
}

int harness_io_error(struct harness_io *io)
{
    return io->error;
}

void harness_io_free(struct harness_io *io)
{
    if (io != NULL)
        free(io->out);
    free(io);
}
