/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_groups.c: the rows of bench/group_bench.sh: "group<TAB>item\n", with
 * group sizes that fall off as in real data (a few huge groups, a long tail
 * of small ones) and a known seed, so that every run reads the same bytes.
 *
 * Usage: gen_groups -n ROWS -g GROUPS [-u ITEMS] [-s SEED] OUTPUT
 *
 * The group of a row is floor(G^u) - 1 for u uniform in [0, 1): a
 * log-uniform law, P(g) = log_G((g + 2) / (g + 1)), which falls off as 1/g
 * like Zipf's law with s = 1. The item is uniform among ITEMS (default
 * 10,000,000) values, so a large group's distinct items approach ITEMS.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"

static void usage(void)
{
    fputs("Usage: gen_groups -n ROWS -g GROUPS [-u ITEMS] [-s SEED] OUTPUT\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t rows = 0, groups = 0, items = 10000000, seed = 1;
    int c;
    while ((c = getopt(argc, argv, "n:g:u:s:")) != -1) {
        switch (c) {
        case 'n': rows = strtoull(optarg, NULL, 10); break;
        case 'g': groups = strtoull(optarg, NULL, 10); break;
        case 'u': items = strtoull(optarg, NULL, 10); break;
        case 's': seed = strtoull(optarg, NULL, 10); break;
        default: usage();
        }
    }
    if (optind + 1 != argc || rows == 0 || groups == 0 || items == 0)
        usage();
    FILE *out = fopen(argv[optind], "w");
    if (out == NULL) {
        perror(argv[optind]);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    double log_groups = log((double)groups);
    for (uint64_t i = 0; i < rows; i++) {
        double u = (double)(splitmix64(&seed) >> 11) * 0x1p-53;
        uint64_t g = (uint64_t)exp(u * log_groups) - 1;
        if (g >= groups)
            g = groups - 1;
        fprintf(out, "/page/%llu\tuser%llu\n", (unsigned long long)g,
                (unsigned long long)(splitmix64(&seed) % items));
    }
    if (fclose(out) != 0) {
        perror(argv[optind]);
        return 1;
    }
    return 0;
}
