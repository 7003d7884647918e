/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lines.h: reading lines from files and streams at disk speed.
 *
 * The inputs (inputs.h) are read a batch at a time. Regular files are cut
 * into byte ranges that worker threads read with pread, each owning the
 * lines that start inside its range; pipes, terminals and files that claim
 * no size (procfs) are one range read sequentially to their end. A consumer
 * receives blocks of whole lines, not single lines, so that its per-line
 * loop stays tight.
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
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
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

/* Reads every input with up to `threads` threads (0: one per core). Each
 * thread gets its own context from init and passes it to fn. Returns 0, or
 * an errno value after printing nothing; *failed_input names the input. */
int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, void ***contexts, int *used_threads,
                        const char **failed_input);

/* Bit i set where p[i] is '\n', for i in 0..63. Consumers walk the set bits
 * of one mask per 64 bytes instead of calling memchr once per line, which
 * for short lines costs more in call overhead and mispredicted exits than
 * the search itself. */
static inline uint64_t newline_mask64(const char *p)
{
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t mask = 0;
    for (int i = 0; i < 4; i++) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        mask |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, nl)) << (16 * i);
    }
    return mask;
#else
    uint64_t mask = 0;
    for (int i = 0; i < 64; i++)
        mask |= (uint64_t)(p[i] == '\n') << i;
    return mask;
#endif
}

/* Calls on_line(ctx, line, length) for every line of data[0..len) (whole
 * lines, as lines_fn receives them), stopping early if it returns nonzero. */
#define FOR_EACH_LINE(data, len, on_line, ctx)                                     \
    do {                                                                           \
        const char *line_ = (data), *end_ = (data) + (len), *window_ = (data);     \
        int stop_ = 0;                                                             \
        while (!stop_ && end_ - window_ >= 64) {                                   \
            for (uint64_t m_ = newline_mask64(window_); m_ != 0 && !stop_;         \
                 m_ &= m_ - 1) {                                                   \
                const char *nl_ = window_ + __builtin_ctzll(m_);                   \
                stop_ = on_line((ctx), line_, (size_t)(nl_ - line_));              \
                line_ = nl_ + 1;                                                   \
            }                                                                      \
            window_ += 64;                                                         \
        }                                                                          \
        while (!stop_ && line_ < end_) {                                           \
            const char *from_ = window_ > line_ ? window_ : line_;                 \
            const char *nl_ = memchr(from_, '\n', (size_t)(end_ - from_));         \
            const char *stop_at_ = nl_ != NULL ? nl_ : end_;                       \
            stop_ = on_line((ctx), line_, (size_t)(stop_at_ - line_));             \
            line_ = stop_at_ + 1;                                                  \
        }                                                                          \
        if (stop_)                                                                 \
            return 1;                                                              \
    } while (0)

/* Reads standard input in order on this thread, without a progress bar,
 * passing blocks of lines to fn(ctx, ...). Returns 0, ECANCELED if fn asked
 * to stop, or another errno value. */
int lines_read_stdin(lines_fn fn, void *ctx);

/* The number of online processors, at least 1. */
int cpu_count(void);

#endif
