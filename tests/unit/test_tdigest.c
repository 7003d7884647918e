/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tdigest.c: the t-digest's API, with cmocka: quantile errors against
 * the exact quantiles of a million values within the bound of the size
 * rule, for several compressions, distributions and orders, and for merged
 * digests; the conventions of ranks and values by rank; reads that leave
 * the digest unchanged; limits, weights and overflow; the serialized form
 * and its corruptions; and allocation failures.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

#define N_VALUES 1000000
#define PI 3.14159265358979323846

static double uniform01(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

enum distribution { UNIFORM, EXPONENTIAL, LOGNORMAL };

static double draw(enum distribution d, uint64_t *state)
{
    double u = uniform01(state);
    switch (d) {
    case UNIFORM:
        return u * 1000;
    case EXPONENTIAL:
        return -log1p(-u) * 20;
    default: {
        double u2 = uniform01(state); /* Box-Muller, then exp: a long right tail */
        return exp(sqrt(-2 * log1p(-u)) * cos(2 * PI * u2));
    }
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fraction of the sorted values at or below x. */
static double exact_cdf(const double *sorted, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo / (double)n;
}

/* A centroid around fraction q holds at most q(1-q) 2 pi N ln N / c of N
 * values (the size rule), and a quantile interpolated inside it is off by
 * at most half of that in rank. */
static double rank_bound(double q, size_t n, uint32_t compression)
{
    return q * (1 - q) * PI * log((double)n) / compression + 1.0 / (double)n;
}

static const double grid[] = {0.0005, 0.001, 0.01, 0.05, 0.1,  0.25, 0.5,
                              0.75,   0.9,   0.95, 0.99, 0.999, 0.9995};
#define GRID_N (sizeof grid / sizeof grid[0])

static void check_quantiles(const sk_tdigest *t, const double *sorted, size_t n,
                            uint32_t compression)
{
    double est[GRID_N];
    assert_int_equal(sk_tdigest_quantiles(t, grid, est, GRID_N), SK_OK);
    for (size_t i = 0; i < GRID_N; i++) {
        double err = fabs(exact_cdf(sorted, n, est[i]) - grid[i]);
        if (err > rank_bound(grid[i], n, compression))
            fail_msg("compression %u q %g: rank error %g past %g", compression, grid[i], err,
                     rank_bound(grid[i], n, compression));
    }
    double q0 = 0, q1 = 1, ends[2];
    assert_int_equal(sk_tdigest_quantiles(t, &q0, &ends[0], 1), SK_OK);
    assert_int_equal(sk_tdigest_quantiles(t, &q1, &ends[1], 1), SK_OK);
    assert_true(ends[0] == sorted[0] && ends[1] == sorted[n - 1]);
}

struct accuracy_case {
    uint32_t compression;
    enum distribution distribution;
    int sorted_input; /* ascending: every new value lands past the centroids */
};

static void test_accuracy(void **state)
{
    const struct accuracy_case *c = *state;
    double *values = malloc(N_VALUES * sizeof *values);
    assert_non_null(values);
    uint64_t seed = 0x7d1 + c->compression * 3 + c->distribution;
    for (size_t i = 0; i < N_VALUES; i++)
        values[i] = draw(c->distribution, &seed);
    double *sorted = malloc(N_VALUES * sizeof *sorted);
    assert_non_null(sorted);
    memcpy(sorted, values, N_VALUES * sizeof *values);
    qsort(sorted, N_VALUES, sizeof *sorted, compare_doubles);
    const double *input = c->sorted_input ? sorted : values;
    sk_tdigest *t;
    assert_int_equal(sk_tdigest_new(&t, c->compression), SK_OK);
    for (size_t i = 0; i < N_VALUES; i++)
        assert_int_equal(sk_tdigest_add(t, input[i], 1), SK_OK);
    check_quantiles(t, sorted, N_VALUES, c->compression);

    /* The CDF is the inverse: within the same bound of the exact one. */
    for (size_t i = 0; i < GRID_N; i++) {
        double x = sorted[(size_t)(grid[i] * N_VALUES)], cdf;
        assert_int_equal(sk_tdigest_cdf(t, &x, &cdf, 1), SK_OK);
        double exact = exact_cdf(sorted, N_VALUES, x);
        assert_true(fabs(cdf - exact) <= rank_bound(exact, N_VALUES, c->compression));
    }
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    assert_true(info.merged_nodes + info.unmerged_nodes <= info.capacity);
    assert_true(info.merged_weight + info.unmerged_weight == N_VALUES);
    sk_tdigest_free(t);
    free(values);
    free(sorted);
}

/* Four digests of a quarter each, merged, keep the bound for the whole. */
static void test_merge_accuracy(void **state)
{
    (void)state;
    enum { PARTS = 4 };
    double *values = malloc(N_VALUES * sizeof *values);
    assert_non_null(values);
    uint64_t seed = 99;
    sk_tdigest *parts[PARTS], *all;
    for (int p = 0; p < PARTS; p++)
        assert_int_equal(sk_tdigest_new(&parts[p], 100), SK_OK);
    for (size_t i = 0; i < N_VALUES; i++) {
        values[i] = draw(EXPONENTIAL, &seed) + (double)(i % PARTS) * 10; /* parts differ */
        assert_int_equal(sk_tdigest_add(parts[i % PARTS], values[i], 1), SK_OK);
    }
    qsort(values, N_VALUES, sizeof *values, compare_doubles);
    assert_int_equal(sk_tdigest_new(&all, 100), SK_OK);
    for (int p = 0; p < PARTS; p++) {
        assert_int_equal(sk_tdigest_merge(all, parts[p]), SK_OK);
        sk_tdigest_free(parts[p]);
    }
    check_quantiles(all, values, N_VALUES, 100);
    sk_tdigest_free(all);
    free(values);
}

static sk_tdigest *digest_of(uint32_t compression, size_t n, uint64_t seed)
{
    sk_tdigest *t;
    assert_int_equal(sk_tdigest_new(&t, compression), SK_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sk_tdigest_add(t, draw(LOGNORMAL, &seed), 1 + i % 3), SK_OK);
    return t;
}

static uint8_t *bytes_of(const sk_tdigest *t, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_tdigest_serialized_size(t, &size), SK_OK);
    uint8_t *buf = malloc(size);
    assert_non_null(buf);
    assert_int_equal(sk_tdigest_serialize(t, buf, size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* Reads work on a compressed copy: the digest's bytes do not change, and
 * the answers are those of the digest compressed in place. */
static void test_reads_leave_digest(void **state)
{
    (void)state;
    sk_tdigest *t = digest_of(100, 1000, 5);
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    assert_true(info.unmerged_nodes > 0);
    size_t before_len, after_len;
    uint8_t *before = bytes_of(t, &before_len);
    double q[3] = {0.1, 0.5, 0.99}, read[3], x = 1.0, cdf_read, mean_read;
    int64_t r = 500, rank_read;
    double by_rank_read;
    assert_int_equal(sk_tdigest_quantiles(t, q, read, 3), SK_OK);
    assert_int_equal(sk_tdigest_cdf(t, &x, &cdf_read, 1), SK_OK);
    assert_int_equal(sk_tdigest_trimmed_mean(t, 0.1, 0.9, &mean_read), SK_OK);
    assert_int_equal(sk_tdigest_rank(t, &x, &rank_read, 1, 0), SK_OK);
    assert_int_equal(sk_tdigest_by_rank(t, &r, &by_rank_read, 1, 0), SK_OK);
    uint8_t *after = bytes_of(t, &after_len);
    assert_same_bytes_free(before, before_len, after, after_len);

    assert_int_equal(sk_tdigest_compress(t), 1);
    assert_int_equal(sk_tdigest_compress(t), 0);
    double again[3], cdf_again, mean_again, by_rank_again;
    int64_t rank_again;
    assert_int_equal(sk_tdigest_quantiles(t, q, again, 3), SK_OK);
    assert_int_equal(sk_tdigest_cdf(t, &x, &cdf_again, 1), SK_OK);
    assert_int_equal(sk_tdigest_trimmed_mean(t, 0.1, 0.9, &mean_again), SK_OK);
    assert_int_equal(sk_tdigest_rank(t, &x, &rank_again, 1, 0), SK_OK);
    assert_int_equal(sk_tdigest_by_rank(t, &r, &by_rank_again, 1, 0), SK_OK);
    assert_memory_equal(read, again, sizeof read);
    assert_true(cdf_read == cdf_again && mean_read == mean_again);
    assert_true(rank_read == rank_again && by_rank_read == by_rank_again);
    sk_tdigest_free(t);
}

/* The conventions TDIGEST.RANK and BYRANK answer with. */
static void test_rank_conventions(void **state)
{
    (void)state;
    sk_tdigest *t;
    assert_int_equal(sk_tdigest_new(&t, 100), SK_OK);
    double x[3] = {-1, 5, 100}, q = 0.5, v;
    int64_t ranks[3], r[3] = {0, 3, 1000};
    double by[3];
    assert_int_equal(sk_tdigest_rank(t, x, ranks, 3, 0), SK_OK);
    assert_true(ranks[0] == -2 && ranks[1] == -2 && ranks[2] == -2);
    assert_int_equal(sk_tdigest_by_rank(t, r, by, 3, 0), SK_OK);
    assert_true(isnan(by[0]) && isnan(by[1]) && isnan(by[2]));
    assert_int_equal(sk_tdigest_quantiles(t, &q, &v, 1), SK_OK);
    assert_true(isnan(v));
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    assert_true(isnan(info.min) && isnan(info.max));

    for (int i = 1; i <= 10; i++)
        assert_int_equal(sk_tdigest_add(t, i, 1), SK_OK);
    /* ten singletons: ranks are exact, halves rounded down, up in reverse */
    assert_int_equal(sk_tdigest_rank(t, x, ranks, 3, 0), SK_OK);
    assert_true(ranks[0] == -1 && ranks[1] == 4 && ranks[2] == 10);
    assert_int_equal(sk_tdigest_rank(t, x, ranks, 3, 1), SK_OK);
    assert_true(ranks[0] == 10 && ranks[1] == 5 && ranks[2] == -1);
    assert_int_equal(sk_tdigest_by_rank(t, r, by, 3, 0), SK_OK);
    assert_true(by[0] == 1 && by[1] == 4 && by[2] == INFINITY);
    assert_int_equal(sk_tdigest_by_rank(t, r, by, 3, 1), SK_OK);
    assert_true(by[0] == 10 && by[1] == 7 && by[2] == -INFINITY);
    int64_t negative = -1;
    assert_int_equal(sk_tdigest_by_rank(t, &negative, by, 1, 0), SK_EINVAL);
    double mean;
    assert_int_equal(sk_tdigest_trimmed_mean(t, 0.1, 0.9, &mean), SK_OK);
    assert_true(mean == 5.5);
    assert_int_equal(sk_tdigest_trimmed_mean(t, 0.5, 0.5, &mean), SK_EINVAL);
    assert_int_equal(sk_tdigest_trimmed_mean(t, -0.1, 0.5, &mean), SK_EINVAL);
    double bad_q[2] = {0.5, 1.5};
    double out[2];
    assert_int_equal(sk_tdigest_quantiles(t, bad_q, out, 2), SK_EINVAL);
    sk_tdigest_free(t);

    /* A lone value of weight 1 stays in the buffer, as RedisBloom keeps it:
     * min and max answer, quantiles do not. */
    assert_int_equal(sk_tdigest_new(&t, 100), SK_OK);
    assert_int_equal(sk_tdigest_add(t, 7, 1), SK_OK);
    assert_int_equal(sk_tdigest_quantiles(t, &q, &v, 1), SK_OK);
    assert_true(isnan(v));
    sk_tdigest_get_info(t, &info);
    assert_true(info.min == 7 && info.max == 7 && info.unmerged_nodes == 1);
    sk_tdigest_free(t);
}

static void test_limits(void **state)
{
    (void)state;
    sk_tdigest *t;
    sk_tdigest_options o = {.compression = SK_TDIGEST_MAX_COMPRESSION + 1};
    assert_int_equal(sk_tdigest_create(&t, &o), SK_EINVAL);
    assert_null(t);
    assert_int_equal(sk_tdigest_create_memory(&o), 0);
    o.compression = 1000;
    o.max_memory = sk_tdigest_create_memory(&o) - 1;
    assert_int_equal(sk_tdigest_create(&t, &o), SK_EBUDGET);
    o.max_memory += 1;
    assert_int_equal(sk_tdigest_create(&t, &o), SK_OK);
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    assert_true(info.compression == 1000 && info.capacity == 6010);
    assert_true(info.memory < sk_tdigest_create_memory(&o)); /* grows as it fills */

    assert_int_equal(sk_tdigest_add(t, NAN, 1), SK_EINVAL);
    assert_int_equal(sk_tdigest_add(t, INFINITY, 1), SK_EINVAL);
    assert_int_equal(sk_tdigest_add(t, 1, 0), SK_EINVAL);
    assert_int_equal(sk_tdigest_add(t, 1, (uint64_t)INT64_MAX / 2), SK_OK);
    assert_int_equal(sk_tdigest_add(t, 2, (uint64_t)INT64_MAX / 2), SK_ETOOLARGE);
    sk_tdigest *same;
    assert_int_equal(sk_tdigest_copy(&same, t), SK_OK);
    assert_int_equal(sk_tdigest_merge(t, same), SK_ETOOLARGE);
    sk_tdigest_get_info(t, &info);
    assert_true(info.unmerged_weight == INT64_MAX / 2 && info.unmerged_nodes == 1);
    assert_int_equal(sk_tdigest_clear(t), SK_OK);
    sk_tdigest_get_info(t, &info);
    assert_true(info.merged_weight == 0 && info.unmerged_weight == 0 && isnan(info.min));
    assert_true(info.compression == 1000);
    sk_tdigest_free(t);
    sk_tdigest_free(same);
    sk_tdigest_free(NULL);
}

static void test_serialize_round_trip(void **state)
{
    (void)state;
    sk_tdigest *t = digest_of(50, 5000, 11), *back;
    size_t len, len2;
    uint8_t *buf = bytes_of(t, &len);
    assert_int_equal(sk_tdigest_deserialize(&back, buf, len, NULL), SK_OK);
    uint8_t *buf2 = bytes_of(back, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    /* the buffer came along: both compress at the same add, the same way */
    for (int i = 0; i < 2000; i++) {
        assert_int_equal(sk_tdigest_add(t, i * 0.5, 1), SK_OK);
        assert_int_equal(sk_tdigest_add(back, i * 0.5, 1), SK_OK);
    }
    free(buf2);
    free(buf);
    buf = bytes_of(t, &len);
    buf2 = bytes_of(back, &len2);
    assert_same_bytes_free(buf, len, buf2, len2);
    sk_tdigest_free(back);

    sk_tdigest *empty;
    assert_int_equal(sk_tdigest_new(&empty, 7), SK_OK);
    buf = bytes_of(empty, &len);
    assert_int_equal(len, SK_TDIGEST_HEADER_SIZE);
    assert_int_equal(sk_tdigest_deserialize(&back, buf, len, NULL), SK_OK);
    sk_tdigest_free(back);
    free(buf);
    sk_tdigest_free(empty);
    sk_tdigest_free(t);
}

/* Sets a header or node field and the checksum again, so that only the
 * field's own check can refuse it. */
static void reseal(uint8_t *buf, size_t len)
{
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    XXH3_64bits_update(&s, buf, SK_TDIGEST_OFF_CHECKSUM);
    XXH3_64bits_update(&s, buf + SK_TDIGEST_HEADER_SIZE, len - SK_TDIGEST_HEADER_SIZE);
    sk_store_le64(buf + SK_TDIGEST_OFF_CHECKSUM, XXH3_64bits_digest(&s));
}

static void test_corrupt(void **state)
{
    (void)state;
    sk_tdigest *t = digest_of(20, 300, 3), *back;
    sk_tdigest_info info;
    sk_tdigest_get_info(t, &info);
    assert_true(info.merged_nodes > 2 && info.unmerged_nodes > 0);
    size_t len;
    uint8_t *good = bytes_of(t, &len);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    size_t first_buffered = SK_TDIGEST_HEADER_SIZE + info.merged_nodes * SK_TDIGEST_NODE_SIZE;
    struct {
        size_t off;
        int width; /* 4 or 8 bytes */
        uint64_t value;
        int expect;
    } cases[] = {
        {SK_TDIGEST_OFF_COMPRESSION, 4, 0, SK_ECORRUPT},
        {SK_TDIGEST_OFF_COMPRESSION, 4, SK_TDIGEST_MAX_COMPRESSION + 1, SK_ECORRUPT},
        {SK_TDIGEST_OFF_COMPRESSION, 4, 1, SK_ECORRUPT}, /* 16 nodes: fewer than it holds */
        {SK_TDIGEST_OFF_MERGED, 4, 0, SK_ECORRUPT},      /* then a weight without centroids */
        {SK_TDIGEST_OFF_UNMERGED, 4, info.unmerged_nodes + 1, SK_ETRUNCATED},
        {SK_TDIGEST_OFF_RESERVED2, 4, 1, SK_ECORRUPT},
        {SK_TDIGEST_OFF_COMPRESSIONS, 8, UINT64_MAX, SK_ECORRUPT},
        {SK_TDIGEST_OFF_MERGED_WEIGHT, 8, UINT64_MAX, SK_ECORRUPT},
        {SK_TDIGEST_OFF_MERGED_WEIGHT, 8, (uint64_t)INT64_MAX, SK_ECORRUPT},
        {SK_TDIGEST_OFF_UNMERGED_WEIGHT, 8, 1, SK_ECORRUPT}, /* not its nodes' sum */
        {SK_TDIGEST_OFF_MIN, 8, 0x7ff8000000000000u, SK_ECORRUPT},     /* NaN */
        {SK_TDIGEST_OFF_MAX, 8, 0xfff0000000000000u, SK_ECORRUPT},     /* -inf < min */
        {SK_TDIGEST_HEADER_SIZE + SK_TDIGEST_NODE_OFF_WEIGHT, 8, 0, SK_ECORRUPT},
        {first_buffered + SK_TDIGEST_NODE_OFF_WEIGHT, 8, (uint64_t)INT64_MAX, SK_ECORRUPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(buf, good, len);
        if (cases[i].width == 4)
            sk_store_le32(buf + cases[i].off, (uint32_t)cases[i].value);
        else
            sk_store_le64(buf + cases[i].off, cases[i].value);
        reseal(buf, len);
        int rc = sk_tdigest_deserialize(&back, buf, len, NULL);
        if (rc != cases[i].expect)
            fail_msg("case %zu: %d, expected %d", i, rc, cases[i].expect);
        assert_null(back);
    }
    memcpy(buf, good, len);
    buf[SK_TDIGEST_OFF_VERSION] = 2;
    assert_int_equal(sk_tdigest_deserialize(&back, buf, len, NULL), SK_EVERSION);
    buf[SK_TDIGEST_OFF_VERSION] = SK_TDIGEST_VERSION;
    buf[len - 1] ^= 1;
    assert_int_equal(sk_tdigest_deserialize(&back, buf, len, NULL), SK_ECHECKSUM);
    for (size_t cut = 0; cut < len; cut += 7)
        assert_true(sk_tdigest_deserialize(&back, good, cut, NULL) < 0);
    assert_int_equal(sk_tdigest_deserialize(&back, "SKCM", 4, NULL), SK_EFORMAT);
    free(buf);
    free(good);
    sk_tdigest_free(t);
}

/* An allocator that fails the n-th allocation, and counts what is held. */
struct failing {
    int countdown;
    long held;
};

static void *failing_alloc(void *opaque, size_t size)
{
    struct failing *f = opaque;
    if (f->countdown-- == 0)
        return NULL;
    f->held++;
    return malloc(size);
}

static void failing_free(void *opaque, void *ptr, size_t size)
{
    (void)size;
    struct failing *f = opaque;
    f->held--;
    free(ptr);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    for (int n = 0; n < 12; n++) {
        struct failing f = {.countdown = n};
        sk_allocator a = {failing_alloc, failing_free, &f, 0};
        sk_tdigest_options o = {.compression = 10, .allocator = &a};
        sk_tdigest *t = NULL, *other = NULL;
        int rc = sk_tdigest_create(&t, &o);
        for (int i = 0; rc == SK_OK && i < 300; i++)
            rc = sk_tdigest_add(t, i % 17, 1);
        double q = 0.5, v;
        if (rc == SK_OK)
            rc = sk_tdigest_quantiles(t, &q, &v, 1);
        if (rc == SK_OK)
            rc = sk_tdigest_copy(&other, t);
        if (rc == SK_OK)
            rc = sk_tdigest_merge(other, t);
        assert_true(rc == SK_OK || rc == SK_ENOMEM);
        sk_tdigest_free(other);
        sk_tdigest_free(t);
        assert_int_equal(f.held, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CASE_TEST(accuracy_c50_exponential, test_accuracy, struct accuracy_case, 50, EXPONENTIAL, 0),
        CASE_TEST(accuracy_c100_uniform, test_accuracy, struct accuracy_case, 100, UNIFORM, 0),
        CASE_TEST(accuracy_c100_lognormal, test_accuracy, struct accuracy_case, 100, LOGNORMAL, 0),
        CASE_TEST(accuracy_c100_sorted, test_accuracy, struct accuracy_case, 100, EXPONENTIAL, 1),
        CASE_TEST(accuracy_c1000_lognormal, test_accuracy, struct accuracy_case, 1000, LOGNORMAL, 0),
        CASE_TEST(accuracy_c1000_sorted, test_accuracy, struct accuracy_case, 1000, UNIFORM, 1),
        cmocka_unit_test(test_merge_accuracy),
        cmocka_unit_test(test_reads_leave_digest),
        cmocka_unit_test(test_rank_conventions),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
