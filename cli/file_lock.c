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
 * that fails before writing removes the empty file it created.
 */
#define _GNU_SOURCE
#include "file_lock.h"

#include <errno.h>
#include <fcntl.h>
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
    for (;;) {
        int created = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            created = fd >= 0;
            if (fd < 0 && errno == EEXIST)
                continue;
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
                placeholder = strdup(path);
                placeholder_dev = held.st_dev;
                placeholder_ino = held.st_ino;
                atexit(remove_placeholder);
            }
            /* Empty: no sketch yet, whoever created it. Another writer can
             * lock the placeholder between its creator's open and flock. */
            *exists = !created && held.st_size > 0;
            return fd;
        }
        /* Replaced while we waited: lock the file that is there now. */
        close(fd);
    }
}

void unlock_file(int fd)
{
    if (fd >= 0)
        close(fd);
}
