/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file_lock.c: the lock a command holds on a sketch or filter file for a
 * whole read-modify-write (see file_lock.h).
 *
 * The lock is flock(2) on the file itself. Files are replaced by renaming a
 * new one over them, so the inode locked may stop being the file's while a
 * writer waits: after it gets the lock it checks that the path still names
 * the inode it holds, and starts again if not. A file that does not exist
 * yet is created empty to have an inode to lock; until the first writer
 * replaces it, an empty file means "no sketch yet" to writers, and a writer
 * that fails before writing removes the empty file it created. A symbolic
 * link to a file that does not exist yet is kept: the file it names is
 * created (the writers then replace that file, as through any link).
 */
#define _GNU_SOURCE
#include "file_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The empty file this process created to lock, removed at exit unless a
 * sketch was written over it. */
static char *placeholder;
static dev_t placeholder_dev;
static ino_t placeholder_ino;

static void remove_placeholder(void)
{
    struct stat st;
    if (placeholder != NULL && stat(placeholder, &st) == 0 && st.st_dev == placeholder_dev &&
        st.st_ino == placeholder_ino && st.st_size == 0)
        unlink(placeholder);
}

/* The file that path names through a chain of symbolic links, when that
 * file does not exist (malloc'd); NULL if path is not such a link. */
static char *missing_link_target(const char *path)
{
    char *at = strdup(path);
    for (int hops = 0; at != NULL && hops < 40; hops++) { /* 40: the kernel's ELOOP */
        struct stat st;
        if (lstat(at, &st) != 0) {
            if (hops > 0 && errno == ENOENT)
                return at;
            break;
        }
        char link[PATH_MAX];
        ssize_t n = S_ISLNK(st.st_mode) ? readlink(at, link, sizeof link - 1) : -1;
        if (n < 0)
            break;
        link[n] = '\0';
        /* A relative target is relative to the link's directory. */
        const char *slash = strrchr(at, '/');
        size_t dir = link[0] != '/' && slash != NULL ? (size_t)(slash - at) + 1 : 0;
        char *next = malloc(dir + (size_t)n + 1);
        if (next != NULL) {
            memcpy(next, at, dir);
            memcpy(next + dir, link, (size_t)n + 1);
        }
        free(at);
        at = next;
    }
    free(at);
    return NULL;
}

int lock_for_writing(const char *path, int create, int *exists)
{
    if (strcmp(path, "-") == 0) { /* standard output: nothing to lock */
        *exists = 0;
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* Devices, FIFOs: written through, not replaced, and not locked. */
        *exists = !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode);
        return -1;
    }
    /* "Missing" then "exists" again and again, however unlikely with the
     * link's file created, ends in an error, never in a loop. */
    for (int appeared = 0;;) {
        int created = 0;
        char *made = NULL; /* the file a link names, when this call made it */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            created = fd >= 0;
            /* O_EXCL refuses a link even to nothing: create what it names. */
            if (fd < 0 && errno == EEXIST && (made = missing_link_target(path)) != NULL) {
                fd = open(made, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
                created = fd >= 0;
                if (fd < 0 && errno != EEXIST)
                    die("%s: a symbolic link to %s, which cannot be created: %s", path, made,
                        strerror(errno));
            }
            if (fd < 0 && errno == EEXIST) {
                free(made);
                if (++appeared == 1000)
                    die("%s: keeps appearing and disappearing; nothing written", path);
                continue;
            }
        }
        if (fd < 0)
            die("%s: %s", path, strerror(errno));
        if (flock(fd, LOCK_EX | (option_no_wait ? LOCK_NB : 0)) != 0) {
            if (errno == EWOULDBLOCK)
                die("%s: another sketch command is writing it (--no-wait)", path);
            die("%s: cannot lock: %s", path, strerror(errno));
        }
        struct stat held, now;
        if (fstat(fd, &held) != 0)
            die("%s: %s", path, strerror(errno));
        if (stat(path, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
            if (created && placeholder == NULL) {
                /* Through a link, the file it names goes, and the link stays. */
                placeholder = made != NULL ? made : strdup(path);
                made = NULL;
                placeholder_dev = held.st_dev;
                placeholder_ino = held.st_ino;
                atexit(remove_placeholder);
            }
            free(made);
            /* Empty: no sketch yet, whoever created it. Another writer can
             * lock the placeholder between its creator's open and flock. */
            *exists = !created && held.st_size > 0;
            return fd;
        }
        /* Replaced while we waited: lock the file that is there now. */
        free(made);
        close(fd);
    }
}

void unlock_file(int fd)
{
    if (fd >= 0)
        close(fd);
}
