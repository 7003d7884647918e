/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_bench.c: the top-k sketch's library operations in nanoseconds, on
 * a Zipf stream (exponent 1.1 over 1,000,000 8-byte items, as heavy
 * hitters are): sk_topk_add of one sighting, sk_topk_query and
 * sk_topk_count, and sk_topk_list, for RedisBloom's default shape (k 10,
 * 8 x 7, where items collide and decay) and a wide one (k 50, 2000 x 7).
 * Medians of ROUNDS rounds, the shapes taking turns within each round.
 *
 *     topk_bench [-n ITEMS] [-r ROUNDS]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>

#include "bench_util.h"
#include "sketch.h"

#define MAX_ROUNDS 64
#define UNIVERSE 1000000
#define OPS 4

static void usage(void)
{
    fprintf(stderr, "usage: topk_bench [-n ITEMS] [-r ROUNDS]\n");
    exit(2);
}

/* n draws of a Zipf(1.1) distribution over UNIVERSE items, by inverting
 * its cumulative sums. */
static uint64_t *zipf_stream(uint64_t n, uint64_t seed)
{
    double *cdf = malloc(UNIVERSE * sizeof *cdf);
    uint64_t *out = malloc(n * sizeof *out);
    if (cdf == NULL || out == NULL) {
        fprintf(stderr, "topk_bench: out of memory\n");
        exit(1);
    }
    double sum = 0;
    for (int i = 0; i < UNIVERSE; i++)
        cdf[i] = (sum += pow(i + 1, -1.1));
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&seed) >> 11) * 0x1.0p-53 * sum;
        size_t lo = 0, hi = UNIVERSE - 1;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cdf[mid] < u)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = lo;
    }
    free(cdf);
    return out;
}

static void round_of(const sk_topk_options *o, const uint64_t *stream, uint64_t n, double *ns)
{
    sk_topk *t;
    if (sk_topk_create(&t, o) != SK_OK) {
        fprintf(stderr, "topk_bench: cannot make the sketch\n");
        exit(1);
    }
    uint64_t hits = 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < n; i++)
        hits += (uint64_t)sk_topk_add(t, &stream[i], sizeof stream[i], 1, NULL, NULL);
    double t1 = now_ns();
    for (uint64_t i = 0; i < n; i++)
        hits += (uint64_t)sk_topk_query(t, &stream[i], sizeof stream[i]);
    double t2 = now_ns();
    for (uint64_t i = 0; i < n; i++)
        hits += sk_topk_count(t, &stream[i], sizeof stream[i]);
    double t3 = now_ns();
    sk_topk_entry top[64];
    const int lists = 10000;
    for (int i = 0; i < lists; i++)
        hits += (uint64_t)sk_topk_list(t, top, 64);
    double t4 = now_ns();
    sink += hits;
    ns[0] = (t1 - t0) / (double)n;
    ns[1] = (t2 - t1) / (double)n;
    ns[2] = (t3 - t2) / (double)n;
    ns[3] = (t4 - t3) / lists;
    sk_topk_free(t);
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
    uint64_t *stream = zipf_stream(n, 42);
    const sk_topk_options shapes[2] = {{.k = 10}, {.k = 50, .width = 2000, .depth = 7}};
    static double v[2][OPS][MAX_ROUNDS];
    for (uint64_t r = 0; r < rounds; r++)
        for (int s = 0; s < 2; s++) {
            double ns[OPS];
            round_of(&shapes[s], stream, n, ns);
            for (int o = 0; o < OPS; o++)
                v[s][o][r] = ns[o];
        }
    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("topk_bench: %s, %s (%s) %s\n", cpu, BENCH_COMPILER, BENCH_CONFIG_NAME, BENCH_FLAGS);
    printf("%" PRIu64 " 8-byte items of a Zipf(1.1) stream over %d, %" PRIu64
           " rounds, medians\n\n", n, UNIVERSE, rounds);
    static const char *const names[] = {"add (1 sighting)", "query", "count", "list"};
    printf("%-20s %18s %22s\n", "operation", "ns, k 10, 8 x 7", "ns, k 50, 2000 x 7");
    for (int o = 0; o < OPS; o++)
        printf("%-20s %18.2f %22.2f\n", names[o], median_of(v[0][o], (int)rounds),
               median_of(v[1][o], (int)rounds));
    free(stream);
    return 0;
}
