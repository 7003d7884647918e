/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_aging_bloom_format.c: the aging Bloom filter's serialized form and
 * files, with cmocka (docs/aging-bloom.md): the round trip byte for byte,
 * with the state that makes later adds agree; every truncation, every byte
 * changed, each header field made inconsistent and generations of the
 * wrong shape or contents, all refused with their own error.
 *
 * `test_aging_bloom_format --write-seeds DIR` writes the fuzz seeds
 * (fuzz/corpus/aging_bloom) instead of testing.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <math.h>
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

#include "aging_bloom_test_util.h"
#include "common/format.h"

/* The checksum of docs/aging-bloom.md made right after a change. */
static void fix_checksum(uint8_t *buf, size_t len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, buf, SK_AB_OFF_CHECKSUM);
    XXH3_64bits_update(&state, buf + SK_AB_HEADER_SIZE, len - SK_AB_HEADER_SIZE);
    sk_store_le64(buf + SK_AB_OFF_CHECKSUM, XXH3_64bits_digest(&state));
}

static uint64_t bits_of(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static int parse(const uint8_t *buf, size_t len)
{
    sk_aging_bloom *f = NULL;
    int rc = sk_aging_bloom_deserialize(&f, buf, len, NULL);
    assert_true(rc == SK_OK ? f != NULL : f == NULL);
    sk_aging_bloom_free(f);
    return rc;
}

/* A filter in each mode with something in every generation, a burst for
 * the time window. */
static sk_aging_bloom *filled(uint64_t window)
{
    sk_aging_bloom *f = make(300, 0.01, 4, window);
    for (uint64_t i = 0; i < 550; i++)
        add(f, i, i);
    for (uint64_t i = 0; window && i < 300; i++)
        add(f, 10000 + i, 520);
    return f;
}

static void test_serialize_round_trip(void **state)
{
    char dir[] = "/tmp/sk_aging_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.skab", dir);
    for (uint64_t window = 0; window <= 500; window += 500) {
        sk_aging_bloom *f = filled(window), *g, *h;
        size_t len, len2;
        uint8_t *buf = bytes_of(f, &len);
        assert_memory_equal(buf, SK_AB_MAGIC, 4);
        assert_int_equal(sk_aging_bloom_serialize(f, buf, len - 1, &len2), SK_ENOSPACE);
        assert_int_equal(sk_aging_bloom_deserialize(&g, buf, len, NULL), SK_OK);
        free(buf);
        assert_same_bytes(f, g);
        /* The state came along: the same adds give the same bytes. */
        for (uint64_t i = 600; i < 900; i++)
            assert_int_equal(add(f, i, i), add(g, i, i));
        assert_same_bytes(f, g);
        assert_int_equal(sk_aging_bloom_save(f, path), SK_OK);
        assert_int_equal(sk_aging_bloom_open(&h, path, NULL), SK_OK);
        assert_same_bytes(f, h);
        sk_aging_bloom_free(f);
        sk_aging_bloom_free(g);
        sk_aging_bloom_free(h);
    }
    sk_aging_bloom *f;
    assert_int_equal(sk_aging_bloom_open(&f, "/nonexistent/x", NULL), SK_EIO);
    assert_null(f);
    unlink(path);
    rmdir(dir);
}

static void test_damage_refused(void **state)
{
    for (uint64_t window = 0; window <= 500; window += 500) {
        sk_aging_bloom *f = filled(window);
        size_t len;
        uint8_t *buf = bytes_of(f, &len);
        uint8_t *bad = malloc(len + 1);
        assert_non_null(bad);
        /* Every truncation, and a byte more. */
        for (size_t n = 0; n < len; n++)
            assert_int_equal(parse(buf, n), n < 4 ? SK_EFORMAT : SK_ETRUNCATED);
        memcpy(bad, buf, len);
        bad[len] = 0;
        assert_int_equal(parse(bad, len + 1), SK_ETRUNCATED);
        /* Any byte changed: the magic, the version, a length, or else the
         * checksum tells. */
        for (size_t i = 0; i < len; i++) {
            memcpy(bad, buf, len);
            bad[i] ^= 0x10;
            int rc = parse(bad, len);
            assert_true(i < 4 ? rc == SK_EFORMAT
                        : i == SK_AB_OFF_VERSION ? rc == SK_EVERSION
                                                 : rc == SK_ECHECKSUM || rc == SK_ETRUNCATED);
        }
        /* Each field made inconsistent, its checksum right. */
        uint64_t epoch = sk_load_le64(buf + SK_AB_OFF_NEWEST_EPOCH);
        struct {
            size_t at, bytes;
            uint64_t value;
        } fields[] = {
            {SK_AB_OFF_LAYOUT, 1, 3},
            /* a layout the generations lack (they are split) */
            {SK_AB_OFF_LAYOUT, 1, SK_BF_LAYOUT_CLASSIC},
            {SK_AB_OFF_LAYOUT, 1, SK_BF_LAYOUT_BLOCKED},
            {SK_AB_OFF_GENERATIONS, 1, 1},
            {SK_AB_OFF_GENERATIONS, 1, 65},
            {SK_AB_OFF_NEWEST_INDEX, 1, 4},
            {SK_AB_OFF_NEWEST_INDEX, 1, buf[SK_AB_OFF_NEWEST_INDEX] ^ 1},
            {SK_AB_OFF_CAPACITY, 8, 0},
            {SK_AB_OFF_CAPACITY, 8, 600}, /* a share the generations are not sized for */
            {SK_AB_OFF_FP_RATE, 8, 0},
            {SK_AB_OFF_FP_RATE, 8, bits_of(0.011)},
            {SK_AB_OFF_FP_RATE, 8, bits_of(0.75)},
            {SK_AB_OFF_FP_RATE, 8, bits_of(NAN)},
            {SK_AB_OFF_WINDOW, 8, window ? 0 : 500},
            {SK_AB_OFF_WINDOW, 8, UINT64_MAX},
            {SK_AB_OFF_SPAN, 8, sk_load_le64(buf + SK_AB_OFF_SPAN) + 1},
            {SK_AB_OFF_NEWEST_EPOCH, 8, epoch + 1},
            /* count: the adds say otherwise (a time window cannot tell) */
            {SK_AB_OFF_NEWEST_EPOCH, 8, epoch + (window ? 0 : 4)},
            {SK_AB_OFF_NEWEST_EPOCH, 8, window ? UINT64_MAX : 0}, /* past any time */
            {SK_AB_OFF_ADDS, 8, window ? 1 : 200}, /* count: another epoch */
            {SK_AB_OFF_ADDS, 8, window ? 0 : 501}, /* count: the newest took fewer */
        };
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            memcpy(bad, buf, len);
            for (size_t b = 0; b < fields[i].bytes; b++)
                bad[fields[i].at + b] = (uint8_t)(fields[i].value >> (8 * b));
            if (memcmp(bad, buf, len) == 0)
                continue; /* the case does not apply to this mode */
            fix_checksum(bad, len);
            int rc = parse(bad, len);
            if (rc != SK_ECORRUPT)
                fail_msg("window %llu, field %zu: %d", (unsigned long long)window, i, rc);
        }
        memcpy(bad, buf, len);
        bad[SK_AB_OFF_VERSION] = 2;
        fix_checksum(bad, len);
        assert_int_equal(parse(bad, len), SK_EVERSION);
        /* A generation's dump of another shape, its length right: a filter
         * sized for another share, in place of generation 0. */
        sk_aging_bloom *o = make(600, 0.01, 4, window);
        size_t olen, at = SK_AB_HEADER_SIZE + SK_AB_GEN_OFF_DUMP;
        uint8_t *obuf = bytes_of(o, &olen);
        size_t g0 = sk_load_le64(buf + SK_AB_HEADER_SIZE);
        size_t o0 = sk_load_le64(obuf + SK_AB_HEADER_SIZE);
        uint8_t *mixed = malloc(len - g0 + o0);
        memcpy(mixed, buf, SK_AB_HEADER_SIZE);
        memcpy(mixed + SK_AB_HEADER_SIZE, obuf + SK_AB_HEADER_SIZE, SK_AB_GEN_OFF_DUMP + o0);
        memcpy(mixed + at + o0, buf + at + g0, len - at - g0);
        fix_checksum(mixed, len - g0 + o0);
        assert_int_equal(parse(mixed, len - g0 + o0), SK_ECORRUPT);
        free(mixed);
        free(obuf);
        sk_aging_bloom_free(o);
        /* A generation the ring has not reached, not empty: items in epochs
         * 0 and 1, and the header says epoch 0 is the newest. */
        o = make(300, 0.01, 4, window);
        for (uint64_t i = 0; i < 150; i++)
            add(o, i, i * 2);
        obuf = bytes_of(o, &olen);
        assert_int_equal(obuf[SK_AB_OFF_NEWEST_INDEX], 1);
        obuf[SK_AB_OFF_NEWEST_INDEX] = 0;
        sk_store_le64(obuf + SK_AB_OFF_NEWEST_EPOCH, 0);
        sk_store_le64(obuf + SK_AB_OFF_ADDS, window ? 0 : 100);
        fix_checksum(obuf, olen);
        assert_int_equal(parse(obuf, olen), SK_ECORRUPT);
        free(obuf);
        sk_aging_bloom_free(o);
        free(bad);
        free(buf);
        sk_aging_bloom_free(f);
    }
    sk_aging_bloom *f;
    assert_int_equal(sk_aging_bloom_deserialize(NULL, "SKAB", 4, NULL), SK_EINVAL);
    assert_int_equal(sk_aging_bloom_deserialize(&f, NULL, 4, NULL), SK_EINVAL);
}

/* The fuzz seeds: control byte 1 (the checksum made right) and the bytes
 * after the magic, of filters of each mode. */
static int write_seeds(const char *dir)
{
    struct {
        const char *name;
        uint64_t capacity, window, adds;
        unsigned g;
    } seeds[] = {{"count-empty", 30, 0, 0, 4},        {"count-rotated", 30, 0, 95, 4},
                 {"count-g2", 10, 0, 25, 2},          {"time-empty", 30, 100, 0, 4},
                 {"time-late-items", 30, 100, 60, 4}, {"time-burst-layers", 20, 100, 200, 3}};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        sk_aging_bloom *f = make(seeds[s].capacity, 0.1, seeds[s].g, seeds[s].window);
        for (uint64_t i = 0; i < seeds[s].adds; i++)
            add(f, i, strstr(seeds[s].name, "burst") ? 40 : i * 3 - i % 7 * 5 + 50);
        size_t len;
        uint8_t *buf = bytes_of(f, &len);
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, seeds[s].name);
        FILE *out = fopen(path, "wb");
        if (out == NULL || fputc(1, out) == EOF || fwrite(buf + 4, 1, len - 4, out) != len - 4 ||
            fclose(out) != 0) {
            perror(path);
            return 1;
        }
        free(buf);
        sk_aging_bloom_free(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
        return write_seeds(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_damage_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
