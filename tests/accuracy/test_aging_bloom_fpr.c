/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_aging_bloom_fpr.c: the aging Bloom filter's false-positive rate in
 * steady state, over long streams: never above the rate asked for, measured
 * with enough queries that a filter sized for twice the rate fails the same
 * check (each case runs such a filter too and requires that it does).
 *
 * Count window: after g generations' worth of warm-up, the rate of items
 * never added, at moments spread evenly over many rotations (the average a
 * user sees) and just before rotations, when all g generations are full
 * (the worst moment). Time window: a stream of a window's capacity per
 * window with bursts of five times a generation's share in one span, whose
 * generations grow layers; the rate at moments spread over it, and no false
 * negative for any item of the last window. A time window's generations
 * answer at about half their rate (a scalable chain's first layer is sized
 * for half), so there the filter that must fail is one sized for 3P.
 *
 * The margin: n queries at a true rate r measure r within sqrt(r (1 - r) /
 * n); the tests print the measured rates, their sigma and how many sigmas
 * separate P from each.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../unit/aging_bloom_test_util.h"

/* Fresh items never added: the top bit set, which no added item has. */
static double query_absent(const sk_aging_bloom *f, uint64_t *seed, uint64_t n, uint64_t now)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t item = splitmix64(seed) | UINT64_C(1) << 63;
        hits += (uint64_t)sk_aging_bloom_contains(f, &item, sizeof item, now);
    }
    return (double)hits;
}

struct rates {
    double average, worst; /* measured */
    uint64_t average_n, worst_n;
};

/* A count window of `capacity` at rate `built`, fed 40 windows; queried at
 * 160 moments spread over the last 30 and at the last add before 20
 * rotations. */
static struct rates count_stream(uint64_t capacity, double built, unsigned g)
{
    sk_aging_bloom *f = make(capacity, built, g, 0);
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(f, &info);
    uint64_t c = info.span, total = 40 * capacity, warm = 10 * capacity;
    uint64_t step = (total - warm) / 160, seed = 1, qseed = 99;
    const uint64_t per_moment = 12500, per_worst = 25000;
    struct rates r = {0};
    unsigned worst_seen = 0;
    for (uint64_t n = 1; n <= total; n++) {
        uint64_t item = splitmix64(&seed) & ~(UINT64_C(1) << 63);
        assert_true(sk_aging_bloom_add(f, &item, sizeof item, 0) >= 0);
        if (n > warm && (n - warm) % step == 0) {
            r.average += query_absent(f, &qseed, per_moment, 0);
            r.average_n += per_moment;
        }
        if (n > warm && n % c == 0 && worst_seen < 20 && (n / c) % 3 == 0) {
            r.worst += query_absent(f, &qseed, per_worst, 0);
            r.worst_n += per_worst;
            worst_seen++;
        }
    }
    r.average /= (double)r.average_n;
    r.worst /= (double)r.worst_n;
    sk_aging_bloom_free(f);
    return r;
}

static double sigma(double rate, uint64_t n)
{
    return sqrt(rate * (1 - rate) / (double)n);
}

static void count_case(uint64_t capacity, double p, unsigned g)
{
    struct rates r = count_stream(capacity, p, g), twice = count_stream(capacity, 2 * p, g);
    double sa = sigma(p, r.average_n), sw = sigma(p, r.worst_n);
    printf("count window %llu, P %g, g %u: average %.5f (%llu queries, sigma %.2g, %.1f sigma "
           "below P), worst moment %.5f (%llu queries, %.1f sigma below P); sized for 2P: "
           "average %.5f (%.1f sigma above P), worst %.5f\n",
           (unsigned long long)capacity, p, g, r.average, (unsigned long long)r.average_n, sa,
           (p - r.average) / sa, r.worst, (unsigned long long)r.worst_n, (p - r.worst) / sw,
           twice.average, (twice.average - p) / sa, twice.worst);
    /* The average a user sees: at most P, by a wide margin. */
    assert_true(r.average <= p);
    /* The worst moment is P by design (every generation full): within 3
     * sigma of it. */
    assert_true(r.worst <= p + 3 * sw);
    /* The same checks catch a filter sized for twice the rate. */
    assert_true(twice.average > p && twice.worst > p + 3 * sw);
}

static void test_count_window(void **state)
{
    count_case(50000, 0.01, 4);
    count_case(50000, 0.001, 8);
    count_case(20000, 0.05, 2);
}

/* A time window of 3000 units (g = 4: spans of 1000) holding `capacity`
 * items per window at rate `built`: a generation's share per span, and
 * every seventh span a burst of five shares; 30 windows. */
static double time_stream(uint64_t capacity, double built, uint64_t *queries)
{
    const uint64_t window = 3000, span = 1000, spans = 90;
    sk_aging_bloom *f = make(capacity, built, 4, window);
    uint64_t share = (capacity + 2) / 3, seed = 5, qseed = 77, hits = 0;
    /* The last 4 spans: at most 5 shares each. */
    uint64_t *last = malloc(5 * share * 4 * sizeof *last);
    uint64_t *times = malloc(5 * share * 4 * sizeof *times);
    size_t kept = 0;
    assert_non_null(last);
    assert_non_null(times);
    *queries = 0;
    for (uint64_t s = 0; s < spans; s++) {
        uint64_t n = s % 7 == 3 ? 5 * share : share;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t item = splitmix64(&seed) & ~(UINT64_C(1) << 63);
            uint64_t t = s * span + i * span / n;
            assert_true(sk_aging_bloom_add(f, &item, sizeof item, t) >= 0);
            if (s >= spans - 4) {
                last[kept] = item;
                times[kept++] = t;
            }
            if (s >= 9 && i % (n / 4) == 0) {
                hits += (uint64_t)query_absent(f, &qseed, 10000, t);
                *queries += 10000;
            }
        }
    }
    /* No false negative: every item of the last window. */
    uint64_t now = spans * span - 1;
    for (size_t i = 0; i < kept; i++)
        if (now - times[i] < window)
            assert_int_equal(sk_aging_bloom_contains(f, &last[i], sizeof last[i], now), 1);
    free(last);
    free(times);
    sk_aging_bloom_free(f);
    return (double)hits / (double)*queries;
}

static void test_time_window_with_bursts(void **state)
{
    const double p = 0.01;
    uint64_t n, n2, n3;
    double r = time_stream(30000, p, &n), twice = time_stream(30000, 2 * p, &n2);
    double thrice = time_stream(30000, 3 * p, &n3);
    double s = sigma(p, n);
    printf("time window, bursts of 5 shares: P %g, measured %.5f (%llu queries, sigma %.2g, "
           "%.1f sigma below P); sized for 2P: %.5f; for 3P: %.5f (%.1f sigma above P)\n",
           p, r, (unsigned long long)n, s, (p - r) / s, twice, thrice, (thrice - p) / s);
    assert_true(r <= p);
    /* A scalable generation's first layer has half its rate, so the ring
     * answers at about half of what it is sized for: sized for 2P it stays
     * under P (and under its own 2P), and the filter the check must catch
     * is one sized for 3P, whose rate is past P. */
    assert_true(twice <= 2 * p);
    assert_true(thrice > p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_window),
        cmocka_unit_test(test_time_window_with_bursts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
