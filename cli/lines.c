/* SPDX-License-Identifier: BSD-3-Clause */
/* lines.c: the reader of lines.h: inputs cut into ranges, each read by
 * one of a pool of threads into a buffer of its own, long lines refused,
 * and the whole lines handed to the consumer a block at a time. */
#define _GNU_SOURCE
#include "lines.h"

#include <errno.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Big enough that a read costs little per byte, small enough to stay in the
 * L2 cache of the core that consumes it. */
#ifndef READ_SIZE /* the fuzz target sets both tiny */
#define READ_SIZE (1u << 20)
#endif
/* Regular files are cut into ranges this large, handed out one at a time so
 * that threads that run slower still finish together. */
#ifndef RANGE_SIZE
#define RANGE_SIZE (32ull << 20)
#endif

/* What was wrong with the compressed input that failed, for EBADMSG. */
static const char *_Atomic decode_error;
/* The number of the line too long, for LINES_ETOOLONG. */
static uint64_t long_line_number;

const char *lines_strerror(int err)
{
    static char too_long[128];
    if (err == LINES_ETOOLONG) {
        snprintf(too_long, sizeof too_long, "line %llu is longer than %llu bytes "
                 "(--max-line-length)", (unsigned long long)long_line_number,
                 (unsigned long long)option_max_line);
        return too_long;
    }
    if (err == LINES_ESHRUNK)
        return CHANGED_WHILE_READ;
    const char *what = atomic_load(&decode_error);
    return err == EBADMSG && what != NULL ? what : strerror(err);
}

int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

struct range {
    struct input *input;
    uint64_t start, end; /* end == UINT64_MAX: to the end of the stream */
    uint64_t newlines;   /* of a stream: the lines passed on, to number a line */
    uint64_t long_line;  /* the number of the line that was too long */
};

struct reader {
    char *buf;
    size_t cap;
};

static ssize_t read_at(struct input *in, void *buf, size_t len, uint64_t offset)
{
    if (in->decoder != NULL) {
        ssize_t n = decoder_read(in->decoder, buf, len);
        if (n < 0 && errno == EBADMSG)
            atomic_store(&decode_error, decoder_error(in->decoder));
        return n;
    }
    if (in->head_pos < in->head_len) {
        size_t n = in->head_len - in->head_pos < len ? in->head_len - in->head_pos : len;
        memcpy(buf, in->head + in->head_pos, n);
        in->head_pos += n;
        return (ssize_t)n;
    }
    for (;;) {
        ssize_t n = in->seekable ? pread(in->fd, buf, len, (off_t)offset)
                                 : read(in->fd, buf, len);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

/* Finds the first '\n' in data[from..len), or returns len. */
static size_t find_newline(const char *data, size_t from, size_t len)
{
    if (from >= len)
        return len;
    const char *nl = memchr(data + from, '\n', len - from);
    return nl != NULL ? (size_t)(nl - data) : len;
}

/* Streams count every '\n' they pass on, so this runs over all their bytes:
 * byte counters summed every 255 vectors go at memory speed, where a mask
 * and a popcount per 64 bytes would slow a stream by a quarter. */
static uint64_t count_newlines(const char *p, size_t len)
{
    uint64_t n = 0;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (len - i >= 16) {
        __m128i counts = zero;
        for (int k = 0; k < 255 && len - i >= 16; k++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(v, nl));
        }
        __m128i sums = _mm_sad_epu8(counts, zero);
        n += (uint64_t)_mm_cvtsi128_si32(sums) + (uint64_t)_mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < len; i++)
        n += p[i] == '\n';
    return n;
}

/* Fails the range on the line that starts at file offset `at`, numbered
 * from where the input starts: a regular file is read again up to it,
 * since its lines before are spread over other threads' ranges. */
static int too_long(struct range *r, uint64_t at)
{
    struct input *in = r->input;
    uint64_t newlines = r->newlines;
    if (in->seekable) {
        char buf[1 << 16];
        newlines = 0;
        for (uint64_t pos = in->start; pos < at;) {
            size_t want = at - pos < sizeof buf ? (size_t)(at - pos) : sizeof buf;
            ssize_t n = pread(in->fd, buf, want, (off_t)pos);
            if (n <= 0)
                break;
            newlines += count_newlines(buf, (size_t)n);
            pos += (uint64_t)n;
        }
    }
    r->long_line = newlines + 1;
    return LINES_ETOOLONG;
}

/* Passes the whole lines of buf[from..upto) to fn, if none of them is
 * longer than option_max_line; else those before it, then fails on it.
 * buf[0] is at file offset base. */
static int pass_lines(struct range *r, const char *buf, size_t from, size_t upto,
                      uint64_t base, lines_fn fn, void *ctx)
{
    /* Each line that ends in buf[s..s + max] is short enough: jump past
     * the last '\n' there, which for short lines memrchr finds at once. */
    size_t max = (size_t)option_max_line, s = from;
    while (upto - s > max + 1) {
        const char *nl = memrchr(buf + s, '\n', max + 1);
        if (nl == NULL)
            break;
        s = (size_t)(nl - buf) + 1;
    }
    size_t end = upto - s > max + 1 ? s : upto;
    if (end > from && fn(ctx, buf + from, end - from) != 0)
        return ECANCELED;
    if (r->end == UINT64_MAX)
        r->newlines += count_newlines(buf + from, end - from);
    return end < upto ? too_long(r, base + end) : 0;
}

/* Reads the lines that start in [r->start, r->end): the first one begins at
 * r->start if that is where the input starts or the byte before it ends a
 * line, else after the next '\n'; the
 * last one is the line holding byte end - 1, read to its end. */
static int read_range(struct range *r, struct reader *rd, lines_fn fn, void *ctx,
                      struct progress *progress)
{
    struct input *in = r->input;
    uint64_t base = r->start; /* file offset of rd->buf[0] */
    size_t have = 0;
    /* rd->buf[0..clean) holds no '\n' (a long line being gathered): each
     * byte is searched once, so a line of any length costs linear time
     * however small the reads that bring it. */
    size_t clean = 0;
    int skipping = 0;
    if (r->start > in->start) {
        char before;
        ssize_t n = read_at(in, &before, 1, r->start - 1);
        if (n < 0)
            return errno;
        skipping = n == 1 && before != '\n';
    }
    for (;;) {
        if (have == rd->cap) {
            /* One line fills the whole buffer: make room for more of it, up
             * to the longest line allowed and its '\n' (the line is not
             * longer yet: see below). */
            size_t cap = rd->cap * 2 < option_max_line + 1 ? rd->cap * 2
                                                           : (size_t)option_max_line + 1;
            char *grown = realloc(rd->buf, cap);
            if (grown == NULL)
                return ENOMEM;
            rd->buf = grown;
            rd->cap = cap;
        }
        ssize_t n = read_at(in, rd->buf + have, rd->cap - have, base + have);
        if (n < 0)
            return errno;
        if (n == 0) {
            /* Short of the size the file had at open: it shrank. Files that
             * claim more than they hold (sysfs) still claim it. */
            struct stat st;
            if (in->seekable && base + have < in->size &&
                (fstat(in->fd, &st) != 0 || (uint64_t)st.st_size < in->size))
                return LINES_ESHRUNK;
            if (!skipping && have > 0 && fn(ctx, rd->buf, have) != 0)
                return ECANCELED;
            return 0;
        }
        atomic_fetch_add_explicit(&progress->done, (uint64_t)n, memory_order_relaxed);
        have += (size_t)n;
        size_t from = 0;
        if (skipping) {
            size_t nl = find_newline(rd->buf, 0, have);
            if (nl == have) {
                base += have;
                have = 0;
                clean = 0;
                continue;
            }
            from = nl + 1;
            skipping = 0;
        }
        if (r->end != UINT64_MAX && base + from >= r->end)
            return 0; /* the next line starts in the next range */
        if (r->end != UINT64_MAX && base + have >= r->end) {
            size_t at = (size_t)(r->end - 1 - base);
            size_t nl = find_newline(rd->buf, at > clean ? at : clean, have);
            if (nl < have)
                return pass_lines(r, rd->buf, from, nl + 1, base, fn, ctx);
        }
        size_t search = clean > from ? clean : from;
        const char *last_nl = memrchr(rd->buf + search, '\n', have - search);
        if (last_nl != NULL) {
            size_t upto = (size_t)(last_nl - rd->buf) + 1;
            int err = pass_lines(r, rd->buf, from, upto, base, fn, ctx);
            if (err != 0)
                return err;
            from = upto;
        }
        /* The line being gathered is already too long: no need to read on. */
        if (have - from > option_max_line)
            return too_long(r, base + from);
        if (from > 0)
            memmove(rd->buf, rd->buf + from, have - from);
        base += from;
        have -= from;
        clean = have;
    }
}

struct pool {
    struct range *ranges;
    size_t range_count;
    _Atomic size_t next;
    _Atomic int error;
    _Atomic size_t failed_range;
    _Atomic int finished;
    worker_init_fn init;
    void *shared;
    lines_fn fn;
    struct progress *progress;
    void **contexts;
};

struct worker_arg {
    struct pool *pool;
    int thread;
};

static void *worker_main(void *arg)
{
    struct worker_arg *wa = arg;
    struct pool *pool = wa->pool;
    void *ctx = pool->contexts[wa->thread];
    struct reader rd = {malloc(READ_SIZE), READ_SIZE};
    if (rd.buf == NULL) {
        int expected = 0;
        atomic_compare_exchange_strong(&pool->error, &expected, ENOMEM);
    }
    while (rd.buf != NULL && atomic_load(&pool->error) == 0) {
        size_t i = atomic_fetch_add(&pool->next, 1);
        if (i >= pool->range_count)
            break;
        int err = read_range(&pool->ranges[i], &rd, pool->fn, ctx, pool->progress);
        if (err != 0) {
            int expected = 0;
            if (atomic_compare_exchange_strong(&pool->error, &expected, err))
                atomic_store(&pool->failed_range, i);
        }
    }
    free(rd.buf);
    atomic_fetch_add(&pool->finished, 1);
    return NULL;
}

static size_t ranges_of(const struct input *in)
{
    if (in->skip)
        return 0;
    return in->seekable ? (in->size - in->start) / RANGE_SIZE + 1 : 1;
}

/* Cuts the inputs of one batch into pool->ranges. */
static void cut_ranges(struct pool *pool, struct input *inputs, int count)
{
    pool->range_count = 0;
    atomic_store(&pool->next, 0);
    for (int i = 0; i < count; i++) {
        if (inputs[i].skip)
            continue;
        if (!inputs[i].seekable) {
            pool->ranges[pool->range_count++] =
                (struct range){.input = &inputs[i], .start = 0, .end = UINT64_MAX};
            continue;
        }
        uint64_t size = inputs[i].size, first = inputs[i].start;
        for (uint64_t start = first; start < size || start == first; start += RANGE_SIZE) {
            uint64_t end = size - start > RANGE_SIZE ? start + RANGE_SIZE : size;
            pool->ranges[pool->range_count++] =
                (struct range){.input = &inputs[i], .start = start, .end = end};
            if (end == size)
                break;
        }
    }
}

/* Reads pool->ranges with `threads` workers; with a progress bar every
 * worker is a thread of its own and this one draws, without it this thread
 * is worker 0. */
static void run_pool(struct pool *pool, int threads, pthread_t *tids, struct worker_arg *args)
{
    atomic_store(&pool->finished, 0);
    int first = pool->progress->enabled ? 0 : 1;
    int started = first;
    for (int t = first; t < threads; t++) {
        args[t] = (struct worker_arg){pool, t};
        if (pthread_create(&tids[t], NULL, worker_main, &args[t]) != 0)
            break;
        started = t + 1;
    }
    if (started == 0) {
        first = 1; /* no thread could start: work here */
        started = 1;
    }
    if (first == 0) {
        struct timespec tick = {0, 200 * 1000 * 1000};
        while (atomic_load(&pool->finished) < started) {
            progress_draw(pool->progress);
            nanosleep(&tick, NULL);
        }
    } else {
        args[0] = (struct worker_arg){pool, 0};
        worker_main(&args[0]);
    }
    for (int t = first; t < started; t++)
        pthread_join(tids[t], NULL);
}

/* The inputs are read in batches of inputs_at_once(), each opened when its
 * batch begins and closed when it ends; within a batch, ranges of all its
 * inputs are read in parallel. */
int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, struct lines_run *run)
{
    struct pool pool = {0};
    size_t total_ranges = 0;
    for (int i = 0; i < count; i++)
        total_ranges += ranges_of(&inputs[i]);
    if (threads <= 0)
        threads = cpu_count();
    if ((size_t)threads > total_ranges)
        threads = total_ranges > 0 ? (int)total_ranges : 1;
    int batch = inputs_at_once();
    pool.init = init;
    pool.shared = shared;
    pool.fn = fn;
    pool.progress = progress;
    pool.contexts = calloc((size_t)threads, sizeof *pool.contexts);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    struct worker_arg *args = calloc((size_t)threads, sizeof *args);
    if (pool.contexts == NULL || tids == NULL || args == NULL)
        die("out of memory");
    run->failed_input = "input";
    for (int t = 0; t < threads; t++)
        pool.contexts[t] = init(shared, t);

    int err = 0;
    for (int from = 0; from < count && err == 0; from += batch) {
        int n = count - from < batch ? count - from : batch;
        size_t cap = 0;
        for (int i = from; i < from + n && err == 0; i++) {
            err = input_start(&inputs[i]);
            if (err != 0)
                run->failed_input = inputs[i].name;
            cap += ranges_of(&inputs[i]);
        }
        pool.ranges = err == 0 ? calloc(cap > 0 ? cap : 1, sizeof *pool.ranges) : NULL;
        if (err == 0 && pool.ranges == NULL)
            err = ENOMEM;
        if (err == 0) {
            cut_ranges(&pool, inputs + from, n);
            run_pool(&pool, threads, tids, args);
            err = atomic_load(&pool.error);
            const struct range *failed = &pool.ranges[atomic_load(&pool.failed_range)];
            if (err != 0)
                run->failed_input = failed->input->name;
            if (err == LINES_ETOOLONG)
                long_line_number = failed->long_line;
        }
        free(pool.ranges);
        for (int i = from; i < from + n; i++)
            input_end(&inputs[i]);
    }
    progress_finish(progress);
    run->contexts = pool.contexts;
    run->threads = threads;
    free(tids);
    free(args);
    return err;
}

static void *shared_context(void *shared, int thread)
{
    (void)thread;
    return shared;
}

int lines_read_stdin(lines_fn fn, void *ctx)
{
    char *stdin_name[] = {"-"};
    int count;
    struct input *in = inputs_open(stdin_name, 1, &count);
    struct progress progress;
    progress_init(&progress, 0, 0);
    progress.enabled = 0;
    struct lines_run run;
    int err = lines_read_parallel(in, count, 1, shared_context, ctx, fn, &progress, &run);
    free(run.contexts);
    inputs_close(in, count);
    return err;
}
