/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_top.c: `sketch top`, the most frequent lines (or fields) of files or
 * standard input with their estimated counts and bounds that always hold:
 * `sort | uniq -c | sort -rn | head` for files too large to sort. The
 * lines are read in parallel into one frequent-items summary per thread
 * (sketch/frequent.h), merged at the end; --by and --time are in
 * top_groups.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fields.h"
#include "line_batch.h"
#include "lines.h"
#include "timestamps.h"
#include "top_groups.h"
#include "util.h"

#define DEFAULT_K 10
#define MAX_K (1u << 20)
/* Counters per item asked for, beyond the library's default of 4096: on a
 * Zipf-like stream the error of the K-th count falls as the counters grow,
 * and the gap below the K-th item narrows as K grows. */
#define COUNTERS_PER_K 64u

static const char top_usage[] =
    "Usage: sketch top [OPTION]... [FILE]...\n"
    "Print the K most frequent lines of the FILEs (or standard input; '-' is\n"
    "standard input), heaviest first, each after its estimated count as uniq -c\n"
    "prints it: what sort | uniq -c | sort -rn | head prints, in one pass and\n"
    "little memory. With --by or --time, the top K of each group or time window,\n"
    "one per line (group, tab, count, tab, line).\n"
    "\n"
    "  -k, --top K         how many lines (of each group), 1..1048576 (default 10)\n"
    "  -m, --counters M    counters of the summary (of each group), at least K\n"
    "                      (default: the larger of 4096 and 64 K); more is slower\n"
    "                      and more exact\n"
    "  -f, --field N       count the N-th field (from 1) instead of whole lines;\n"
    "                      lines with fewer fields are skipped\n"
    "  -d, --delimiter C   field delimiter, one byte (default: tab)\n"
    "  -w, --whitespace    fields are separated by runs of blanks, as in awk\n"
    "  -j, --threads N     reading threads (default: one per core)\n"
    "  -v, --verbose       also print on standard error the lines read, the\n"
    "                      total counted and the threshold T below\n"
    "  -b, --bounds        print each line's lower and upper bound after its count\n"
    "      --json          print a JSON array of objects (item, count, lower, upper)\n"
    "      --csv           print CSV with a header line (window, fieldN..., item,\n"
    "                      count, lower, upper)\n"
    "      --by FIELDS     the top K per group: the lines whose FIELDS (numbers from\n"
    "                      1, separated by commas) are equal; -f is what is counted\n"
    "      --time N        with --every: the top K per time window of the time in\n"
    "                      field N (as sketch count --time reads it); windows print\n"
    "                      as ISO 8601 UTC, before the group\n"
    "      --every D       the window length: a number and s, m, h or d (1m, 1d)\n"
    "      --raw           read gzip, zstd or xz input as it is, not decompressed\n"
    "      --max-line-length BYTES\n"
    "                      a longer line is an error, exit 2 (default 256M; K, M\n"
    "                      and G are KiB, MiB and GiB)\n"
    "  -h, --help          show this help\n"
    "\n"
    "The counts are those of a Space-Saving summary of M counters over the N\n"
    "lines counted: a count is never below the line's true count, nor more than\n"
    "T above it, where T (the threshold, at most N/M) is what -v prints; the\n"
    "true count is within [lower, upper] (--bounds, --json, --csv); every line\n"
    "seen more than T times is in the summary, so a line missing from the top K\n"
    "was seen no more often than the K-th count. On a Zipf-like file the top K is\n"
    "exact but for a few near-ties. Ties print in byte order. A line is every\n"
    "byte up to a newline; gzip, zstd and xz input is decompressed as it is read.\n"
    "Examples:\n"
    "  sketch top access.log.txt                   # the 10 most frequent lines\n"
    "  sketch top -k 20 -d ' ' -f 7 access.log     # the 20 most requested paths\n"
    "  sketch top -d ' ' -f 1 --time 4 --every 1h access.log  # top clients per hour\n"
    "Exit status: 0 on success, 2 on bad usage or unreadable input.\n";

struct top_cli {
    struct group_options o;
    int threads, grouped, json, csv;
};

static void top_option(void *ctx, int c, const char *value, const char *long_name)
{
    struct top_cli *cli = ctx;
    (void)long_name;
    switch (c) {
    case 'k': cli->o.top = parse_uint(value, "-k", 1, MAX_K); break;
    case 'm':
        cli->o.counters = (uint32_t)parse_uint(value, "--counters", 1, SK_FREQUENT_MAX_COUNTERS);
        break;
    case 'f':
    case 'd':
    case 'w': field_option(&cli->o.split, c, value, "top"); break;
    case 'j': cli->threads = (int)parse_uint(value, "threads", 1, 256); break;
    case 'v': cli->o.verbose = 1; break;
    case 'b': cli->o.bounds = 1; break;
    case 'J': cli->json = 1; break;
    case 'C': cli->csv = 1; break;
    case 'B':
        parse_by_fields("top", value, &cli->o);
        cli->grouped = 1;
        break;
    case 'T':
        cli->o.time_field = (unsigned)parse_uint(value, "time field", 1, 1u << 20);
        cli->grouped = 1;
        break;
    case 'E':
        cli->o.every = parse_duration(value);
        if (cli->o.every == 0)
            die_usage("top", "--every takes a number and s, m, h or d (30s, 1m, 1h, 1d), not "
                             "'%s'", value);
        break;
    }
}

struct top_worker {
    const struct group_options *o;
    sk_frequent *summary;
    uint64_t lines, skipped;
    int error;
};

static void *top_worker_init(void *shared, int thread)
{
    (void)thread;
    struct top_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        die("out of memory");
    w->o = shared;
    if (sk_frequent_new(&w->summary, w->o->counters) != SK_OK)
        die("out of memory");
    return w;
}

/* A line without the field is skipped, and counted as such. */
static inline int top_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct top_worker *w = ctx;
    w->lines++;
    if (!select_field(&w->o->split, &line, &len)) {
        w->skipped++;
        return 0;
    }
    return sk_frequent_add(w->summary, line, len, 1);
}

static int top_lines(void *ctx, const char *data, size_t len)
{
    struct top_worker *w = ctx;
    int rc = line_each(data, len, top_take, w);
    if (rc != 0 && w->error == 0)
        w->error = rc;
    return rc != 0;
}

static int top_all(struct input *inputs, int count, int threads, const struct group_options *o,
                   struct progress *progress)
{
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, threads, top_worker_init, (void *)o,
                                  top_lines, progress, &run);
    struct top_worker *first = run.contexts[0];
    uint64_t lines = 0, skipped = 0;
    int rc = SK_OK;
    for (int t = 0; t < run.threads; t++) {
        struct top_worker *w = run.contexts[t];
        if (w->error != 0 && rc == SK_OK)
            rc = w->error;
        if (t > 0 && rc == SK_OK && err == 0)
            rc = sk_frequent_merge(first->summary, w->summary);
        lines += w->lines;
        skipped += w->skipped;
    }
    if (rc != SK_OK)
        top_die(rc);
    if (err != 0)
        die("%s: %s", run.failed_input, lines_strerror(err));
    if (skipped != 0)
        warn("%llu of %llu lines have fewer fields than asked for; they are not counted",
             (unsigned long long)skipped, (unsigned long long)lines);
    int first_row = 1;
    top_print_begin(o, 0);
    top_print(o, NULL, 0, first->summary, &first_row);
    top_print_end(o, first_row);
    if (o->verbose) {
        sk_frequent_info info;
        sk_frequent_get_info(first->summary, &info);
        fprintf(stderr,
                "lines: %llu\ncounted: %llu\ncounters: %u\ndistinct lines kept: %zu\n"
                "threshold: %llu (no count is more than this above the true count; every "
                "line seen more often is in the summary)\n",
                (unsigned long long)lines, (unsigned long long)info.total, info.counters,
                info.items, (unsigned long long)info.threshold);
    }
    for (int t = 0; t < run.threads; t++) {
        struct top_worker *w = run.contexts[t];
        sk_frequent_free(w->summary);
        free(w);
    }
    free(run.contexts);
    if (fflush(stdout) != 0 || ferror(stdout))
        die("standard output: %s", strerror(errno));
    return EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"top", required_argument, NULL, 'k'},
        {"counters", required_argument, NULL, 'm'},
        FIELD_LONG_OPTIONS,
        {"threads", required_argument, NULL, 'j'},
        {"verbose", no_argument, NULL, 'v'},
        {"bounds", no_argument, NULL, 'b'},
        {"json", no_argument, NULL, 'J'},
        {"csv", no_argument, NULL, 'C'},
        {"by", required_argument, NULL, 'B'},
        {"time", required_argument, NULL, 'T'},
        {"every", required_argument, NULL, 'E'},
        {NULL, 0, NULL, 0}};
    struct top_cli cli = {.o = {.split = {0, '\t', 0}, .top = DEFAULT_K}};
    const struct cli_spec spec = {"top", top_usage, ":k:m:f:d:wj:vbhRJB:T:E:CL:", longopts};
    int operands = parse_options(&spec, argc, argv, top_option, &cli);
    if (cli.csv && cli.json)
        die_usage("top", "--csv or --json: not both");
    cli.o.format = cli.csv ? FORMAT_CSV : cli.json ? FORMAT_JSON : FORMAT_TEXT;
    if ((cli.o.time_field != 0) != (cli.o.every != 0))
        die_usage("top", "--time and --every go together");
    if (cli.o.counters == 0) {
        uint64_t m = cli.o.top * COUNTERS_PER_K;
        m = m > SK_FREQUENT_DEFAULT_COUNTERS ? m : SK_FREQUENT_DEFAULT_COUNTERS;
        cli.o.counters = (uint32_t)(m < SK_FREQUENT_MAX_COUNTERS ? m : SK_FREQUENT_MAX_COUNTERS);
    }
    if (cli.o.counters < cli.o.top)
        die_usage("top", "--counters (%u) must be at least -k (%llu)", cli.o.counters,
                  (unsigned long long)cli.o.top);

    int input_count;
    struct input *inputs = inputs_open(argv + operands, argc - operands, &input_count);
    uint64_t total = 0;
    for (int i = 0; i < input_count; i++)
        total += inputs[i].size;
    struct progress progress;
    progress_init(&progress, total, 256u << 20);
    if (inputs_interactive(inputs, input_count))
        progress.enabled = 0;
    int status = cli.grouped ? top_groups(inputs, input_count, cli.threads, &cli.o, &progress)
                             : top_all(inputs, input_count, cli.threads, &cli.o, &progress);
    inputs_close(inputs, input_count);
    return status;
}
