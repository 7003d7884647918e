/*
 * lines.h: reading lines from files and streams at disk speed.
 *
 * Inputs are opened up front, so that a missing file is reported before any
 * work starts. Regular files are cut into byte ranges that worker threads
 * read with pread, each owning the lines that start inside its range; pipes
 * and terminals are one range read sequentially. A consumer receives blocks
 * of whole lines, not single lines, so that its per-line loop stays tight.
 *
 * A line is every byte up to a '\n' (not included); bytes are passed through
 * untouched, NULs and '\r' included; a last line without '\n' counts; lines
 * may be of any length that fits in memory.
 */
#ifndef SKETCH_CLI_LINES_H
#define SKETCH_CLI_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct input {
    const char *name; /* as given; "-" is standard input */
    int fd;
    int seekable;     /* a regular file, read with pread in ranges */
    uint64_t start;   /* where reading begins: 0, or where standard input stands */
    uint64_t size;    /* bytes, when seekable */
    int skip;         /* the same stream named again: already read to its end */
    dev_t dev;
    ino_t ino;
};

/* Opens every path ("-" for standard input) or dies naming the first that
 * cannot be opened. With no paths, reads standard input. */
struct input *inputs_open(char **paths, int count, int *opened);
void inputs_close(struct input *inputs, int count);

/* Called with data[0..len) holding one or more whole lines, each ending in
 * '\n' except perhaps the very last line of an input. Returns 0 to go on. */
typedef int (*lines_fn)(void *ctx, const char *data, size_t len);

/* Creates the per-thread state of the consumer for thread i of n. */
typedef void *(*worker_init_fn)(void *shared, int thread);

/* Reads every input with up to `threads` threads (0: one per core). Each
 * thread gets its own context from init and passes it to fn. Returns 0, or
 * an errno value after printing nothing; *failed_input names the input. */
int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, void ***contexts, int *used_threads,
                        const char **failed_input);

/* The number of online processors, at least 1. */
int cpu_count(void);

#endif
