/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_bench.c: the t-digest's library operations in nanoseconds:
 * sk_tdigest_add of exponential values (compressions included, at 100 and
 * 1000), sk_tdigest_quantiles and sk_tdigest_cdf of one value on a
 * compressed digest of a million values, and sk_tdigest_merge of one such
 * digest into another. Medians of ROUNDS rounds, the operations taking
 * turns within each round.
 *
 *     tdigest_bench [-n VALUES] [-r ROUNDS]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>

#include "bench_util.h"
#include "sketch.h"

static void usage(void)
{
    fprintf(stderr, "usage: tdigest_bench [-n VALUES] [-r ROUNDS]\n");
    exit(2);
}

#define MAX_ROUNDS 64

static double exponential(uint64_t *state)
{
    return -log1p(-(double)(splitmix64(state) >> 11) * 0x1p-53) * 100;
}

static sk_tdigest *make(uint32_t compression)
{
    sk_tdigest *t;
    if (sk_tdigest_new(&t, compression) != SK_OK) {
        fprintf(stderr, "tdigest_bench: cannot make a digest\n");
        exit(1);
    }
    return t;
}

/* ns per add of n values into a new digest. */
static double time_adds(uint32_t compression, uint64_t n, uint64_t seed)
{
    sk_tdigest *t = make(compression);
    uint64_t state = seed;
    double t0 = now_ns();
    for (uint64_t i = 0; i < n; i++)
        sk_tdigest_add(t, exponential(&state), 1);
    double t1 = now_ns();
    sk_tdigest_free(t);
    return (t1 - t0) / (double)n;
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
    sk_tdigest *full = make(100), *other = make(100);
    uint64_t state = 7;
    for (int i = 0; i < 1000000; i++) {
        sk_tdigest_add(full, exponential(&state), 1);
        sk_tdigest_add(other, exponential(&state), 1);
    }
    sk_tdigest_compress(full);
    sk_tdigest_compress(other);
    double v[5][MAX_ROUNDS];
    const int reads = 200000, merges = 2000;
    for (uint64_t r = 0; r < rounds; r++) {
        v[0][r] = time_adds(100, n, 10 + r);
        v[1][r] = time_adds(1000, n, 100 + r);
        double sum = 0, t0 = now_ns();
        for (int i = 0; i < reads; i++) {
            double q = (i % 1000) / 1000.0, out;
            sk_tdigest_quantiles(full, &q, &out, 1);
            sum += out;
        }
        double t1 = now_ns();
        for (int i = 0; i < reads; i++) {
            double x = (i % 1000) * 0.5, out;
            sk_tdigest_cdf(full, &x, &out, 1);
            sum += out;
        }
        double t2 = now_ns();
        for (int m = 0; m < merges; m++) {
            sk_tdigest *dst = make(100);
            sk_tdigest_merge(dst, full);
            sk_tdigest_merge(dst, other);
            sk_tdigest_free(dst);
        }
        double t3 = now_ns();
        sink += (uint64_t)sum;
        v[2][r] = (t1 - t0) / reads;
        v[3][r] = (t2 - t1) / reads;
        v[4][r] = (t3 - t2) / merges;
    }
    sk_tdigest_info info;
    sk_tdigest_get_info(full, &info);
    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("tdigest_bench: %s, %s (%s) %s\n", cpu, BENCH_COMPILER, BENCH_CONFIG_NAME,
           BENCH_FLAGS);
    printf("%" PRIu64 " values per add round, %" PRIu64 " rounds, medians; the read digest "
           "holds 1,000,000 values in %u centroids\n\n", n, rounds, info.merged_nodes);
    static const char *const names[] = {
        "add, compression 100",          "add, compression 1000",
        "quantile, 1 of 1M values",      "cdf, 1 of 1M values",
        "new digest + merge of 2 (1M values each)",
    };
    printf("%-42s %12s\n", "operation", "ns");
    for (int i = 0; i < 5; i++)
        printf("%-42s %12.2f\n", names[i], median_of(v[i], (int)rounds));
    sk_tdigest_free(full);
    sk_tdigest_free(other);
    return 0;
}
