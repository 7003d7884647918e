/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_file_failures.c: unit tests of the files the library must
 * refuse, and of opens and saves that fail, with cmocka: every truncation,
 * every damaged bit of the header and layer table, fields out of range, a
 * damaged bit array, files that are not filters, paths that cannot be
 * read or written, and random files, none of which may crash it.
 *
 * Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 * Where a test needs a file whose header passes the checksum but carries a
 * bad field, it recomputes the checksum as docs/bloom-format.md defines it:
 * XXH32, seed 0, of bytes 0..31 followed by the layer table.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

static int is_one_of(int rc, int a, int b)
{
    return rc == a || rc == b;
}

/* Every shorter prefix of a saved file is refused as truncated (or, for the
 * empty file, as not a filter), never a crash. */
static void test_every_truncation(void **state)
{
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *f = kind == 0   ? new_filter(100, 0.01, SK_BLOOM_CLASSIC)
                      : kind == 1 ? new_explicit(2048, 3, SK_BLOOM_BLOCKED)
                                  : new_scalable(50, 0.01, 2, SK_BLOOM_BLOCKED);
        add_range(f, 0, 500);
        if (kind == 2)
            assert_true(info_of(f).layers >= 3);
        char p[PATH_MAX];
        path_of(p, "trunc.bloom");
        save_ok(f, p);
        size_t len;
        uint8_t *bytes = read_whole(p, &len);
        free(bytes);
        int fd = open(p, O_RDWR);
        assert_true(fd >= 0);
        for (size_t cut = len; cut-- > 0;) {
            assert_int_equal(ftruncate(fd, (off_t)cut), 0);
            for (unsigned flags = 0; flags <= SK_BLOOM_VERIFY; flags++) {
                sk_bloom *g = (sk_bloom *)&g;
                int rc = sk_bloom_open(&g, p, flags, NULL);
                if (!is_one_of(rc, SK_ETRUNCATED, SK_EFORMAT) ||
                    (rc == SK_EFORMAT && cut != 0)) {
                    print_error("kind %d: %zu of %zu bytes: %s\n", kind, cut, len,
                                sk_strerror(rc));
                    fail();
                }
                assert_null(g);
            }
        }
        close(fd);
        unlink(p);
        sk_bloom_free(f);
    }
}

static void test_damaged_header_and_table(void **state)
{
    int failures = 0;
    for (int kind = 0; kind < 2; kind++) {
        sk_bloom *f = kind == 0 ? new_filter(1000, 0.01, SK_BLOOM_CLASSIC)
                                : new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
        add_range(f, 0, 1000);
        char p[PATH_MAX];
        path_of(p, "head.bloom");
        save_ok(f, p);
        size_t len;
        uint8_t *bytes = read_whole(p, &len);
        unsigned layers = sk_load_le32(bytes + SK_BF_OFF_LAYERS);
        size_t table_end = SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * layers;
        for (size_t off = 0; off < table_end; off++) {
            int bad_bits = 0, last_rc = 0;
            for (int bit = 0; bit < 8; bit++) {
                bytes[off] ^= (uint8_t)(1u << bit);
                for (unsigned flags = 0; flags <= SK_BLOOM_VERIFY; flags++) {
                    int rc = open_bytes(bytes, len, flags, NULL);
                    if (!damage_ok(off, rc)) {
                        bad_bits |= 1 << bit;
                        last_rc = rc;
                    }
                }
                bytes[off] ^= (uint8_t)(1u << bit);
            }
            if (bad_bits) {
                print_error("%s: byte %zu (%s) with bits 0x%02x flipped: %s\n",
                            kind == 0 ? "classic" : "scalable blocked", off,
                            off < SK_BF_HEADER_SIZE ? "header" : "layer table", bad_bits,
                            sk_strerror(last_rc));
                failures++;
            }
        }
        assert_int_equal(open_bytes(bytes, len, SK_BLOOM_VERIFY, NULL), SK_OK);
        free(bytes);
        unlink(p);
        sk_bloom_free(f);
    }
    assert_int_equal(failures, 0);
}

/* Fields out of range in a header whose checksum matches. */
static void test_bad_fields_with_valid_checksum(void **state)
{
    sk_bloom *f = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(f, 0, 250);
    assert_int_equal(info_of(f).layers, 2);
    size_t len;
    uint8_t *orig = saved_bytes(f, &len);
    uint8_t *bytes = malloc(len);
    assert_non_null(bytes);
    const size_t e0 = SK_BF_HEADER_SIZE, e1 = SK_BF_HEADER_SIZE + SK_BF_LAYER_SIZE;
    double nan = NAN, big = 0.6, tiny = 1e-16, neg = -0.01;
    static const struct {
        const char *what;
        size_t off;
        int width; /* 1, 4 or 8 bytes; 0: a double from `dbl` */
        uint64_t value;
        int expect;
    } cases[] = {
        {"layout 2 (auto)", 5, 1, 2, SK_ECORRUPT},
        {"layout 255", 5, 1, 255, SK_ECORRUPT},
        {"hash 0", 6, 1, 0, SK_ECORRUPT},
        {"hash 2", 6, 1, 2, SK_ECORRUPT},
        {"byte 7 = 1 (a dump) with a file's offsets", 7, 1, 1, SK_ECORRUPT},
        {"byte 7 = 2", 7, 1, 2, SK_ECORRUPT},
        {"0 layers", 8, 4, 0, SK_ECORRUPT},
        {"65 layers", 8, 4, 65, SK_ECORRUPT},
        {"expansion 0 with 2 layers", 12, 4, 0, SK_ECORRUPT},
        {"expansion past the limit", SK_BF_OFF_EXPANSION, 4, SK_BLOOM_MAX_EXPANSION + 1, SK_ECORRUPT},
        {"reserved bytes 24..31 not 0", 24, 8, 1, SK_ECORRUPT},
        {"reserved bytes 24..31 not 0 (high)", 24, 8, UINT64_C(1) << 63, SK_ECORRUPT},
        {"layer 0: 0 bits", e0, 8, 0, SK_ECORRUPT},
        {"layer 0: bits not a multiple of 512", e0, 8, 1000, SK_ECORRUPT},
        {"layer 0: bits above the maximum", e0, 8, (UINT64_C(1) << 48) + 512, SK_ECORRUPT},
        {"layer 0: 0 hashes", e0 + SK_BF_LAYER_OFF_HASHES, 4, 0, SK_ECORRUPT},
        {"layer 0: 65 hashes", e0 + SK_BF_LAYER_OFF_HASHES, 4, 65, SK_ECORRUPT},
        {"layer 0: reserved not 0", e0 + SK_BF_LAYER_OFF_RESERVED, 4, 1, SK_ECORRUPT},
        {"layer 0: offset 0", e0 + SK_BF_LAYER_OFF_ARRAY, 8, 0, SK_ECORRUPT},
        {"layer 0: offset 4095", e0 + SK_BF_LAYER_OFF_ARRAY, 8, 4095, SK_ECORRUPT},
        {"layer 0: offset 8192", e0 + SK_BF_LAYER_OFF_ARRAY, 8, 8192, SK_ECORRUPT},
        {"layer 1: bits 512 more", e1, 8, 0, SK_ETRUNCATED}, /* value set below */
        {"layer 1: offset one page later", e1 + SK_BF_LAYER_OFF_ARRAY, 8, 0, SK_ECORRUPT},
        {"layer 1: offset of layer 0", e1 + SK_BF_LAYER_OFF_ARRAY, 8, SK_BF_FILE_ALIGN, SK_ECORRUPT},
        {"layer 1: 0 hashes", e1 + SK_BF_LAYER_OFF_HASHES, 4, 0, SK_ECORRUPT},
        {"layer 1: reserved not 0", e1 + SK_BF_LAYER_OFF_RESERVED, 4, 1u << 31, SK_ECORRUPT},
        {"layer 1: huge bits", e1, 8, UINT64_C(1) << 48, SK_ETRUNCATED},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bytes, orig, len);
        uint64_t value = cases[i].value;
        if (strcmp(cases[i].what, "layer 1: bits 512 more") == 0)
            value = sk_load_le64(orig + e1) + 512;
        if (strcmp(cases[i].what, "layer 1: offset one page later") == 0)
            value = sk_load_le64(orig + e1 + SK_BF_LAYER_OFF_ARRAY) + SK_BF_FILE_ALIGN;
        if (cases[i].width == 1)
            bytes[cases[i].off] = (uint8_t)value;
        else if (cases[i].width == 4)
            sk_store_le32(bytes + cases[i].off, (uint32_t)value);
        else
            sk_store_le64(bytes + cases[i].off, value);
        fix_checksum(bytes);
        int rc = open_bytes(bytes, len, 0, NULL);
        if (rc != cases[i].expect) {
            print_error("%s: %s, expected %s\n", cases[i].what, sk_strerror(rc),
                        sk_strerror(cases[i].expect));
            failures++;
        }
    }
    /* Rates out of range. */
    double rates[] = {nan, big, tiny, neg, INFINITY};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        memcpy(bytes, orig, len);
        uint64_t u;
        memcpy(&u, &rates[i], sizeof u);
        sk_store_le64(bytes + SK_BF_OFF_FP_RATE, u);
        fix_checksum(bytes);
        int rc = open_bytes(bytes, len, 0, NULL);
        if (rc != SK_ECORRUPT) {
            print_error("rate %g: %s\n", rates[i], sk_strerror(rc));
            failures++;
        }
    }
    /* The reserved last 4 bytes of the header, outside the checksum. */
    memcpy(bytes, orig, len);
    sk_store_le32(bytes + SK_BF_OFF_RESERVED2, 0xdeadbeef);
    int rc = open_bytes(bytes, len, SK_BLOOM_VERIFY, NULL);
    if (rc != SK_ECORRUPT && rc != SK_ECHECKSUM) {
        print_error("reserved bytes 36..39 not 0: %s, expected %s\n", sk_strerror(rc),
                    sk_strerror(SK_ECORRUPT));
        failures++;
    }
    /* The untouched file opens. */
    assert_int_equal(open_bytes(orig, len, SK_BLOOM_VERIFY, NULL), SK_OK);
    free(bytes);
    free(orig);
    sk_bloom_free(f);
    assert_int_equal(failures, 0);
}

/* A damaged bit array is found by SK_BLOOM_VERIFY only. */
static void test_damaged_bit_array(void **state)
{
    sk_bloom *f = new_scalable(200, 0.01, 2, SK_BLOOM_CLASSIC);
    add_range(f, 0, 1000);
    unsigned layers = info_of(f).layers;
    assert_true(layers >= 3);
    size_t len;
    uint8_t *bytes = saved_bytes(f, &len);
    uint64_t seed = 99;
    for (unsigned l = 0; l < layers; l++) {
        const uint8_t *e = bytes + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * l;
        uint64_t off = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), size = (sk_load_le64(e) + 63) / 64 * 8;
        uint64_t where[] = {off, off + size - 1, off + splitmix64(&seed) % size};
        for (size_t w = 0; w < 3; w++) {
            bytes[where[w]] ^= 0x10;
            sk_bloom *g = NULL;
            assert_int_equal(open_bytes(bytes, len, 0, &g), SK_OK);
            assert_same_info(f, g);
            sk_bloom_free(g);
            assert_int_equal(open_bytes(bytes, len, SK_BLOOM_VERIFY, NULL), SK_ECHECKSUM);
            bytes[where[w]] ^= 0x10;
        }
    }
    assert_int_equal(open_bytes(bytes, len, SK_BLOOM_VERIFY, NULL), SK_OK);
    free(bytes);
    sk_bloom_free(f);
}

static void test_open_errors(void **state)
{
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_BLOCKED);
    add_range(f, 0, 100);
    char p[PATH_MAX], missing[PATH_MAX];
    path_of(p, "errors.bloom");
    path_of(missing, "no-such-file.bloom");
    save_ok(f, p);
    size_t len;
    uint8_t *bytes = read_whole(p, &len);
    sk_bloom *g = (sk_bloom *)&g;

    assert_int_equal(sk_bloom_open(NULL, p, 0, NULL), SK_EINVAL);
    assert_int_equal(sk_bloom_open(&g, NULL, 0, NULL), SK_EINVAL);
    assert_int_equal(sk_bloom_open(&g, p, 8, NULL), SK_EINVAL);
    assert_int_equal(sk_bloom_open(&g, p, SK_BLOOM_VERIFY | 0x80000000u, NULL), SK_EINVAL);

    /* Wrong versions. */
    for (int v = 0; v < 256; v += 1 + (v > 4) * 50) {
        if (v == SK_BF_VERSION_DUMP || v == SK_BF_VERSION_FILE)
            continue;
        bytes[4] = (uint8_t)v;
        fix_checksum(bytes);
        /* Version 3 is known, and only for the split layout. */
        assert_int_equal(open_bytes(bytes, len, 0, NULL),
                         v == SK_BF_VERSION_SPLIT ? SK_ECORRUPT : SK_EVERSION);
    }
    /* A file of version 1 has no chunk sums: a version 2 file called
     * version 1 is corrupt. */
    bytes[4] = SK_BF_VERSION_DUMP;
    fix_checksum(bytes);
    assert_int_equal(open_bytes(bytes, len, 0, NULL), SK_ECORRUPT);
    bytes[4] = SK_BF_VERSION_FILE;
    fix_checksum(bytes);
    /* Bad magic: another sketch's, or text. */
    static const char *magics[] = {"SKHL", "skbf", "SKB\0", "\0\0\0\0", "HYLL"};
    for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++) {
        uint8_t copy[4];
        memcpy(copy, bytes, 4);
        memcpy(bytes, magics[i], 4);
        assert_int_equal(open_bytes(bytes, len, 0, NULL), SK_EFORMAT);
        assert_int_equal(open_bytes(bytes, 3, 0, NULL), memcmp(magics[i], "SKB", 3) == 0 ? SK_ETRUNCATED : SK_EFORMAT);
        memcpy(bytes, copy, 4);
    }
    assert_int_equal(open_bytes("hello world, this is not a filter at all: forty bytes or more",
                                60, 0, NULL), SK_EFORMAT);
    /* Empty file. */
    int rc = open_bytes("", 0, 0, NULL);
    assert_true(rc == SK_EFORMAT || rc == SK_ETRUNCATED);
    /* Trailing bytes, one or a page. */
    uint8_t *longer = calloc(1, len + SK_BF_FILE_ALIGN);
    assert_non_null(longer);
    memcpy(longer, bytes, len);
    assert_int_equal(open_bytes(longer, len + 1, 0, NULL), SK_ETRUNCATED);
    assert_int_equal(open_bytes(longer, len + 8, SK_BLOOM_VERIFY, NULL), SK_ETRUNCATED);
    assert_int_equal(open_bytes(longer, len + SK_BF_FILE_ALIGN, 0, NULL), SK_ETRUNCATED);
    assert_int_equal(open_bytes(longer, len, SK_BLOOM_VERIFY, NULL), SK_OK);
    free(longer);
    /* A directory. */
    errno = 0;
    g = (sk_bloom *)&g;
    assert_int_equal(sk_bloom_open(&g, tmpdir, 0, NULL), SK_EIO);
    assert_null(g);
    assert_int_equal(errno, EISDIR);
    /* A missing file. */
    errno = 0;
    g = (sk_bloom *)&g;
    assert_int_equal(sk_bloom_open(&g, missing, 0, NULL), SK_EIO);
    assert_int_equal(errno, ENOENT);
    assert_null(g);
    /* A file in a missing directory. */
    char deep[PATH_MAX];
    path_of(deep, "no-such-dir/x.bloom");
    errno = 0;
    assert_int_equal(sk_bloom_open(&g, deep, 0, NULL), SK_EIO);
    assert_int_equal(errno, ENOENT);
    /* An unreadable file (meaningless as root). */
    if (geteuid() != 0) {
        assert_int_equal(chmod(p, 0), 0);
        errno = 0;
        assert_int_equal(sk_bloom_open(&g, p, 0, NULL), SK_EIO);
        assert_int_equal(errno, EACCES);
        assert_int_equal(chmod(p, 0600), 0);
    }
    free(bytes);
    unlink(p);
    sk_bloom_free(f);
}

static int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return count;
}

static void test_save_errors(void **state)
{
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_CLASSIC);
    add_range(f, 0, 100);
    char p[PATH_MAX], dir[PATH_MAX];
    path_of(p, "no-such-dir/f.bloom");
    path_of(dir, "no-such-dir");
    int before = dir_entries(tmpdir);
    errno = 0;
    assert_int_equal(sk_bloom_save(f, p), SK_EIO);
    assert_int_equal(errno, ENOENT);
    struct stat st;
    assert_int_equal(stat(p, &st), -1);
    assert_int_equal(stat(dir, &st), -1);
    assert_int_equal(dir_entries(tmpdir), before);
    /* Over a directory: an error, and no temporary file left behind. */
    path_of(dir, "a-directory");
    assert_int_equal(mkdir(dir, 0700), 0);
    before = dir_entries(tmpdir);
    errno = 0;
    assert_int_equal(sk_bloom_save(f, dir), SK_EIO);
    assert_true(errno != 0);
    assert_int_equal(dir_entries(tmpdir), before);
    assert_int_equal(dir_entries(dir), 0);
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(sk_bloom_save(NULL, p), SK_EINVAL);
    assert_int_equal(sk_bloom_save(f, NULL), SK_EINVAL);
    sk_bloom_free(f);
}

/* Random files behind a valid magic, half of them with a plausible header
 * and layer table whose checksum matches, and random damage to real files:
 * each gives a filter or an error; under AddressSanitizer this also shows
 * that nothing reads outside the file. */
static void test_random_files_never_crash(void **state)
{
    uint64_t seed = 2024;
    enum { MAX_SIZE = 5 * SK_BF_FILE_ALIGN };
    uint8_t *buf = malloc(MAX_SIZE);
    assert_non_null(buf);
    char p[PATH_MAX];
    path_of(p, "random.bloom");

    sk_bloom *real = new_scalable(100, 0.05, 2, SK_BLOOM_CLASSIC);
    add_range(real, 0, 300);
    save_ok(real, p);
    size_t real_len;
    uint8_t *real_bytes = read_whole(p, &real_len);
    assert_true(real_len <= MAX_SIZE);
    sk_bloom_free(real);

    int opened = 0;
    for (int round = 0; round < 2000; round++) {
        size_t len;
        int style = round % 4;
        if (style == 3) {
            /* A real file with a few random bytes changed and a random length. */
            len = real_len;
            memcpy(buf, real_bytes, len);
            int changes = 1 + (int)(splitmix64(&seed) % 4);
            for (int i = 0; i < changes; i++)
                buf[splitmix64(&seed) % len] = (uint8_t)splitmix64(&seed);
            if (splitmix64(&seed) % 2 &&
                (len - SK_BF_HEADER_SIZE) / SK_BF_LAYER_SIZE >= sk_load_le32(buf + SK_BF_OFF_LAYERS))
                fix_checksum(buf);
            if (splitmix64(&seed) % 3 == 0)
                len = splitmix64(&seed) % (real_len + 100);
            if (len > real_len)
                memset(buf + real_len, 0, len - real_len);
        } else {
            len = splitmix64(&seed) % MAX_SIZE;
            if (style == 0)
                len %= 200;
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)splitmix64(&seed);
            if (len >= 4)
                memcpy(buf, "SKBF", 4);
            if (style == 2 && len >= SK_BF_HEADER_SIZE) {
                /* Plausible: right version, fields in range, offsets that
                 * chain, a checksum that matches. */
                unsigned layers = 1 + (unsigned)(splitmix64(&seed) % 3);
                int blocked = splitmix64(&seed) % 2 == 0;
                buf[4] = 1;
                buf[5] = blocked ? 0 : 1;
                buf[6] = 1;
                buf[7] = 0;
                sk_store_le32(buf + SK_BF_OFF_LAYERS, layers);
                sk_store_le32(buf + SK_BF_OFF_EXPANSION, layers > 1 || splitmix64(&seed) % 2
                                         ? 1 + (uint32_t)(splitmix64(&seed) % 4) : 0);
                double rate = splitmix64(&seed) % 4 == 0 ? 0 : 0.01;
                uint64_t u;
                memcpy(&u, &rate, sizeof u);
                sk_store_le64(buf + SK_BF_OFF_FP_RATE, u);
                memset(buf + SK_BF_OFF_CHUNK_SHIFT, 0, 16);
                uint64_t off = SK_BF_FILE_ALIGN;
                size_t table_end = SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * layers;
                if (table_end <= len) {
                    for (unsigned l = 0; l < layers; l++) {
                        uint8_t *e = buf + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * l;
                        uint64_t bits = blocked ? 512 * (1 + splitmix64(&seed) % 24)
                                                : 1 + splitmix64(&seed) % 12000;
                        sk_store_le64(e, bits);
                        sk_store_le32(e + SK_BF_LAYER_OFF_HASHES, 1 + (uint32_t)(splitmix64(&seed) % 64));
                        sk_store_le32(e + SK_BF_LAYER_OFF_RESERVED, 0);
                        sk_store_le64(e + SK_BF_LAYER_OFF_CAPACITY, splitmix64(&seed) % 3000);
                        sk_store_le64(e + SK_BF_LAYER_OFF_COUNT, splitmix64(&seed) % 4000);
                        sk_store_le64(e + SK_BF_LAYER_OFF_ARRAY, splitmix64(&seed) % 8 ? off : off + 8);
                        off = (off + (bits + 63) / 64 * 8 + SK_BF_FILE_ALIGN - 1) / SK_BF_FILE_ALIGN * SK_BF_FILE_ALIGN;
                    }
                    /* Usually the exact length the table implies. */
                    uint64_t last = sk_load_le64(buf + table_end - SK_BF_LAYER_SIZE + 32) +
                                    (sk_load_le64(buf + table_end - SK_BF_LAYER_SIZE) + 63) / 64 * 8;
                    if (splitmix64(&seed) % 4 != 0 && last <= MAX_SIZE && last >= table_end) {
                        if (last > len)
                            for (size_t i = len; i < last; i++)
                                buf[i] = (uint8_t)splitmix64(&seed);
                        len = (size_t)last;
                    }
                    fix_checksum(buf);
                }
            }
        }
        sk_bloom *f = NULL;
        int rc = open_bytes(buf, len, round % 8 == 0 ? SK_BLOOM_VERIFY : 0, &f);
        if (rc == SK_OK) {
            opened++;
            sk_bloom_info info = info_of(f);
            assert_true(info.layers >= 1 && info.memory >= info.array_bytes);
            for (uint64_t key = 0; key < 50; key++)
                has_key(f, key);
            sk_bloom_estimate_items(f);
            sk_bloom_expected_fp_rate(f, 10);
            for (uint64_t key = 0; key < 50; key++) {
                int a = add_key(f, key);
                assert_true(a == 0 || a == 1 || a == SK_EFULL || a == SK_ENOMEM);
                if (a >= 0)
                    assert_int_equal(has_key(f, key), 1);
            }
            sk_bloom_free(f);
        } else {
            assert_true(rc < 0 && rc != SK_EINVAL && rc != SK_EIO);
        }
    }
    /* The plausible ones do open sometimes, so the deep paths are reached. */
    assert_true(opened > 50);
    free(buf);
    free(real_bytes);
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_damaged_header_and_table),
        cmocka_unit_test(test_bad_fields_with_valid_checksum),
        cmocka_unit_test(test_damaged_bit_array),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_save_errors),
        cmocka_unit_test(test_random_files_never_crash),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
