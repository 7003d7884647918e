/* util.c: see util.h. */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void die(const char *fmt, ...)
{
    va_list ap;
    fputs("sketch: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(EXIT_FAILURE_USAGE);
}

void die_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sketch %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'sketch %s --help')\n", cmd);
    exit(EXIT_FAILURE_USAGE);
}

/* The name of an option argument, up to any "=value". */
static const char *option_word(const char *arg)
{
    static char word[64];
    size_t len = strcspn(arg, "=");
    if (len >= sizeof word)
        len = sizeof word - 1;
    memcpy(word, arg, len);
    word[len] = '\0';
    return word;
}

const char *rejected_option(char **argv, const char *optstring, int c)
{
    static char short_name[3] = "-?";
    if (c == '?' || c == ':') {
        /* An unknown short option, perhaps inside a bundle such as -vx. */
        if (optopt != 0 && strchr(optstring, optopt) == NULL) {
            short_name[1] = (char)optopt;
            return short_name;
        }
        /* getopt has moved past a long option it refused, or past a short
         * option missing its value. */
        if (strncmp(argv[optind - 1], "--", 2) == 0 || optopt == 0)
            return option_word(argv[optind - 1]);
        short_name[1] = (char)optopt;
        return short_name;
    }
    /* An option of another subcommand, with its value if it takes one. */
    if (strncmp(argv[optind - 1], "--", 2) == 0)
        return option_word(argv[optind - 1]);
    if (optind >= 3 && strncmp(argv[optind - 2], "--", 2) == 0 &&
        strchr(argv[optind - 2], '=') == NULL)
        return option_word(argv[optind - 2]);
    short_name[1] = (char)c;
    return short_name;
}

unsigned long long parse_uint(const char *text, const char *what,
                              unsigned long long min, unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || value < min ||
        value > max)
        die("%s must be a whole number from %llu to %llu, not '%s'", what, min, max, text);
    return value;
}

unsigned parse_precision(const char *text)
{
    return (unsigned)parse_uint(text, "precision", SK_HLL_MIN_PRECISION,
                                SK_HLL_MAX_PRECISION);
}

int read_whole_file(const char *path, size_t max, uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t cap = 4096, used = 0;
    uint8_t *buf = malloc(cap);
    int err = buf == NULL ? ENOMEM : 0;
    while (err == 0) {
        if (used == cap) {
            if (cap > max) {
                err = EFBIG;
                break;
            }
            uint8_t *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                err = ENOMEM;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
        } else if (n == 0) {
            break;
        } else {
            used += (size_t)n;
        }
    }
    close(fd);
    if (err == 0 && used > max)
        err = EFBIG;
    if (err != 0) {
        free(buf);
        return err;
    }
    *data = buf;
    *len = used;
    return 0;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    size_t path_len = strlen(path);
    char *tmp = malloc(path_len + sizeof ".tmp.XXXXXX");
    char *dir_copy = strdup(path);
    if (tmp == NULL || dir_copy == NULL) {
        free(tmp);
        free(dir_copy);
        return ENOMEM;
    }
    memcpy(tmp, path, path_len);
    memcpy(tmp + path_len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");

    /* Keep the mode of the file we replace; a new file gets 0666 less umask. */
    mode_t mode;
    struct stat st;
    if (stat(path, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }

    int err = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        err = errno;
        goto out;
    }
    err = write_all(fd, data, len);
    if (err == 0 && fchmod(fd, mode) != 0)
        err = errno;
    if (err == 0 && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err != 0) {
        unlink(tmp);
        goto out;
    }
    /* Make the rename itself durable. */
    int dir_fd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        fsync(dir_fd);
        close(dir_fd);
    }
out:
    free(tmp);
    free(dir_copy);
    return err;
}

int path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void progress_init(struct progress *p, uint64_t total, uint64_t min_total)
{
    atomic_store(&p->done, 0);
    p->total = total;
    p->enabled = isatty(STDERR_FILENO) && (total == 0 || total >= min_total);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_draw(struct progress *p)
{
    static double started;
    if (!p->enabled)
        return;
    if (started == 0)
        started = seconds_now();
    double elapsed = seconds_now() - started;
    double mib = (double)atomic_load(&p->done) / (1 << 20);
    double rate = elapsed > 0 ? mib / elapsed : 0;
    if (p->total > 0) {
        double fraction = (double)atomic_load(&p->done) / (double)p->total;
        if (fraction > 1)
            fraction = 1;
        int filled = (int)(fraction * 30);
        fprintf(stderr, "\r[%.*s%*s] %5.1f%%  %.0f MiB/s ", filled,
                "##############################", 30 - filled, "", fraction * 100, rate);
    } else {
        fprintf(stderr, "\r%.0f MiB read  %.0f MiB/s ", mib, rate);
    }
    fflush(stderr);
}

void progress_finish(struct progress *p)
{
    if (p->enabled)
        fputs("\r\033[K", stderr);
}

sk_hll *load_hll_or_die(const char *path, sk_hll_format *format)
{
    /* The largest valid sketch: a sparse p = 18 sketch at its conversion limit
     * is far below this; anything bigger is not a sketch. */
    const size_t max_size = 4u << 20;
    uint8_t *data;
    size_t len;
    int err = read_whole_file(path, max_size, &data, &len);
    if (err == EFBIG)
        die("%s: too large to be a HyperLogLog sketch", path);
    if (err != 0)
        die("%s: %s", path, strerror(err));
    sk_hll *h;
    int rc = sk_hll_deserialize(&h, data, len, format);
    free(data);
    if (rc != SK_OK)
        die("%s: not a valid HyperLogLog sketch: %s", path, sk_strerror(rc));
    return h;
}

void save_hll_or_die(const sk_hll *h, sk_hll_format format, const char *path)
{
    size_t cap = sk_hll_serialized_size(h, format);
    if (cap == 0)
        die("%s: a Redis HyperLogLog needs precision 14 or more; this sketch has %u",
            path, sk_hll_precision(h));
    uint8_t *buf = malloc(cap);
    if (buf == NULL)
        die("out of memory");
    size_t len;
    int rc = sk_hll_serialize(h, format, buf, cap, &len);
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
    int err = write_file_atomic(path, buf, len);
    free(buf);
    if (err != 0)
        die("%s: %s", path, strerror(err));
}

void print_estimate(const sk_hll *h, FILE *out)
{
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    static const char *const confidence[3] = {"68.27%", "95.45%", "99.73%"};
    fprintf(out, "estimate: %llu\n", (unsigned long long)e.count);
    fprintf(out, "precision: %u\n", sk_hll_precision(h));
    fprintf(out, "standard error: %.3f%%\n", e.relative_error * 100);
    for (int k = 0; k < 3; k++)
        fprintf(out, "%d sd (%s): %.0f .. %.0f\n", k + 1, confidence[k], e.lower[k],
                e.upper[k]);
}


int run_subcommand(const char *group, const char *usage, const struct subcommand *table,
                   size_t count, int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_FAILURE_USAGE : EXIT_OK;
    }
    for (size_t i = 0; i < count; i++)
        if (strcmp(argv[1], table[i].name) == 0)
            return table[i].run(argc - 1, argv + 1);
    die_usage(group, "unknown command '%s'", argv[1]);
}
