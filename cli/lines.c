/* lines.c: see lines.h. */
#define _GNU_SOURCE
#include "lines.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
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
        in->fd = strcmp(paths[i], "-") == 0 ? STDIN_FILENO
                                            : open(paths[i], O_RDONLY | O_CLOEXEC);
        if (in->fd < 0)
            die("%s: %s", paths[i], strerror(errno));
        struct stat st;
        if (fstat(in->fd, &st) != 0)
            die("%s: %s", paths[i], strerror(errno));
        if (S_ISDIR(st.st_mode))
            die("%s: is a directory", paths[i]);
        in->seekable = S_ISREG(st.st_mode);
        in->size = in->seekable ? (uint64_t)st.st_size : 0;
        if (in->seekable) {
            /* A redirected standard input may already have been partly read. */
            off_t at = lseek(in->fd, 0, SEEK_CUR);
            in->start = at > 0 && (uint64_t)at < in->size ? (uint64_t)at : 0;
            if (at > 0 && (uint64_t)at >= in->size)
                in->start = in->size;
            posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        } else {
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

void inputs_close(struct input *inputs, int count)
{
    for (int i = 0; i < count; i++)
        if (inputs[i].fd != STDIN_FILENO)
            close(inputs[i].fd);
    free(inputs);
}

int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

struct range {
    struct input *input;
    uint64_t start, end; /* end == UINT64_MAX: to the end of the stream */
};

struct reader {
    char *buf;
    size_t cap;
};

static ssize_t read_at(struct input *in, void *buf, size_t len, uint64_t offset)
{
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
            /* One line fills the whole buffer: make room for more of it. */
            char *grown = realloc(rd->buf, rd->cap * 2);
            if (grown == NULL)
                return ENOMEM;
            rd->buf = grown;
            rd->cap *= 2;
        }
        ssize_t n = read_at(in, rd->buf + have, rd->cap - have, base + have);
        if (n < 0)
            return errno;
        if (n == 0) {
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
                continue;
            }
            from = nl + 1;
            skipping = 0;
        }
        if (r->end != UINT64_MAX && base + from >= r->end)
            return 0; /* the next line starts in the next range */
        if (r->end != UINT64_MAX && base + have >= r->end) {
            size_t nl = find_newline(rd->buf, (size_t)(r->end - 1 - base), have);
            if (nl < have)
                return fn(ctx, rd->buf + from, nl + 1 - from) != 0 ? ECANCELED : 0;
        }
        const char *last_nl = memrchr(rd->buf + from, '\n', have - from);
        if (last_nl != NULL) {
            size_t upto = (size_t)(last_nl - rd->buf) + 1;
            if (fn(ctx, rd->buf + from, upto - from) != 0)
                return ECANCELED;
            from = upto;
        }
        memmove(rd->buf, rd->buf + from, have - from);
        base += from;
        have -= from;
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

int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, void ***contexts, int *used_threads,
                        const char **failed_input)
{
    struct pool pool = {0};
    size_t cap = 0;
    for (int i = 0; i < count; i++)
        cap += inputs[i].seekable ? (inputs[i].size - inputs[i].start) / RANGE_SIZE + 1 : 1;
    pool.ranges = calloc(cap, sizeof *pool.ranges);
    if (pool.ranges == NULL)
        return ENOMEM;
    for (int i = 0; i < count; i++) {
        if (inputs[i].skip)
            continue;
        if (!inputs[i].seekable) {
            pool.ranges[pool.range_count++] = (struct range){&inputs[i], 0, UINT64_MAX};
            continue;
        }
        uint64_t size = inputs[i].size, first = inputs[i].start;
        for (uint64_t start = first; start < size || start == first; start += RANGE_SIZE) {
            uint64_t end = size - start > RANGE_SIZE ? start + RANGE_SIZE : size;
            pool.ranges[pool.range_count++] = (struct range){&inputs[i], start, end};
            if (end == size)
                break;
        }
    }
    if (threads <= 0)
        threads = cpu_count();
    if ((size_t)threads > pool.range_count)
        threads = (int)pool.range_count;

    pool.init = init;
    pool.shared = shared;
    pool.fn = fn;
    pool.progress = progress;
    pool.contexts = calloc((size_t)threads, sizeof *pool.contexts);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    struct worker_arg *args = calloc((size_t)threads, sizeof *args);
    if (pool.contexts == NULL || tids == NULL || args == NULL) {
        free(pool.ranges);
        free(pool.contexts);
        free(tids);
        free(args);
        return ENOMEM;
    }
    for (int t = 0; t < threads; t++)
        pool.contexts[t] = init(shared, t);

    /* With a progress bar every worker is a thread of its own and this one
     * draws; without, this thread is worker 0. */
    int first = progress->enabled ? 0 : 1;
    int started = first;
    for (int t = first; t < threads; t++) {
        args[t] = (struct worker_arg){&pool, t};
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
        while (atomic_load(&pool.finished) < started) {
            progress_draw(progress);
            nanosleep(&tick, NULL);
        }
    } else {
        args[0] = (struct worker_arg){&pool, 0};
        worker_main(&args[0]);
    }
    for (int t = first; t < started; t++)
        pthread_join(tids[t], NULL);
    progress_finish(progress);

    int err = atomic_load(&pool.error);
    if (err != 0)
        *failed_input = pool.ranges[atomic_load(&pool.failed_range)].input->name;
    *contexts = pool.contexts;
    *used_threads = threads;
    free(pool.ranges);
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
    void **contexts = NULL;
    int used;
    const char *failed = NULL;
    int err = lines_read_parallel(in, count, 1, shared_context, ctx, fn, &progress,
                                  &contexts, &used, &failed);
    free(contexts);
    inputs_close(in, count);
    return err;
}
