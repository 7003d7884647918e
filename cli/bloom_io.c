/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_io.c: opening, committing and saving the filter files of `sketch
 * bloom` (see bloom_io.h), each failure a one-line message.
 *
 * A mapped filter (check and info map it, an add in place maps it
 * writable) reports a page that cannot be had as SIGBUS, not as an error
 * code: the page of a file that shrank under the command (cp over it
 * truncates it in place), or, in an add, a page that needs a block of a
 * full disk (a hole of a sparse file, any page on a copy-on-write file
 * system). The handler tells these apart by the file's size and its file
 * system's free blocks, so that a full disk is not called a changed file.
 */
#define _GNU_SOURCE
#include "bloom_io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util.h"

/* What the fault handler needs, set before the library maps the file: the
 * handler may only call what is async-signal-safe, so its messages are
 * written out beforehand. */
static const char *mapped_path;
static int mapped_fd = -1; /* the file as it was opened, to look at after a fault */
static off_t mapped_size;
static char no_space[192], io_error[192];

static void put(const char *text)
{
    ssize_t rc = write(STDERR_FILENO, text, strlen(text));
    (void)rc;
}

static void on_sigbus(int sig)
{
    (void)sig;
    const char *why = ": " CHANGED_WHILE_READ "; no answer is given\n";
    struct stat st;
    struct statfs fs;
    /* Not shorter than it was: the page itself could not be had. */
    if (mapped_fd >= 0 && fstat(mapped_fd, &st) == 0 && st.st_size >= mapped_size)
        why = no_space[0] != '\0' && fstatfs(mapped_fd, &fs) == 0 && fs.f_bavail == 0
                  ? no_space
                  : io_error;
    put("sketch: ");
    put(mapped_path);
    put(why);
    _exit(EXIT_FAILURE_USAGE);
}

/* Sets up the fault handler for the file at path, about to be mapped. */
static void watch_mapping(const char *path, int writable)
{
    static const char stopped[] =
        "; the add stopped part way, as a killed add does: the next add writes the "
        "checksums it left undone\n";
    mapped_path = path;
    /* An earlier file's descriptor stays open: closing any descriptor of a
     * file drops this process's fcntl locks on it, which the library holds
     * on a filter open in place. */
    struct stat st;
    mapped_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (mapped_fd >= 0 && fstat(mapped_fd, &st) != 0) {
        close(mapped_fd);
        mapped_fd = -1;
    }
    mapped_size = mapped_fd >= 0 ? st.st_size : 0;
    /* Reading a page takes no block: a full disk explains only writes. */
    no_space[0] = '\0';
    if (writable)
        snprintf(no_space, sizeof no_space, ": %s%s", strerror(ENOSPC), stopped);
    snprintf(io_error, sizeof io_error, ": a page of it could not be %s: %s%s",
             writable ? "written" : "read", strerror(EIO),
             writable ? stopped : "; no answer is given\n");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
}

static _Noreturn void die_damaged(const char *path)
{
    die("%s: not a valid Bloom filter: checksum mismatch: its bits are damaged (see "
        "'sketch bloom info --verify'); refusing to write from it", path);
}

sk_bloom *bloom_open_or_die(const char *path, unsigned flags)
{
    require_regular_file(path);
    if (flags & (SK_BLOOM_MAP | SK_BLOOM_IN_PLACE))
        watch_mapping(path, (flags & SK_BLOOM_IN_PLACE) != 0);
    sk_bloom *f;
    int rc = sk_bloom_open(&f, path, flags, NULL);
    if (rc == SK_EINCOMPAT && (flags & SK_BLOOM_IN_PLACE))
        return NULL;
    if (rc == SK_EIO && errno == EWOULDBLOCK)
        die("%s: another process is adding to it in place", path);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc == SK_ECHECKSUM)
        die_damaged(path);
    if (rc != SK_OK)
        die("%s: not a valid Bloom filter: %s%s", path, sk_strerror(rc), file_hint(path));
    return f;
}

void bloom_save_or_die(const sk_bloom *f, const char *path)
{
    if (strcmp(path, "-") == 0) {
        uint64_t size;
        sk_bloom_serialized_size(f, &size);
        char *buf = size <= SIZE_MAX ? malloc((size_t)size) : NULL;
        size_t len;
        if (buf == NULL || sk_bloom_serialize(f, buf, (size_t)size, &len) != SK_OK)
            die("standard output: out of memory");
        write_stdout_or_die(buf, len);
        free(buf);
        return;
    }
    int rc = sk_bloom_save(f, path);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
}

void bloom_sync_or_die(sk_bloom *f, const char *path)
{
    int rc = sk_bloom_sync(f);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc == SK_ECHECKSUM)
        die_damaged(path);
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
}

void bloom_fail_add(sk_bloom *f, int in_place, const char *path, int rc)
{
    if (in_place)
        sk_bloom_sync(f);
    if (rc == SK_ECHECKSUM)
        die_damaged(path);
    die("%s: %s", path, sk_strerror(rc));
}
