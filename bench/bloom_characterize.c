/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_characterize.c: the false-positive rates and memory of libsketch's
 * Bloom filters, measured against their theory.
 *
 * Three experiments, each written as a CSV file into OUTDIR:
 *
 * bloom_fpr.csv: rate against bits per item. For each layout (blocked,
 *   classic) and each b = 4..24 bits per item, a filter of m = b n bits
 *   (sk_bloom_create; blocked rounds m up to whole 512-bit blocks) with
 *   the k that minimizes the library's exact rate of that layout at n items
 *   (sk_bloom_expected_fp_rate, tried over k around b ln 2), receives n
 *   distinct items (default 10^6) and is then asked about Q items never
 *   added. Measured rate = false positives / Q, beside the theory
 *   sk_bloom_expected_fp_rate(f, n) and, for reference, the textbook
 *   (1 - e^(-kn/m))^k.
 *
 * bloom_scalable.csv: scalable filters (sk_bloom_create, expansion 2)
 *   for several requested rates p, filled in steps to 1/2, 1, 2, ..., 64
 *   times their initial capacity; after each step the rate is measured and
 *   set against the requested p (which the whole chain must stay below) and
 *   against the chain's exact rate (sk_bloom_expected_fp_rate at the items
 *   the filter counts). A layer counts only the adds that changed it, so it
 *   answers for a few percent more items than it counts; the column `model`
 *   is the chain's rate at the items each layer answers for (see
 *   chain_model below), which is what the measurements follow.
 *
 * bloom_memory.csv: memory against the rate. For rates from 1e-1 to 1e-6
 *   and each layout (and auto's choice), a filter sized by sk_bloom_new for
 *   n items: bits per item and k from sk_bloom_get_info, beside the
 *   information-theoretic lower bound log2(1/p) and the classic Bloom
 *   filter's 1.44 log2(1/p) (log2(1/p) / ln 2); the same from
 *   sk_bloom_size_for at 10^8 items, to show the figures do not depend on
 *   n; and the rate measured at capacity, which must be at most p.
 *
 * Why the measurement is sound: items are 16-byte keys built from an index
 * i by a bijection of 64-bit integers (so distinct indexes are distinct
 * keys), added items and queried items come from disjoint index ranges, so
 * every positive answer to a query is a false positive. The count of false
 * positives among Q independent absent keys is binomial (Q, rate), so the
 * columns give sigma = sqrt(rate (1 - rate) / Q) with the theoretical rate
 * and z = (measured - theory) / sigma; Q is chosen per row so that about
 * 2000 false positives are expected (capped by -Q). One filter is built per
 * row, so its own random fill adds a little variance beyond the binomial:
 * negligible for classic filters, up to about 1% of the rate for blocked
 * filters at high bits per item, where the rate depends on the few most
 * loaded of some 10^4 blocks. Every added item is also queried: the count of
 * false negatives is reported and must be 0.
 *
 * Usage: bloom_characterize [-n ITEMS] [-Q MAX_QUERIES] [-c INITIAL_CAPACITY]
 *                           [-o OUTDIR] [-q]
 *   -n  items per fixed-size filter (default 1000000)
 *   -Q  most absent queries per row (default 100000000)
 *   -c  initial capacity of the scalable filters (default 100000)
 *   -o  output directory (default docs/data)
 *   -q  quick smoke run: n = 100000, Q at most 1000000, capacity 2000
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sketch/bloom_extra.h"

#define LN2 0.69314718055994530942
#define BATCH 64
#define KEY_SIZE 16
#define TARGET_FALSE_POSITIVES 2000.0
#define MIN_QUERIES 1000000ULL
/* Absent keys start here; added ones are numbered from 0 per filter, each
 * filter in its own range of 2^40 indexes. */
#define ABSENT_BASE (UINT64_C(1) << 62)

static const char *layout_name(sk_bloom_layout l)
{
    return l == SK_BLOOM_BLOCKED ? "blocked" : l == SK_BLOOM_CLASSIC ? "classic"
           : l == SK_BLOOM_SPLIT   ? "split"
                                   : "auto";
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bloom_characterize: %s: %s\n", what, rc ? sk_strerror(rc) : strerror(errno));
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- keys ---------------------------------------------------------------- */

/* A bijection of 64-bit integers (each step is invertible: xor with a right
 * shift of itself, multiplication by an odd constant). */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Key of index i: its first 8 bytes are a bijection of i, so distinct
 * indexes give distinct keys; the other 8 make them look like any 16 bytes. */
static inline void make_key(uint64_t i, uint8_t *key)
{
    uint64_t a = mix64(i ^ UINT64_C(0x243f6a8885a308d3));
    uint64_t b = mix64(a + UINT64_C(0x13198a2e03707344));
    memcpy(key, &a, 8);
    memcpy(key + 8, &b, 8);
}

struct batch {
    uint8_t keys[BATCH][KEY_SIZE];
    const void *items[BATCH];
    size_t lens[BATCH];
    uint8_t found[BATCH];
};

static void batch_init(struct batch *b)
{
    for (int i = 0; i < BATCH; i++) {
        b->items[i] = b->keys[i];
        b->lens[i] = KEY_SIZE;
    }
}

static void add_range(sk_bloom *f, uint64_t from, uint64_t to, struct batch *b)
{
    for (uint64_t i = from; i < to; i += BATCH) {
        size_t n = to - i < BATCH ? (size_t)(to - i) : BATCH;
        for (size_t j = 0; j < n; j++)
            make_key(i + j, b->keys[j]);
        int rc = sk_bloom_add_batch(f, b->items, b->lens, n, NULL);
        if (rc < 0)
            die("sk_bloom_add_batch", rc);
    }
}

/* How many of the keys of indexes [from, to) the filter says it may hold. */
static uint64_t count_range(const sk_bloom *f, uint64_t from, uint64_t to, struct batch *b)
{
    uint64_t hits = 0;
    for (uint64_t i = from; i < to; i += BATCH) {
        size_t n = to - i < BATCH ? (size_t)(to - i) : BATCH;
        for (size_t j = 0; j < n; j++)
            make_key(i + j, b->keys[j]);
        sk_bloom_contains_batch(f, b->items, b->lens, n, b->found);
        for (size_t j = 0; j < n; j++)
            hits += b->found[j];
    }
    return hits;
}

static uint64_t queries_for(double rate, uint64_t max_queries)
{
    double q = rate > 0 ? TARGET_FALSE_POSITIVES / rate : (double)max_queries;
    uint64_t qi = q < (double)MIN_QUERIES ? MIN_QUERIES : (uint64_t)q;
    return qi > max_queries ? max_queries : qi;
}

struct measure {
    uint64_t queries, false_positives;
    double rate, sigma, z;
};

/* Asks Q absent keys of the filter's own range. */
static struct measure measure_rate(const sk_bloom *f, uint64_t range, double theory,
                                   uint64_t max_queries, struct batch *b)
{
    struct measure r;
    r.queries = queries_for(theory, max_queries);
    uint64_t base = ABSENT_BASE + (range << 40);
    r.false_positives = count_range(f, base, base + r.queries, b);
    r.rate = (double)r.false_positives / (double)r.queries;
    r.sigma = sqrt(theory * (1 - theory) / (double)r.queries);
    r.z = r.sigma > 0 ? (r.rate - theory) / r.sigma : 0;
    return r;
}

/* The CSV file dir/name, new, with its header line (the column names). */
static FILE *open_csv(const char *dir, const char *name, const char *header)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bloom_characterize: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "%s\n", header);
    return f;
}

/* ---- experiments --------------------------------------------------------- */

static uint64_t next_range;
static uint64_t false_negatives_total;

/* Adds items [0, n) of a fresh range to f and checks they are all found. */
static uint64_t fill(sk_bloom *f, uint64_t n, uint64_t *range, struct batch *b)
{
    *range = next_range++;
    uint64_t base = *range << 40;
    add_range(f, base, base + n, b);
    uint64_t found = count_range(f, base, base + n, b);
    false_negatives_total += n - found;
    return n - found;
}

static void fpr_vs_bits(const char *dir, uint64_t n, uint64_t max_queries, struct batch *b)
{
    FILE *out = open_csv(dir, "bloom_fpr.csv",
                         "layout,bits_per_item,hashes,n,bits,queries,false_positives,measured,"
                         "theory,sigma,z,textbook,false_negatives");
    printf("false-positive rate against bits per item, n = %llu\n",
           (unsigned long long)n);
    printf("%-8s %4s %3s %11s %9s %11s %11s %7s\n", "layout", "b", "k", "queries", "FPs",
           "measured", "theory", "z");
    const sk_bloom_layout layouts[2] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC};
    for (int li = 0; li < 2; li++) {
        for (unsigned bpi = 4; bpi <= 24; bpi++) {
            double t0 = now_s();
            uint64_t bits = bpi * n;
            /* The best integer k by the layout's exact rate. */
            unsigned center = (unsigned)lround(bpi * LN2), best_k = 1;
            double best = 2;
            for (unsigned k = center > 3 ? center - 3 : 1; k <= center + 2; k++) {
                sk_bloom *probe;
                int rc = sk_bloom_create(&probe, &(sk_bloom_options){.bits = bits, .hashes = k, .layout = layouts[li]});
                if (rc != SK_OK)
                    die("sk_bloom_create", rc);
                double r = sk_bloom_expected_fp_rate(probe, n);
                if (r < best) {
                    best = r;
                    best_k = k;
                }
                sk_bloom_free(probe);
            }
            sk_bloom *f;
            int rc = sk_bloom_create(&f, &(sk_bloom_options){.bits = bits, .hashes = best_k, .layout = layouts[li]});
            if (rc != SK_OK)
                die("sk_bloom_create", rc);
            sk_bloom_info info;
            sk_bloom_get_info(f, &info);
            uint64_t range;
            uint64_t fn = fill(f, n, &range, b);
            double theory = sk_bloom_expected_fp_rate(f, n);
            double textbook = pow(-expm1(-(double)best_k * (double)n / (double)info.bits),
                                  best_k);
            struct measure m = measure_rate(f, range, theory, max_queries, b);
            fprintf(out, "%s,%u,%u,%llu,%llu,%llu,%llu,%.6g,%.6g,%.4g,%.3f,%.6g,%llu\n",
                    layout_name(layouts[li]), bpi, best_k, (unsigned long long)n,
                    (unsigned long long)info.bits, (unsigned long long)m.queries,
                    (unsigned long long)m.false_positives, m.rate, theory, m.sigma, m.z,
                    textbook, (unsigned long long)fn);
            printf("%-8s %4u %3u %11llu %9llu %11.4e %11.4e %7.2f   (%.1f s)\n",
                   layout_name(layouts[li]), bpi, best_k, (unsigned long long)m.queries,
                   (unsigned long long)m.false_positives, m.rate, theory, m.z,
                   now_s() - t0);
            fflush(stdout);
            sk_bloom_free(f);
        }
    }
    fclose(out);
}

/* A model of a scalable chain that follows what its layers really hold.
 * A layer counts only the adds that changed it, and closes when that count
 * reaches its capacity; an add whose bits were all set already leaves the
 * layer as it was, but it is one more item the layer answers for, so a
 * closed layer answers for N items with N - (integral of its own rate from
 * 0 to N) = capacity, a little more than its capacity. The layers' shapes
 * are the library's own (sk_bloom_plan), and a fixed filter of the same
 * bits and hashes gives a layer's exact rate. */
#define MODEL_LAYERS 8
struct chain_model {
    unsigned layers;
    sk_bloom *probe[MODEL_LAYERS];
    uint64_t capacity[MODEL_LAYERS];
    uint64_t bits[MODEL_LAYERS];
    double closed_items[MODEL_LAYERS]; /* 0 until computed */
};

/* The items a layer answers for once `count` adds have changed it:
 * N = count + integral_0^N rate, by fixed-point iteration with Simpson's
 * rule (the rate is smooth and small, so a few rounds converge). */
static double items_for_count(const sk_bloom *probe, double count)
{
    const int intervals = 32;
    double items = count;
    for (int round = 0; round < 5; round++) {
        double h = items / intervals, sum = 0;
        for (int i = 0; i <= intervals; i++) {
            double w = i == 0 || i == intervals ? 1 : i % 2 ? 4 : 2;
            sum += w * sk_bloom_expected_fp_rate(probe, (uint64_t)llround(i * h));
        }
        items = count + sum * h / 3;
    }
    return items;
}

static void chain_model_init(struct chain_model *cm, uint64_t capacity, double rate,
                             unsigned expansion, sk_bloom_layout layout)
{
    memset(cm, 0, sizeof *cm);
    sk_bloom_options o = {.capacity = capacity, .fp_rate = rate, .expansion = expansion,
                          .layout = layout};
    sk_bloom *chain;
    int rc = sk_bloom_create(&chain, &o);
    if (rc != SK_OK)
        die("sk_bloom_create", rc);
    sk_bloom_info info;
    sk_bloom_get_info(chain, &info);
    sk_bloom_free(chain);
    for (unsigned i = 0; i < MODEL_LAYERS; i++) {
        sk_bloom_layer shape;
        if (sk_bloom_plan(&o, i, &shape) != SK_OK)
            break;
        rc = sk_bloom_create(&cm->probe[i], &(sk_bloom_options){.bits = shape.bits,
                                                                .hashes = shape.hashes,
                                                                .layout = info.layout});
        if (rc != SK_OK)
            die("sk_bloom_create", rc);
        cm->bits[i] = shape.bits;
        cm->capacity[i] = shape.capacity;
        cm->layers = i + 1;
    }
}

static void chain_model_free(struct chain_model *cm)
{
    for (unsigned i = 0; i < cm->layers; i++)
        sk_bloom_free(cm->probe[i]);
}

/* The rate of a chain of `layers` layers whose changing adds total `count`;
 * also the chain's bits, to check the model has the library's shapes. */
static double chain_model_rate(struct chain_model *cm, unsigned layers, uint64_t count,
                               uint64_t *bits)
{
    double pass = 1, remaining = (double)count;
    *bits = 0;
    for (unsigned i = 0; i < layers && i < cm->layers; i++) {
        double items;
        if (i + 1 < layers) {
            if (cm->closed_items[i] == 0)
                cm->closed_items[i] = items_for_count(cm->probe[i], (double)cm->capacity[i]);
            items = cm->closed_items[i];
            remaining -= (double)cm->capacity[i];
        } else {
            items = items_for_count(cm->probe[i], remaining);
        }
        pass *= 1 - sk_bloom_expected_fp_rate(cm->probe[i], (uint64_t)llround(items));
        *bits += cm->bits[i];
    }
    return 1 - pass;
}

static void scalable(const char *dir, uint64_t capacity, uint64_t max_queries,
                     struct batch *b)
{
    FILE *out = open_csv(dir, "bloom_scalable.csv",
                         "layout,requested,expansion,initial_capacity,items,fill_multiple,"
                         "layers,bits,bits_per_item,queries,false_positives,measured,theory,"
                         "sigma,z,measured_over_requested,false_negatives,model,z_model");
    printf("\nscalable filters, expansion 2, initial capacity %llu\n",
           (unsigned long long)capacity);
    printf("%-8s %8s %6s %6s %9s %11s %11s %7s %11s %7s %8s\n", "layout", "p", "fill",
           "layers", "bits/item", "measured", "theory", "z", "model", "z", "meas/p");
    const sk_bloom_layout layouts[2] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC};
    const double rates[3] = {0.1, 0.01, 0.001};
    const double multiples[8] = {0.5, 1, 2, 4, 8, 16, 32, 64};
    for (int li = 0; li < 2; li++) {
        for (int ri = 0; ri < 3; ri++) {
            sk_bloom *f;
            int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = capacity, .fp_rate = rates[ri], .expansion = 2, .layout = layouts[li]});
            if (rc != SK_OK)
                die("sk_bloom_create", rc);
            struct chain_model cm;
            chain_model_init(&cm, capacity, rates[ri], 2, layouts[li]);
            uint64_t range = next_range++, base = range << 40, items = 0;
            for (int mi = 0; mi < 8; mi++) {
                uint64_t target = (uint64_t)(multiples[mi] * (double)capacity);
                add_range(f, base + items, base + target, b);
                items = target;
                uint64_t fn = items - count_range(f, base, base + items, b);
                false_negatives_total += fn;
                sk_bloom_info info;
                sk_bloom_get_info(f, &info);
                /* Layers fill by the items that changed them (info.count):
                 * an item that was a false positive of an older layer is
                 * not added again. */
                double theory = sk_bloom_expected_fp_rate(f, info.count);
                struct measure m = measure_rate(f, range, theory, max_queries, b);
                uint64_t model_bits;
                double model = chain_model_rate(&cm, info.layers, info.count, &model_bits);
                if (model_bits != info.bits)
                    fprintf(stderr, "bloom_characterize: the chain model has %llu bits, "
                                    "the filter %llu\n", (unsigned long long)model_bits,
                            (unsigned long long)info.bits);
                double z_model = (m.rate - model) / sqrt(model * (1 - model) / m.queries);
                fprintf(out, "%s,%g,2,%llu,%llu,%g,%u,%llu,%.4f,%llu,%llu,%.6g,%.6g,%.4g,%.3f,"
                             "%.4f,%llu,%.6g,%.3f\n",
                        layout_name(layouts[li]), rates[ri], (unsigned long long)capacity,
                        (unsigned long long)items, multiples[mi], info.layers,
                        (unsigned long long)info.bits, (double)info.bits / (double)items,
                        (unsigned long long)m.queries, (unsigned long long)m.false_positives,
                        m.rate, theory, m.sigma, m.z, m.rate / rates[ri],
                        (unsigned long long)fn, model, z_model);
                printf("%-8s %8g %6g %6u %9.2f %11.4e %11.4e %7.2f %11.4e %7.2f %8.3f\n",
                       layout_name(layouts[li]), rates[ri], multiples[mi], info.layers,
                       (double)info.bits / (double)items, m.rate, theory, m.z, model,
                       z_model, m.rate / rates[ri]);
                fflush(stdout);
            }
            sk_bloom_free(f);
            chain_model_free(&cm);
        }
    }
    fclose(out);
}

static void memory(const char *dir, uint64_t n, uint64_t max_queries, struct batch *b)
{
    FILE *out = open_csv(dir, "bloom_memory.csv",
                         "layout,chosen,requested,n,bits,hashes,bits_per_item,memory_bytes,"
                         "bits_per_item_1e8,hashes_1e8,lower_bound,classic_bound,"
                         "over_lower_bound,queries,false_positives,measured,theory_at_capacity,"
                         "sigma,false_negatives");
    printf("\nmemory against the rate, n = %llu (and 1e8 by sk_bloom_size_for)\n",
           (unsigned long long)n);
    printf("%-8s %-8s %8s %3s %9s %9s %9s %9s %11s %11s\n", "layout", "chosen", "p", "k",
           "bits/item", "@1e8", "log2(1/p)", "1.44x", "measured", "theory");
    const sk_bloom_layout layouts[3] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_AUTO};
    const double mantissas[3] = {1, 5, 2};
    for (int li = 0; li < 3; li++) {
        for (int e = 1; e <= 6; e++) {
            for (int mi = 0; mi < 3; mi++) {
                /* 1e-1, 5e-2, 2e-2, 1e-2, ..., 1e-6 */
                double p = mantissas[mi] * pow(10, -e - (mi > 0));
                if (p < 1e-6 * (1 - 1e-9))
                    continue;
                sk_bloom *f;
                int rc = sk_bloom_new(&f, n, p, layouts[li]);
                if (rc != SK_OK)
                    die("sk_bloom_new", rc);
                sk_bloom_info info;
                sk_bloom_get_info(f, &info);
                sk_bloom_layout big = layouts[li];
                uint64_t bits_big;
                unsigned k_big;
                rc = sk_bloom_size_for(100000000, p, &big, &bits_big, &k_big);
                if (rc != SK_OK)
                    die("sk_bloom_size_for", rc);
                double lower = log2(1 / p), classic = lower / LN2;
                double bpi = (double)info.bits / (double)n;
                uint64_t range;
                uint64_t fn = fill(f, n, &range, b);
                double theory = sk_bloom_expected_fp_rate(f, n);
                struct measure m = measure_rate(f, range, theory, max_queries, b);
                fprintf(out, "%s,%s,%g,%llu,%llu,%u,%.4f,%zu,%.4f,%u,%.4f,%.4f,%.4f,%llu,"
                             "%llu,%.6g,%.6g,%.4g,%llu\n",
                        layout_name(layouts[li]), layout_name(info.layout), p,
                        (unsigned long long)n, (unsigned long long)info.bits, info.hashes,
                        bpi, info.memory, (double)bits_big / 1e8, k_big, lower, classic,
                        bpi / lower, (unsigned long long)m.queries,
                        (unsigned long long)m.false_positives, m.rate, theory, m.sigma,
                        (unsigned long long)fn);
                printf("%-8s %-8s %8g %3u %9.3f %9.3f %9.3f %9.3f %11.4e %11.4e\n",
                       layout_name(layouts[li]), layout_name(info.layout), p, info.hashes,
                       bpi, (double)bits_big / 1e8, lower, classic, m.rate, theory);
                fflush(stdout);
                sk_bloom_free(f);
            }
        }
    }
    fclose(out);
}

static uint64_t parse_u64(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0) {
        fprintf(stderr, "usage: bloom_characterize [-n ITEMS] [-Q MAX_QUERIES] "
                        "[-c INITIAL_CAPACITY] [-o OUTDIR] [-q]\n");
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000, max_queries = 100000000, capacity = 100000;
    const char *dir = "docs/data";
    int c;
    while ((c = getopt(argc, argv, "n:Q:c:o:q")) != -1) {
        switch (c) {
        case 'n': n = parse_u64(optarg); break;
        case 'Q': max_queries = parse_u64(optarg); break;
        case 'c': capacity = parse_u64(optarg); break;
        case 'o': dir = optarg; break;
        case 'q':
            n = 100000;
            max_queries = 1000000;
            capacity = 2000;
            break;
        default: parse_u64("");
        }
    }
    if (n >= UINT64_C(1) << 39 || capacity >= UINT64_C(1) << 32)
        parse_u64("");
    double t0 = now_s();
    struct batch *b = malloc(sizeof *b);
    if (b == NULL)
        die("malloc", 0);
    batch_init(b);
    fpr_vs_bits(dir, n, max_queries, b);
    scalable(dir, capacity, max_queries, b);
    memory(dir, n, max_queries, b);
    printf("\nfalse negatives: %llu (must be 0)\ntotal %.0f s\n",
           (unsigned long long)false_negatives_total, now_s() - t0);
    free(b);
    return false_negatives_total == 0 ? 0 : 1;
}
