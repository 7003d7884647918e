/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_zipf.c: the file of bench/top_bench.sh: ROWS lines drawn from a
 * Zipf law of exponent S over ITEMS distinct values, from a known seed,
 * so that every run reads the same bytes.
 *
 * Usage: gen_zipf -n ROWS [-u ITEMS] [-e S] [-s SEED] OUTPUT
 *
 * Rank r (from 1) has probability r^-S / H; draws take O(1) each from
 * Walker's alias table, so 40M lines take seconds. A rank prints as
 * "item-" and its number scrambled by a bijection of [0, 2^k), so that no
 * order of the text follows the ranks.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

static void usage(void)
{
    fputs("Usage: gen_zipf -n ROWS [-u ITEMS] [-e S] [-s SEED] OUTPUT\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t rows = 0, items = 1000000, seed = 1;
    double s = 1.0;
    int c;
    while ((c = getopt(argc, argv, "n:u:e:s:")) != -1) {
        switch (c) {
        case 'n': rows = strtoull(optarg, NULL, 10); break;
        case 'u': items = strtoull(optarg, NULL, 10); break;
        case 'e': s = strtod(optarg, NULL); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        default: usage();
        }
    }
    if (optind + 1 != argc || rows == 0 || items == 0 || items > (1u << 30) || !(s >= 0))
        usage();
    /* Walker's alias method (Vose's construction). */
    double *p = malloc(items * sizeof *p);
    uint32_t *alias = malloc(items * sizeof *alias), *small = malloc(items * sizeof *small),
             *large = malloc(items * sizeof *large);
    if (p == NULL || alias == NULL || small == NULL || large == NULL)
        return 1;
    double sum = 0;
    for (uint64_t i = 0; i < items; i++)
        sum += p[i] = pow((double)(i + 1), -s);
    size_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < items; i++) {
        p[i] = p[i] * (double)items / sum;
        if (p[i] < 1)
            small[ns++] = (uint32_t)i;
        else
            large[nl++] = (uint32_t)i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t l = small[--ns], g = large[nl - 1];
        alias[l] = g;
        p[g] -= 1 - p[l];
        if (p[g] < 1) {
            nl--;
            small[ns++] = g;
        }
    }
    while (nl > 0)
        p[large[--nl]] = 1;
    while (ns > 0)
        p[small[--ns]] = 1;
    unsigned bits = 1;
    while ((UINT64_C(1) << bits) < items)
        bits++;
    uint64_t mask = (UINT64_C(1) << bits) - 1;

    FILE *out = fopen(argv[optind], "w");
    if (out == NULL) {
        perror(argv[optind]);
        return 1;
    }
    static char buf[1 << 20];
    size_t used = 0;
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t x = splitmix64(&seed);
        uint64_t i = (x >> 32) * items >> 32;
        double u = (double)(x & 0xffffffff) * 0x1p-32;
        if (u >= p[i])
            i = alias[i];
        /* An odd multiplier and a xorshift are bijections of [0, 2^bits). */
        uint64_t v = ((i * UINT64_C(0x9e3779b97f4a7c15)) & mask);
        v ^= v >> (bits / 2);
        char digits[24];
        int n = 0;
        do {
            digits[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v != 0);
        if (used + 32 > sizeof buf) {
            fwrite(buf, 1, used, out);
            used = 0;
        }
        memcpy(buf + used, "item-", 5);
        used += 5;
        while (n > 0)
            buf[used++] = digits[--n];
        buf[used++] = '\n';
    }
    fwrite(buf, 1, used, out);
    if (fclose(out) != 0) {
        perror(argv[optind]);
        return 1;
    }
    free(p);
    free(alias);
    free(small);
    free(large);
    return 0;
}
