/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_fpr.c: measured false-positive rates of Bloom filters against
 * the theory, for the classic, blocked, split and scalable filters, from
 * 10^3 to 10^8 items and rates from 10^-1 to 10^-6.
 *
 * Each point of the grid fills T independent filters with n distinct items
 * (8-byte counters through the real hash: sk_bloom_add, or its batch form
 * for n >= 10^6) and queries Q items that were never added (bit 62 set,
 * which no added item has). A filter of fixed size is created once per
 * point and cleared between its trials; scalable ones are created anew.
 * Trials: T = 10^6 / n below 10^5 items (20 at 10^5, 1 from 10^6; scalable
 * filters, slower to build, 50 at 10^3 and 20 at 10^4). The measured rate
 * X/Q, X false positives, is compared with E = sk_bloom_expected_fp_rate(f,
 * n), the exact rate of the layout at n items, and with the requested rate p:
 *
 *   |X/Q - E| <= 4 sd + tol E               (fixed-size filters)
 *   X/Q <= p + 4 sqrt(p (1 - p) / Q)        (every filter)
 *
 * where sd is the larger of the binomial sqrt(E (1 - E) / Q) and, with 20
 * or more filters, the standard error of the mean of their T rates (which
 * also holds the spread from one filter to the next: the fill of small
 * filters, the loads of few blocks). The model tolerance tol = 2% covers:
 * the classic formula (1 - e^(-kn/m))^k, which ignores the spread of the
 * fill around its mean (by Jensen it is low by about 0.15 k(k-1)/m, below
 * 0.1% on this grid) and double hashing; the blocked formula, exact for
 * this layout up to the Poisson law of items per block (the binomial law's
 * variance differs by 1/B of B blocks), and so is the split formula, which
 * also assumes the lanes' bits independent (they are multiplies of the
 * same two 32-bit values, so this tests that too); and the spread between filters
 * where a point has too few of them for an empirical error, at most about
 * 3 sqrt(512/m), 1.2% for the smallest such filter (m = 1.9e7 bits).
 *
 * Over all the points of a layout, the sum of the N z scores (measured - E)
 * / sd must be within 4 sqrt(N) (for scalable filters: below it): a bias
 * of a few percent in E or in the filter, too small for any one point,
 * adds up there (sizing blocked filters by the textbook approximation of
 * their rate instead of the exact one moves each z by about +1.5).
 *
 * Scalable filters start at n/64 items (expansion 2, so 7 layers at n) and
 * are held to the requested overall rate, measured <= p + 4 sd, and, one-
 * sidedly, to their expected rate: E assumes every layer is filled with
 * distinct items, but the items a scalable filter already reports present
 * are not added, so its layers are a little emptier and its rate a little
 * lower (up to about k p relative); 0.75 E - 4 sd is the floor.
 *
 * Q aims at 20000 false positives (5000 for the slower scalable filters),
 * within a time budget: at 10^-5 and 10^-6 only hundreds or tens can be
 * afforded, which still catches gross errors. Every added item is checked
 * for false negatives (one in ten at 10^7 and 10^8 items), and none is
 * allowed.
 *
 * Besides the grid above, 10^3 items at 10^-5 for each layout: small filters
 * at a low rate, where m is a few tens of thousands of bits and any
 * structure in how positions are derived from the hash shows.
 *
 * The points run on two threads (the filters are independent); the whole
 * grid takes about 40 s in a release build, most of it the scalable filter
 * of 10^8 items, each of whose adds looks up its six older layers.
 *
 * All items are deterministic, so a failure reproduces exactly.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../common/test_util.h"

#include "sketch.h"

#define ABSENT_BIT (UINT64_C(1) << 62)
#define CHUNK 1024
#define TOL 0.02
#define WORKERS 2

enum kind { CLASSIC, BLOCKED, SPLIT, SCALABLE_BLOCKED, SCALABLE_CLASSIC };
static const char *const kind_names[] = {"classic", "blocked", "split", "scal-blk", "scal-cls"};
/* The kinds of the grid's coverage: a scalable classic point covers the
 * scalable kind. */
#define COVERED_KINDS 4

struct point {
    enum kind kind;
    uint64_t n;
    double p;
    unsigned trials;
    uint64_t queries; /* over all trials */
    /* results */
    int error;        /* a status of the library, if it failed */
    double bits_per_item;
    unsigned hashes, layers;
    double expected;  /* mean over the trials */
    uint64_t fp, queried;
    double sum_rate, sum_sq_rate; /* over the trials */
    uint64_t fn, fn_checked;
    double seconds;
};

static struct point grid[96];
static int npoints;

static void add_point(enum kind kind, uint64_t n, double p)
{
    struct point *pt = &grid[npoints++];
    memset(pt, 0, sizeof *pt);
    pt->kind = kind;
    pt->n = n;
    pt->p = p;
    int scalable = kind >= SCALABLE_BLOCKED;
    /* Small filters: many, about 10^6 items in all (fewer scalable ones,
     * whose every layer is sized anew). */
    pt->trials = n >= 1000000 ? 1 : n >= 100000 ? 20 : (unsigned)(1000000 / n);
    if (scalable && n < 100000)
        pt->trials = n >= 10000 ? 20 : 50;
    double target = scalable ? 5000 : 20000;
    double cap = scalable ? (n >= 10000000 ? 4e6 : 1e7) : (p < 1e-4 ? 4e7 : 2e7);
    double q = fmin(target / p, cap);
    pt->queries = (uint64_t)q / pt->trials * pt->trials;
}

static void build_grid(void)
{
    static const double small_p[] = {1e-1, 1e-2, 1e-3};
    static const double tiny_p[] = {1e-4, 1e-5, 1e-6};
    npoints = 0;
    /* The largest first, so that the two threads end together. */
    add_point(SCALABLE_BLOCKED, 100000000, 1e-2);
    add_point(CLASSIC, 100000000, 1e-2);
    add_point(BLOCKED, 100000000, 1e-2);
    add_point(SPLIT, 100000000, 1e-2);
    add_point(CLASSIC, 10000000, 1e-3);
    add_point(BLOCKED, 10000000, 1e-3);
    add_point(SPLIT, 10000000, 1e-3);
    add_point(SCALABLE_BLOCKED, 10000000, 1e-3);
    for (int i = 0; i < 3; i++) {
        add_point(CLASSIC, 1000000, tiny_p[i]);
        add_point(BLOCKED, 1000000, tiny_p[i]);
        add_point(SPLIT, 1000000, tiny_p[i]);
        add_point(SCALABLE_CLASSIC, 1000000, tiny_p[i]);
    }
    for (uint64_t n = 100000; n >= 1000; n /= 10) {
        for (int i = 0; i < 3; i++) {
            add_point(CLASSIC, n, small_p[i]);
            add_point(BLOCKED, n, small_p[i]);
            add_point(SPLIT, n, small_p[i]);
            add_point(i == 1 && n == 10000 ? SCALABLE_CLASSIC : SCALABLE_BLOCKED, n,
                      small_p[i]);
        }
    }
    /* Small filters at a low rate, where the m bits are few. */
    add_point(CLASSIC, 1000, 1e-5);
    add_point(BLOCKED, 1000, 1e-5);
    add_point(SPLIT, 1000, 1e-5);
    add_point(SCALABLE_CLASSIC, 1000, 1e-5);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Item i of trial t of point pi, and the j-th absent one. */
static uint64_t added_key(int pi, unsigned t, uint64_t i)
{
    return (uint64_t)pi << 48 | (uint64_t)t << 27 | i;
}

static uint64_t absent_key(int pi, unsigned t, uint64_t j)
{
    return ABSENT_BIT | (uint64_t)pi << 48 | (uint64_t)t << 30 | j;
}

struct chunk {
    uint64_t keys[CHUNK];
    const void *items[CHUNK];
    size_t lens[CHUNK];
    uint8_t flags[CHUNK];
};

static void chunk_init(struct chunk *c)
{
    for (int j = 0; j < CHUNK; j++) {
        c->items[j] = &c->keys[j];
        c->lens[j] = sizeof c->keys[j];
    }
}

static int new_filter(const struct point *pt, sk_bloom **f)
{
    switch (pt->kind) {
    case CLASSIC:
        return sk_bloom_new(f, pt->n, pt->p, SK_BLOOM_CLASSIC);
    case BLOCKED:
        return sk_bloom_new(f, pt->n, pt->p, SK_BLOOM_BLOCKED);
    case SPLIT:
        return sk_bloom_new(f, pt->n, pt->p, SK_BLOOM_SPLIT);
    case SCALABLE_BLOCKED:
        return sk_bloom_create(f, &(sk_bloom_options){.capacity = pt->n / 64, .fp_rate = pt->p, .expansion = 2, .layout = SK_BLOOM_BLOCKED});
    default:
        return sk_bloom_create(f, &(sk_bloom_options){.capacity = pt->n / 64, .fp_rate = pt->p, .expansion = 2, .layout = SK_BLOOM_CLASSIC});
    }
}

static void run_point(int pi)
{
    struct point *pt = &grid[pi];
    struct chunk *c = malloc(sizeof *c);
    if (c == NULL) {
        pt->error = SK_ENOMEM;
        return;
    }
    chunk_init(c);
    double start = now();
    uint64_t per_trial = pt->queries / pt->trials;
    /* Small filters through the single calls, large ones through batches. */
    int single = pt->n <= 100000;
    uint64_t fn_stride = pt->n >= 10000000 ? 10 : 1;
    sk_bloom *f = NULL;
    for (unsigned t = 0; t < pt->trials && pt->error == 0; t++) {
        int rc = SK_OK;
        /* A filter of fixed size is made once and cleared for each trial. */
        rc = f != NULL ? sk_bloom_clear(f) : new_filter(pt, &f);
        if (rc != SK_OK) {
            pt->error = rc;
            break;
        }
        for (uint64_t i = 0; i < pt->n && pt->error == 0; i += CHUNK) {
            size_t count = pt->n - i < CHUNK ? (size_t)(pt->n - i) : CHUNK;
            for (size_t j = 0; j < count; j++)
                c->keys[j] = added_key(pi, t, i + j);
            if (single) {
                for (size_t j = 0; j < count; j++) {
                    rc = sk_bloom_add(f, c->items[j], c->lens[j]);
                    if (rc < 0)
                        pt->error = rc;
                }
            } else if ((rc = sk_bloom_add_batch(f, c->items, c->lens, count, NULL)) != SK_OK) {
                pt->error = rc;
            }
        }
        sk_bloom_info info;
        sk_bloom_get_info(f, &info);
        pt->bits_per_item = (double)info.bits / (double)pt->n;
        pt->hashes = info.hashes;
        pt->layers = info.layers;
        pt->expected += sk_bloom_expected_fp_rate(f, pt->n) / pt->trials;

        /* No false negatives. */
        for (uint64_t i = 0; i < pt->n; i += fn_stride) {
            uint64_t key = added_key(pi, t, i);
            pt->fn_checked++;
            pt->fn += sk_bloom_contains(f, &key, sizeof key) != 1;
        }
        /* False positives. */
        uint64_t fp = 0;
        for (uint64_t j = 0; j < per_trial; j += CHUNK) {
            size_t count = per_trial - j < CHUNK ? (size_t)(per_trial - j) : CHUNK;
            for (size_t q = 0; q < count; q++)
                c->keys[q] = absent_key(pi, t, j + q);
            if (single) {
                for (size_t q = 0; q < count; q++)
                    fp += (uint64_t)sk_bloom_contains(f, c->items[q], c->lens[q]);
            } else {
                sk_bloom_contains_batch(f, c->items, c->lens, count, c->flags);
                for (size_t q = 0; q < count; q++)
                    fp += c->flags[q];
            }
        }
        pt->fp += fp;
        pt->queried += per_trial;
        double rate = (double)fp / (double)per_trial;
        pt->sum_rate += rate;
        pt->sum_sq_rate += rate * rate;
        if (pt->kind >= SCALABLE_BLOCKED) {
            sk_bloom_free(f);
            f = NULL;
        }
    }
    sk_bloom_free(f);
    pt->seconds = now() - start;
    free(c);
}

static _Atomic int next_point;

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        int i = atomic_fetch_add(&next_point, 1);
        if (i >= npoints)
            return NULL;
        run_point(i);
    }
}

static int run_grid(void **state)
{
    build_grid();
    atomic_store(&next_point, 0);
    pthread_t threads[WORKERS];
    double start = now();
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, NULL) != 0)
            return -1;
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    printf("# %d points in %.1f s on %d threads\n", npoints, now() - start, WORKERS);
    return 0;
}

/* Checks (and prints) the points of the given kinds. */
static void check(enum kind a, enum kind b)
{
    printf("%-8s %10s %7s %5s %9s %6s %3s %3s %10s %12s %12s %8s %8s %6s\n", "layout", "n",
           "p", "T", "queries", "bits/n", "k", "L", "fp", "expected", "measured", "z",
           "meas/p", "sec");
    int failures = 0, counted = 0;
    double sum_z = 0;
    for (int i = 0; i < npoints; i++) {
        struct point *pt = &grid[i];
        if (pt->kind != a && pt->kind != b)
            continue;
        if (pt->error != SK_OK) {
            printf("FAIL: %s n=%llu p=%g: %s\n", kind_names[pt->kind],
                   (unsigned long long)pt->n, pt->p, sk_strerror(pt->error));
            failures++;
            continue;
        }
        double q = (double)pt->queried, e = pt->expected;
        double measured = (double)pt->fp / q;
        double sd = sqrt(e * (1 - e) / q);
        if (pt->trials >= 20) {
            double mean = pt->sum_rate / pt->trials;
            double var = (pt->sum_sq_rate - pt->trials * mean * mean) / (pt->trials - 1);
            double se = sqrt(fmax(var, 0) / pt->trials);
            sd = fmax(sd, se);
        }
        double z = (measured - e) / sd;
        sum_z += z;
        counted++;
        printf("%-8s %10llu %7.0e %5u %9llu %6.2f %3u %3u %10llu %12.5e %12.5e %8.2f %8.4f "
               "%6.1f\n",
               kind_names[pt->kind], (unsigned long long)pt->n, pt->p, pt->trials,
               (unsigned long long)pt->queried, pt->bits_per_item, pt->hashes, pt->layers,
               (unsigned long long)pt->fp, e, measured, z, measured / pt->p, pt->seconds);
        double p_limit = pt->p + 4 * sqrt(pt->p * (1 - pt->p) / q);
        if (pt->fn != 0) {
            printf("FAIL: %llu false negatives in %llu added items\n",
                   (unsigned long long)pt->fn, (unsigned long long)pt->fn_checked);
            failures++;
        }
        if (measured > p_limit) {
            printf("FAIL: measured %.5e above the requested %g + 4 sd = %.5e\n", measured,
                   pt->p, p_limit);
            failures++;
        }
        if (pt->kind < SCALABLE_BLOCKED) {
            if (fabs(measured - e) > 4 * sd + TOL * e) {
                printf("FAIL: |measured - expected| = %.3e above 4 sd + %.0f%% = %.3e\n",
                       fabs(measured - e), 100 * TOL, 4 * sd + TOL * e);
                failures++;
            }
            if (!(e <= pt->p * (1 + 1e-9))) {
                printf("FAIL: expected rate at capacity %.5e above the requested %g\n", e, pt->p);
                failures++;
            }
        } else {
            if (measured > e + 4 * sd + TOL * e || measured < 0.75 * e - 4 * sd) {
                printf("FAIL: measured %.5e outside [0.75 E - 4 sd, E + 4 sd + %.0f%%] = "
                       "[%.5e, %.5e]\n", measured, 100 * TOL, 0.75 * e - 4 * sd,
                       e + 4 * sd + TOL * e);
                failures++;
            }
            if (pt->layers < 5) {
                printf("FAIL: only %u layers\n", pt->layers);
                failures++;
            }
            if (!(e <= pt->p)) {
                printf("FAIL: expected rate %.5e above the requested %g\n", e, pt->p);
                failures++;
            }
        }
    }
    /* All the points together: independent z scores of mean 0 and variance
     * about 1, whose sum must stay within 4 sqrt(N) (scalable: below, since
     * their rate is below E by design). A bias of the expected rate by a
     * few percent, too small for any single point, shows here. */
    double combined = sum_z / sqrt(counted > 0 ? counted : 1);
    printf("# sum of z over %d points: %.2f, %.2f sqrt(N)\n", counted, sum_z, combined);
    if (combined > 4 || (a < SCALABLE_BLOCKED && combined < -4)) {
        printf("FAIL: the sum of z is %.2f sqrt(N), beyond 4 sqrt(N)\n", combined);
        failures++;
    }
    fflush(stdout);
    assert_int_equal(failures, 0);
}

/* A test of the kinds a and b (check's arguments). */
struct kinds {
    int a, b;
};

static void test_kinds(void **state)
{
    const struct kinds *k = *state;
    check(k->a, k->b);
}

/* Whether the grid has a point of the kind (the two scalable ones count as
 * SCALABLE_BLOCKED) with n items, or with rate p (the one of n and p that
 * is not 0). */
static int grid_has(int kind, uint64_t n, double p)
{
    for (int i = 0; i < npoints; i++) {
        int k = grid[i].kind == SCALABLE_CLASSIC ? SCALABLE_BLOCKED : (int)grid[i].kind;
        if (k == kind && (n != 0 ? grid[i].n == n : fabs(grid[i].p / p - 1) < 1e-6))
            return 1;
    }
    return 0;
}

/* The grid covers every n from 10^3 to 10^8 and every rate from 10^-1 to
 * 10^-6 for every kind. */
static void test_grid_coverage(void **state)
{
    for (int kind = 0; kind < COVERED_KINDS; kind++) {
        for (uint64_t n = 1000; n <= 100000000; n *= 10)
            assert_true(grid_has(kind, n, 0));
        for (double p = 1e-1; p > 5e-7; p /= 10)
            assert_true(grid_has(kind, 0, p));
    }
}

#define KINDS(name, ...) CASE_TEST(name, test_kinds, struct kinds, __VA_ARGS__)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_coverage),
        KINDS(test_classic, CLASSIC, CLASSIC),
        KINDS(test_blocked, BLOCKED, BLOCKED),
        KINDS(test_split, SPLIT, SPLIT),
        KINDS(test_scalable, SCALABLE_BLOCKED, SCALABLE_CLASSIC),
    };
    return cmocka_run_group_tests(tests, run_grid, NULL);
}
