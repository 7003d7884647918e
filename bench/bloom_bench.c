/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_bench.c: the Bloom filters of libsketch (blocked, classic and
 * split layouts) against libbloom (Jyri J. Virkki's, as packaged by Debian in
 * libbloom-dev), at tens and hundreds of millions of items.
 *
 * For each item count n (default 10M and 100M) and rate p (default 0.01)
 * four filters are built: libbloom's bloom_init(n, p), and sk_bloom_new(n,
 * p) with SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC and SK_BLOOM_SPLIT. Timed, per
 * filter:
 *
 *   add             n items one at a time (bloom_add / sk_bloom_add), into
 *                   a filter cleared (untimed) before the run
 *   add, batch B    sketch only: sk_bloom_add_batch, batches of B items,
 *                   for each B of -b (default 64 and 1024)
 *   add, locked, add, bB, locked
 *                   sketch only: the same two on a filter made for
 *                   concurrent writers (sk_bloom_set_concurrent_writers),
 *                   locked ORs instead of the default's plain stores
 *   present         every added item, in a random permutation of the order
 *                   they were added in, one at a time (bloom_check /
 *                   sk_bloom_contains)
 *   present, batch  sketch only: the same with sk_bloom_contains_batch
 *   absent          A items never added (default 10M), one at a time
 *   absent, batch   sketch only
 *   present, by hash; absent, by hash; present, hash bB; absent, hash bB
 *                   sketch only: the same queries by the items' hashes
 *                   (sk_bloom_contains_hash and its batch form), computed
 *                   with sk_bloom_hash_bytes before the rows and not timed,
 *                   as for a caller that hashes once and keeps the hash
 *
 * Items are 16-byte random keys (8 with -k 8; splitmix64, fixed seeds),
 * generated before any timing and held once: n_max keys for the added
 * items (1.6 GB at 100M of 16 bytes) and A for the absent ones, and as
 * many 16-byte hashes. The present queries read the same array after it has been shuffled in place (Fisher-Yates), so they go
 * through it sequentially while their filter accesses follow no order of
 * the adds. Batch rows fill their arrays of B pointers as they go; that cost
 * is part of what they measure, as it would be for a caller.
 *
 * Each run of a row is one whole pass (n adds, n present queries or A absent
 * queries). The rows are interleaved run by run (run 1 of every row, then
 * run 2, ...) so that a noisy moment of the machine does not land on one
 * row only; below LARGE_N items one untimed warm-up pass of every row comes
 * first. The table shows the median and the minimum wall-clock time per
 * operation over the runs, the median thread CPU time per operation (which
 * leaves out the time the thread waited for a CPU while other jobs ran on a
 * shared machine; memory stalls count in both), the throughput ratio of each
 * sketch row to the libbloom row of
 * the same operation (libbloom median / sketch median), and at n = 100M the
 * targets beside the measurements. A second table gives each filter's
 * shape, bits per item, false-positive rate measured on the A absent items
 * and expected from its formula, and a count of false negatives (must be 0).
 *
 * Beside them, the floor: what any filter that reads or writes one random
 * 64-byte line per item costs on this machine, from an array the size of
 * the blocked filter, the line chosen by the key's first 8 bytes (random
 * already: no hash), reached through a ring of prefetches D items ahead:
 * "floor t0/4K" with prefetcht0 and D = 32 on 4 KB pages, "floor t2/2M"
 * with prefetcht2 and D = 64 on 2 MB pages (madvise MADV_HUGEPAGE). Its add
 * sets a bit of the line's first word, its queries read that word. A third
 * table gives each row of sketch blocked and split over the faster floor of
 * the same operation.
 *
 * This is a benchmark, not a test: it prints the targets beside the
 * measurements and always exits 0 unless it cannot run at all.
 *
 * The false-positive rate measured on A absent keys has a binomial standard
 * error sigma = sqrt(p (1 - p) / A) (3.1e-5 at p = 1%, A = 10M): a filter
 * sized to meet p exactly at capacity measures above p about half of the
 * time. The verdict is "met" at or below p, "met (noise)" above p by at most
 * 3 sigma, and "MISSED" beyond; the z column is (measured - p) / sigma.
 *
 * Usage: bloom_bench [-n N[,N]...] [-p P] [-a ABSENT] [-b B[,B]...] [-r RUNS] [-R RUNS]
 *                    [-i IMPL[,IMPL]...] [-k BYTES]
 * (-i libbloom,blocked,classic,split selects the filters, e.g. to profile one.)
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bloom.h> /* libbloom */

#include "bench_util.h"
#include "sketch/bloom_extra.h"


#define MAX_NS 8
#define MAX_BATCH 4096
/* From this many items on: no warm-up pass, RUNS_LARGE runs per row. */
#define LARGE_N UINT64_C(50000000)
/* The item count at which the targets apply. */
#define TARGET_N UINT64_C(100000000)
#define TARGET_SPEEDUP 10.0
#define TARGET_BATCH_NS 15.0
#define LN2 0.69314718055994530942

__extension__ typedef unsigned __int128 u128;


/* ---- small helpers ----------------------------------------------------------- */

/* Bytes per key: 16 or 8 (-k). */
static unsigned key_size = 16;

static void fill_keys(uint8_t *keys, uint64_t count, uint64_t seed)
{
    for (uint64_t i = 0; i < count; i++) {
        uint64_t a = splitmix64(&seed), b = splitmix64(&seed);
        memcpy(keys + i * key_size, &a, 8);
        if (key_size == 16)
            memcpy(keys + i * key_size + 8, &b, 8);
    }
}

/* Fisher-Yates over the keys, in place. */
static void shuffle_keys(uint8_t *keys, uint64_t count, uint64_t seed)
{
    for (uint64_t i = count - 1; i > 0; i--) {
        uint64_t j = (uint64_t)(((u128)splitmix64(&seed) * (i + 1)) >> 64);
        uint8_t t[16];
        memcpy(t, keys + i * key_size, key_size);
        memcpy(keys + i * key_size, keys + j * key_size, key_size);
        memcpy(keys + j * key_size, t, key_size);
    }
}

/* ---- the contenders and their passes -------------------------------------------- */

enum kind { LIBBLOOM, SKETCH, FLOOR };

struct contender {
    const char *name;
    enum kind kind;
    sk_bloom_layout layout; /* SKETCH */
    struct bloom lb;        /* LIBBLOOM */
    sk_bloom *sk;           /* SKETCH */
    int selected;           /* -i */
    int skipped;            /* not selected, or LIBBLOOM when n does not fit */
    int huge;               /* FLOOR: 2 MB pages, prefetcht2, 64 ahead; else t0, 32 */
    uint64_t *lines;        /* FLOOR: the array, 8 words a line */
    uint64_t nlines;
    size_t map_len;
};

enum op {
    OP_ADD, OP_ADD_BATCH, OP_ADD_MANY_WRITERS, OP_ADD_BATCH_MANY_WRITERS,
    OP_PRESENT, OP_PRESENT_BATCH, OP_PRESENT_HASH, OP_PRESENT_HASH_BATCH,
    OP_ABSENT, OP_ABSENT_BATCH, OP_ABSENT_HASH, OP_ABSENT_HASH_BATCH, NOPS
};

static const char *const op_names[NOPS] = {
    "add",           "add, batch",     "add, locked",    "add, batch, locked",
    "present query", "present, batch", "present, by hash", "present, hash batch",
    "absent query",  "absent, batch",  "absent, by hash",  "absent, hash batch"};

static int op_is_batch(enum op op)
{
    return op == OP_ADD_BATCH || op == OP_ADD_BATCH_MANY_WRITERS || op == OP_PRESENT_BATCH ||
           op == OP_ABSENT_BATCH || op == OP_PRESENT_HASH_BATCH || op == OP_ABSENT_HASH_BATCH;
}

static int op_is_absent(enum op op)
{
    return op >= OP_ABSENT;
}

static int op_is_add(enum op op)
{
    return op <= OP_ADD_BATCH_MANY_WRITERS;
}

/* Rows libbloom and the floor have no counterpart of: batches, and the
 * single-writer mode (libbloom is always single-writer). */
static int op_is_sketch_only(enum op op)
{
    return op != OP_ADD && op != OP_PRESENT && op != OP_ABSENT;
}

/* The libbloom operation a sketch operation is compared with. */
static enum op op_base(enum op op)
{
    return op_is_add(op) ? OP_ADD : op_is_absent(op) ? OP_ABSENT : OP_PRESENT;
}

/* The keys' hashes, computed before the by-hash rows and not timed: what a
 * caller that hashes once and keeps the hash passes. */
static sk_bloom_hash *present_hashes, *absent_hashes;

static void hash_keys(sk_bloom_hash *out, const uint8_t *keys, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        out[i] = sk_bloom_hash_bytes(keys + i * key_size, key_size);
}

/* The batch size of the row being run. */
static unsigned batch_size = 64;
#define MAX_BATCHES 4

/* Each pass returns the number of adds that changed the filter, or of
 * queries answered "maybe present". KEY_PASS(name, filter type, call)
 * defines a pass that makes one call a key, key_size bytes at `key`, and
 * counts the calls for which `call` is 1. */
#define KEY_PASS(name, filter_type, call)                                                          \
    static uint64_t name(filter_type f, const uint8_t *keys, uint64_t count)                       \
    {                                                                                              \
        uint64_t n = 0;                                                                            \
        for (uint64_t i = 0; i < count; i++) {                                                     \
            const uint8_t *key = keys + i * key_size;                                              \
            n += (uint64_t)(call);                                                                 \
        }                                                                                          \
        return n;                                                                                  \
    }
KEY_PASS(lib_add, struct bloom *, bloom_add(f, key, key_size) == 0)
KEY_PASS(lib_check, struct bloom *, bloom_check(f, key, key_size) == 1)
KEY_PASS(sk_add_one, sk_bloom *, sk_bloom_add(f, key, key_size) == 1)
KEY_PASS(sk_contains_one, const sk_bloom *, sk_bloom_contains(f, key, key_size))

static uint64_t sk_contains_by_hash(const sk_bloom *f, const sk_bloom_hash *h, uint64_t count)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < count; i++)
        hits += (uint64_t)sk_bloom_contains_hash(f, h[i]);
    return hits;
}

static uint64_t sk_contains_hash_batched(const sk_bloom *f, const sk_bloom_hash *h,
                                         uint64_t count)
{
    uint8_t found[MAX_BATCH];
    uint64_t hits = 0;
    for (uint64_t i = 0; i < count; i += batch_size) {
        size_t m = count - i < batch_size ? (size_t)(count - i) : batch_size;
        sk_bloom_contains_hash_batch(f, h + i, m, found);
        for (size_t j = 0; j < m; j++)
            hits += found[j];
    }
    return hits;
}

/* Adds the keys (add) or looks them up, batch_size of them a call. */
static uint64_t sk_batched(sk_bloom *f, const uint8_t *keys, uint64_t count, bool add)
{
    const void *items[MAX_BATCH];
    size_t lens[MAX_BATCH];
    uint8_t result[MAX_BATCH];
    for (unsigned j = 0; j < batch_size; j++)
        lens[j] = key_size;
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; i += batch_size) {
        size_t m = count - i < batch_size ? (size_t)(count - i) : batch_size;
        for (size_t j = 0; j < m; j++)
            items[j] = keys + (i + j) * key_size;
        if (!add)
            sk_bloom_contains_batch(f, items, lens, m, result);
        else if (sk_bloom_add_batch(f, items, lens, m, result) != SK_OK) {
            fprintf(stderr, "bloom_bench: sk_bloom_add_batch failed\n");
            exit(1);
        }
        for (size_t j = 0; j < m; j++)
            total += result[j];
    }
    return total;
}

/* The floor's array of `lines` 64-byte lines, on 4 KB or 2 MB pages. */
static void floor_alloc(struct contender *c, uint64_t lines)
{
    const size_t huge = (size_t)2 << 20;
    size_t bytes = (size_t)lines * 64, len = (bytes + huge - 1) / huge * huge + huge;
    uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        fprintf(stderr, "bloom_bench: mmap of the floor's %zu bytes failed\n", len);
        exit(1);
    }
    uint8_t *aligned = (uint8_t *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
    madvise(aligned, len - (size_t)(aligned - map), c->huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    c->lines = (uint64_t *)(void *)aligned;
    c->nlines = lines;
    c->map_len = len;
    c->lb.bf = map; /* what munmap takes back */
    memset(c->lines, 0, bytes);
}

static void floor_free(struct contender *c)
{
    munmap(c->lb.bf, c->map_len);
    c->lines = NULL;
}

/* One floor pass: a ring of prefetches `ahead` items ahead, then one load
 * (queries) or one OR (adds) of a word of each item's line. */
static uint64_t floor_pass(const struct contender *c, const uint8_t *keys, uint64_t count,
                           int write)
{
    enum { RING = 64 };
    const unsigned ahead = c->huge ? 64 : 32;
    uint64_t *at[RING];
    uint64_t acc = 0;
    for (uint64_t i = 0; i < count + ahead; i++) {
        unsigned slot = (unsigned)(i % ahead);
        if (i >= ahead) {
            if (write)
                *at[slot] |= 1;
            else
                acc += *at[slot] & 1;
        }
        if (i < count) {
            uint64_t x;
            memcpy(&x, keys + i * key_size, 8);
            at[slot] = c->lines + (uint64_t)(((u128)x * c->nlines) >> 64) * 8;
            if (c->huge)
                __builtin_prefetch(at[slot], 0, 1);
            else
                __builtin_prefetch(at[slot], 0, 3);
        }
    }
    return write ? count : acc;
}

static void clear_filter(struct contender *c)
{
    if (c->kind == FLOOR) {
        memset(c->lines, 0, (size_t)c->nlines * 64);
    } else if (c->kind == LIBBLOOM) {
        if (bloom_reset(&c->lb) != 0) {
            fprintf(stderr, "bloom_bench: bloom_reset failed\n");
            exit(1);
        }
    } else if (sk_bloom_clear(c->sk) != SK_OK) {
        fprintf(stderr, "bloom_bench: sk_bloom_clear failed\n");
        exit(1);
    }
}

/* One pass of `op`; returns its count and stores its duration in *ns (wall
 * clock) and *cpu (thread CPU time). */
static uint64_t run_pass(struct contender *c, enum op op, const uint8_t *added_keys,
                         uint64_t n, const uint8_t *absent_keys, uint64_t absent, double *ns,
                         double *cpu)
{
    if (op_is_add(op))
        clear_filter(c); /* untimed; also faults every page in before the run */
    uint64_t result = 0;
    double cpu_start = cpu_ns(), start = now_ns();
    if (c->kind == FLOOR) {
        result = op == OP_ADD       ? floor_pass(c, added_keys, n, 1)
                 : op == OP_PRESENT ? floor_pass(c, added_keys, n, 0)
                                    : floor_pass(c, absent_keys, absent, 0);
        op = NOPS;
    }
    switch (op) {
    case OP_ADD:
        result = c->kind == LIBBLOOM ? lib_add(&c->lb, added_keys, n)
                                     : sk_add_one(c->sk, added_keys, n);
        break;
    case OP_ADD_BATCH: result = sk_batched(c->sk, added_keys, n, true); break;
    case OP_ADD_MANY_WRITERS:
    case OP_ADD_BATCH_MANY_WRITERS:
        sk_bloom_set_concurrent_writers(c->sk, 1);
        result = op == OP_ADD_MANY_WRITERS ? sk_add_one(c->sk, added_keys, n)
                                           : sk_batched(c->sk, added_keys, n, true);
        sk_bloom_set_concurrent_writers(c->sk, 0);
        break;
    case OP_PRESENT:
        result = c->kind == LIBBLOOM ? lib_check(&c->lb, added_keys, n)
                                     : sk_contains_one(c->sk, added_keys, n);
        break;
    case OP_PRESENT_BATCH: result = sk_batched(c->sk, added_keys, n, false); break;
    case OP_ABSENT:
        result = c->kind == LIBBLOOM ? lib_check(&c->lb, absent_keys, absent)
                                     : sk_contains_one(c->sk, absent_keys, absent);
        break;
    case OP_ABSENT_BATCH: result = sk_batched(c->sk, absent_keys, absent, false); break;
    case OP_PRESENT_HASH: result = sk_contains_by_hash(c->sk, present_hashes, n); break;
    case OP_ABSENT_HASH: result = sk_contains_by_hash(c->sk, absent_hashes, absent); break;
    case OP_PRESENT_HASH_BATCH: result = sk_contains_hash_batched(c->sk, present_hashes, n); break;
    case OP_ABSENT_HASH_BATCH: result = sk_contains_hash_batched(c->sk, absent_hashes, absent); break;
    default: break;
    }
    *ns = now_ns() - start;
    *cpu = cpu_ns() - cpu_start;
    sink += result;
    return result;
}

/* ---- rows ----------------------------------------------------------------------- */

struct row {
    struct contender *c;
    enum op op;
    unsigned batch;   /* items per batch call, for the batch operations */
    char name[24];    /* the operation as the table shows it */
    uint64_t ops;     /* operations per pass */
    double *times;    /* ns per operation, one per run */
    double *cpu;      /* the same in thread CPU time */
    int done;
    uint64_t result;  /* the pass's count, identical in every run */
    int inconsistent; /* a run gave another count */
    double median, min, cpu_median;
};

static void record(struct row *r, uint64_t result, double ns, double cpu)
{
    if (r->done > 0 && result != r->result)
        r->inconsistent = 1;
    r->result = result;
    r->cpu[r->done] = cpu / (double)r->ops;
    r->times[r->done++] = ns / (double)r->ops;
}

static void summarize(struct row *r)
{
    r->median = median_of(r->times, r->done);
    r->min = r->times[0];
    r->cpu_median = median_of(r->cpu, r->done);
}

/* ---- the header -------------------------------------------------------------------- */

static void read_first_line(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(out, (int)cap, f) != NULL)
        out[strcspn(out, "\n")] = '\0';
    else
        snprintf(out, cap, "unknown");
    fclose(f);
}

/* ---- main ---------------------------------------------------------------------------- */

static void usage(void)
{
    fputs("Usage: bloom_bench [-n N[,N]...] [-p P] [-a ABSENT] [-b BATCH] [-r RUNS] [-R RUNS] [-k BYTES]\n"
          "  -n N,...   item counts, in increasing order (default 10000000,100000000)\n"
          "  -p P       false-positive rate the filters are sized for (default 0.01)\n"
          "  -a ABSENT  items never added, queried for the absent rows and the\n"
          "             false-positive rate (default 10000000)\n"
          "  -b B,...   items per sketch batch call, 1..4096, a row for each (default 64,1024)\n"
          "  -r RUNS    timed runs per row below 50M items, at least 3 (default 5)\n"
          "  -R RUNS    timed runs per row from 50M items on, at least 1 (default 3)\n"
          "  -i IMPL,...  only these of libbloom, blocked, classic, split, floor (default: all)\n"
          "  -k BYTES   bytes per key, 8 or 16 (default 16)\n",
          stderr);
    exit(2);
}

static uint64_t parse_u64(const char *text)
{
    char *end;
    double v = strtod(text, &end); /* accepts 1e8 */
    if (end == text || *end != '\0' || !(v >= 1) || v > 1e12 || v != floor(v))
        usage();
    return (uint64_t)v;
}

int main(int argc, char **argv)
{
    uint64_t ns_list[MAX_NS] = {UINT64_C(10000000), UINT64_C(100000000)};
    int nn = 2;
    double p = 0.01;
    uint64_t absent = UINT64_C(10000000);
    unsigned batches[MAX_BATCHES] = {64, 1024};
    int nbatches = 2;
    int runs_small = 5, runs_large = 3;
    const char *impls = "libbloom,blocked,classic,split,floor";
    int c;
    while ((c = getopt(argc, argv, "n:p:a:b:r:R:i:k:h")) != -1) {
        switch (c) {
        case 'n': {
            nn = 0;
            char *copy = strdup(optarg), *save = NULL;
            for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
                 tok = strtok_r(NULL, ",", &save)) {
                if (nn == MAX_NS)
                    usage();
                ns_list[nn++] = parse_u64(tok);
            }
            free(copy);
            if (nn == 0)
                usage();
            break;
        }
        case 'p': p = atof(optarg); break;
        case 'a': absent = parse_u64(optarg); break;
        case 'b':
            nbatches = (int)bench_parse_list(optarg, batches, MAX_BATCHES, usage);
            for (int i = 0; i < nbatches; i++)
                if (batches[i] < 1 || batches[i] > MAX_BATCH)
                    usage();
            if (nbatches == 0)
                usage();
            break;
        case 'r': runs_small = atoi(optarg); break;
        case 'R': runs_large = atoi(optarg); break;
        case 'i': impls = optarg; break;
        case 'k':
            key_size = (unsigned)atoi(optarg);
            if (key_size != 8 && key_size != 16)
                usage();
            break;
        default: usage();
        }
    }
    if (optind != argc || !(p >= SK_BLOOM_MIN_FP_RATE && p <= SK_BLOOM_MAX_FP_RATE) ||
        runs_small < 3 || runs_small > 101 ||
        runs_large < 1 || runs_large > 101)
        usage();
    for (int i = 1; i < nn; i++)
        if (ns_list[i] <= ns_list[i - 1])
            usage();
    uint64_t n_max = ns_list[nn - 1];

    /* ---- header ---- */
    char cpu[256], thp[256], load[256];
    cpu_model(cpu, sizeof cpu);
    read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
    read_first_line("/proc/loadavg", load, sizeof load);
    double ram_gib = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) /
                     (1024.0 * 1024 * 1024);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("libsketch %s Bloom filters against libbloom %s\n", sk_version(), bloom_version());
    printf("CPU:       %s (%ld online), %.1f GiB RAM; transparent huge pages: %s\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), ram_gib, thp);
    printf("Load:      /proc/loadavg at start: %s\n", load);
    printf("Compiler:  %s, %s build, flags: %s (libbloom: the Debian shared library)\n",
           BENCH_COMPILER, BENCH_CONFIG_NAME, BENCH_FLAGS);
    printf("Timing:    CLOCK_MONOTONIC (resolution %ld ns); one run = one whole pass; rows\n"
           "           interleaved run by run; %d runs per row below %llu items (after 1\n"
           "           untimed warm-up pass), %d from there on (no warm-up); median and min\n"
           "           of the wall-clock time per operation (the speedups and verdicts use the\n"
           "           median); CPU ns: median thread CPU time per operation, which leaves\n"
           "           out time spent waiting for a CPU on a shared machine; one thread\n",
           (long)res.tv_nsec, runs_small, (unsigned long long)LARGE_N, runs_large);
    char batch_list[64] = "";
    for (int b = 0; b < nbatches; b++)
        snprintf(batch_list + strlen(batch_list), sizeof batch_list - strlen(batch_list),
                 "%s%u", b ? ", " : "", batches[b]);
    printf("Inputs:    random %d-byte keys (splitmix64): n added (held once, %.2f GB at\n"
           "           n = %llu), %llu never added; present queries go over the added keys\n"
           "           shuffled in place; sketch batches of %s items; p = %g\n",
           key_size, (double)n_max * key_size / 1e9, (unsigned long long)n_max,
           (unsigned long long)absent, batch_list, p);
    printf("Targets:   at n = %llu: every sketch add and query >= %.0fx libbloom's throughput\n"
           "           (same operation), <= %.0f ns per query in batches, measured FP rate <= p\n\n",
           (unsigned long long)TARGET_N, TARGET_SPEEDUP, TARGET_BATCH_NS);
    fflush(stdout);

    /* ---- inputs, before any timing ---- */
    double t0 = now_ns();
    uint8_t *keys = xmalloc((size_t)n_max * key_size);
    uint8_t *absent_keys = xmalloc((size_t)absent * key_size);
    present_hashes = xmalloc((size_t)n_max * sizeof *present_hashes);
    absent_hashes = xmalloc((size_t)absent * sizeof *absent_hashes);
    fill_keys(keys, n_max, UINT64_C(0x5eed0b100f000001));
    fill_keys(absent_keys, absent, UINT64_C(0xab5e47000000d1ff));
    fprintf(stderr, "bloom_bench: generated %llu + %llu keys in %.1f s\n",
            (unsigned long long)n_max, (unsigned long long)absent, (now_ns() - t0) / 1e9);

    /* Let the CPU leave any low-power state. */
    for (double start = now_ns(); now_ns() - start < 300e6;)
        sink += keys[(uint64_t)sink % n_max * key_size];

    struct contender contenders[6] = {
        {.name = "floor t0/4K", .kind = FLOOR},
        {.name = "floor t2/2M", .kind = FLOOR, .huge = 1},
        {.name = "libbloom", .kind = LIBBLOOM, .layout = SK_BLOOM_CLASSIC},
        {.name = "sketch blocked", .kind = SKETCH, .layout = SK_BLOOM_BLOCKED},
        {.name = "sketch classic", .kind = SKETCH, .layout = SK_BLOOM_CLASSIC},
        {.name = "sketch split", .kind = SKETCH, .layout = SK_BLOOM_SPLIT},
    };
    const int ncont = 6;
    {
        static const char *const impl_names[6] = {"floor", "floor", "libbloom", "blocked",
                                                  "classic", "split"};
        char *copy = strdup(impls), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save)) {
            int found = 0;
            for (int k = 0; k < ncont; k++)
                if (strcmp(tok, impl_names[k]) == 0)
                    contenders[k].selected = found = 1;
            if (!found)
                usage();
        }
        free(copy);
    }

    struct shape {
        char name[40], layout[16];
        uint64_t n, bits, false_negatives;
        unsigned hashes;
        double memory, measured, expected;
        uint64_t fp_hits;
        int batch_disagrees, skipped;
    } shapes[MAX_NS * 4];
    int nshapes = 0;

    printf("%-10s %-15s %-20s %4s %9s %9s %9s %8s %10s %-17s %s\n", "n", "implementation",
           "operation", "runs", "median ns", "min ns", "CPU ns", "Mops/s", "x libbloom",
           "target", "verdict");
    printf("%-10s %-15s %-20s %4s %9s %9s %9s %8s %10s %-17s %s\n", "----------",
           "---------------", "--------------------", "----", "---------", "---------", "---------",
           "--------", "----------", "-----------------", "-------");
    fflush(stdout);

    for (int ni = 0; ni < nn; ni++) {
        uint64_t n = ns_list[ni];
        int runs = n >= LARGE_N ? runs_large : runs_small;
        int warmup = n < LARGE_N;

        /* Filters. libbloom keeps its sizes in ints and needs >= 1000 entries. */
        for (int k = 0; k < ncont; k++) {
            struct contender *ct = &contenders[k];
            ct->skipped = !ct->selected;
            if (ct->skipped)
                continue;
            if (ct->kind == FLOOR) {
                sk_bloom_layout layout = SK_BLOOM_BLOCKED;
                uint64_t bits;
                unsigned hashes;
                if (sk_bloom_size_for(n, p, &layout, &bits, &hashes) != SK_OK) {
                    fprintf(stderr, "bloom_bench: no blocked size for %llu items\n",
                            (unsigned long long)n);
                    return 1;
                }
                floor_alloc(ct, bits / 512);
            } else if (ct->kind == LIBBLOOM) {
                double bits = (double)n * (-log(p) / (LN2 * LN2));
                if (n < 1000 || n > INT_MAX || bits >= (double)INT_MAX) {
                    fprintf(stderr, "bloom_bench: libbloom cannot hold %llu items at %g "
                                    "(its sizes are ints); skipped\n",
                            (unsigned long long)n, p);
                    ct->skipped = 1;
                    continue;
                }
                memset(&ct->lb, 0, sizeof ct->lb);
                if (bloom_init(&ct->lb, (int)n, p) != 0) {
                    fprintf(stderr, "bloom_bench: bloom_init(%llu, %g) failed\n",
                            (unsigned long long)n, p);
                    return 1;
                }
            } else if (sk_bloom_new(&ct->sk, n, p, ct->layout) != SK_OK) {
                fprintf(stderr, "bloom_bench: sk_bloom_new(%llu, %g) failed\n",
                        (unsigned long long)n, p);
                return 1;
            }
        }

        /* Rows, in print order: the batch operations once per batch size. */
        struct row rows[6 * (NOPS + 4 * MAX_BATCHES)];
        int nrows = 0;
        for (int k = 0; k < ncont; k++) {
            if (contenders[k].skipped)
                continue;
            for (int op = 0; op < NOPS; op++) {
                if (contenders[k].kind != SKETCH && op_is_sketch_only((enum op)op))
                    continue;
                for (int b = 0; b < (op_is_batch((enum op)op) ? nbatches : 1); b++) {
                    struct row *r = &rows[nrows++];
                    memset(r, 0, sizeof *r);
                    r->c = &contenders[k];
                    r->op = (enum op)op;
                    r->batch = batches[b];
                    switch (op) {
                    case OP_ADD_BATCH: snprintf(r->name, sizeof r->name, "add, batch %u", r->batch); break;
                    case OP_ADD_BATCH_MANY_WRITERS: snprintf(r->name, sizeof r->name, "add, b%u, locked", r->batch); break;
                    case OP_PRESENT_BATCH: snprintf(r->name, sizeof r->name, "present, batch %u", r->batch); break;
                    case OP_ABSENT_BATCH: snprintf(r->name, sizeof r->name, "absent, batch %u", r->batch); break;
                    case OP_PRESENT_HASH_BATCH: snprintf(r->name, sizeof r->name, "present, hash b%u", r->batch); break;
                    case OP_ABSENT_HASH_BATCH: snprintf(r->name, sizeof r->name, "absent, hash b%u", r->batch); break;
                    default: snprintf(r->name, sizeof r->name, "%s", op_names[op]); break;
                    }
                    r->ops = op_is_absent((enum op)op) ? absent : n;
                    r->times = xmalloc((size_t)runs * sizeof *r->times);
                    r->cpu = xmalloc((size_t)runs * sizeof *r->cpu);
                }
            }
        }

        /* Adds first (each pass into a cleared filter; the last leaves every
         * filter holding the n keys), then the keys are shuffled, then the
         * queries. */
        for (int phase = 0; phase < 2; phase++) {
            if (phase == 1) {
                double s0 = now_ns();
                shuffle_keys(keys, n, UINT64_C(0x5407f1e) + (uint64_t)ni);
                hash_keys(present_hashes, keys, n);
                hash_keys(absent_hashes, absent_keys, absent);
                fprintf(stderr, "bloom_bench: n = %llu: shuffled and hashed the keys in %.1f s\n",
                        (unsigned long long)n, (now_ns() - s0) / 1e9);
            }
            for (int run = warmup ? -1 : 0; run < runs; run++) {
                double r0 = now_ns();
                for (int i = 0; i < nrows; i++) {
                    struct row *r = &rows[i];
                    if (op_is_add(r->op) != (phase == 0))
                        continue;
                    double ns, cpu_time;
                    batch_size = r->batch;
                    uint64_t result =
                        run_pass(r->c, r->op, keys, n, absent_keys, absent, &ns, &cpu_time);
                    if (run >= 0)
                        record(r, result, ns, cpu_time);
                }
                fprintf(stderr, "bloom_bench: n = %llu: %s run %d/%d done in %.1f s\n",
                        (unsigned long long)n, phase == 0 ? "add" : "query", run + 1, runs,
                        (now_ns() - r0) / 1e9);
            }
        }

        /* The table rows of this n. */
        for (int i = 0; i < nrows; i++)
            summarize(&rows[i]);
        for (int i = 0; i < nrows; i++) {
            struct row *r = &rows[i];
            char speedup[32] = "-", target[32] = "-", verdict[64] = "";
            const struct row *base = NULL;
            for (int j = 0; j < nrows; j++)
                if (rows[j].c->kind == LIBBLOOM && rows[j].op == op_base(r->op))
                    base = &rows[j];
            double ratio = 0;
            if (r->c->kind == SKETCH && base != NULL) {
                ratio = base->median / r->median;
                snprintf(speedup, sizeof speedup, "%.2fx", ratio);
            }
            if (r->c->kind == SKETCH && n == TARGET_N) {
                int batch_query = r->op == OP_PRESENT_BATCH || r->op == OP_ABSENT_BATCH ||
                                  r->op == OP_PRESENT_HASH_BATCH || r->op == OP_ABSENT_HASH_BATCH;
                int ok_speed = base != NULL && ratio >= TARGET_SPEEDUP;
                int ok_ns = !batch_query || r->median <= TARGET_BATCH_NS;
                if (batch_query)
                    snprintf(target, sizeof target, ">=%.0fx, <=%.0f ns", TARGET_SPEEDUP,
                             TARGET_BATCH_NS);
                else
                    snprintf(target, sizeof target, ">=%.0fx", TARGET_SPEEDUP);
                if (ok_speed && ok_ns)
                    snprintf(verdict, sizeof verdict, "met");
                else
                    snprintf(verdict, sizeof verdict, "MISSED (%s%s%s)",
                             ok_speed ? "" : "speedup", !ok_speed && !ok_ns ? ", " : "",
                             ok_ns ? "" : "ns");
            }
            printf("%-10llu %-15s %-20s %4d %9.2f %9.2f %9.2f %8.1f %10s %-17s %s%s\n",
                   (unsigned long long)n, r->c->name, r->name, r->done, r->median,
                   r->min, r->cpu_median, 1e3 / r->median, speedup, target, verdict,
                   r->inconsistent ? " (runs gave different counts!)" : "");
        }
        /* Against the floor: each sketch blocked and split row over the
         * faster floor of its operation (indented, so that report.sh's
         * parser skips it). */
        for (int i = 0; i < nrows; i++) {
            const struct row *r = &rows[i];
            if (r->c->kind != SKETCH || r->c->layout == SK_BLOOM_CLASSIC)
                continue;
            const struct row *best = NULL;
            for (int j = 0; j < nrows; j++)
                if (rows[j].c->kind == FLOOR && rows[j].op == op_base(r->op) &&
                    (best == NULL || rows[j].median < best->median))
                    best = &rows[j];
            if (best != NULL)
                printf("  n = %llu, %-14s %-20s %7.2f ns: %5.2fx the floor (%s, %.2f ns)\n",
                       (unsigned long long)n, r->c->name, r->name, r->median,
                       r->median / best->median, best->c->name, best->median);
        }
        printf("\n");
        fflush(stdout);

        /* Shapes and accuracy. */
        for (int k = 0; k < ncont; k++) {
            struct contender *ct = &contenders[k];
            if (ct->skipped)
                continue;
            if (ct->kind == FLOOR) {
                floor_free(ct);
                continue;
            }
            struct shape *s = &shapes[nshapes++];
            memset(s, 0, sizeof *s);
            snprintf(s->name, sizeof s->name, "%s", ct->name);
            s->n = n;
            uint64_t present_hits = 0, absent_hits = 0, absent_batch_hits = 0;
            int have_batch = 0, batch_sizes_disagree = 0;
            for (int i = 0; i < nrows; i++) {
                if (rows[i].c != ct)
                    continue;
                if (rows[i].op == OP_PRESENT)
                    present_hits = rows[i].result;
                if (rows[i].op == OP_ABSENT)
                    absent_hits = rows[i].result;
                if (rows[i].op == OP_ABSENT_BATCH && rows[i].result != rows[i - 1].result &&
                    rows[i - 1].op == OP_ABSENT_BATCH)
                    batch_sizes_disagree = 1;
                if (rows[i].op == OP_ABSENT_BATCH) {
                    absent_batch_hits = rows[i].result;
                    have_batch = 1;
                }
            }
            /* Queries by hash answer exactly as queries by item. */
            for (int i = 0; i < nrows; i++)
                if (rows[i].c == ct &&
                    (((rows[i].op == OP_ABSENT_HASH || rows[i].op == OP_ABSENT_HASH_BATCH) &&
                      rows[i].result != absent_hits) ||
                     ((rows[i].op == OP_PRESENT_HASH || rows[i].op == OP_PRESENT_HASH_BATCH) &&
                      rows[i].result != present_hits)))
                    batch_sizes_disagree = 1;
            s->false_negatives = n - present_hits;
            s->fp_hits = absent_hits;
            s->measured = (double)absent_hits / (double)absent;
            s->batch_disagrees =
                (have_batch && absent_batch_hits != absent_hits) || batch_sizes_disagree;
            if (ct->kind == LIBBLOOM) {
                snprintf(s->layout, sizeof s->layout, "classic");
                s->bits = (uint64_t)ct->lb.bits;
                s->hashes = (unsigned)ct->lb.hashes;
                s->memory = (double)ct->lb.bytes;
                s->expected = pow(-expm1(-(double)s->hashes * (double)n / (double)s->bits),
                                  (double)s->hashes);
                bloom_free(&ct->lb);
            } else {
                sk_bloom_info info;
                sk_bloom_get_info(ct->sk, &info);
                snprintf(s->layout, sizeof s->layout, "%s",
                         info.layout == SK_BLOOM_BLOCKED ? "blocked"
                         : info.layout == SK_BLOOM_SPLIT ? "split"
                                                         : "classic");
                s->bits = info.bits;
                s->hashes = info.hashes;
                s->memory = (double)info.memory;
                s->expected = sk_bloom_expected_fp_rate(ct->sk, n);
                sk_bloom_free(ct->sk);
                ct->sk = NULL;
            }
        }
        for (int i = 0; i < nrows; i++) {
            free(rows[i].times);
            free(rows[i].cpu);
        }
    }

    printf("Filters after n adds; false positives measured on %llu absent keys\n",
           (unsigned long long)absent);
    double sigma = sqrt(p * (1 - p) / (double)absent);
    printf("(binomial standard error of a measured rate: sigma = %.2g; z = (FP rate - p) / sigma)\n",
           sigma);
    printf("%-10s %-15s %-7s %11s %6s %7s %9s %8s %8s %8s %6s %-8s %-11s %s\n", "n",
           "implementation", "layout", "bits (m)", "hashes", "MiB", "bits/item", "FP hits",
           "FP rate", "expected", "z", "target", "verdict", "false neg.");
    printf("%-10s %-15s %-7s %11s %6s %7s %9s %8s %8s %8s %6s %-8s %-11s %s\n", "----------",
           "---------------", "-------", "-----------", "------", "-------", "---------",
           "--------", "--------", "--------", "------", "--------", "-----------",
           "----------");
    for (int i = 0; i < nshapes; i++) {
        const struct shape *s = &shapes[i];
        char target[16];
        snprintf(target, sizeof target, "<= %g", p);
        double z = (s->measured - p) / sigma;
        printf("%-10llu %-15s %-7s %11llu %6u %7.1f %9.3f %8llu %8.5f %8.5f %6.1f %-8s %-11s "
               "%llu%s\n",
               (unsigned long long)s->n, s->name, s->layout, (unsigned long long)s->bits,
               s->hashes, s->memory / (1024.0 * 1024), s->memory * 8 / (double)s->n,
               (unsigned long long)s->fp_hits, s->measured, s->expected, z, target,
               s->measured <= p ? "met" : z <= 3 ? "met (noise)" : "MISSED",
               (unsigned long long)s->false_negatives,
               s->batch_disagrees ? " (batch and single queries disagree!)" : "");
    }
    printf("\nlibbloom's settings: bloom_init(entries, error) takes bits = entries * "
           "-ln(error) / ln(2)^2\n"
           "(%.3f bits per item at p = %g) and hashes = ceil(ln(2) * bits per item); its two\n"
           "32-bit MurmurHash2 values a, b give the positions (a + i b) mod bits.\n"
           "'expected': (1 - e^(-kn/m))^k for libbloom; sk_bloom_expected_fp_rate (the exact\n"
           "rate of the layout) for sketch.\n",
           -log(p) / (LN2 * LN2), p);
    free(keys);
    free(absent_keys);
    free(present_hashes);
    free(absent_hashes);
    return 0;
}
