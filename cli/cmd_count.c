/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_count.c: `sketch count`, the number of distinct lines (or fields) of
 * files or standard input, read in parallel into one HyperLogLog per thread
 * and merged at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "count_groups.h"
#include "count_window.h"
#include "fields.h"
#include "file_lock.h"
#include "line_batch.h"
#include "lines.h"
#include "report.h"
#include "timestamps.h"
#include "util.h"

static const char count_usage[] =
    "Usage: sketch count [OPTION]... [FILE]...\n"
    "Print the estimated number of distinct lines of the FILEs (or standard\n"
    "input; '-' is standard input) as a bare integer; with --by or --time, a\n"
    "count per group or time window, one per line (group, tab, count).\n"
    "\n"
    "  -p, --precision P   HyperLogLog precision, 4..18 (default 14: 2^14\n"
    "                      registers, 0.81% standard error, 12 KB saved)\n"
    "  -f, --field N       count the N-th field (from 1) instead of whole lines;\n"
    "                      lines with fewer fields are skipped\n"
    "  -d, --delimiter C   field delimiter, one byte (default: tab)\n"
    "  -w, --whitespace    fields are separated by runs of blanks, as in awk\n"
    "  -o, --output FILE   also save the sketch to FILE, for `sketch hll` ('-':\n"
    "                      standard output, before the count); with --by or\n"
    "                      --time, a group file of every group's sketch\n"
    "  -j, --threads N     reading threads (default: one per core)\n"
    "  -v, --verbose       also print the error bounds on standard error\n"
    "      --json          print one JSON object (count, lines, estimate, bounds)\n"
    "                      instead of the bare count\n"
    "      --per-file      a count per FILE (count, tab, name), then the total, as\n"
    "                      wc prints them\n"
    "      --by FIELDS     a count per group: the lines whose FIELDS (numbers from 1,\n"
    "                      separated by commas) are equal; -f is what is counted\n"
    "      --time N        with --every: a count per time window of the time in\n"
    "                      field N: epoch seconds or milliseconds, ISO 8601 or a log\n"
    "                      time ([10/Oct/2000:13:55:36 -0700], whose zone may be in\n"
    "                      field N+1); windows print as ISO 8601 UTC, before the group\n"
    "      --every D       the window length: a number and s, m, h or d (1m, 1d)\n"
    "      --window W      a sliding window of W (as D, at least --every): at each\n"
    "                      step T of --every, the count of the lines whose time\n"
    "                      t has T - W <= t < T, after T (and the group)\n"
    "      --sort S        group (default: by window, then group, bytewise) or count\n"
    "                      (by window, then count, largest first)\n"
    "      --top K         only the K largest counts (of each window); sorted by\n"
    "                      count unless --sort group\n"
    "      --csv           print CSV with a header line (window, fieldN..., count)\n"
    "                      instead of tabs; --json prints a JSON array\n"
    "      --raw           read gzip, zstd or xz input as it is, not decompressed\n"
    "      --max-line-length BYTES\n"
    "                      a longer line is an error, exit 2 (default 256M; K, M\n"
    "                      and G are KiB, MiB and GiB)\n"
    "      --no-wait       fail (exit 2) instead of waiting while another command\n"
    "                      writes the -o FILE\n"
    "  -h, --help          show this help\n"
    "\n"
    "A line is every byte up to a newline; bytes are compared exactly. gzip,\n"
    "zstd and xz input (FILEs and standard input) is recognized by its first\n"
    "bytes and decompressed as it is read. A FILE cut short while it is read is\n"
    "an error: no count is printed.\n"
    "Examples:\n"
    "  sketch count -f 1 -d ' ' access.log.1 access.log.2.gz   # distinct clients\n"
    "  sketch count -d ' ' -f 1 --by 7 access.log     # distinct clients per path\n"
    "  sketch count -d ' ' -f 1 --time 4 --every 1m access.log   # ... per minute\n"
    "  sketch count --time 1 --by 2 -f 3 --window 10m --every 1m flows.tsv\n"
    "        # distinct ports (field 3) per source (2) over the last 10 minutes\n"
    "--window reads in order on one thread: step T prints when a line of time T\n"
    "or later is read (`tail -f` pipes get rows as time moves), and at the end\n"
    "the step after the newest time. Times are whole seconds; without --by every\n"
    "step prints, 0 included. A late line counts in the steps still to print;\n"
    "one older than the next step's window counts nowhere (reported at the end).\n"
    "Exit status: 0 on success, 2 on bad usage or unreadable input.\n";

struct count_options {
    unsigned precision;
    struct field_spec fields;
};

struct count_worker {
    const struct count_options *opt;
    sk_hll *sketch;
    uint64_t lines, skipped;
};

static void *count_worker_init(void *shared, int thread)
{
    (void)thread;
    struct count_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        die("out of memory");
    w->opt = shared;
    if (sk_hll_new(&w->sketch, w->opt->precision) != SK_OK)
        die("out of memory");
    return w;
}

/* A line without the field is skipped, and counted as such. An item goes
 * into the sketch at once, not through the batch: the registers of a
 * sketch fit in the cache, and hashing a batch to add it in one call costs
 * a pass more over it and saves no misses. */
static inline int count_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    (void)b;
    struct count_worker *w = ctx;
    w->lines++;
    if (!select_field(&w->opt->fields, &line, &len)) {
        w->skipped++;
        return 0;
    }
    return sk_hll_add(w->sketch, line, len) < 0 ? SK_ENOMEM : 0;
}

static int count_lines(void *ctx, const char *data, size_t len)
{
    struct count_worker *w = ctx;
    return line_each(data, len, count_take, w) != 0;
}

/* What the options of sketch count set. */
struct count_cli {
    struct count_options opt;
    const char *output;
    int threads, verbose, json, per_file, csv;
    struct group_options groups;
    int grouped; /* --by or --time */
    int64_t every, window;
    const char *window_text;
    int sort_given;
};

static void count_option(void *ctx, int c, const char *value, const char *long_name)
{
    struct count_cli *cli = ctx;
    (void)long_name;
    switch (c) {
    case 'p': cli->opt.precision = parse_precision(value); break;
    case 'f':
    case 'd':
    case 'w': field_option(&cli->opt.fields, c, value, "count"); break;
    case 'o': cli->output = value; break;
    case 'J': cli->json = 1; break;
    case 'P': cli->per_file = 1; break;
    case 'j': cli->threads = (int)parse_uint(value, "threads", 1, 256); break;
    case 'v': cli->verbose = 1; break;
    case 'B':
        parse_by_fields("count", value, &cli->groups);
        cli->grouped = 1;
        break;
    case 'T':
        cli->groups.time_field = (unsigned)parse_uint(value, "time field", 1, 1u << 20);
        cli->grouped = 1;
        break;
    case 'E':
        cli->every = parse_duration(value);
        if (cli->every == 0)
            die_usage("count", "--every takes a number and s, m, h or d (30s, 1m, 1h, 1d), not "
                               "'%s'", value);
        break;
    case 'X':
        cli->window = parse_duration(value);
        cli->window_text = value;
        if (cli->window == 0)
            die_usage("count", "--window takes a whole number and s, m, h or d (30s, 10m, 1h, "
                               "1d), not '%s': windows are whole seconds", value);
        break;
    case 'S':
        if (strcmp(value, "group") == 0)
            cli->groups.sort = SORT_GROUP;
        else if (strcmp(value, "count") == 0)
            cli->groups.sort = SORT_COUNT;
        else
            die_usage("count", "--sort is 'group' or 'count', not '%s'", value);
        cli->sort_given = 1;
        break;
    case 'K': cli->groups.top = parse_uint(value, "top", 1, UINT64_C(1) << 40); break;
    case 'C': cli->csv = 1; break;
    }
}

/* --window slides over the input in order and prints as it goes: it needs
 * --time and --every, and takes none of what prints or saves at the end. */
static void check_window_options(const struct count_cli *cli)
{
    if (cli->groups.time_field == 0 || cli->every == 0)
        die_usage("count", "--window needs --time N (the field of each line's time) and "
                           "--every D (the step)");
    if (cli->window > MAX_WINDOW_SECONDS)
        die_usage("count", "--window is at most %lld seconds (%lld days), not '%s'",
                  (long long)MAX_WINDOW_SECONDS, (long long)(MAX_WINDOW_SECONDS / 86400),
                  cli->window_text);
    if (cli->every > cli->window)
        die_usage("count", "--every is longer than --window '%s': steps would skip the lines "
                           "between windows (for windows side by side, leave out --window)",
                  cli->window_text);
    if (cli->output != NULL)
        die_usage("count", "--window prints as it reads and saves no file: for a window "
                           "sketch file, use 'sketch hll add --time'");
    if (cli->json || cli->sort_given || cli->groups.top != 0)
        die_usage("count", "--json, --sort and --top do not apply to --window");
}

/* Counts the lines of inputs[0..count): the union sketch, or dies; adds to
 * *lines and *skipped. */
static sk_hll *count_inputs(struct input *inputs, int count, int threads,
                            const struct count_options *opt, struct progress *progress,
                            uint64_t *lines, uint64_t *skipped)
{
    struct lines_run run;
    int err = lines_read_parallel(inputs, count, threads, count_worker_init, (void *)opt,
                                  count_lines, progress, &run);
    struct count_worker *first = run.contexts[0];
    for (int t = 0; t < run.threads; t++) {
        struct count_worker *w = run.contexts[t];
        if (t > 0 && err == 0 && sk_hll_merge(first->sketch, w->sketch) != SK_OK)
            err = ENOMEM;
        *lines += w->lines;
        *skipped += w->skipped;
    }
    if (err == ENOMEM || err == ECANCELED) /* an add's only error */
        die("out of memory");
    if (err != 0)
        die("%s: %s", run.failed_input, lines_strerror(err));
    sk_hll *result = first->sketch;
    for (int t = 0; t < run.threads; t++) {
        struct count_worker *w = run.contexts[t];
        if (t > 0)
            sk_hll_free(w->sketch);
        free(w);
    }
    free(run.contexts);
    return result;
}

int cmd_count(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"precision", required_argument, NULL, 'p'},
        FIELD_LONG_OPTIONS,
        {"output", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 'j'},
        {"verbose", no_argument, NULL, 'v'},
        {"json", no_argument, NULL, 'J'},
        {"per-file", no_argument, NULL, 'P'},
        {"by", required_argument, NULL, 'B'},
        {"time", required_argument, NULL, 'T'},
        {"every", required_argument, NULL, 'E'},
        {"window", required_argument, NULL, 'X'},
        {"sort", required_argument, NULL, 'S'},
        {"top", required_argument, NULL, 'K'},
        {"csv", no_argument, NULL, 'C'},
        {NULL, 0, NULL, 0}};
    struct count_cli cli = {.opt = {SK_HLL_DEFAULT_PRECISION, {0, '\t', 0}}};
    const struct cli_spec spec = {"count", count_usage, ":p:f:d:wo:j:vhWRJPB:T:E:X:S:K:CL:",
                                  longopts};
    int operands = parse_options(&spec, argc, argv, count_option, &cli);
    if (cli.per_file && cli.json)
        die_usage("count", "--per-file prints a line per file, --json one object: not both");
    if ((cli.groups.time_field != 0) != (cli.every != 0))
        die_usage("count", "--time and --every go together");
    if (!cli.grouped && (cli.sort_given || cli.groups.top != 0 || cli.csv))
        die_usage("count", "--sort, --top and --csv apply to --by and --time");
    if (cli.grouped && cli.per_file)
        die_usage("count", "--by and --time print a count per group: not with --per-file");
    if (cli.grouped && cli.output != NULL && strcmp(cli.output, "-") == 0)
        die_usage("count", "with --by or --time, -o names a group file: not standard "
                           "output, where the counts go");
    if (cli.csv && cli.json)
        die_usage("count", "--csv or --json: not both");
    if (cli.window != 0)
        check_window_options(&cli);
    struct count_options opt = cli.opt;
    const char *output = cli.output;
    int threads = cli.threads, verbose = cli.verbose;

    int input_count;
    struct input *inputs = inputs_open(argv + operands, argc - operands, &input_count);
    uint64_t total = 0;
    for (int i = 0; i < input_count; i++)
        total += inputs[i].size;
    struct progress progress;
    progress_init(&progress, total, 256u << 20);
    if (inputs_interactive(inputs, input_count))
        progress.enabled = 0;
    if (cli.grouped) {
        struct group_options g = cli.groups;
        g.precision = opt.precision;
        g.split = opt.fields;
        g.every = cli.every;
        g.format = cli.csv ? FORMAT_CSV : cli.json ? FORMAT_JSON : FORMAT_TEXT;
        g.verbose = verbose;
        g.output = output;
        if (g.top != 0 && !cli.sort_given)
            g.sort = SORT_COUNT;
        int status = cli.window != 0
                         ? count_window(inputs, input_count, &g, cli.window)
                         : count_groups(inputs, input_count, threads, &g, &progress);
        inputs_close(inputs, input_count);
        return status;
    }

    uint64_t lines = 0, skipped = 0;
    sk_hll *all;
    if (cli.per_file) {
        if (sk_hll_new(&all, opt.precision) != SK_OK)
            die("out of memory");
        for (int i = 0; i < input_count; i++) {
            sk_hll *one = count_inputs(&inputs[i], 1, threads, &opt, &progress, &lines,
                                       &skipped);
            printf("%llu\t%s\n", (unsigned long long)sk_hll_count(one), inputs[i].name);
            if (sk_hll_merge(all, one) != SK_OK)
                die("out of memory");
            sk_hll_free(one);
        }
        if (input_count > 1)
            printf("%llu\ttotal\n", (unsigned long long)sk_hll_count(all));
    } else {
        all = count_inputs(inputs, input_count, threads, &opt, &progress, &lines, &skipped);
    }
    inputs_close(inputs, input_count);

    if (output != NULL) {
        int exists;
        int lock = lock_for_writing(output, 1, &exists);
        save_hll_or_die(all, SK_HLL_NATIVE, output);
        unlock_file(lock);
    }
    struct report r;
    if (cli.json) {
        report_begin(&r, stdout, 1);
        report_uint(&r, "count", sk_hll_count(all));
        report_uint(&r, "lines", lines);
        if (opt.fields.field != 0)
            report_uint(&r, "lines without field", skipped);
        report_estimate(&r, all);
        report_end(&r);
    } else if (!cli.per_file) {
        printf("%llu\n", (unsigned long long)sk_hll_count(all));
    }
    if (verbose && !cli.json) {
        report_begin(&r, stderr, 0);
        report_uint(&r, "lines", lines);
        if (opt.fields.field != 0)
            fprintf(stderr, "lines without field %u: %llu\n", opt.fields.field,
                    (unsigned long long)skipped);
        report_estimate(&r, all);
        report_end(&r);
    }
    sk_hll_free(all);
    return EXIT_OK;
}
