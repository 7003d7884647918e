/* SPDX-License-Identifier: BSD-3-Clause */
/* util.c: what util.h says every subcommand shares: messages and exit
 * codes, option parsing, number parsing, sketch files, the progress bar. */
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
uint64_t option_max_line = DEFAULT_MAX_LINE;

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
    /* The long options every subcommand's table ends with; a subcommand
     * takes those whose letter is in its optstring (--version: all). */
    static const struct option common[] = {
        {"no-wait", no_argument, NULL, 'W'},
        {"raw", no_argument, NULL, 'R'},
        {"max-line-length", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPTION_VERSION},
        {NULL, 0, NULL, 0}};
    size_t own = 0;
    while (spec->longopts[own].name != NULL)
        own++;
    struct option *longopts = malloc((own + sizeof common / sizeof common[0]) * sizeof *longopts);
    if (longopts == NULL)
        die("out of memory");
    memcpy(longopts, spec->longopts, own * sizeof *longopts);
    memcpy(longopts + own, common, sizeof common);
    current_command = spec->cmd;
    opterr = 0;
    optind = 1;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, spec->optstring, longopts, &longindex)) != -1) {
        const char *long_name = longindex >= 0 ? longopts[longindex].name : NULL;
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
        if (c == 'L') { /* --max-line-length: see util.h */
            unsigned long long most = SIZE_MAX / 4 < MAX_LINE_LIMIT ? SIZE_MAX / 4 : MAX_LINE_LIMIT;
            option_max_line = parse_bytes(optarg, "--max-line-length", 1, most);
            continue;
        }
        handle(ctx, c, optarg, long_name);
    }
    free(longopts);
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

unsigned long long parse_bytes(const char *text, const char *what,
                               unsigned long long min, unsigned long long max)
{
    size_t len = strlen(text);
    unsigned shift = 0;
    if (len > 0 && strchr("kKmMgG", text[len - 1]) != NULL) {
        char unit = text[len - 1];
        shift = unit == 'k' || unit == 'K' ? 10 : unit == 'm' || unit == 'M' ? 20 : 30;
        len--;
    }
    unsigned long long value = 0;
    int ok = len > 0 && len <= 19 && strspn(text, "0123456789") >= len;
    for (size_t i = 0; ok && i < len; i++)
        value = value * 10 + (unsigned long long)(text[i] - '0');
    if (!ok || value > (max >> shift) || (value << shift) < min)
        die("%s must be a number of bytes from %llu to %llu, or with K, M or G (KiB, MiB, "
            "GiB), not '%s'", what, min, max, text);
    return value << shift;
}

unsigned parse_precision(const char *text)
{
    return (unsigned)parse_uint(text, "precision", SK_HLL_MIN_PRECISION,
                                SK_HLL_MAX_PRECISION);
}

void require_files(const char *cmd, int first, int argc, int one)
{
    if (first >= argc)
        die_usage(cmd, "missing FILE");
    if (one && first + 1 < argc)
        die_usage(cmd, "one FILE at a time");
}

void require_readable(char **paths, int count)
{
    for (int i = 0; i < count; i++)
        if (access(paths[i], R_OK) != 0)
            die("%s: %s", paths[i], strerror(errno));
}

void require_regular_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        die("%s: %s", path, S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
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

/* The hint for a file that starts with head[0..n) and ends with last. */
static const char *hint_for(const unsigned char *head, size_t n, unsigned char last)
{
    if (n == 0)
        return "";
    enum codec codec = codec_detect(head, n);
    if (codec == CODEC_GZIP)
        return " (it is gzip-compressed: decompress it first)";
    if (codec == CODEC_ZSTD)
        return " (it is zstd-compressed: decompress it first)";
    if (codec == CODEC_XZ)
        return " (it is xz-compressed: decompress it first)";
    if (n >= 4 && memcmp(head, "SKHG", 4) == 0)
        return " (it is a group file, of sketch count --by -o: hll count, merge, export and "
               "info read it)";
    if (n >= 4 && memcmp(head, "SKWH", 4) == 0)
        return " (it is a window sketch, of sketch hll add --time: hll add, count, merge and "
               "info read it)";
    if (n >= 4 && memcmp(head, "HYLL", 4) == 0 && last == '\n')
        return " (it ends with a newline, as `redis-cli --raw GET` writes a string: remove "
               "it with head -c -1)";
    return "";
}

/* Streams read by stream_contents, which a second look (a hint, a second
 * load of the same name) finds here. */
struct stream_file {
    char *path;
    uint8_t *data;
    size_t len;
    struct stream_file *next;
};
static struct stream_file *streams;

static const struct stream_file *stream_read_before(const char *path)
{
    for (const struct stream_file *s = streams; s != NULL; s = s->next)
        if (strcmp(s->path, path) == 0)
            return s;
    return NULL;
}

const char *file_hint(const char *path)
{
    const struct stream_file *s = stream_read_before(path);
    if (s != NULL) {
        size_t n = s->len < CODEC_MAGIC_MAX ? s->len : CODEC_MAGIC_MAX;
        return hint_for(s->data, n, s->len > 0 ? s->data[s->len - 1] : 0);
    }
    unsigned char head[CODEC_MAGIC_MAX], last = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return "";
    ssize_t n = read(fd, head, sizeof head);
    off_t end = lseek(fd, 0, SEEK_END);
    if (end > 0 && pread(fd, &last, 1, end - 1) != 1)
        last = 0;
    close(fd);
    return n > 0 ? hint_for(head, (size_t)n, last) : "";
}

/* A group file or a window sketch from a stream is held whole: more than
 * this is refused rather than read until memory runs out (an endless
 * stream that starts like one). */
#define STREAM_GROUPS_MAX ((size_t)1 << 30)

const uint8_t *stream_contents(const char *path, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return NULL;
    const struct stream_file *known = stream_read_before(path);
    if (known != NULL) {
        *len = known->len;
        return known->data;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, used = 0, max = STREAM_GROUPS_MAX;
    uint8_t *data = malloc(cap);
    for (;;) {
        if (data == NULL)
            die("%s: out of memory", path);
        /* Until its first bytes tell, it may be a group file or a window
         * sketch, which may be larger than any HyperLogLog. */
        if (used >= 4)
            max = memcmp(data, "SKHG", 4) == 0 || memcmp(data, "SKWH", 4) == 0
                      ? STREAM_GROUPS_MAX
                      : SK_HLL_MAX_SERIALIZED_SIZE;
        if (used > max && max == STREAM_GROUPS_MAX)
            die("%s: a group file or window sketch from a pipe or device is read into "
                "memory, at most 1 GiB; save it to a file first", path);
        if (used > max)
            die("%s: too large to be a HyperLogLog sketch", path);
        if (used == cap) {
            cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
            uint8_t *grown = realloc(data, cap);
            if (grown == NULL)
                free(data);
            data = grown;
            continue;
        }
        ssize_t n = read(fd, data + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("%s: %s", path, strerror(errno));
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    struct stream_file *s = malloc(sizeof *s);
    char *name = strdup(path);
    if (s == NULL || name == NULL)
        die("out of memory");
    *s = (struct stream_file){name, data, used, streams};
    streams = s;
    *len = used;
    return data;
}

sk_hll *load_hll_or_die(const char *path, sk_hll_format *format)
{
    sk_hll *h;
    size_t len;
    const uint8_t *stream = stream_contents(path, &len);
    int rc = stream != NULL ? sk_hll_deserialize(&h, stream, len, format, NULL)
                            : sk_hll_open(&h, path, format, NULL);
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
    uint64_t size;
    int rc = sk_hll_serialized_size(h, format, &size);
    if (rc != SK_OK)
        return rc;
    uint8_t *buf = malloc(size);
    if (buf == NULL)
        return SK_ENOMEM;
    size_t len;
    rc = sk_hll_serialize(h, format, buf, size, &len);
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

int file_starts_with(const char *path, const char *magic)
{
    size_t len;
    const uint8_t *stream = stream_contents(path, &len);
    if (stream != NULL)
        return len >= 4 && memcmp(stream, magic, 4) == 0;
    char head[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && memcmp(head, magic, 4) == 0;
}
