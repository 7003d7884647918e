/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h: what the C benchmarks share: the build they were compiled
 * with (for the header of their tables), clocks, a seeded generator, the
 * median of repeated runs, the machine's CPU model, and the parsing of
 * numeric options.
 */
#ifndef SKETCH_BENCH_UTIL_H
#define SKETCH_BENCH_UTIL_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_COMPILER
#define BENCH_COMPILER "unknown compiler"
#endif
#ifndef BENCH_FLAGS
#define BENCH_FLAGS ""
#endif
#define BENCH_STR2(x) #x
#define BENCH_STR(x) BENCH_STR2(x)
#ifdef BENCH_CONFIG
#define BENCH_CONFIG_NAME BENCH_STR(BENCH_CONFIG)
#else
#define BENCH_CONFIG_NAME "unknown"
#endif

/* Results are summed into it, so that no timed work is optimized away. */
static volatile uint64_t sink;

static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline void *xmalloc(size_t size)
{
    void *p = malloc(size);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of this thread: leaves out the time it waited for a CPU. */
static inline double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..k), which it sorts. */
static inline double median_of(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, compare_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* The CPU's name from /proc/cpuinfo: x86 has "model name"; some ARM
 * kernels have "Model" or "Hardware". */
static inline void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    static const char *keys[] = {"model name", "Model", "Hardware", "cpu model"};
    int best = 4;
    while (fgets(line, sizeof line, f) != NULL) {
        for (int k = 0; k < best; k++) {
            size_t klen = strlen(keys[k]);
            if (strncmp(line, keys[k], klen) != 0)
                continue;
            char *colon = strchr(line, ':');
            if (colon == NULL)
                continue;
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\n")] = '\0';
            snprintf(out, cap, "%s", v);
            best = k;
            break;
        }
    }
    fclose(f);
}

/* The decimal integer that is the whole of s, or usage() (which exits). */
static inline uint64_t bench_parse_u64(const char *s, void (*usage)(void))
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        usage();
    return v;
}

/* The comma-separated integers of arg, into out[0..max): how many there
 * are. usage() (which exits) for one that is not an integer, is past
 * UINT_MAX, or for more than max. */
static inline unsigned bench_parse_list(const char *arg, unsigned *out, unsigned max,
                                        void (*usage)(void))
{
    unsigned n = 0;
    char *copy = strdup(arg), *save = NULL;
    if (copy == NULL)
        usage();
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            usage();
        uint64_t v = bench_parse_u64(tok, usage);
        if (v > UINT_MAX)
            usage();
        out[n++] = (unsigned)v;
    }
    free(copy);
    return n;
}

#endif
