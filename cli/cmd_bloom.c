/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_bloom.c: `sketch bloom`, Bloom filter files: create, add, check like
 * grep, describe and merge.
 *
 * Filters are opened by mapping the file, so checking a few items against a
 * filter of gigabytes reads a few pages; every change is written back
 * atomically. Lines from standard input go through the library's batch
 * calls, which keep many memory accesses in flight, and adds to a filter of
 * fixed size run on every core (its adds are thread-safe).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloom_io.h"
#include "commands.h"
#include "fields.h"
#include "report.h"
#include "file_lock.h"
#include "line_batch.h"
#include "lines.h"
#include "util.h"

static const char bloom_usage[] =
    "Usage: sketch bloom COMMAND [OPTION]... ARGS\n"
    "Bloom filter files: is an item in the set? 'maybe' or 'definitely not'.\n"
    "\n"
    "  create -n N -p P [OPTION]... FILE   a new filter for N items at false-positive rate P\n"
    "  add FILE [ITEM]...                  add ITEMs (or lines of standard input)\n"
    "  check [-v] [-c] FILE [ITEM]...      print the ITEMs (or lines) that may be in FILE\n"
    "  info [--verify] FILE                layout, sizes, items, false-positive rate\n"
    "  merge [--intersect] -o OUT FILE...  union (or intersection) of filters of one shape\n"
    "\n"
    "Run 'sketch bloom COMMAND --help' for the options of each. Exit status: 0 on\n"
    "success (for check: some line matched), 1 when check matched nothing, 2 on bad\n"
    "usage or bad input.\n";

static const char create_usage[] =
    "Usage: sketch bloom create -n N -p P [OPTION]... FILE\n"
    "Create an empty Bloom filter in FILE sized for N items at false-positive\n"
    "rate P, and print its bits (m), hashes (k) and size.\n"
    "\n"
    "  -n, --capacity N      items the filter is sized for (of a scalable filter:\n"
    "                        its first layer), e.g. 1000000 or 1e6\n"
    "  -p, --fp-rate P       false-positive rate, 1e-15..0.5 (e.g. 0.01)\n"
    "  -l, --layout L        auto (default: split from 2% down to about 5e-4 for\n"
    "                        large filters, where it costs at most 5% more memory\n"
    "                        than blocked; blocked above 2%; else classic),\n"
    "                        blocked (one cache line per item), split (one cache\n"
    "                        line and one bit in each of its 8 or 16 parts: the\n"
    "                        fastest, 2% more bits than blocked at 1%) or classic\n"
    "                        (fewest bits, k cache lines per item)\n"
    "  -s, --scalable        grow by adding layers when full\n"
    "  -e, --expansion E     growth factor of a scalable filter (default 2)\n"
    "  -f, --force           replace FILE if it exists\n"
    "      --no-wait         fail (exit 2) instead of waiting while another command\n"
    "                        writes FILE\n"
    "  -h, --help            show this help\n"
    "Example:\n"
    "  sketch bloom create -n 100000000 -p 0.01 urls.bloom\n";

static const char add_usage[] =
    "Usage: sketch bloom add [OPTION]... FILE [ITEM]...\n"
    "Add the ITEMs, or else every line of standard input, to the filter in FILE.\n"
    "Every argument after FILE is an item. Print, on standard error with -v, how\n"
    "many were new.\n"
    "\n"
    "  -f, --field N   add the N-th field of each line (from 1); lines with fewer\n"
    "                  fields are skipped\n"
    "  -d, --delimiter C  field delimiter, one byte (default: tab)\n"
    "  -w, --whitespace   fields are separated by runs of blanks, as in awk\n"
    "  -v, --verbose   report how many items were new\n"
    "  -j, --threads N threads adding lines (default 1; scalable filters\n"
    "                  always use one)\n"
    "      --raw       read gzip, zstd or xz input as it is, not decompressed\n"
    "      --max-line-length BYTES\n"
    "                  a longer line is an error; the lines before it are added\n"
    "                  (default 256M; K, M and G are KiB, MiB and GiB)\n"
    "      --no-wait   fail (exit 2) instead of waiting while another command\n"
    "                  writes FILE\n"
    "  -h, --help      show this help\n"
    "Several commands may add to one FILE at once: each waits for the one before.\n"
    "FILE is changed in place: an add reads and writes the 64 KiB chunks its items\n"
    "fall in, each checked against its checksum first, and refuses a damaged one\n"
    "(exit 2). If an add is killed, the items it had added stay, and the next add\n"
    "writes the checksums it left undone.\n"
    "Example:\n"
    "  zcat bad-urls.txt.gz | sketch bloom add urls.bloom\n"
    "  sketch bloom add -w -f 1 clients.bloom < access.log\n";

static const char check_usage[] =
    "Usage: sketch bloom check [OPTION]... FILE [ITEM]...\n"
    "Print each ITEM (or line of standard input) that may be in the filter in\n"
    "FILE, like grep. Exit status 0 if any was printed, 1 if none, 2 on error.\n"
    "Options come before FILE; every argument after FILE is an item.\n"
    "\n"
    "  -f, --field N  check the N-th field of each line (from 1), and print the\n"
    "                 whole line, as grep does; a line without it is absent\n"
    "  -d, --delimiter C  field delimiter, one byte (default: tab)\n"
    "  -w, --whitespace   fields are separated by runs of blanks, as in awk\n"
    "  -v, --invert   print the items that are definitely not in the filter\n"
    "  -c, --count    print only the number of items that would be printed\n"
    "      --json     with -c: {\"matched\": N, \"checked\": M} instead\n"
    "      --raw      read gzip, zstd or xz input as it is, not decompressed\n"
    "      --max-line-length BYTES\n"
    "                 a longer line is an error (default 256M; K, M and G are\n"
    "                 KiB, MiB and GiB)\n"
    "  -h, --help     show this help\n"
    "Example:\n"
    "  sketch bloom check -v urls.bloom < keys.txt   # keys certainly absent\n";

static const char info_usage[] =
    "Usage: sketch bloom info [--verify] [--json] FILE\n"
    "Describe the filter in FILE, one 'name: value' per line. The estimate of\n"
    "the items from the bits set reads the whole filter; --verify also checks\n"
    "the checksums of its bit arrays; --json prints one JSON object instead.\n"
    "Example:\n"
    "  sketch bloom info --verify urls.bloom\n";

static const char merge_usage[] =
    "Usage: sketch bloom merge [--intersect] -o OUT FILE...\n"
    "Write to OUT the union (or with --intersect the intersection) of the filters\n"
    "in the FILEs, which must have the same layout, bits and hashes.\n"
    "\n"
    "  -o, --output OUT   the file to write (required; may be one of the FILEs)\n"
    "  -i, --intersect    intersection instead of union\n"
    "  -h, --help         show this help\n"
    "Example:\n"
    "  sketch bloom merge -o all.bloom shard1.bloom shard2.bloom\n";

/* The layouts by name, as -l takes them and info prints them. */
static const char *const layout_names[] = {[SK_BLOOM_BLOCKED] = "blocked",
                                           [SK_BLOOM_CLASSIC] = "classic",
                                           [SK_BLOOM_AUTO] = "auto",
                                           [SK_BLOOM_SPLIT] = "split"};

static double parse_rate(const char *text)
{
    char *end;
    errno = 0;
    /* A decimal number: strtod alone would also take spaces, hex and "inf". */
    int decimal = text[0] != '\0' && strspn(text, "0123456789.eE+-") == strlen(text);
    double p = strtod(text, &end);
    if (!decimal || *end != '\0' || errno != 0 || !(p >= SK_BLOOM_MIN_FP_RATE) ||
        !(p <= SK_BLOOM_MAX_FP_RATE))
        die("the false-positive rate must be a number from 1e-15 to 0.5, not '%s'", text);
    return p;
}

static sk_bloom_info report_shape(struct report *r, const sk_bloom *f)
{
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    report_string(r, "layout", layout_names[info.layout]);
    report_uint(r, "bits", info.bits);
    report_uint(r, "hashes", info.hashes);
    report_bytes(r, "bit arrays", (double)info.array_bytes);
    return info;
}

/* What the options of the bloom subcommands set. */
struct bloom_options {
    uint64_t capacity;
    double fp_rate;
    sk_bloom_layout layout;
    int scalable, force, verbose, invert, count_only, intersect, verify, json;
    struct field_spec fields;
    unsigned expansion;
    int threads;
    const char *output;
};

/* What one option does to the options of a bloom subcommand. */
struct bloom_parse {
    const char *cmd;
    struct bloom_options *o;
    int expansion_given;
};

static void bloom_option(void *ctx, int c, const char *value, const char *long_name)
{
    struct bloom_parse *p = ctx;
    struct bloom_options *o = p->o;
    /* -v is --verbose for add and --invert for check: each long name is
     * accepted only by the subcommand it belongs to. */
    if (c == 'v' && long_name != NULL &&
        strcmp(long_name, strcmp(p->cmd, "bloom check") == 0 ? "invert" : "verbose") != 0)
        die_usage(p->cmd, "unknown option '--%s'", long_name);
    switch (c) {
    case 'n': o->capacity = parse_uint(value, "capacity", 1, UINT64_C(1) << 50); break;
    case 'p': o->fp_rate = parse_rate(value); break;
    case 'l':
        for (size_t i = 0;; i++) {
            if (i == sizeof layout_names / sizeof layout_names[0])
                die_usage(p->cmd, "the layout is 'auto', 'blocked', 'classic' or 'split', "
                                  "not '%s'", value);
            if (strcmp(value, layout_names[i]) == 0) {
                o->layout = (sk_bloom_layout)i;
                break;
            }
        }
        break;
    case 's': o->scalable = 1; break;
    case 'e':
        o->expansion = (unsigned)parse_uint(value, "expansion", 1, SK_BLOOM_MAX_EXPANSION);
        p->expansion_given = 1;
        break;
    case 'f':
        /* -f is --force for create and --field for add and check. */
        if (strcmp(p->cmd, "bloom create") == 0) {
            if (long_name != NULL && strcmp(long_name, "force") != 0)
                die_usage(p->cmd, "unknown option '--%s'", long_name);
            o->force = 1;
        } else {
            if (long_name != NULL && strcmp(long_name, "field") != 0)
                die_usage(p->cmd, "unknown option '--%s'", long_name);
            field_option(&o->fields, c, value, p->cmd);
        }
        break;
    case 'd':
    case 'w': field_option(&o->fields, c, value, p->cmd); break;
    case 'v': o->verbose = o->invert = 1; break;
    case 'c': o->count_only = 1; break;
    case 'o': o->output = value; break;
    case 'i': o->intersect = 1; break;
    case 'j': o->threads = (int)parse_uint(value, "threads", 1, 256); break;
    case 'V': o->verify = 1; break;
    case 'J': o->json = 1; break;
    }
}

static int parse_bloom_options(const char *cmd, const char *usage, const char *optstring,
                               int argc, char **argv, struct bloom_options *o)
{
    static const struct option longopts[] = {
        {"capacity", required_argument, NULL, 'n'},
        {"fp-rate", required_argument, NULL, 'p'},
        {"layout", required_argument, NULL, 'l'},
        {"scalable", no_argument, NULL, 's'},
        {"expansion", required_argument, NULL, 'e'},
        {"force", no_argument, NULL, 'f'},
        FIELD_LONG_OPTIONS,
        {"verbose", no_argument, NULL, 'v'},
        {"invert", no_argument, NULL, 'v'},
        {"count", no_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"intersect", no_argument, NULL, 'i'},
        {"threads", required_argument, NULL, 'j'},
        {"verify", no_argument, NULL, 'V'},
        {"json", no_argument, NULL, 'J'},
        {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->layout = SK_BLOOM_AUTO;
    o->fields.delimiter = '\t';
    o->expansion = 2;
    struct bloom_parse p = {cmd, o, 0};
    const struct cli_spec spec = {cmd, usage, optstring, longopts};
    int first = parse_options(&spec, argc, argv, bloom_option, &p);
    if (p.expansion_given && !o->scalable)
        die_usage(cmd, "--expansion applies to scalable filters (--scalable)");
    return first;
}

static int bloom_create(int argc, char **argv)
{
    struct bloom_options o;
    int first = parse_bloom_options("bloom create", create_usage, ":n:p:l:se:fhW", argc,
                                    argv, &o);
    if (o.capacity == 0)
        die_usage("bloom create", "missing -n CAPACITY");
    if (o.fp_rate == 0)
        die_usage("bloom create", "missing -p FP_RATE");
    require_files("bloom create", first, argc, 1);
    const char *path = argv[first];
    int exists, lock = lock_for_writing(path, 1, &exists);
    if (!o.force && exists)
        die("%s: already exists (use --force to replace it)", path);
    sk_bloom *f;
    sk_bloom_options options = {.capacity = o.capacity, .fp_rate = o.fp_rate,
                                .layout = o.layout, .expansion = o.scalable ? o.expansion : 0};
    int rc = sk_bloom_create(&f, &options);
    if (rc == SK_ETOOLARGE)
        die("a filter for %llu items at rate %g would exceed 2^48 bits",
            (unsigned long long)o.capacity, o.fp_rate);
    sk_bloom_layer planned;
    if (rc == SK_ENOMEM && sk_bloom_plan(&options, 0, &planned) == SK_OK)
        die("a filter for %llu items at rate %g takes %llu bytes (%.1f GiB) of bits, more "
            "memory than could be had",
            (unsigned long long)o.capacity, o.fp_rate, (unsigned long long)planned.bytes,
            (double)planned.bytes / (1u << 30));
    if (rc != SK_OK)
        die("cannot create the filter: %s", sk_strerror(rc));
    bloom_save_or_die(f, path);
    unlock_file(lock);
    struct report r;
    report_begin(&r, stdout, 0);
    report_shape(&r, f);
    report_end(&r);
    sk_bloom_free(f);
    return EXIT_OK;
}

/* ---- adding lines --------------------------------------------------------- */

/* Items a batch call of the filter takes at once: enough to keep as many
 * cache misses in flight as a core has room for. */
#define BLOOM_BATCH 64

struct add_worker {
    sk_bloom *filter;
    pthread_mutex_t *writer; /* held for each batch's add: one writer at a time */
    const struct field_spec *fields;
    uint64_t skipped; /* lines without the field */
    uint64_t new_items;
    struct line_batch batch; /* its error, a status of the library */
};

/* Each thread's worker starts as a copy of the shared one. */
static void *add_worker_init(void *shared, int thread)
{
    (void)thread;
    struct add_worker *w = malloc(sizeof *w);
    if (w == NULL)
        die("out of memory");
    *w = *(const struct add_worker *)shared;
    return w;
}

/* A line without the field is skipped, and counted as such. */
static inline int add_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    struct add_worker *w = ctx;
    if (select_field(w->fields, &line, &len))
        line_batch_push(b, line, len);
    else
        w->skipped++;
    return 0;
}

static int add_flush(void *ctx, struct line_batch *b)
{
    struct add_worker *w = ctx;
    sk_bloom_hash hashes[BLOOM_BATCH];
    uint8_t added[BLOOM_BATCH];
    /* The threads hash in parallel and take turns to set bits, as the
     * filter's one writer at a time: plain stores, which cost a third of
     * the locked ORs that concurrent writers would need. */
    for (size_t i = 0; i < b->count; i++)
        hashes[i] = sk_bloom_hash_bytes(b->items[i], b->lens[i]);
    pthread_mutex_lock(w->writer);
    int rc = sk_bloom_add_hash_batch(w->filter, hashes, b->count, added);
    pthread_mutex_unlock(w->writer);
    if (rc != SK_OK)
        return rc;
    for (size_t i = 0; i < b->count; i++)
        w->new_items += added[i];
    return 0;
}

static int add_lines(void *ctx, const char *data, size_t len)
{
    struct add_worker *w = ctx;
    return line_batch_block(&w->batch, data, len, add_take, add_flush, w) != 0;
}

static int bloom_add(int argc, char **argv)
{
    struct bloom_options o;
    int first = parse_bloom_options("bloom add", add_usage, "+:f:d:wvj:hWRL:", argc, argv, &o);
    require_files("bloom add", first, argc, 0);
    const char *path = argv[first];
    int exists, lock = lock_for_writing(path, 0, &exists);
    /* In place, each chunk is checked before it first changes; a file of
     * the format before chunk sums is checked whole, then rewritten in the
     * new one: new checksums would otherwise hide damage. */
    sk_bloom *f = bloom_open_or_die(path, SK_BLOOM_IN_PLACE);
    int in_place = f != NULL;
    if (!in_place)
        f = bloom_open_or_die(path, SK_BLOOM_VERIFY);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    if (info.interrupted_chunks != 0)
        warn("%s: an earlier add was interrupted; the %llu chunks it was changing are "
             "checksummed again", path, (unsigned long long)info.interrupted_chunks);
    uint64_t new_items = 0, skipped = 0;
    if (first + 1 < argc) {
        for (int i = first + 1; i < argc; i++) {
            int rc = sk_bloom_add(f, argv[i], strlen(argv[i]));
            if (rc < 0)
                bloom_fail_add(f, in_place, path, rc);
            new_items += (uint64_t)rc;
        }
    } else {
        char *stdin_name[] = {"-"};
        int count;
        struct input *in = inputs_open(stdin_name, 1, &count);
        struct progress progress;
        progress_init(&progress, in[0].size - in[0].start, 256u << 20);
        if (inputs_interactive(in, count))
            progress.enabled = 0;
        /* One thread by default: the bits are set by one writer at a time,
         * and on 2 cores two threads taking turns ran 1.5-1.8x slower than
         * one (3.3M and 20M lines, docs/benchmarks.md). */
        int threads = info.expansion != 0 || o.threads == 0 ? 1 : o.threads;
        pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
        struct add_worker shared = {.filter = f, .writer = &writer, .fields = &o.fields,
                                    .batch.size = BLOOM_BATCH};
        struct lines_run run;
        int err = lines_read_parallel(in, count, threads, add_worker_init, &shared, add_lines,
                                      &progress, &run);
        inputs_close(in, count);
        for (int t = 0; t < run.threads; t++) {
            struct add_worker *w = run.contexts[t];
            if (w->batch.error != 0)
                bloom_fail_add(f, in_place, path, w->batch.error);
            new_items += w->new_items;
            skipped += w->skipped;
            free(w);
        }
        free(run.contexts);
        if (err != 0) {
            if (in_place && sk_bloom_sync(f) == SK_OK)
                die("standard input: %s; the lines before it were added (adding them again "
                    "does no harm)", lines_strerror(err));
            die("standard input: %s", lines_strerror(err));
        }
    }
    if (in_place)
        bloom_sync_or_die(f, path);
    else
        bloom_save_or_die(f, path);
    /* Closed before the lock goes: the next writer's open in place needs the
     * file's writer lock (sketch/bloom.h) free. */
    sk_bloom_free(f);
    unlock_file(lock);
    if (o.verbose) {
        fprintf(stderr, "new items: %llu\n", (unsigned long long)new_items);
        if (o.fields.field != 0)
            fprintf(stderr, "lines without field %u: %llu\n", o.fields.field,
                    (unsigned long long)skipped);
    }
    return EXIT_OK;
}

/* ---- checking ----------------------------------------------------------- */

struct checker {
    const sk_bloom *filter;
    const struct field_spec *fields;
    int invert, count_only;
    const char *lines[BLOOM_BATCH]; /* printed whole, as grep prints */
    size_t line_lens[BLOOM_BATCH];
    uint8_t no_field[BLOOM_BATCH];  /* a line without the field is not in the filter */
    uint64_t matched, checked;
    struct line_batch batch;
};

/* Every line is pushed, to be printed in order: one without the field as
 * it is, to be found absent. */
static inline int check_take(void *ctx, struct line_batch *b, const char *line, size_t len)
{
    struct checker *c = ctx;
    c->lines[b->count] = line;
    c->line_lens[b->count] = len;
    c->no_field[b->count] = !select_field(c->fields, &line, &len);
    line_batch_push(b, line, len);
    return 0;
}

static int check_flush(void *ctx, struct line_batch *b)
{
    struct checker *c = ctx;
    uint8_t found[BLOOM_BATCH];
    sk_bloom_contains_batch(c->filter, b->items, b->lens, b->count, found);
    c->checked += b->count;
    for (size_t i = 0; i < b->count; i++) {
        if ((found[i] != 0 && !c->no_field[i]) == !c->invert) {
            c->matched++;
            if (!c->count_only) {
                fwrite(c->lines[i], 1, c->line_lens[i], stdout);
                putchar('\n');
            }
        }
    }
    return 0;
}

static int check_lines(void *ctx, const char *data, size_t len)
{
    struct checker *c = ctx;
    return line_batch_block(&c->batch, data, len, check_take, check_flush, c);
}

static int bloom_check(int argc, char **argv)
{
    struct bloom_options o;
    int first = parse_bloom_options("bloom check", check_usage, "+:f:d:wvchRJL:", argc, argv, &o);
    require_files("bloom check", first, argc, 0);
    struct checker c = {0};
    /* Mapped: checking a few items reads a few pages of a large filter. */
    c.filter = bloom_open_or_die(argv[first], SK_BLOOM_MAP);
    c.fields = &o.fields;
    c.invert = o.invert;
    c.count_only = o.count_only;
    c.batch.size = BLOOM_BATCH;
    if (o.json && !o.count_only)
        die_usage("bloom check", "--json goes with -c: the lines themselves are printed as they are");
    static char out_buf[1 << 16];
    setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    if (first + 1 < argc) {
        for (int i = first + 1; i < argc; i++)
            line_batch_line(&c.batch, argv[i], strlen(argv[i]), check_take, check_flush, &c);
        line_batch_end(&c.batch, check_flush, &c);
    } else {
        /* In order, and without a progress bar: the output shares the terminal. */
        int err = lines_read_stdin(check_lines, &c);
        if (err != 0)
            die("standard input: %s", lines_strerror(err));
    }
    if (c.count_only && o.json)
        printf("{\"matched\": %llu, \"checked\": %llu}\n", (unsigned long long)c.matched,
               (unsigned long long)c.checked);
    else if (c.count_only)
        printf("%llu\n", (unsigned long long)c.matched);
    if (fflush(stdout) != 0)
        die("standard output: %s", strerror(errno));
    sk_bloom_free((sk_bloom *)c.filter);
    return c.matched > 0 ? EXIT_OK : EXIT_NO_MATCH;
}

/* ---- info and merge --------------------------------------------------------- */

static int bloom_info(int argc, char **argv)
{
    struct bloom_options o;
    int first = parse_bloom_options("bloom info", info_usage, ":VJh", argc, argv, &o);
    require_files("bloom info", first, argc, 1);
    sk_bloom *f = bloom_open_or_die(argv[first], SK_BLOOM_MAP | (o.verify ? SK_BLOOM_VERIFY : 0));
    struct report r;
    report_begin(&r, stdout, o.json);
    sk_bloom_info info = report_shape(&r, f);
    report_uint(&r, "capacity", info.capacity);
    if (info.fp_rate > 0)
        report_double(&r, "requested fp rate", "%g", info.fp_rate);
    report_uint(&r, "items", info.count);
    report_uint(&r, "estimated items", sk_bloom_estimate_items(f));
    report_double(&r, "expected fp rate now", "%.3g", sk_bloom_expected_fp_rate(f, info.count));
    report_double(&r, "expected fp rate at capacity", "%.3g",
                  sk_bloom_expected_fp_rate(f, info.capacity));
    report_double(&r, "bits per item at capacity", "%.2f",
                  (double)info.bits / (double)info.capacity);
    report_uint(&r, "layers", info.layers);
    if (info.expansion != 0)
        report_uint(&r, "expansion", info.expansion);
    /* Chunks an add in place is changing, or was when it was interrupted:
     * their sums are written when it finishes, or by the next add. */
    if (info.interrupted_chunks != 0)
        report_uint(&r, "chunks of an unfinished add", info.interrupted_chunks);
    if (o.verify)
        report_string(&r, "checksums", "ok");
    report_end(&r);
    sk_bloom_free(f);
    return EXIT_OK;
}

static int bloom_merge(int argc, char **argv)
{
    struct bloom_options o;
    int first = parse_bloom_options("bloom merge", merge_usage, ":o:ihW", argc, argv, &o);
    if (o.output == NULL)
        die_usage("bloom merge", "missing -o OUT");
    require_files("bloom merge", first, argc, 0);
    /* A missing input is named as such, not found empty once OUT, which
     * may be one of the inputs, has been created to be locked. */
    require_readable(argv + first, argc - first);
    int exists, lock = lock_for_writing(o.output, 1, &exists);
    sk_bloom *result = bloom_open_or_die(argv[first], SK_BLOOM_VERIFY);
    for (int i = first + 1; i < argc; i++) {
        sk_bloom *f = bloom_open_or_die(argv[i], SK_BLOOM_VERIFY);
        int rc = o.intersect ? sk_bloom_intersect(result, f) : sk_bloom_merge(result, f);
        sk_bloom_free(f);
        if (rc != SK_OK)
            sk_bloom_free(result); /* the message names the files, not the filters */
        if (rc == SK_EINCOMPAT)
            die("%s: a different layout, size or number of hashes than %s", argv[i],
                argv[first]);
        if (rc != SK_OK)
            die("%s: %s", argv[i], sk_strerror(rc));
    }
    bloom_save_or_die(result, o.output);
    unlock_file(lock);
    sk_bloom_free(result);
    return EXIT_OK;
}

int cmd_bloom(int argc, char **argv)
{
    static const struct subcommand commands[] = {
        {"create", bloom_create}, {"add", bloom_add},     {"check", bloom_check},
        {"info", bloom_info},     {"merge", bloom_merge},
    };
    return run_subcommand("bloom", bloom_usage, commands, sizeof commands / sizeof commands[0], argc,
                          argv);
}
