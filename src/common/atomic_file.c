/* SPDX-License-Identifier: BSD-3-Clause */
/* atomic_file.c: see atomic_file.h. */
#define _GNU_SOURCE
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

#define TEMP_SUFFIX ".tmp.XXXXXX"

int sk__write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return SK_EIO;
        }
        p += n;
        len -= (size_t)n;
    }
    return SK_OK;
}

int sk__write_zeros(int fd, uint64_t count)
{
    static const uint8_t zeros[4096];
    while (count > 0) {
        size_t chunk = count < sizeof zeros ? (size_t)count : sizeof zeros;
        int rc = sk__write_all(fd, zeros, chunk);
        if (rc != SK_OK)
            return rc;
        count -= chunk;
    }
    return SK_OK;
}

/* The directory of path, whose fsync makes the rename durable. */
static void directory_of(const char *path, char *dir)
{
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

static mode_t mode_for(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return st.st_mode & 07777;
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* A temporary file beside path, fsync, rename over path, fsync of the
 * directory. */
static int replace_file(const char *path, sk__file_writer write_contents, const void *ctx)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + sizeof TEMP_SUFFIX);
    char *dir = malloc(len + 2);
    if (tmp == NULL || dir == NULL) {
        free(tmp);
        free(dir);
        return SK_ENOMEM;
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, TEMP_SUFFIX, sizeof TEMP_SUFFIX);
    directory_of(path, dir);
    mode_t mode = mode_for(path);

    int rc = SK_EIO, saved_errno = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) {
        rc = write_contents(fd, ctx);
        if (rc == SK_OK && (fchmod(fd, mode) != 0 || fsync(fd) != 0))
            rc = SK_EIO;
        saved_errno = errno;
        if (close(fd) != 0 && rc == SK_OK) {
            rc = SK_EIO;
            saved_errno = errno;
        }
        if (rc == SK_OK && rename(tmp, path) != 0) {
            rc = SK_EIO;
            saved_errno = errno;
        }
        if (rc != SK_OK)
            unlink(tmp);
    } else {
        saved_errno = errno;
    }
    if (rc == SK_OK) {
        int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd >= 0) {
            fsync(dir_fd);
            close(dir_fd);
        }
    }
    free(tmp);
    free(dir);
    errno = saved_errno;
    return rc;
}

/* A device, FIFO or terminal (/dev/stdout, /dev/null) is written through:
 * renaming over it would replace the node with a regular file. */
static int write_through(const char *path, sk__file_writer write_contents, const void *ctx)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return SK_EIO;
    int rc = write_contents(fd, ctx), saved_errno = errno;
    if (close(fd) != 0 && rc == SK_OK) {
        rc = SK_EIO;
        saved_errno = errno;
    }
    errno = saved_errno;
    return rc;
}

int sk__atomic_write(const char *path, sk__file_writer write_contents, const void *ctx)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return write_through(path, write_contents, ctx);
    /* Through a symbolic link the file it names is replaced, and the link
     * kept; a link to nothing yet is replaced like a missing file. */
    char *target = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        target = realpath(path, NULL);
        if (target != NULL)
            path = target;
    }
    int rc = replace_file(path, write_contents, ctx);
    int saved_errno = errno;
    free(target);
    errno = saved_errno;
    return rc;
}

int sk__read_file(const char *path, size_t max, const sk_allocator *a, uint8_t **data,
                  size_t *len, size_t *cap_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SK_EIO;
    size_t cap = 4096, used = 0;
    uint8_t *buf = sk__alloc(a, cap);
    int rc = buf == NULL ? SK_ENOMEM : SK_OK, saved_errno = 0;
    while (rc == SK_OK) {
        if (used == cap) {
            /* One byte past max is enough to tell the file is too long. */
            if (cap > max) {
                rc = SK_ETRUNCATED;
                break;
            }
            uint8_t *grown = sk__alloc(a, cap * 2);
            if (grown == NULL) {
                rc = SK_ENOMEM;
                break;
            }
            memcpy(grown, buf, used);
            sk__free(a, buf, cap);
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = SK_EIO;
            saved_errno = errno;
        } else if (n == 0) {
            break;
        } else {
            used += (size_t)n;
        }
    }
    close(fd);
    if (rc == SK_OK && used > max)
        rc = SK_ETRUNCATED;
    if (rc != SK_OK) {
        sk__free(a, buf, cap);
        errno = saved_errno;
        return rc;
    }
    *data = buf;
    *len = used;
    *cap_out = cap;
    return SK_OK;
}

struct bytes_to_write {
    const void *bytes;
    size_t len;
};

static int write_bytes(int fd, const void *ctx)
{
    const struct bytes_to_write *b = ctx;
    return sk__write_all(fd, b->bytes, b->len);
}

int sk__atomic_write_bytes(const char *path, const void *bytes, size_t len)
{
    struct bytes_to_write b = {bytes, len};
    return sk__atomic_write(path, write_bytes, &b);
}

int sk__open_file(const char *path, size_t max, const sk_allocator *allocator,
                  sk__file_parser parse, void *out, void *ctx)
{
    if (path == NULL)
        return SK_EINVAL;
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    uint8_t *data;
    size_t len, cap;
    int rc = sk__read_file(path, max, &a, &data, &len, &cap);
    if (rc != SK_OK)
        return rc;
    rc = parse(out, data, len, allocator, ctx);
    int saved_errno = errno;
    sk__free(&a, data, cap);
    errno = saved_errno;
    return rc;
}
