/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_joint.c: what two HyperLogLog sketches say of their two sets together
 * (sk_hll_compare): |A \ B|, |B \ A|, |A ∩ B|, the union, the Jaccard index
 * and the share of A found in B, each with a standard error and bounds.
 *
 * Inclusion–exclusion (|A| + |B| - |A ∪ B|) carries the error of the union,
 * which drowns a small intersection. The joint maximum-likelihood estimate
 * (Ertl 2017, "New cardinality estimation methods for HyperLogLog
 * sketches", arXiv:1706.07290, the section on joint estimation) instead
 * fits all three parts to the pairs of registers at once.
 *
 * The model
 * ---------
 * Under the Poisson model a set of n items puts a Poisson(n/m) number of
 * them into each of the m registers, independently, and a register of
 * q = 64 - p rank bits then holds U with
 *
 *     F(l, k) = P(U <= k) = exp(-l / 2^k)   for 0 <= k <= q,   1 at q + 1
 *     f(l, k) = P(U = k)  = F(l, k) - F(l, k - 1)
 *
 * for the rate l = n/m. The sets A \ B, B \ A and A ∩ B are disjoint, with
 * rates la, lb and lx, and their values Ua, Ub, Ux in a register are
 * independent. Register i of A holds Ka = max(Ua, Ux), of B Kb = max(Ub, Ux),
 * so a pair of registers has the probability
 *
 *     Ka < Kb:    f(la + lx, Ka) f(lb, Kb)
 *     Ka > Kb:    f(la, Ka) f(lb + lx, Kb)
 *     Ka = Kb = k: P(Ka <= k, Kb <= k) - P(Ka <= k-1, Kb <= k)
 *                - P(Ka <= k, Kb <= k-1) + P(Ka <= k-1, Kb <= k-1)
 *
 * where P(Ka <= i, Kb <= j) = F(lx, min(i, j)) F(la, i) F(lb, j). With
 * x = F(lx, k), a = F(la, k), b = F(lb, k) and X = 1 - x, A = 1 - a,
 * B = 1 - b, the equal case is
 *
 *     k = 0:         exp(-(la + lb + lx))
 *     1 <= k <= q:   x a b g,   g = X + x A B
 *     k = q + 1:     g, with x, a and b at k = q
 *
 * a sum of positive terms, so it loses no digits to cancellation; 1 - F is
 * computed with expm1 for the same reason. The log-likelihood is a sum over
 * registers, so five histograms of the register values are all it reads:
 * of Ka and of Kb where Ka < Kb, of Ka and of Kb where Ka > Kb, and of k
 * where they are equal.
 *
 * The solver
 * ----------
 * The likelihood is maximized over la, lb, lx >= 0 by projected Newton
 * steps: parameters at 0 whose gradient points below 0 are held there,
 * the others take the Newton step of their block when its Hessian is
 * negative definite and a scaled gradient step otherwise, and every step
 * is halved until the log-likelihood rises (Armijo's rule), so it rises at
 * each iteration and stops where no step raises it. It starts from
 * inclusion–exclusion on the single-sketch estimates, clipped inside the
 * feasible set, usually a few steps away.
 *
 * Errors and bounds
 * -----------------
 * For the parameters off the boundary the covariance is the inverse of the
 * observed information (minus the Hessian of their block), less each
 * part's Poisson variance n_i: the model draws the sets' sizes, and that
 * spread, not in the estimate's error against sets of given size, is most
 * of the variance while a set is small against m. A parameter at
 * 0 (disjoint sets, equal sets, one inside the other) has no normal error:
 * its bound at z standard errors is where the log-likelihood has fallen by
 * z^2/2 along it, z^2 / (2 |gradient|) to first order, and its standard
 * error is that bound at z = 1. The union, the Jaccard index and the share
 * of A in B take their errors from these by the delta method. Bounds are
 * the estimate plus or minus 1, 2 and 3 standard errors, an item wider
 * for counts (their error is discrete at small sizes), clipped to what
 * the quantity can be.
 */
#include <math.h>
#include <string.h>

#include "hll_internal.h"

/* Slots of a histogram of register values, which never exceed 61. */
#define VALUES 64
#define MAX_ITERATIONS 200
#define MAX_HALVINGS 60

enum { LA, LB, LX, PARAMS };

struct histograms {
    uint32_t a_below[VALUES]; /* Ka, where Ka < Kb */
    uint32_t b_above[VALUES]; /* Kb, where Ka < Kb */
    uint32_t a_above[VALUES]; /* Ka, where Ka > Kb */
    uint32_t b_below[VALUES]; /* Kb, where Ka > Kb */
    uint32_t equal[VALUES];   /* Ka = Kb */
    unsigned q;               /* 64 - precision */
    double m;                 /* registers */
};

/* A log-likelihood with its gradient and Hessian in (la, lb, lx). */
struct fit {
    double value;
    double gradient[PARAMS];
    double hessian[PARAMS][PARAMS];
};

/* ---- the likelihood ------------------------------------------------------ */

/* ln f(l, k) and its first two derivatives in l. */
static double log_f(double l, unsigned k, unsigned q, double *d1, double *d2)
{
    if (k == 0) {
        *d1 = -1;
        *d2 = 0;
        return -l;
    }
    double c = ldexp(1, -(int)(k <= q ? k : q));
    double u = exp(-c * l), not_u = -expm1(-c * l);
    *d1 = c * u / not_u;
    *d2 = -c * c * u / (not_u * not_u);
    if (k <= q) {
        *d1 -= c;
        return -c * l + log(not_u);
    }
    return log(not_u);
}

/* Adds count * ln f(sum of the rates in `which`, k) to the fit. */
static void add_single(struct fit *s, uint32_t count, const int *which, int n,
                       const double *l, unsigned k, unsigned q, int derivatives)
{
    double rate = 0, d1, d2;
    for (int i = 0; i < n; i++)
        rate += l[which[i]];
    s->value += count * log_f(rate, k, q, &d1, &d2);
    if (!derivatives)
        return;
    for (int i = 0; i < n; i++) {
        s->gradient[which[i]] += count * d1;
        for (int j = 0; j < n; j++)
            s->hessian[which[i]][which[j]] += count * d2;
    }
}

/* Adds count * ln P(Ka = Kb = k) to the fit (the equal case above). */
static void add_equal(struct fit *s, uint32_t count, const double *l, unsigned k, unsigned q,
                      int derivatives)
{
    if (k == 0) {
        s->value -= count * (l[LA] + l[LB] + l[LX]);
        if (derivatives)
            for (int i = 0; i < PARAMS; i++)
                s->gradient[i] -= count;
        return;
    }
    double c = ldexp(1, -(int)(k <= q ? k : q));
    double a = exp(-c * l[LA]), b = exp(-c * l[LB]), x = exp(-c * l[LX]);
    double na = -expm1(-c * l[LA]), nb = -expm1(-c * l[LB]), nx = -expm1(-c * l[LX]);
    double g = nx + x * na * nb;
    double prefix = k <= q ? -c * (l[LA] + l[LB] + l[LX]) : 0;
    s->value += count * (prefix + log(g));
    if (!derivatives)
        return;
    /* Derivatives of g, then of ln g = g'/g and g''/g - g'g'^T/g^2. */
    double dg[PARAMS] = {c * x * a * nb, c * x * b * na, c * x * (1 - na * nb)};
    double h[PARAMS][PARAMS];
    h[LA][LA] = -c * c * x * a * nb;
    h[LB][LB] = -c * c * x * b * na;
    h[LX][LX] = -c * c * x * (1 - na * nb);
    h[LA][LB] = h[LB][LA] = c * c * x * a * b;
    h[LA][LX] = h[LX][LA] = -c * c * x * a * nb;
    h[LB][LX] = h[LX][LB] = -c * c * x * b * na;
    for (int i = 0; i < PARAMS; i++) {
        s->gradient[i] += count * ((k <= q ? -c : 0) + dg[i] / g);
        for (int j = 0; j < PARAMS; j++)
            s->hessian[i][j] += count * (h[i][j] / g - dg[i] * dg[j] / (g * g));
    }
}

/* The log-likelihood of rates l (and its derivatives if asked): -inf where
 * the registers are impossible. */
static void likelihood(const struct histograms *hs, const double *l, int derivatives,
                       struct fit *s)
{
    static const int a_x[2] = {LA, LX}, b_x[2] = {LB, LX}, a[1] = {LA}, b[1] = {LB};
    memset(s, 0, sizeof *s);
    for (unsigned k = 0; k <= hs->q + 1; k++) {
        if (hs->a_below[k])
            add_single(s, hs->a_below[k], a_x, 2, l, k, hs->q, derivatives);
        if (hs->b_above[k])
            add_single(s, hs->b_above[k], b, 1, l, k, hs->q, derivatives);
        if (hs->a_above[k])
            add_single(s, hs->a_above[k], a, 1, l, k, hs->q, derivatives);
        if (hs->b_below[k])
            add_single(s, hs->b_below[k], b_x, 2, l, k, hs->q, derivatives);
        if (hs->equal[k])
            add_equal(s, hs->equal[k], l, k, hs->q, derivatives);
    }
    if (isnan(s->value))
        s->value = -INFINITY;
}

/* ---- the solver ---------------------------------------------------------- */

/* Solves (-H_ff) d = g_f over the free parameters by Cholesky: 0 if -H_ff
 * is not positive definite. The inverse goes to inv if it is not NULL. */
static int solve_free(const struct fit *s, const int *free_set, double *d,
                      double inv[PARAMS][PARAMS])
{
    int idx[PARAMS], n = 0;
    for (int i = 0; i < PARAMS; i++)
        if (free_set[i])
            idx[n++] = i;
    double L[PARAMS][PARAMS] = {{0}};
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            double sum = -s->hessian[idx[i]][idx[j]];
            for (int k = 0; k < j; k++)
                sum -= L[i][k] * L[j][k];
            if (i == j) {
                if (!(sum > 0))
                    return 0;
                L[i][i] = sqrt(sum);
            } else {
                L[i][j] = sum / L[j][j];
            }
        }
    }
    /* Column by column of the identity for the inverse, and g for d. */
    for (int col = 0; col <= n; col++) {
        double y[PARAMS], z[PARAMS];
        for (int i = 0; i < n; i++) {
            double rhs = col < n ? (i == col) : s->gradient[idx[i]];
            for (int k = 0; k < i; k++)
                rhs -= L[i][k] * y[k];
            y[i] = rhs / L[i][i];
        }
        for (int i = n - 1; i >= 0; i--) {
            double rhs = y[i];
            for (int k = i + 1; k < n; k++)
                rhs -= L[k][i] * z[k];
            z[i] = rhs / L[i][i];
        }
        for (int i = 0; i < n; i++) {
            if (col == n && d != NULL)
                d[idx[i]] = z[i];
            else if (col < n && inv != NULL)
                inv[idx[i]][idx[col]] = z[i];
        }
    }
    return 1;
}

/* Parameters that may move: those above 0, and those at 0 pulled upwards. */
static void free_parameters(const double *l, const struct fit *s, int *free_set)
{
    for (int i = 0; i < PARAMS; i++)
        free_set[i] = l[i] > 0 || s->gradient[i] > 0;
}

/* Puts at 0 the first rate pulled downwards whose removal raises the
 * likelihood: near a corner of the feasible set (equal sets, one inside the
 * other) the Hessian is nearly singular and Newton's steps crawl there. */
static int pin(const struct histograms *hs, double *l, struct fit *s)
{
    for (int i = 0; i < PARAMS; i++) {
        if (!(l[i] > 0 && s->gradient[i] < 0))
            continue;
        double saved = l[i];
        struct fit trial;
        l[i] = 0;
        likelihood(hs, l, 0, &trial);
        if (trial.value > s->value) {
            likelihood(hs, l, 1, s);
            return 1;
        }
        l[i] = saved;
    }
    return 0;
}

static double dot(const double *x, const double *y)
{
    double sum = 0;
    for (int i = 0; i < PARAMS; i++)
        sum += x[i] * y[i];
    return sum;
}

/* Maximizes the likelihood from l, in place; leaves the fit at the end. */
static void maximize(const struct histograms *hs, double *l, struct fit *s)
{
    likelihood(hs, l, 1, s);
    for (int iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
        if (pin(hs, l, s))
            continue;
        int free_set[PARAMS];
        free_parameters(l, s, free_set);
        double d[PARAMS] = {0};
        if (!solve_free(s, free_set, d, NULL) || !(dot(d, s->gradient) > 0)) {
            /* Not a way up: the gradient, scaled to each rate's size, and
             * shortened to at most a doubling of any rate per step. */
            double longest = 0;
            for (int i = 0; i < PARAMS; i++) {
                double scale = l[i] > 1e-3 ? l[i] : 1e-3;
                d[i] = free_set[i] ? s->gradient[i] * scale * scale : 0;
                longest = fmax(longest, fabs(d[i]) / scale);
            }
            if (longest > 1)
                for (int i = 0; i < PARAMS; i++)
                    d[i] /= longest;
        }
        double slope = dot(d, s->gradient);
        if (!(slope > 0))
            return;
        double step = 1, next[PARAMS];
        struct fit trial;
        int moved = 0;
        for (int halving = 0; halving < MAX_HALVINGS; halving++, step *= 0.5) {
            double rise = 0;
            for (int i = 0; i < PARAMS; i++) {
                next[i] = l[i] + step * d[i];
                if (next[i] < 0)
                    next[i] = 0;
                rise += s->gradient[i] * (next[i] - l[i]);
            }
            likelihood(hs, next, 0, &trial);
            if (trial.value >= s->value + 1e-4 * rise && trial.value > -INFINITY) {
                moved = 1;
                break;
            }
        }
        if (!moved)
            return;
        /* Done when the log-likelihood rose by less than 10^-10, or no rate
         * moved by more than a part in 10^12 or, near 0, 10^-9 items. */
        int done = trial.value - s->value < 1e-10, moved_far = 0;
        for (int i = 0; i < PARAMS; i++) {
            double change = fabs(next[i] - l[i]);
            if (change > 1e-12 * l[i] && change * hs->m > 1e-9)
                moved_far = 1;
            l[i] = next[i];
        }
        likelihood(hs, l, 1, s);
        if (done || !moved_far)
            return;
    }
}

/* ---- the mechanics ------------------------------------------------------- */

/* The five histograms, and those of A, B and the union for the start, from
 * one table of register pairs: a count per (Ka, Kb) has no branch to
 * mispredict where the sketches differ, and the table is summed once. */
static void fill_histograms(const uint8_t *ra, const uint8_t *rb, unsigned p,
                            struct histograms *hs, uint32_t *ha, uint32_t *hb, uint32_t *hu)
{
    uint32_t pairs[VALUES][VALUES];
    memset(pairs, 0, sizeof pairs);
    memset(hs, 0, sizeof *hs);
    hs->q = 64 - p;
    hs->m = sk__hll_registers(p);
    /* Registers never exceed q + 1 <= 61; the mask keeps even a broken
     * invariant inside the table. */
    for (uint32_t i = 0, m = sk__hll_registers(p); i < m; i++)
        pairs[ra[i] & (VALUES - 1)][rb[i] & (VALUES - 1)]++;
    for (unsigned a = 0; a <= hs->q + 1; a++) {
        for (unsigned b = 0; b <= hs->q + 1; b++) {
            uint32_t n = pairs[a][b];
            if (n == 0)
                continue;
            ha[a] += n;
            hb[b] += n;
            hu[a > b ? a : b] += n;
            if (a < b) {
                hs->a_below[a] += n;
                hs->b_above[b] += n;
            } else if (a > b) {
                hs->a_above[a] += n;
                hs->b_below[b] += n;
            } else {
                hs->equal[a] += n;
            }
        }
    }
}

/* A part from its estimate and standard error, its bounds widened by
 * `slack` and clipped to [0, cap]. */
static void set_part(sk_hll_part *part, double estimate, double se, double cap, double slack)
{
    part->estimate = estimate < cap ? estimate : cap;
    part->standard_error = se;
    for (int k = 0; k < 3; k++) {
        double lo = estimate - (k + 1) * se - slack, hi = estimate + (k + 1) * se + slack;
        part->lower[k] = lo > 0 ? (lo < cap ? lo : cap) : 0;
        part->upper[k] = hi < cap ? hi : cap;
    }
}

/* Below a few hundred items a count's error is a handful of colliding
 * items, too discrete for a normal interval: an item of slack on each side
 * keeps its bounds' coverage (as sk_hll_estimate_with_bounds does). */
static void set_count(sk_hll_part *part, double estimate, double se)
{
    set_part(part, estimate, se, INFINITY, 1);
}

static void set_fraction(sk_hll_part *part, double estimate, double se)
{
    set_part(part, estimate, se, 1, 0);
}

/* A rate pinned at 0: its bound at z standard errors is z^2 / (2 |g|). */
static void set_boundary_part(sk_hll_part *part, double m, double gradient)
{
    double unit = gradient < 0 ? m / (2 * -gradient) : 0;
    part->estimate = 0;
    part->standard_error = unit;
    for (int k = 0; k < 3; k++) {
        part->lower[k] = 0;
        part->upper[k] = unit * (k + 1) * (k + 1) + 1;
    }
}

/* Var of sum_i w_i l_i from the covariance. */
static double variance_of(double cov[PARAMS][PARAMS], const double *w)
{
    double v = 0;
    for (int i = 0; i < PARAMS; i++)
        for (int j = 0; j < PARAMS; j++)
            v += w[i] * cov[i][j] * w[j];
    return v > 0 ? v : 0;
}

static void report(const double *l, const struct fit *s, double m, sk_hll_comparison *out)
{
    int free_set[PARAMS];
    for (int i = 0; i < PARAMS; i++)
        free_set[i] = l[i] > 0;
    double cov[PARAMS][PARAMS] = {{0}};
    if (solve_free(s, free_set, NULL, cov)) {
        /* The model's counts are Poisson, so its variance of each part holds
         * the part's own Poisson variance n_i = m l_i, which a set of fixed
         * size does not have: Var(estimate - n_i) is the rest. */
        for (int i = 0; i < PARAMS; i++)
            if (free_set[i])
                cov[i][i] = fmax(cov[i][i] - l[i] / m, 0);
    } else {
        /* A flat direction among the free rates: each alone, from its own
         * curvature or, if it has none, the error of the union. */
        double union_rate = l[LA] + l[LB] + l[LX];
        for (int i = 0; i < PARAMS; i++) {
            if (!free_set[i])
                continue;
            double sd = -s->hessian[i][i] > 0 ? 1 / sqrt(-s->hessian[i][i]) : 0;
            double floor = 1.04 * union_rate / sqrt(m);
            cov[i][i] = sd > floor ? sd * sd : floor * floor;
        }
    }
    /* Pinned rates count in the derived errors with their one-sided unit. */
    for (int i = 0; i < PARAMS; i++) {
        if (!free_set[i]) {
            double unit = s->gradient[i] < 0 ? 1 / (2 * -s->gradient[i]) : 0;
            cov[i][i] = unit * unit;
        }
    }
    sk_hll_part *parts[PARAMS] = {&out->a_only, &out->b_only, &out->both};
    for (int i = 0; i < PARAMS; i++) {
        if (free_set[i])
            set_count(parts[i], m * l[i], m * sqrt(cov[i][i]));
        else
            set_boundary_part(parts[i], m, s->gradient[i]);
    }
    double total = l[LA] + l[LB] + l[LX];
    const double ones[PARAMS] = {1, 1, 1};
    set_count(&out->either, m * total, m * sqrt(variance_of(cov, ones)));
    if (total > 0) {
        double t2 = total * total;
        const double dj[PARAMS] = {-l[LX] / t2, -l[LX] / t2, (l[LA] + l[LB]) / t2};
        set_fraction(&out->jaccard, l[LX] / total, sqrt(variance_of(cov, dj)));
    } else {
        set_fraction(&out->jaccard, 0, 0);
    }
    double in_a = l[LA] + l[LX];
    if (in_a > 0) {
        double a2 = in_a * in_a;
        const double dr[PARAMS] = {-l[LX] / a2, 0, l[LA] / a2};
        set_fraction(&out->retained, l[LX] / in_a, sqrt(variance_of(cov, dr)));
    } else {
        set_fraction(&out->retained, 0, 0);
    }
}

int sk_hll_compare(const sk_hll *a, const sk_hll *b, sk_hll_comparison *out)
{
    if (a == NULL || b == NULL || out == NULL)
        return SK_EINVAL;
    memset(out, 0, sizeof *out);
    sk_hll *folded = NULL;
    unsigned p = a->precision < b->precision ? a->precision : b->precision;
    if (a->precision != b->precision) {
        const sk_hll *larger = a->precision > b->precision ? a : b;
        if (sk__hll_folded(larger, p, &folded) != SK_OK)
            return SK_ENOMEM;
        if (larger == a)
            a = folded;
        else
            b = folded;
    }
    uint32_t m = sk__hll_registers(p);
    uint8_t *buf = NULL;
    if (a->registers == NULL || b->registers == NULL) {
        buf = sk__alloc(&a->alloc, (size_t)2 * m);
        if (buf == NULL) {
            sk_hll_free(folded);
            return SK_ENOMEM;
        }
    }
    struct histograms hs;
    uint32_t ha[VALUES] = {0}, hb[VALUES] = {0}, hu[VALUES] = {0};
    fill_histograms(sk__hll_registers_of(a, buf),
                    sk__hll_registers_of(b, buf != NULL ? buf + m : NULL), p, &hs, ha, hb, hu);
    if (buf != NULL)
        sk__free(&a->alloc, buf, (size_t)2 * m);
    sk_hll_free(folded);

    /* Inclusion–exclusion for a start, every rate kept off 0 so that no
     * register is impossible there. */
    double na = sk__hll_estimate_from_histogram(ha, p);
    double nb = sk__hll_estimate_from_histogram(hb, p);
    double nu = sk__hll_estimate_from_histogram(hu, p);
    double small = na < nb ? na : nb;
    double floor = fmax(1, 1e-3 * small);
    double nx = fmin(fmax(na + nb - nu, floor), fmax(small, floor));
    out->precision = p;
    if (!(nu < INFINITY)) {
        /* Every register of the union saturated, which no real stream does:
         * nothing is known but that the union is beyond counting. */
        sk_hll_part *parts[] = {&out->either, &out->both, &out->a_only, &out->b_only};
        for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
            set_count(parts[i], i == 0 ? INFINITY : 0, INFINITY);
        set_fraction(&out->jaccard, 0, 1);
        set_fraction(&out->retained, 0, 1);
        return SK_OK;
    }
    double l[PARAMS] = {fmax(na - nx, floor) / m, fmax(nb - nx, floor) / m, nx / m};
    struct fit s;
    maximize(&hs, l, &s);
    report(l, &s, m, out);
    return SK_OK;
}
