/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lines.h: reading lines from files and streams at disk speed.
 *
 * The inputs (inputs.h) are read a batch at a time. Regular files are cut
 * into byte ranges that worker threads read with pread, each owning the
 * lines that start inside its range; pipes, terminals and files that claim
 * no size (procfs) are one range read sequentially to their end. A consumer
 * receives blocks of whole lines, not single lines, so that its per-line
 * loop (line_batch.h) stays tight.
 *
 * A line is every byte up to a '\n' (not included); bytes are passed through
 * untouched, NULs and '\r' included; a last line without '\n' counts; a line
 * longer than option_max_line (--max-line-length, util.h) is an error, so a
 * reading thread holds at most that much of one line, whatever the input
 * (/dev/zero, a decompression bomb). A regular file that ends before the
 * size it had when it was opened shrank while it was read: an error too.
 */
#ifndef SKETCH_CLI_LINES_H
#define SKETCH_CLI_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inputs.h"
#include "util.h"


/* Errors of reading that are no errno value: a line longer than
 * option_max_line, and a regular file that shrank while it was read. */
enum { LINES_ETOOLONG = -1000, LINES_ESHRUNK = -1001 };

/* The message for an error that reading returned: strerror, what was
 * wrong with compressed data, or which line was too long. */
const char *lines_strerror(int err);

/* Called with data[0..len) holding one or more whole lines, each ending in
 * '\n' except perhaps the very last line of an input. Returns 0 to go on. */
typedef int (*lines_fn)(void *ctx, const char *data, size_t len);

/* Creates the per-thread state of the consumer for thread i of n. */
typedef void *(*worker_init_fn)(void *shared, int thread);

/* What a read leaves: each thread's context (from init, for the caller to
 * gather and free, with the array), how many threads there were, and the
 * name of the input that failed ("input" if none did). */
struct lines_run {
    void **contexts;
    int threads;
    const char *failed_input;
};

/* Reads every input with up to `threads` threads (0: one per core). Each
 * thread gets its own context from init and passes it to fn. Returns 0, or
 * an errno value after printing nothing. */
int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, struct lines_run *run);

/* Reads standard input in order on this thread, without a progress bar,
 * passing blocks of lines to fn(ctx, ...). Returns 0, ECANCELED if fn asked
 * to stop, or another errno value. */
int lines_read_stdin(lines_fn fn, void *ctx);

/* The number of online processors, at least 1. */
int cpu_count(void);

#endif
