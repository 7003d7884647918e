/* util.c: see util.h. */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decompress.h"

int option_no_wait;
int option_raw;

/* The subcommand running ("bloom add"), for the prefix of its messages. */
static const char *current_command;

static void vmessage(const char *fmt, va_list ap)
{
    if (current_command != NULL)
        fprintf(stderr, "sketch %s: ", current_command);
    else
        fputs("sketch: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    exit(EXIT_FAILURE_USAGE);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
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

static const char *rejected_option(char **argv, const char *optstring, int c)
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

int parse_options(const struct cli_spec *spec, int argc, char **argv,
                  void (*handle)(void *ctx, int option, const char *value,
                                 const char *long_name),
                  void *ctx)
{
    current_command = spec->cmd;
    opterr = 0;
    optind = 1;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, spec->optstring, spec->longopts, &longindex)) != -1) {
        const char *long_name = longindex >= 0 ? spec->longopts[longindex].name : NULL;
        longindex = -1;
        if (c == 'h') {
            fputs(spec->usage, stdout);
            exit(EXIT_OK);
        }
        if (c == OPTION_VERSION) {
            printf("sketch %s\n", sk_version());
            exit(EXIT_OK);
        }
        if (c == ':')
            die_usage(spec->cmd, "option '%s' needs a value",
                      rejected_option(argv, spec->optstring, c));
        /* The long options may name letters of other subcommands. */
        if (c == '?' || strchr(spec->optstring, c) == NULL)
            die_usage(spec->cmd, "unknown option '%s'",
                      rejected_option(argv, spec->optstring, c));
        if (c == 'W' || c == 'R') { /* --no-wait, --raw: see util.h */
            *(c == 'W' ? &option_no_wait : &option_raw) = 1;
            continue;
        }
        handle(ctx, c, optarg, long_name);
    }
    return optind;
}

unsigned long long parse_uint(const char *text, const char *what,
                              unsigned long long min, unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    /* "1e9": digits, then a power of ten, as people write large counts. */
    if (text[0] >= '0' && text[0] <= '9' && errno == 0 && (*end == 'e' || *end == 'E') &&
        end[1] >= '0' && end[1] <= '9') {
        char *exp_end;
        unsigned long long exponent = strtoull(end + 1, &exp_end, 10);
        end = exp_end;
        for (unsigned long long i = 0; i < exponent && errno == 0 && value != 0; i++)
            if (value > ULLONG_MAX / 10)
                errno = ERANGE;
            else
                value *= 10;
    }
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

void require_readable(char **paths, int count)
{
    for (int i = 0; i < count; i++)
        if (access(paths[i], R_OK) != 0)
            die("%s: %s", paths[i], strerror(errno));
}

/* The size a file claims, or 0. */
static uint64_t path_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
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

const char *file_hint(const char *path)
{
    unsigned char head[CODEC_MAGIC_MAX], last = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return "";
    ssize_t n = read(fd, head, sizeof head);
    off_t end = lseek(fd, 0, SEEK_END);
    if (end > 0 && pread(fd, &last, 1, end - 1) != 1)
        last = 0;
    close(fd);
    if (n <= 0)
        return "";
    enum codec codec = codec_detect(head, (size_t)n);
    if (codec == CODEC_GZIP)
        return " (it is gzip-compressed: decompress it first)";
    if (codec == CODEC_ZSTD)
        return " (it is zstd-compressed: decompress it first)";
    if (codec == CODEC_XZ)
        return " (it is xz-compressed: decompress it first)";
    if (n >= 4 && memcmp(head, "SKHG", 4) == 0)
        return " (it is a group file, of sketch count --by -o: hll count, merge, export and "
               "info read it)";
    if (n >= 4 && memcmp(head, "HYLL", 4) == 0 && last == '\n')
        return " (it ends with a newline, as `redis-cli --raw GET` writes a string: remove "
               "it with head -c -1)";
    return "";
}

sk_hll *load_hll_or_die(const char *path, sk_hll_format *format)
{
    sk_hll *h;
    int rc = sk_hll_load(&h, path, format, NULL);
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc == SK_ETRUNCATED && path_size(path) > SK_HLL_MAX_SERIALIZED_SIZE)
        die("%s: too large to be a HyperLogLog sketch", path);
    if (rc != SK_OK)
        die("%s: not a valid HyperLogLog sketch: %s%s", path, sk_strerror(rc), file_hint(path));
    return h;
}

/* "-": the bytes to standard output, as curl -o - and tar -f - do. */
static int save_hll_to_stdout(const sk_hll *h, sk_hll_format format)
{
    size_t size = sk_hll_serialized_size(h, format);
    if (size == 0)
        return SK_EINCOMPAT;
    uint8_t *buf = malloc(size);
    if (buf == NULL)
        return SK_ENOMEM;
    size_t len;
    int rc = sk_hll_serialize(h, format, buf, size, &len);
    if (rc == SK_OK)
        write_stdout_or_die(buf, len);
    free(buf);
    return rc;
}

int write_stdout_or_die(const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("standard output: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void save_hll_or_die(const sk_hll *h, sk_hll_format format, const char *path)
{
    if (strcmp(path, "-") == 0)
        path = "standard output";
    int rc = strcmp(path, "standard output") == 0 ? save_hll_to_stdout(h, format)
                                                  : sk_hll_save(h, format, path);
    if (rc == SK_EINCOMPAT)
        die("%s: a Redis HyperLogLog needs precision 14 or more; this sketch has %u",
            path, sk_hll_precision(h));
    if (rc == SK_EIO)
        die("%s: %s", path, strerror(errno));
    if (rc != SK_OK)
        die("%s: %s", path, sk_strerror(rc));
}

int run_subcommand(const char *group, const char *usage, const struct subcommand *table,
                   size_t count, int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_FAILURE_USAGE : EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sketch %s\n", sk_version());
        return EXIT_OK;
    }
    for (size_t i = 0; i < count; i++)
        if (strcmp(argv[1], table[i].name) == 0)
            return table[i].run(argc - 1, argv + 1);
    die_usage(group, "unknown command '%s'", argv[1]);
}
