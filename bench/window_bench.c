/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_bench.c: the sliding-window structures against what a user builds
 * without them, side by side in one run (docs/benchmarks.md). Times are the
 * thread's CPU time (cpu_ns: waits for a CPU while other jobs run are left
 * out); the contenders take turns within each round; medians of rounds.
 *
 * Part A: sk_window_hll against a ring of plain sk_hll sketches, one per
 * slot (horizon / resolution of them), merged on read: an add goes to its
 * slot's sketch, cleared when the ring comes back to it; a query merges the
 * window's slots into a cleared scratch sketch and counts. p = 14; horizons
 * 1 h and 1 d, resolutions 1 s and 1 min. RATE items a second, 30% new, the
 * rest repeats of the last hour's new items, at the bench's seconds. After
 * a warm-up of a horizon or more, rounds of a few simulated minutes, with a
 * horizon and a 10-minute count at each minute's end. At each round's end
 * both are checked against the window's exact distinct count, known from
 * the stream's construction (a window's new ids are a range; only repeats
 * reaching before it need a bitmap); and every query's two counts must be
 * equal, the sliding sketch being a plain HLL of the window's slots.
 *
 * Part B: sk_aging_bloom (4 generations) against two plain sk_bloom
 * filters, "current" and "previous", rotated when current has taken a
 * window of adds (or a time window ends), both queried. Each holds at most
 * a window's items and both may be full, so each is sized for the window at
 * p = 1 - sqrt(1 - P): an absent item passes both with probability
 * (1 - p)^2 = 1 - P; and every item of the last window is in one of them.
 * Distinct 8-byte items; after three windows of warm-up each round adds a
 * window in STEPS steps, with present (of the last window: a miss is a
 * false negative) and absent queries after each, over every phase.
 *
 *     window_bench [-r ROUNDS] [--part hll|bloom] [--quick]
 *
 * --quick shrinks every size, for checking the bench itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>

#include "bench_util.h"
#include "sketch.h"
#include "sketch/aging_bloom.h"
#include "sketch/window_hll.h"

#define MAX_ROUNDS 32
#define LOOKBACK 3600   /* seconds: repeats are of the new items of the last hour */
#define TEN_MINUTES 600
#define PRECISION 14

static void usage(void)
{
    fprintf(stderr, "usage: window_bench [-r ROUNDS] [--part hll|bloom] [--quick]\n");
    exit(2);
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "window_bench: %s failed: %d\n", what, rc);
        exit(1);
    }
}

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t s = a * UINT64_C(0x9e3779b97f4a7c15) ^ b * UINT64_C(0xc2b2ae3d27d4eb4f);
    return splitmix64(&s);
}

static double med(const double *v, unsigned k)
{
    double c[MAX_ROUNDS];
    memcpy(c, v, k * sizeof *c);
    return median_of(c, (int)k);
}

/* The line of a /proc file that starts with key, into line ("" if none). */
static char *proc_line(const char *path, const char *key, char *line, int cap)
{
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f != NULL && !found && fgets(line, cap, f) != NULL)
        found = strncmp(line, key, strlen(key)) == 0;
    if (f != NULL)
        fclose(f);
    line[found ? strcspn(line, "\n") : 0] = '\0';
    return line;
}

/* ---- Part A: the stream ------------------------------------------------- */

/* Second t holds `rate` items; of each ten, three are new ids (from
 * t * fresh, fresh = 0.3 rate a second) and seven repeat a new id of the
 * LOOKBACK seconds before t. An item is a function of (t, j) alone. */
struct stream {
    uint64_t rate, fresh;
};

static uint64_t stream_item(const struct stream *s, uint64_t t, uint64_t j)
{
    if (j % 10 < 3 || t == 0)
        return t * s->fresh + (j / 10) * 3 + (j % 10 < 3 ? j % 10 : 0);
    uint64_t lo = t > LOOKBACK ? (t - LOOKBACK) * s->fresh : 0, hi = t * s->fresh;
    return lo + mix(t, j) % (hi - lo);
}

/* The exact distinct count of the seconds [a, b], a >= 1: the window's new
 * ids, and the older ids its repeats reach, which only the repeats of its
 * first LOOKBACK seconds can. */
static uint64_t exact_count(const struct stream *s, uint64_t a, uint64_t b)
{
    uint64_t base = a > LOOKBACK ? (a - LOOKBACK) * s->fresh : 0, limit = a * s->fresh;
    uint64_t *bits = calloc((LOOKBACK * s->fresh + 63) / 64, sizeof *bits);
    uint64_t older = 0;
    if (bits == NULL)
        check(SK_ENOMEM, "the exact count");
    for (uint64_t t = a; t <= b && t < a + LOOKBACK; t++)
        for (uint64_t j = 0; j < s->rate; j++) {
            uint64_t id = stream_item(s, t, j);
            if (j % 10 < 3 || id >= limit)
                continue;
            uint64_t bit = id - base, w = bits[bit / 64];
            older += !(w >> (bit % 64) & 1);
            bits[bit / 64] = w | UINT64_C(1) << (bit % 64);
        }
    free(bits);
    return (b - a + 1) * s->fresh + older;
}

/* ---- Part A: the contenders behind one call ------------------------------ */

/* The sliding sketch if w, else the ring: per slot a plain sketch (made at
 * its first add) and the slot number it holds, and a scratch for queries. */
struct counter {
    sk_window_hll *w;
    sk_hll **slot, *scratch;
    uint64_t *slot_of, n, resolution;
};

static void ring_init(struct counter *r, uint64_t horizon, uint64_t resolution)
{
    r->n = horizon / resolution;
    r->resolution = resolution;
    r->slot = calloc(r->n, sizeof *r->slot);
    r->slot_of = calloc(r->n, sizeof *r->slot_of);
    if (r->slot == NULL || r->slot_of == NULL)
        check(SK_ENOMEM, "the ring");
    check(sk_hll_new(&r->scratch, PRECISION), "sk_hll_new");
}

static void counter_free(struct counter *r)
{
    sk_window_hll_free(r->w);
    for (uint64_t i = 0; i < r->n; i++)
        sk_hll_free(r->slot[i]);
    free(r->slot);
    free(r->slot_of);
    sk_hll_free(r->scratch);
}

static inline void counter_add(struct counter *r, const uint64_t *item, uint64_t time)
{
    if (r->w != NULL) {
        check(sk_window_hll_add(r->w, item, sizeof *item, time), "sk_window_hll_add");
        return;
    }
    uint64_t s = time / r->resolution, i = s % r->n;
    if (r->slot[i] == NULL)
        check(sk_hll_new(&r->slot[i], PRECISION), "sk_hll_new");
    else if (r->slot_of[i] != s)
        sk_hll_clear(r->slot[i]);
    r->slot_of[i] = s;
    check(sk_hll_add(r->slot[i], item, sizeof *item), "sk_hll_add");
}

static uint64_t counter_count(struct counter *r, uint64_t window, uint64_t now)
{
    uint64_t n;
    if (r->w != NULL) {
        check(sk_window_hll_count(r->w, window, now, &n), "sk_window_hll_count");
        return n;
    }
    uint64_t end = now / r->resolution, k = (window + r->resolution - 1) / r->resolution;
    sk_hll_clear(r->scratch);
    for (uint64_t s = end + 1 - k; s <= end; s++)
        if (r->slot[s % r->n] != NULL && r->slot_of[s % r->n] == s)
            check(sk_hll_merge(r->scratch, r->slot[s % r->n]), "sk_hll_merge");
    return sk_hll_count(r->scratch);
}

/* All it holds (sk_*_get_info's memory, and the ring's two arrays). */
static double counter_memory(const struct counter *r)
{
    sk_window_hll_info wi;
    sk_hll_info info;
    if (r->w != NULL) {
        sk_window_hll_get_info(r->w, &wi);
        return (double)wi.memory;
    }
    size_t bytes = r->n * (sizeof *r->slot + sizeof *r->slot_of);
    for (uint64_t i = 0; i <= r->n; i++)
        if (i == r->n || r->slot[i] != NULL) {
            sk_hll_get_info(i < r->n ? r->slot[i] : r->scratch, &info);
            bytes += info.memory;
        }
    return (double)bytes;
}

/* What the ring will take: a slot sparse (4 bytes a set register, in a
 * power-of-two array) while under m/8 registers are set, else dense (a
 * byte a register), from the items a slot sees (a bound on its distinct). */
static double ring_estimate(uint64_t horizon, uint64_t resolution, uint64_t rate)
{
    double m = (double)(1u << PRECISION), set = m * -expm1(-(double)(rate * resolution) / m);
    double slot = set < m / 8 ? 4 * pow(2, ceil(log2(set > 1 ? set : 1))) : m;
    return (double)(horizon / resolution) * (slot + 80);
}

/* ---- Part A: the runs --------------------------------------------------- */

struct hll_case {
    const char *name;
    uint64_t horizon, resolution, rate, warmup, round_len; /* seconds */
};

/* Per round, of the sliding sketch [0] and the ring [1]: ns an add, us a
 * horizon count and a 10-minute count, and MB; and the window's errors. */
struct hll_result {
    double v[2][4][MAX_ROUNDS];
    double err_full, err_ten; /* mean |relative error| over the rounds */
    uint64_t queries, equal;
    int ring_skipped;
    double ring_estimate;
};

/* One contender through the seconds [from, to): the counts asked at each
 * simulated minute's end into counts (horizon, 10 minutes), their number. */
static unsigned run_span(struct counter *c, const struct stream *s, const struct hll_case *hc,
                         uint64_t from, uint64_t to, uint64_t *buf, unsigned r,
                         double (*v)[MAX_ROUNDS], uint64_t *counts)
{
    double took[3] = {0, 0, 0};
    unsigned q = 0;
    for (uint64_t t = from; t < to; t++) {
        for (uint64_t j = 0; j < s->rate; j++)
            buf[j] = stream_item(s, t, j);
        double t0 = cpu_ns();
        for (uint64_t j = 0; j < s->rate; j++)
            counter_add(c, &buf[j], t);
        took[0] += cpu_ns() - t0;
        for (int k = 1; k < 3 && t % 60 == 59; k++) {
            t0 = cpu_ns();
            counts[2 * q + (unsigned)k - 1] =
                counter_count(c, k == 1 ? hc->horizon : TEN_MINUTES, t);
            took[k] += cpu_ns() - t0;
        }
        q += t % 60 == 59;
    }
    v[0][r] = took[0] / (double)((to - from) * s->rate);
    v[1][r] = took[1] / q / 1e3;
    v[2][r] = took[2] / q / 1e3;
    v[3][r] = counter_memory(c) / 1e6;
    return q;
}

static void run_hll_case(const struct hll_case *c, unsigned rounds, struct hll_result *res)
{
    struct stream s = {c->rate, c->rate * 3 / 10};
    memset(res, 0, sizeof *res);
    res->ring_estimate = ring_estimate(c->horizon, c->resolution, c->rate) / 1e6;
    char line[256];
    proc_line("/proc/meminfo", "MemAvailable:", line, sizeof line);
    double avail = *line ? strtod(line + 13, NULL) * 1024 / 1e6 : 0;
    res->ring_skipped = avail != 0 && res->ring_estimate > avail / 2;
    sk_window_hll_options o = {.precision = PRECISION, .horizon = c->horizon,
                               .resolution = c->resolution};
    struct counter k[2] = {{0}, {0}};
    check(sk_window_hll_create(&k[0].w, &o), "sk_window_hll_create");
    if (!res->ring_skipped)
        ring_init(&k[1], c->horizon, c->resolution);
    int kinds = res->ring_skipped ? 1 : 2;
    for (uint64_t t = 0; t < c->warmup; t++)
        for (uint64_t j = 0; j < c->rate; j++) {
            uint64_t item = stream_item(&s, t, j);
            for (int i = 0; i < kinds; i++)
                counter_add(&k[i], &item, t);
        }
    uint64_t *buf = xmalloc(c->rate * sizeof *buf), *counts[2];
    for (int i = 0; i < 2; i++)
        counts[i] = xmalloc(2 * (c->round_len / 60) * sizeof(uint64_t));
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t from = c->warmup + r * c->round_len, to = from + c->round_len;
        unsigned nq = 0;
        for (int i = 0; i < kinds; i++) {
            int which = (int)((r + (unsigned)i) % (unsigned)kinds); /* who goes first turns */
            nq = run_span(&k[which], &s, c, from, to, buf, r, res->v[which], counts[which]);
        }
        for (unsigned q = 0; q < 2 * nq && kinds == 2; q++)
            res->equal += counts[0][q] == counts[1][q];
        res->queries += kinds == 2 ? 2 * nq : 0;
        uint64_t ef = exact_count(&s, to - c->horizon, to - 1);
        uint64_t et = exact_count(&s, to - TEN_MINUTES, to - 1);
        res->err_full += fabs((double)counts[0][2 * nq - 2] / (double)ef - 1) / rounds;
        res->err_ten += fabs((double)counts[0][2 * nq - 1] / (double)et - 1) / rounds;
    }
    for (int i = 0; i < 2; i++) {
        free(counts[i]);
        counter_free(&k[i]);
    }
    free(buf);
}

static void print_hll_case(const struct hll_case *c, unsigned rounds, const struct hll_result *res)
{
    char ring[32];
    snprintf(ring, sizeof ring, "ring of %" PRIu64, c->horizon / c->resolution);
    for (int k = 0; k < 2; k++) {
        if (k == 1 && res->ring_skipped) {
            printf("%-22s %-17s %9.2f  skipped: over half of this machine's MemAvailable\n", "",
                   "ring (computed)", res->ring_estimate);
            return;
        }
        printf("%-22s %-17s %9.2f %8.1f %12.1f %12.1f %8.2f%% %8.2f%%\n", k == 0 ? c->name : "",
               k == 0 ? "window_hll" : ring, med(res->v[k][3], rounds), med(res->v[k][0], rounds),
               med(res->v[k][1], rounds), med(res->v[k][2], rounds), 100 * res->err_ten,
               100 * res->err_full);
    }
    double ratio[4];
    for (int i = 0; i < 4; i++)
        ratio[i] = med(res->v[1][i], rounds) / med(res->v[0][i], rounds);
    printf("%-22s %-17s %8.1fx %7.2fx %11.1fx %11.1fx   counts equal: %" PRIu64 " of %" PRIu64
           " (ring computed: %.2f MB)\n", "", "ring / window_hll", ratio[3], ratio[0], ratio[1],
           ratio[2], res->equal, res->queries, res->ring_estimate);
}

static void part_hll(unsigned rounds, int quick)
{
    static const struct hll_case full[] = {
        {"1 h / 1 s, 1000/s", 3600, 1, 1000, 7200, 600},
        {"1 h / 1 min, 1000/s", 3600, 60, 1000, 7200, 600},
        {"1 d / 1 s, 1000/s", 86400, 1, 1000, 86400, 600},
        {"1 d / 1 min, 1000/s", 86400, 60, 1000, 86400, 600},
        {"1 h / 1 s, 50000/s", 3600, 1, 50000, 3600, 180},
        {"1 h / 1 min, 50000/s", 3600, 60, 50000, 3600, 180},
    };
    static const struct hll_case small[] = {
        {"1 h / 1 s, 1000/s", 3600, 1, 1000, 3600, 120},
        {"1 h / 1 min, 1000/s", 3600, 60, 1000, 3600, 120},
        {"1 h / 1 s, 10000/s", 3600, 1, 10000, 3600, 120},
    };
    size_t n = quick ? sizeof small / sizeof *small : sizeof full / sizeof *full;
    printf("A. sk_window_hll against a ring of sk_hll sketches merged on read, p = %d\n"
           "stream: RATE 8-byte items a second, 30%% new, the rest repeats of the last hour's "
           "new items;\nwarm-up of 2 h (1 h horizons, 1000/s), 1 d, or 1 h (50000/s); then %u "
           "rounds of 10 simulated minutes (3 at 50000/s),\nthe two in turn on the same "
           "stream; a horizon and a 10-minute count each simulated minute. Medians.\n"
           "err: mean |relative error| against the exact count at the end of each round "
           "(p = 14: 0.81%% standard error).\n\n",
           PRECISION, rounds);
    printf("%-22s %-17s %9s %8s %12s %12s %9s %9s\n", "horizon / resolution", "structure",
           "memory MB", "ns/add", "us/q horizon", "us/q 10 min", "err 10m", "err hor.");
    for (size_t i = 0; i < n; i++) {
        struct hll_result *res = xmalloc(sizeof *res);
        run_hll_case(quick ? &small[i] : &full[i], rounds, res);
        print_hll_case(quick ? &small[i] : &full[i], rounds, res);
        fflush(stdout);
        free(res);
    }
}

/* ---- Part B: the contenders behind one call ----------------------------- */

/* The aging filter if f, else the rotated pair: window adds or a span of
 * time units (0: a count window) a filter. */
struct filter {
    sk_aging_bloom *f;
    sk_bloom *cur, *prev;
    uint64_t in_cur, window, span, epoch;
};

static void pair_rotate(struct filter *p)
{
    sk_bloom *old = p->prev;
    sk_bloom_clear(old);
    p->prev = p->cur;
    p->cur = old;
    p->in_cur = 0;
}

static inline void filter_add(struct filter *p, const uint64_t *item, uint64_t now)
{
    if (p->f != NULL) {
        check(sk_aging_bloom_add(p->f, item, sizeof *item, now), "sk_aging_bloom_add");
        return;
    }
    if (p->span == 0 && p->in_cur++ == p->window) {
        pair_rotate(p);
        p->in_cur = 1;
    } else if (p->span != 0 && now / p->span != p->epoch) {
        pair_rotate(p);
        if (now / p->span != p->epoch + 1) /* a whole window without adds */
            sk_bloom_clear(p->prev);
        p->epoch = now / p->span;
    }
    check(sk_bloom_add(p->cur, item, sizeof *item), "sk_bloom_add");
}

static inline int filter_contains(const struct filter *p, const uint64_t *item, uint64_t now)
{
    if (p->f != NULL)
        return sk_aging_bloom_contains(p->f, item, sizeof *item, now) == 1;
    if (p->span != 0 && now / p->span != p->epoch)
        return now / p->span == p->epoch + 1 && sk_bloom_contains(p->cur, item, sizeof *item);
    return sk_bloom_contains(p->cur, item, sizeof *item) ||
           sk_bloom_contains(p->prev, item, sizeof *item);
}

/* ---- Part B: the runs --------------------------------------------------- */

/* A window of `window` adds, or (window 0) of span seconds at rate items a
 * second; split_too: also an aging filter of split generations. */
struct bloom_case {
    const char *name;
    uint64_t window, span, rate;
    double fp_rate;
    int split_too;
};

#define STEPS 8
#define ABSENT_BIT (UINT64_C(1) << 63)
#define KINDS 3 /* aging (default layout), rotated pair, aging with split generations */

struct bloom_result {
    double v[KINDS][3][MAX_ROUNDS]; /* ns an add, a present query, an absent query */
    uint64_t fp_step[KINDS][STEPS], fn[KINDS], per_step;
    double bits[KINDS];
    sk_bloom_layout layout[KINDS];
};

/* One contender through the adds [first, first + n) in STEPS steps, with
 * the queries after each. */
static void bloom_round(int kind, struct filter *x, const struct bloom_case *c, uint64_t n,
                        uint64_t first, unsigned r, uint64_t *qbuf, struct bloom_result *res)
{
    uint64_t step = n / STEPS, per_step = res->per_step, rate = c->window ? 1 : c->rate;
    double t[3] = {0, 0, 0};
    for (unsigned k = 0; k < STEPS; k++) {
        uint64_t lo = first + k * step, hi = lo + step; /* adds lo..hi-1 */
        double t0 = cpu_ns();
        for (uint64_t i = lo; i < hi; i++)
            filter_add(x, &i, i / rate);
        t[0] += cpu_ns() - t0;
        uint64_t now = (hi - 1) / rate, seed = mix(r * STEPS + k, 7), found[2] = {0, 0};
        for (int absent = 0; absent < 2; absent++) {
            for (uint64_t q = 0; q < per_step; q++)
                qbuf[q] = absent ? ABSENT_BIT | mix(seed, q + per_step)
                                 : hi - n + mix(seed, q) % n; /* of the last n adds */
            t0 = cpu_ns();
            for (uint64_t q = 0; q < per_step; q++)
                found[absent] += (uint64_t)filter_contains(x, &qbuf[q], now);
            t[1 + absent] += cpu_ns() - t0;
        }
        res->fn[kind] += per_step - found[0];
        res->fp_step[kind][k] += found[1];
    }
    res->v[kind][0][r] = t[0] / (double)(STEPS * step);
    for (int i = 1; i < 3; i++)
        res->v[kind][i][r] = t[i] / (double)(STEPS * per_step);
}

/* The layout a generation of f resolves to: that of a filter of its sizing. */
static sk_bloom_layout generation_layout(const sk_aging_bloom *f, sk_bloom_layout asked)
{
    sk_aging_bloom_info info;
    sk_aging_bloom_get_info(f, &info);
    sk_bloom_options o = {.capacity = (info.capacity + info.generations - 2) /
                                      (info.generations - 1),
                          .fp_rate = info.generation_fp_rate, .layout = asked,
                          .expansion = info.window ? 2 : 0};
    sk_bloom *probe;
    sk_bloom_info b;
    check(sk_bloom_create(&probe, &o), "sk_bloom_create");
    sk_bloom_get_info(probe, &b);
    sk_bloom_free(probe);
    return b.layout;
}

static void run_bloom_case(const struct bloom_case *c, unsigned rounds, uint64_t queries,
                           struct bloom_result *res)
{
    memset(res, 0, sizeof *res);
    res->per_step = queries / STEPS;
    uint64_t n = c->window ? c->window : c->span * c->rate; /* items of a window */
    struct filter x[KINDS] = {{0}, {.window = n, .span = c->span}, {0}}, *p = &x[1];
    double each = -expm1(log1p(-c->fp_rate) / 2); /* 1 - sqrt(1 - P) */
    check(sk_bloom_new(&p->cur, n, each, SK_BLOOM_AUTO), "sk_bloom_new");
    check(sk_bloom_new(&p->prev, n, each, SK_BLOOM_AUTO), "sk_bloom_new");
    int kinds = c->split_too ? 3 : 2;
    for (int k = 0; k < kinds; k += 2) {
        sk_aging_bloom_options o = {.capacity = n, .fp_rate = c->fp_rate, .window = c->span,
                                    .layout = k == 2 ? SK_BLOOM_SPLIT : SK_BLOOM_AUTO};
        check(sk_aging_bloom_create(&x[k].f, &o), "sk_aging_bloom_create");
    }
    uint64_t rate = c->window ? 1 : c->rate, warm = 3 * n;
    for (uint64_t i = 0; i < warm; i++)
        for (int k = 0; k < kinds; k++)
            filter_add(&x[k], &i, i / rate);
    uint64_t *qbuf = xmalloc(res->per_step * sizeof *qbuf);
    for (unsigned r = 0; r < rounds; r++)
        for (int k = 0; k < kinds; k++) {
            int kind = (int)((r + (unsigned)k) % (unsigned)kinds); /* who goes first turns */
            bloom_round(kind, &x[kind], c, n, warm + r * n, r, qbuf, res);
        }
    free(qbuf);
    for (int k = 0; k < kinds; k += 2) {
        sk_aging_bloom_info info;
        sk_aging_bloom_get_info(x[k].f, &info);
        res->bits[k] = (double)info.memory * 8 / (double)n;
        res->layout[k] = generation_layout(x[k].f, k == 2 ? SK_BLOOM_SPLIT : SK_BLOOM_AUTO);
        sk_aging_bloom_free(x[k].f);
    }
    sk_bloom_info a, b;
    sk_bloom_get_info(p->cur, &a);
    sk_bloom_get_info(p->prev, &b);
    res->bits[1] = (double)(a.memory + b.memory) * 8 / (double)n;
    res->layout[1] = a.layout;
    sk_bloom_free(p->cur);
    sk_bloom_free(p->prev);
}

static void print_bloom_case(const struct bloom_case *c, unsigned rounds,
                             const struct bloom_result *res)
{
    static const char *const kind_name[KINDS] = {"aging, g = 4", "rotated pair",
                                                 "aging, g = 4, split"};
    static const char *const layout_name[] = {"auto", "classic", "blocked", "split"};
    static const int order[KINDS] = {0, 2, 1};
    for (int o = 0; o < KINDS; o++) {
        int k = order[o];
        if (k == 2 && !c->split_too)
            continue;
        uint64_t fp = 0, worst = 0;
        for (int s = 0; s < STEPS; s++) {
            fp += res->fp_step[k][s];
            worst = res->fp_step[k][s] > worst ? res->fp_step[k][s] : worst;
        }
        double per_phase = (double)res->per_step * rounds;
        printf("%-24s %-20s %-8s %9.2f %8.1f %10.1f %10.1f %7.3f%% %7.3f%% %4" PRIu64 "\n",
               o == 0 ? c->name : "", kind_name[k], layout_name[res->layout[k]], res->bits[k],
               med(res->v[k][0], rounds), med(res->v[k][1], rounds), med(res->v[k][2], rounds),
               100.0 * (double)fp / (per_phase * STEPS), 100.0 * (double)worst / per_phase,
               res->fn[k]);
    }
    printf("%-24s %-20s %-8s %8.2fx %7.2fx %9.2fx %9.2fx\n", "", "pair / aging", "",
           res->bits[1] / res->bits[0], med(res->v[1][0], rounds) / med(res->v[0][0], rounds),
           med(res->v[1][1], rounds) / med(res->v[0][1], rounds),
           med(res->v[1][2], rounds) / med(res->v[0][2], rounds));
}

static void part_bloom(unsigned rounds, int quick)
{
    const uint64_t m = quick ? 100000 : 1000000, queries = quick ? 80000 : 400000;
    const struct bloom_case cases[] = {
        {quick ? "100000 adds, 1%" : "1000000 adds, 1%", m, 0, 0, 0.01, 0},
        {quick ? "100000 adds, 0.1%" : "1000000 adds, 0.1%", m, 0, 0, 0.001, 1},
        {quick ? "1 h at 100/s, 1%" : "1 h at 1000/s, 1%", 0, 3600, quick ? 100 : 1000, 0.01, 0},
        {quick ? "1 d at 10/s, 1%" : "1 d at 100/s, 1%", 0, 86400, quick ? 10 : 100, 0.01, 0},
    };
    printf("\nB. sk_aging_bloom (4 generations) against two rotated sk_bloom filters "
           "(each a window at 1 - sqrt(1 - P))\n"
           "distinct 8-byte items; 3 windows of warm-up, then %u rounds of one window of adds "
           "in %d steps, after each\n%" PRIu64 " present (of the last window) and %" PRIu64
           " absent queries; the structures in turn. Medians.\n"
           "bits/item: memory x 8 / items of a window. FP: of all absent queries, and of the "
           "worst of the %d\nsteps (phases of the window) summed over the rounds. FN: present "
           "items answered absent.\n\n",
           rounds, STEPS, queries / STEPS, queries / STEPS, STEPS);
    printf("%-24s %-20s %-8s %9s %8s %10s %10s %8s %8s %4s\n", "window, P", "structure",
           "layout", "bits/item", "ns/add", "ns/present", "ns/absent", "FP", "FP worst", "FN");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct bloom_result *res = xmalloc(sizeof *res);
        run_bloom_case(&cases[i], rounds, queries, res);
        print_bloom_case(&cases[i], rounds, res);
        fflush(stdout);
        free(res);
    }
}

int main(int argc, char **argv)
{
    uint64_t rounds = 5;
    int quick = 0, parts = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            rounds = bench_parse_u64(argv[++i], usage);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc) {
            i++;
            parts = strcmp(argv[i], "hll") == 0 ? 1 : strcmp(argv[i], "bloom") == 0 ? 2 : 0;
            if (parts == 0)
                usage();
        } else
            usage();
    }
    if (rounds == 0 || rounds > MAX_ROUNDS)
        usage();
    char cpu[128], load[128];
    cpu_model(cpu, sizeof cpu);
    proc_line("/proc/loadavg", "", load, sizeof load);
    printf("window_bench: %s, %s (%s) %s\nload at start (/proc/loadavg): %s\n\n", cpu,
           BENCH_COMPILER, BENCH_CONFIG_NAME, BENCH_FLAGS, load);
    double t0 = now_ns();
    if (parts & 1)
        part_hll((unsigned)rounds, quick);
    if (parts & 2)
        part_bloom((unsigned)rounds, quick);
    printf("\n%.0f s in all\n", (now_ns() - t0) / 1e9);
    return 0;
}
