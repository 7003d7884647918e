/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compare_bench.c: the joint estimate of two sketches (sk_hll_compare)
 * against inclusion–exclusion, over a grid of set sizes, overlaps and
 * precisions, and the time of one comparison; for docs/accuracy.md.
 *
 * Accuracy
 * --------
 * For each precision p (default 12, 14, 16), each pair of set sizes
 * (|A|, |B|): equal at 10^3 .. 10^7, and the unequal pairs (10^3, 10^4),
 * (10^4, 10^6), (10^6, 10^4), (10^5, 10^7); and each Jaccard index J of
 * 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5 and 1, the sets share exactly
 * |A n B| = round(J (|A| + |B|) / (1 + J)) items; a point whose overlap
 * would exceed the smaller set is skipped. Each of T trials draws a fresh
 * stream of random 64-bit hashes (splitmix64 from a seed of its own):
 * items 0 .. |A| - 1 are A, items |A| - |A n B| .. |A| + |B| - |A n B| - 1
 * are B, each added once with sk_hll_add_hash to the sketch of its set(s).
 * On the same two sketches it measures
 *
 *   joint:  sk_hll_compare's |A n B| (and |A \ B|), with the standard error
 *           and the 1, 2 and 3 sigma bounds it reports;
 *   IE:     inclusion–exclusion, count(A) + count(B) - count(A u B) for
 *           |A n B| and count(A u B) - count(B) for |A \ B|, where A u B is
 *           sk_hll_merge of the two and count is sk_hll_count.
 *
 * A point reports the RMSE of both against the truth, their ratio, the
 * mean and median standard error the joint estimate reports and how often
 * its bounds hold the truth. Where one set is inside the other
 * (|A n B| = min(|A|, |B|)), A u B has the larger set's very registers, so
 * IE is the smaller set's own estimate, which no estimator beats: those
 * points are summarized apart.
 *
 * Trials default to 200 a point, 100 where a set has 10^7 items. Every
 * trial's seed comes from (seed, p, |A|, |B|, J, trial) and results are
 * summed in trial order, so the output does not depend on the number of
 * threads (which take trials from a shared counter).
 *
 * Timing
 * ------
 * One sk_hll_compare of two sketches (dense at |A| = |B| = 10^6 for
 * p = 12, 14, 16 and several J; sparse small ones), each call timed alone
 * with CLOCK_MONOTONIC, after warm-up calls, over 16 different pairs taken
 * in turn; the table gives the median and the minimum over the calls, the
 * median when one pair is compared over and over (faster: the branch
 * predictor learns its registers), and the median time of
 * inclusion–exclusion on the same pairs (two counts, a copy, a merge and a
 * third count). Timing runs on one thread, after the accuracy part.
 *
 * Output: the table and a summary on standard output, the accuracy rows as
 * tab-separated values in FILE (-o); progress on standard error.
 *
 * Usage: compare_bench [-t TRIALS] [-T LARGE_TRIALS] [-p P,...] [-j THREADS]
 *                      [-S SEED] [-n CALLS] [-o FILE] [-q] [-A | -B]
 *   -t  trials per point with both sets of at most 10^6 items (default 200)
 *   -T  trials per point with a set of 10^7 items (default 100)
 *   -p  precisions (default 12,14,16)
 *   -j  threads for the accuracy part (default: the online CPUs)
 *   -S  seed (default 1)
 *   -n  timed calls per row of the timing table (default 2000)
 *   -o  TSV file of the accuracy rows (default: none)
 *   -q  quick smoke run: 10 trials (3 at 10^7), 200 calls
 *   -A  the accuracy part only;  -B  the timing part only
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sketch/hll_extra.h"

#define MAX_THREADS 64
#define MAX_PRECISIONS 8

static const double SIZES[][2] = {
    {1e3, 1e3}, {1e4, 1e4}, {1e5, 1e5}, {1e6, 1e6}, {1e7, 1e7},
    {1e3, 1e4}, {1e4, 1e6}, {1e6, 1e4}, {1e5, 1e7},
};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
static const double JACCARD[] = {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5, 1};
#define NJACCARD (sizeof JACCARD / sizeof JACCARD[0])

static void die(const char *msg)
{
    fprintf(stderr, "compare_bench: %s\n", msg);
    exit(1);
}

static sk_hll *new_sketch(unsigned p)
{
    sk_hll *h;
    if (sk_hll_new(&h, p) != SK_OK)
        die("out of memory");
    return h;
}

static void add(sk_hll *h, uint64_t hash)
{
    if (sk_hll_add_hash(h, hash) < 0)
        die("out of memory");
}

/* Sketches of A and B as described at the top: the hashes of items
 * 0 .. end - 1 come from one splitmix64 sequence seeded with seed. */
static void build_pair(unsigned p, uint64_t seed, uint64_t na, uint64_t nb, uint64_t nx,
                       sk_hll **a, sk_hll **b)
{
    *a = new_sketch(p);
    *b = new_sketch(p);
    uint64_t first_b = na - nx, end = na - nx + nb, state = seed;
    for (uint64_t i = 0; i < end; i++) {
        uint64_t h = splitmix64(&state);
        if (i < na)
            add(*a, h);
        if (i >= first_b)
            add(*b, h);
    }
}

static uint64_t trial_seed(uint64_t seed, unsigned p, double na, double nb, unsigned j,
                           unsigned t)
{
    uint64_t s = seed;
    uint64_t parts[5] = {p, (uint64_t)na, (uint64_t)nb, j, t};
    for (int i = 0; i < 5; i++) {
        s ^= parts[i];
        s = splitmix64(&s);
    }
    return s;
}

/* ---- accuracy ------------------------------------------------------------ */

struct outcome {
    double both, both_se, ie, a_only, a_only_ie;
    int covered[3];
};

struct job {
    unsigned p, jindex, trials;
    uint64_t na, nb, nx, seed;
    struct outcome *out;
    atomic_uint next;
};

static void trial(const struct job *job, unsigned t, struct outcome *o)
{
    sk_hll *a, *b, *u;
    build_pair(job->p, trial_seed(job->seed, job->p, (double)job->na, (double)job->nb,
                                  job->jindex, t),
               job->na, job->nb, job->nx, &a, &b);
    sk_hll_comparison c;
    if (sk_hll_compare(a, b, &c) != SK_OK)
        die("sk_hll_compare failed");
    if (sk_hll_copy(&u, a) != SK_OK || sk_hll_merge(u, b) != SK_OK)
        die("out of memory");
    double ca = (double)sk_hll_count(a), cb = (double)sk_hll_count(b);
    double cu = (double)sk_hll_count(u);
    double nx = (double)job->nx;
    o->both = c.both.estimate;
    o->both_se = c.both.standard_error;
    o->ie = ca + cb - cu;
    o->a_only = c.a_only.estimate;
    o->a_only_ie = cu - cb;
    for (int k = 0; k < 3; k++)
        o->covered[k] = c.both.lower[k] <= nx && nx <= c.both.upper[k];
    sk_hll_free(a);
    sk_hll_free(b);
    sk_hll_free(u);
}

static void *worker_main(void *arg)
{
    struct job *job = arg;
    for (;;) {
        unsigned t = atomic_fetch_add(&job->next, 1);
        if (t >= job->trials)
            break;
        trial(job, t, &job->out[t]);
    }
    return NULL;
}

struct point {
    unsigned p;
    double na, nb, jaccard, nx, un;
    unsigned trials;
    int contained;
    double rmse, ie_rmse, bias, ie_bias, se, median_se, cover[3];
    double ao_rmse, ao_ie_rmse;
    double seconds;
};

static double ratio(double x, double y)
{
    return y > 0 ? x / y : NAN;
}

static void run_point(struct point *pt, unsigned jindex, uint64_t seed, unsigned threads,
                      struct outcome *out, double *scratch)
{
    struct job job = {.p = pt->p, .jindex = jindex, .trials = pt->trials,
                      .na = (uint64_t)pt->na, .nb = (uint64_t)pt->nb, .nx = (uint64_t)pt->nx,
                      .seed = seed, .out = out};
    atomic_init(&job.next, 0);
    pthread_t tid[MAX_THREADS];
    double t0 = now_ns();
    unsigned n = threads < pt->trials ? threads : pt->trials;
    for (unsigned i = 0; i < n; i++)
        if (pthread_create(&tid[i], NULL, worker_main, &job) != 0)
            die("cannot start a thread");
    for (unsigned i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
    pt->seconds = (now_ns() - t0) / 1e9;

    double e = 0, e2 = 0, ie = 0, ie2 = 0, se = 0, ao2 = 0, aoie2 = 0;
    int cov[3] = {0};
    double ao_true = pt->na - pt->nx;
    for (unsigned t = 0; t < pt->trials; t++) {
        const struct outcome *o = &out[t];
        double d = o->both - pt->nx, di = o->ie - pt->nx;
        e += d;
        e2 += d * d;
        ie += di;
        ie2 += di * di;
        se += o->both_se;
        scratch[t] = o->both_se;
        double da = o->a_only - ao_true, dai = o->a_only_ie - ao_true;
        ao2 += da * da;
        aoie2 += dai * dai;
        for (int k = 0; k < 3; k++)
            cov[k] += o->covered[k];
    }
    double T = pt->trials;
    pt->rmse = sqrt(e2 / T);
    pt->ie_rmse = sqrt(ie2 / T);
    pt->bias = e / T;
    pt->ie_bias = ie / T;
    pt->se = se / T;
    pt->median_se = median_of(scratch, (int)pt->trials);
    for (int k = 0; k < 3; k++)
        pt->cover[k] = cov[k] / T;
    pt->ao_rmse = sqrt(ao2 / T);
    pt->ao_ie_rmse = sqrt(aoie2 / T);
}

static void print_ratio(double r)
{
    if (isnan(r))
        printf(" %7s", "-");
    else
        printf(" %7.2f", r);
}

static void print_header(void)
{
    printf("%3s %9s %9s %6s %9s | %10s %10s %7s | %10s %10s %7s | %10s %10s %6s\n", "p", "|A|",
           "|B|", "J", "|AnB|", "joint", "IE", "IE/jnt", "A-only jnt", "A-only IE",
           "IE/jnt", "mean SE", "med SE", "cov2");
}

static void print_row(const struct point *pt)
{
    printf("%3u %9.0f %9.0f %6g %9.0f | %10.1f %10.1f", pt->p, pt->na, pt->nb, pt->jaccard,
           pt->nx, pt->rmse, pt->ie_rmse);
    print_ratio(ratio(pt->ie_rmse, pt->rmse));
    printf(" | %10.1f %10.1f", pt->ao_rmse, pt->ao_ie_rmse);
    print_ratio(ratio(pt->ao_ie_rmse, pt->ao_rmse));
    printf(" | %10.1f %10.1f %5.1f%%%s\n", pt->se, pt->median_se, 100 * pt->cover[1],
           pt->contained ? "  (contained)" : "");
}

static void tsv_number(FILE *f, double x)
{
    if (isnan(x))
        fprintf(f, "\tNaN");
    else
        fprintf(f, "\t%.6g", x);
}

static void tsv_row(FILE *f, const struct point *pt)
{
    fprintf(f, "%u\t%.0f\t%.0f\t%g\t%.0f\t%.0f\t%u\t%d", pt->p, pt->na, pt->nb, pt->jaccard,
            pt->nx, pt->un, pt->trials, pt->contained);
    double v[] = {pt->rmse, pt->ie_rmse, ratio(pt->ie_rmse, pt->rmse), pt->bias, pt->ie_bias,
                  pt->se, pt->median_se, pt->cover[0], pt->cover[1], pt->cover[2], pt->na - pt->nx,
                  pt->ao_rmse, pt->ao_ie_rmse, ratio(pt->ao_ie_rmse, pt->ao_rmse)};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        tsv_number(f, v[i]);
    fprintf(f, "\n");
}

/* IE's RMSE of |A n B| over the joint estimate's: above 1 where joint wins. */
static double ie_over_joint(const struct point *pt)
{
    return ratio(pt->ie_rmse, pt->rmse);
}

/* Points of one kind: how many, the ones of least and most IE/joint, and
 * the sum of the logarithms of IE/joint (for a geometric mean). */
struct ratio_span {
    size_t count, least, most;
    double sum_log;
};

static void span_add(struct ratio_span *span, const struct point *pts, size_t i)
{
    double r = ie_over_joint(&pts[i]);
    if (span->count == 0 || r < ie_over_joint(&pts[span->least]))
        span->least = i;
    if (span->count == 0 || r > ie_over_joint(&pts[span->most]))
        span->most = i;
    span->sum_log += log(r);
    span->count++;
}

static const char *where(const struct point *pt, char *buf, size_t cap)
{
    snprintf(buf, cap, "p=%u |A|=%.0f |B|=%.0f J=%g", pt->p, pt->na, pt->nb, pt->jaccard);
    return buf;
}

static void summarize(const struct point *pts, size_t n)
{
    char w1[128], w2[128];
    /* Every point: is the joint estimate ever worse? */
    size_t above = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        above += pts[i].rmse > pts[i].ie_rmse;
        if (ratio(pts[i].rmse, pts[i].ie_rmse) > ratio(pts[worst].rmse, pts[worst].ie_rmse))
            worst = i;
    }
    printf("\nsummary over %zu points:\n", n);
    printf("  |A n B|: joint RMSE above IE's at %zu of %zu points; largest joint/IE %.3f (%s)\n",
           above, n, ratio(pts[worst].rmse, pts[worst].ie_rmse), where(&pts[worst], w1, sizeof w1));

    /* Small intersections, neither set inside the other. */
    struct ratio_span small = {0};
    for (size_t i = 0; i < n; i++)
        /* J < 0.1 is |A n B| < 10% of the union before rounding; at J = 0.1
         * itself the rounded overlap falls on either side. */
        if (pts[i].jaccard < 0.1 && !pts[i].contained)
            span_add(&small, pts, i);
    if (small.count)
        printf("  |A n B| < 10%% of the union (J < 0.1), neither set inside the other (%zu points): "
               "IE/joint min %.2f (%s), max %.2f (%s), geometric mean %.2f\n",
               small.count, ie_over_joint(&pts[small.least]),
               where(&pts[small.least], w1, sizeof w1), ie_over_joint(&pts[small.most]),
               where(&pts[small.most], w2, sizeof w2), exp(small.sum_log / (double)small.count));

    /* One set inside the other. */
    struct ratio_span inside = {0};
    for (size_t i = 0; i < n; i++)
        if (pts[i].contained)
            span_add(&inside, pts, i);
    if (inside.count)
        printf("  one set inside the other (%zu points): IE/joint %.3f (%s) .. %.3f (%s)\n",
               inside.count, ie_over_joint(&pts[inside.least]),
               where(&pts[inside.least], w1, sizeof w1), ie_over_joint(&pts[inside.most]),
               where(&pts[inside.most], w2, sizeof w2));

    /* A \ B, where it is not empty. */
    size_t ao = 0, ao_above = 0, ao_worst = 0, ao_small = 0, ao_least = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(pts[i].na > pts[i].nx))
            continue;
        if (ao == 0 || ratio(pts[i].ao_rmse, pts[i].ao_ie_rmse) >
                           ratio(pts[ao_worst].ao_rmse, pts[ao_worst].ao_ie_rmse))
            ao_worst = i;
        ao_above += pts[i].ao_rmse > pts[i].ao_ie_rmse;
        ao++;
        if (pts[i].na - pts[i].nx < 0.1 * pts[i].un) {
            if (ao_small == 0 || ratio(pts[i].ao_ie_rmse, pts[i].ao_rmse) <
                                     ratio(pts[ao_least].ao_ie_rmse, pts[ao_least].ao_rmse))
                ao_least = i;
            ao_small++;
        }
    }
    if (ao)
        printf("  |A \\ B| (not empty, %zu points): joint RMSE above IE's at %zu; largest "
               "joint/IE %.3f (%s)\n",
               ao, ao_above, ratio(pts[ao_worst].ao_rmse, pts[ao_worst].ao_ie_rmse),
               where(&pts[ao_worst], w1, sizeof w1));
    if (ao_small)
        printf("  |A \\ B| < 10%% of the union (%zu points): IE/joint min %.2f (%s)\n", ao_small,
               ratio(pts[ao_least].ao_ie_rmse, pts[ao_least].ao_rmse),
               where(&pts[ao_least], w1, sizeof w1));

    /* Coverage of the reported bounds. */
    static const double nominal[3] = {68.27, 95.45, 99.73};
    for (int k = 0; k < 3; k++) {
        double sum = 0, min = 1;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            sum += pts[i].cover[k];
            if (pts[i].cover[k] < min) {
                min = pts[i].cover[k];
                at = i;
            }
        }
        printf("  %d-sigma bounds of |A n B| (nominal %.2f%%): hold the truth in %.1f%% of "
               "trials on average, %.1f%% at the least (%s)\n",
               k + 1, nominal[k], 100 * sum / (double)n, 100 * min, where(&pts[at], w1, sizeof w1));
    }
}

static void accuracy(const unsigned *precisions, unsigned np, unsigned trials,
                     unsigned large_trials, unsigned threads, uint64_t seed, const char *tsv)
{
    FILE *f = NULL;
    if (tsv != NULL) {
        f = fopen(tsv, "w");
        if (f == NULL) {
            fprintf(stderr, "compare_bench: %s: %s\n", tsv, strerror(errno));
            exit(1);
        }
        fprintf(f, "p\ta\tb\tjaccard\tintersection\tunion\ttrials\tcontained\tjoint_rmse\t"
                   "ie_rmse\tie_over_joint\tjoint_bias\tie_bias\tjoint_se\tjoint_median_se\tcover1\tcover2\t"
                   "cover3\ta_only\ta_only_joint_rmse\ta_only_ie_rmse\ta_only_ie_over_joint\n");
    }
    size_t cap = (size_t)np * NSIZES * NJACCARD, n = 0;
    struct point *pts = xmalloc(cap * sizeof *pts);
    unsigned most = trials > large_trials ? trials : large_trials;
    struct outcome *out = xmalloc(most * sizeof *out);
    double *scratch = xmalloc(most * sizeof *scratch);

    printf("accuracy: |A n B| and |A \\ B| by sk_hll_compare (joint) and by "
           "inclusion-exclusion (IE) on the same sketches;\n"
           "RMSE in items over %u trials a point (%u where a set has 10^7 items), "
           "%u thread(s), seed %llu\n\n",
           trials, large_trials, threads, (unsigned long long)seed);
    double t0 = now_ns();
    for (unsigned ip = 0; ip < np; ip++) {
        print_header();
        for (size_t is = 0; is < NSIZES; is++) {
            for (unsigned j = 0; j < NJACCARD; j++) {
                double na = SIZES[is][0], nb = SIZES[is][1];
                double nx = floor(JACCARD[j] * (na + nb) / (1 + JACCARD[j]) + 0.5);
                if (nx > na || nx > nb)
                    continue;
                struct point *pt = &pts[n++];
                *pt = (struct point){.p = precisions[ip], .na = na, .nb = nb,
                                     .jaccard = JACCARD[j], .nx = nx, .un = na + nb - nx,
                                     .contained = nx == fmin(na, nb)};
                pt->trials = fmax(na, nb) > 1e6 ? large_trials : trials;
                run_point(pt, j, seed, threads, out, scratch);
                print_row(pt);
                fflush(stdout);
                if (f != NULL)
                    tsv_row(f, pt);
                fprintf(stderr, "compare_bench: p=%u |A|=%.0f |B|=%.0f J=%g: %.1f s\n", pt->p,
                        na, nb, JACCARD[j], pt->seconds);
            }
        }
        printf("\n");
    }
    if (f != NULL && fclose(f) != 0)
        die("cannot write the TSV file");
    summarize(pts, n);
    printf("  accuracy part: %.0f s\n\n", (now_ns() - t0) / 1e9);
    free(pts);
    free(out);
    free(scratch);
}

/* ---- timing -------------------------------------------------------------- */

static const char *encoding(const sk_hll *h)
{
    sk_hll_info info;
    sk_hll_get_info(h, &info);
    return info.encoding == SK_HLL_SPARSE ? "sparse" : "dense";
}

/* Pairs of sketches a timing row takes in turn: the same pair compared
 * over and over lets the branch predictor learn its registers (at p = 14
 * that made a comparison three times faster), which no real use sees. */
#define PAIRS 16

static double time_compare(const sk_hll *a, const sk_hll *b)
{
    sk_hll_comparison c;
    double t0 = now_ns();
    if (sk_hll_compare(a, b, &c) != SK_OK)
        die("sk_hll_compare failed");
    double t = now_ns() - t0;
    sink += (uint64_t)c.both.estimate;
    return t;
}

static double time_ie(const sk_hll *a, const sk_hll *b)
{
    sk_hll *u;
    double t0 = now_ns();
    uint64_t x = sk_hll_count(a) + sk_hll_count(b);
    if (sk_hll_copy(&u, a) != SK_OK || sk_hll_merge(u, b) != SK_OK)
        die("out of memory");
    x -= sk_hll_count(u);
    sk_hll_free(u);
    double t = now_ns() - t0;
    sink += x;
    return t;
}

/* The median time of `calls` calls of fn, after calls / 10 warm-up calls,
 * over the first `pairs` pairs in turn; the fastest call goes to *min. */
static double time_calls(double (*fn)(const sk_hll *, const sk_hll *), sk_hll **a, sk_hll **b,
                         unsigned pairs, unsigned calls, double *t, double *min)
{
    for (unsigned i = 0; i < calls / 10; i++)
        fn(a[i % pairs], b[i % pairs]);
    for (unsigned i = 0; i < calls; i++)
        t[i] = fn(a[i % pairs], b[i % pairs]);
    double median = median_of(t, (int)calls);
    if (min != NULL)
        *min = t[0]; /* sorted by median_of */
    return median;
}

static void timing(unsigned calls, uint64_t seed)
{
    static const struct {
        unsigned p;
        double n, jaccard;
    } rows[] = {
        {12, 1e6, 0.1}, {14, 1e6, 0.001}, {14, 1e6, 0.1}, {14, 1e6, 1}, {16, 1e6, 0.1},
        {12, 200, 0.1}, {14, 1000, 0.1},  {16, 3000, 0.1},
    };
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("timing: one sk_hll_compare of two sketches of n items each, in microseconds: %u "
           "calls a row,\neach timed alone (CLOCK_MONOTONIC, resolution %ld ns), after %u "
           "warm-up calls, taking %d\ndifferent pairs in turn; \"1 pair\": the first pair "
           "alone, compared over and over. IE: two\ncounts, a copy, a merge and a count of the "
           "union, on the same %d pairs in turn.\n\n",
           calls, (long)res.tv_nsec, calls / 10, PAIRS, PAIRS);
    printf("%3s %8s %6s %-7s | %10s %10s | %10s | %10s\n", "p", "n", "J", "sketch", "median",
           "min", "1 pair", "IE median");
    double *t = xmalloc(calls * sizeof *t);
    /* Let the CPU leave any low-power state first. */
    for (double start = now_ns(); now_ns() - start < 300e6;)
        sink += splitmix64(&seed);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        double n = rows[r].n, J = rows[r].jaccard;
        double nx = floor(J * 2 * n / (1 + J) + 0.5);
        sk_hll *a[PAIRS], *b[PAIRS];
        for (int k = 0; k < PAIRS; k++) {
            build_pair(rows[r].p, trial_seed(seed ^ 0x7137, rows[r].p, n, n, (unsigned)r,
                                             (unsigned)k),
                       (uint64_t)n, (uint64_t)n, (uint64_t)nx, &a[k], &b[k]);
            if (strcmp(encoding(a[k]), encoding(a[0])) != 0 ||
                strcmp(encoding(b[k]), encoding(a[0])) != 0)
                die("the sketches of a row differ in encoding");
        }
        double min, med = time_calls(time_compare, a, b, PAIRS, calls, t, &min);
        double one = time_calls(time_compare, a, b, 1, calls, t, NULL);
        double ie = time_calls(time_ie, a, b, PAIRS, calls, t, NULL);
        printf("%3u %8.0f %6g %-7s | %10.1f %10.1f | %10.1f | %10.1f\n", rows[r].p, n, J,
               encoding(a[0]), med / 1e3, min / 1e3, one / 1e3, ie / 1e3);
        fflush(stdout);
        for (int k = 0; k < PAIRS; k++) {
            sk_hll_free(a[k]);
            sk_hll_free(b[k]);
        }
    }
    free(t);
    printf("\n");
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: compare_bench [-t TRIALS] [-T LARGE_TRIALS] [-p P,...] [-j THREADS]\n"
          "                     [-S SEED] [-n CALLS] [-o FILE] [-q] [-A | -B]\n"
          "  -t  trials per point with both sets of at most 10^6 items (default 200)\n"
          "  -T  trials per point with a set of 10^7 items (default 100)\n"
          "  -p  precisions (default 12,14,16)\n"
          "  -j  threads for the accuracy part (default: the online CPUs)\n"
          "  -S  seed (default 1)\n"
          "  -n  timed calls per row of the timing table (default 2000)\n"
          "  -o  TSV file of the accuracy rows\n"
          "  -q  quick smoke run: 10 trials (3 at 10^7), 200 calls\n"
          "  -A  the accuracy part only; -B the timing part only\n",
          stderr);
    exit(2);
}

static uint64_t parse_u64(const char *s)
{
    return bench_parse_u64(s, usage);
}

int main(int argc, char **argv)
{
    unsigned trials = 200, large_trials = 100, calls = 2000;
    unsigned precisions[MAX_PRECISIONS] = {12, 14, 16}, np = 3;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cpus > 0 ? (unsigned)cpus : 1;
    uint64_t seed = 1;
    const char *tsv = NULL;
    int quick = 0, only_accuracy = 0, only_timing = 0, c;
    while ((c = getopt(argc, argv, "t:T:p:j:S:n:o:qABh")) != -1) {
        switch (c) {
        case 't': trials = (unsigned)parse_u64(optarg); break;
        case 'T': large_trials = (unsigned)parse_u64(optarg); break;
        case 'p': np = bench_parse_list(optarg, precisions, MAX_PRECISIONS, usage); break;
        case 'j': threads = (unsigned)parse_u64(optarg); break;
        case 'S': seed = parse_u64(optarg); break;
        case 'n': calls = (unsigned)parse_u64(optarg); break;
        case 'o': tsv = optarg; break;
        case 'q': quick = 1; break;
        case 'A': only_accuracy = 1; break;
        case 'B': only_timing = 1; break;
        default: usage();
        }
    }
    if (quick) {
        trials = 10;
        large_trials = 3;
        calls = 200;
    }
    if (optind != argc || trials < 2 || large_trials < 2 || calls < 10 || np == 0 ||
        threads < 1 || threads > MAX_THREADS || (only_accuracy && only_timing))
        usage();
    for (unsigned i = 0; i < np; i++)
        if (precisions[i] < SK_HLL_MIN_PRECISION || precisions[i] > SK_HLL_MAX_PRECISION)
            usage();

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    printf("libsketch %s: sk_hll_compare against inclusion-exclusion\n", sk_version());
    printf("CPU:       %s (%ld online)\n", cpu, cpus);
    printf("Compiler:  %s, %s build, flags: %s\n\n", BENCH_COMPILER, BENCH_CONFIG_NAME,
           BENCH_FLAGS);
    if (!only_timing)
        accuracy(precisions, np, trials, large_trials, threads, seed, tsv);
    if (!only_accuracy)
        timing(calls, seed);
    return 0;
}
