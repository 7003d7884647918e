/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuckoo_bench.c: the Cuckoo filter's library operations in nanoseconds,
 * and how full it gets. Timed, on 8-byte items, for a filter that stays in
 * cache (2^15 buckets of 2, 64 KB) and one that does not (2^27 buckets,
 * 256 MiB), each filled to half its slots: sk_cuckoo_add, sk_cuckoo_contains
 * of present and of absent items one call at a time, sk_cuckoo_contains_many
 * in batches of 64, and sk_cuckoo_delete. Medians of ROUNDS rounds, the
 * operations taking turns within each round. Then the load table: fixed
 * filters of 2^16 buckets of b = 1, 2, 4 and 8 slots filled item by item,
 * the load at the first refused add, the load when every slot has been
 * tried, and the false-positive rate of 2,000,000 absent items there.
 *
 *     cuckoo_bench [-r ROUNDS]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "bench_util.h"
#include "sketch.h"

#define MAX_ROUNDS 64
#define BATCH 64
#define OPS 7

static void usage(void)
{
    fprintf(stderr, "usage: cuckoo_bench [-r ROUNDS]\n");
    exit(2);
}

static sk_cuckoo *make(uint64_t buckets, uint32_t b)
{
    sk_cuckoo *c;
    sk_cuckoo_options o = {.capacity = buckets * b, .bucket_size = b};
    if (sk_cuckoo_create(&c, &o) != SK_OK) {
        fprintf(stderr, "cuckoo_bench: cannot make a filter of %" PRIu64 " buckets\n", buckets);
        exit(1);
    }
    return c;
}

/* Items seed.. as 8-byte keys: the i-th of a round's stream. */
static uint64_t key(uint64_t seed, uint64_t i)
{
    uint64_t s = seed * UINT64_C(0x100000000) + i;
    return splitmix64(&s);
}

/* One round on a fresh filter: ns per add, present, absent, batched
 * present and absent, and delete. */
static void round_of(uint64_t buckets, uint64_t seed, double *ns)
{
    sk_cuckoo *c = make(buckets, 2);
    const uint64_t n = buckets; /* half of the 2 x buckets slots */
    uint64_t hits = 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(seed, i);
        hits += (uint64_t)sk_cuckoo_add(c, &k, sizeof k);
    }
    double t1 = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(seed, i);
        hits += (uint64_t)sk_cuckoo_contains(c, &k, sizeof k);
    }
    double t2 = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(seed + 1000, i);
        hits += (uint64_t)sk_cuckoo_contains(c, &k, sizeof k);
    }
    double t3 = now_ns();
    uint64_t keys[BATCH];
    const void *items[BATCH];
    size_t lens[BATCH];
    uint8_t out[BATCH];
    double batched[2];
    for (int absent = 0; absent < 2; absent++) {
        double s0 = now_ns();
        for (uint64_t at = 0; at + BATCH <= n; at += BATCH) {
            for (int j = 0; j < BATCH; j++) {
                keys[j] = key(seed + (uint64_t)absent * 1000, at + (uint64_t)j);
                items[j] = &keys[j];
                lens[j] = sizeof keys[j];
            }
            sk_cuckoo_contains_many(c, items, lens, BATCH, out);
            hits += out[0];
        }
        batched[absent] = (now_ns() - s0) / (double)(n - n % BATCH);
    }
    double t4 = now_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = key(seed, i);
        hits += (uint64_t)sk_cuckoo_delete(c, &k, sizeof k);
    }
    double t5 = now_ns();
    sink += hits;
    double d = (double)n;
    double v[OPS] = {(t1 - t0) / d, (t2 - t1) / d, (t3 - t2) / d, batched[0], batched[1],
                     (t5 - t4) / d, 0};
    memcpy(ns, v, sizeof v);
    sk_cuckoo_free(c);
}

static void load_table(void)
{
    printf("\n%-6s %22s %12s %16s %14s\n", "b", "load at first refusal", "final load",
           "false positives", "2b load / 255");
    const uint32_t sizes[] = {1, 2, 4, 8};
    const uint64_t buckets = 1 << 16;
    for (int s = 0; s < 4; s++) {
        uint32_t b = sizes[s];
        sk_cuckoo *c = make(buckets, b);
        uint64_t slots = buckets * b, added = 0, first = 0, fp = 0;
        for (uint64_t i = 0; i < slots; i++) {
            uint64_t k = key(7, i);
            if (sk_cuckoo_add(c, &k, sizeof k) == 1)
                added++;
            else if (first == 0)
                first = added;
        }
        const uint64_t queries = 2000000;
        for (uint64_t i = 0; i < queries; i++) {
            uint64_t k = key(8, i);
            fp += (uint64_t)sk_cuckoo_contains(c, &k, sizeof k);
        }
        double load = (double)added / (double)slots;
        printf("%-6u %21.1f%% %11.1f%% %15.2f%% %13.2f%%\n", b, 100.0 * (double)first / (double)slots,
               100 * load, 100.0 * (double)fp / queries, 100 * 2.0 * b * load / 255);
        sk_cuckoo_free(c);
    }
}

int main(int argc, char **argv)
{
    uint64_t rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = bench_parse_u64(argv[++i], usage);
        else
            usage();
    }
    if (rounds == 0 || rounds > MAX_ROUNDS)
        usage();
    static double v[2][OPS][MAX_ROUNDS];
    const uint64_t sizes[2] = {1 << 15, 1 << 27};
    for (uint64_t r = 0; r < rounds; r++)
        for (int s = 0; s < 2; s++) {
            double ns[OPS];
            round_of(sizes[s], 10 + r, ns);
            for (int o = 0; o < OPS; o++)
                v[s][o][r] = ns[o];
        }
    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("cuckoo_bench: %s, %s (%s) %s\n", cpu, BENCH_COMPILER, BENCH_CONFIG_NAME, BENCH_FLAGS);
    printf("8-byte items, buckets of 2 filled to half their slots, %" PRIu64
           " rounds, medians\n\n", rounds);
    static const char *const names[] = {"add", "contains, present", "contains, absent",
                                        "contains_many, present", "contains_many, absent",
                                        "delete"};
    printf("%-26s %14s %24s\n", "operation", "ns, 2^15 x 2", "ns, 2^27 x 2 (256 MiB)");
    for (int o = 0; o < OPS - 1; o++)
        printf("%-26s %14.2f %24.2f\n", names[o], median_of(v[0][o], (int)rounds),
               median_of(v[1][o], (int)rounds));
    load_table();
    return 0;
}
