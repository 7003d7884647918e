/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_topk_redisbloom.c: the top-k sketch gives RedisBloom's answers, with
 * cmocka. tests/fixtures/redisbloom-2.6.28/topk.txt holds what RedisBloom
 * 2.6.28 replied (its README says how it was made), one answer per line:
 *
 *   add ITEM OUT        TOPK.ADD of ITEM on "a" (TOPK.RESERVE a 5 100000 4
 *                       0.9) expelled OUT ("-": nothing), in stream order
 *   incr ITEM N OUT     TOPK.INCRBY a ITEM N, after those
 *   list ITEM COUNT     TOPK.LIST a WITHCOUNT, in its order
 *   query ITEM Q C      TOPK.QUERY and TOPK.COUNT of ITEM on "a"
 *   tadd ITEM OUT       the same on "t" (4 100000 4 0.9): ties
 *   tlist ITEM COUNT    TOPK.LIST t WITHCOUNT
 *   zipf SEED K W D ITEMS...   TOPK.LIST of a sketch K W D 0.9 after the
 *                       Zipf stream SEED (zipf_stream below)
 *
 * The first two are answers without collisions, which the sketch must
 * give exactly. Where items collide, RedisBloom's decays come from rand(),
 * so its list is one draw among many (the same stream recorded twice gives
 * two lists). There the sketch must find the true top k at least as well:
 * over the 30 streams (ten of each shape), the sum of the differences in
 * true items found, sketch's less RedisBloom's, may not be below minus
 * twice its standard error (a paired test, which a sketch that finds one
 * item fewer in a third of the streams fails).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sketch.h"
#include "../common/test_util.h"

#ifndef SKETCH_FIXTURES_DIR
#error "SKETCH_FIXTURES_DIR names tests/fixtures"
#endif

#define FIXTURE SKETCH_FIXTURES_DIR "/redisbloom-2.6.28/topk.txt"
#define ZIPF_N 30000
#define ZIPF_UNIVERSE 5000
#define ZIPF_S 1.1

static sk_topk *reserve(uint32_t k, uint32_t width, uint32_t depth)
{
    sk_topk *t;
    sk_topk_options o = {.k = k, .width = width, .depth = depth, .decay = 0.9};
    assert_int_equal(sk_topk_create(&t, &o), SK_OK);
    return t;
}

/* Adds the item once, or n times, and checks what it expelled. */
static void add_expect(sk_topk *t, const char *item, uint32_t n, const char *out)
{
    const void *gone = NULL;
    size_t gone_len = 0;
    int rc = sk_topk_add(t, item, strlen(item), n, &gone, &gone_len);
    if (strcmp(out, "-") == 0) {
        assert_int_equal(rc, 0);
    } else {
        assert_int_equal(rc, 1);
        assert_int_equal(gone_len, strlen(out));
        assert_memory_equal(gone, out, gone_len);
    }
}

/* The next line's words; 0 at the end of the file. */
static int words(FILE *in, char *line, size_t cap, char **w, int max)
{
    if (fgets(line, (int)cap, in) == NULL)
        return 0;
    int n = 0;
    for (char *s = strtok(line, " \n"); s != NULL && n < max; s = strtok(NULL, " \n"))
        w[n++] = s;
    return n;
}

static void check_list(sk_topk *t, char (*items)[64], uint32_t *counts, size_t n)
{
    sk_topk_entry got[64];
    assert_int_equal(sk_topk_list(t, got, 64), (int)n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i].len, strlen(items[i]));
        assert_memory_equal(got[i].item, items[i], got[i].len);
        assert_int_equal(got[i].count, counts[i]);
    }
}

static void test_exact_answers(void **state)
{
    FILE *in = fopen(FIXTURE, "r");
    assert_non_null(in);
    sk_topk *a = reserve(5, 100000, 4), *t = reserve(4, 100000, 4);
    char line[1 << 16], *w[2000];
    char list_items[64][64], tlist_items[64][64];
    uint32_t list_counts[64], tlist_counts[64];
    size_t lists = 0, tlists = 0, checked = 0;
    int n;
    while ((n = words(in, line, sizeof line, w, 2000)) > 0) {
        if (strcmp(w[0], "add") == 0 && n == 3) {
            add_expect(a, w[1], 1, w[2]);
        } else if (strcmp(w[0], "incr") == 0 && n == 4) {
            add_expect(a, w[1], (uint32_t)atoi(w[2]), w[3]);
        } else if (strcmp(w[0], "tadd") == 0 && n == 3) {
            add_expect(t, w[1], 1, w[2]);
        } else if (strcmp(w[0], "list") == 0 && n == 3 && lists < 64) {
            snprintf(list_items[lists], sizeof list_items[lists], "%s", w[1]);
            list_counts[lists++] = (uint32_t)atoi(w[2]);
        } else if (strcmp(w[0], "tlist") == 0 && n == 3 && tlists < 64) {
            snprintf(tlist_items[tlists], sizeof tlist_items[tlists], "%s", w[1]);
            tlist_counts[tlists++] = (uint32_t)atoi(w[2]);
        } else if (strcmp(w[0], "query") == 0 && n == 4) {
            assert_int_equal(sk_topk_query(a, w[1], strlen(w[1])), atoi(w[2]));
            assert_int_equal(sk_topk_count(a, w[1], strlen(w[1])), (uint32_t)atoi(w[3]));
        } else {
            continue;
        }
        checked++;
    }
    fclose(in);
    assert_true(checked > 800 && lists == 5 && tlists == 4);
    check_list(a, list_items, list_counts, lists);
    check_list(t, tlist_items, tlist_counts, tlists);
    sk_topk_free(a);
    sk_topk_free(t);
}

/* The Zipf stream of the fixture: SplitMix64 draws into the cumulative
 * weights 1/(i+1)^s of ZIPF_UNIVERSE items, as the recorder drew them. */
static void zipf_stream(uint64_t seed, uint32_t *out)
{
    static double cdf[ZIPF_UNIVERSE];
    double total = 0;
    for (int i = 0; i < ZIPF_UNIVERSE; i++)
        cdf[i] = total += 1.0 / pow(i + 1, ZIPF_S);
    uint64_t st = seed;
    for (int n = 0; n < ZIPF_N; n++) {
        double u = (double)(splitmix64(&st) >> 11) * 0x1.0p-53 * total;
        int lo = 0, hi = ZIPF_UNIVERSE - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        out[n] = (uint32_t)lo;
    }
}

/* How many of the listed items ("z<i>") are among the true top k. */
static int hits(char **listed, int n, const uint32_t *freq, uint32_t kth)
{
    int h = 0;
    for (int i = 0; i < n; i++)
        h += freq[atoi(listed[i] + 1)] >= kth;
    return h;
}

static void test_recall_at_least_redisbloom(void **state)
{
    FILE *in = fopen(FIXTURE, "r");
    assert_non_null(in);
    static uint32_t stream[ZIPF_N];
    char line[1 << 16], *w[2000];
    int n, shapes = 0;
    int ours = 0, theirs = 0;
    double squares = 0;
    while ((n = words(in, line, sizeof line, w, 2000)) > 0) {
        if (strcmp(w[0], "zipf") != 0 || n < 5)
            continue;
        uint64_t seed = strtoull(w[1], NULL, 10);
        uint32_t k = (uint32_t)atoi(w[2]), width = (uint32_t)atoi(w[3]);
        uint32_t depth = (uint32_t)atoi(w[4]);
        zipf_stream(seed, stream);
        static uint32_t freq[ZIPF_UNIVERSE], sorted[ZIPF_UNIVERSE];
        memset(freq, 0, sizeof freq);
        sk_topk *t = reserve(k, width, depth);
        for (int i = 0; i < ZIPF_N; i++) {
            char item[16];
            int len = snprintf(item, sizeof item, "z%u", stream[i]);
            freq[stream[i]]++;
            assert_true(sk_topk_add(t, item, (size_t)len, 1, NULL, NULL) >= 0);
        }
        /* the k-th largest frequency: ties at it count as hits */
        memcpy(sorted, freq, sizeof freq);
        for (uint32_t i = 0; i < k; i++)
            for (uint32_t j = i + 1; j < ZIPF_UNIVERSE; j++)
                if (sorted[j] > sorted[i]) {
                    uint32_t x = sorted[i];
                    sorted[i] = sorted[j];
                    sorted[j] = x;
                }
        uint32_t kth = sorted[k - 1];
        int rb = hits(w + 5, n - 5, freq, kth);
        sk_topk_entry got[64];
        int listed = sk_topk_list(t, got, 64);
        assert_true(listed >= 0 && listed <= (int)k);
        char *names[64], bufs[64][16];
        for (int i = 0; i < listed; i++) {
            snprintf(bufs[i], sizeof bufs[i], "%.*s", (int)got[i].len, (const char *)got[i].item);
            names[i] = bufs[i];
        }
        int sk = hits(names, listed, freq, kth);
        ours += sk;
        theirs += rb;
        squares += (double)(sk - rb) * (sk - rb);
        sk_topk_free(t);
        shapes++;
    }
    fclose(in);
    assert_int_equal(shapes, 30);
    print_message("true top-k items found over 30 streams: sketch %d, RedisBloom %d\n", ours,
                  theirs);
    assert_true(ours - theirs >= -2 * sqrt(squares));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_answers),
        cmocka_unit_test(test_recall_at_least_redisbloom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
