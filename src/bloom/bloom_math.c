/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_math.c: false-positive rates and sizing (see bloom_math.h).
 *
 * Classic layout: m bits, k positions per item drawn from one 128-bit hash
 * (bloom_probe.h). Its rate after n items is (1 - e^(-kn/m))^k, the
 * textbook formula, exact in the limit; small filters take the exact
 * occupancy law instead, against which the textbook formula is off by
 * O(k/m).
 *
 * Blocked layout: m/512 blocks of one 64-byte cache line, each item's k
 * positions in one block. Blocks receive unequal numbers of items, which
 * costs false positives: with n/B items per block on average the rate is
 * exactly
 *
 *     sum_j Poisson(j; n/B) sum_x P(x bits set after kj uniform draws) (x/512)^k
 *
 * (the occupancy law of kj draws into 512 bits, computed exactly; the usual
 * (1 - (1 - 1/512)^(kj))^k misses both that a query's positions may repeat
 * and that the bits set in one block are not independent, each worth 3% of
 * the rate at 1%).
 *
 * Split layout: the same blocks, split into k lanes of w = 512/k bits
 * (k = 8 or 16), and each item sets exactly one bit in every lane. Given j
 * items in its block, a query's bit in one lane is set with chance
 * 1 - (1 - 1/w)^j, independently of the other lanes, so the rate is
 * exactly
 *
 *     sum_j Poisson(j; n/B) (1 - (1 - 1/w)^j)^k
 *
 * and sizing takes whichever of k = 8 and k = 16 needs fewer bits.
 *
 * Sizing searches the smallest m (and its best k) for which the layout's
 * exact rate at capacity is at most the requested rate, so a filter meets
 * its rate with integer k, not just approximately: about 5% more bits for
 * blocked than classic at 1%.
 */
#define _GNU_SOURCE /* M_LN2 */
#include "bloom_math.h"

#include <math.h>
#include <stdlib.h>

#define BLOCK_BITS SK__BLOOM_BLOCK_BITS

/* ---- false-positive rates and sizing ------------------------------------ */

/* The chance that k positions drawn uniformly with replacement from `bins`
 * all land on set bits, after `draws` such positions were set: the occupancy
 * law of the draws, computed one draw at a time, against (x/bins)^k. */
static double occupancy_fp_rate(unsigned bins, uint64_t draws, unsigned k)
{
    double *occupied = calloc((size_t)bins + 1, sizeof *occupied);
    if (occupied == NULL)
        return 1;
    occupied[0] = 1;
    unsigned top = 0;
    for (uint64_t d = 0; d < draws; d++) {
        if (top < bins)
            top++;
        for (unsigned x = top; x >= 1; x--)
            occupied[x] = (occupied[x] * x + occupied[x - 1] * (bins - x + 1)) / bins;
        occupied[0] = 0;
    }
    double rate = 0;
    for (unsigned x = 1; x <= top; x++)
        rate += occupied[x] * pow((double)x / bins, k);
    free(occupied);
    return rate;
}

/* Small classic filters get the exact occupancy law (the textbook formula
 * is off by O(k/m): a 10-bit filter for one item at 1% has 6%), large ones
 * the textbook (1 - e^(-kn/m))^k, exact in the limit. */
#define EXACT_CLASSIC_WORK 100000

static double classic_fp_rate(uint64_t bits, unsigned k, double n)
{
    double draws = round((double)k * n);
    if ((double)bits * draws <= EXACT_CLASSIC_WORK)
        return occupancy_fp_rate((unsigned)bits, (uint64_t)draws, k);
    return pow(-expm1(-(double)k * n / (double)bits), k);
}

/* The mean over the Poisson law of items per block (mean lambda > 0) of
 * (1 - e^(log_clear j))^k, where e^log_clear is the chance that one item
 * leaves a probed bit clear: the rate of the blocked and split layouts,
 * given the fill their probes see. The law is summed to 12 standard
 * deviations past its mean. */
static double poisson_mixed_rate(double lambda, unsigned k, double log_clear)
{
    double log_lambda = log(lambda), log_pmf = -lambda, sum = 0;
    uint64_t last = (uint64_t)(lambda + 12 * sqrt(lambda) + 30);
    for (uint64_t j = 1; j <= last; j++) {
        log_pmf += log_lambda - log((double)j);
        sum += exp(log_pmf + (double)k * log(-expm1(log_clear * (double)j)));
    }
    return sum;
}

/* The textbook approximation of the blocked rate, (fill of a block)^k
 * averaged over the Poisson law of items per block: within a few percent of
 * the exact rate and a hundred times cheaper, it guides the sizing search. */
static double blocked_fp_rate_approx(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    if (lambda <= 0)
        return 0;
    return poisson_mixed_rate(lambda, k, (double)k * log1p(-1.0 / BLOCK_BITS));
}

/* The blocked rate in closed form, for k up to CLOSED_FORM_MAX_K. A query's
 * k positions, drawn with replacement, are u distinct bits with chance
 * distinct[u]; u given bits are all among the positions set by d draws with
 * chance sum_i (-1)^i C(u,i) (1 - i/512)^d (inclusion-exclusion), and with
 * d = kj over j ~ Poisson(lambda) items, E[(1 - i/512)^(kj)] is
 * exp(-lambda (1 - (1 - i/512)^k)). The alternating sum loses up to about
 * 2^k x 1e-16 to cancellation, so tiny rates and larger k take the occupancy
 * computation below, which has only positive terms but costs a thousand
 * times more. */
#define CLOSED_FORM_MAX_K 16

/* The closed form, or -1 where k or cancellation puts it out of reach. */
static double blocked_fp_rate_closed(unsigned k, double lambda)
{
    if (k > CLOSED_FORM_MAX_K)
        return -1;
    double distinct[CLOSED_FORM_MAX_K + 1] = {1};
    for (unsigned draw = 1; draw <= k; draw++) {
        for (unsigned u = draw; u >= 1; u--)
            distinct[u] = (distinct[u] * u + distinct[u - 1] * (BLOCK_BITS - u + 1)) /
                          BLOCK_BITS;
        distinct[0] = 0;
    }
    double hit_none[CLOSED_FORM_MAX_K + 1]; /* E[chance that i given bits stay clear] */
    for (unsigned i = 0; i <= k; i++)
        hit_none[i] = exp(-lambda * -expm1((double)k * log1p(-(double)i / BLOCK_BITS)));
    double rate = 0;
    for (unsigned u = 1; u <= k; u++) {
        double all_hit = 0, binom = 1;
        for (unsigned i = 0; i <= u; i++) {
            all_hit += (i % 2 ? -binom : binom) * hit_none[i];
            binom = binom * (u - i) / (i + 1);
        }
        rate += distinct[u] * all_hit;
    }
    return rate > ldexp(1e-10, (int)k) ? rate : -1; /* cancellation: under 1e-5 of it */
}

static double blocked_fp_rate(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    if (lambda <= 0)
        return 0;
    if (lambda > 10000) /* the Poisson law is then as narrow as one block */
        return pow(-expm1((double)k * log1p(-1.0 / BLOCK_BITS) * lambda), k);
    double closed = blocked_fp_rate_closed(k, lambda);
    if (closed >= 0)
        return closed;
    /* A block holding j items has received kj positions drawn uniformly with
     * replacement; occupied[x] is the chance that x distinct bits are set,
     * updated one draw at a time. A query's k positions, drawn the same way,
     * all find set bits with chance (x/512)^k. */
    double occupied[BLOCK_BITS + 1] = {1}, all_set[BLOCK_BITS + 1];
    for (unsigned x = 0; x <= BLOCK_BITS; x++)
        all_set[x] = pow((double)x / BLOCK_BITS, k);
    unsigned top = 0; /* the largest x with occupied[x] != 0 */
    double log_lambda = log(lambda), log_pmf = -lambda, sum = 0;
    uint64_t last = (uint64_t)(lambda + 12 * sqrt(lambda) + 30);
    for (uint64_t j = 0; j <= last; j++) {
        if (j > 0) {
            for (unsigned draw = 0; draw < k; draw++) {
                if (top < BLOCK_BITS)
                    top++;
                for (unsigned x = top; x >= 1; x--)
                    occupied[x] = (occupied[x] * x +
                                   occupied[x - 1] * (BLOCK_BITS - x + 1)) / BLOCK_BITS;
                occupied[0] = 0;
            }
            double given_j = 0;
            for (unsigned x = 1; x <= top; x++)
                given_j += occupied[x] * all_set[x];
            sum += exp(log_pmf) * given_j;
        }
        log_pmf += log_lambda - log((double)(j + 1));
    }
    return sum;
}

/* The sizing search's guide for blocked filters: the exact closed form where
 * it is reliable and cheap, else the Poisson approximation. */
static double blocked_fp_rate_coarse(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    double closed = lambda > 0 && lambda <= 10000 ? blocked_fp_rate_closed(k, lambda) : -1;
    return closed >= 0 ? closed : blocked_fp_rate_approx(bits, k, n);
}

static double split_fp_rate(uint64_t bits, unsigned k, double n)
{
    double lambda = n / ((double)bits / BLOCK_BITS);
    if (lambda <= 0)
        return 0;
    double log_clear = log1p(-(double)k / BLOCK_BITS); /* of a lane's bit, per item */
    if (lambda > 10000) /* the Poisson law is then as narrow as one block */
        return pow(-expm1(log_clear * lambda), k);
    return poisson_mixed_rate(lambda, k, log_clear);
}

double sk__bloom_fp_rate(sk_bloom_layout layout, uint64_t bits, unsigned k, double n)
{
    switch (layout) {
    case SK_BLOOM_BLOCKED: return blocked_fp_rate(bits, k, n);
    case SK_BLOOM_SPLIT: return split_fp_rate(bits, k, n);
    default: return classic_fp_rate(bits, k, n);
    }
}

/* Filters sized for a rate have at least one block of bits: 64 bytes are
 * nothing, and they keep tiny filters far from the regime where an item's
 * own positions collide. */
#define MIN_SIZED_BITS BLOCK_BITS

uint64_t sk__bloom_round_bits(sk_bloom_layout layout, uint64_t bits)
{
    if (bits == 0)
        bits = 1;
    if (layout != SK_BLOOM_CLASSIC)
        bits = (bits + BLOCK_BITS - 1) / BLOCK_BITS * BLOCK_BITS;
    return bits;
}

typedef double (*rate_fn)(uint64_t bits, unsigned k, double n);

/* The lowest rate of m bits at n items over k in [from, to], and its k. */
/* best_rate of the classic rate: the occupancy law is computed one draw at
 * a time and a larger k's draws extend a smaller k's, so one pass serves
 * every k of the exact law, with the same arithmetic as classic_fp_rate's
 * (the same rates to the bit), instead of one pass each. */
static double classic_best_rate(uint64_t bits, double n, unsigned from, unsigned to,
                                unsigned *k_out)
{
    double best = 2, *occupied = NULL;
    uint64_t drawn = 0;
    unsigned top = 0;
    for (unsigned k = from; k <= to; k++) {
        double draws = round((double)k * n), r;
        if ((double)bits * draws > EXACT_CLASSIC_WORK) {
            r = pow(-expm1(-(double)k * n / (double)bits), k);
        } else {
            unsigned bins = (unsigned)bits;
            if (occupied == NULL && (occupied = calloc((size_t)bins + 1, sizeof *occupied)))
                occupied[0] = 1;
            if (occupied == NULL)
                return 1; /* as classic_fp_rate: no filter meets it */
            for (; drawn < (uint64_t)draws; drawn++) {
                if (top < bins)
                    top++;
                for (unsigned x = top; x >= 1; x--)
                    occupied[x] = (occupied[x] * x + occupied[x - 1] * (bins - x + 1)) / bins;
                occupied[0] = 0;
            }
            r = 0;
            for (unsigned x = 1; x <= top; x++)
                r += occupied[x] * pow((double)x / bins, k);
        }
        if (r < best) {
            best = r;
            *k_out = k;
        }
    }
    free(occupied);
    return best;
}

static double best_rate(rate_fn rate, uint64_t bits, double n, unsigned from, unsigned to,
                        unsigned *k_out)
{
    if (rate == classic_fp_rate)
        return classic_best_rate(bits, n, from, to, k_out);
    double best = 2;
    for (unsigned k = from; k <= to; k++) {
        double r = rate(bits, k, n);
        if (r < best) {
            best = r;
            *k_out = k;
        }
    }
    return best;
}

/* The smallest m in (lo, hi], to within `tolerance` bits, whose best rate
 * is at most fp_rate, given that hi meets it; its k in *k. */
static uint64_t search_bits(sk_bloom_layout layout, rate_fn rate, double n, double fp_rate,
                            uint64_t lo, uint64_t hi, unsigned from, unsigned to,
                            uint64_t tolerance, unsigned *k)
{
    while (hi - lo > tolerance) {
        uint64_t mid = sk__bloom_round_bits(layout, lo + (hi - lo) / 2);
        if (mid >= hi || mid <= lo)
            break;
        if (best_rate(rate, mid, n, from, to, k) > fp_rate)
            lo = mid;
        else
            hi = mid;
    }
    best_rate(rate, hi, n, from, to, k);
    return hi;
}

static unsigned clamp_hashes(double k)
{
    return k < 1 ? 1 : k > SK_BLOOM_MAX_HASHES ? SK_BLOOM_MAX_HASHES : (unsigned)k;
}

/* The exact size of a blocked layer whose coarse size (below) is m bits
 * with k hashes: a search on the exact rate near m, with k within one of
 * k. */
static int refine_blocked(double n, double fp_rate, uint64_t m, unsigned k, uint64_t *bits,
                          unsigned *hashes)
{
    const sk_bloom_layout layout = SK_BLOOM_BLOCKED;
    unsigned from = clamp_hashes(k - 1.0), to = clamp_hashes(k + 1.0);
    uint64_t lo = sk__bloom_round_bits(layout, m - m / 16);
    uint64_t hi = sk__bloom_round_bits(layout, m + m / 16);
    while (best_rate(blocked_fp_rate, hi, n, from, to, &k) > fp_rate) {
        lo = hi;
        hi = sk__bloom_round_bits(layout, hi + hi / 8);
        if (hi > SK_BLOOM_MAX_BITS)
            return SK_ETOOLARGE;
    }
    /* A ten-thousandth of m is as close as the exact rate is worth. */
    uint64_t tolerance = hi / 10000 > BLOCK_BITS ? hi / 10000 : BLOCK_BITS;
    *bits = search_bits(layout, blocked_fp_rate, n, fp_rate, lo, hi, from, to, tolerance, &k);
    *hashes = k;
    return SK_OK;
}

/* Sizes a layer of `layout`. When the coarse search already finds more than
 * stop_above bits, that coarse size is returned unrefined: the caller has a
 * cheaper layout in hand. */
static int size_for_layout(uint64_t capacity, double fp_rate, sk_bloom_layout layout,
                           double stop_above, uint64_t *bits, unsigned *hashes)
{
    /* Requested rates lie in [SK_BLOOM_MIN_FP_RATE, SK_BLOOM_MAX_FP_RATE];
     * the later layers of a scalable filter go below: they get more bits. */
    if (capacity == 0 || !(fp_rate > 0) || !(fp_rate <= SK_BLOOM_MAX_FP_RATE) ||
        (layout != SK_BLOOM_BLOCKED && layout != SK_BLOOM_CLASSIC))
        return SK_EINVAL;
    double n = (double)capacity;
    double textbook = ceil(-n * log(fp_rate) / (M_LN2 * M_LN2));
    if (textbook > (double)SK_BLOOM_MAX_BITS)
        return SK_ETOOLARGE;
    /* The rate falls as m grows. A coarse search with a cheap formula, k
     * free around its textbook optimum, then (blocked) an exact one near
     * it, with k within one of the coarse choice. */
    rate_fn coarse = layout == SK_BLOOM_BLOCKED ? blocked_fp_rate_coarse : classic_fp_rate;
    unsigned k0 = clamp_hashes(-log2(fp_rate)), k = k0;
    unsigned from = clamp_hashes(k0 / 2.0), to = clamp_hashes(k0 + 6.0);
    if (textbook < MIN_SIZED_BITS)
        textbook = MIN_SIZED_BITS;
    uint64_t lo = sk__bloom_round_bits(layout, (uint64_t)textbook / 2);
    uint64_t hi = sk__bloom_round_bits(layout, (uint64_t)textbook);
    while (best_rate(coarse, hi, n, from, to, &k) > fp_rate) {
        lo = hi;
        hi = sk__bloom_round_bits(layout, hi + hi / 4 + BLOCK_BITS);
        if (hi > SK_BLOOM_MAX_BITS)
            return SK_ETOOLARGE;
    }
    uint64_t m = search_bits(layout, coarse, n, fp_rate, lo, hi, from, to,
                             layout == SK_BLOOM_BLOCKED ? BLOCK_BITS : 1, &k);
    if (m < MIN_SIZED_BITS) {
        m = MIN_SIZED_BITS;
        best_rate(coarse, m, n, from, to, &k);
    }
    if (layout == SK_BLOOM_BLOCKED && (double)m <= stop_above)
        return refine_blocked(n, fp_rate, m, k, bits, hashes);
    *bits = m;
    *hashes = k;
    return SK_OK;
}

/* The split layout's lane counts, one per vector width of its masks. */
static const unsigned SPLIT_HASHES[] = {8, 16};

/* The smallest whole number of blocks with which k lanes meet fp_rate at n
 * items. The rate falls as m grows; the search brackets the answer from
 * the textbook classic size, then narrows the bracket by interpolating the
 * logarithm of the rate, which is close to linear in m, with a bisection
 * whenever that fails to halve it: a handful of evaluations of the rate
 * where a bisection from one block took thirty (AUTO sizes split for
 * every filter). */
static int size_split_lanes(double n, double fp_rate, unsigned k, uint64_t *bits)
{
    const uint64_t max_blocks = SK_BLOOM_MAX_BITS / BLOCK_BITS;
    double log_p = log(fp_rate);
    double guess = ceil(-n * log_p / (M_LN2 * M_LN2) / BLOCK_BITS);
    uint64_t lo = 0;
    uint64_t hi = guess < 1 ? 1 : guess > (double)max_blocks ? max_blocks : (uint64_t)guess;
    /* lo fails (0 blocks always does), hi meets the rate; f_* is the
     * logarithm of their rates over fp_rate. */
    double f_lo = INFINITY, f_hi, r = split_fp_rate(hi * BLOCK_BITS, k, n);
    f_hi = log(r) - log_p;
    if (r > fp_rate) {
        while (r > fp_rate) {
            if (hi == max_blocks)
                return SK_ETOOLARGE;
            lo = hi;
            f_lo = f_hi;
            hi = hi > max_blocks / 2 ? max_blocks : hi * 2;
            r = split_fp_rate(hi * BLOCK_BITS, k, n);
            f_hi = log(r) - log_p;
        }
    } else {
        while (hi > 1) {
            uint64_t half = hi / 2;
            r = split_fp_rate(half * BLOCK_BITS, k, n);
            if (r > fp_rate) {
                lo = half;
                f_lo = log(r) - log_p;
                break;
            }
            hi = half;
            f_hi = log(r) - log_p;
        }
    }
    for (int bisect = 0; hi - lo > 1;) {
        uint64_t width = hi - lo, mid = lo + width / 2;
        if (!bisect && isfinite(f_lo) && isfinite(f_hi) && f_lo > f_hi) {
            double at = (double)lo + (double)width * f_lo / (f_lo - f_hi);
            mid = at <= (double)lo + 1 ? lo + 1 : at >= (double)hi - 1 ? hi - 1 : (uint64_t)at;
        }
        r = split_fp_rate(mid * BLOCK_BITS, k, n);
        if (r > fp_rate) {
            lo = mid;
            f_lo = log(r) - log_p;
        } else {
            hi = mid;
            f_hi = log(r) - log_p;
        }
        /* An interpolation that moved one end by little: bisect next. */
        bisect = !bisect && hi - lo > width / 2;
    }
    *bits = hi * BLOCK_BITS;
    return SK_OK;
}

static int size_split(uint64_t capacity, double fp_rate, uint64_t *bits, unsigned *hashes)
{
    if (capacity == 0 || !(fp_rate > 0) || !(fp_rate <= SK_BLOOM_MAX_FP_RATE))
        return SK_EINVAL;
    int rc = SK_ETOOLARGE;
    *bits = UINT64_MAX;
    for (size_t i = 0; i < sizeof SPLIT_HASHES / sizeof SPLIT_HASHES[0]; i++) {
        uint64_t m;
        if (size_split_lanes((double)capacity, fp_rate, SPLIT_HASHES[i], &m) == SK_OK &&
            m < *bits) {
            *bits = m;
            *hashes = SPLIT_HASHES[i];
            rc = SK_OK;
        }
    }
    return rc;
}

int sk__bloom_split_hashes_valid(unsigned hashes)
{
    for (size_t i = 0; i < sizeof SPLIT_HASHES / sizeof SPLIT_HASHES[0]; i++)
        if (hashes == SPLIT_HASHES[i])
            return 1;
    return 0;
}

/* SK_BLOOM_AUTO, in two steps, each by the sizes this file computes for the
 * same capacity and rate (docs/bloom-format.md has the table):
 *
 * 1. blocked while it needs at most 10% more bits than classic
 *    (AUTO_BLOCKED_MAX_EXTRA), classic below, where a block of 512 bits
 *    gets too crowded to reach the rate economically, and for filters of a
 *    few blocks, which go by whole blocks;
 * 2. where step 1 takes blocked, split instead, the fastest layout (one
 *    cache line, a few vector instructions and no branch per item),
 *    wherever it needs at most 5% more bits than blocked
 *    (AUTO_SPLIT_MAX_EXTRA): for a million items or more, the rates from
 *    2.2% down to 1.9e-4 (at 1%: 10.10 bits per item against 9.92). Above
 *    2.2% one bit in each of 8 lanes costs 7% (3%) to 22% (10%) more than
 *    blocked.
 *
 * Split replaces only blocked, never classic: where classic wins, split
 * would cost from 26% (1e-5) to 72% (1e-8) more bits, and a small filter
 * (RedisBloom's default of 100 items) the next size of allocation. */
#define AUTO_BLOCKED_MAX_EXTRA 1.10
#define AUTO_SPLIT_MAX_EXTRA 1.05

static int resolve_layout(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                          uint64_t *bits, unsigned *hashes)
{
    if (*layout == SK_BLOOM_SPLIT)
        return size_split(capacity, fp_rate, bits, hashes);
    if (*layout != SK_BLOOM_AUTO)
        return size_for_layout(capacity, fp_rate, *layout, INFINITY, bits, hashes);
    uint64_t classic_bits;
    unsigned classic_hashes;
    int rc = size_for_layout(capacity, fp_rate, SK_BLOOM_CLASSIC, INFINITY, &classic_bits,
                             &classic_hashes);
    if (rc != SK_OK)
        return rc;
    /* The coarse blocked size is within a fraction of a percent of the
     * exact one, so 5% over the limit settles the choice without refining. */
    uint64_t blocked_bits, split_bits;
    unsigned blocked_hashes, split_hashes;
    rc = size_for_layout(capacity, fp_rate, SK_BLOOM_BLOCKED,
                         1.05 * AUTO_BLOCKED_MAX_EXTRA * (double)classic_bits, &blocked_bits,
                         &blocked_hashes);
    if (rc != SK_OK || (double)blocked_bits > AUTO_BLOCKED_MAX_EXTRA * (double)classic_bits) {
        *layout = SK_BLOOM_CLASSIC;
        *bits = classic_bits;
        *hashes = classic_hashes;
        return SK_OK;
    }
    if (size_split(capacity, fp_rate, &split_bits, &split_hashes) == SK_OK &&
        (double)split_bits <= AUTO_SPLIT_MAX_EXTRA * (double)blocked_bits) {
        *layout = SK_BLOOM_SPLIT;
        *bits = split_bits;
        *hashes = split_hashes;
        return SK_OK;
    }
    *layout = SK_BLOOM_BLOCKED;
    *bits = blocked_bits;
    *hashes = blocked_hashes;
    return SK_OK;
}

int sk_bloom_size_for(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                      uint64_t *bits, unsigned *hashes)
{
    if (layout == NULL || bits == NULL || hashes == NULL)
        return SK_EINVAL;
    return resolve_layout(capacity, fp_rate, layout, bits, hashes);
}

uint64_t sk__bloom_words(sk_bloom_layout layout, uint64_t bits)
{
    return layout != SK_BLOOM_CLASSIC ? bits / 64 : (bits + 63) / 64;
}

int sk__bloom_size_layer(uint64_t capacity, double fp_rate, sk_bloom_layout *layout,
                         sk_bloom_layer *out)
{
    uint64_t bits;
    unsigned hashes;
    int rc = resolve_layout(capacity, fp_rate, layout, &bits, &hashes);
    if (rc != SK_OK)
        return rc;
    *out = (sk_bloom_layer){.bits = bits, .hashes = hashes, .capacity = capacity,
                            .fp_rate = fp_rate, .bytes = sk__bloom_words(*layout, bits) * 8};
    return SK_OK;
}
