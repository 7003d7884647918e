/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_threads.c: the thread-safety contract of include/sketch/bloom.h,
 * with pthreads and cmocka.
 *
 * Four writer threads add disjoint sets of items to one filter of fixed size
 * while two reader threads query it. Each writer publishes, after every add
 * has returned, how many of its items are complete, with a release store;
 * a reader loads that count with an acquire load, so every add it covers
 * happens before the reader's queries, and the contract says each of those
 * items must be found: a single miss is a failure. Readers also query items
 * whose add may be in flight (either answer is allowed, but it must not
 * crash or race) and absent items.
 *
 * At the end every item is present, and the filter's count equals the number
 * of adds that returned 1, summed over the writers: the count is updated
 * atomically with the bits.
 *
 * The same runs with one writer on a filter of the default, one writer at a
 * time, whose adds are plain stores, mixing single adds and batches: readers
 * running alongside must still find every completed item.
 *
 * And the same again on a filter file opened in place (SK_BLOOM_IN_PLACE),
 * whose adds first check and mark the chunks they change: after a sync the
 * file holds every item and verifies.
 *
 * Cmocka's assertions are not thread-safe, so the threads only count; the
 * main thread asserts. Under -DSKETCH_SANITIZE=thread, ThreadSanitizer
 * checks that the library's concurrent adds and queries are free of data
 * races (the relaxed atomics are enough: bits are only ever set).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/test_util.h"

#include "sketch.h"

#define WRITERS 4
#define READERS 2

/* Under ThreadSanitizer everything is 5-15 times slower; fewer items keep
 * the test quick there while still interleaving plenty. */
#if defined(__SANITIZE_THREAD__)
#define ITEMS_PER_WRITER 60000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ITEMS_PER_WRITER 60000
#endif
#endif
#ifndef ITEMS_PER_WRITER
#define ITEMS_PER_WRITER 400000
#endif

/* Writer w's item i: disjoint between writers, and from the absent items,
 * which have bit 62 set. */
static uint64_t item_of(unsigned w, uint64_t i)
{
    return (uint64_t)w << 40 | i;
}

#define ABSENT_BIT (UINT64_C(1) << 62)

struct shared {
    sk_bloom *filter;
    _Atomic uint64_t done[WRITERS];  /* items of each writer whose add returned */
    _Atomic int writers_left;
    _Atomic int start;               /* all threads begin together */
};

struct writer {
    struct shared *s;
    unsigned id;
    int batch;          /* 1: sk_bloom_add_batch in small batches; 2: batches
                           and single adds in turn */
    uint64_t changed;   /* adds that returned 1 */
    uint64_t errors;    /* adds that returned something else than 0 or 1 */
};

struct reader {
    struct shared *s;
    unsigned id;
    uint64_t checked;   /* completed items queried */
    uint64_t missed;    /* ... and not found: a contract violation */
    uint64_t first_missed;
    uint64_t in_flight; /* items queried that may not be complete */
    uint64_t absent, absent_found;
};

static void wait_start(struct shared *s)
{
    while (!atomic_load_explicit(&s->start, memory_order_acquire))
        ;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct shared *s = w->s;
    wait_start(s);
    if (!w->batch) {
        for (uint64_t i = 0; i < ITEMS_PER_WRITER; i++) {
            uint64_t key = item_of(w->id, i);
            int rc = sk_bloom_add(s->filter, &key, sizeof key);
            if (rc == 1)
                w->changed++;
            else if (rc != 0)
                w->errors++;
            atomic_store_explicit(&s->done[w->id], i + 1, memory_order_release);
        }
    } else {
        enum { B = 37 };
        uint64_t keys[B];
        const void *items[B];
        size_t lens[B];
        uint8_t added[B];
        for (uint64_t i = 0; i < ITEMS_PER_WRITER; i += B) {
            size_t n = ITEMS_PER_WRITER - i < B ? (size_t)(ITEMS_PER_WRITER - i) : B;
            for (size_t j = 0; j < n; j++) {
                keys[j] = item_of(w->id, i + j);
                items[j] = &keys[j];
                lens[j] = sizeof keys[j];
            }
            if (w->batch == 2 && i / B % 2 == 1) {
                for (size_t j = 0; j < n; j++) {
                    int rc = sk_bloom_add(s->filter, items[j], lens[j]);
                    added[j] = (uint8_t)(rc == 1);
                    w->errors += (uint64_t)(rc != 0 && rc != 1);
                }
            } else if (sk_bloom_add_batch(s->filter, items, lens, n, added) != SK_OK) {
                w->errors++;
            }
            for (size_t j = 0; j < n; j++)
                w->changed += added[j];
            atomic_store_explicit(&s->done[w->id], i + n, memory_order_release);
        }
    }
    atomic_fetch_sub_explicit(&s->writers_left, 1, memory_order_release);
    return NULL;
}

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    struct shared *s = r->s;
    uint64_t seed = 1000 + r->id;
    wait_start(s);
    for (;;) {
        int last_round = atomic_load_explicit(&s->writers_left, memory_order_acquire) == 0;
        for (unsigned w = 0; w < WRITERS; w++) {
            uint64_t done = atomic_load_explicit(&s->done[w], memory_order_acquire);
            if (done == 0)
                continue;
            /* The newest complete items, the likeliest to be missed if the
             * ordering were wrong, then random older ones. */
            uint64_t probe[24];
            int np = 0;
            for (uint64_t back = 1; back <= 8 && back <= done; back++)
                probe[np++] = done - back;
            for (int j = 0; j < 16; j++)
                probe[np++] = splitmix64(&seed) % done;
            for (int j = 0; j < np; j++) {
                uint64_t key = item_of(w, probe[j]);
                r->checked++;
                if (sk_bloom_contains(s->filter, &key, sizeof key) != 1 && r->missed++ == 0)
                    r->first_missed = key;
            }
            /* Items just past the published count may be in flight. */
            for (uint64_t j = done; j < done + 4 && j < ITEMS_PER_WRITER; j++) {
                uint64_t key = item_of(w, j);
                r->in_flight += (uint64_t)sk_bloom_contains(s->filter, &key, sizeof key);
            }
            /* A batch query of complete items. */
            uint64_t keys[8];
            const void *items[8];
            size_t lens[8];
            uint8_t found[8];
            for (int j = 0; j < 8; j++) {
                keys[j] = item_of(w, splitmix64(&seed) % done);
                items[j] = &keys[j];
                lens[j] = sizeof keys[j];
            }
            sk_bloom_contains_batch(s->filter, items, lens, 8, found);
            for (int j = 0; j < 8; j++) {
                r->checked++;
                if (found[j] != 1 && r->missed++ == 0)
                    r->first_missed = keys[j];
            }
        }
        uint64_t key = splitmix64(&seed) | ABSENT_BIT;
        r->absent++;
        r->absent_found += (uint64_t)sk_bloom_contains(s->filter, &key, sizeof key);
        if (last_round)
            break;
    }
    return NULL;
}

/* A test's filter and writers. nwriters == 1: one writer, on a filter set
 * to single-writer mode, that mixes batches and single adds. in_place: the
 * filter is a file opened in place. */
struct threads_case {
    sk_bloom_layout layout;
    int batch;
    unsigned nwriters;
    int in_place;
};

static void run_filter(void **state)
{
    const struct threads_case *t = *state;
    const sk_bloom_layout layout = t->layout;
    const int batch = t->batch, in_place = t->in_place;
    const unsigned nwriters = t->nwriters;
    const uint64_t total = (uint64_t)nwriters * ITEMS_PER_WRITER;
    struct shared s;
    memset(&s, 0, sizeof s);
    assert_int_equal(sk_bloom_new(&s.filter, total, 0.01, layout), SK_OK);
    char path[] = "/tmp/sketch-threads-XXXXXX";
    if (in_place) {
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(sk_bloom_save(s.filter, path), SK_OK);
        sk_bloom_free(s.filter);
        assert_int_equal(sk_bloom_open(&s.filter, path, SK_BLOOM_IN_PLACE, NULL), SK_OK);
    }
    sk_bloom_set_concurrent_writers(s.filter, nwriters > 1);
    for (unsigned w = 0; w < WRITERS; w++)
        atomic_init(&s.done[w], 0);
    atomic_init(&s.writers_left, (int)nwriters);
    atomic_init(&s.start, 0);

    struct writer writers[WRITERS];
    struct reader readers[READERS];
    pthread_t wt[WRITERS], rt[READERS];
    for (unsigned w = 0; w < nwriters; w++) {
        writers[w] = (struct writer){.s = &s, .id = w,
                                     .batch = nwriters == 1 ? 2 : batch && w % 2 == 1};
        assert_int_equal(pthread_create(&wt[w], NULL, writer_main, &writers[w]), 0);
    }
    for (unsigned r = 0; r < READERS; r++) {
        readers[r] = (struct reader){.s = &s, .id = r};
        assert_int_equal(pthread_create(&rt[r], NULL, reader_main, &readers[r]), 0);
    }
    atomic_store_explicit(&s.start, 1, memory_order_release);
    for (unsigned w = 0; w < nwriters; w++)
        assert_int_equal(pthread_join(wt[w], NULL), 0);
    for (unsigned r = 0; r < READERS; r++)
        assert_int_equal(pthread_join(rt[r], NULL), 0);

    uint64_t changed = 0, checked = 0, missed = 0, absent = 0, absent_found = 0;
    for (unsigned w = 0; w < nwriters; w++) {
        assert_int_equal(writers[w].errors, 0);
        changed += writers[w].changed;
    }
    for (unsigned r = 0; r < READERS; r++) {
        checked += readers[r].checked;
        missed += readers[r].missed;
        absent += readers[r].absent;
        absent_found += readers[r].absent_found;
        if (readers[r].missed)
            print_error("reader %u: %llu of %llu completed items not found, the first %#llx\n",
                        r, (unsigned long long)readers[r].missed,
                        (unsigned long long)readers[r].checked,
                        (unsigned long long)readers[r].first_missed);
    }
    sk_bloom_info info;
    sk_bloom_get_info(s.filter, &info);
    printf("# %s%s%s: %llu adds, %llu changed, count %llu; readers checked %llu completed "
           "items, missed %llu; %llu of %llu absent found\n",
           layout == SK_BLOOM_BLOCKED ? "blocked" : layout == SK_BLOOM_SPLIT ? "split" : "classic",
           batch ? " (batches)" : "",
           nwriters == 1 ? " (one writer)" : "",
           (unsigned long long)total, (unsigned long long)changed,
           (unsigned long long)info.count, (unsigned long long)checked,
           (unsigned long long)missed, (unsigned long long)absent_found,
           (unsigned long long)absent);
    fflush(stdout);
    assert_true(checked > 0);
    assert_int_equal(missed, 0);
    assert_int_equal(info.count, changed);
    assert_true(changed > total * 98 / 100); /* few adds find all bits set, at 1% */
    /* After the threads: every item present. */
    for (unsigned w = 0; w < nwriters; w++)
        for (uint64_t i = 0; i < ITEMS_PER_WRITER; i++) {
            uint64_t key = item_of(w, i);
            assert_int_equal(sk_bloom_contains(s.filter, &key, sizeof key), 1);
        }
    /* Absent items at about the filter's rate (loosely: fewer than 5%). */
    assert_true(absent_found <= absent / 20 + 10);
    if (in_place) {
        assert_int_equal(sk_bloom_sync(s.filter), SK_OK);
        sk_bloom_free(s.filter);
        assert_int_equal(sk_bloom_open(&s.filter, path, SK_BLOOM_VERIFY, NULL), SK_OK);
        sk_bloom_get_info(s.filter, &info);
        assert_int_equal(info.count, changed);
        assert_int_equal(info.interrupted_chunks, 0);
        for (unsigned w = 0; w < nwriters; w++)
            for (uint64_t i = 0; i < ITEMS_PER_WRITER; i++) {
                uint64_t key = item_of(w, i);
                assert_int_equal(sk_bloom_contains(s.filter, &key, sizeof key), 1);
            }
        unlink(path);
    }
    sk_bloom_free(s.filter);
}

#define THREADS(name, ...) CASE_TEST(name, run_filter, struct threads_case, __VA_ARGS__)

int main(void)
{
    const struct CMUnitTest tests[] = {
        THREADS(test_blocked, SK_BLOOM_BLOCKED, 0, WRITERS, 0),
        THREADS(test_classic, SK_BLOOM_CLASSIC, 0, WRITERS, 0),
        THREADS(test_blocked_batches, SK_BLOOM_BLOCKED, 1, WRITERS, 0),
        THREADS(test_classic_batches, SK_BLOOM_CLASSIC, 1, WRITERS, 0),
        THREADS(test_blocked_one_writer, SK_BLOOM_BLOCKED, 1, 1, 0),
        THREADS(test_classic_one_writer, SK_BLOOM_CLASSIC, 1, 1, 0),
        THREADS(test_blocked_in_place, SK_BLOOM_BLOCKED, 1, WRITERS, 1),
        THREADS(test_classic_in_place, SK_BLOOM_CLASSIC, 1, WRITERS, 1),
        THREADS(test_split, SK_BLOOM_SPLIT, 0, WRITERS, 0),
        THREADS(test_split_batches, SK_BLOOM_SPLIT, 1, WRITERS, 0),
        THREADS(test_split_one_writer, SK_BLOOM_SPLIT, 1, 1, 0),
        THREADS(test_split_in_place, SK_BLOOM_SPLIT, 1, WRITERS, 1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
