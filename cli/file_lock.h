/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file_lock.h: every command that writes a sketch or filter file holds an
 * exclusive advisory lock on it from before it reads the file until after
 * the new one is in place, so that concurrent writers (xargs -P, cron)
 * never lose an update: each waits for the one before it and then reads
 * what that one wrote (with --no-wait, option_no_wait in util.h, a locked
 * file is an error, exit 2). Readers need no lock of these: files are
 * replaced whole by a rename, so a reader sees the old file or the new one,
 * and a filter changed in place is committed under the library's own lock,
 * which its readers take (docs/bloom-format.md).
 */
#ifndef SKETCH_CLI_FILE_LOCK_H
#define SKETCH_CLI_FILE_LOCK_H

/* Locks path for writing and returns the descriptor that holds the lock
 * (-1 for "-", a device or a FIFO, which are written through and not
 * locked); dies
 * on error. With create, a missing file is created empty to be locked (for
 * a symbolic link to nothing, the file it names, keeping the link).
 * *exists tells whether a sketch or filter was there before: 0 if this
 * call created the file, if it is empty (created by another writer to lock,
 * and not yet written), or for a device or FIFO. */
int lock_for_writing(const char *path, int create, int *exists);

/* Releases the lock (after the new file is in place). */
void unlock_file(int fd);

#endif
