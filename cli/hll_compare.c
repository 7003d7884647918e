/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_compare.c: `sketch hll compare` and `sketch hll retention`, what two
 * sketches say of their sets together (sk_hll_compare): the intersection,
 * each side alone, the union, the Jaccard index, and for a cohort the
 * share of it found again in later sketches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hll_compare.h"
#include "report.h"
#include "util.h"

const char hll_compare_usage[] =
    "Usage: sketch hll compare [--json] A B\n"
    "Estimate how the sets of the sketches A and B overlap: the union, the\n"
    "intersection, A only, B only, the Jaccard index (intersection over union) and\n"
    "the share of A also in B, each with its standard error and bounds at 2\n"
    "standard errors (95.45%; the JSON has 1, 2 and 3). The parts are fitted to\n"
    "both sketches' registers together (joint maximum likelihood), several times\n"
    "more precise for a small intersection than count(A) + count(B) - count(A B).\n"
    "Sketches of different precision are compared at the smaller.\n"
    "\n"
    "      --json   print one JSON object\n"
    "  -h, --help   show this help\n"
    "Example:\n"
    "  sketch hll compare monday.skh tuesday.skh\n";

const char hll_retention_usage[] =
    "Usage: sketch hll retention [--json] BASE LATER...\n"
    "For the cohort in the sketch BASE (the users of a first day, say), estimate\n"
    "how many of it are in each LATER sketch, with bounds at 2 standard errors\n"
    "(95.45%), and what share of the cohort that is: one line per LATER, in the\n"
    "order given (sketch hll compare explains the estimate).\n"
    "\n"
    "      --json   print one JSON object\n"
    "  -h, --help   show this help\n"
    "Example, the day-1, day-7 and day-30 retention of a day's new users:\n"
    "  sketch hll retention new-0101.skh day-0102.skh day-0108.skh day-0131.skh\n";

/* The bounds at 2 standard errors, as people read them. */
#define SHOWN_K 1

static const char *const confidence[3] = {"68.27%", "95.45%", "99.73%"};

static void json_part(const char *name, const sk_hll_part *p, int first)
{
    printf("%s\"%s\": {\"estimate\": %.17g, \"standard_error\": %.17g, \"bounds\": "
           "[[%.17g, %.17g], [%.17g, %.17g], [%.17g, %.17g]]}",
           first ? "" : ", ", name, p->estimate, p->standard_error, p->lower[0], p->upper[0],
           p->lower[1], p->upper[1], p->lower[2], p->upper[2]);
}

/* A count as people read it: whole items. */
static void text_count(const char *name, const sk_hll_part *p)
{
    printf("%-14s %14.0f %14.0f %14.0f .. %.0f\n", name, p->estimate, p->standard_error,
           floor(p->lower[SHOWN_K]), ceil(p->upper[SHOWN_K]));
}

static void text_share(const char *name, const sk_hll_part *p)
{
    printf("%-14s %13.4f%% %13.4f%% %13.4f%% .. %.4f%%\n", name, 100 * p->estimate,
           100 * p->standard_error, 100 * p->lower[SHOWN_K], 100 * p->upper[SHOWN_K]);
}

static void compare_or_die(const sk_hll *a, const sk_hll *b, sk_hll_comparison *c)
{
    int rc = sk_hll_compare(a, b, c);
    if (rc != SK_OK)
        die("%s", sk_strerror(rc));
}

int hll_compare_files(const char *path_a, const char *path_b, int json)
{
    sk_hll *a = load_hll_or_die(path_a, NULL), *b = load_hll_or_die(path_b, NULL);
    sk_hll_comparison c;
    compare_or_die(a, b, &c);
    if (json) {
        printf("{\"a\": ");
        json_string(stdout, path_a, strlen(path_a));
        printf(", \"b\": ");
        json_string(stdout, path_b, strlen(path_b));
        printf(", \"precision\": %u, ", c.precision);
        json_part("union", &c.either, 1);
        json_part("intersection", &c.both, 0);
        json_part("a_only", &c.a_only, 0);
        json_part("b_only", &c.b_only, 0);
        json_part("jaccard", &c.jaccard, 0);
        json_part("a_in_b", &c.retained, 0);
        printf("}\n");
    } else {
        printf("A: %s\nB: %s\nprecision: %u\n\n", path_a, path_b, c.precision);
        printf("%-14s %14s %14s   bounds (%s)\n", "", "estimate", "standard error",
               confidence[SHOWN_K]);
        text_count("union", &c.either);
        text_count("intersection", &c.both);
        text_count("A only", &c.a_only);
        text_count("B only", &c.b_only);
        text_share("Jaccard", &c.jaccard);
        text_share("A in B", &c.retained);
    }
    sk_hll_free(a);
    sk_hll_free(b);
    return EXIT_OK;
}

int hll_retention_files(char **paths, int count, int json)
{
    /* Every file is read before a line is printed: a bad one is an error
     * alone, not the end of half a table. */
    sk_hll **sketches = calloc((size_t)count, sizeof *sketches);
    if (sketches == NULL)
        die("out of memory");
    for (int i = 0; i < count; i++)
        sketches[i] = load_hll_or_die(paths[i], NULL);
    uint64_t cohort = sk_hll_count(sketches[0]);
    if (json) {
        printf("{\"base\": ");
        json_string(stdout, paths[0], strlen(paths[0]));
        printf(", \"cohort\": %llu, \"later\": [", (unsigned long long)cohort);
    } else {
        printf("cohort: %s, %llu distinct\n\n", paths[0], (unsigned long long)cohort);
        printf("%-24s %12s %24s %10s %22s\n", "later", "returned", "bounds (95.45%)", "share",
               "bounds (95.45%)");
    }
    for (int i = 1; i < count; i++) {
        sk_hll_comparison c;
        compare_or_die(sketches[0], sketches[i], &c);
        if (json) {
            printf("%s{\"file\": ", i > 1 ? ", " : "");
            json_string(stdout, paths[i], strlen(paths[i]));
            printf(", \"count\": %llu, ", (unsigned long long)sk_hll_count(sketches[i]));
            json_part("returned", &c.both, 1);
            json_part("share", &c.retained, 0);
            printf("}");
        } else {
            char counts[64], shares[64];
            snprintf(counts, sizeof counts, "%.0f .. %.0f", floor(c.both.lower[SHOWN_K]),
                     ceil(c.both.upper[SHOWN_K]));
            snprintf(shares, sizeof shares, "%.2f%% .. %.2f%%", 100 * c.retained.lower[SHOWN_K],
                     100 * c.retained.upper[SHOWN_K]);
            printf("%-24s %12.0f %24s %9.2f%% %22s\n", paths[i], c.both.estimate, counts,
                   100 * c.retained.estimate, shares);
        }
    }
    if (json)
        printf("]}\n");
    for (int i = 0; i < count; i++)
        sk_hll_free(sketches[i]);
    free(sketches);
    return EXIT_OK;
}
