/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_lines.c: writes a deterministic file of text lines whose exact number
 * of distinct lines is known by construction, for bench/count_bench.sh.
 *
 * Construction: the file has N lines built from D distinct values. Slots
 * 0..D-1 hold every value 0..D-1 once; slots D..N-1 hold values drawn
 * uniformly from 0..D-1 (repeats). The whole array of N slots is then
 * shuffled (Fisher-Yates), so repeats and first occurrences are spread
 * evenly through the file. Every value occurs at least once and no other
 * value occurs, so the file has exactly D distinct values; and the mapping
 * from a value to its line is injective (below), so exactly D distinct lines.
 *
 * Line of value v:  "user-" NNNNNNNNNN "-" PADDING "\n"
 *   NNNNNNNNNN  a 32-bit bijection of v (xor with the seed, then an
 *               invertible xorshift-multiply mix) as 10 zero-padded decimal
 *               digits: distinct values give distinct numbers;
 *   PADDING     16..31 letters/digits, a function of v alone, so the repeats
 *               of a value are byte-identical lines.
 * Lines average about 40.5 bytes: 40M lines are about 1.6 GB.
 *
 * Usage: gen_lines [-n LINES] [-d DISTINCT] [-s SEED] OUTPUT
 * (defaults 40000000, 10000000, 1; OUTPUT "-" is standard output). On
 * success prints one line on standard output (standard error if the data
 * goes to standard output):
 *     lines=N distinct=D bytes=B seed=S
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define OUT_BUF_SIZE (8u << 20)
#define MAX_LINE 64

/* An integer in [0, n) for n <= 2^32 - 1 (multiply-shift of 32 random bits;
 * the bias, below n / 2^32, is irrelevant here and deterministic). */
static uint32_t below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(((splitmix64(state) >> 32) * n) >> 32);
}

/* An invertible map of 32-bit integers: each step (xor with a right shift of
 * itself, multiplication by an odd constant) is a bijection. */
static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= UINT32_C(0x7feb352d);
    x ^= x >> 15;
    x *= UINT32_C(0x846ca68b);
    x ^= x >> 16;
    return x;
}

static const char pad_alphabet[] = "abcdefghijklmnopqrstuvwxyz012345"; /* 32 symbols */

/* Formats the line of value v into out; returns its length. */
static size_t format_line(char *out, uint32_t v, uint32_t seed32, uint64_t pad_key)
{
    char *p = out;
    memcpy(p, "user-", 5);
    p += 5;
    uint32_t number = mix32(v ^ seed32);
    for (int i = 9; i >= 0; i--) {
        p[i] = (char)('0' + number % 10);
        number /= 10;
    }
    p += 10;
    *p++ = '-';
    uint64_t state = pad_key ^ ((uint64_t)v * UINT64_C(0xd1b54a32d192ed03));
    uint64_t bits = splitmix64(&state);
    unsigned pad_len = 16 + (unsigned)(bits & 15);
    bits >>= 4;
    unsigned left = 12; /* 5-bit symbols left in bits */
    for (unsigned i = 0; i < pad_len; i++) {
        if (left == 0) {
            bits = splitmix64(&state);
            left = 12;
        }
        *p++ = pad_alphabet[bits & 31];
        bits >>= 5;
        left--;
    }
    *p++ = '\n';
    return (size_t)(p - out);
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static unsigned long long parse_count(const char *text, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
        fprintf(stderr, "gen_lines: bad %s '%s'\n", what, text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long long lines = 40000000, distinct = 10000000, seed = 1;
    int c;
    while ((c = getopt(argc, argv, "n:d:s:h")) != -1) {
        switch (c) {
        case 'n': lines = parse_count(optarg, "line count"); break;
        case 'd': distinct = parse_count(optarg, "distinct count"); break;
        case 's': seed = parse_count(optarg, "seed"); break;
        default:
            fprintf(stderr, "Usage: gen_lines [-n LINES] [-d DISTINCT] [-s SEED] OUTPUT\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "Usage: gen_lines [-n LINES] [-d DISTINCT] [-s SEED] OUTPUT\n");
        return 2;
    }
    if (distinct == 0 || distinct > lines || lines > UINT32_MAX) {
        fprintf(stderr, "gen_lines: need 1 <= DISTINCT <= LINES <= %u\n", UINT32_MAX);
        return 2;
    }
    const char *path = argv[optind];
    int to_stdout = strcmp(path, "-") == 0;
    int fd = to_stdout ? STDOUT_FILENO : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "gen_lines: %s: %s\n", path, strerror(errno));
        return 1;
    }

    uint32_t n = (uint32_t)lines, d = (uint32_t)distinct;
    uint32_t *slots = malloc((size_t)n * sizeof *slots);
    char *out = malloc(OUT_BUF_SIZE);
    if (slots == NULL || out == NULL) {
        fprintf(stderr, "gen_lines: out of memory\n");
        return 1;
    }
    uint64_t rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 12345;
    for (uint32_t i = 0; i < d; i++)
        slots[i] = i;
    for (uint32_t i = d; i < n; i++)
        slots[i] = below(&rng, d);
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = below(&rng, i + 1);
        uint32_t t = slots[i];
        slots[i] = slots[j];
        slots[j] = t;
    }

    uint32_t seed32 = (uint32_t)(seed ^ (seed >> 32));
    uint64_t pad_key = splitmix64(&(uint64_t){seed ^ UINT64_C(0xa5a5a5a5)});
    size_t used = 0;
    unsigned long long bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (used > OUT_BUF_SIZE - MAX_LINE) {
            if (write_all(fd, out, used) != 0) {
                fprintf(stderr, "gen_lines: %s: %s\n", path, strerror(errno));
                return 1;
            }
            bytes += used;
            used = 0;
        }
        used += format_line(out + used, slots[i], seed32, pad_key);
    }
    if (write_all(fd, out, used) != 0 || (!to_stdout && close(fd) != 0)) {
        fprintf(stderr, "gen_lines: %s: %s\n", path, strerror(errno));
        return 1;
    }
    bytes += used;
    fprintf(to_stdout ? stderr : stdout, "lines=%llu distinct=%llu bytes=%llu seed=%llu\n",
            lines, distinct, bytes, seed);
    free(slots);
    free(out);
    return 0;
}
