/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_lines.c: the command's input reader (cli/lines.c) on any bytes.
 *
 * The input is written to a file, read by lines_read_parallel with 1 to 4
 * threads in ranges of a few bytes (this build sets RANGE_SIZE and
 * READ_SIZE tiny, so that lines cross ranges and buffers everywhere), and
 * through a pipe, sequentially. Each way must deliver exactly the lines of
 * the reference split, once each (compared as a multiset: an order-free sum
 * of line hashes, the line count and the byte count), and the command's
 * line loop (cli/line_batch.h), in batches of 1 to 7 lines, must split
 * every block the same way.
 *
 * The first input byte is a control byte: the thread count, which of the
 * two ways run, whether compressed input is decompressed (as without
 * --raw), and a line length limit of a few bytes (--max-line-length) or
 * the default. Input that then starts like gzip, zstd or xz goes through
 * the decoders, which must end in its lines or a clean error, never a
 * crash; any other input must still give its exact lines (a stream's first
 * bytes, read to tell its codec, are given back), or, when a line is
 * longer than the limit, the error naming a line that is (the first one,
 * when one thread reads in order).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "fuzz_temp.h"
#include "decompress.h"
#include "line_batch.h"
#include "lines.h"

struct tally {
    uint64_t lines, bytes, sum;
    struct line_batch batch;
};

static void tally_line(struct tally *t, const char *line, size_t len)
{
    t->lines++;
    t->bytes += len;
    t->sum += XXH3_64bits(line, len) * 2 + 1;
}

static int take_line(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)ctx;
    line_batch_push(b, line, len);
    return 0;
}

static int tally_batch(void *ctx, struct line_batch *b)
{
    FUZZ_CHECK(b->count > 0 && b->count <= b->size);
    for (size_t i = 0; i < b->count; i++)
        tally_line(ctx, b->items[i], b->lens[i]);
    return 0;
}

/* A block holds whole lines: each ends in '\n' except perhaps the input's
 * very last one. */
static int on_block(void *ctx, const char *data, size_t len)
{
    struct tally *t = ctx;
    FUZZ_CHECK(len > 0);
    FUZZ_CHECK(line_batch_block(&t->batch, data, len, take_line, tally_batch, t) == 0);
    FUZZ_CHECK(t->batch.count == 0);
    return 0;
}

static struct tally tallies[4];

static void *tally_for(void *shared, int thread)
{
    (void)shared;
    FUZZ_CHECK(thread >= 0 && thread < 4);
    memset(&tallies[thread], 0, sizeof tallies[thread]);
    tallies[thread].batch.size = 1 + 2 * (size_t)thread;
    return &tallies[thread];
}

struct pipe_feed {
    int fd;
    const uint8_t *data;
    size_t len;
};

static void *feed(void *arg)
{
    struct pipe_feed *f = arg;
    size_t at = 0;
    while (at < f->len) {
        ssize_t n = write(f->fd, f->data + at, f->len - at);
        if (n <= 0)
            break;
        at += (size_t)n;
    }
    close(f->fd);
    return NULL;
}

/* Set while the input goes through a decoder: its lines are not compared. */
static int decoding;
/* The length of each line of the input, and the first longer than the
 * limit (from 1; 0: none). */
static size_t *line_lengths, line_count, first_long;

/* Checks the line that a LINES_ETOOLONG names. */
static void check_long_line(int in_order)
{
    unsigned long long number = 0;
    FUZZ_CHECK(sscanf(lines_strerror(LINES_ETOOLONG), "line %llu ", &number) == 1);
    FUZZ_CHECK(number >= 1 && number <= line_count);
    FUZZ_CHECK(line_lengths[number - 1] > option_max_line);
    FUZZ_CHECK(!in_order || number == first_long);
}

static struct tally read_all(char *name, int threads, int *error)
{
    int count;
    struct input *in = inputs_open(&name, 1, &count);
    struct progress progress;
    progress_init(&progress, 0, 0);
    progress.enabled = 0;
    struct lines_run run;
    int err = lines_read_parallel(in, count, threads, tally_for, NULL, on_block, &progress, &run);
    FUZZ_CHECK(err == 0 || (decoding && (err == EBADMSG || err == ENOMEM)) ||
               err == LINES_ETOOLONG);
    *error = err;
    struct tally total = {0};
    for (int t = 0; t < run.threads; t++) {
        struct tally *one = run.contexts[t];
        total.lines += one->lines;
        total.bytes += one->bytes;
        total.sum += one->sum;
    }
    free(run.contexts);
    inputs_close(in, count);
    return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *path = fuzz_temp_file("input");
    unsigned control = data[0];
    data++, size--;
    option_raw = !(control & 16);
    static const uint64_t limits[4] = {1, 3, 8, 20};
    option_max_line = control & 32 ? limits[control >> 6] : DEFAULT_MAX_LINE;
    decoding = !option_raw && codec_detect(data, size) != CODEC_NONE;
    signal(SIGPIPE, SIG_IGN); /* a decoder that stops early leaves the pipe unread */

    struct tally want = {0};
    free(line_lengths);
    line_lengths = malloc((size + 1) * sizeof *line_lengths);
    FUZZ_CHECK(line_lengths != NULL);
    line_count = first_long = 0;
    for (size_t at = 0; at < size;) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl != NULL ? (size_t)(nl - data) : size;
        tally_line(&want, (const char *)data + at, end - at);
        line_lengths[line_count++] = end - at;
        if (first_long == 0 && end - at > option_max_line)
            first_long = line_count;
        at = end + 1;
    }
    int err;

    if (!(control & 8)) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        FUZZ_CHECK(fd >= 0);
        FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
        close(fd);
        struct tally got = read_all(path, 1 + (int)(control & 3), &err);
        if (!decoding)
            FUZZ_CHECK((err == LINES_ETOOLONG) == (first_long != 0));
        if (err == LINES_ETOOLONG && !decoding)
            check_long_line((control & 3) == 0);
        FUZZ_CHECK(decoding || err != 0 ||
                   (got.lines == want.lines && got.bytes == want.bytes && got.sum == want.sum));
    }
    if (!(control & 4)) {
        int fds[2];
        FUZZ_CHECK(pipe(fds) == 0);
        struct pipe_feed f = {fds[1], data, size};
        pthread_t writer;
        FUZZ_CHECK(pthread_create(&writer, NULL, feed, &f) == 0);
        char name[32];
        snprintf(name, sizeof name, "/dev/fd/%d", fds[0]);
        struct tally got = read_all(name, 1 + (int)(control & 3), &err);
        close(fds[0]);
        pthread_join(writer, NULL);
        if (!decoding)
            FUZZ_CHECK((err == LINES_ETOOLONG) == (first_long != 0));
        if (err == LINES_ETOOLONG && !decoding)
            check_long_line(1);
        FUZZ_CHECK(decoding || err != 0 ||
                   (got.lines == want.lines && got.bytes == want.bytes && got.sum == want.sum));
    }
    return 0;
}
