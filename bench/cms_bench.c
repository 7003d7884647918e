/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cms_bench.c: the count-min sketch's library operations in nanoseconds:
 * sk_cms_add (a count of 1) and sk_cms_count of 8-byte items, on a sketch
 * that stays in cache (CMS.INITBYPROB 0.001 0.01: 2000 x 7, 56 KB) and on
 * one that does not (2^22 x 7, 112 MiB), and sk_cms_merge_weighted of two
 * sketches into a third, per counter. Medians of ROUNDS rounds, the
 * operations taking turns within each round.
 *
 *     cms_bench [-n ITEMS] [-r ROUNDS]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "bench_util.h"
#include "sketch.h"

static void usage(void)
{
    fprintf(stderr, "usage: cms_bench [-n ITEMS] [-r ROUNDS]\n");
    exit(2);
}

#define MAX_ROUNDS 64

/* ns per add and per count of n distinct 8-byte items. */
static void time_ops(sk_cms *c, uint64_t n, uint64_t seed, double *add_ns, double *count_ns)
{
    uint64_t state = seed, sum = 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t item = splitmix64(&state);
        sk_cms_add(c, &item, sizeof item, 1, NULL);
    }
    double t1 = now_ns();
    state = seed;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t item = splitmix64(&state);
        sum += sk_cms_count(c, &item, sizeof item);
    }
    double t2 = now_ns();
    sink += sum;
    *add_ns = (t1 - t0) / (double)n;
    *count_ns = (t2 - t1) / (double)n;
}

static sk_cms *make(uint32_t width, uint32_t depth)
{
    sk_cms *c;
    if (sk_cms_new(&c, width, depth) != SK_OK) {
        fprintf(stderr, "cms_bench: cannot make a %u x %u sketch\n", width, depth);
        exit(1);
    }
    return c;
}

int main(int argc, char **argv)
{
    uint64_t n = 2000000, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = bench_parse_u64(argv[++i], usage);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = bench_parse_u64(argv[++i], usage);
        else
            usage();
    }
    if (n == 0 || rounds == 0 || rounds > MAX_ROUNDS)
        usage();
    sk_cms *small = make(2000, 7), *large = make(1u << 22, 7);
    sk_cms *a = make(2000, 7), *b = make(2000, 7), *dst = make(2000, 7);
    time_ops(a, 200000, 1, &(double){0}, &(double){0});
    time_ops(b, 200000, 2, &(double){0}, &(double){0});
    const sk_cms *srcs[2] = {a, b};
    const int64_t weights[2] = {2, 1};
    double v[6][MAX_ROUNDS];
    for (uint64_t r = 0; r < rounds; r++) {
        time_ops(small, n, 10 + r, &v[0][r], &v[1][r]);
        time_ops(large, n, 100 + r, &v[2][r], &v[3][r]);
        const int merges = 2000;
        double t0 = now_ns();
        for (int m = 0; m < merges; m++)
            sk_cms_merge(dst, a); /* dst + a: fits, a's counts are small */
        double t1 = now_ns();
        for (int m = 0; m < merges; m++)
            sk_cms_merge_weighted(dst, srcs, weights, 2);
        double t2 = now_ns();
        v[4][r] = (t1 - t0) / merges / (2000.0 * 7);
        v[5][r] = (t2 - t1) / merges / (2000.0 * 7);
    }
    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("cms_bench: %s, %s (%s) %s\n", cpu, BENCH_COMPILER, BENCH_CONFIG_NAME, BENCH_FLAGS);
    printf("%" PRIu64 " distinct 8-byte items per operation and round, %" PRIu64
           " rounds, medians\n\n", n, rounds);
    static const char *const names[] = {
        "add, 2000 x 7 (56 KB)",        "count, 2000 x 7 (56 KB)",
        "add, 2^22 x 7 (112 MiB)",      "count, 2^22 x 7 (112 MiB)",
        "merge of 2 (dst + a), per counter", "weighted merge of 2, per counter",
    };
    printf("%-36s %10s\n", "operation", "ns");
    for (int i = 0; i < 6; i++)
        printf("%-36s %10.2f\n", names[i], median_of(v[i], (int)rounds));
    sk_cms_free(small);
    sk_cms_free(large);
    sk_cms_free(a);
    sk_cms_free(b);
    sk_cms_free(dst);
    return 0;
}
