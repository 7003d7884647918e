/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_layouts: bits per item of the classic, blocked and split layouts,
 * and the layout SK_BLOOM_AUTO takes, from sk_bloom_size_for alone: the
 * tables of docs/bloom-format.md ("Default layout"). Prints Markdown.
 *
 *     build/bench/bloom_layouts            the tables (about a minute: the
 *                                          exact blocked sizes below 1e-6
 *                                          are the slow part)
 *     build/bench/bloom_layouts N P        one capacity and rate, in full
 *
 * Nothing is measured but sizes, so the output is the same on any machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sketch.h>

struct sizes {
    uint64_t bits[4]; /* by sk_bloom_layout: auto, classic, blocked, split */
    unsigned hashes[4];
    sk_bloom_layout chosen;
};

static const char *name(sk_bloom_layout l)
{
    return l == SK_BLOOM_BLOCKED ? "blocked" : l == SK_BLOOM_CLASSIC ? "classic"
                                             : l == SK_BLOOM_SPLIT ? "split" : "auto";
}

static struct sizes size_all(uint64_t n, double p)
{
    struct sizes s;
    for (int l = 0; l < 4; l++) {
        sk_bloom_layout layout = (sk_bloom_layout)l;
        if (sk_bloom_size_for(n, p, &layout, &s.bits[l], &s.hashes[l]) != SK_OK) {
            fprintf(stderr, "bloom_layouts: cannot size %llu items at %g (%s)\n",
                    (unsigned long long)n, p, name((sk_bloom_layout)l));
            exit(1);
        }
        if (l == SK_BLOOM_AUTO)
            s.chosen = layout;
    }
    return s;
}

static double per_item(const struct sizes *s, sk_bloom_layout l, uint64_t n)
{
    return (double)s->bits[l] / (double)n;
}

static double ratio(const struct sizes *s, sk_bloom_layout a, sk_bloom_layout b)
{
    return (double)s->bits[a] / (double)s->bits[b];
}

static const char *rate_text(double p, char *buf, size_t cap)
{
    if (p >= 1e-3) {
        snprintf(buf, cap, "%.3g%%", p * 100);
    } else {
        int e = (int)floor(log10(p) + 1e-9);
        double m = p / pow(10, e);
        if (fabs(m - 1) < 1e-6)
            snprintf(buf, cap, "1e%d", e);
        else
            snprintf(buf, cap, "%.3ge%d", m, e);
    }
    return buf;
}

static void one(uint64_t n, double p)
{
    struct sizes s = size_all(n, p);
    printf("%llu items at %g\n", (unsigned long long)n, p);
    static const sk_bloom_layout order[] = {SK_BLOOM_CLASSIC, SK_BLOOM_BLOCKED, SK_BLOOM_SPLIT};
    for (int i = 0; i < 3; i++)
        printf("  %-8s %14llu bits  k %2u  %.3f bits per item\n", name(order[i]),
               (unsigned long long)s.bits[order[i]], s.hashes[order[i]],
               per_item(&s, order[i], n));
    printf("  split / blocked %.4f, blocked / classic %.4f\n",
           ratio(&s, SK_BLOOM_SPLIT, SK_BLOOM_BLOCKED),
           ratio(&s, SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC));
    printf("  auto: %s\n", name(s.chosen));
}

static const double RATES[] = {0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 1e-3, 5e-4, 2e-4, 1e-4,
                               1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10};
#define NRATES (sizeof RATES / sizeof RATES[0])
static const uint64_t CAPACITIES[] = {100, 10000, 1000000, 100000000};
#define NCAPS (sizeof CAPACITIES / sizeof CAPACITIES[0])

int main(int argc, char **argv)
{
    if (argc == 3) {
        one(strtoull(argv[1], NULL, 10), strtod(argv[2], NULL));
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: bloom_layouts [CAPACITY RATE]\n");
        return 2;
    }
    char r[32];
    static struct sizes all[NCAPS][NRATES];
    for (size_t c = 0; c < NCAPS; c++)
        for (size_t i = 0; i < NRATES; i++)
            all[c][i] = size_all(CAPACITIES[c], RATES[i]);

    printf("Bits per item at 1,000,000 items (at 100,000,000 they differ by 0.01 at most):\n\n");
    printf("| rate | classic | blocked | split | blocked / classic | split / blocked | auto |\n");
    printf("|------|--------:|--------:|------:|------------------:|----------------:|------|\n");
    for (size_t i = 0; i < NRATES; i++) {
        const struct sizes *s = &all[2][i];
        uint64_t n = CAPACITIES[2];
        printf("| %s | %.2f (k %u) | %.2f (k %u) | %.2f (k %u) | %.3f | %.3f | %s |\n",
               rate_text(RATES[i], r, sizeof r), per_item(s, SK_BLOOM_CLASSIC, n),
               s->hashes[SK_BLOOM_CLASSIC], per_item(s, SK_BLOOM_BLOCKED, n),
               s->hashes[SK_BLOOM_BLOCKED], per_item(s, SK_BLOOM_SPLIT, n),
               s->hashes[SK_BLOOM_SPLIT], ratio(s, SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC),
               ratio(s, SK_BLOOM_SPLIT, SK_BLOOM_BLOCKED), name(s->chosen));
    }

    printf("\nBits per item classic / blocked / split, and auto's choice, by capacity:\n\n");
    printf("| rate |");
    for (size_t c = 0; c < NCAPS; c++)
        printf(" %llu |", (unsigned long long)CAPACITIES[c]);
    printf("\n|------|");
    for (size_t c = 0; c < NCAPS; c++)
        printf("------|");
    printf("\n");
    for (size_t i = 0; i < NRATES; i++) {
        printf("| %s |", rate_text(RATES[i], r, sizeof r));
        for (size_t c = 0; c < NCAPS; c++) {
            const struct sizes *s = &all[c][i];
            uint64_t n = CAPACITIES[c];
            printf(" %.2f / %.2f / %.2f: **%s** |", per_item(s, SK_BLOOM_CLASSIC, n),
                   per_item(s, SK_BLOOM_BLOCKED, n), per_item(s, SK_BLOOM_SPLIT, n),
                   name(s->chosen));
        }
        printf("\n");
    }

    /* Where the choice changes: rates 10^(-j/20), from 50% down to 1e-10. */
    printf("\nThe rates at which auto takes each layout (rates 10^(-j/20), 50%% to 1e-10):\n\n");
    printf("| capacity | classic | blocked | split |\n|---------:|---------|---------|-------|\n");
    for (size_t c = 0; c < NCAPS; c++) {
        char ranges[3][512] = {"", "", ""};
        sk_bloom_layout prev = SK_BLOOM_AUTO;
        double first = 0, last = 0;
        for (int j = 6;; j++) {
            double p = j > 200 ? 0 : j == 6 ? 0.5 : pow(10, -j / 20.0);
            sk_bloom_layout l = p > 0 ? size_all(CAPACITIES[c], p).chosen : SK_BLOOM_AUTO;
            if (l != prev && prev != SK_BLOOM_AUTO) {
                char *out = ranges[prev == SK_BLOOM_SPLIT ? 2 : prev == SK_BLOOM_BLOCKED ? 1 : 0];
                size_t used = 0;
                while (out[used])
                    used++;
                char a[32], b[32];
                snprintf(out + used, 512 - used, "%s%s", used ? ", " : "",
                         first == last ? rate_text(first, a, sizeof a) : "");
                while (out[used])
                    used++;
                if (first != last)
                    snprintf(out + used, 512 - used, "%s to %s", rate_text(first, a, sizeof a),
                             rate_text(last, b, sizeof b));
            }
            if (p == 0)
                break;
            if (l != prev)
                first = p;
            last = p;
            prev = l;
        }
        printf("| %llu | %s | %s | %s |\n", (unsigned long long)CAPACITIES[c],
               ranges[0][0] ? ranges[0] : "none", ranges[1][0] ? ranges[1] : "none",
               ranges[2][0] ? ranges[2] : "none");
    }
    return 0;
}
