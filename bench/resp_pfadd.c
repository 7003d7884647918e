/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resp_pfadd.c: turns the lines of standard input into Redis PFADD commands
 * in RESP, the wire protocol, for `redis-cli --pipe`:
 *
 *     resp_pfadd [-b BATCH] KEY < lines | redis-cli --pipe
 *
 * Each command adds up to BATCH lines (default 1000) to the HyperLogLog at
 * KEY. A line is every byte up to '\n' (not included), passed through as a
 * binary-safe bulk string, exactly as `sketch count` reads lines; a last line
 * without '\n' counts. Prints "lines=N commands=C" on standard error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_SIZE (4u << 20)
#define OUT_FLUSH (4u << 20)

struct buf {
    char *data;
    size_t len, cap;
};

static void die(const char *what)
{
    fprintf(stderr, "resp_pfadd: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void reserve(struct buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        errno = ENOMEM;
        die("allocation");
    }
    b->data = p;
    b->cap = cap;
}

static void write_all(const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("standard output");
        }
        data += n;
        len -= (size_t)n;
    }
}

/* Appends "<prefix><decimal n>\r\n". */
static void put_count(struct buf *b, char prefix, size_t n)
{
    char digits[24];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    reserve(b, (size_t)k + 3);
    b->data[b->len++] = prefix;
    while (k > 0)
        b->data[b->len++] = digits[--k];
    b->data[b->len++] = '\r';
    b->data[b->len++] = '\n';
}

static void put_bulk(struct buf *b, const char *data, size_t len)
{
    put_count(b, '$', len);
    reserve(b, len + 2);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len++] = '\r';
    b->data[b->len++] = '\n';
}

struct state {
    const char *key;
    size_t batch;
    struct buf elements; /* the bulk strings of the pending command */
    size_t pending;
    struct buf out;
    unsigned long long lines, commands;
};

static void flush_command(struct state *s)
{
    if (s->pending == 0)
        return;
    put_count(&s->out, '*', s->pending + 2);
    put_bulk(&s->out, "PFADD", 5);
    put_bulk(&s->out, s->key, strlen(s->key));
    reserve(&s->out, s->elements.len);
    memcpy(s->out.data + s->out.len, s->elements.data, s->elements.len);
    s->out.len += s->elements.len;
    s->elements.len = 0;
    s->pending = 0;
    s->commands++;
    if (s->out.len >= OUT_FLUSH) {
        write_all(s->out.data, s->out.len);
        s->out.len = 0;
    }
}

static void add_line(struct state *s, const char *line, size_t len)
{
    put_bulk(&s->elements, line, len);
    s->lines++;
    if (++s->pending == s->batch)
        flush_command(s);
}

int main(int argc, char **argv)
{
    struct state s = {0};
    s.batch = 1000;
    int c;
    while ((c = getopt(argc, argv, "b:h")) != -1) {
        if (c == 'b') {
            long v = strtol(optarg, NULL, 10);
            if (v < 1 || v > 1000000) {
                fprintf(stderr, "resp_pfadd: BATCH must be 1..1000000\n");
                return 2;
            }
            s.batch = (size_t)v;
        } else {
            fprintf(stderr, "Usage: resp_pfadd [-b BATCH] KEY < lines | redis-cli --pipe\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "Usage: resp_pfadd [-b BATCH] KEY < lines | redis-cli --pipe\n");
        return 2;
    }
    s.key = argv[optind];

    struct buf in = {malloc(IN_SIZE), 0, IN_SIZE};
    if (in.data == NULL) {
        errno = ENOMEM;
        die("allocation");
    }
    for (;;) {
        if (in.len == in.cap)
            reserve(&in, in.cap); /* one line longer than the buffer */
        ssize_t n = read(STDIN_FILENO, in.data + in.len, in.cap - in.len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("standard input");
        }
        if (n == 0)
            break;
        size_t scanned = in.len; /* bytes before this are a partial line */
        in.len += (size_t)n;
        const char *line = in.data, *end = in.data + in.len;
        const char *from = in.data + scanned;
        for (;;) {
            const char *nl = memchr(from, '\n', (size_t)(end - from));
            if (nl == NULL)
                break;
            add_line(&s, line, (size_t)(nl - line));
            line = from = nl + 1;
        }
        in.len = (size_t)(end - line);
        memmove(in.data, line, in.len);
    }
    if (in.len > 0)
        add_line(&s, in.data, in.len);
    flush_command(&s);
    write_all(s.out.data, s.out.len);
    fprintf(stderr, "resp_pfadd: lines=%llu commands=%llu\n", s.lines, s.commands);
    free(in.data);
    free(s.elements.data);
    free(s.out.data);
    return 0;
}
