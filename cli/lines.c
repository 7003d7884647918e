/* lines.c: see lines.h. */
#define _GNU_SOURCE
#include "lines.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* Standard input, or a path checked now and opened when its turn comes. */
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
        in->fd = -1;
        struct stat st;
        if (strcmp(paths[i], "-") == 0) {
            in->fd = STDIN_FILENO;
            if (fstat(in->fd, &st) != 0)
                die("-: %s", strerror(errno));
        } else if (stat(paths[i], &st) != 0 || access(paths[i], R_OK) != 0) {
            die("%s: %s", paths[i], strerror(errno));
        }
        if (S_ISDIR(st.st_mode))
            die("%s: is a directory", paths[i]);
        /* procfs and similar files say 0 bytes and hold more: they are
         * read as streams, to their end. */
        in->seekable = S_ISREG(st.st_mode) && st.st_size > 0;
        in->size = in->seekable ? (uint64_t)st.st_size : 0;
        if (in->seekable && in->fd == STDIN_FILENO) {
            /* A redirected standard input may already have been partly read. */
            off_t at = lseek(in->fd, 0, SEEK_CUR);
            in->start = at > 0 && (uint64_t)at < in->size ? (uint64_t)at : 0;
            if (at > 0 && (uint64_t)at >= in->size)
                in->start = in->size;
        } else if (!in->seekable) {
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

/* What was wrong with the compressed input that failed, for EBADMSG. */
static const char *_Atomic decode_error;

const char *lines_strerror(int err)
{
    const char *what = atomic_load(&decode_error);
    return err == EBADMSG && what != NULL ? what : strerror(err);
}

/* Reads the first bytes of a stream (a short read is not its end). */
static ssize_t read_head(int fd, unsigned char *head, size_t len)
{
    size_t have = 0;
    while (have < len) {
        ssize_t n = read(fd, head + have, len - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        have += (size_t)n;
    }
    return (ssize_t)have;
}

/* Tells a compressed input by its first bytes and sets up its decoder. */
static int detect_codec(struct input *in)
{
    ssize_t n = in->seekable ? pread(in->fd, in->head, sizeof in->head, (off_t)in->start)
                             : read_head(in->fd, in->head, sizeof in->head);
    if (n < 0)
        return errno;
    enum codec codec = codec_detect(in->head, (size_t)n);
    if (codec == CODEC_NONE) {
        /* A stream gives its first bytes back from head. */
        in->head_len = in->seekable ? 0 : (size_t)n;
        return 0;
    }
    /* The decoder reads on from where the input starts, in order; its
     * thread must not start before the file stands there. */
    if (in->seekable && lseek(in->fd, (off_t)in->start, SEEK_SET) < 0)
        return errno;
    in->decoder = in->seekable ? decoder_new(codec, in->fd, NULL, 0)
                               : decoder_new(codec, in->fd, in->head, (size_t)n);
    if (in->decoder == NULL || decoder_start_thread(in->decoder) != 0)
        return ENOMEM;
    in->seekable = 0;
    return 0;
}

/* Opens a path for its turn; its size is what it is now. errno on failure. */
static int input_start(struct input *in)
{
    if (in->started || in->skip)
        return 0;
    in->started = 1;
    if (in->fd < 0) {
        in->fd = open(in->name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (in->fd < 0 || fstat(in->fd, &st) != 0)
            return errno;
        in->seekable = S_ISREG(st.st_mode) && st.st_size > 0;
        in->size = in->seekable ? (uint64_t)st.st_size : 0;
        if (in->seekable)
            posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return option_raw ? 0 : detect_codec(in);
}

static void input_end(struct input *in)
{
    if (in->fd >= 0 && in->fd != STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
    decoder_free(in->decoder);
    in->decoder = NULL;
}

int inputs_interactive(const struct input *inputs, int count)
{
    for (int i = 0; i < count; i++)
        if (inputs[i].fd == STDIN_FILENO && isatty(STDIN_FILENO))
            return 1;
    return 0;
}

void inputs_close(struct input *inputs, int count)
{
    for (int i = 0; i < count; i++)
        input_end(&inputs[i]);
    free(inputs);
}

/* How many inputs are open at once: half the descriptors this process may
 * have beyond a reserve for everything else, so that any number of FILEs
 * can be read under any `ulimit -n`. */
static int open_at_once(void)
{
    struct rlimit rl;
    long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                     ? (long)rl.rlim_cur
                     : 1024;
    long n = (limit - 16) / 2;
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
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
                return fn(ctx, rd->buf + from, nl + 1 - from) != 0 ? ECANCELED : 0;
        }
        size_t search = clean > from ? clean : from;
        const char *last_nl = memrchr(rd->buf + search, '\n', have - search);
        if (last_nl != NULL) {
            size_t upto = (size_t)(last_nl - rd->buf) + 1;
            if (fn(ctx, rd->buf + from, upto - from) != 0)
                return ECANCELED;
            from = upto;
        }
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
            pool->ranges[pool->range_count++] = (struct range){&inputs[i], 0, UINT64_MAX};
            continue;
        }
        uint64_t size = inputs[i].size, first = inputs[i].start;
        for (uint64_t start = first; start < size || start == first; start += RANGE_SIZE) {
            uint64_t end = size - start > RANGE_SIZE ? start + RANGE_SIZE : size;
            pool->ranges[pool->range_count++] = (struct range){&inputs[i], start, end};
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

/* The inputs are read in batches of open_at_once(), each opened when its
 * batch begins and closed when it ends; within a batch, ranges of all its
 * inputs are read in parallel. */
int lines_read_parallel(struct input *inputs, int count, int threads,
                        worker_init_fn init, void *shared, lines_fn fn,
                        struct progress *progress, void ***contexts, int *used_threads,
                        const char **failed_input)
{
    struct pool pool = {0};
    size_t total_ranges = 0;
    for (int i = 0; i < count; i++)
        total_ranges += ranges_of(&inputs[i]);
    if (threads <= 0)
        threads = cpu_count();
    if ((size_t)threads > total_ranges)
        threads = total_ranges > 0 ? (int)total_ranges : 1;
    int batch = open_at_once();
    pool.init = init;
    pool.shared = shared;
    pool.fn = fn;
    pool.progress = progress;
    pool.contexts = calloc((size_t)threads, sizeof *pool.contexts);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    struct worker_arg *args = calloc((size_t)threads, sizeof *args);
    if (pool.contexts == NULL || tids == NULL || args == NULL) {
        free(pool.contexts);
        free(tids);
        free(args);
        return ENOMEM;
    }
    for (int t = 0; t < threads; t++)
        pool.contexts[t] = init(shared, t);

    int err = 0;
    for (int from = 0; from < count && err == 0; from += batch) {
        int n = count - from < batch ? count - from : batch;
        size_t cap = 0;
        for (int i = from; i < from + n && err == 0; i++) {
            err = input_start(&inputs[i]);
            if (err != 0)
                *failed_input = inputs[i].name;
            cap += ranges_of(&inputs[i]);
        }
        pool.ranges = err == 0 ? calloc(cap > 0 ? cap : 1, sizeof *pool.ranges) : NULL;
        if (err == 0 && pool.ranges == NULL)
            err = ENOMEM;
        if (err == 0) {
            cut_ranges(&pool, inputs + from, n);
            run_pool(&pool, threads, tids, args);
            err = atomic_load(&pool.error);
            if (err != 0)
                *failed_input = pool.ranges[atomic_load(&pool.failed_range)].input->name;
        }
        free(pool.ranges);
        for (int i = from; i < from + n; i++)
            input_end(&inputs[i]);
    }
    progress_finish(progress);
    *contexts = pool.contexts;
    *used_threads = threads;
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
