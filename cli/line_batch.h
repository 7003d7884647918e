/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * line_batch.h: the one loop over the lines of a block (lines.h hands out
 * blocks of whole lines) that count, count --by and --time, bloom add,
 * bloom check and hll add share, and the batches it fills for the
 * library's batch calls.
 *
 * Each line goes to the caller's `take`, which pushes what the library is
 * to see (the line, or a field of it, line_batch_push) or skips the line, by
 * the caller's rule; at `size` items, and at the end of the block, the
 * caller's `flush` hands the batch to a batch call, which keeps many memory
 * accesses in flight. A line is passed as it is, '\r' and NUL included
 * (lines.h). Errors are values: the first nonzero one take or flush returns
 * stops the block, is kept in the batch and is returned.
 *
 * All of it is inline, and take and flush are passed as constants that the
 * compiler calls directly, so the cost per line is that of a loop written
 * for one caller.
 */
#ifndef SKETCH_CLI_LINE_BATCH_H
#define SKETCH_CLI_LINE_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Inlined even where it is large: a call per line through a pointer would
 * cost more than many lines' work. */
#define LINE_INLINE static inline __attribute__((always_inline))

/* The most items a batch holds: beyond a few hundred, a batch call gains
 * nothing more from memory accesses in flight. */
#define LINE_BATCH_MAX 256

struct line_batch {
    size_t count; /* items pushed since the last flush */
    size_t size;  /* flush at this many, 1..LINE_BATCH_MAX */
    int error;    /* the first error of take or flush, for the caller to report */
    const void *items[LINE_BATCH_MAX];
    size_t lens[LINE_BATCH_MAX];
};

/* Pushes the line at b->count (or skips it): 0, or an error to stop on.
 * Callers that keep more per item (the whole line, a group key) keep it in
 * arrays of their own at index b->count, before pushing. */
typedef int (*line_take_fn)(void *ctx, struct line_batch *b, const char *line, size_t len);
/* Hands b->items[0..b->count) to the library: 0, or an error to stop on.
 * A take that consumes each line itself and pushes nothing (count and hll
 * add: a sketch's registers are in the cache, where a batch saves no
 * misses) passes NULL. */
typedef int (*line_flush_fn)(void *ctx, struct line_batch *b);

LINE_INLINE void line_batch_push(struct line_batch *b, const void *item, size_t len)
{
    b->items[b->count] = item;
    b->lens[b->count++] = len;
}

/* Bit i set where p[i] is '\n', for i in 0..63. The loop walks the set bits
 * of one mask per 64 bytes instead of calling memchr once per line, which
 * for short lines costs more in call overhead and mispredicted exits than
 * the search itself. */
LINE_INLINE uint64_t newline_mask64(const char *p)
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

/* Gives one line to take, and flushes the batch when it is full. */
LINE_INLINE int line_batch_line(struct line_batch *b, const char *line, size_t len,
                                line_take_fn take, line_flush_fn flush, void *ctx)
{
    int err = take(ctx, b, line, len);
    if (flush != NULL && err == 0 && b->count == b->size) {
        err = flush(ctx, b);
        b->count = 0;
    }
    if (__builtin_expect(err != 0, 0))
        b->error = err;
    return err;
}

/* Flushes what is left: the items point into the caller's memory (a block
 * that is reused once its lines are done, or argv). */
LINE_INLINE int line_batch_end(struct line_batch *b, line_flush_fn flush, void *ctx)
{
    int err = flush != NULL && b->count > 0 ? flush(ctx, b) : 0;
    b->count = 0;
    if (err != 0)
        b->error = err;
    return err;
}

/* Every line of data[0..len), whole lines as lines_fn receives them (the
 * last may lack its '\n'), through take and flush; the batch is empty
 * again when this returns. */
LINE_INLINE int line_batch_block(struct line_batch *b, const char *data, size_t len,
                                 line_take_fn take, line_flush_fn flush, void *ctx)
{
    const char *line = data, *end = data + len, *window = data;
    int err;
    while (end - window >= 64) {
        for (uint64_t m = newline_mask64(window); m != 0; m &= m - 1) {
            const char *nl = window + __builtin_ctzll(m);
            err = line_batch_line(b, line, (size_t)(nl - line), take, flush, ctx);
            if (__builtin_expect(err != 0, 0))
                goto failed;
            line = nl + 1;
        }
        window += 64;
    }
    while (line < end) {
        /* window..end is under 64 bytes; the bytes before it hold no '\n'
         * after line. */
        const char *from = window > line ? window : line;
        const char *nl = memchr(from, '\n', (size_t)(end - from));
        const char *stop = nl != NULL ? nl : end;
        err = line_batch_line(b, line, (size_t)(stop - line), take, flush, ctx);
        if (err != 0)
            goto failed;
        line = stop + 1;
    }
    return line_batch_end(b, flush, ctx);
failed:
    b->count = 0;
    return err;
}

/* Every line of data[0..len) to take, for a take that consumes each line
 * itself and pushes nothing. */
LINE_INLINE int line_each(const char *data, size_t len, line_take_fn take, void *ctx)
{
    struct line_batch none;
    none.count = 0;
    none.size = 1;
    none.error = 0;
    return line_batch_block(&none, data, len, take, NULL, ctx);
}

#endif
