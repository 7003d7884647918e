/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_test_util.c: what the Bloom filter unit tests share (see
 * bloom_test_util.h), compiled into each of them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"
#include "bloom_test_util.h"

char tmpdir[PATH_MAX - 64];

void path_of(char *buf, const char *name)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

int setup_dir(void **state)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    int n = snprintf(tmpdir, sizeof tmpdir, "%s/sketch-test-bloom-XXXXXX", base);
    if (n < 0 || (size_t)n >= sizeof tmpdir)
        return -1;
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

int teardown_dir(void **state)
{
    DIR *d = opendir(tmpdir);
    if (d != NULL) {
        struct dirent *e;
        char p[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (snprintf(p, sizeof p, "%s/%.60s", tmpdir, e->d_name) >= (int)sizeof p)
                continue;
            if (unlink(p) != 0)
                rmdir(p);
        }
        closedir(d);
    }
    return rmdir(tmpdir);
}

/* Adds keys [from, to); returns how many adds returned 1. */
uint64_t add_range(sk_bloom *f, uint64_t from, uint64_t to)
{
    uint64_t changed = 0;
    for (uint64_t key = from; key < to; key++) {
        int rc = add_key(f, key);
        assert_true(rc == 0 || rc == 1);
        changed += (uint64_t)rc;
    }
    return changed;
}

/* Adds keys [from, to) through sk_bloom_add_batch, 1000 at a time. */
void add_range_batch(sk_bloom *f, uint64_t from, uint64_t to)
{
    static uint64_t keys[1000];
    static const void *items[1000];
    static size_t lens[1000];
    while (from < to) {
        size_t n = to - from < 1000 ? (size_t)(to - from) : 1000;
        for (size_t i = 0; i < n; i++) {
            keys[i] = from + i;
            items[i] = &keys[i];
            lens[i] = sizeof keys[i];
        }
        assert_int_equal(sk_bloom_add_batch(f, items, lens, n, NULL), SK_OK);
        from += n;
    }
}

/* Every key of [from, to) is found: no false negatives. */
void assert_all_found(const sk_bloom *f, uint64_t from, uint64_t to)
{
    uint64_t missing = 0, first = 0;
    for (uint64_t key = from; key < to; key++)
        if (has_key(f, key) != 1 && missing++ == 0)
            first = key;
    if (missing != 0)
        print_error("%llu of [%llu, %llu) not found, the first %llu\n",
                    (unsigned long long)missing, (unsigned long long)from,
                    (unsigned long long)to, (unsigned long long)first);
    assert_int_equal(missing, 0);
}

/* How many of `count` absent keys from `base` are (falsely) found. */
uint64_t count_found(const sk_bloom *f, uint64_t base, uint64_t count)
{
    uint64_t found = 0;
    for (uint64_t i = 0; i < count; i++)
        found += (uint64_t)has_key(f, base + i);
    return found;
}

sk_bloom *new_filter(uint64_t capacity, double fp_rate, sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_new(&f, capacity, fp_rate, layout), SK_OK);
    assert_non_null(f);
    return f;
}

sk_bloom *new_scalable(uint64_t capacity, double fp_rate, unsigned expansion,
                              sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = capacity, .fp_rate = fp_rate, .expansion = expansion, .layout = layout}), SK_OK);
    assert_non_null(f);
    return f;
}

sk_bloom *new_explicit(uint64_t bits, unsigned hashes, sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = bits, .hashes = hashes, .layout = layout}), SK_OK);
    assert_non_null(f);
    return f;
}

/* f through sk_bloom_serialize and sk_bloom_deserialize. */
sk_bloom *round_trip_dump(const sk_bloom *f)
{
    uint64_t size;
    assert_int_equal(sk_bloom_serialized_size(f, &size), SK_OK);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    size_t len = 0;
    assert_int_equal(sk_bloom_serialize(f, buf, (size_t)size - 1, &len), SK_ENOSPACE);
    assert_int_equal(sk_bloom_serialize(f, buf, (size_t)size, &len), SK_OK);
    assert_int_equal(len, size);
    sk_bloom *g = NULL;
    assert_int_equal(sk_bloom_deserialize(&g, buf, len - 1, NULL), SK_ETRUNCATED);
    assert_int_equal(sk_bloom_deserialize(&g, buf, len, NULL), SK_OK);
    free(buf);
    return g;
}

void assert_same_info(const sk_bloom *a, const sk_bloom *b)
{
    sk_bloom_info x = info_of(a), y = info_of(b);
    assert_int_equal(x.layout, y.layout);
    assert_int_equal(x.bits, y.bits);
    assert_int_equal(x.hashes, y.hashes);
    assert_int_equal(x.capacity, y.capacity);
    assert_true(x.fp_rate == y.fp_rate);
    assert_int_equal(x.count, y.count);
    assert_int_equal(x.layers, y.layers);
    assert_int_equal(x.expansion, y.expansion);
    assert_int_equal(x.array_bytes, y.array_bytes);
}

void assert_fresh_info(sk_bloom_info info, sk_bloom_layout layout, uint64_t bits,
                       unsigned hashes, uint64_t capacity, double fp_rate, unsigned expansion)
{
    assert_int_equal(info.layout, layout);
    assert_int_equal(info.bits, bits);
    assert_int_equal(info.hashes, hashes);
    assert_int_equal(info.capacity, capacity);
    assert_true(info.fp_rate == fp_rate);
    assert_int_equal(info.count, 0);
    assert_int_equal(info.layers, 1);
    assert_int_equal(info.expansion, expansion);
}

/* f, holding keys [0, added), saved and opened with SK_BLOOM_VERIFY: the
 * same filter, every key found. */
void assert_reopens(const sk_bloom *f, uint64_t added)
{
    char p[PATH_MAX];
    path_of(p, "reopened.bloom");
    save_ok(f, p);
    sk_bloom *g = open_ok(p, SK_BLOOM_VERIFY);
    assert_same_info(f, g);
    assert_all_found(g, 0, added);
    sk_bloom_free(g);
    unlink(p);
}

uint8_t *read_whole(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    assert_true(size >= 0);
    rewind(fp);
    uint8_t *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    *len = (size_t)size;
    return buf;
}

/* The bytes of the file that sk_bloom_save writes for f. */
uint8_t *saved_bytes(const sk_bloom *f, size_t *len)
{
    char p[PATH_MAX];
    path_of(p, "saved.bloom");
    save_ok(f, p);
    uint8_t *bytes = read_whole(p, len);
    unlink(p);
    return bytes;
}

void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *x = read_whole(a, &la), *y = read_whole(b, &lb);
    assert_same_bytes_free(x, la, y, lb);
}

void write_whole(const char *path, const void *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (len > 0)
        assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

void save_ok(const sk_bloom *f, const char *path)
{
    int rc = sk_bloom_save(f, path);
    if (rc != SK_OK)
        print_error("save %s: %s (%s)\n", path, sk_strerror(rc), strerror(errno));
    assert_int_equal(rc, SK_OK);
}

sk_bloom *open_ok(const char *path, unsigned flags)
{
    sk_bloom *f = NULL;
    int rc = sk_bloom_open(&f, path, flags, NULL);
    if (rc != SK_OK)
        print_error("open %s: %s\n", path, sk_strerror(rc));
    assert_int_equal(rc, SK_OK);
    assert_non_null(f);
    return f;
}

/* Opens `len` bytes written to a file; the status, with *out NULL on error. */
int open_bytes(const void *data, size_t len, unsigned flags, sk_bloom **out)
{
    char p[PATH_MAX];
    path_of(p, "bytes.bloom");
    write_whole(p, data, len);
    sk_bloom *f = (sk_bloom *)&f; /* not NULL: open must reset it */
    int rc = sk_bloom_open(&f, p, flags, NULL);
    if (rc != SK_OK)
        assert_null(f);
    else
        assert_non_null(f);
    unlink(p);
    if (out != NULL)
        *out = f;
    else
        sk_bloom_free(f);
    return rc;
}

/* The header checksum over bytes 0..31 and the layer table of a file, as
 * docs/bloom-format.md defines it (XXH32, seed 0). */
void fix_checksum(uint8_t *file)
{
    uint32_t layers = sk_load_le32(file + SK_BF_OFF_LAYERS);
    XXH32_state_t *st = XXH32_createState();
    assert_non_null(st);
    XXH32_reset(st, 0);
    XXH32_update(st, file, SK_BF_CHECKSUMMED_HEADER);
    XXH32_update(st, file + SK_BF_HEADER_SIZE, (size_t)SK_BF_LAYER_SIZE * layers);
    sk_store_le32(file + SK_BF_OFF_CHECKSUM, XXH32_digest(st));
    XXH32_freeState(st);
}

/* g answers as f does on `queries` items, half of them added ones. */
void assert_same_answers(const sk_bloom *f, const sk_bloom *g, uint64_t added,
                                uint64_t queries)
{
    uint64_t differ = 0, yes = 0;
    for (uint64_t i = 0; i < queries; i++) {
        uint64_t key = i % 2 ? (i / 2) % added : (i | ABSENT_BIT);
        int a = has_key(f, key);
        differ += (uint64_t)(a != has_key(g, key));
        yes += (uint64_t)a;
    }
    assert_int_equal(differ, 0);
    assert_true(yes >= queries / 2);
    assert_true(sk_bloom_expected_fp_rate(f, added) == sk_bloom_expected_fp_rate(g, added));
    assert_int_equal(sk_bloom_estimate_items(f), sk_bloom_estimate_items(g));
}

/* The expected status for a header or layer table whose byte `off` has been
 * damaged: the magic, the version, and otherwise a checksum or field error. */
int damage_ok(size_t off, int rc)
{
    if (off < 4)
        return rc == SK_EFORMAT;
    /* A version unknown, or one whose rules the rest breaks (version 3 is
     * for the split layout alone). */
    if (off == 4)
        return rc == SK_EVERSION || rc == SK_ECORRUPT;
    /* More layers than the bytes hold a table for: the table is cut short. */
    if (off >= SK_BF_OFF_LAYERS && off < SK_BF_OFF_LAYERS + 4 && rc == SK_ETRUNCATED)
        return 1;
    return rc == SK_ECHECKSUM || rc == SK_ECORRUPT;
}
