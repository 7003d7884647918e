/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_hll.c: `sketch hll`, HyperLogLog sketch files: add items, count the
 * union of several, merge, describe, export for Redis, and compare
 * (hll_compare.c).
 *
 * Every command reads both sketch's own format and Redis's HyperLogLog
 * strings (told apart by their first bytes), and `add` writes a file back in
 * the format it was read in, so a string taken from Redis with GET can be
 * updated here and SET back. Window sketch files (sliding-window
 * HyperLogLogs, hll_window.c) are told apart by their first bytes too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "count_window.h"
#include "file_lock.h"
#include "hll_compare.h"
#include "fields.h"
#include "hll_groups.h"
#include "hll_window.h"
#include "line_batch.h"
#include "lines.h"
#include "report.h"
#include "timestamps.h"
#include "util.h"

static const char hll_usage[] =
    "Usage: sketch hll COMMAND [OPTION]... ARGS\n"
    "HyperLogLog sketch files (sketch's format or Redis HyperLogLog strings), group\n"
    "files (a sketch per group, from sketch count --by -o), and window sketches\n"
    "(items with times, counted over sliding windows, from hll add --time or --at).\n"
    "\n"
    "  add [-p P] [--redis] FILE [ITEM]...  add ITEMs (or lines of standard input);\n"
    "                                       creates FILE if missing\n"
    "  count [-v] [--group G] FILE...       estimated distinct items of the union;\n"
    "                                       of group files, a count per group; of\n"
    "                                       window sketches, [--window W] [--at T]\n"
    "  merge [--redis] -o OUT FILE...       write the union of the FILEs to OUT\n"
    "  info FILE                            precision, encoding, size, estimate, bounds\n"
    "  export [-o OUT] FILE                 write FILE as a Redis HyperLogLog string;\n"
    "                                       a group file as Redis SET commands\n"
    "  fold -p P [-o OUT] FILE              lower FILE's precision to P\n"
    "  compare [--json] A B                 how the sets of A and B overlap: union,\n"
    "                                       intersection, each alone, Jaccard index\n"
    "  retention [--json] BASE LATER...     how many of BASE's items each LATER has\n"
    "\n"
    "Run 'sketch hll COMMAND --help' for the options of each. Exit status: 0 on\n"
    "success, 2 on bad usage or bad input.\n";

static const char add_usage[] =
    "Usage: sketch hll add [OPTION]... FILE [ITEM]...\n"
    "       sketch hll add --time N [OPTION]... FILE [INPUT]...\n"
    "Add the ITEMs, or else every line of standard input, to the sketch in FILE,\n"
    "creating it if it does not exist. The file keeps its format.\n"
    "Options come before FILE; every argument after FILE is an item.\n"
    "\n"
    "  -p, --precision P   precision of a new sketch, 4..18 (default 14); for an\n"
    "                      existing FILE it must match\n"
    "  -r, --redis         create FILE as a Redis HyperLogLog string (precision 14)\n"
    "      --raw           read gzip, zstd or xz input as it is, not decompressed\n"
    "      --max-line-length BYTES\n"
    "                      a longer line is an error (default 256M; K, M and G\n"
    "                      are KiB, MiB and GiB)\n"
    "      --no-wait       fail (exit 2) instead of waiting while another command\n"
    "                      writes the file\n"
    "  -h, --help          show this help\n"
    "FILE must be a regular file (or not exist yet): it is read and written back.\n"
    "Several commands may add to one FILE at once: each waits for the one before.\n"
    "\n"
    "A window sketch (for counts over sliding windows, by sketch hll count) holds\n"
    "items with their times, epoch seconds; made and added to with --time or --at:\n"
    "      --time N        each line of the INPUTs (FILEs after FILE; none: standard\n"
    "                      input) has its time in field N, as in sketch count --time\n"
    "  -f, --field N       with --time: the item is field N (default: the line)\n"
    "  -d, --delimiter C   field delimiter, one byte (default: tab)\n"
    "  -w, --whitespace    fields are separated by runs of blanks\n"
    "      --at TIME       every ITEM (or line of standard input) has this time:\n"
    "                      epoch seconds or ISO 8601 (2023-11-14T22:13:20Z)\n"
    "      --horizon D     the longest window of a new window sketch: a number and\n"
    "                      s, m, h or d (default 1d); for an existing one it must match\n"
    "An item older than the horizon before the newest time is dropped, and how\n"
    "many were is reported on standard error.\n"
    "Examples:\n"
    "  sketch hll add visitors.skh alice bob carol\n"
    "  cut -f1 access.log | sketch hll add visitors.skh\n"
    "  sketch hll add --time 1 -f 2 --horizon 7d clients.whll new.log  # from cron\n";

static const char count_usage[] =
    "Usage: sketch hll count [OPTION]... FILE...\n"
    "Print the estimated number of distinct items in the union of the sketches.\n"
    "Sketches of different precision are combined at the smallest. Of group files\n"
    "(sketch count --by -o), print the union of each group over the FILEs, one\n"
    "line per group (group, tab, count), sorted by group.\n"
    "\n"
    "  -v, --verbose   also print the error bounds on standard error\n"
    "      --json      print one JSON object: count, estimate, precision,\n"
    "                  standard error, bounds (group files: an array of groups)\n"
    "      --group G   of group files, only group G's count (0 if it has none)\n"
    "      --window W  of window sketches (hll add --time): the window's length, a\n"
    "                  number and s, m, h or d (default: the horizon)\n"
    "      --at T      of window sketches: the window's end, epoch seconds or ISO\n"
    "                  8601 (default: the end of the newest second in the FILEs)\n"
    "  -h, --help      show this help\n"
    "The window of W at T holds the items whose times t have T - W <= t < T, as a\n"
    "row of sketch count --window at step T; T must be after the newest time.\n"
    "Examples:\n"
    "  sketch hll count mon.skh tue.skh wed.skh   # distinct over the three days\n"
    "  sketch hll count --group /home mon.skg tue.skg   # one page over two days\n"
    "  sketch hll count --window 1h clients.whll   # distinct over the last hour\n";

static const char merge_usage[] =
    "Usage: sketch hll merge [OPTION]... -o OUT FILE...\n"
    "Write the union of the sketches in the FILEs to OUT (which may be one of them).\n"
    "Group files merge group by group into a group file; window sketches (of the\n"
    "same precision and horizon) into a window sketch.\n"
    "\n"
    "  -o, --output OUT   the file to write (required)\n"
    "  -r, --redis        write a Redis HyperLogLog string instead of sketch's format\n"
    "      --no-wait      fail (exit 2) instead of waiting while another command\n"
    "                     writes OUT\n"
    "  -h, --help         show this help\n"
    "OUT may be '-' (standard output), a device or a FIFO, written through.\n"
    "Example:\n"
    "  sketch hll merge -o week.skh mon.skh tue.skh wed.skh\n";

static const char info_usage[] =
    "Usage: sketch hll info [--json] FILE\n"
    "Describe the sketch in FILE: format, precision, encoding, size, estimate and\n"
    "bounds at 1, 2 and 3 standard deviations, one 'name: value' per line (with\n"
    "--json, one JSON object). Of a window sketch: precision, horizon, newest\n"
    "time, pairs held, memory, size and the count over the horizon.\n"
    "Example:\n"
    "  sketch hll info --json visitors.skh\n";

static const char export_usage[] =
    "Usage: sketch hll export [-o OUT] FILE\n"
    "Write the sketch in FILE as a Redis HyperLogLog string, to OUT or to standard\n"
    "output (never to a terminal). Sketches above precision 14 are folded to 14;\n"
    "below 14 they cannot be exported. Of a group file, write one Redis SET\n"
    "command (RESP) per group to standard output, for redis-cli --pipe:\n"
    "\n"
    "      --prefix P   each key is P followed by the group (default: the group)\n"
    "      --group G    only group G's sketch, as a Redis string\n"
    "Examples, loading into Redis:\n"
    "  sketch hll export FILE | redis-cli -x SET key\n"
    "  sketch hll export --prefix visitors:2026-12-01: day.skg | redis-cli --pipe\n";

static const char fold_usage[] =
    "Usage: sketch hll fold -p P [-o OUT] FILE\n"
    "Lower the precision of the sketch in FILE to P (no more than its own), in\n"
    "place or into OUT: exactly the sketch its items would have built at P, so\n"
    "that it takes less room, or combines with sketches of precision P.\n"
    "\n"
    "  -p, --precision P   the new precision, 4..18\n"
    "  -o, --output OUT    write the folded sketch to OUT ('-': standard output)\n"
    "                      instead of replacing FILE\n"
    "      --no-wait       fail (exit 2) instead of waiting while another command\n"
    "                      writes the file\n"
    "  -h, --help          show this help\n"
    "Example:\n"
    "  sketch hll fold -p 12 -o small.skh visitors.skh   # 4 KB instead of 16 KB\n";

/* What the options of the hll subcommands set. */
struct hll_options {
    const char *output;
    const char *group, *prefix; /* --group, --prefix */
    unsigned precision; /* 0: not given */
    int redis, verbose, json;
    struct window_file_options window; /* window sketches' options */
    int fields_given; /* -f, -d or -w */
    const char *cmd;  /* for messages: "hll add" */
};

static void hll_option(void *ctx, int c, const char *value, const char *long_name)
{
    struct hll_options *opt = ctx;
    (void)long_name;
    switch (c) {
    case 'o': opt->output = value; break;
    case 'p': opt->precision = parse_precision(value); break;
    case 'r': opt->redis = 1; break;
    case 'v': opt->verbose = 1; break;
    case 'J': opt->json = 1; break;
    case 'G': opt->group = value; break;
    case 'X': opt->prefix = value; break;
    case 'f':
    case 'd':
    case 'w':
        field_option(&opt->window.fields, c, value, opt->cmd);
        opt->fields_given = 1;
        break;
    case 'T':
        opt->window.time_field = (unsigned)parse_uint(value, "time field", 1, 1u << 20);
        break;
    case 'H':
        opt->window.horizon = parse_duration(value);
        opt->window.horizon_text = value;
        if (opt->window.horizon == 0 || opt->window.horizon > MAX_WINDOW_SECONDS)
            die_usage(opt->cmd, "--horizon takes a whole number and s, m, h or d (1h, 7d) up "
                                 "to %lld days, not '%s'",
                      (long long)(MAX_WINDOW_SECONDS / 86400), value);
        break;
    case 'N':
        opt->window.window = parse_duration(value);
        opt->window.window_text = value;
        if (opt->window.window == 0)
            die_usage(opt->cmd, "--window takes a whole number and s, m, h or d (30s, 10m, "
                                   "1h, 1d), not '%s'", value);
        break;
    case 'A':
        if (!parse_time(value, strlen(value), NULL, 0, &opt->window.at))
            die_usage(opt->cmd, "--at takes a time: epoch seconds "
                      "or ISO 8601 (2023-11-14T22:13:20Z), not '%s'", value);
        opt->window.at_given = 1;
        opt->window.at_text = value;
        break;
    }
}

static int parse_hll_options(const char *cmd, const char *usage, const char *optstring,
                             int argc, char **argv, struct hll_options *opt)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"precision", required_argument, NULL, 'p'},
        {"redis", no_argument, NULL, 'r'},
        {"verbose", no_argument, NULL, 'v'},
        {"json", no_argument, NULL, 'J'},
        {"group", required_argument, NULL, 'G'},
        {"prefix", required_argument, NULL, 'X'},
        FIELD_LONG_OPTIONS,
        {"time", required_argument, NULL, 'T'},
        {"horizon", required_argument, NULL, 'H'},
        {"window", required_argument, NULL, 'N'},
        {"at", required_argument, NULL, 'A'},
        {NULL, 0, NULL, 0}};
    memset(opt, 0, sizeof *opt);
    opt->window.fields.delimiter = '\t';
    opt->cmd = cmd;
    const struct cli_spec spec = {cmd, usage, optstring, longopts};
    return parse_options(&spec, argc, argv, hll_option, opt);
}

/* Every line of standard input is an item, added at once (as count adds
 * them: cmd_count.c). */
static inline int add_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    return sk_hll_add(ctx, line, len) < 0 ? SK_ENOMEM : 0;
}

static int add_lines(void *ctx, const char *data, size_t len)
{
    return line_each(data, len, add_take, ctx) != 0;
}

static int hll_add(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll add", add_usage, "+:p:rhWRL:f:d:wT:H:A:", argc, argv,
                                  &opt);
    require_files("hll add", first, argc, 0);
    const char *path = argv[first];
    require_regular_file(path);
    struct window_file_options *wo = &opt.window;
    if (wo->time_field != 0 && wo->at_given)
        die_usage("hll add", "--time (each line's time) or --at (one time for all): not both");
    if (opt.fields_given && wo->time_field == 0)
        die_usage("hll add", "-f, -d and -w pick the item of a line with --time");
    int windowed = wo->time_field != 0 || wo->at_given || wo->horizon != 0;
    if (windowed && opt.redis)
        die_usage("hll add", "--redis makes a Redis string; --time, --at and --horizon a "
                             "window sketch: not both");
    if (windowed || is_window_file(path)) {
        wo->precision = opt.precision;
        return window_file_add(path, wo, argv + first + 1, argc - first - 1);
    }
    sk_hll_format format = opt.redis ? SK_HLL_REDIS : SK_HLL_NATIVE;
    sk_hll *h;
    int exists;
    int lock = lock_for_writing(path, 1, &exists);
    if (exists) {
        h = load_hll_or_die(path, &format);
        if (opt.precision != 0 && opt.precision != sk_hll_precision(h))
            die("%s: the sketch has precision %u, not %u", path, sk_hll_precision(h),
                opt.precision);
        if (opt.redis && format != SK_HLL_REDIS)
            die("%s: exists in sketch's format; use 'sketch hll export' for Redis", path);
    } else {
        unsigned p = opt.precision != 0 ? opt.precision : SK_HLL_DEFAULT_PRECISION;
        if (opt.redis && p != SK_HLL_REDIS_PRECISION)
            die("a Redis HyperLogLog has precision 14, not %u", p);
        if (sk_hll_new(&h, p) != SK_OK)
            die("out of memory");
    }

    if (first + 1 < argc) {
        for (int i = first + 1; i < argc; i++)
            if (sk_hll_add(h, argv[i], strlen(argv[i])) < 0)
                die("out of memory");
    } else {
        int err = lines_read_stdin(add_lines, h);
        if (err == ECANCELED)
            die("out of memory");
        if (err != 0)
            die("standard input: %s", lines_strerror(err));
    }
    save_hll_or_die(h, format, path);
    unlock_file(lock);
    sk_hll_free(h);
    return EXIT_OK;
}

/* Loads the sketches named by argv[first..argc) and returns their union. */
static sk_hll *load_union(const char *cmd, int first, int argc, char **argv)
{
    require_files(cmd, first, argc, 0);
    sk_hll *result = load_hll_or_die(argv[first], NULL);
    for (int i = first + 1; i < argc; i++) {
        sk_hll *h = load_hll_or_die(argv[i], NULL);
        if (sk_hll_merge(result, h) != SK_OK)
            die("out of memory");
        sk_hll_free(h);
    }
    return result;
}

static int hll_count(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll count", count_usage, ":vJG:hN:A:", argc, argv, &opt);
    if (first < argc && is_window_file(argv[first])) {
        if (opt.group != NULL)
            die_usage("hll count", "--group is for group files (sketch count --by -o)");
        opt.window.json = opt.json;
        opt.window.verbose = opt.verbose;
        return window_file_count(argv + first, argc - first, &opt.window);
    }
    if (opt.window.window != 0 || opt.window.at_given)
        die_usage("hll count", "--window and --at are for window sketches (sketch hll add "
                               "--time)");
    if (first < argc && is_group_file(argv[first])) {
        sk_hll_map *m = load_groups_or_die(argv + first, argc - first);
        print_group_counts(m, opt.group, opt.json);
        sk_hll_map_free(m);
        return EXIT_OK;
    }
    if (opt.group != NULL)
        die_usage("hll count", "--group is for group files (sketch count --by -o)");
    sk_hll *h = load_union("hll count", first, argc, argv);
    if (opt.json) {
        struct report r;
        report_begin(&r, stdout, 1);
        report_uint(&r, "count", sk_hll_count(h));
        report_estimate(&r, h);
        report_end(&r);
    } else {
        printf("%llu\n", (unsigned long long)sk_hll_count(h));
    }
    if (opt.verbose && !opt.json) {
        struct report r;
        report_begin(&r, stderr, 0);
        report_estimate(&r, h);
        report_end(&r);
    }
    sk_hll_free(h);
    return EXIT_OK;
}

static int hll_merge(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll merge", merge_usage, ":o:rhW", argc, argv, &opt);
    if (opt.output == NULL)
        die_usage("hll merge", "missing -o OUT");
    /* As in bloom merge: OUT may be one of the FILEs. */
    require_readable(argv + first, argc - first);
    if (first < argc && is_window_file(argv[first])) {
        if (opt.redis)
            die_usage("hll merge", "window sketches merge into a window sketch, not a Redis "
                                   "string");
        return window_file_merge(opt.output, argv + first, argc - first);
    }
    if (first < argc && is_group_file(argv[first])) {
        if (opt.redis)
            die_usage("hll merge", "group files merge into a group file, not a Redis string");
        int exists, lock = lock_for_writing(opt.output, 1, &exists);
        sk_hll_map *m = load_groups_or_die(argv + first, argc - first);
        save_groups_or_die(m, opt.output);
        unlock_file(lock);
        sk_hll_map_free(m);
        return EXIT_OK;
    }
    int exists, lock = lock_for_writing(opt.output, 1, &exists);
    sk_hll *h = load_union("hll merge", first, argc, argv);
    save_hll_or_die(h, opt.redis ? SK_HLL_REDIS : SK_HLL_NATIVE, opt.output);
    unlock_file(lock);
    sk_hll_free(h);
    return EXIT_OK;
}

static int hll_info(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll info", info_usage, ":Jh", argc, argv, &opt);
    require_files("hll info", first, argc, 1);
    if (is_window_file(argv[first]))
        return window_file_info(argv[first], opt.json);
    if (is_group_file(argv[first])) {
        sk_hll_map *m = load_groups_or_die(argv + first, 1);
        print_groups_info(m, argv[first], opt.json);
        sk_hll_map_free(m);
        return EXIT_OK;
    }
    sk_hll_format format;
    sk_hll *h = load_hll_or_die(argv[first], &format);
    /* The encoding of the file, which is not always the one the sketch
     * uses in memory. */
    int encoding = sk_hll_serialized_encoding(h, format);
    if (encoding < 0)
        die("%s", sk_strerror(encoding));
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    struct report r;
    report_begin(&r, stdout, opt.json);
    report_string(&r, "format", format == SK_HLL_REDIS ? "redis" : "sketch 1");
    report_uint(&r, "registers", info.registers);
    report_string(&r, "encoding", encoding == SK_HLL_SPARSE ? "sparse" : "dense");
    uint64_t size;
    if (sk_hll_serialized_size(h, format, &size) != SK_OK)
        die("out of memory");
    if (opt.json)
        report_uint(&r, "size bytes", size);
    else
        printf("size: %" PRIu64 " bytes\n", size);
    report_estimate(&r, h);
    report_end(&r);
    sk_hll_free(h);
    return EXIT_OK;
}

static int hll_export(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll export", export_usage, ":o:G:X:hW", argc, argv, &opt);
    require_files("hll export", first, argc, 1);
    if (is_group_file(argv[first])) {
        sk_hll_map *m = load_groups_or_die(argv + first, 1);
        export_groups(m, opt.prefix, opt.group, opt.output);
        sk_hll_map_free(m);
        return EXIT_OK;
    }
    if (opt.group != NULL || opt.prefix != NULL)
        die_usage("hll export", "--group and --prefix are for group files");
    sk_hll *h = load_hll_or_die(argv[first], NULL);
    if (opt.output != NULL && strcmp(opt.output, "-") != 0) {
        int exists;
        int lock = lock_for_writing(opt.output, 1, &exists);
        save_hll_or_die(h, SK_HLL_REDIS, opt.output);
        unlock_file(lock);
        sk_hll_free(h);
        return EXIT_OK;
    }
    if (isatty(STDOUT_FILENO))
        die_usage("hll export", "refusing to write binary data to a terminal; use -o "
                                "or a pipe");
    uint64_t cap;
    if (sk_hll_serialized_size(h, SK_HLL_REDIS, &cap) != SK_OK)
        die("%s: a Redis HyperLogLog needs precision 14 or more; this sketch has %u",
            argv[first], sk_hll_precision(h));
    uint8_t *buf = malloc(cap);
    size_t len;
    if (buf == NULL || sk_hll_serialize(h, SK_HLL_REDIS, buf, cap, &len) != SK_OK)
        die("out of memory");
    size_t written = fwrite(buf, 1, len, stdout);
    int saved = errno;
    free(buf);
    sk_hll_free(h);
    if (written != len)
        die("standard output: %s", strerror(saved));
    return EXIT_OK;
}

static int hll_fold(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll fold", fold_usage, ":p:o:hW", argc, argv, &opt);
    if (opt.precision == 0)
        die_usage("hll fold", "missing -p P");
    require_files("hll fold", first, argc, 1);
    const char *path = argv[first];
    const char *out = opt.output != NULL ? opt.output : path;
    if (out == path)
        require_regular_file(path);
    int exists;
    int lock = lock_for_writing(out, out != path, &exists);
    sk_hll_format format;
    sk_hll *h = load_hll_or_die(path, &format);
    if (opt.precision > sk_hll_precision(h))
        die("%s: has precision %u; a fold lowers it, not to %u", path, sk_hll_precision(h),
            opt.precision);
    if (sk_hll_fold(h, opt.precision) != SK_OK)
        die("out of memory");
    /* A Redis string holds precision 14 only: below it, sketch's format. */
    if (format == SK_HLL_REDIS && opt.precision < SK_HLL_REDIS_PRECISION)
        format = SK_HLL_NATIVE;
    save_hll_or_die(h, format, out);
    unlock_file(lock);
    sk_hll_free(h);
    return EXIT_OK;
}

static int hll_compare(int argc, char **argv)
{
    struct hll_options opt;
    int first = parse_hll_options("hll compare", hll_compare_usage, ":Jh", argc, argv, &opt);
    if (argc - first != 2)
        die_usage("hll compare", "give two sketch files, A and B");
    return hll_compare_files(argv[first], argv[first + 1], opt.json);
}

static int hll_retention(int argc, char **argv)
{
    struct hll_options opt;
    int first =
        parse_hll_options("hll retention", hll_retention_usage, ":Jh", argc, argv, &opt);
    if (argc - first < 2)
        die_usage("hll retention", "give the BASE sketch and at least one LATER one");
    return hll_retention_files(argv + first, argc - first, opt.json);
}

int cmd_hll(int argc, char **argv)
{
    static const struct subcommand commands[] = {
        {"add", hll_add},   {"count", hll_count},   {"merge", hll_merge},
        {"info", hll_info}, {"export", hll_export}, {"fold", hll_fold},
        {"compare", hll_compare}, {"retention", hll_retention},
    };
    return run_subcommand("hll", hll_usage, commands, sizeof commands / sizeof commands[0], argc,
                          argv);
}
