/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * window_hll.c: the sliding-window HyperLogLog (Chabchoub and Hébrail, "Sliding
 * HyperLogLog: estimating cardinality in a data stream over a sliding
 * window", 2010).
 *
 * The mathematics. A HyperLogLog of precision p sends an item's 64-bit hash
 * to register j (the low p bits) with rank r (one more than the trailing
 * zeros of the rest), and keeps per register the largest rank it saw. Over
 * a window, register j must be the largest rank among the items whose time
 * falls in the window. A pair (t, r) seen in register j can be that maximum
 * for some window ending now or later only while no pair (t', r') with
 * t' >= t and r' >= r exists: any window holding t holds t' too. So each
 * register keeps the pairs that no later pair outranks, its Pareto frontier:
 * times strictly increasing and ranks strictly decreasing. For the window
 * of slots [lo, now], the register is the rank of the first pair with slot
 * >= lo, which is exactly what a plain HyperLogLog of the window's items
 * holds; the estimate is then the plain estimator's (hll.c), so the error is
 * the plain one. The frontier of a stream of n distinct items holds about
 * (1/2) log2(n / m) + 2/3 pairs a register on average, at most 64 - p + 1.
 *
 * Times are cut into slots of `resolution` units; a register keeps one pair
 * a slot at most (the largest rank). A pair whose slot has left the horizon
 * can never be asked for again; it is dropped when its register is next
 * written, so a pair count may include a few expired ones.
 *
 * An add with a time older than the newest is placed in the frontier where
 * its time falls, exactly as if it had come in order: the frontier of a set
 * of pairs does not depend on their order. One older than the horizon is
 * in no window that can be asked and is dropped. A count asks for a window
 * ending no earlier than the newest slot: an earlier end may have lost
 * pairs that a later one outranked.
 *
 * Merge: the frontier of the union of two frontiers is the frontier of the
 * union of the two streams, so merging lists register by register is
 * exact.
 */
#include <string.h>

#include "common/alloc.h"
#include "hll/hll_internal.h"
#include "window_hll/window_hll_internal.h"

int sk__wh_new(sk_window_hll **out, unsigned precision, uint64_t horizon, uint64_t resolution,
               uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION || horizon == 0 ||
        resolution == 0 || horizon > SK_WINDOW_HLL_MAX_TIME || resolution > SK_WINDOW_HLL_MAX_TIME)
        return SK_EINVAL;
    uint64_t slots = horizon / resolution + (horizon % resolution != 0);
    if (slots > SK_WINDOW_HLL_MAX_SLOTS)
        return SK_ETOOLARGE;
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    sk_window_hll *w = sk__zalloc(&a, sizeof *w);
    if (w == NULL)
        return SK_ENOMEM;
    w->alloc = a;
    w->precision = precision;
    w->horizon = horizon;
    w->resolution = resolution;
    w->slots = slots;
    w->max_memory = max_memory;
    w->empty = 1;
    if (max_memory != 0 && sizeof *w > max_memory) {
        sk__free(&a, w, sizeof *w);
        return SK_EBUDGET;
    }
    *out = w;
    return SK_OK;
}

int sk_window_hll_create(sk_window_hll **out, const sk_window_hll_options *opts)
{
    if (opts == NULL) {
        if (out != NULL)
            *out = NULL;
        return SK_EINVAL;
    }
    unsigned p = opts->precision != 0 ? opts->precision : SK_HLL_DEFAULT_PRECISION;
    uint64_t resolution = opts->resolution != 0 ? opts->resolution : 1;
    return sk__wh_new(out, p, opts->horizon, resolution, opts->max_memory, opts->allocator);
}

int sk_window_hll_new(sk_window_hll **out, uint64_t horizon, uint64_t resolution)
{
    sk_window_hll_options o = {.horizon = horizon, .resolution = resolution};
    return sk_window_hll_create(out, &o);
}

void sk_window_hll_free(sk_window_hll *w)
{
    if (w == NULL)
        return;
    sk_allocator a = w->alloc;
    sk__wh_storage_free(w);
    sk__free(&a, w, sizeof *w);
}

int sk_window_hll_clear(sk_window_hll *w)
{
    if (w == NULL)
        return SK_EINVAL;
    sk__wh_storage_free(w);
    w->empty = 1;
    w->newest = w->base = 0;
    return SK_OK;
}

/* The live part of register idx's list when `newest` is the newest slot,
 * into out (re-encoded against w->base): its length. */
static unsigned live_pairs(const sk_window_hll *w, uint32_t idx, uint64_t newest, uint32_t *out)
{
    unsigned len, n = 0;
    const uint32_t *list = sk__wh_pairs(w, idx, &len);
    uint64_t cutoff = sk__wh_cutoff(w, newest);
    for (unsigned i = 0; i < len; i++)
        if (sk__wh_pair_slot(w, list[i]) >= cutoff)
            out[n++] = list[i];
    return n;
}

int sk_window_hll_copy(sk_window_hll **out, const sk_window_hll *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__wh_new(out, src->precision, src->horizon, src->resolution, src->max_memory,
                        &src->alloc);
    if (rc != SK_OK)
        return rc;
    sk_window_hll *w = *out;
    w->empty = src->empty;
    w->newest = src->newest;
    w->base = src->base;
    uint32_t cursor = 0, j, pairs[SK__WH_MAX_PAIRS];
    const uint32_t *list;
    unsigned len;
    while (sk__wh_next(src, &cursor, &j, &list, &len)) {
        unsigned n = live_pairs(src, j, src->newest, pairs);
        if ((rc = sk__wh_store(w, j, pairs, n)) != SK_OK) {
            sk_window_hll_free(w);
            *out = NULL;
            return rc;
        }
    }
    return SK_OK;
}

/* The frontier of register idx with (slot, rank) added, into out: its
 * length, or -1 if the pair is outranked and the list stays as it is. */
static int insert_pair(const sk_window_hll *w, uint32_t idx, uint64_t newest, uint64_t slot,
                       unsigned rank, uint32_t *out)
{
    unsigned n, first = 0;
    const uint32_t *list = sk__wh_pairs(w, idx, &n);
    uint64_t cutoff = sk__wh_cutoff(w, newest);
    while (first < n && sk__wh_pair_slot(w, list[first]) < cutoff)
        first++;
    unsigned at = first;
    while (at < n && sk__wh_pair_slot(w, list[at]) < slot)
        at++;
    if (at < n && sk__wh_pair_rank(list[at]) >= rank)
        return -1;
    /* Earlier pairs of rank <= the new one are outranked by it; so is a
     * pair of the same slot, whose rank is lower (or it would outrank). */
    unsigned keep = at;
    while (keep > first && sk__wh_pair_rank(list[keep - 1]) <= rank)
        keep--;
    unsigned resume = at < n && sk__wh_pair_slot(w, list[at]) == slot ? at + 1 : at;
    unsigned len = keep - first;
    memcpy(out, list + first, (size_t)len * sizeof *out);
    out[len++] = sk__wh_pair(slot - w->base, rank);
    memcpy(out + len, list + resume, (size_t)(n - resume) * sizeof *out);
    return (int)(len + n - resume);
}

/* An add a horizon or more past the newest, when every pair has expired:
 * the sketch starts again from the one pair, in new storage, and the old
 * is freed only once that has worked, so a failure changes nothing. */
static int restart(sk_window_hll *w, uint64_t slot, uint32_t idx, unsigned rank)
{
    sk_window_hll old = *w;
    w->sp = NULL;
    w->sp_len = w->sp_cap = 0;
    w->block = NULL;
    w->len = w->cls = NULL;
    memset(&w->pool, 0, sizeof w->pool);
    w->pairs = 0;
    w->base = sk__wh_cutoff(w, slot);
    w->newest = slot;
    uint32_t pair = sk__wh_pair(slot - w->base, rank);
    int rc = sk__wh_store(w, idx, &pair, 1);
    if (rc != SK_OK) {
        sk__wh_storage_free(w);
        *w = old;
        return rc;
    }
    sk__wh_storage_free(&old);
    return 1;
}

int sk_window_hll_add_hash(sk_window_hll *w, uint64_t hash, uint64_t time)
{
    if (w == NULL || time > SK_WINDOW_HLL_MAX_TIME)
        return SK_EINVAL;
    uint64_t slot = time / w->resolution;
    uint64_t newest = w->empty || slot > w->newest ? slot : w->newest;
    if (slot < sk__wh_cutoff(w, newest))
        return 0;
    uint32_t idx;
    unsigned rank;
    sk__hll_register_of(hash, w->precision, &idx, &rank);
    if (!w->empty && slot >= w->newest + w->slots)
        return restart(w, slot, idx, rank);
    if (w->empty) {
        w->base = sk__wh_cutoff(w, slot);
    } else if (slot - w->base >= SK__WH_OFFSET_LIMIT) {
        /* The base moves to the oldest slot the current newest keeps, which
         * drops only pairs no window can see, and leaves the new slot less
         * than two horizons (2^25 slots) past it. */
        sk__wh_rebase(w, sk__wh_cutoff(w, w->newest));
    }
    uint32_t pairs[SK__WH_MAX_PAIRS];
    int n = insert_pair(w, idx, newest, slot, rank, pairs);
    if (n < 0) {
        w->newest = newest;
        return 0;
    }
    int rc = sk__wh_store(w, idx, pairs, (unsigned)n);
    if (rc != SK_OK)
        return rc;
    w->empty = 0;
    w->newest = newest;
    return 1;
}

int sk_window_hll_add(sk_window_hll *w, const void *data, size_t len, uint64_t time)
{
    if (data == NULL && len > 0)
        return SK_EINVAL;
    return sk_window_hll_add_hash(w, sk_hll_hash(data, len), time);
}

/* The first slot of the window of `window` units ending at `now`, checked. */
static int window_start(const sk_window_hll *w, uint64_t window, uint64_t now, uint64_t *lo)
{
    if (window == 0 || window > w->horizon || now > SK_WINDOW_HLL_MAX_TIME)
        return SK_EINVAL;
    uint64_t end = now / w->resolution;
    if (!w->empty && end < w->newest)
        return SK_EINVAL;
    uint64_t slots = window / w->resolution + (window % w->resolution != 0);
    *lo = end >= slots - 1 ? end - (slots - 1) : 0;
    return SK_OK;
}

/* The window's value of a register: the rank of the first pair of its
 * list at or after lo, the largest there since ranks fall as slots rise.
 * A forward walk measured fastest: a list is a few pairs, mostly one cache
 * line, and a walk from either end by the window's length mispredicts. */
static unsigned window_register(const sk_window_hll *w, const uint32_t *list, unsigned n,
                                uint64_t lo)
{
    for (unsigned i = 0; i < n; i++)
        if (sk__wh_pair_slot(w, list[i]) >= lo)
            return sk__wh_pair_rank(list[i]);
    return 0;
}

int sk_window_hll_count(const sk_window_hll *w, uint64_t window, uint64_t now, uint64_t *count)
{
    uint64_t lo;
    if (w == NULL || count == NULL)
        return SK_EINVAL;
    int rc = window_start(w, window, now, &lo);
    if (rc != SK_OK)
        return rc;
    uint32_t histogram[64] = {0}, m = sk__hll_registers(w->precision), cursor = 0, j, held = 0;
    const uint32_t *list;
    unsigned n;
    while (sk__wh_next(w, &cursor, &j, &list, &n)) {
        histogram[window_register(w, list, n, lo)]++;
        held++;
    }
    histogram[0] += m - held;
    *count = sk__hll_round_estimate(sk__hll_estimate_from_histogram(histogram, w->precision));
    return SK_OK;
}

int sk_window_hll_snapshot(const sk_window_hll *w, uint64_t window, uint64_t now, sk_hll *dst)
{
    uint64_t lo;
    if (w == NULL || dst == NULL)
        return SK_EINVAL;
    int rc = window_start(w, window, now, &lo);
    if (rc != SK_OK)
        return rc;
    if (sk_hll_precision(dst) != w->precision)
        return SK_EINCOMPAT;
    if ((rc = sk_hll_clear(dst)) != SK_OK)
        return rc;
    uint32_t cursor = 0, j;
    const uint32_t *list;
    unsigned n;
    while (rc >= 0 && sk__wh_next(w, &cursor, &j, &list, &n)) {
        unsigned r = window_register(w, list, n, lo);
        if (r != 0)
            rc = sk__hll_set(dst, j, r);
    }
    if (rc < 0) {
        sk_hll_clear(dst);
        return rc;
    }
    return SK_OK;
}

/* The frontier of two lists (each in order), into out: its length. */
static unsigned merge_lists(const uint32_t *a, unsigned na, const uint32_t *b, unsigned nb,
                            uint32_t *out)
{
    /* Pairs share one base here, so comparing the words orders by slot,
     * then rank. Walk both from the newest end, keeping each pair that
     * outranks every later one. */
    uint32_t rev[2 * SK__WH_MAX_PAIRS];
    unsigned n = 0, best = 0;
    while (na > 0 || nb > 0) {
        uint32_t p = nb == 0 || (na > 0 && a[na - 1] > b[nb - 1]) ? a[--na] : b[--nb];
        if (sk__wh_pair_rank(p) > best) {
            best = sk__wh_pair_rank(p);
            rev[n++] = p;
        }
    }
    for (unsigned i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    return n;
}

int sk_window_hll_merge(sk_window_hll *dst, const sk_window_hll *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    if (dst->precision != src->precision || dst->horizon != src->horizon ||
        dst->resolution != src->resolution)
        return SK_EINCOMPAT;
    if (src->empty || dst == src)
        return SK_OK;
    uint64_t newest = dst->empty || src->newest > dst->newest ? src->newest : dst->newest;
    /* Built aside, so that dst is unchanged if memory runs out. */
    sk_window_hll *u;
    int rc = sk__wh_new(&u, dst->precision, dst->horizon, dst->resolution, dst->max_memory,
                        &dst->alloc);
    if (rc != SK_OK)
        return rc;
    u->empty = 0;
    u->newest = newest;
    u->base = sk__wh_cutoff(u, newest);
    uint32_t m = sk__hll_registers(dst->precision);
    uint32_t a[SK__WH_MAX_PAIRS], b[SK__WH_MAX_PAIRS], merged[SK__WH_MAX_PAIRS];
    for (uint32_t j = 0; j < m && rc == SK_OK; j++) {
        unsigned na = dst->empty ? 0 : live_pairs(dst, j, newest, a);
        unsigned nb = live_pairs(src, j, newest, b);
        /* Re-encode both against the union's base, which is no earlier
         * than either's live pairs. */
        for (unsigned i = 0; i < na; i++)
            a[i] = sk__wh_pair(sk__wh_pair_slot(dst, a[i]) - u->base, sk__wh_pair_rank(a[i]));
        for (unsigned i = 0; i < nb; i++)
            b[i] = sk__wh_pair(sk__wh_pair_slot(src, b[i]) - u->base, sk__wh_pair_rank(b[i]));
        rc = sk__wh_store(u, j, merged, merge_lists(a, na, b, nb, merged));
    }
    if (rc != SK_OK) {
        sk_window_hll_free(u);
        return rc;
    }
    sk__wh_storage_free(dst);
    sk_window_hll *spent = u;
    *dst = *u;
    sk__free(&dst->alloc, spent, sizeof *spent);
    return SK_OK;
}

void sk_window_hll_get_info(const sk_window_hll *w, sk_window_hll_info *info)
{
    memset(info, 0, sizeof *info);
    if (w == NULL)
        return;
    info->precision = w->precision;
    info->horizon = w->horizon;
    info->resolution = w->resolution;
    info->empty = w->empty;
    info->newest = w->empty ? 0 : w->newest * w->resolution;
    info->pairs = w->pairs;
    info->memory = sizeof *w + sk__wh_memory(w);
}

void sk_window_hll_set_max_memory(sk_window_hll *w, uint64_t bytes)
{
    if (w != NULL)
        w->max_memory = bytes;
}
