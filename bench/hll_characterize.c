/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_characterize.c: the error distribution of libsketch's HyperLogLog,
 * measured over thousands of independent streams at every size from 1 to
 * beyond 10^9 distinct items, for several precisions.
 *
 * For each precision p (default 10, 12, 14, 16) and each n of a logarithmic
 * grid (default 4 points per decade, 1 .. 10^9.25), T independent streams of
 * n distinct items (default T = 2000) are simulated and counted with
 * sk_hll_count. Each point reports the relative error e = (estimate - n)/n
 * over its trials: mean (the bias) with its standard error, RMSE, standard
 * deviation, and the quantiles at 0.135, 2.275, 15.87, 50, 84.13, 97.725 and
 * 99.865% (where a normal error would sit at -3..+3 sigma), beside the
 * theoretical relative standard error sqrt(3 ln 2 - 1)/sqrt(m), the
 * familiar 1.04/sqrt(m), m = 2^p.
 *
 * The model, and why both simulations below are exact
 * -----------------------------------------------------
 * The sketch sees an item only through its 64-bit hash. For distinct items
 * and a good hash, the hashes are independent and uniform on 64 bits; this
 * program studies the estimator under exactly that model (the hash itself,
 * MurmurHash64A, is Redis's and is not in question here). From a hash h the
 * sketch sets register h mod m to at least 1 + ctz((h >> p) | 2^(64-p)),
 * a rank in 1..q+1 with q = 64 - p (src/hll/hll.c, docs/hll-format.md).
 *
 * 1. Hashes (small n): n uniform 64-bit values from xoshiro256** are fed to
 *    sk_hll_add_hash, the library's own path. Cost: n adds per trial.
 *
 * 2. Registers (large n): the same distribution, drawn without touching the
 *    items. (a) The low p bits of the n hashes are independent and uniform
 *    over m registers, so the register loads (c_0..c_{m-1}) are multinomial
 *    (n; 1/m, ..., 1/m); drawn exactly as c_i ~ Binomial(n - c_0 - ... -
 *    c_{i-1}, 1/(m - i)) in turn, the chain rule of the multinomial (GSL's
 *    gsl_ran_binomial, an exact sampler). (b) The rank bits of one hash are
 *    independent of its index bits and of the other hashes, and one rank R
 *    has P(R <= r) = 1 - 2^-r for r <= q (and R <= q+1 always), so the
 *    maximum of c ranks has P(max <= r) = (1 - 2^-r)^c for r <= q, and q+1
 *    otherwise. It is drawn by inversion: for U uniform in (0, 1), the
 *    smallest r with (1 - 2^-r)^c >= U is ceil(-log2(1 - U^(1/c))), capped
 *    at q+1. (c) The m register values are then packed into the documented
 *    native serialized form (dense encoding, 6-bit registers, XXH32
 *    checksum, docs/hll-format.md) and read back with sk_hll_deserialize, so
 *    the count is the library's sk_hll_count on exactly those registers.
 *    Cost: m binomials and m inversions per trial, whatever n is: 10^9
 *    items cost what 10^5 do. It is exact up to the rounding of doubles
 *    (1/(m - i) and the inversion), errors of order 1e-16 in probability.
 *
 * Checks, printed and written to hll_method_check.csv: before anything, for
 * every p, the registers this program computes from a stream of hashes (the
 * rank rule above) are packed and compared byte for byte with what
 * sk_hll_serialize writes for the same stream, which pins down the rank
 * rule, the packing and the checksum. Then, at n = m and n = 16m, both
 * simulations are run side by side and their error distributions compared
 * (difference of the means in standard errors; two-sample Kolmogorov-
 * Smirnov distance against its 1% critical value).
 *
 * Every trial has its own generator, seeded from (seed, p, n, method,
 * trial), so results do not depend on the number of threads.
 *
 * Output: OUTDIR/hll_p{P}.csv for each p and OUTDIR/hll_method_check.csv;
 * progress on standard error, checks on standard output.
 *
 * Usage: hll_characterize [-t TRIALS] [-p P,...] [-d POINTS_PER_DECADE]
 *                         [-N MAX_N] [-s SWITCH] [-j THREADS] [-S SEED]
 *                         [-o OUTDIR] [-q]
 *   -t  trials per point (default 2000)
 *   -p  precisions, 4..18 (default 10,12,14,16)
 *   -d  grid points per decade (default 4)
 *   -N  largest n, below 2^32 (default 2e9: the grid ends at 10^9.25)
 *   -s  streams of hashes up to n = SWITCH x m, registers above (default 16)
 *   -j  threads (default: the number of online CPUs)
 *   -o  output directory (default docs/data)
 *   -q  quick smoke run: 100 trials, 2 points per decade, up to 10^9
 *
 *        hll_characterize -R FILE [-S SEED]
 *   writes only FILE, for a check against a real Redis server: one sampled
 *   p = 14 sketch for each n of 10^3, 10^5, 10^7, 10^9 and 3 x 10^9, a line
 *   "n count hex" each, count being sk_hll_count and hex the sketch as a
 *   Redis string; bench/characterize.sh compares count with PFCOUNT.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <xxhash.h>

#include "bench_util.h"
#include "common/format.h"
#include "sketch/hll_extra.h"

#define MAX_PRECISIONS 16
#define MAX_THREADS 64
#define METHOD_HASHES 0
#define METHOD_REGISTERS 1
/* sqrt(3 ln 2 - 1): the asymptotic relative standard error times sqrt(m). */
#define RSE_FACTOR 1.0389618114391

static const char *const method_name[2] = {"hashes", "registers"};

/* The tail probabilities of a normal law at -3..+3 sigma, as percentages. */
static const double quantile_levels[7] = {0.13499, 2.27501, 15.86553, 50.0,
                                          84.13447, 97.72499, 99.86501};

static _Noreturn void die(const char *msg)
{
    fprintf(stderr, "hll_characterize: %s\n", msg);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- random numbers ------------------------------------------------------ */

typedef struct xo_state {
    uint64_t s[4];
} xo_state;

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: fast, 256 bits of state, passes the usual batteries; every
 * trial seeds its own, so trials are independent streams. */
static inline uint64_t xo_next(xo_state *st)
{
    uint64_t *s = st->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void xo_seed(xo_state *st, uint64_t key)
{
    for (int i = 0; i < 4; i++)
        st->s[i] = splitmix64(&key);
}

/* Uniform in the open interval (0, 1): the inversion takes log(U). */
static inline double xo_open01(xo_state *st)
{
    return ((double)(xo_next(st) >> 11) + 0.5) * 0x1p-53;
}

/* The same generator behind GSL's interface, so that the binomials and the
 * ranks of a trial come from one seeded stream. */
static void gsl_xo_set(void *state, unsigned long seed)
{
    xo_seed(state, (uint64_t)seed);
}

static unsigned long gsl_xo_get(void *state)
{
    return (unsigned long)(xo_next(state) >> 32);
}

static double gsl_xo_get_double(void *state)
{
    return (double)(xo_next(state) >> 11) * 0x1p-53;
}

static const gsl_rng_type gsl_xo_type = {"xoshiro256**", 0xffffffffUL, 0, sizeof(xo_state),
                                         gsl_xo_set, gsl_xo_get, gsl_xo_get_double};

static uint64_t trial_key(uint64_t seed, unsigned p, uint64_t n, int method, unsigned trial)
{
    uint64_t x = seed;
    uint64_t k = splitmix64(&x) ^ ((uint64_t)p << 56 | (uint64_t)method << 48);
    k = splitmix64(&k) ^ n;
    k = splitmix64(&k) ^ trial;
    return splitmix64(&k);
}

/* ---- registers ----------------------------------------------------------- */

/* The largest of c ranks, each with P(R <= r) = 1 - 2^-r for r <= q and
 * R <= q+1: by inversion of P(max <= r) = (1 - 2^-r)^c. */
static inline uint8_t max_rank(uint64_t c, unsigned q, xo_state *st)
{
    if (c == 0)
        return 0;
    double u = xo_open01(st);
    /* 1 - U^(1/c), accurate also when U^(1/c) is within 1e-12 of 1. */
    double t = -expm1(log(u) / (double)c);
    double r = ceil(-log2(t));
    if (!(r >= 1))
        return 1; /* t rounded to 1: the smallest rank */
    if (r > q)
        return (uint8_t)(q + 1);
    return (uint8_t)r;
}

/* The native serialized sketch, dense encoding, of these m registers: the
 * 16-byte header of docs/hll-format.md, the registers at 6 bits least-
 * significant bit first (4 registers in 3 bytes; m is a multiple of 4), and
 * the checksum XXH32(body, seed XXH32(header bytes 0..11)). */
static size_t pack_native(unsigned p, const uint8_t *regs, uint8_t *buf)
{
    uint32_t m = UINT32_C(1) << p;
    size_t body_len = (size_t)m * 6 / 8;
    uint8_t *body = buf + SK_HLL_NATIVE_HEADER_SIZE;
    memcpy(buf + SK_HLL_OFF_MAGIC, SK_HLL_NATIVE_MAGIC, 4);
    buf[SK_HLL_OFF_VERSION] = SK_HLL_NATIVE_VERSION;
    buf[SK_HLL_OFF_ENCODING] = SK_HLL_NATIVE_DENSE;
    buf[SK_HLL_OFF_PRECISION] = (uint8_t)p;
    buf[SK_HLL_OFF_HASH] = SK_HLL_NATIVE_HASH_MURMUR64A_REDIS;
    sk_store_le32(buf + SK_HLL_OFF_ENTRIES, 0);
    for (uint32_t i = 0, j = 0; i < m; i += 4, j += 3) {
        body[j] = (uint8_t)(regs[i] | regs[i + 1] << 6);
        body[j + 1] = (uint8_t)(regs[i + 1] >> 2 | regs[i + 2] << 4);
        body[j + 2] = (uint8_t)(regs[i + 2] >> 4 | regs[i + 3] << 2);
    }
    sk_store_le32(buf + SK_HLL_OFF_CHECKSUM,
                  XXH32(body, body_len, XXH32(buf, SK_HLL_OFF_CHECKSUM, 0)));
    return SK_HLL_NATIVE_HEADER_SIZE + body_len;
}

/* ---- trials -------------------------------------------------------------- */

struct job {
    unsigned p;
    uint64_t n;
    int method;
    unsigned trials;
    uint64_t seed;
    double *estimates;
    atomic_uint next;
    atomic_int failed;
};

struct worker {
    struct job *job;
    pthread_t thread;
    sk_hll *h;
    gsl_rng *rng;
    uint8_t *regs;
    uint8_t *buf;
};

static int trial_hashes(struct worker *w, xo_state *st, uint64_t n, double *out)
{
    sk_hll_clear(w->h);
    for (uint64_t i = 0; i < n; i++)
        if (sk_hll_add_hash(w->h, xo_next(st)) < 0)
            return SK_ENOMEM;
    *out = (double)sk_hll_count(w->h);
    return SK_OK;
}

/* One sketch of n items by sampling its registers (method 2 above). */
static int sample_sketch(struct worker *w, xo_state *st, unsigned p, uint64_t n, sk_hll **out)
{
    uint32_t m = UINT32_C(1) << p;
    unsigned q = 64 - p;
    uint64_t left = n;
    for (uint32_t i = 0; i < m; i++) {
        uint64_t c;
        if (i + 1 == m)
            c = left;
        else if (left == 0)
            c = 0;
        else
            c = gsl_ran_binomial(w->rng, 1.0 / (double)(m - i), (unsigned)left);
        left -= c;
        w->regs[i] = max_rank(c, q, st);
    }
    size_t len = pack_native(p, w->regs, w->buf);
    return sk_hll_deserialize(out, w->buf, len, NULL, NULL);
}

static int trial_registers(struct worker *w, xo_state *st, unsigned p, uint64_t n,
                           double *out)
{
    sk_hll *h;
    int rc = sample_sketch(w, st, p, n, &h);
    if (rc != SK_OK)
        return rc;
    *out = (double)sk_hll_count(h);
    sk_hll_free(h);
    return SK_OK;
}

/* For a check against a real Redis server (bench/characterize.sh): one
 * sampled p = 14 sketch at each of a few large n, written as lines
 * "n count hex" where count is sk_hll_count and hex the Redis string
 * (SK_HLL_REDIS), so that PFCOUNT of the string can be compared with count. */
/* h in format fmt, in a buffer of malloc's. */
static uint8_t *serialized(const sk_hll *h, sk_hll_format fmt, size_t *len)
{
    uint64_t cap;
    uint8_t *buf = NULL;
    if (sk_hll_serialized_size(h, fmt, &cap) != SK_OK || (buf = malloc(cap)) == NULL ||
        sk_hll_serialize(h, fmt, buf, cap, len) != SK_OK)
        die("sk_hll_serialize failed");
    return buf;
}

static void write_redis_strings(const char *path, uint64_t seed)
{
    static const uint64_t ns[] = {1000, 100000, 10000000, 1000000000, UINT64_C(3000000000)};
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "hll_characterize: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    unsigned p = SK_HLL_REDIS_PRECISION;
    struct worker w = {0};
    w.rng = gsl_rng_alloc(&gsl_xo_type);
    w.regs = malloc((size_t)1 << p);
    w.buf = malloc(SK_HLL_NATIVE_HEADER_SIZE + ((size_t)1 << p));
    if (w.rng == NULL || w.regs == NULL || w.buf == NULL)
        die("out of memory");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        xo_seed(w.rng->state, trial_key(seed ^ 0x7ed15, p, ns[i], METHOD_REGISTERS, 0));
        sk_hll *h;
        if (sample_sketch(&w, w.rng->state, p, ns[i], &h) != SK_OK)
            die("cannot sample a sketch");
        size_t len;
        uint8_t *buf = serialized(h, SK_HLL_REDIS, &len);
        fprintf(out, "%llu %llu ", (unsigned long long)ns[i],
                (unsigned long long)sk_hll_count(h));
        for (size_t j = 0; j < len; j++)
            fprintf(out, "%02x", buf[j]);
        fprintf(out, "\n");
        free(buf);
        sk_hll_free(h);
    }
    fclose(out);
    gsl_rng_free(w.rng);
    free(w.regs);
    free(w.buf);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct job *job = w->job;
    xo_state *st = w->rng->state;
    for (;;) {
        unsigned t = atomic_fetch_add(&job->next, 1);
        if (t >= job->trials || atomic_load(&job->failed))
            break;
        xo_seed(st, trial_key(job->seed, job->p, job->n, job->method, t));
        int rc = job->method == METHOD_HASHES
                     ? trial_hashes(w, st, job->n, &job->estimates[t])
                     : trial_registers(w, st, job->p, job->n, &job->estimates[t]);
        if (rc != SK_OK) {
            fprintf(stderr, "hll_characterize: trial failed: %s\n", sk_strerror(rc));
            atomic_store(&job->failed, 1);
        }
    }
    return NULL;
}

/* Runs the trials of one point on `threads` threads; estimates[t] is the
 * count of trial t. */
static void run_point(unsigned p, uint64_t n, int method, unsigned trials, uint64_t seed,
                      unsigned threads, double *estimates)
{
    struct job job = {.p = p, .n = n, .method = method, .trials = trials, .seed = seed,
                      .estimates = estimates};
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    struct worker workers[MAX_THREADS];
    uint32_t m = UINT32_C(1) << p;
    for (unsigned i = 0; i < threads; i++) {
        struct worker *w = &workers[i];
        w->job = &job;
        w->rng = gsl_rng_alloc(&gsl_xo_type);
        w->regs = malloc(m);
        w->buf = malloc(SK_HLL_NATIVE_HEADER_SIZE + (size_t)m);
        if (w->rng == NULL || w->regs == NULL || w->buf == NULL ||
            sk_hll_new(&w->h, p) != SK_OK)
            die("out of memory");
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            die("cannot start a thread");
    }
    for (unsigned i = 0; i < threads; i++) {
        pthread_join(workers[i].thread, NULL);
        gsl_rng_free(workers[i].rng);
        free(workers[i].regs);
        free(workers[i].buf);
        sk_hll_free(workers[i].h);
    }
    if (atomic_load(&job.failed))
        die("a trial failed");
}

/* ---- statistics ---------------------------------------------------------- */

struct stats {
    double mean_estimate, bias, bias_se, rmse, sd, q[7];
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile of sorted x[0..T-1] at level a in [0, 1], interpolating linearly
 * between order statistics (R's and numpy's default). */
static double quantile(const double *x, unsigned T, double a)
{
    double h = (T - 1) * a;
    unsigned lo = (unsigned)floor(h);
    if (lo + 1 >= T)
        return x[T - 1];
    return x[lo] + (h - lo) * (x[lo + 1] - x[lo]);
}

/* Turns the estimates into sorted relative errors in `rel` and summarizes. */
static struct stats summarize(const double *estimates, unsigned T, uint64_t n, double *rel)
{
    struct stats s = {0};
    double sum = 0, sum_sq = 0, sum_est = 0;
    for (unsigned t = 0; t < T; t++) {
        rel[t] = (estimates[t] - (double)n) / (double)n;
        sum += rel[t];
        sum_sq += rel[t] * rel[t];
        sum_est += estimates[t];
    }
    s.mean_estimate = sum_est / T;
    s.bias = sum / T;
    s.rmse = sqrt(sum_sq / T);
    double var = 0;
    for (unsigned t = 0; t < T; t++)
        var += (rel[t] - s.bias) * (rel[t] - s.bias);
    s.sd = T > 1 ? sqrt(var / (T - 1)) : 0;
    s.bias_se = s.sd / sqrt((double)T);
    qsort(rel, T, sizeof *rel, cmp_double);
    for (int i = 0; i < 7; i++)
        s.q[i] = quantile(rel, T, quantile_levels[i] / 100);
    return s;
}

/* Two-sample Kolmogorov-Smirnov distance of sorted samples; equal values
 * are stepped over together, as the estimates are integers. */
static double ks_distance(const double *a, unsigned na, const double *b, unsigned nb)
{
    unsigned i = 0, j = 0;
    double d = 0;
    while (i < na && j < nb) {
        double v = a[i] < b[j] ? a[i] : b[j];
        while (i < na && a[i] == v)
            i++;
        while (j < nb && b[j] == v)
            j++;
        double diff = fabs((double)i / na - (double)j / nb);
        if (diff > d)
            d = diff;
    }
    return d;
}

static void csv_header(FILE *f)
{
    fprintf(f, "p,m,n,method,trials,theory_rse,bias,bias_se,rmse,rmse_over_theory,sd,"
               "q00135,q02275,q15866,q50,q84134,q97725,q99865,mean_estimate\n");
}

static void csv_row(FILE *f, unsigned p, uint64_t n, int method, unsigned T,
                    const struct stats *s)
{
    double m = (double)(UINT32_C(1) << p), theory = RSE_FACTOR / sqrt(m);
    fprintf(f, "%u,%.0f,%llu,%s,%u,%.6g,%.6g,%.4g,%.6g,%.5f,%.6g", p, m,
            (unsigned long long)n, method_name[method], T, theory, s->bias, s->bias_se,
            s->rmse, s->rmse / theory, s->sd);
    for (int i = 0; i < 7; i++)
        fprintf(f, ",%.6g", s->q[i]);
    fprintf(f, ",%.10g\n", s->mean_estimate);
}

/* ---- checks -------------------------------------------------------------- */

/* The registers computed here from a stream of hashes, packed here, must be
 * the bytes sk_hll_serialize writes for the same stream. */
static void check_packing(unsigned p, uint64_t seed)
{
    uint32_t m = UINT32_C(1) << p;
    unsigned q = 64 - p;
    uint8_t *regs = calloc(m, 1), *mine = malloc(SK_HLL_NATIVE_HEADER_SIZE + (size_t)m);
    sk_hll *h;
    if (regs == NULL || mine == NULL || sk_hll_new(&h, p) != SK_OK)
        die("out of memory");
    xo_state st;
    xo_seed(&st, seed ^ 0x5eed);
    for (uint64_t i = 0; i < 4 * (uint64_t)m; i++) {
        uint64_t hash = xo_next(&st);
        uint32_t idx = (uint32_t)(hash & (m - 1));
        uint64_t rank_bits = hash >> p | UINT64_C(1) << q;
        uint8_t rank = (uint8_t)(__builtin_ctzll(rank_bits) + 1);
        if (rank > regs[idx])
            regs[idx] = rank;
        if (sk_hll_add_hash(h, hash) < 0)
            die("out of memory");
    }
    size_t len;
    uint8_t *theirs = serialized(h, SK_HLL_NATIVE, &len);
    size_t my_len = pack_native(p, regs, mine);
    if (len != my_len || memcmp(theirs, mine, len) != 0) {
        fprintf(stderr, "hll_characterize: p=%u: packed registers differ from "
                        "sk_hll_serialize's bytes\n", p);
        exit(1);
    }
    sk_hll *back;
    if (sk_hll_deserialize(&back, mine, my_len, NULL, NULL) != SK_OK ||
        sk_hll_count(back) != sk_hll_count(h))
        die("a packed sketch does not read back to the same count");
    printf("packing check p=%-2u: %u hashes -> registers packed here == sk_hll_serialize "
           "(%zu bytes), count %llu\n", p, 4 * m, len,
           (unsigned long long)sk_hll_count(back));
    sk_hll_free(back);
    sk_hll_free(h);
    free(theirs);
    free(mine);
    free(regs);
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: hll_characterize [-t TRIALS] [-p P,...] [-d POINTS_PER_DECADE] [-N MAX_N]\n"
            "                        [-s SWITCH] [-j THREADS] [-S SEED] [-o OUTDIR] [-q]\n"
            "       hll_characterize -R FILE [-S SEED]\n");
    exit(2);
}

static uint64_t parse_u64(const char *s)
{
    return bench_parse_u64(s, usage);
}

int main(int argc, char **argv)
{
    unsigned trials = 2000, per_decade = 4, switch_mult = 16;
    unsigned precisions[MAX_PRECISIONS] = {10, 12, 14, 16}, np = 4;
    uint64_t max_n = 2000000000, seed = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cpus > 0 ? (unsigned)cpus : 1;
    const char *outdir = "docs/data", *redis_path = NULL;
    int quick = 0, c;
    while ((c = getopt(argc, argv, "t:p:d:N:s:j:S:o:R:qh")) != -1) {
        switch (c) {
        case 't': trials = (unsigned)parse_u64(optarg); break;
        case 'p': np = bench_parse_list(optarg, precisions, MAX_PRECISIONS, usage); break;
        case 'd': per_decade = (unsigned)parse_u64(optarg); break;
        case 'N': max_n = parse_u64(optarg); break;
        case 's': switch_mult = (unsigned)parse_u64(optarg); break;
        case 'j': threads = (unsigned)parse_u64(optarg); break;
        case 'S': seed = parse_u64(optarg); break;
        case 'o': outdir = optarg; break;
        case 'q': quick = 1; break;
        case 'R': redis_path = optarg; break;
        default: usage();
        }
    }
    if (quick) {
        trials = 100;
        per_decade = 2;
        max_n = 1000000000;
    }
    if (trials < 2 || per_decade < 1 || max_n < 1 || max_n > UINT_MAX || np == 0 ||
        threads < 1 || threads > MAX_THREADS)
        usage();
    for (unsigned i = 0; i < np; i++)
        if (precisions[i] < SK_HLL_MIN_PRECISION || precisions[i] > SK_HLL_MAX_PRECISION)
            usage();

    if (redis_path != NULL) {
        write_redis_strings(redis_path, seed);
        return 0;
    }

    /* The grid: round(10^(k/d)), without repeats. */
    uint64_t grid[256];
    unsigned ng = 0;
    for (unsigned k = 0; ng < 256; k++) {
        double x = pow(10, (double)k / per_decade);
        if (x > (double)max_n * (1 + 1e-12))
            break;
        uint64_t n = (uint64_t)llround(x);
        if (ng == 0 || n != grid[ng - 1])
            grid[ng++] = n;
    }

    double *estimates = malloc(trials * sizeof *estimates);
    double *rel = malloc(trials * sizeof *rel), *rel2 = malloc(trials * sizeof *rel2);
    if (estimates == NULL || rel == NULL || rel2 == NULL)
        die("out of memory");

    printf("hll_characterize: %u trials per point, %u points per decade up to n = %llu, "
           "%u thread(s), seed %llu\n", trials, per_decade, (unsigned long long)max_n,
           threads, (unsigned long long)seed);
    printf("streams of hashes up to n = %u m, sampled registers above\n\n", switch_mult);
    for (unsigned i = 0; i < np; i++)
        check_packing(precisions[i], seed);

    /* The two simulations side by side. */
    char path[4096];
    snprintf(path, sizeof path, "%s/hll_method_check.csv", outdir);
    FILE *check = fopen(path, "w");
    if (check == NULL) {
        fprintf(stderr, "hll_characterize: %s: %s\n", path, strerror(errno));
        return 1;
    }
    csv_header(check);
    printf("\nthe two simulations at the same n (%u trials each):\n", trials);
    printf("%-3s %10s %-10s %10s %10s %10s %10s %10s | %7s %7s %7s\n", "p", "n", "method",
           "bias", "rmse", "q2.275", "q50", "q97.725", "z(bias)", "KS D", "KS 1%");
    double total0 = now_s();
    for (unsigned i = 0; i < np; i++) {
        unsigned p = precisions[i];
        uint64_t m = UINT64_C(1) << p;
        uint64_t ns[2] = {m, 16 * m};
        for (int j = 0; j < 2; j++) {
            struct stats s[2];
            for (int method = 0; method < 2; method++) {
                run_point(p, ns[j], method, trials, seed ^ UINT64_C(0xc0ffee), threads,
                          estimates);
                s[method] = summarize(estimates, trials, ns[j], method == 0 ? rel : rel2);
                csv_row(check, p, ns[j], method, trials, &s[method]);
            }
            double z = (s[0].bias - s[1].bias) /
                       sqrt(s[0].bias_se * s[0].bias_se + s[1].bias_se * s[1].bias_se);
            double d = ks_distance(rel, trials, rel2, trials);
            double crit = 1.628 * sqrt(2.0 / trials);
            for (int method = 0; method < 2; method++) {
                printf("%-3u %10llu %-10s %10.3e %10.3e %10.3e %10.3e %10.3e", p,
                       (unsigned long long)ns[j], method_name[method], s[method].bias,
                       s[method].rmse, s[method].q[1], s[method].q[3], s[method].q[5]);
                if (method == 1)
                    printf(" | %7.2f %7.4f %7.4f%s", z, d, crit,
                           fabs(z) < 3 && d < crit ? "  agree" : "  DIFFER");
                printf("\n");
            }
        }
    }
    fclose(check);

    printf("\nper precision: relative error over the grid (%u points)\n", ng);
    for (unsigned i = 0; i < np; i++) {
        unsigned p = precisions[i];
        uint64_t m = UINT64_C(1) << p;
        double theory = RSE_FACTOR / sqrt((double)m);
        snprintf(path, sizeof path, "%s/hll_p%u.csv", outdir, p);
        FILE *out = fopen(path, "w");
        if (out == NULL) {
            fprintf(stderr, "hll_characterize: %s: %s\n", path, strerror(errno));
            return 1;
        }
        csv_header(out);
        printf("\np = %u, m = %llu, 1.04/sqrt(m) = %.4f%%\n", p, (unsigned long long)m,
               100 * theory);
        printf("%12s %-10s %10s %10s %9s %10s %10s\n", "n", "method", "bias", "rmse",
               "rmse/th", "q0.135", "q99.865");
        for (unsigned g = 0; g < ng; g++) {
            uint64_t n = grid[g];
            int method = n <= (uint64_t)switch_mult * m ? METHOD_HASHES : METHOD_REGISTERS;
            double t0 = now_s();
            run_point(p, n, method, trials, seed, threads, estimates);
            struct stats s = summarize(estimates, trials, n, rel);
            csv_row(out, p, n, method, trials, &s);
            fflush(out);
            printf("%12llu %-10s %10.3e %10.3e %9.3f %10.3e %10.3e\n", (unsigned long long)n,
                   method_name[method], s.bias, s.rmse, s.rmse / theory, s.q[0], s.q[6]);
            fflush(stdout);
            fprintf(stderr, "p=%u n=%llu %s: %.1f s\n", p, (unsigned long long)n,
                    method_name[method], now_s() - t0);
        }
        fclose(out);
    }
    printf("\ntotal %.0f s\n", now_s() - total0);
    free(estimates);
    free(rel);
    free(rel2);
    return 0;
}
