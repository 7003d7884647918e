/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * path_instructions: runs one library path K times after a fixed setup, so
 * that valgrind's callgrind can count the instructions of one operation as
 * (Ir(K) - Ir(0)) / K. Instruction counts do not depend on a noisy machine's
 * load, so bench/path_instructions.sh compares two builds of the library with
 * them where wall-clock medians cannot resolve a few percent.
 *
 *     path_instructions PATH K      (PATH: one of the names in `paths` below)
 *
 * The same source builds against the 0.2 API, the oldest build worth
 * comparing with, through the two names defined below.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sketch.h"

#if SK_VERSION_MAJOR == 0 && SK_VERSION_MINOR < 3
#define sk_hll_add_hash_batch sk_hll_add_hashes
#define map_new(out, precision) sk_hll_map_create((out), (precision), NULL)
#else
#define map_new(out, precision) sk_hll_map_new((out), (precision))
#endif

static const char *const paths[] = {
    "hll_add_hash14", "hll_add_hash18", "hll_add14", "hll_add_hash_batch14",
    "hll_count14", "hll_count18", "hll_merge14", "hll_merge18",
    "hll_ser_native14", "hll_deser_native14", "hll_ser_redis14", "hll_deser_redis14",
    "hll_sparse14", "map_add", "map_add_batch",
    "bloom_blocked_add", "bloom_blocked_contains", "bloom_blocked_add_b64",
    "bloom_blocked_contains_b64", "bloom_split_add", "bloom_split_contains",
    "bloom_split_add_b64", "bloom_split_contains_b64", "bloom_classic_add",
    "bloom_classic_contains", "bloom_classic_add_b64", "bloom_classic_contains_b64",
    "bloom_auto_add", "bloom_auto_contains",
};

#define NH (1u << 16) /* distinct inputs, cycled through */
#define ITEM 16
#define GROUPS 1000

static uint64_t hashes[NH];
static uint8_t items[NH][ITEM];
static uint8_t buf[SK_HLL_MAX_SERIALIZED_SIZE];

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "path_instructions: %s: %s\n", what, sk_strerror(rc));
        exit(1);
    }
}

static sk_hll *dense_sketch(unsigned p, uint64_t seed)
{
    sk_hll *h;
    check(sk_hll_new(&h, p), "sk_hll_new");
    for (int i = 0; i < 200000; i++)
        check(sk_hll_add_hash(h, splitmix64(&seed)), "sk_hll_add_hash");
    return h;
}

static uint64_t run_hll(const char *path, uint64_t k_max)
{
    unsigned p = strstr(path, "18") != NULL ? 18 : 14;
    sk_hll *a = dense_sketch(p, 5), *b = dense_sketch(p, 6);
    size_t len = 0;
    if (strstr(path, "deser_native") != NULL)
        check(sk_hll_serialize(a, SK_HLL_NATIVE, buf, sizeof buf, &len), "serialize");
    if (strstr(path, "deser_redis") != NULL)
        check(sk_hll_serialize(a, SK_HLL_REDIS, buf, sizeof buf, &len), "serialize");
    uint64_t acc = 0;
    for (uint64_t k = 0; k < k_max; k++) {
        const uint64_t *hash = &hashes[k & (NH - 1)];
        if (strncmp(path, "hll_add_hash1", 13) == 0) {
            acc += (uint64_t)sk_hll_add_hash(a, *hash);
        } else if (strcmp(path, "hll_add14") == 0) {
            acc += (uint64_t)sk_hll_add(a, items[k & (NH - 1)], ITEM);
        } else if (strcmp(path, "hll_add_hash_batch14") == 0) {
            acc += (uint64_t)sk_hll_add_hash_batch(a, hashes + (k * 1024 & (NH - 1)), 1024);
        } else if (strncmp(path, "hll_count", 9) == 0) {
            /* An add between counts, so that no count can reuse the last. */
            acc += sk_hll_count(a) + (uint64_t)sk_hll_add_hash(a, *hash);
        } else if (strncmp(path, "hll_merge", 9) == 0) {
            acc += (uint64_t)sk_hll_merge(a, b);
        } else if (strncmp(path, "hll_ser_", 8) == 0) {
            sk_hll_format fmt = strstr(path, "redis") != NULL ? SK_HLL_REDIS : SK_HLL_NATIVE;
            acc += (uint64_t)sk_hll_serialize(a, fmt, buf, sizeof buf, &len) + len;
        } else if (strncmp(path, "hll_deser_", 10) == 0) {
            sk_hll *h;
            check(sk_hll_deserialize(&h, buf, len, NULL, NULL), "deserialize");
            acc += sk_hll_precision(h);
            sk_hll_free(h);
        } else { /* hll_sparse14: a sketch made, 1500 adds (all sparse), freed */
            sk_hll *h;
            check(sk_hll_new(&h, 14), "sk_hll_new");
            for (uint64_t i = 0; i < 1500; i++)
                acc += (uint64_t)sk_hll_add_hash(h, hashes[(k * 1500 + i) & (NH - 1)]);
            sk_hll_free(h);
        }
    }
    sk_hll_free(a);
    sk_hll_free(b);
    return acc;
}

static uint64_t run_map(const char *path, uint64_t k_max)
{
    sk_hll_map *m;
    check(map_new(&m, 14), "map create");
    static char keys[GROUPS][8];
    static size_t key_lens[GROUPS];
    for (int g = 0; g < GROUPS; g++) {
        key_lens[g] = (size_t)snprintf(keys[g], sizeof keys[g], "g%d", g);
        check(sk_hll_map_add(m, keys[g], key_lens[g], items[g], ITEM), "sk_hll_map_add");
    }
    const void *kp[1024], *ip[1024];
    size_t kl[1024], il[1024];
    uint64_t acc = 0;
    for (uint64_t k = 0; k < k_max; k++) {
        if (strcmp(path, "map_add") == 0) {
            uint64_t g = hashes[k & (NH - 1)] % GROUPS;
            acc += (uint64_t)sk_hll_map_add(m, keys[g], key_lens[g], items[k & (NH - 1)], ITEM);
            continue;
        }
        for (int j = 0; j < 1024; j++) { /* map_add_batch: K batches of 1024 */
            uint64_t i = (k * 1024 + (uint64_t)j) & (NH - 1), g = hashes[i] % GROUPS;
            kp[j] = keys[g];
            kl[j] = key_lens[g];
            ip[j] = items[i];
            il[j] = ITEM;
        }
        acc += (uint64_t)sk_hll_map_add_batch(m, kp, kl, ip, il, 1024);
    }
    sk_hll_map_free(m);
    return acc;
}

static uint64_t run_bloom(const char *path, uint64_t k_max)
{
    sk_bloom_layout layout = strstr(path, "blocked") != NULL   ? SK_BLOOM_BLOCKED
                             : strstr(path, "classic") != NULL ? SK_BLOOM_CLASSIC
                             : strstr(path, "split") != NULL   ? SK_BLOOM_SPLIT
                                                               : SK_BLOOM_AUTO;
    sk_bloom *f;
    check(sk_bloom_new(&f, 1000000, 0.01, layout), "sk_bloom_new");
    for (uint32_t i = 0; i < NH / 2; i++) /* half the inputs present */
        check(sk_bloom_add(f, items[i], ITEM), "sk_bloom_add");
    const void *ip[64];
    size_t il[64];
    uint8_t res[64];
    for (int j = 0; j < 64; j++)
        il[j] = ITEM;
    int add = strstr(path, "_add") != NULL, batch = strstr(path, "_b64") != NULL;
    uint64_t acc = 0;
    for (uint64_t k = 0; k < k_max; k++) {
        if (!batch) {
            const uint8_t *it = items[k & (NH - 1)];
            acc += (uint64_t)(add ? sk_bloom_add(f, it, ITEM) : sk_bloom_contains(f, it, ITEM));
            continue;
        }
        for (int j = 0; j < 64; j++)
            ip[j] = items[(k * 64 + (uint64_t)j) & (NH - 1)];
        if (add)
            check(sk_bloom_add_batch(f, ip, il, 64, res), "sk_bloom_add_batch");
        else
            sk_bloom_contains_batch(f, ip, il, 64, res);
        acc += res[0];
    }
    sk_bloom_free(f);
    return acc;
}

int main(int argc, char **argv)
{
    size_t known = 0;
    while (argc == 3 && known < sizeof paths / sizeof paths[0] &&
           strcmp(argv[1], paths[known]) != 0)
        known++;
    if (argc != 3 || known == sizeof paths / sizeof paths[0]) {
        fprintf(stderr, "usage: path_instructions PATH K\nPATH:");
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
            fprintf(stderr, " %s", paths[i]);
        fprintf(stderr, "\n");
        return 2;
    }
    const char *path = argv[1];
    uint64_t k_max = strtoull(argv[2], NULL, 10), seed = 1;
    for (uint32_t i = 0; i < NH; i++) {
        hashes[i] = splitmix64(&seed);
        uint64_t a = splitmix64(&seed), b = splitmix64(&seed);
        memcpy(items[i], &a, 8);
        memcpy(items[i] + 8, &b, 8);
    }
    uint64_t acc = strncmp(path, "hll_", 4) == 0 ? run_hll(path, k_max)
                   : strncmp(path, "map_", 4) == 0 ? run_map(path, k_max)
                                                   : run_bloom(path, k_max);
    printf("%llu\n", (unsigned long long)acc); /* so that no work is dead */
    return 0;
}
