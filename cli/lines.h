/*
 * lines.h: reading lines from files and streams at disk speed.
 *
 * Inputs are checked up front (they exist, can be read, are not
 * directories), so that a missing file is reported before any work starts,
 * and opened in batches as reading reaches them, so that any number of them
 * can be read under any limit of open files. Regular files are cut into byte
 * ranges that worker threads read with pread, each owning the lines that
 * start inside its range; pipes, terminals and files that claim no size
 * (procfs) are one range read sequentially to their end. A consumer receives blocks
 * of whole lines, not single lines, so that its per-line loop stays tight.
 *
 * A line is every byte up to a '\n' (not included); bytes are passed through
 * untouched, NULs and '\r' included; a last line without '\n' counts; lines
 * may be of any length that fits in memory.
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

/* The message for an error that reading returned: strerror, or what was
 * wrong with compressed data. */
const char *lines_strerror(int err);

/* Checks every path ("-" for standard input) or dies naming the first that
 * cannot be read. With no paths, reads standard input. */
struct input *inputs_open(char **paths, int count, int *opened);
void inputs_close(struct input *inputs, int count);

/* Whether one of the inputs is standard input at an interactive terminal:
 * no progress bar is drawn over what a person types. */
int inputs_interactive(const struct input *inputs, int count);

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
