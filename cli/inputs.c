/* SPDX-License-Identifier: BSD-3-Clause */
/* inputs.c: the FILEs of inputs.h: checked up front, opened as reading
 * reaches them (standard input for "-"), their compression told from their
 * first bytes, and how many may be open at once. */
#define _GNU_SOURCE
#include "inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Standard input, or a path checked now and opened when its turn comes. */
struct input *inputs_open(char **paths, int count, int *opened)
{
    static char *stdin_only[] = {"-"};
    if (count == 0) {
        paths = stdin_only;
        count = 1;
    }
    struct input *inputs = calloc((size_t)count, sizeof *inputs);
    if (inputs == NULL)
        die("out of memory");
    for (int i = 0; i < count; i++) {
        struct input *in = &inputs[i];
        in->name = paths[i];
        in->fd = -1;
        struct stat st;
        if (strcmp(paths[i], "-") == 0) {
            in->fd = STDIN_FILENO;
            if (fstat(in->fd, &st) != 0)
                die("-: %s", strerror(errno));
        } else if (stat(paths[i], &st) != 0 || access(paths[i], R_OK) != 0) {
            die("%s: %s", paths[i], strerror(errno));
        }
        if (S_ISDIR(st.st_mode))
            die("%s: is a directory", paths[i]);
        /* procfs and similar files say 0 bytes and hold more: they are
         * read as streams, to their end. */
        in->seekable = S_ISREG(st.st_mode) && st.st_size > 0;
        in->size = in->seekable ? (uint64_t)st.st_size : 0;
        if (in->seekable && in->fd == STDIN_FILENO) {
            /* A redirected standard input may already have been partly read. */
            off_t at = lseek(in->fd, 0, SEEK_CUR);
            in->start = at > 0 && (uint64_t)at < in->size ? (uint64_t)at : 0;
            if (at > 0 && (uint64_t)at >= in->size)
                in->start = in->size;
        } else if (!in->seekable) {
            /* A stream named twice ("- -") is read once: as with cat, the
             * second time finds it at its end. */
            for (int j = 0; j < i; j++)
                if (!inputs[j].seekable && inputs[j].dev == st.st_dev &&
                    inputs[j].ino == st.st_ino)
                    in->skip = 1;
        }
        in->dev = st.st_dev;
        in->ino = st.st_ino;
    }
    *opened = count;
    return inputs;
}

/* Reads the first bytes of a stream (a short read is not its end). */
static ssize_t read_head(int fd, unsigned char *head, size_t len)
{
    size_t have = 0;
    while (have < len) {
        ssize_t n = read(fd, head + have, len - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        have += (size_t)n;
    }
    return (ssize_t)have;
}

/* Tells a compressed input by its first bytes and sets up its decoder. */
static int detect_codec(struct input *in)
{
    ssize_t n = in->seekable ? pread(in->fd, in->head, sizeof in->head, (off_t)in->start)
                             : read_head(in->fd, in->head, sizeof in->head);
    if (n < 0)
        return errno;
    enum codec codec = codec_detect(in->head, (size_t)n);
    if (codec == CODEC_NONE) {
        /* A stream gives its first bytes back from head. */
        in->head_len = in->seekable ? 0 : (size_t)n;
        return 0;
    }
    /* The decoder reads on from where the input starts, in order; its
     * thread must not start before the file stands there. */
    if (in->seekable && lseek(in->fd, (off_t)in->start, SEEK_SET) < 0)
        return errno;
    in->decoder = in->seekable ? decoder_new(codec, in->fd, NULL, 0)
                               : decoder_new(codec, in->fd, in->head, (size_t)n);
    if (in->decoder == NULL || decoder_start_thread(in->decoder) != 0)
        return ENOMEM;
    in->seekable = 0;
    return 0;
}

/* Opens a path for its turn; its size is what it is now. errno on failure. */
int input_start(struct input *in)
{
    if (in->started || in->skip)
        return 0;
    in->started = 1;
    if (in->fd < 0) {
        in->fd = open(in->name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (in->fd < 0 || fstat(in->fd, &st) != 0)
            return errno;
        in->seekable = S_ISREG(st.st_mode) && st.st_size > 0;
        in->size = in->seekable ? (uint64_t)st.st_size : 0;
        if (in->seekable)
            posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return option_raw ? 0 : detect_codec(in);
}

void input_end(struct input *in)
{
    if (in->fd >= 0 && in->fd != STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    decoder_free(in->decoder);
    in->decoder = NULL;
}

int inputs_interactive(const struct input *inputs, int count)
{
    for (int i = 0; i < count; i++)
        if (inputs[i].fd == STDIN_FILENO && isatty(STDIN_FILENO))
            return 1;
    return 0;
}

void inputs_close(struct input *inputs, int count)
{
    for (int i = 0; i < count; i++)
        input_end(&inputs[i]);
    free(inputs);
}

/* How many inputs are open at once: half the descriptors this process may
 * have beyond a reserve for everything else, so that any number of FILEs
 * can be read under any `ulimit -n`. */
int inputs_at_once(void)
{
    struct rlimit rl;
    long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                     ? (long)rl.rlim_cur
                     : 1024;
    long n = (limit - 16) / 2;
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}
