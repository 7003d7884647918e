/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_bench.c: micro-benchmarks of the HyperLogLog hot paths of libsketch.
 *
 * Every row is timed as R repeated runs (default 9) after one warm-up run;
 * each run performs a fixed number of operations, chosen by calibration so
 * that one run lasts at least the minimum run time (default 50 ms; the
 * calibration aims at twice that so noise cannot push a run below it). The
 * table shows the median and the minimum time per operation over the runs.
 *
 * Inputs are computed before any timing: 2^20 random 64-bit hashes and 2^20
 * random 16-byte items, both from a splitmix64 generator with a fixed seed.
 * The sketches being added to are made dense first (every input added once),
 * which is also the state a sketch is in for almost all of a long stream.
 * Results of every call are folded into a volatile sink, and the library is
 * a separate, non-LTO static library, so no call can be optimized away.
 *
 * This is a benchmark, not a test: it prints the targets beside the
 * measurements and always exits 0 unless it cannot run at all.
 *
 * Usage: hll_bench [-r RUNS] [-t MIN_RUN_MS]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sketch/hll_extra.h"


#define INPUT_COUNT (1u << 20) /* power of two: indices are masked */
#define ITEM_SIZE 16
/* Line-like items for one extra row: 32..47 bytes, the length varying at
 * random from item to item as the lines of a text file do. */
#define LINE_COUNT (1u << 18)
#define LINE_STRIDE 48


static int hll_is_sparse(const sk_hll *h)
{
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    return info.encoding == SK_HLL_SPARSE;
}


/* ---- inputs -------------------------------------------------------------- */

static sk_hll *new_sketch(unsigned precision)
{
    sk_hll *h;
    if (sk_hll_new(&h, precision) != SK_OK) {
        fprintf(stderr, "hll_bench: sk_hll_new(%u) failed\n", precision);
        exit(1);
    }
    return h;
}

/* A sketch holding `count` random hashes drawn from a generator seeded with
 * seed: dense for any count above the sparse limit (at most 4096). */
static sk_hll *filled_sketch(unsigned precision, uint64_t seed, uint32_t count)
{
    sk_hll *h = new_sketch(precision);
    for (uint32_t i = 0; i < count; i++)
        if (sk_hll_add_hash(h, splitmix64(&seed)) < 0) {
            fprintf(stderr, "hll_bench: out of memory\n");
            exit(1);
        }
    if (hll_is_sparse(h)) {
        fprintf(stderr, "hll_bench: sketch unexpectedly sparse\n");
        exit(1);
    }
    return h;
}

/* ---- the timed operations ------------------------------------------------ */

struct add_ctx {
    sk_hll *h;
    const uint64_t *hashes;
    const uint8_t *items;
    const uint8_t *lines;      /* LINE_COUNT items, LINE_STRIDE apart */
    const uint8_t *line_lens;
};

static void run_add_hash(void *arg, uint64_t iters)
{
    struct add_ctx *c = arg;
    uint64_t changed = 0;
    for (uint64_t i = 0; i < iters; i++)
        changed += (uint64_t)sk_hll_add_hash(c->h, c->hashes[i & (INPUT_COUNT - 1)]);
    sink += changed;
}

static void run_add_item(void *arg, uint64_t iters)
{
    struct add_ctx *c = arg;
    uint64_t changed = 0;
    for (uint64_t i = 0; i < iters; i++)
        changed += (uint64_t)sk_hll_add(c->h, c->items + (i & (INPUT_COUNT - 1)) * ITEM_SIZE,
                                        ITEM_SIZE);
    sink += changed;
}

static void run_add_line(void *arg, uint64_t iters)
{
    struct add_ctx *c = arg;
    uint64_t changed = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t k = i & (LINE_COUNT - 1);
        changed += (uint64_t)sk_hll_add(c->h, c->lines + k * LINE_STRIDE, c->line_lens[k]);
    }
    sink += changed;
}

static void run_count(void *arg, uint64_t iters)
{
    const sk_hll *h = arg;
    uint64_t total = 0;
    for (uint64_t i = 0; i < iters; i++) {
        total += sk_hll_count(h);
        __asm__ __volatile__("" ::: "memory"); /* recount every time */
    }
    sink += total;
}

struct merge_ctx {
    sk_hll *dst;
    const sk_hll *src;
};

static void run_merge(void *arg, uint64_t iters)
{
    struct merge_ctx *c = arg;
    uint64_t total = 0;
    for (uint64_t i = 0; i < iters; i++) {
        total += (uint64_t)(sk_hll_merge(c->dst, c->src) == SK_OK);
        __asm__ __volatile__("" ::: "memory");
    }
    sink += total;
}

/* ---- the harness ---------------------------------------------------------- */

static double time_run(void (*fn)(void *, uint64_t), void *ctx, uint64_t iters)
{
    double start = now_ns();
    fn(ctx, iters);
    return now_ns() - start;
}

struct result {
    double median, min;   /* in the row's unit per operation */
    double shortest_ms;   /* the shortest run, to show every run met the minimum */
    uint64_t iters;
};

static struct result measure(void (*fn)(void *, uint64_t), void *ctx, int runs,
                             double min_run_ns, double unit_ns)
{
    /* Calibrate: grow the count until one run takes twice the minimum. */
    uint64_t iters = 16;
    for (;;) {
        double t = time_run(fn, ctx, iters);
        if (t >= 2 * min_run_ns)
            break;
        double factor = t > 0 ? 2.2 * min_run_ns / t : 100;
        if (factor > 100)
            factor = 100;
        if (factor < 2)
            factor = 2;
        iters = (uint64_t)((double)iters * factor);
    }
    /* Warm-up; if the machine was slow during calibration, the count is too
     * small for the minimum run time, so grow it and warm up again. */
    for (;;) {
        double t = time_run(fn, ctx, iters);
        if (t >= 1.5 * min_run_ns)
            break;
        iters = (uint64_t)((double)iters * 2.2 * min_run_ns / (t > 0 ? t : 1));
    }

    double *per_op = xmalloc((size_t)runs * sizeof *per_op);
    struct result r = {0, 0, 1e300, iters};
    for (int i = 0; i < runs; i++) {
        double t = time_run(fn, ctx, iters);
        per_op[i] = t / (double)iters / unit_ns;
        if (t / 1e6 < r.shortest_ms)
            r.shortest_ms = t / 1e6;
    }
    qsort(per_op, (size_t)runs, sizeof *per_op, compare_double);
    r.median = runs % 2 ? per_op[runs / 2] : (per_op[runs / 2 - 1] + per_op[runs / 2]) / 2;
    r.min = per_op[0];
    free(per_op);
    return r;
}

/* ---- the header ------------------------------------------------------------ */

/* ---- main ------------------------------------------------------------------ */

struct row {
    const char *name;
    unsigned precision;
    const char *unit; /* "ns" or "us" */
    void (*fn)(void *, uint64_t);
    void *ctx;
    double target;     /* <= 0: none */
    const char *target_text;
};

static void usage(void)
{
    fputs("Usage: hll_bench [-r RUNS] [-t MIN_RUN_MS]\n"
          "  -r RUNS        timed runs per row, at least 7 (default 9)\n"
          "  -t MIN_RUN_MS  minimum duration of one run in ms, at least 50 (default 50)\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    int runs = 9;
    double min_run_ms = 50;
    int c;
    while ((c = getopt(argc, argv, "r:t:h")) != -1) {
        switch (c) {
        case 'r': runs = atoi(optarg); break;
        case 't': min_run_ms = atof(optarg); break;
        default: usage();
        }
    }
    if (optind != argc || runs < 7 || runs > 1000 || !(min_run_ms >= 50))
        usage();

    /* Inputs, all before any timing. */
    uint64_t seed = UINT64_C(0x5eed0f5e7c4b1a57);
    uint64_t *hashes = xmalloc(INPUT_COUNT * sizeof *hashes);
    uint8_t *items = xmalloc((size_t)INPUT_COUNT * ITEM_SIZE);
    for (uint32_t i = 0; i < INPUT_COUNT; i++)
        hashes[i] = splitmix64(&seed);
    for (uint32_t i = 0; i < INPUT_COUNT; i++) {
        uint64_t a = splitmix64(&seed), b = splitmix64(&seed);
        memcpy(items + (size_t)i * ITEM_SIZE, &a, 8);
        memcpy(items + (size_t)i * ITEM_SIZE + 8, &b, 8);
    }
    uint8_t *lines = xmalloc((size_t)LINE_COUNT * LINE_STRIDE);
    uint8_t *line_lens = xmalloc(LINE_COUNT);
    for (size_t i = 0; i < (size_t)LINE_COUNT * LINE_STRIDE; i += 8) {
        uint64_t a = splitmix64(&seed);
        memcpy(lines + i, &a, 8);
    }
    for (uint32_t i = 0; i < LINE_COUNT; i++)
        line_lens[i] = (uint8_t)(32 + (splitmix64(&seed) & 15));

    struct add_ctx add_hash14 = {new_sketch(14), hashes, items, lines, line_lens};
    struct add_ctx add_item14 = {new_sketch(14), hashes, items, lines, line_lens};
    struct add_ctx add_hash18 = {new_sketch(18), hashes, items, lines, line_lens};
    struct add_ctx add_item18 = {new_sketch(18), hashes, items, lines, line_lens};
    struct add_ctx add_line14 = {new_sketch(14), hashes, items, lines, line_lens};
    /* Make them dense with the very inputs they will see. */
    struct add_ctx *adds[] = {&add_hash14, &add_item14, &add_hash18, &add_item18};
    for (int k = 0; k < 4; k++) {
        for (uint32_t i = 0; i < INPUT_COUNT; i++) {
            int rc = k % 2 == 0 ? sk_hll_add_hash(adds[k]->h, hashes[i])
                                : sk_hll_add(adds[k]->h, items + (size_t)i * ITEM_SIZE,
                                             ITEM_SIZE);
            if (rc < 0) {
                fprintf(stderr, "hll_bench: out of memory\n");
                return 1;
            }
        }
        if (hll_is_sparse(adds[k]->h)) {
            fprintf(stderr, "hll_bench: sketch unexpectedly sparse\n");
            return 1;
        }
    }
    for (uint32_t i = 0; i < LINE_COUNT; i++)
        if (sk_hll_add(add_line14.h, lines + (size_t)i * LINE_STRIDE, line_lens[i]) < 0) {
            fprintf(stderr, "hll_bench: out of memory\n");
            return 1;
        }
    sk_hll *count14 = filled_sketch(14, 5, INPUT_COUNT);
    sk_hll *count18 = filled_sketch(18, 6, INPUT_COUNT);
    struct merge_ctx merge14 = {filled_sketch(14, 7, INPUT_COUNT),
                                filled_sketch(14, 8, INPUT_COUNT)};
    struct merge_ctx merge18 = {filled_sketch(18, 9, INPUT_COUNT),
                                filled_sketch(18, 10, INPUT_COUNT)};

    const struct row rows[] = {
        {"add precomputed hash (sk_hll_add_hash)", 14, "ns", run_add_hash, &add_hash14, 0, "-"},
        {"add 16-byte item, with hash (sk_hll_add)", 14, "ns", run_add_item, &add_item14, 5,
         "<= 5 ns"},
        {"add 32..47-byte item, length varies (*)", 14, "ns", run_add_line, &add_line14, 0,
         "-"},
        {"count, dense (sk_hll_count)", 14, "us", run_count, count14, 20, "<= 20 us"},
        {"merge two dense (sk_hll_merge)", 14, "us", run_merge, &merge14, 2, "<= 2 us"},
        {"add precomputed hash (sk_hll_add_hash)", 18, "ns", run_add_hash, &add_hash18, 0, "-"},
        {"add 16-byte item, with hash (sk_hll_add)", 18, "ns", run_add_item, &add_item18, 0,
         "-"},
        {"count, dense (sk_hll_count)", 18, "us", run_count, count18, 0, "-"},
        {"merge two dense (sk_hll_merge)", 18, "us", run_merge, &merge18, 0, "-"},
    };

    /* Let the CPU leave any low-power state before the first row. */
    for (double start = now_ns(); now_ns() - start < 300e6;)
        run_add_hash(&add_hash14, 1 << 16);

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("libsketch %s HyperLogLog micro-benchmarks\n", sk_version());
    printf("CPU:       %s (%ld online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    printf("Compiler:  %s, %s build, flags: %s\n", BENCH_COMPILER, BENCH_CONFIG_NAME,
           BENCH_FLAGS);
    printf("Timing:    CLOCK_MONOTONIC (resolution %ld ns); %d runs per row after 1 warm-up,\n"
           "           each run >= %.0f ms; median and min of the per-operation time\n",
           (long)res.tv_nsec, runs, min_run_ms);
    printf("Inputs:    %u random hashes / %u random %d-byte items (splitmix64), added once\n"
           "           before timing so every sketch is dense; count/merge sketches hold %u hashes\n\n",
           INPUT_COUNT, INPUT_COUNT, ITEM_SIZE, INPUT_COUNT);

    printf("%-42s %3s %6s %10s %10s %12s %9s %-10s %s\n", "operation", "p", "unit", "median",
           "min", "iters/run", "run>=ms", "target", "median vs target");
    printf("%-42s %3s %6s %10s %10s %12s %9s %-10s %s\n",
           "------------------------------------------", "---", "------", "----------",
           "----------", "------------", "---------", "----------", "----------------");
    fflush(stdout);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        double unit_ns = strcmp(r->unit, "us") == 0 ? 1e3 : 1;
        struct result m = measure(r->fn, r->ctx, runs, min_run_ms * 1e6, unit_ns);
        const char *verdict = r->target <= 0 ? "" : m.median <= r->target ? "met" : "MISSED";
        printf("%-42s %3u %6s %10.3f %10.3f %12llu %9.1f %-10s %s\n", r->name, r->precision,
               strcmp(r->unit, "us") == 0 ? "us/op" : "ns/op", m.median, m.min,
               (unsigned long long)m.iters, m.shortest_ms, r->target_text, verdict);
        fflush(stdout);
    }

    printf("\n(*) not a target: items shaped like the lines of count_bench.sh, whose length\n"
           "    varies from item to item, which defeats branch prediction in the hash.\n");
    for (int k = 0; k < 4; k++)
        sk_hll_free(adds[k]->h);
    sk_hll_free(add_line14.h);
    sk_hll_free(count14);
    sk_hll_free(count18);
    sk_hll_free(merge14.dst);
    sk_hll_free((sk_hll *)merge14.src);
    sk_hll_free(merge18.dst);
    sk_hll_free((sk_hll *)merge18.src);
    free(hashes);
    free(items);
    free(lines);
    free(line_lens);
    return 0;
}
