/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inputs.h: the FILEs a command reads lines from (lines.h reads them).
 *
 * Inputs are checked up front (they exist, can be read, are not
 * directories), so that a missing file is reported before any work starts,
 * and opened in batches as reading reaches them, so that any number of them
 * can be read under any limit of open files. When an input is opened its
 * first bytes tell whether it is gzip, zstd or xz, which a decoder then
 * reads on a thread of its own (decompress.h); a plain stream gives back
 * the bytes it was told by.
 */
#ifndef SKETCH_CLI_INPUTS_H
#define SKETCH_CLI_INPUTS_H

#include <stdint.h>
#include <sys/types.h>

#include "decompress.h"
#include "util.h"

struct input {
    const char *name; /* as given; "-" is standard input */
    int fd;           /* -1 until its batch is read */
    int seekable;     /* a regular file that says its size, read with pread in ranges */
    uint64_t start;   /* where reading begins: 0, or where standard input stands */
    uint64_t size;    /* bytes, when seekable */
    int skip;         /* the same stream named again: already read to its end */
    dev_t dev;
    ino_t ino;
    int started;              /* opened, and its compression told */
    struct decoder *decoder;  /* compressed input (decompress.h), or NULL */
    unsigned char head[CODEC_MAGIC_MAX]; /* first bytes of a plain stream, */
    size_t head_len, head_pos;           /* read to tell its codec */
};

/* Checks every path ("-" for standard input) or dies naming the first that
 * cannot be read. With no paths, reads standard input. */
struct input *inputs_open(char **paths, int count, int *opened);
void inputs_close(struct input *inputs, int count);

/* Whether one of the inputs is standard input at an interactive terminal:
 * no progress bar is drawn over what a person types. */
int inputs_interactive(const struct input *inputs, int count);

/* Opens an input for its turn (its size is what it is then) and tells its
 * compression; 0 or an errno value. input_end closes it. */
int input_start(struct input *in);
void input_end(struct input *in);

/* How many inputs may be open at once. */
int inputs_at_once(void);

#endif
