/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_window_hll.c: the sliding-window HyperLogLog, with cmocka. Its claim
 * is exact: the window's registers are those a plain HyperLogLog of the
 * window's items would hold. So every window asked here is compared with a
 * plain sketch built from a brute-force list of the items whose slots fall
 * in it, register for register (their serialized bytes), on timelines with
 * bursts, quiet spells, late items and time jumps past the internal
 * rebasing; then order independence, merges, the serialized form and its
 * corruptions, limits, budgets and the caller's allocator.
 */
#define _GNU_SOURCE /* mkstemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

struct event {
    uint64_t hash, time;
};

/* A timeline of n events: bursts of many items, quiet spells with none,
 * items repeated, and (with `late`) times up to `late` units behind the
 * newest. */
static struct event *timeline(size_t n, uint64_t start, uint64_t late, uint64_t seed)
{
    struct event *ev = malloc(n * sizeof *ev);
    assert_non_null(ev);
    uint64_t s = seed, t = start;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&s);
        switch (r % 16) {
        case 0:
            t += 1 + splitmix64(&s) % 400; /* a quiet spell */
            break;
        case 1:
        case 2:
            t += splitmix64(&s) % 3;
            break;
        default:
            break; /* a burst at one time */
        }
        uint64_t when = t;
        if (late != 0 && r % 5 == 0) {
            uint64_t back = splitmix64(&s) % (late + 1);
            when = back > t ? 0 : t - back;
        }
        /* A pool of 3n/4 items, so that some repeat. */
        uint64_t item = splitmix64(&s) % (3 * n / 4 + 1);
        ev[i].hash = sk_hll_hash(&item, sizeof item);
        ev[i].time = when;
    }
    return ev;
}

/* The plain sketch of the events[0..n) whose slots lie in [lo, hi]. */
static sk_hll *brute_window(const struct event *ev, size_t n, unsigned p, uint64_t resolution,
                            uint64_t lo, uint64_t hi)
{
    sk_hll *h;
    assert_int_equal(sk_hll_new(&h, p), SK_OK);
    for (size_t i = 0; i < n; i++) {
        uint64_t slot = ev[i].time / resolution;
        if (slot >= lo && slot <= hi)
            assert_true(sk_hll_add_hash(h, ev[i].hash) >= 0);
    }
    return h;
}

static void assert_same_registers(sk_hll *a, sk_hll *b)
{
    uint8_t ba[SK_HLL_MAX_SERIALIZED_SIZE], bb[SK_HLL_MAX_SERIALIZED_SIZE];
    size_t la, lb;
    assert_int_equal(sk_hll_serialize(a, SK_HLL_NATIVE, ba, sizeof ba, &la), SK_OK);
    assert_int_equal(sk_hll_serialize(b, SK_HLL_NATIVE, bb, sizeof bb, &lb), SK_OK);
    assert_int_equal(sk_hll_count(a), sk_hll_count(b));
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
}

/* Every few events, several windows ending at the newest time and later,
 * against the brute-force window. */
static void check_windows(const struct event *ev, size_t n, unsigned p, uint64_t horizon,
                          uint64_t resolution, size_t every)
{
    sk_window_hll_options o = {.precision = p, .horizon = horizon, .resolution = resolution};
    sk_window_hll *w;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_OK);
    sk_hll *snap;
    assert_int_equal(sk_hll_new(&snap, p), SK_OK);
    uint64_t newest = 0, slots = (horizon + resolution - 1) / resolution;
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(sk_window_hll_add_hash(w, ev[i].hash, ev[i].time) >= 0);
        if (i == 0 || ev[i].time > newest)
            newest = ev[i].time;
        if (i % every != every - 1)
            continue;
        const uint64_t windows[] = {1, resolution, horizon / 7 + 1, horizon / 2, horizon};
        for (size_t k = 0; k < sizeof windows / sizeof *windows; k++) {
            uint64_t window = windows[k], now = newest + (k == 2 ? 3 * resolution : 0);
            uint64_t hi = now / resolution, ws = (window + resolution - 1) / resolution;
            uint64_t lo = hi >= ws - 1 ? hi - (ws - 1) : 0;
            /* Items the sketch dropped as too old are older than any
             * window it can be asked, so the brute force may keep them. */
            assert_true(lo + slots > newest / resolution);
            /* Only the events seen so far count. */
            sk_hll *expect = brute_window(ev, i + 1, p, resolution, lo, hi);
            assert_int_equal(sk_window_hll_snapshot(w, window, now, snap), SK_OK);
            assert_same_registers(snap, expect);
            uint64_t count;
            assert_int_equal(sk_window_hll_count(w, window, now, &count), SK_OK);
            assert_int_equal(count, sk_hll_count(expect));
            sk_hll_free(expect);
            checked++;
        }
    }
    assert_true(checked > 0);
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    assert_true(info.pairs <= (uint64_t)(64 - p + 1) << p);
    sk_hll_free(snap);
    sk_window_hll_free(w);
}

static void test_windows_in_order(void **state)
{
    (void)state;
    struct event *ev = timeline(6000, 1000, 0, 1);
    check_windows(ev, 6000, 8, 600, 1, 500);
    check_windows(ev, 6000, 8, 600, 7, 500);
    check_windows(ev, 6000, 12, 3000, 10, 1500);
    free(ev);
}

static void test_windows_late_items(void **state)
{
    (void)state;
    struct event *ev = timeline(6000, 5000, 900, 2);
    check_windows(ev, 6000, 8, 1000, 1, 400);
    check_windows(ev, 6000, 10, 1000, 25, 400);
    free(ev);
}

/* Jumps of time far beyond the horizon and past the 2^26 slots that a
 * pair's offset holds, so that the base moves many times. */
static void test_windows_across_rebases(void **state)
{
    (void)state;
    size_t n = 4000;
    struct event *ev = timeline(n, 0, 50, 3);
    /* The timeline starts at 0, so the first base is 0: land just short of
     * 2^26 and cross it with live pairs, then jump past the horizon. */
    uint64_t shift = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 1000)
            shift = (UINT64_C(1) << 26) - 300 - ev[i - 1].time;
        if (i >= 2000 && i % 500 == 0)
            shift += (UINT64_C(1) << 25) + 12345;
        ev[i].time += shift;
    }
    check_windows(ev, n, 8, 2000, 1, 7);
    /* One item a slot across the first rebase, every window checked: an
     * offset moved by one slot shows at the edge of the smallest ones. */
    for (size_t i = 0; i < 1500; i++) {
        ev[i].hash = sk_hll_hash(&i, sizeof i);
        ev[i].time = (UINT64_C(1) << 26) - 1000 + i;
    }
    ev[0].time = 0;
    check_windows(ev, 1500, 8, 40, 1, 1);
    free(ev);
}

/* Small windows are near exact at p = 14: the estimator's linear-counting
 * regime has a standard deviation of sqrt(m (e^t - t - 1)) items for n = t m,
 * 1.7 at 300, so every window of up to 300 distinct items is within 2 + 3%
 * (more than four of them) of its exact count. */
static void test_small_windows_near_exact(void **state)
{
    (void)state;
    sk_window_hll *w;
    assert_int_equal(sk_window_hll_new(&w, 3600, 1), SK_OK);
    /* Item i at second i / 2, each seen twice; windows of 1..150 s. */
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t item = i / 2;
        assert_true(sk_window_hll_add(w, &item, sizeof item, (i / 2) / 2) >= 0);
        uint64_t now = (i / 2) / 2, window = 1 + i % 150, count;
        if (i % 7 != 0 || now + 1 < window)
            continue;
        /* Exactly: the items of seconds now - window + 1 .. now, two a second,
         * the last second holding as many as have come. */
        uint64_t first = 2 * (now - window + 1), exact = i / 2 - first + 1;
        assert_int_equal(sk_window_hll_count(w, window, now, &count), SK_OK);
        double off = (double)count - (double)exact;
        assert_true(off <= 2 + 0.03 * (double)exact && -off <= 2 + 0.03 * (double)exact);
    }
    sk_window_hll_free(w);
}

/* The frontier of a set of pairs does not depend on the order they come
 * in, so a shuffle within the horizon gives the same bytes. */
static void test_order_independent(void **state)
{
    (void)state;
    size_t n = 20000;
    struct event *ev = timeline(n, 100000, 0, 4);
    sk_window_hll *a, *b;
    assert_int_equal(sk_window_hll_new(&a, 5000, 10), SK_OK);
    assert_int_equal(sk_window_hll_new(&b, 5000, 10), SK_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(sk_window_hll_add_hash(a, ev[i].hash, ev[i].time) >= 0);
    /* Swap neighbours up to 64 apart: times stay well inside the horizon. */
    uint64_t s = 99;
    for (size_t i = 0; i + 64 < n; i++) {
        size_t j = i + splitmix64(&s) % 64;
        struct event t = ev[i];
        ev[i] = ev[j];
        ev[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        assert_true(sk_window_hll_add_hash(b, ev[i].hash, ev[i].time) >= 0);
    uint64_t sa, sb;
    assert_int_equal(sk_window_hll_serialized_size(a, &sa), SK_OK);
    assert_int_equal(sk_window_hll_serialized_size(b, &sb), SK_OK);
    assert_int_equal(sa, sb);
    uint8_t *ba = malloc(sa), *bb = malloc(sb);
    size_t la, lb;
    assert_int_equal(sk_window_hll_serialize(a, ba, sa, &la), SK_OK);
    assert_int_equal(sk_window_hll_serialize(b, bb, sb, &lb), SK_OK);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
    free(ev);
    sk_window_hll_free(a);
    sk_window_hll_free(b);
}

static uint8_t *serialized(const sk_window_hll *w, size_t *len)
{
    uint64_t size;
    assert_int_equal(sk_window_hll_serialized_size(w, &size), SK_OK);
    uint8_t *buf = malloc(size ? size : 1);
    assert_int_equal(sk_window_hll_serialize(w, buf, size, len), SK_OK);
    assert_int_equal(*len, size);
    return buf;
}

static void assert_same_sketch(const sk_window_hll *a, const sk_window_hll *b)
{
    size_t la, lb;
    uint8_t *ba = serialized(a, &la), *bb = serialized(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
}

/* Two streams merged equal one sketch of both, whichever is newer. */
static void test_merge(void **state)
{
    (void)state;
    size_t n = 8000;
    struct event *ev = timeline(n, 777, 300, 5);
    sk_window_hll *a, *b, *all;
    assert_int_equal(sk_window_hll_new(&a, 2000, 5), SK_OK);
    assert_int_equal(sk_window_hll_new(&b, 2000, 5), SK_OK);
    assert_int_equal(sk_window_hll_new(&all, 2000, 5), SK_OK);
    for (size_t i = 0; i < n; i++) {
        /* b stops early, so the merge drops its expired pairs. */
        if (i % 3 == 0 && i < n / 2)
            assert_true(sk_window_hll_add_hash(b, ev[i].hash, ev[i].time) >= 0);
        else if (i % 3 != 0)
            assert_true(sk_window_hll_add_hash(a, ev[i].hash, ev[i].time) >= 0);
        else
            continue;
        assert_true(sk_window_hll_add_hash(all, ev[i].hash, ev[i].time) >= 0);
    }
    sk_window_hll *ab, *ba;
    assert_int_equal(sk_window_hll_copy(&ab, a), SK_OK);
    assert_int_equal(sk_window_hll_merge(ab, b), SK_OK);
    assert_int_equal(sk_window_hll_copy(&ba, b), SK_OK);
    assert_int_equal(sk_window_hll_merge(ba, a), SK_OK);
    assert_same_sketch(ab, all);
    assert_same_sketch(ba, all);
    assert_int_equal(sk_window_hll_merge(ab, ab), SK_OK);
    assert_same_sketch(ab, all);
    sk_window_hll *empty, *other;
    assert_int_equal(sk_window_hll_new(&empty, 2000, 5), SK_OK);
    assert_int_equal(sk_window_hll_merge(empty, a), SK_OK);
    assert_same_sketch(empty, a);
    assert_int_equal(sk_window_hll_new(&other, 2000, 4), SK_OK);
    assert_int_equal(sk_window_hll_merge(other, a), SK_EINCOMPAT);
    sk_window_hll_free(other);
    sk_window_hll_free(empty);
    sk_window_hll_free(ab);
    sk_window_hll_free(ba);
    sk_window_hll_free(a);
    sk_window_hll_free(b);
    sk_window_hll_free(all);
    free(ev);
}

static void test_limits(void **state)
{
    (void)state;
    sk_window_hll *w;
    sk_window_hll_options o = {.horizon = 100};
    assert_int_equal(sk_window_hll_create(&w, NULL), SK_EINVAL);
    assert_int_equal(sk_window_hll_new(&w, 0, 1), SK_EINVAL);
    o.precision = 3;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_EINVAL);
    o.precision = 19;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_EINVAL);
    assert_int_equal(sk_window_hll_new(&w, (uint64_t)SK_WINDOW_HLL_MAX_SLOTS + 1, 1),
                     SK_ETOOLARGE);
    assert_int_equal(sk_window_hll_new(&w, UINT64_MAX, 1), SK_EINVAL);
    assert_null(w);
    assert_int_equal(sk_window_hll_new(&w, 100, 1), SK_OK);
    uint64_t count;
    assert_int_equal(sk_window_hll_count(w, 10, 0, &count), SK_OK);
    assert_int_equal(count, 0);
    assert_int_equal(sk_window_hll_add(w, "a", 1, SK_WINDOW_HLL_MAX_TIME + 1), SK_EINVAL);
    assert_int_equal(sk_window_hll_add(w, "a", 1, 1000), 1);
    assert_int_equal(sk_window_hll_add(w, "a", 1, 1000), 0);
    /* Too old for any window: dropped, the bytes unchanged. */
    size_t l1, l2;
    uint8_t *before = serialized(w, &l1);
    assert_int_equal(sk_window_hll_add(w, "b", 1, 900), 0);
    uint8_t *after = serialized(w, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(before, after, l1);
    free(before);
    free(after);
    assert_int_equal(sk_window_hll_add(w, "b", 1, 901), 1);
    assert_int_equal(sk_window_hll_count(w, 100, 1000, &count), SK_OK);
    assert_int_equal(count, 2);
    assert_int_equal(sk_window_hll_count(w, 99, 1000, &count), SK_OK);
    assert_int_equal(count, 1);
    /* Windows ending before the newest, empty or longer than the horizon. */
    assert_int_equal(sk_window_hll_count(w, 10, 999, &count), SK_EINVAL);
    assert_int_equal(sk_window_hll_count(w, 0, 1000, &count), SK_EINVAL);
    assert_int_equal(sk_window_hll_count(w, 101, 1000, &count), SK_EINVAL);
    sk_hll *h;
    assert_int_equal(sk_hll_new(&h, 12), SK_OK);
    assert_int_equal(sk_window_hll_snapshot(w, 10, 1000, h), SK_EINCOMPAT);
    sk_hll_free(h);
    /* A few items cost a few bytes (sparse), not the dense tables. */
    sk_window_hll_info info;
    sk_window_hll_get_info(w, &info);
    assert_true(info.memory < 1024);
    assert_int_equal(sk_window_hll_clear(w), SK_OK);
    sk_window_hll_get_info(w, &info);
    assert_true(info.empty);
    assert_int_equal(info.pairs, 0);
    assert_int_equal(sk_window_hll_add(w, "b", 1, 5), 1);
    sk_window_hll_free(w);
    sk_window_hll_free(NULL);
}

/* Corrupt a valid form with a recomputed checksum, so the checks behind
 * the checksum are reached. */
static void reseal(uint8_t *b, size_t len)
{
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, b, SK_WH_OFF_CHECKSUM);
    XXH3_64bits_update(&st, b + SK_WH_HEADER_SIZE, len - SK_WH_HEADER_SIZE);
    sk_store_le64(b + SK_WH_OFF_CHECKSUM, XXH3_64bits_digest(&st));
}

static void test_serialized_form(void **state)
{
    (void)state;
    sk_window_hll_options o = {.precision = 6, .horizon = 3000, .resolution = 3};
    sk_window_hll *w, *back;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_OK);
    struct event *ev = timeline(3000, 1 << 20, 200, 6);
    for (size_t i = 0; i < 3000; i++)
        assert_true(sk_window_hll_add_hash(w, ev[i].hash, ev[i].time) >= 0);
    free(ev);
    size_t len;
    uint8_t *b = serialized(w, &len);
    assert_int_equal(sk_window_hll_deserialize(&back, b, len, NULL), SK_OK);
    assert_same_sketch(w, back);
    sk_window_hll_free(back);
    char path[] = "/tmp/sketch-wh-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sk_window_hll_save(w, path), SK_OK);
    assert_int_equal(sk_window_hll_open(&back, path, NULL), SK_OK);
    assert_same_sketch(w, back);
    sk_window_hll_free(back);
    unlink(path);
    /* Every truncation and every flipped bit of the header is refused. */
    for (size_t cut = 0; cut < len; cut++)
        assert_true(sk_window_hll_deserialize(&back, b, cut, NULL) < 0);
    uint8_t *c = malloc(len + 1);
    memcpy(c, b, len);
    c[len] = 0;
    assert_int_equal(sk_window_hll_deserialize(&back, c, len + 1, NULL), SK_ECHECKSUM);
    for (size_t bit = 0; bit < 8 * len; bit += (bit < 8 * SK_WH_HEADER_SIZE ? 1 : 61)) {
        memcpy(c, b, len);
        c[bit / 8] ^= (uint8_t)(1u << bit % 8);
        assert_true(sk_window_hll_deserialize(&back, c, len, NULL) < 0);
        /* Behind a valid checksum, only forms that still obey every rule
         * load, and they serialize back to themselves. */
        if (bit / 8 >= SK_WH_OFF_CHECKSUM && bit / 8 < SK_WH_HEADER_SIZE)
            continue;
        reseal(c, len);
        if (sk_window_hll_deserialize(&back, c, len, NULL) == SK_OK) {
            size_t l2;
            uint8_t *again = serialized(back, &l2);
            assert_int_equal(l2, len);
            assert_memory_equal(again, c, len);
            free(again);
            sk_window_hll_free(back);
        }
    }
    /* Specific lies behind a valid checksum. */
    size_t first_list = SK_WH_HEADER_SIZE;
    memcpy(c, b, len);
    c[SK_WH_OFF_VERSION] = 2;
    assert_int_equal(sk_window_hll_deserialize(&back, c, len, NULL), SK_EVERSION);
    memcpy(c, b, len);
    sk_store_le64(c + SK_WH_OFF_PAIRS, sk_load_le64(c + SK_WH_OFF_PAIRS) + 1);
    reseal(c, len);
    assert_int_equal(sk_window_hll_deserialize(&back, c, len, NULL), SK_ECORRUPT);
    memcpy(c, b, len);
    c[first_list] = 62;
    reseal(c, len);
    assert_true(sk_window_hll_deserialize(&back, c, len, NULL) < 0);
    memcpy(c, b, len);
    sk_store_le64(c + SK_WH_OFF_RESOLUTION, 0);
    reseal(c, len);
    assert_int_equal(sk_window_hll_deserialize(&back, c, len, NULL), SK_ECORRUPT);
    memcpy(c, b, len);
    c[SK_WH_OFF_FLAGS] = SK_WH_FLAG_EMPTY;
    reseal(c, len);
    assert_int_equal(sk_window_hll_deserialize(&back, c, len, NULL), SK_ECORRUPT);
    memcpy(c, b, 4);
    c[0] = 'X';
    assert_int_equal(sk_window_hll_deserialize(&back, c, len, NULL), SK_EFORMAT);
    free(c);
    free(b);
    sk_window_hll_free(w);
}

struct counter {
    size_t live;
    long calls, fail_at;
};

static void *counted_alloc(void *opaque, size_t size)
{
    struct counter *c = opaque;
    if (++c->calls == c->fail_at)
        return NULL;
    c->live += size;
    return malloc(size);
}

static void counted_free(void *opaque, void *ptr, size_t size)
{
    struct counter *c = opaque;
    c->live -= size;
    free(ptr);
}

/* Memory is what the allocator handed out; every failure of it, and a
 * budget, leave the sketch as it was. */
static void test_memory(void **state)
{
    (void)state;
    struct counter c = {0};
    sk_allocator a = {counted_alloc, counted_free, &c, 0};
    sk_window_hll_options o = {.precision = 10, .horizon = 1000, .allocator = &a};
    sk_window_hll *w;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_OK);
    struct event *ev = timeline(50000, 0, 0, 7);
    sk_window_hll_info info;
    for (size_t i = 0; i < 50000; i++) {
        if (i % 97 == 0)
            c.fail_at = c.calls + 1;
        size_t before_len, after_len;
        uint8_t *before = i % 97 == 0 ? serialized(w, &before_len) : NULL;
        int rc = sk_window_hll_add_hash(w, ev[i].hash, ev[i].time);
        if (rc == SK_ENOMEM) {
            uint8_t *after = serialized(w, &after_len);
            assert_int_equal(before_len, after_len);
            assert_memory_equal(before, after, before_len);
            free(after);
            rc = sk_window_hll_add_hash(w, ev[i].hash, ev[i].time);
        }
        assert_true(rc >= 0);
        free(before);
        c.fail_at = 0;
        sk_window_hll_get_info(w, &info);
        assert_int_equal(info.memory, c.live);
    }
    /* A time past the whole horizon starts the sketch again from one pair;
     * if that cannot be stored, nothing changed. */
    size_t before_len, after_len;
    uint8_t *before = serialized(w, &before_len);
    c.fail_at = c.calls + 1;
    assert_int_equal(sk_window_hll_add(w, "x", 1, 1u << 30), SK_ENOMEM);
    c.fail_at = 0;
    uint8_t *after = serialized(w, &after_len);
    assert_int_equal(before_len, after_len);
    assert_memory_equal(before, after, before_len);
    free(before);
    free(after);
    assert_int_equal(sk_window_hll_add(w, "x", 1, 1u << 30), 1);
    uint64_t one;
    assert_int_equal(sk_window_hll_count(w, 1000, 1u << 30, &one), SK_OK);
    assert_int_equal(one, 1);
    sk_window_hll_get_info(w, &info);
    assert_int_equal(info.memory, c.live);
    sk_window_hll_free(w);
    assert_int_equal(c.live, 0);
    /* A budget: adds fail with SK_EBUDGET once the pool would pass it. */
    o.allocator = NULL;
    o.max_memory = 12000;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_OK);
    int refused = 0;
    for (size_t i = 0; i < 50000; i++) {
        int rc = sk_window_hll_add_hash(w, ev[i].hash, i);
        if (rc == SK_EBUDGET)
            refused++;
        else
            assert_true(rc >= 0);
        sk_window_hll_get_info(w, &info);
        assert_true(info.memory <= o.max_memory);
    }
    assert_true(refused > 0);
    sk_window_hll_free(w);
    o.max_memory = 64;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_EBUDGET);
    /* A sketch read back has no budget until one is set. */
    o.max_memory = 0;
    assert_int_equal(sk_window_hll_create(&w, &o), SK_OK);
    for (size_t i = 0; i < 2000; i++)
        assert_true(sk_window_hll_add_hash(w, ev[i].hash, i) >= 0);
    size_t len;
    uint8_t *bytes = serialized(w, &len);
    sk_window_hll *back;
    assert_int_equal(sk_window_hll_deserialize(&back, bytes, len, NULL), SK_OK);
    sk_window_hll_get_info(back, &info);
    uint64_t budget = info.memory + 2000;
    sk_window_hll_set_max_memory(back, budget);
    refused = 0;
    for (size_t i = 2000; i < 50000; i++) {
        int rc = sk_window_hll_add_hash(back, ev[i].hash, i);
        refused += rc == SK_EBUDGET;
        assert_true(rc >= 0 || rc == SK_EBUDGET);
    }
    sk_window_hll_get_info(back, &info);
    assert_true(refused > 0 && info.memory <= budget);
    free(bytes);
    sk_window_hll_free(back);
    sk_window_hll_free(w);
    free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_in_order),
        cmocka_unit_test(test_windows_late_items),
        cmocka_unit_test(test_windows_across_rebases),
        cmocka_unit_test(test_small_windows_near_exact),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_serialized_form),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
