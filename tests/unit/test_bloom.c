/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom.c: unit tests of the Bloom filter API, every public function and
 * every error path, with cmocka.
 *
 * Items are 8-byte counters (the hardest input for a weak hash): the items
 * added have bit 62 clear and the absent ones probed for false positives
 * have it set, so the two sets never meet. Statistical assertions are loose
 * enough to fail with a probability far below 1e-9 for a correct library,
 * and every input is seeded, so a failure reproduces exactly.
 *
 * Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 * Where a test needs a file whose header passes the checksum but carries a
 * bad field, it recomputes the checksum as docs/bloom-format.md defines it:
 * XXH32, seed 0, of bytes 0..31 followed by the layer table.
 *
 * The filters of more than 2^32 bits are mapped anonymous memory zeroed
 * lazily by the kernel; the test touches at most about 1.5 GB of it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/format.h"
#include "sketch.h"
#include "../common/test_util.h"

#define ABSENT_BIT (UINT64_C(1) << 62)

static char tmpdir[PATH_MAX - 64];

/* ---- helpers ------------------------------------------------------------ */

static void path_of(char *buf, const char *name)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    assert_true(n > 0 && n < PATH_MAX);
}

static int setup_dir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    int n = snprintf(tmpdir, sizeof tmpdir, "%s/sketch-test-bloom-XXXXXX", base);
    if (n < 0 || (size_t)n >= sizeof tmpdir)
        return -1;
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown_dir(void **state)
{
    (void)state;
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

static int add_key(sk_bloom *f, uint64_t key)
{
    return sk_bloom_add(f, &key, sizeof key);
}

static int has_key(const sk_bloom *f, uint64_t key)
{
    return sk_bloom_contains(f, &key, sizeof key);
}

/* Adds keys [from, to); returns how many adds returned 1. */
static uint64_t add_range(sk_bloom *f, uint64_t from, uint64_t to)
{
    uint64_t changed = 0;
    for (uint64_t key = from; key < to; key++) {
        int rc = add_key(f, key);
        assert_true(rc == 0 || rc == 1);
        changed += (uint64_t)rc;
    }
    return changed;
}

/* Every key of [from, to) is found: no false negatives. */
static void assert_all_found(const sk_bloom *f, uint64_t from, uint64_t to)
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
static uint64_t count_found(const sk_bloom *f, uint64_t base, uint64_t count)
{
    uint64_t found = 0;
    for (uint64_t i = 0; i < count; i++)
        found += (uint64_t)has_key(f, base + i);
    return found;
}

static sk_bloom *new_filter(uint64_t capacity, double fp_rate, sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_new(&f, capacity, fp_rate, layout), SK_OK);
    assert_non_null(f);
    return f;
}

static sk_bloom *new_scalable(uint64_t capacity, double fp_rate, unsigned expansion,
                              sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = capacity, .fp_rate = fp_rate, .expansion = expansion, .layout = layout}), SK_OK);
    assert_non_null(f);
    return f;
}

static sk_bloom *new_explicit(uint64_t bits, unsigned hashes, sk_bloom_layout layout)
{
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = bits, .hashes = hashes, .layout = layout}), SK_OK);
    assert_non_null(f);
    return f;
}

static sk_bloom_info info_of(const sk_bloom *f)
{
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    return info;
}

/* f through sk_bloom_serialize and sk_bloom_deserialize. */
static sk_bloom *round_trip_dump(const sk_bloom *f)
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

static void assert_same_info(const sk_bloom *a, const sk_bloom *b)
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

static uint8_t *read_whole(const char *path, size_t *len)
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

static void write_whole(const char *path, const void *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (len > 0)
        assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

static void save_ok(const sk_bloom *f, const char *path)
{
    int rc = sk_bloom_save(f, path);
    if (rc != SK_OK)
        print_error("save %s: %s (%s)\n", path, sk_strerror(rc), strerror(errno));
    assert_int_equal(rc, SK_OK);
}

static sk_bloom *open_ok(const char *path, unsigned flags)
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
static int open_bytes(const void *data, size_t len, unsigned flags, sk_bloom **out)
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

/* The header checksum over bytes 0..31 and the layer table of a file. */
static void fix_checksum(uint8_t *file)
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

/* ---- sizing ------------------------------------------------------------- */

static double textbook_bits(uint64_t n, double p)
{
    return -(double)n * log(p) / (M_LN2 * M_LN2);
}

static void test_size_for_classic_is_textbook(void **state)
{
    (void)state;
    static const double rates[] = {0.5, 0.3, 0.1, 0.05, 1e-2, 1e-3, 1e-4, 1e-5,
                                   1e-6, 1e-8, 1e-10, 1e-12, 1e-15};
    static const uint64_t caps[] = {1000, 123457, 1000000, 1000000000};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            uint64_t n = caps[c], m = 0;
            double p = rates[r];
            unsigned k = 0;
            sk_bloom_layout layout = SK_BLOOM_CLASSIC;
            assert_int_equal(sk_bloom_size_for(n, p, &layout, &m, &k), SK_OK);
            assert_int_equal(layout, SK_BLOOM_CLASSIC);
            double tb = textbook_bits(n, p), kopt = (double)m / (double)n * M_LN2;
            /* Integer k costs a little over the textbook optimum, never less
             * (but for the one bit of rounding). */
            if (!((double)m >= tb - 1 && (double)m <= 1.01 * tb) || fabs(k - kopt) > 1.0) {
                print_error("n=%llu p=%g: m=%llu k=%u, textbook m=%.0f k=%.3f\n",
                            (unsigned long long)n, p, (unsigned long long)m, k, tb, kopt);
                fail();
            }
            /* The textbook k, -log2 p, is within one of the chosen k. */
            assert_true(fabs(k + log2(p)) <= 1.0);
        }
    }
}

/* The rate at capacity of the chosen size meets the target, and one bit (one
 * block) fewer does not, with the chosen k or its neighbours: m is the
 * smallest, as documented. */
static void test_size_for_is_minimal(void **state)
{
    (void)state;
    static const double rates[] = {0.1, 1e-2, 1e-3, 1e-4};
    static const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (int layout_i = 0; layout_i < 3; layout_i++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            sk_bloom_layout layout = layouts[layout_i];
            uint64_t n = 20000, m;
            unsigned k;
            assert_int_equal(sk_bloom_size_for(n, rates[r], &layout, &m, &k), SK_OK);
            sk_bloom *f = new_explicit(m, k, layout);
            assert_int_equal(info_of(f).bits, m);
            assert_true(sk_bloom_expected_fp_rate(f, n) <= rates[r]);
            sk_bloom_free(f);
            uint64_t fewer = layout != SK_BLOOM_CLASSIC ? m - 512 : m - 1;
            if (layout == SK_BLOOM_SPLIT)
                assert_true(k == 8 || k == 16);
            for (unsigned kk = k > 1 ? k - 1 : 1; kk <= k + 1; kk++) {
                if (layout == SK_BLOOM_SPLIT && kk != 8 && kk != 16)
                    continue; /* the lane counts there are */
                f = new_explicit(fewer, kk, layout);
                double rate = sk_bloom_expected_fp_rate(f, n);
                if (!(rate > rates[r]))
                    print_error("layout %d p=%g: %llu bits and k=%u reach %g too\n",
                                layout_i, rates[r], (unsigned long long)fewer, kk, rate);
                assert_true(rate > rates[r]);
                sk_bloom_free(f);
            }
        }
    }
}

static void test_size_for_blocked_needs_more_bits(void **state)
{
    (void)state;
    static const double rates[] = {0.3, 0.1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-9, 1e-15};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        uint64_t mc, mb;
        unsigned kc, kb;
        sk_bloom_layout lc = SK_BLOOM_CLASSIC, lb = SK_BLOOM_BLOCKED;
        assert_int_equal(sk_bloom_size_for(1000000, rates[r], &lc, &mc, &kc), SK_OK);
        assert_int_equal(sk_bloom_size_for(1000000, rates[r], &lb, &mb, &kb), SK_OK);
        assert_int_equal(lb, SK_BLOOM_BLOCKED);
        assert_int_equal(mb % 512, 0);
        assert_true(mb > mc);
        assert_true(kb >= 1 && kb <= SK_BLOOM_MAX_HASHES);
    }
    /* The overhead documented in docs/bloom-format.md: 3% at 1%, 8% at 0.1%. */
    uint64_t mc, mb;
    unsigned kc, kb;
    sk_bloom_layout lc = SK_BLOOM_CLASSIC, lb = SK_BLOOM_BLOCKED;
    assert_int_equal(sk_bloom_size_for(1000000, 1e-2, &lc, &mc, &kc), SK_OK);
    assert_int_equal(sk_bloom_size_for(1000000, 1e-2, &lb, &mb, &kb), SK_OK);
    assert_true((double)mb / (double)mc > 1.01 && (double)mb / (double)mc < 1.06);
}

static void test_size_for_auto(void **state)
{
    (void)state;
    static const struct {
        double p;
        sk_bloom_layout expect;
    } cases[] = {{1e-1, SK_BLOOM_BLOCKED}, {1e-2, SK_BLOOM_SPLIT},
                 {1e-5, SK_BLOOM_CLASSIC}, {1e-9, SK_BLOOM_CLASSIC}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sk_bloom_layout layout = SK_BLOOM_AUTO, concrete = cases[i].expect;
        uint64_t m, m2;
        unsigned k, k2;
        assert_int_equal(sk_bloom_size_for(500000, cases[i].p, &layout, &m, &k), SK_OK);
        assert_int_equal(layout, cases[i].expect);
        assert_int_equal(sk_bloom_size_for(500000, cases[i].p, &concrete, &m2, &k2), SK_OK);
        assert_int_equal(m, m2);
        assert_int_equal(k, k2);
        /* sk_bloom_new makes the same choice and the same sizes. */
        sk_bloom *f = new_filter(500000, cases[i].p, SK_BLOOM_AUTO);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.layout, cases[i].expect);
        assert_int_equal(info.bits, m);
        assert_int_equal(info.hashes, k);
        sk_bloom_free(f);
    }
}

static void test_size_for_rejects_bad_arguments(void **state)
{
    (void)state;
    uint64_t m = 77;
    unsigned k = 77;
    sk_bloom_layout layout;
    /* Rates below SK_BLOOM_MIN_FP_RATE are sized (the later layers of a
     * scalable filter have them); only creation refuses them. */
    static const double bad_rates[] = {0, 1, -0.01, 0.6, 0.5000001};
    double special[] = {NAN, INFINITY, -INFINITY};
    for (int l = 0; l < 3; l++) {
        for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, bad_rates[i], &layout, &m, &k), SK_EINVAL);
        }
        for (size_t i = 0; i < 3; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, special[i], &layout, &m, &k), SK_EINVAL);
        }
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(0, 0.01, &layout, &m, &k), SK_EINVAL);
        uint64_t m_min, m_below;
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MIN_FP_RATE, &layout, &m_min, &k),
                         SK_OK);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, 1e-16, &layout, &m_below, &k), SK_OK);
        assert_true(m_below > m_min);
        k = 77; /* the calls below must leave the outputs alone */
        if (l != SK_BLOOM_AUTO) { /* AUTO: test_size_for_auto_null_outputs */
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, &k), SK_EINVAL);
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, NULL), SK_EINVAL);
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, NULL), SK_EINVAL);
        }
        /* Absurd capacities: more than SK_BLOOM_MAX_BITS. */
        static const uint64_t huge[] = {UINT64_MAX, UINT64_C(1) << 48, UINT64_C(1) << 47,
                                        (UINT64_C(1) << 48) / 9};
        for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
            layout = (sk_bloom_layout)l;
            assert_int_equal(sk_bloom_size_for(huge[i], 0.01, &layout, &m, &k), SK_ETOOLARGE);
        }
    }
    assert_int_equal(sk_bloom_size_for(1000, 0.01, NULL, &m, &k), SK_EINVAL);
    layout = (sk_bloom_layout)4;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, &k), SK_EINVAL);
    layout = (sk_bloom_layout)-1;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, &k), SK_EINVAL);
    assert_int_equal(m, 77);
    assert_int_equal(k, 77);

    /* The ends of the documented range are accepted. */
    for (int l = 0; l < 3; l++) {
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MIN_FP_RATE, &layout, &m, &k), SK_OK);
        assert_true(k >= 1 && k <= SK_BLOOM_MAX_HASHES);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1000, SK_BLOOM_MAX_FP_RATE, &layout, &m, &k), SK_OK);
        layout = (sk_bloom_layout)l;
        assert_int_equal(sk_bloom_size_for(1, 0.01, &layout, &m, &k), SK_OK);
        assert_true(m >= 1);
    }

    /* Near the limit every answer is either SK_EINVAL or at most the limit:
     * capacities from 90% to 101% of the largest the textbook allows. */
    static const double near_rates[] = {1e-2, 1e-4};
    for (int l = 0; l < 2; l++) {
        for (size_t r = 0; r < sizeof near_rates / sizeof near_rates[0]; r++) {
            double top = (double)SK_BLOOM_MAX_BITS / (-log(near_rates[r]) / (M_LN2 * M_LN2));
            for (int step = 0; step <= 22; step++) {
                uint64_t cap = (uint64_t)(top * (0.90 + step * 0.005));
                layout = (sk_bloom_layout)l;
                int rc = sk_bloom_size_for(cap, near_rates[r], &layout, &m, &k);
                if (rc == SK_OK && m > SK_BLOOM_MAX_BITS) {
                    print_error("layout %d capacity %llu p=%g: %llu bits > SK_BLOOM_MAX_BITS\n",
                                l, (unsigned long long)cap, near_rates[r],
                                (unsigned long long)m);
                    fail();
                }
                assert_true(rc == SK_OK || rc == SK_ETOOLARGE);
            }
        }
    }
}

/* NULL outputs with SK_BLOOM_AUTO: SK_EINVAL like the other layouts. Last in
 * the list, since a library that dereferences them crashes here. */
static void test_size_for_auto_null_outputs(void **state)
{
    (void)state;
    uint64_t m = 77;
    unsigned k = 77;
    sk_bloom_layout layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, &m, NULL), SK_EINVAL);
    layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, &k), SK_EINVAL);
    layout = SK_BLOOM_AUTO;
    assert_int_equal(sk_bloom_size_for(1000, 0.01, &layout, NULL, NULL), SK_EINVAL);
    assert_int_equal(m, 77);
    assert_int_equal(k, 77);
}

/* ---- creation ----------------------------------------------------------- */

static void test_new_rejects_bad_arguments(void **state)
{
    (void)state;
    sk_bloom *f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_new(NULL, 1000, 0.01, SK_BLOOM_AUTO), SK_EINVAL);
    assert_int_equal(sk_bloom_new(&f, 0, 0.01, SK_BLOOM_AUTO), SK_EINVAL);
    assert_null(f);
    static const double bad_rates[] = {0, 1, 1e-16, 0.6, NAN};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        for (int l = 0; l < 3; l++) {
            f = (sk_bloom *)&f;
            assert_int_equal(sk_bloom_new(&f, 1000, bad_rates[i], (sk_bloom_layout)l),
                             SK_EINVAL);
            assert_null(f);
        }
    }
    f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_new(&f, 1000, 0.01, (sk_bloom_layout)7), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_new(&f, UINT64_C(1) << 48, 0.01, SK_BLOOM_AUTO), SK_ETOOLARGE);
    assert_null(f);
    sk_bloom_free(NULL);
}

static void test_new_explicit(void **state)
{
    (void)state;
    static const struct {
        uint64_t bits;
        sk_bloom_layout layout;
        uint64_t expect;
    } cases[] = {
        {1, SK_BLOOM_BLOCKED, 512},         {511, SK_BLOOM_BLOCKED, 512},
        {512, SK_BLOOM_BLOCKED, 512},       {513, SK_BLOOM_BLOCKED, 1024},
        {1000, SK_BLOOM_BLOCKED, 1024},     {1000000, SK_BLOOM_BLOCKED, 1000448},
        {1, SK_BLOOM_CLASSIC, 1},           {1000, SK_BLOOM_CLASSIC, 1000},
        {1000001, SK_BLOOM_CLASSIC, 1000001},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (unsigned k = 1; k <= SK_BLOOM_MAX_HASHES; k += 21) {
            sk_bloom *f = new_explicit(cases[i].bits, k, cases[i].layout);
            sk_bloom_info info = info_of(f);
            assert_int_equal(info.layout, cases[i].layout);
            assert_int_equal(info.bits, cases[i].expect);
            assert_int_equal(info.hashes, k);
            assert_true(info.fp_rate == 0);
            assert_int_equal(info.expansion, 0);
            assert_int_equal(info.layers, 1);
            assert_int_equal(info.count, 0);
            assert_int_equal(info.array_bytes, (cases[i].expect + 63) / 64 * 8);
            /* The capacity of explicit sizes: where k is optimal, m ln2 / k. */
            uint64_t cap = (uint64_t)((double)cases[i].expect * M_LN2 / k);
            assert_int_equal(info.capacity, cap ? cap : 1);
            assert_int_equal(add_key(f, 1), 1);
            assert_int_equal(add_key(f, 1), 0);
            assert_int_equal(has_key(f, 1), 1);
            sk_bloom_free(f);
        }
    }
    sk_bloom *f = new_explicit(1000, SK_BLOOM_MAX_HASHES, SK_BLOOM_CLASSIC);
    sk_bloom_free(f);
    f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 7, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_null(f);
    for (int l = 0; l < 2; l++) {
        f = (sk_bloom *)&f;
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 0, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_null(f);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 65, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 0, .hashes = 7, .layout = (sk_bloom_layout)l}), SK_EINVAL);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = SK_BLOOM_MAX_BITS + 1, .hashes = 7, .layout = (sk_bloom_layout)l}), SK_ETOOLARGE);
        assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = UINT64_MAX, .hashes = 7, .layout = (sk_bloom_layout)l}),
                         SK_ETOOLARGE);
        assert_null(f);
    }
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1000, .hashes = 7, .layout = (sk_bloom_layout)5}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(NULL, &(sk_bloom_options){.bits = 1000, .hashes = 7, .layout = SK_BLOOM_CLASSIC}), SK_EINVAL);
}

static void test_new_scalable(void **state)
{
    (void)state;
    sk_bloom *f = (sk_bloom *)&f;
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = SK_BLOOM_MAX_EXPANSION + 1, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_create(&f, NULL), SK_EINVAL);
    /* Options that contradict each other: explicit sizes with a rate, a
     * capacity or an expansion; hashes without bits. */
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .fp_rate = 0.01}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .capacity = 10}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.bits = 1024, .hashes = 3, .expansion = 2}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 10, .hashes = 3}), SK_EINVAL);
    assert_null(f);
    /* Expansion 0 is a fixed filter; a zero rate is the default one. */
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .layout = SK_BLOOM_AUTO}), SK_OK);
    assert_int_equal(info_of(f).expansion, 0);
    assert_true(info_of(f).fp_rate == SK_BLOOM_DEFAULT_FP_RATE);
    sk_bloom_free(f);
    assert_int_equal(sk_bloom_create(NULL, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = 2, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 0, .fp_rate = 0.01, .expansion = 2, .layout = SK_BLOOM_AUTO}), SK_EINVAL);
    assert_null(f);
    assert_int_equal(sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = 0.01, .expansion = 2, .layout = (sk_bloom_layout)9}), SK_EINVAL);
    assert_null(f);

    f = new_scalable(1000, 0.01, 2, SK_BLOOM_AUTO);
    sk_bloom_info info = info_of(f);
    /* The first layer is sized for the capacity at half the rate. */
    sk_bloom_layout layout = SK_BLOOM_AUTO;
    uint64_t m;
    unsigned k;
    assert_int_equal(sk_bloom_size_for(1000, 0.005, &layout, &m, &k), SK_OK);
    assert_int_equal(info.layout, layout);
    assert_int_equal(info.bits, m);
    assert_int_equal(info.hashes, k);
    assert_int_equal(info.capacity, 1000);
    assert_true(info.fp_rate == 0.01);
    assert_int_equal(info.count, 0);
    assert_int_equal(info.layers, 1);
    assert_int_equal(info.expansion, 2);
    sk_bloom_free(f);

    /* Every expansion it accepts can be saved and opened again. */
    static const unsigned expansions[] = {1, 2, 3, 1024, 1025, 100000, UINT32_MAX};
    for (size_t i = 0; i < sizeof expansions / sizeof expansions[0]; i++) {
        f = NULL;
        int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 100, .fp_rate = 0.01, .expansion = expansions[i], .layout = SK_BLOOM_CLASSIC});
        assert_true(rc == SK_OK || rc == SK_EINVAL);
        if (rc != SK_OK) {
            assert_null(f);
            continue;
        }
        add_range(f, 0, 300);
        char p[PATH_MAX];
        path_of(p, "expansion.bloom");
        save_ok(f, p);
        sk_bloom *g = open_ok(p, SK_BLOOM_VERIFY);
        assert_same_info(f, g);
        assert_all_found(g, 0, 300);
        sk_bloom_free(g);
        sk_bloom_free(f);
        unlink(p);
    }
}

/* The rate of a scalable filter has the documented range of every rate,
 * [SK_BLOOM_MIN_FP_RATE, SK_BLOOM_MAX_FP_RATE]: rates above it are refused
 * (a filter created with one would be saved to a file that sk_bloom_open
 * refuses), and rates in it are accepted. (0 in the options is the default
 * rate.) */
static void test_scalable_rate_range(void **state)
{
    (void)state;
    int failures = 0;
    static const double bad_rates[] = {1, 0.6, 0.75, 1.0000001, 1e-16, 5e-16, -0.5, NAN};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; i++) {
        for (int l = 0; l < 3; l++) {
            sk_bloom *f = (sk_bloom *)&f;
            int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 1000, .fp_rate = bad_rates[i], .expansion = 2, .layout = (sk_bloom_layout)l});
            if (rc != SK_EINVAL) {
                print_error("sk_bloom_create of capacity 1000, rate %g, expansion 2, layout %d = %s, "
                            "expected %s\n", bad_rates[i], l, sk_strerror(rc),
                            sk_strerror(SK_EINVAL));
                failures++;
            }
            if (rc == SK_OK) {
                /* What it leads to: a file the library cannot open. */
                char p[PATH_MAX];
                path_of(p, "bad-rate.bloom");
                save_ok(f, p);
                sk_bloom *g = NULL;
                rc = sk_bloom_open(&g, p, 0, NULL);
                if (rc != SK_OK)
                    print_error("  ... saved, sk_bloom_open of its file = %s\n",
                                sk_strerror(rc));
                sk_bloom_free(g);
                sk_bloom_free(f);
                unlink(p);
            } else if (f != NULL) {
                print_error("  ... and *out was not set to NULL\n");
                failures++;
            }
        }
    }
    static const double good_rates[] = {SK_BLOOM_MIN_FP_RATE, 1.5e-15, SK_BLOOM_MAX_FP_RATE};
    for (size_t i = 0; i < sizeof good_rates / sizeof good_rates[0]; i++) {
        sk_bloom *f = NULL;
        int rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 100, .fp_rate = good_rates[i], .expansion = 2, .layout = SK_BLOOM_CLASSIC});
        if (rc != SK_OK) {
            print_error("sk_bloom_create of capacity 100, rate %g, expansion 2, classic = %s, expected %s\n",
                        good_rates[i], sk_strerror(rc), sk_strerror(SK_OK));
            failures++;
            continue;
        }
        char p[PATH_MAX];
        path_of(p, "good-rate.bloom");
        add_range(f, 0, 1000);
        save_ok(f, p);
        sk_bloom *g = open_ok(p, SK_BLOOM_VERIFY);
        assert_same_info(f, g);
        assert_all_found(g, 0, 1000);
        sk_bloom_free(g);
        sk_bloom_free(f);
        unlink(p);
    }
    assert_int_equal(failures, 0);
}

/* ---- add and contains --------------------------------------------------- */

static void test_add_reports_changes(void **state)
{
    (void)state;
    sk_bloom *filters[] = {
        new_filter(1000, 0.01, SK_BLOOM_BLOCKED),    new_filter(1000, 0.01, SK_BLOOM_CLASSIC),
        new_filter(1000, 0.01, SK_BLOOM_AUTO),       new_explicit(4096, 3, SK_BLOOM_CLASSIC),
        new_explicit(4096, 3, SK_BLOOM_BLOCKED),     new_scalable(10, 0.01, 2, SK_BLOOM_BLOCKED),
        new_scalable(10, 0.01, 2, SK_BLOOM_CLASSIC),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        assert_int_equal(sk_bloom_contains(f, "alice", 5), 0);
        assert_int_equal(sk_bloom_add(f, "alice", 5), 1);
        assert_int_equal(sk_bloom_add(f, "alice", 5), 0);
        assert_int_equal(sk_bloom_contains(f, "alice", 5), 1);
        assert_int_equal(sk_bloom_add(f, "bob", 3), 1);
        assert_int_equal(sk_bloom_add(f, "", 0), 1);
        assert_int_equal(sk_bloom_add(f, "", 0), 0);
        assert_int_equal(sk_bloom_contains(f, "", 0), 1);
        /* Every byte and the length count. */
        assert_int_equal(sk_bloom_contains(f, "alic", 4), 0);
        assert_int_equal(sk_bloom_contains(f, "alicf", 5), 0);
        assert_int_equal(info_of(f).count, 3);
        /* Items are read at any alignment. */
        char buf[32];
        for (int off = 0; off < 8; off++) {
            memcpy(buf + off, "unaligned item", 14);
            assert_int_equal(sk_bloom_add(f, buf + off, 14), off == 0 ? 1 : 0);
        }
        sk_bloom_free(f);
    }
}

/* Never a false negative, for every layout, and for scalable filters across
 * many layers. */
static void test_no_false_negatives(void **state)
{
    (void)state;
    const uint64_t n = 100000;
    sk_bloom *filters[] = {
        new_filter(n, 0.01, SK_BLOOM_BLOCKED),
        new_filter(n, 0.01, SK_BLOOM_CLASSIC),
        new_filter(n, 1e-5, SK_BLOOM_AUTO),
        new_filter(n / 10, 0.1, SK_BLOOM_BLOCKED), /* ten times over capacity */
        new_explicit(123457, 5, SK_BLOOM_CLASSIC),
        new_explicit(100000, 64, SK_BLOOM_BLOCKED),
        new_filter(n, 0.01, SK_BLOOM_SPLIT),
        new_filter(n, 1e-5, SK_BLOOM_SPLIT), /* 16 lanes */
        new_filter(n / 10, 0.1, SK_BLOOM_SPLIT),
        new_explicit(100000, 16, SK_BLOOM_SPLIT),
        new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT),
        new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED),
        new_scalable(100, 0.001, 4, SK_BLOOM_CLASSIC),
        new_scalable(5000, 0.05, 1, SK_BLOOM_AUTO),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        uint64_t changed = add_range(f, 0, n);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.count, changed);
        assert_all_found(f, 0, n);
        if (info.expansion != 0) {
            assert_true(info.layers >= 4);
            assert_true(info.capacity >= changed);
        }
        sk_bloom_free(f);
    }
}

/* Small filters meet their rate too. `trials` filters of `n` items each
 * (different items), `queries` absent items each: the false positives
 * must stay below E + 5 sqrt(E) + 3, E the count the expected rate gives
 * (a Poisson count exceeds that with chance below 1e-6), and below the
 * same bound for the requested rate. A scalable filter starting at 10
 * items has small first layers, so it is held to this too. */
static int check_small_filter_rate(int scalable, sk_bloom_layout layout, uint64_t n,
                                    double p, unsigned trials, uint64_t queries)
{
    uint64_t fp = 0;
    double expected = 0;
    for (unsigned t = 0; t < trials; t++) {
        sk_bloom *f = scalable ? new_scalable(10, p, 2, layout) : new_filter(n, p, layout);
        uint64_t base = (uint64_t)t << 32;
        add_range(f, base, base + n);
        expected += sk_bloom_expected_fp_rate(f, n) * (double)queries;
        fp += count_found(f, ABSENT_BIT | base, queries);
        sk_bloom_free(f);
    }
    double bound = expected + 5 * sqrt(expected) + 3;
    double requested = p * (double)trials * (double)queries;
    double p_bound = requested + 5 * sqrt(requested) + 3;
    int failed = (double)fp > bound || (double)fp > p_bound;
    if (failed)
        print_error("%s%s, %llu items at %g: %llu false positives in %.0f queries, "
                    "expected %.1f (at most %.0f), requested rate gives %.1f\n",
                    scalable ? "scalable " : "", layout == SK_BLOOM_CLASSIC ? "classic" : "blocked",
                    (unsigned long long)n, p, (unsigned long long)fp,
                    (double)trials * (double)queries, expected, bound, requested);
    return failed;
}

static void test_small_filters_meet_their_rate(void **state)
{
    (void)state;
    int failed = check_small_filter_rate(0, SK_BLOOM_BLOCKED, 100, 1e-6, 400, 10000);
    failed += check_small_filter_rate(1, SK_BLOOM_BLOCKED, 1000, 1e-5, 20, 100000);
    failed += check_small_filter_rate(0, SK_BLOOM_CLASSIC, 100, 1e-6, 400, 10000);
    failed += check_small_filter_rate(1, SK_BLOOM_CLASSIC, 1000, 1e-5, 20, 100000);
    assert_int_equal(failed, 0);
}

/* A scalable filter stops growing at its memory budget with SK_EBUDGET,
 * keeping every item it holds and its memory within the budget. */
static void test_scalable_stops_at_its_budget(void **state)
{
    (void)state;
    const uint64_t budget = 64 * 1024;
    sk_bloom *f = NULL;
    sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .expansion = 2,
                          .layout = SK_BLOOM_BLOCKED, .max_memory = budget};
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    int rc = 0;
    uint64_t key;
    for (key = 0; key < 1000000; key++) {
        rc = add_key(f, key);
        if (rc < 0)
            break;
    }
    assert_int_equal(rc, SK_EBUDGET);
    sk_bloom_info info = info_of(f);
    assert_true(info.layers >= 3);
    assert_true(info.memory <= budget);
    assert_int_equal(info.max_memory, budget);
    /* The layer it refused would have passed the budget. */
    sk_bloom_layer next;
    assert_int_equal(sk_bloom_get_layer(f, info.layers, &next), SK_OK);
    assert_true(info.memory + next.bytes > budget);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(f, i), 1);
    assert_int_equal(add_key(f, key), SK_EBUDGET);
    assert_int_equal(add_key(f, 0), 0);
    const void *items[1] = {&key};
    size_t lens[1] = {sizeof key};
    uint8_t added[1] = {9};
    assert_int_equal(sk_bloom_add_batch(f, items, lens, 1, added), SK_EBUDGET);
    /* A larger budget lets it grow again. */
    sk_bloom_set_max_memory(f, 0);
    assert_int_equal(add_key(f, key), 1);
    assert_int_equal(info_of(f).layers, info.layers + 1);
    sk_bloom_free(f);

    /* A first layer over the budget is refused at creation. */
    o.max_memory = 1000;
    o.capacity = 10000;
    f = (sk_bloom *)&o;
    assert_int_equal(sk_bloom_create(&f, &o), SK_EBUDGET);
    assert_null(f);
}

/* A fixed filter created with refuse_when_full takes no new item once its
 * count reaches its capacity (SK_EFULL, nothing changed), in every layout
 * and by every add call, answers 0 for an item it holds, and keeps the
 * choice through a copy; a dump does not record it, and
 * sk_bloom_set_refuse_when_full restores it. Without the option adds go on
 * past the capacity. */
static void test_fixed_refuses_when_full(void **state)
{
    (void)state;
    const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .layout = layouts[li],
                              .refuse_when_full = 1};
        sk_bloom *f = NULL;
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        /* A batch with room for all its items takes them all. */
        uint64_t keys[50];
        const void *items[50];
        size_t lens[50];
        uint8_t added[50];
        for (int i = 0; i < 50; i++) {
            keys[i] = (uint64_t)i;
            items[i] = &keys[i];
            lens[i] = sizeof keys[i];
        }
        assert_int_equal(sk_bloom_add_batch(f, items, lens, 50, added), SK_OK);
        uint64_t key = 50;
        while (info_of(f).count < 100)
            assert_true(add_key(f, key++) >= 0);
        sk_bloom_info full = info_of(f);
        assert_int_equal(full.count, 100);
        uint64_t fresh = key;
        while (has_key(f, fresh))
            fresh++;
        assert_int_equal(add_key(f, fresh), SK_EFULL);
        assert_int_equal(has_key(f, fresh), 0);
        assert_int_equal(add_key(f, 0), 0);
        sk_bloom_hash h = sk_bloom_hash_bytes(&fresh, sizeof fresh);
        assert_int_equal(sk_bloom_add_hash(f, h), SK_EFULL);
        assert_int_equal(sk_bloom_add_unlimited(f, &fresh, sizeof fresh), SK_EFULL);
        /* A batch stops at the refused item; those before it are in. */
        uint64_t pair[2] = {1, fresh};
        const void *pitems[2] = {&pair[0], &pair[1]};
        size_t plens[2] = {sizeof pair[0], sizeof pair[1]};
        uint8_t padded[2] = {9, 9};
        assert_int_equal(sk_bloom_add_batch(f, pitems, plens, 2, padded), SK_EFULL);
        assert_int_equal(padded[0], 0);
        assert_int_equal(sk_bloom_add_hash_batch(f, &h, 1, padded), SK_EFULL);
        assert_int_equal(info_of(f).count, 100);
        assert_int_equal(has_key(f, fresh), 0);

        sk_bloom *g = NULL;
        assert_int_equal(sk_bloom_copy(&g, f), SK_OK);
        assert_int_equal(add_key(g, fresh), SK_EFULL);
        sk_bloom_free(g);

        sk_bloom *d = round_trip_dump(f);
        assert_int_equal(add_key(d, fresh), 1); /* not recorded in the dump */
        sk_bloom_free(d);
        d = round_trip_dump(f);
        sk_bloom_set_refuse_when_full(d, 1);
        assert_int_equal(add_key(d, fresh), SK_EFULL);
        sk_bloom_set_refuse_when_full(d, 0);
        assert_int_equal(add_key(d, fresh), 1);
        sk_bloom_free(d);

        sk_bloom_set_refuse_when_full(f, 0);
        assert_int_equal(add_key(f, fresh), 1);
        assert_int_equal(info_of(f).count, 101);
        sk_bloom_free(f);

        /* Scalable filters ignore it: they grow. */
        o.expansion = 2;
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        for (key = 0; info_of(f).layers < 2; key++)
            assert_true(add_key(f, key) >= 0);
        sk_bloom_free(f);
    }
}

/* sk_bloom_add_unlimited adds past the memory budget, for a replay, and
 * leaves the budget as it was for the adds after it. */
static void test_add_unlimited_passes_the_budget(void **state)
{
    (void)state;
    const uint64_t budget = 16 * 1024;
    sk_bloom_options o = {.capacity = 100, .fp_rate = 0.01, .expansion = 2,
                          .layout = SK_BLOOM_BLOCKED, .max_memory = budget};
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    uint64_t key = 0;
    int rc;
    while ((rc = add_key(f, key)) >= 0)
        key++;
    assert_int_equal(rc, SK_EBUDGET);
    unsigned layers = info_of(f).layers;
    assert_int_equal(sk_bloom_add_unlimited(f, &key, sizeof key), 1);
    assert_int_equal(has_key(f, key), 1);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.layers, layers + 1);
    assert_true(info.memory > budget);
    assert_int_equal(info.max_memory, budget);
    /* Present items are no growth; new ones fill the new layer, then are
     * refused again. */
    assert_int_equal(sk_bloom_add_unlimited(f, &key, sizeof key), 0);
    while ((rc = add_key(f, ++key)) >= 0)
        ;
    assert_int_equal(rc, SK_EBUDGET);
    assert_int_equal(info_of(f).layers, layers + 1);
    sk_bloom_free(f);
}

/* A small filter is one allocation, its record and bit array together,
 * and its memory is what sk_bloom_create_memory said; a large one keeps
 * its array apart. */
struct alloc_count {
    int live;
    size_t bytes;
};

static void *counted_alloc(void *opaque, size_t size)
{
    struct alloc_count *c = opaque;
    void *p = malloc(size);
    if (p != NULL) {
        c->live++;
        c->bytes += size;
    }
    return p;
}

static void counted_free(void *opaque, void *ptr, size_t size)
{
    struct alloc_count *c = opaque;
    c->live--;
    c->bytes -= size;
    free(ptr);
}

static void test_small_filter_is_one_allocation(void **state)
{
    (void)state;
    const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
        for (uint64_t capacity = 1; capacity <= 100000; capacity *= 100) {
            struct alloc_count c = {0, 0};
            sk_allocator a = {counted_alloc, counted_free, &c, 0};
            sk_bloom_options o = {.capacity = capacity, .fp_rate = 0.01, .layout = layouts[li],
                                  .expansion = 2, .allocator = &a};
            sk_bloom *f = NULL;
            assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
            sk_bloom_info info = info_of(f);
            assert_int_equal(c.live, info.array_bytes <= 4096 ? 1 : 2);
            assert_int_equal(info.memory, c.bytes);
            assert_int_equal(info.memory, sk_bloom_create_memory(&o));
            for (uint64_t key = 0; key < 3 * capacity; key++)
                assert_true(add_key(f, key) >= 0);
            assert_int_equal(info_of(f).memory, c.bytes);
            for (uint64_t key = 0; key < 3 * capacity; key++)
                assert_int_equal(has_key(f, key), 1);
            sk_bloom *g = round_trip_dump(f);
            assert_int_equal(info_of(g).layers, info_of(f).layers);
            sk_bloom_free(g);
            sk_bloom_free(f);
            assert_int_equal(c.live, 0);
            assert_int_equal(c.bytes, 0);
        }
    }
}

/* The chain has no fixed number of layers: capacity 1 and expansion 1, the
 * smallest steps RedisBloom allows, grows to 5,000 layers and keeps every
 * item, within the rate it was asked for. */
static void test_scalable_grows_to_thousands_of_layers(void **state)
{
    (void)state;
    enum { LAYERS = 5000 };
    sk_bloom *f = new_scalable(1, 0.01, 1, SK_BLOOM_AUTO);
    uint64_t key = 0;
    while (info_of(f).layers < LAYERS)
        assert_true(add_key(f, key++) >= 0);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.layers, LAYERS);
    assert_true(key >= LAYERS - 1);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(f, i), 1);
    /* Every layer holds one item in one block or less, and the rates of all
     * layers sum to at most the one requested. */
    double rates = 0;
    for (unsigned i = 0; i < LAYERS; i++) {
        sk_bloom_layer l;
        assert_int_equal(sk_bloom_get_layer(f, i, &l), SK_OK);
        assert_int_equal(l.capacity, 1);
        assert_true(l.bytes <= 64);
        rates += l.fp_rate;
    }
    assert_true(rates <= 0.01);
    assert_true(sk_bloom_expected_fp_rate(f, key) <= 0.01);
    /* The layers survive a dump and a file. */
    sk_bloom *g = round_trip_dump(f);
    for (uint64_t i = 0; i < key; i++)
        assert_int_equal(has_key(g, i), 1);
    assert_int_equal(info_of(g).layers, LAYERS);
    sk_bloom_free(g);
    sk_bloom_free(f);
}

/* A chain whose next layer would pass the library's size limits stops
 * growing with SK_EFULL: planned without allocating, and met by an add. */
static void test_scalable_stops_with_efull(void **state)
{
    (void)state;
    sk_bloom_options o = {.capacity = UINT64_C(1) << 30, .fp_rate = 0.01,
                          .expansion = SK_BLOOM_MAX_EXPANSION, .layout = SK_BLOOM_BLOCKED};
    sk_bloom_layer first, second;
    assert_int_equal(sk_bloom_plan(&o, 0, &first), SK_OK);
    assert_int_equal(sk_bloom_plan(&o, 1, &second), SK_EFULL);
    /* A filter whose first layer is full (its count said so by a dump
     * header: the arrays, a gigabyte, are mapped lazily and never touched). */
    sk_bloom *f = NULL;
    assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
    size_t head_len = sk_bloom_dump_header_size(f), header_len;
    uint8_t *head = malloc(head_len);
    assert_non_null(head);
    assert_int_equal(sk_bloom_dump_read(f, 0, head, head_len), SK_OK);
    sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_COUNT, first.capacity);
    fix_checksum(head);
    sk_bloom *g = NULL;
    assert_int_equal(sk_bloom_restore_begin(&g, head, head_len, &header_len, NULL, 0), SK_OK);
    uint64_t key = 1;
    assert_int_equal(add_key(g, key), SK_EFULL);
    assert_int_equal(info_of(g).layers, 1);
    sk_bloom_free(g);
    sk_bloom_free(f);
    free(head);
}

/* The calls by hash are the calls by item with the item's hash: the same
 * answers and the same bytes, single and in batches, every layout. */
static void test_calls_by_hash_are_calls_by_item(void **state)
{
    (void)state;
    enum { N = 5003 };
    static uint64_t keys[N];
    static const void *items[N];
    static size_t lens[N];
    static sk_bloom_hash hashes[N];
    static uint8_t added[N], found[N], found_hash[N];
    uint64_t seed = 11;
    for (size_t i = 0; i < N; i++) {
        keys[i] = splitmix64(&seed) & ~ABSENT_BIT;
        items[i] = &keys[i];
        lens[i] = sizeof keys[i];
        hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
    }
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *byitem, *single, *batch;
        if (kind < 2) {
            sk_bloom_layout layout = kind == 0 ? SK_BLOOM_BLOCKED : SK_BLOOM_CLASSIC;
            byitem = new_filter(N, 0.01, layout);
            single = new_filter(N, 0.01, layout);
            batch = new_filter(N, 0.01, layout);
        } else {
            byitem = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
            single = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
            batch = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
        }
        assert_int_equal(sk_bloom_add_hash_batch(batch, hashes, N, added), SK_OK);
        for (size_t i = 0; i < N; i++) {
            int rc = sk_bloom_add(byitem, items[i], lens[i]);
            assert_int_equal(sk_bloom_add_hash(single, hashes[i]), rc);
            assert_int_equal(added[i], rc);
        }
        uint64_t size, single_size, batch_size;
        assert_int_equal(sk_bloom_serialized_size(byitem, &size), SK_OK);
        assert_int_equal(sk_bloom_serialized_size(single, &single_size), SK_OK);
        assert_int_equal(sk_bloom_serialized_size(batch, &batch_size), SK_OK);
        assert_int_equal(single_size, size);
        assert_int_equal(batch_size, size);
        uint8_t *a = malloc((size_t)size), *b = malloc((size_t)size), *c = malloc((size_t)size);
        size_t len;
        assert_true(a && b && c);
        assert_int_equal(sk_bloom_serialize(byitem, a, (size_t)size, &len), SK_OK);
        assert_int_equal(sk_bloom_serialize(single, b, (size_t)size, &len), SK_OK);
        assert_int_equal(sk_bloom_serialize(batch, c, (size_t)size, &len), SK_OK);
        assert_memory_equal(a, b, (size_t)size);
        assert_memory_equal(a, c, (size_t)size);
        free(a);
        free(b);
        free(c);
        /* Queries of present and absent items. */
        for (size_t i = 0; i < N; i++) {
            keys[i] ^= i % 2 ? ABSENT_BIT : 0;
            hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
        }
        sk_bloom_contains_batch(byitem, items, lens, N, found);
        sk_bloom_contains_hash_batch(byitem, hashes, N, found_hash);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(found_hash[i], found[i]);
            assert_int_equal(sk_bloom_contains_hash(byitem, hashes[i]), found[i]);
            if (i % 2 == 0)
                assert_int_equal(found[i], 1);
            keys[i] ^= i % 2 ? ABSENT_BIT : 0;
            hashes[i] = sk_bloom_hash_bytes(items[i], lens[i]);
        }
        sk_bloom_free(byitem);
        sk_bloom_free(single);
        sk_bloom_free(batch);
    }
}

/* Filters filled through sk_bloom_hash_u64 of 64-bit hashes: no false
 * negatives, and the false-positive rate of the formula, within 5 binomial
 * standard errors over 2M absent hashes. */
static void test_hash_u64_meets_the_rate(void **state)
{
    (void)state;
    enum { N = 1000000, ABSENT = 2000000 };
    static const sk_bloom_layout layouts[] = {SK_BLOOM_BLOCKED, SK_BLOOM_CLASSIC, SK_BLOOM_SPLIT};
    for (int layout_i = 0; layout_i < 3; layout_i++) {
        sk_bloom_layout layout = layouts[layout_i];
        sk_bloom *f = new_filter(N, 0.01, layout);
        uint64_t seed = 5;
        for (uint64_t i = 0; i < N; i++)
            assert_true(sk_bloom_add_hash(f, sk_bloom_hash_u64(splitmix64(&seed))) >= 0);
        seed = 5;
        for (uint64_t i = 0; i < N; i++)
            assert_int_equal(sk_bloom_contains_hash(f, sk_bloom_hash_u64(splitmix64(&seed))), 1);
        uint64_t positives = 0;
        for (uint64_t i = 0; i < ABSENT; i++)
            positives += (uint64_t)sk_bloom_contains_hash(f, sk_bloom_hash_u64(splitmix64(&seed)));
        double expected = sk_bloom_expected_fp_rate(f, info_of(f).count);
        double sigma = sqrt(expected * (1 - expected) / ABSENT), rate = (double)positives / ABSENT;
        if (fabs(rate - expected) > 5 * sigma)
            print_error("layout %d: rate %g, expected %g (sigma %g)\n", layout, rate, expected, sigma);
        assert_true(fabs(rate - expected) <= 5 * sigma);
        sk_bloom_free(f);
    }
}

/* The batch calls agree exactly with the single ones, item by item, in the
 * same order, duplicates within a batch included. */
static void test_batch_matches_single(void **state)
{
    (void)state;
    enum { N = 20011 }; /* not a multiple of any batch size */
    uint64_t *keys = malloc(N * sizeof *keys);
    const void **items = malloc(N * sizeof *items);
    size_t *lens = malloc(N * sizeof *lens);
    uint8_t *added = malloc(N), *found = malloc(N);
    assert_true(keys && items && lens && added && found);
    uint64_t seed = 7;
    for (size_t i = 0; i < N; i++) {
        /* One in four is a repeat of an earlier key, often within a batch. */
        keys[i] = (i > 0 && splitmix64(&seed) % 4 == 0) ? keys[i - 1 - splitmix64(&seed) % (i < 40 ? i : 40)]
                                                        : splitmix64(&seed) & ~ABSENT_BIT;
        items[i] = &keys[i];
        lens[i] = (i % 5 == 0) ? 5 : sizeof keys[i]; /* some shorter items */
    }
    /* writers 0: both filters take any number of writers; 1: the batch
     * filter is set to one writer; 2: the single-add filter is. The plain
     * stores of one writer must set exactly the bits locked ORs set.
     * Scalable filters (kinds 3, 4, 7) always have one writer; kind 6 is
     * split with 16 lanes. */
    for (int run = 0; run < 24; run++) {
        int kind = run % 8, writers = run / 8;
        if (writers != 0 && (kind == 3 || kind == 4 || kind == 7))
            continue;
        sk_bloom *a, *b;
        switch (kind) {
        case 0: a = new_filter(N, 0.01, SK_BLOOM_BLOCKED); b = new_filter(N, 0.01, SK_BLOOM_BLOCKED); break;
        case 1: a = new_filter(N, 0.01, SK_BLOOM_CLASSIC); b = new_filter(N, 0.01, SK_BLOOM_CLASSIC); break;
        case 2: a = new_filter(N / 8, 0.1, SK_BLOOM_CLASSIC); b = new_filter(N / 8, 0.1, SK_BLOOM_CLASSIC); break;
        case 3: a = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED); b = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED); break;
        case 4: a = new_scalable(100, 0.01, 3, SK_BLOOM_CLASSIC); b = new_scalable(100, 0.01, 3, SK_BLOOM_CLASSIC); break;
        case 5: a = new_filter(N, 0.01, SK_BLOOM_SPLIT); b = new_filter(N, 0.01, SK_BLOOM_SPLIT); break;
        case 6: a = new_filter(N / 8, 1e-5, SK_BLOOM_SPLIT); b = new_filter(N / 8, 1e-5, SK_BLOOM_SPLIT); break;
        default: a = new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT); b = new_scalable(100, 0.01, 2, SK_BLOOM_SPLIT); break;
        }
        sk_bloom_set_single_writer(writers == 2 ? a : b, writers != 0);
        /* In uneven chunks, so that batches start anywhere. */
        size_t done = 0, chunk = 1;
        while (done < N) {
            size_t count = N - done < chunk ? N - done : chunk;
            assert_int_equal(sk_bloom_add_batch(b, items + done, lens + done, count, added + done), SK_OK);
            done += count;
            chunk = chunk * 3 % 1000 + 1;
        }
        for (size_t i = 0; i < N; i++) {
            int rc = sk_bloom_add(a, items[i], lens[i]);
            if (rc != added[i])
                print_error("kind %d writers %d item %zu: add %d, batch %d\n", kind, writers, i,
                            rc, added[i]);
            assert_int_equal(rc, added[i]);
        }
        assert_same_info(a, b);
        /* The same bits: the files are identical. */
        char pa[PATH_MAX], pb[PATH_MAX];
        path_of(pa, "batch-a.bloom");
        path_of(pb, "batch-b.bloom");
        save_ok(a, pa);
        save_ok(b, pb);
        size_t la, lb;
        uint8_t *fa = read_whole(pa, &la), *fb = read_whole(pb, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        free(fa);
        free(fb);
        unlink(pa);
        unlink(pb);
        /* contains_batch on present and absent items, against contains. */
        for (size_t i = 0; i < N; i++)
            if (i % 2)
                keys[i] |= ABSENT_BIT;
        sk_bloom_contains_batch(a, items, lens, N, found);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(found[i], sk_bloom_contains(a, items[i], lens[i]));
            if (!(keys[i] & ABSENT_BIT))
                assert_int_equal(found[i], 1);
        }
        for (size_t i = 0; i < N; i++)
            if (i % 2)
                keys[i] &= ~ABSENT_BIT;
        /* A NULL `added` and n = 0 are fine. */
        assert_int_equal(sk_bloom_add_batch(b, items, lens, 100, NULL), SK_OK);
        assert_int_equal(sk_bloom_add_batch(b, items, lens, 0, NULL), SK_OK);
        sk_bloom_contains_batch(b, items, lens, 0, found);
        assert_int_equal(info_of(b).count, info_of(a).count);
        sk_bloom_free(a);
        sk_bloom_free(b);
    }
    free(keys);
    free(items);
    free(lens);
    free(added);
    free(found);
}

/* ---- union, intersection, clear ------------------------------------------ */

static void test_union_and_intersection(void **state)
{
    (void)state;
    const uint64_t n = 20000;
    for (int kind = 0; kind < 4; kind++) {
        sk_bloom *a, *b, *c;
        if (kind < 2) {
            a = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
            b = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
            c = new_filter(2 * n, 0.01, (sk_bloom_layout)kind);
        } else {
            a = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
            b = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
            c = new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
        }
        add_range(a, 0, n);
        add_range(b, n, 2 * n);
        add_range(c, 0, n);
        assert_int_equal(info_of(a).layers, info_of(b).layers);

        /* Union: both sets; the count becomes the estimate of 2n. */
        assert_int_equal(sk_bloom_merge(a, b), SK_OK);
        assert_all_found(a, 0, 2 * n);
        double est = (double)info_of(a).count;
        assert_true(fabs(est - 2.0 * n) < 0.05 * 2 * n);
        assert_int_equal(info_of(a).count, sk_bloom_estimate_items(a));
        assert_all_found(b, n, 2 * n); /* src unchanged */

        /* Intersection of disjoint sets: an item of either survives only as a
         * false positive of the other, a few percent at most. (Scalable
         * filters may refuse it: test_intersection_of_scalable_filters.) */
        double fp = sk_bloom_expected_fp_rate(b, n);
        int rc = sk_bloom_intersect(c, b);
        if (kind >= 2 && rc == SK_EINCOMPAT) {
            assert_all_found(c, 0, n); /* unchanged */
            assert_int_equal(sk_bloom_intersect(c, c), SK_EINCOMPAT);
            sk_bloom_free(a);
            sk_bloom_free(b);
            sk_bloom_free(c);
            continue;
        }
        assert_int_equal(rc, SK_OK);
        uint64_t kept = 0;
        for (uint64_t key = 0; key < 2 * n; key++)
            kept += (uint64_t)has_key(c, key);
        if (!((double)kept < 2 * n * (4 * fp + 0.002)))
            print_error("kind %d: intersection of disjoint sets keeps %llu of %llu (fp %g)\n",
                        kind, (unsigned long long)kept, (unsigned long long)(2 * n), fp);
        assert_true((double)kept < 2 * n * (4 * fp + 0.002));
        assert_true(info_of(c).count < n / 2);

        /* Intersection of overlapping sets keeps every common item (of
         * scalable filters: test_intersection_of_scalable_filters). */
        sk_bloom *d = kind < 2 ? new_filter(2 * n, 0.01, (sk_bloom_layout)kind)
                               : new_scalable(n / 8, 0.01, 2, (sk_bloom_layout)(kind - 2));
        add_range(d, n / 2, n / 2 + n);
        if (kind < 2) {
            assert_int_equal(sk_bloom_intersect(d, b), SK_OK);
            assert_all_found(d, n, n / 2 + n);
        }

        /* The same filter with itself is unchanged. */
        assert_int_equal(sk_bloom_merge(b, b), SK_OK);
        assert_int_equal(sk_bloom_intersect(b, b), SK_OK);
        assert_all_found(b, n, 2 * n);

        assert_int_equal(sk_bloom_merge(NULL, b), SK_EINVAL);
        assert_int_equal(sk_bloom_merge(a, NULL), SK_EINVAL);
        assert_int_equal(sk_bloom_intersect(NULL, b), SK_EINVAL);
        assert_int_equal(sk_bloom_intersect(a, NULL), SK_EINVAL);
        sk_bloom_free(a);
        sk_bloom_free(b);
        sk_bloom_free(c);
        sk_bloom_free(d);
    }

    /* Shapes that differ. */
    sk_bloom *base = new_filter(10000, 0.01, SK_BLOOM_CLASSIC);
    add_range(base, 0, 100);
    sk_bloom *other[] = {
        new_filter(20000, 0.01, SK_BLOOM_CLASSIC),
        new_filter(10000, 0.01, SK_BLOOM_BLOCKED),
        new_filter(10000, 0.001, SK_BLOOM_CLASSIC),
        new_explicit(info_of(base).bits, info_of(base).hashes + 1, SK_BLOOM_CLASSIC),
        new_explicit(info_of(base).bits + 1, info_of(base).hashes, SK_BLOOM_CLASSIC),
        new_scalable(10000, 0.02, 2, SK_BLOOM_CLASSIC),
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        assert_int_equal(sk_bloom_merge(base, other[i]), SK_EINCOMPAT);
        assert_int_equal(sk_bloom_intersect(base, other[i]), SK_EINCOMPAT);
        assert_int_equal(sk_bloom_merge(other[i], base), SK_EINCOMPAT);
        assert_int_equal(sk_bloom_intersect(other[i], base), SK_EINCOMPAT);
        sk_bloom_free(other[i]);
    }
    assert_all_found(base, 0, 100);
    assert_int_equal(info_of(base).count, 100);
    /* An explicit filter of the same bits and hashes is the same shape. */
    sk_bloom *same = new_explicit(info_of(base).bits, info_of(base).hashes, SK_BLOOM_CLASSIC);
    add_range(same, 100, 200);
    assert_int_equal(sk_bloom_merge(same, base), SK_OK);
    assert_all_found(same, 0, 200);
    sk_bloom_free(same);
    sk_bloom_free(base);

    /* Scalable filters with different numbers of layers, or expansions. */
    sk_bloom *s1 = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    sk_bloom *s2 = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    sk_bloom *s3 = new_scalable(100, 0.01, 3, SK_BLOOM_BLOCKED);
    add_range(s2, 0, 1000);
    assert_int_equal(sk_bloom_merge(s1, s2), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_merge(s2, s1), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_merge(s1, s3), SK_EINCOMPAT);
    assert_int_equal(sk_bloom_intersect(s1, s3), SK_EINCOMPAT);
    sk_bloom_free(s1);
    sk_bloom_free(s2);
    sk_bloom_free(s3);
}

/* The intersection of two scalable filters holds every item added to both
 * (or the call refuses them with SK_EINCOMPAT): an item can sit in layer 3
 * of one filter and in layer 0 of the other, so intersecting layer by layer
 * loses it, a false negative. */
static void test_intersection_of_scalable_filters(void **state)
{
    (void)state;
    int failures = 0;
    for (int l = 0; l < 2; l++) {
        sk_bloom *d = new_scalable(100, 0.01, 2, (sk_bloom_layout)l);
        sk_bloom *b = new_scalable(100, 0.01, 2, (sk_bloom_layout)l);
        add_range(d, 0, 1000);
        add_range(b, 500, 1500);
        assert_int_equal(info_of(d).layers, info_of(b).layers);
        int rc = sk_bloom_intersect(d, b);
        uint64_t lost = 0;
        if (rc == SK_OK) {
            lost = 500 - count_found(d, 500, 500);
            if (lost)
                print_error("layout %d: items [0,1000) and [500,1500): after "
                            "sk_bloom_intersect, %llu of the 500 common items are not found\n",
                            l, (unsigned long long)lost);
        } else {
            lost = 1000 - count_found(d, 0, 1000); /* refused: dst unchanged */
        }
        sk_bloom_free(d);
        sk_bloom_free(b);
        assert_true(rc == SK_OK || rc == SK_EINCOMPAT);
        failures += lost != 0;
    }
    assert_int_equal(failures, 0);
}

static void test_clear(void **state)
{
    (void)state;
    sk_bloom *filters[] = {
        new_filter(5000, 0.01, SK_BLOOM_BLOCKED),
        new_filter(5000, 0.01, SK_BLOOM_CLASSIC),
        new_explicit(10001, 4, SK_BLOOM_CLASSIC),
        new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED),
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        sk_bloom *f = filters[i];
        sk_bloom_info before = info_of(f);
        add_range(f, 0, 5000);
        assert_int_equal(sk_bloom_clear(f), SK_OK);
        sk_bloom_info after = info_of(f);
        assert_int_equal(after.count, 0);
        assert_int_equal(after.layers, 1);
        assert_int_equal(after.bits, before.bits);
        assert_int_equal(after.capacity, before.capacity);
        assert_int_equal(after.array_bytes, before.array_bytes);
        assert_int_equal(sk_bloom_estimate_items(f), 0);
        assert_int_equal(count_found(f, 0, 5000), 0);
        /* It works as new afterwards, growing again if scalable. */
        uint64_t changed = add_range(f, 0, 5000);
        assert_int_equal(info_of(f).count, changed);
        assert_all_found(f, 0, 5000);
        sk_bloom_free(f);
    }
    assert_int_equal(sk_bloom_clear(NULL), SK_EINVAL);
}

/* ---- info, rates, estimates ---------------------------------------------- */

static void test_info(void **state)
{
    (void)state;
    for (int l = 0; l < 3; l++) {
        sk_bloom_layout layout = (sk_bloom_layout)l;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(30000, 0.02, &layout, &m, &k), SK_OK);
        sk_bloom *f = new_filter(30000, 0.02, (sk_bloom_layout)l);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.layout, layout);
        assert_true(info.layout == SK_BLOOM_BLOCKED || info.layout == SK_BLOOM_CLASSIC ||
                    info.layout == SK_BLOOM_SPLIT);
        assert_int_equal(info.bits, m);
        assert_int_equal(info.hashes, k);
        assert_int_equal(info.capacity, 30000);
        assert_true(info.fp_rate == 0.02);
        assert_int_equal(info.count, 0);
        assert_int_equal(info.layers, 1);
        assert_int_equal(info.expansion, 0);
        assert_int_equal(info.array_bytes, (m + 63) / 64 * 8);
        uint64_t changed = add_range(f, 0, 1000);
        assert_int_equal(info_of(f).count, changed);
        assert_true(changed >= 990);
        add_range(f, 0, 1000);
        assert_int_equal(info_of(f).count, changed);
        sk_bloom_free(f);
    }

    /* A scalable filter: sums over its layers, each sized for `expansion`
     * times the capacity of the previous at half its rate. */
    sk_bloom *f = new_scalable(1000, 0.01, 3, SK_BLOOM_CLASSIC);
    uint64_t changed = add_range(f, 0, 30000);
    sk_bloom_info info = info_of(f);
    assert_int_equal(info.count, changed);
    assert_int_equal(info.expansion, 3);
    assert_true(info.fp_rate == 0.01);
    assert_int_equal(info.layout, SK_BLOOM_CLASSIC);
    assert_true(info.layers >= 4);
    uint64_t cap = 1000, bits = 0, caps = 0, memory = 0;
    double rate = 0.005;
    unsigned first_k = 0;
    for (unsigned i = 0; i < info.layers; i++) {
        sk_bloom_layout layout = SK_BLOOM_CLASSIC;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(cap, rate, &layout, &m, &k), SK_OK);
        if (i == 0)
            first_k = k;
        bits += m;
        memory += (m + 63) / 64 * 8;
        caps += cap;
        cap *= 3;
        rate /= 2;
    }
    assert_int_equal(info.bits, bits);
    assert_int_equal(info.array_bytes, memory);
    assert_int_equal(info.capacity, caps);
    assert_int_equal(info.hashes, first_k);
    /* All layers but the newest are full. */
    assert_true(info.capacity - cap / 3 <= changed && changed <= info.capacity);
    sk_bloom_free(f);
}

static void test_expected_fp_rate(void **state)
{
    (void)state;
    static const double rates[] = {0.1, 1e-2, 1e-3, 1e-4, 1e-6};
    for (int l = 0; l < 2; l++) {
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            const uint64_t n = 1000000;
            sk_bloom *f = new_filter(n, rates[r], (sk_bloom_layout)l);
            assert_true(sk_bloom_expected_fp_rate(f, 0) == 0);
            double prev = 0;
            for (uint64_t items = n / 16; items <= 4 * n; items += n / 16) {
                double e = sk_bloom_expected_fp_rate(f, items);
                assert_true(e >= prev && e <= 1);
                prev = e;
            }
            double at = sk_bloom_expected_fp_rate(f, n);
            if (!(at <= rates[r] && at >= 0.98 * rates[r]))
                print_error("layout %d p=%g: expected rate at capacity %g\n", l, rates[r], at);
            assert_true(at <= rates[r] && at >= 0.98 * rates[r]);
            assert_true(sk_bloom_expected_fp_rate(f, 100 * n) > 0.5);
            sk_bloom_free(f);
        }
    }
    /* Small filters meet their rate too (blocked: within a block of 512 bits). */
    for (int l = 0; l < 2; l++) {
        sk_bloom *f = new_filter(100, 0.01, (sk_bloom_layout)l);
        double at = sk_bloom_expected_fp_rate(f, 100);
        assert_true(at <= 0.01 && at > 0.0001);
        sk_bloom_free(f);
    }
    /* Scalable: the whole chain stays below the requested rate at the
     * capacity of the layers it has, and rises with the items. */
    sk_bloom *s = new_scalable(1000, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(s, 0, 50000);
    sk_bloom_info info = info_of(s);
    double prev = 0;
    for (uint64_t items = 0; items <= info.capacity; items += info.capacity / 100) {
        double e = sk_bloom_expected_fp_rate(s, items);
        assert_true(e >= prev);
        prev = e;
    }
    assert_true(sk_bloom_expected_fp_rate(s, info.capacity) <= 0.01);
    assert_true(sk_bloom_expected_fp_rate(s, info.capacity) > 0.005);
    sk_bloom_free(s);
}

static void test_estimate_items(void **state)
{
    (void)state;
    for (int kind = 0; kind < 4; kind++) {
        const uint64_t n = 200000;
        sk_bloom *f;
        switch (kind) {
        case 0: f = new_filter(n, 0.01, SK_BLOOM_BLOCKED); break;
        case 1: f = new_filter(n, 0.01, SK_BLOOM_CLASSIC); break;
        case 2: f = new_filter(n, 0.001, SK_BLOOM_BLOCKED); break;
        default: f = new_scalable(n / 16, 0.01, 2, SK_BLOOM_CLASSIC); break;
        }
        assert_int_equal(sk_bloom_estimate_items(f), 0);
        add_range(f, 0, n / 2);
        double e = (double)sk_bloom_estimate_items(f);
        if (fabs(e - n / 2.0) > 0.03 * n / 2.0)
            print_error("kind %d: estimate %g at %llu items\n", kind, e, (unsigned long long)(n / 2));
        assert_true(fabs(e - n / 2.0) <= 0.03 * n / 2.0);
        add_range(f, n / 2, n);
        e = (double)sk_bloom_estimate_items(f);
        if (fabs(e - (double)n) > 0.03 * n)
            print_error("kind %d: estimate %g at %llu items\n", kind, e, (unsigned long long)n);
        assert_true(fabs(e - (double)n) <= 0.03 * n);
        sk_bloom_free(f);
    }
    /* A saturated filter estimates at least its capacity. */
    sk_bloom *f = new_explicit(64, 1, SK_BLOOM_CLASSIC);
    add_range(f, 0, 5000);
    assert_true(sk_bloom_estimate_items(f) >= info_of(f).capacity);
    sk_bloom_free(f);
}

/* ---- files --------------------------------------------------------------- */

/* g answers as f does on `queries` items, half of them added ones. */
static void assert_same_answers(const sk_bloom *f, const sk_bloom *g, uint64_t added,
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

static void test_save_open_round_trip(void **state)
{
    (void)state;
    for (int kind = 0; kind < 9; kind++) {
        sk_bloom *f;
        uint64_t n = 50000;
        switch (kind) {
        case 0: f = new_filter(n, 0.01, SK_BLOOM_CLASSIC); break;
        case 1: f = new_filter(n, 0.01, SK_BLOOM_BLOCKED); break;
        case 2: f = new_scalable(1000, 0.01, 2, SK_BLOOM_BLOCKED); break;
        case 3: f = new_scalable(500, 1e-4, 3, SK_BLOOM_CLASSIC); break;
        case 4: f = new_explicit(300007, 5, SK_BLOOM_CLASSIC); break; /* bits % 64 != 0 */
        case 5: f = new_explicit(300000, 9, SK_BLOOM_BLOCKED); break;
        case 6: f = new_filter(n, 0.01, SK_BLOOM_SPLIT); break;
        case 7: f = new_scalable(1000, 1e-4, 2, SK_BLOOM_SPLIT); break;
        default: f = new_filter(10, 0.01, SK_BLOOM_CLASSIC); n = 10; break; /* < 1 page */
        }
        add_range(f, 0, n);
        sk_bloom_info info = info_of(f);
        if (info.expansion != 0)
            assert_true(info.layers >= 5);
        char p[PATH_MAX];
        path_of(p, "round.bloom");
        save_ok(f, p);

        /* The file: arrays on 4096-byte boundaries, then the sums of their
         * chunks and the change marks, all clear. */
        size_t len;
        uint8_t *bytes = read_whole(p, &len);
        assert_memory_equal(bytes, "SKBF", 4);
        int split = info.layout == SK_BLOOM_SPLIT;
        assert_int_equal(bytes[4], split ? SK_BF_VERSION_SPLIT : SK_BF_VERSION_FILE);
        assert_int_equal(bytes[SK_BF_OFF_CHUNK_SHIFT], SK_BF_CHUNK_SHIFT);
        assert_int_equal(bytes[5], split ? SK_BF_LAYOUT_SPLIT : info.layout);
        assert_int_equal(sk_load_le32(bytes + SK_BF_OFF_LAYERS), info.layers);
        assert_int_equal(sk_load_le32(bytes + SK_BF_OFF_EXPANSION), info.expansion);
        uint64_t end = 0;
        for (unsigned i = 0; i < info.layers; i++) {
            const uint8_t *e = bytes + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * i;
            uint64_t off = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), words = (sk_load_le64(e) + 63) / 64;
            assert_int_equal(off % SK_BF_FILE_ALIGN, 0);
            assert_true(off >= (i == 0 ? SK_BF_HEADER_SIZE + (uint64_t)SK_BF_LAYER_SIZE * info.layers : end));
            assert_true(off < (i == 0 ? SK_BF_HEADER_SIZE + (uint64_t)SK_BF_LAYER_SIZE * info.layers : end) + SK_BF_FILE_ALIGN);
            assert_int_equal(sk_load_le64(e + SK_BF_LAYER_OFF_CHECKSUM), 0);
            end = off + words * 8;
        }
        const uint8_t *sum = bytes + end;
        uint64_t chunks = 0;
        for (unsigned i = 0; i < info.layers; i++) {
            const uint8_t *e = bytes + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * i;
            uint64_t off = sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), size = (sk_load_le64(e) + 63) / 64 * 8;
            const uint64_t chunk = (uint64_t)1 << SK_BF_CHUNK_SHIFT;
            for (uint64_t at = 0; at < size; at += chunk, sum += SK_BF_SUM_SIZE, chunks++)
                assert_true(XXH3_64bits(bytes + off + at, size - at < chunk ? size - at : chunk) ==
                            sk_load_le64(sum));
        }
        for (uint64_t m = 0; m < (chunks + 63) / 64 * 8; m++)
            assert_int_equal(sum[m], 0);
        assert_int_equal((size_t)(sum - bytes) + (chunks + 63) / 64 * 8, len);
        free(bytes);

        for (unsigned flags = 0; flags <= SK_BLOOM_VERIFY; flags++) {
            sk_bloom *g = open_ok(p, flags);
            assert_same_info(f, g);
            assert_same_answers(f, g, n, 100000);
            /* Saving the opened filter gives the same file. */
            char q[PATH_MAX];
            path_of(q, "round2.bloom");
            save_ok(g, q);
            size_t l1, l2;
            uint8_t *b1 = read_whole(p, &l1), *b2 = read_whole(q, &l2);
            assert_int_equal(l1, l2);
            assert_memory_equal(b1, b2, l1);
            free(b1);
            free(b2);
            unlink(q);
            sk_bloom_free(g);
        }
        unlink(p);
        sk_bloom_free(f);
    }
}

static void test_save_keeps_mode_and_replaces(void **state)
{
    (void)state;
    char p[PATH_MAX];
    path_of(p, "mode.bloom");
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_AUTO);
    save_ok(f, p);
    assert_int_equal(chmod(p, 0640), 0);
    add_range(f, 0, 10);
    save_ok(f, p);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    sk_bloom *g = open_ok(p, SK_BLOOM_VERIFY);
    assert_all_found(g, 0, 10);
    sk_bloom_free(g);
    /* A relative path with no directory works too. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    save_ok(f, "relative.bloom");
    g = open_ok("relative.bloom", 0);
    assert_all_found(g, 0, 10);
    sk_bloom_free(g);
    unlink("relative.bloom");
    assert_int_equal(chdir(cwd), 0);
    unlink(p);
    sk_bloom_free(f);
}

/* A filter opened from a file, changed, saved elsewhere: the new file has the
 * changes, the old one is byte for byte as it was. */
/* A filter opened without SK_BLOOM_MAP is read into memory: the file cut
 * short or rewritten in place afterwards (cp over it, rsync --inplace)
 * changes nothing in it, and its save writes what it holds. Mapped, it
 * answers the same while the file stays as it was. */
static void test_opened_filter_is_its_own(void **state)
{
    (void)state;
    sk_bloom *f = new_scalable(2000, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(f, 0, 10000);
    char a[PATH_MAX], b[PATH_MAX];
    path_of(a, "own.bloom");
    path_of(b, "own-saved.bloom");
    save_ok(f, a);
    sk_bloom *mapped = open_ok(a, SK_BLOOM_MAP | SK_BLOOM_VERIFY);
    assert_all_found(mapped, 0, 10000);
    assert_same_answers(f, mapped, 10000, 20000);
    sk_bloom_free(mapped);

    sk_bloom *g = open_ok(a, 0);
    FILE *out = fopen(a, "r+b");
    assert_non_null(out);
    char junk[8192];
    memset(junk, 0x5a, sizeof junk);
    assert_int_equal(fwrite(junk, 1, sizeof junk, out), sizeof junk);
    fclose(out);
    assert_int_equal(truncate(a, 4096), 0);
    assert_all_found(g, 0, 10000);
    assert_same_answers(f, g, 10000, 20000);
    save_ok(g, b);
    sk_bloom *h = open_ok(b, SK_BLOOM_VERIFY);
    assert_same_info(f, h);
    assert_same_answers(f, h, 10000, 20000);
    sk_bloom_free(h);
    sk_bloom_free(g);
    sk_bloom_free(f);
    assert_int_equal(sk_bloom_open(&g, a, 8u, NULL), SK_EINVAL);
}

static void test_opened_filter_changes_stay_private(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *f = kind == 0   ? new_filter(20000, 0.01, SK_BLOOM_BLOCKED)
                      : kind == 1 ? new_filter(20000, 0.01, SK_BLOOM_CLASSIC)
                                  : new_scalable(2000, 0.01, 2, SK_BLOOM_BLOCKED);
        add_range(f, 0, 5000);
        char a[PATH_MAX], b[PATH_MAX];
        path_of(a, "orig.bloom");
        path_of(b, "changed.bloom");
        save_ok(f, a);
        size_t la;
        uint8_t *before = read_whole(a, &la);

        sk_bloom *g = open_ok(a, SK_BLOOM_VERIFY);
        uint64_t changed = add_range(g, 5000, 20000);
        assert_true(changed > 14000);
        if (kind == 2)
            assert_true(info_of(g).layers > info_of(f).layers); /* grown in memory */
        sk_bloom_info ginfo = info_of(g);
        save_ok(g, b);
        /* The original file, and a filter mapping it, are unchanged. */
        size_t la2;
        uint8_t *after = read_whole(a, &la2);
        assert_int_equal(la, la2);
        assert_memory_equal(before, after, la);
        free(before);
        free(after);
        sk_bloom *orig = open_ok(a, SK_BLOOM_VERIFY);
        assert_same_info(f, orig);
        assert_true(count_found(orig, 5000, 15000) < 15000 / 10);
        sk_bloom_free(orig);

        sk_bloom *h = open_ok(b, SK_BLOOM_VERIFY);
        assert_all_found(h, 0, 20000);
        sk_bloom_info hinfo = info_of(h);
        assert_int_equal(hinfo.count, ginfo.count);
        assert_int_equal(hinfo.layers, ginfo.layers);
        assert_int_equal(hinfo.bits, ginfo.bits);
        assert_same_answers(g, h, 20000, 20000);
        /* Clearing the mapped copy does not touch the file either. */
        assert_int_equal(sk_bloom_clear(h), SK_OK);
        assert_int_equal(count_found(h, 0, 1000), 0);
        sk_bloom_free(h);
        sk_bloom *h2 = open_ok(b, SK_BLOOM_VERIFY);
        assert_all_found(h2, 0, 20000);
        sk_bloom_free(h2);
        /* Saving over the file it maps. */
        add_range(g, 20000, 21000);
        save_ok(g, a);
        sk_bloom_free(g);
        g = open_ok(a, SK_BLOOM_VERIFY);
        assert_all_found(g, 0, 21000);
        sk_bloom_free(g);
        unlink(a);
        unlink(b);
        sk_bloom_free(f);
    }
}

/* The positions of an item's bits, as docs/bloom-format.md defines them. */
__extension__ typedef unsigned __int128 u128;

static uint64_t reduce64(uint64_t x, uint64_t n)
{
    return (uint64_t)(((u128)x * n) >> 64);
}

static unsigned format_positions(sk_bloom_layout layout, uint64_t bits, unsigned k,
                                 uint64_t key, uint64_t *pos)
{
    XXH128_hash_t h = XXH3_128bits(&key, sizeof key);
    if (layout == SK_BLOOM_CLASSIC) {
        uint64_t x = h.low64, step = h.high64 | 1;
        for (unsigned i = 0; i < k; i++) {
            pos[i] = reduce64(x, bits);
            x = x * UINT64_C(0x5851f42d4c957f2d) + step;
        }
    } else {
        uint64_t block = reduce64(h.low64, bits / 512), x = h.high64;
        for (unsigned i = 0; i < k; i++) {
            pos[i] = block * 512 + (x >> 55);
            x = x * UINT64_C(0x5851f42d4c957f2d) + UINT64_C(0x14057b7ef767814f);
        }
    }
    return k;
}

/* Filters of more than 2^32 bits: no false negatives, a sane false-positive
 * count, and bits past 2^32 in use. The last is shown twice over: the
 * positions of docs/bloom-format.md reach past 2^32 for most items, and a
 * file holding exactly those bits (written sparse, by this test) is read by
 * sk_bloom_contains as holding those items, so contains reads the bits the
 * format defines; the filter built by sk_bloom_add has no false negative, so
 * add sets all of them. */
static void test_filters_above_2_to_32_bits(void **state)
{
    (void)state;
    static const struct {
        sk_bloom_layout layout;
        uint64_t bits;
        unsigned k;
    } cases[] = {{SK_BLOOM_CLASSIC, (UINT64_C(1) << 33) + 123, 4},
                 {SK_BLOOM_BLOCKED, UINT64_C(1) << 33, 6}};
    const uint64_t n = 100000, checked = 2000;
    for (size_t c = 0; c < 2; c++) {
        sk_bloom *f = new_explicit(cases[c].bits, cases[c].k, cases[c].layout);
        sk_bloom_info info = info_of(f);
        assert_int_equal(info.bits, cases[c].bits);
        assert_int_equal(info.array_bytes, (cases[c].bits + 63) / 64 * 8);
        assert_int_equal(add_range(f, 0, n), n); /* no collisions at this size */
        assert_int_equal(info_of(f).count, n);
        assert_all_found(f, 0, n);
        uint64_t fp = count_found(f, ABSENT_BIT, n);
        double expected = sk_bloom_expected_fp_rate(f, n) * (double)n;
        assert_true(expected < 1e-6);
        assert_true(fp <= 2);
        double est = (double)sk_bloom_estimate_items(f);
        assert_true(fabs(est - (double)n) < 0.01 * n);

        /* The format's positions of the first items. */
        uint64_t pos[64], high = 0, total = 0, all_high = 0;
        for (uint64_t key = 0; key < n; key++) {
            unsigned k = format_positions(cases[c].layout, cases[c].bits, cases[c].k, key, pos);
            unsigned h = 0;
            for (unsigned i = 0; i < k; i++)
                h += pos[i] >= (UINT64_C(1) << 32);
            high += h;
            total += k;
            all_high += h == k;
        }
        assert_true(high > total * 2 / 5);
        assert_true(all_high > n / 20);

        /* A sparse file with exactly the format's bits of `checked` items. */
        uint64_t words = (cases[c].bits + 63) / 64;
        uint8_t head[SK_BF_FILE_ALIGN] = {0};
        memcpy(head, "SKBF", 4);
        head[4] = 1;
        head[5] = (uint8_t)cases[c].layout;
        head[6] = 1;
        sk_store_le32(head + SK_BF_OFF_LAYERS, 1);
        sk_store_le64(head + SK_BF_HEADER_SIZE, cases[c].bits);
        sk_store_le32(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_HASHES, cases[c].k);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_CAPACITY, info.capacity);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_COUNT, checked);
        sk_store_le64(head + SK_BF_HEADER_SIZE + SK_BF_LAYER_OFF_ARRAY, SK_BF_FILE_ALIGN);
        fix_checksum(head);
        char p[PATH_MAX];
        path_of(p, "huge.bloom");
        int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, head, sizeof head, 0), (ssize_t)sizeof head);
        assert_int_equal(ftruncate(fd, (off_t)(SK_BF_FILE_ALIGN + words * 8)), 0);
        uint64_t *map = mmap(NULL, (size_t)words * 8, PROT_READ | PROT_WRITE, MAP_SHARED,
                             fd, SK_BF_FILE_ALIGN);
        assert_true(map != MAP_FAILED);
        for (uint64_t key = 0; key < checked; key++) {
            unsigned k = format_positions(cases[c].layout, cases[c].bits, cases[c].k, key, pos);
            for (unsigned i = 0; i < k; i++)
                map[pos[i] / 64] |= UINT64_C(1) << (pos[i] % 64); /* little-endian host */
        }
        assert_int_equal(munmap(map, (size_t)words * 8), 0);
        assert_int_equal(close(fd), 0);
        sk_bloom *g = open_ok(p, 0);
        assert_int_equal(info_of(g).bits, cases[c].bits);
        assert_all_found(g, 0, checked);
        assert_true(count_found(g, checked, checked) <= 1);
        assert_true(count_found(g, ABSENT_BIT, checked) <= 1);
        sk_bloom_free(g);
        unlink(p);
        sk_bloom_free(f);
    }
}

/* ---- dumps ---------------------------------------------------------------- */

static int damage_ok(size_t off, int rc);

static uint8_t *dump_whole(const sk_bloom *f, uint64_t *size)
{
    *size = sk_bloom_dump_size(f);
    uint8_t *buf = malloc((size_t)*size);
    assert_non_null(buf);
    assert_int_equal(sk_bloom_dump_read(f, 0, buf, (size_t)*size), SK_OK);
    return buf;
}

/* Rebuilds a filter from a dump, its array bytes given in pieces of random
 * sizes in a random order. */
static sk_bloom *restore_in_pieces(const uint8_t *dump, uint64_t size, uint64_t *seed)
{
    sk_bloom *g = (sk_bloom *)&g;
    size_t header_len = 0;
    assert_int_equal(sk_bloom_restore_begin(&g, dump, (size_t)size, &header_len, NULL, 0), SK_OK);
    assert_non_null(g);
    uint64_t pieces[64][2];
    int count = 0;
    for (uint64_t at = header_len; at < size && count < 64;) {
        uint64_t len = 1 + splitmix64(seed) % (size / 8 + 1);
        if (count == 63 || len > size - at)
            len = size - at;
        pieces[count][0] = at;
        pieces[count][1] = len;
        count++;
        at += len;
    }
    for (int i = count - 1; i > 0; i--) {
        int j = (int)(splitmix64(seed) % (uint64_t)(i + 1));
        uint64_t t0 = pieces[i][0], t1 = pieces[i][1];
        pieces[i][0] = pieces[j][0], pieces[i][1] = pieces[j][1];
        pieces[j][0] = t0, pieces[j][1] = t1;
    }
    for (int i = 0; i < count; i++)
        assert_int_equal(sk_bloom_restore_chunk(g, pieces[i][0], dump + pieces[i][0],
                                                (size_t)pieces[i][1]),
                         SK_OK);
    assert_int_equal(sk_bloom_restore_finish(g), SK_OK);
    return g;
}

static void test_dump_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 5;
    for (int kind = 0; kind < 7; kind++) {
        sk_bloom *f;
        uint64_t n = 30000;
        switch (kind) {
        case 0: f = new_filter(n, 0.01, SK_BLOOM_CLASSIC); break;
        case 1: f = new_filter(n, 0.01, SK_BLOOM_BLOCKED); break;
        case 2: f = new_scalable(500, 0.01, 2, SK_BLOOM_BLOCKED); break;
        case 3: f = new_scalable(500, 0.001, 3, SK_BLOOM_CLASSIC); break;
        case 4: f = new_filter(n, 0.01, SK_BLOOM_SPLIT); break;
        case 5: f = new_scalable(500, 0.01, 2, SK_BLOOM_SPLIT); break;
        default: f = new_explicit(100003, 5, SK_BLOOM_CLASSIC); break;
        }
        add_range(f, 0, n);
        sk_bloom_info info = info_of(f);
        if (info.expansion)
            assert_true(info.layers >= 4);
        size_t head = sk_bloom_dump_header_size(f);
        assert_int_equal(head, SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * info.layers);
        uint64_t size;
        uint8_t *dump = dump_whole(f, &size);
        /* Packed: the arrays right after the table, one after the other. */
        assert_int_equal(size, head + info.array_bytes);
        assert_memory_equal(dump, "SKBF", 4);
        assert_int_equal(dump[7], 1);
        uint64_t at = head;
        for (unsigned i = 0; i < info.layers; i++) {
            const uint8_t *e = dump + SK_BF_HEADER_SIZE + (size_t)SK_BF_LAYER_SIZE * i;
            uint64_t bytes = (sk_load_le64(e) + 63) / 64 * 8;
            assert_int_equal(sk_load_le64(e + SK_BF_LAYER_OFF_ARRAY), at);
            assert_true(XXH3_64bits(dump + at, (size_t)bytes) == sk_load_le64(e + SK_BF_LAYER_OFF_CHECKSUM));
            at += bytes;
        }
        assert_int_equal(at, size);
        uint8_t *copy = malloc((size_t)size + 16); /* room for a wrong read */
        assert_non_null(copy);
        memcpy(copy, dump, (size_t)size);
        fix_checksum(copy);
        assert_memory_equal(copy, dump, 40);

        /* Read in pieces of every size, the same bytes. */
        memset(copy, 0xAA, (size_t)size);
        for (uint64_t off = 0; off < size;) {
            size_t len = (size_t)(1 + splitmix64(&seed) % 5000);
            if (len > size - off)
                len = (size_t)(size - off);
            assert_int_equal(sk_bloom_dump_read(f, off, copy + off, len), SK_OK);
            off += len;
        }
        assert_memory_equal(copy, dump, (size_t)size);
        /* Straddling the header's end, and zero bytes anywhere. */
        assert_int_equal(sk_bloom_dump_read(f, head - 3, copy, 10), SK_OK);
        assert_memory_equal(copy, dump + head - 3, 10);
        assert_int_equal(sk_bloom_dump_read(f, 0, NULL, 0), SK_OK);
        assert_int_equal(sk_bloom_dump_read(f, size, copy, 0), SK_OK);
        /* Out of range. */
        assert_int_equal(sk_bloom_dump_read(f, size, copy, 1), SK_EINVAL);
        assert_int_equal(sk_bloom_dump_read(f, size - 1, copy, 2), SK_EINVAL);
        assert_int_equal(sk_bloom_dump_read(f, 0, copy, (size_t)size + 1), SK_EINVAL);
        assert_int_equal(sk_bloom_dump_read(f, UINT64_MAX, copy, 1), SK_EINVAL);
        assert_int_equal(sk_bloom_dump_read(f, 0, NULL, 1), SK_EINVAL);
        assert_int_equal(sk_bloom_dump_read(NULL, 0, copy, 1), SK_EINVAL);

        /* Restored in pieces: the same filter. */
        sk_bloom *g = restore_in_pieces(dump, size, &seed);
        assert_same_info(f, g);
        assert_same_answers(f, g, n, 100000);
        uint64_t size2;
        uint8_t *dump2 = dump_whole(g, &size2);
        assert_int_equal(size, size2);
        assert_memory_equal(dump, dump2, (size_t)size);
        free(dump2);
        /* It works as any filter: adds, saves, grows. */
        add_range(g, n, n + 1000);
        assert_all_found(g, 0, n + 1000);
        char p[PATH_MAX];
        path_of(p, "restored.bloom");
        save_ok(g, p);
        sk_bloom *h = open_ok(p, SK_BLOOM_VERIFY);
        assert_same_answers(g, h, n + 1000, 20000);
        /* A filter mapped from a file dumps the same bytes as in memory. */
        uint64_t size3;
        uint8_t *dump3 = dump_whole(h, &size3);
        uint8_t *dump4 = dump_whole(g, &size2);
        assert_int_equal(size3, size2);
        assert_memory_equal(dump3, dump4, (size_t)size3);
        free(dump3);
        free(dump4);
        sk_bloom_free(h);
        unlink(p);
        sk_bloom_free(g);

        /* Missing pieces, or a damaged one, fail the checksum. */
        assert_int_equal(sk_bloom_restore_begin(&g, dump, head, &head, NULL, 0), SK_OK);
        assert_int_equal(sk_bloom_restore_finish(g), SK_ECHECKSUM);
        assert_int_equal(sk_bloom_restore_chunk(g, head, dump + head, (size_t)(size - head) / 2), SK_OK);
        assert_int_equal(sk_bloom_restore_finish(g), SK_ECHECKSUM);
        memcpy(copy, dump, (size_t)size);
        copy[size - 1] ^= 4;
        assert_int_equal(sk_bloom_restore_chunk(g, head, copy + head, (size_t)(size - head)), SK_OK);
        assert_int_equal(sk_bloom_restore_finish(g), SK_ECHECKSUM);
        /* Chunks outside the arrays are refused. */
        assert_int_equal(sk_bloom_restore_chunk(g, 0, dump, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, head - 1, dump + head - 1, 2), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, size - 4, dump, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, size + 8, dump, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, UINT64_MAX - 2, dump, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, head, NULL, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, head, NULL, 0), SK_OK);
        assert_int_equal(sk_bloom_restore_chunk(NULL, head, dump, 8), SK_EINVAL);
        assert_int_equal(sk_bloom_restore_chunk(g, head, dump + head, (size_t)(size - head)), SK_OK);
        assert_int_equal(sk_bloom_restore_finish(g), SK_OK);
        assert_same_answers(f, g, n, 10000);
        sk_bloom_free(g);
        free(copy);
        free(dump);
        sk_bloom_free(f);
    }
    assert_int_equal(sk_bloom_restore_finish(NULL), SK_EINVAL);
}

static void test_restore_rejects_bad_headers(void **state)
{
    (void)state;
    sk_bloom *f = new_scalable(100, 0.01, 2, SK_BLOOM_CLASSIC);
    add_range(f, 0, 1000);
    uint64_t size;
    uint8_t *dump = dump_whole(f, &size);
    size_t head = sk_bloom_dump_header_size(f), header_len = 0;
    sk_bloom *g = (sk_bloom *)&g;
    assert_int_equal(sk_bloom_restore_begin(NULL, dump, head, &header_len, NULL, 0), SK_EINVAL);
    assert_int_equal(sk_bloom_restore_begin(&g, NULL, head, &header_len, NULL, 0), SK_EINVAL);
    assert_int_equal(sk_bloom_restore_begin(&g, dump, head, NULL, NULL, 0), SK_EINVAL);
    /* Every shorter header. */
    for (size_t len = 0; len < head; len++) {
        g = (sk_bloom *)&g;
        int rc = sk_bloom_restore_begin(&g, dump, len, &header_len, NULL, 0);
        if (!(rc == SK_ETRUNCATED || (rc == SK_EFORMAT && len == 0))) {
            print_error("dump header of %zu of %zu bytes: %s\n", len, head, sk_strerror(rc));
            fail();
        }
        assert_null(g);
    }
    /* Every bit of the header and layer table. */
    int failures = 0;
    for (size_t off = 0; off < head; off++) {
        for (int bit = 0; bit < 8; bit++) {
            dump[off] ^= (uint8_t)(1u << bit);
            g = (sk_bloom *)&g;
            int rc = sk_bloom_restore_begin(&g, dump, head, &header_len, NULL, 0);
            /* More layers than the bytes given: truncated. */
            int ok = damage_ok(off, rc);
            if (!ok && failures++ < 10)
                print_error("dump: bit %d of byte %zu flipped: %s\n", bit, off, sk_strerror(rc));
            if (rc != SK_OK)
                assert_null(g);
            sk_bloom_free(rc == SK_OK ? g : NULL);
            dump[off] ^= (uint8_t)(1u << bit);
        }
    }
    assert_int_equal(failures, 0);
    /* A file's header (arrays on page boundaries) is not a dump's. */
    char p[PATH_MAX];
    path_of(p, "notadump.bloom");
    save_ok(f, p);
    size_t len;
    uint8_t *file = read_whole(p, &len);
    assert_int_equal(sk_bloom_restore_begin(&g, file, len, &header_len, NULL, 0), SK_ECORRUPT);
    free(file);
    unlink(p);
    /* A dump in a file: sk_bloom_open reads it as the same filter, or
     * refuses it cleanly. */
    path_of(p, "dump.bloom");
    write_whole(p, dump, (size_t)size);
    int rc = sk_bloom_open(&g, p, SK_BLOOM_VERIFY, NULL);
    assert_true(rc == SK_OK || rc == SK_ECORRUPT || rc == SK_EFORMAT);
    if (rc == SK_OK) {
        assert_same_info(f, g);
        assert_same_answers(f, g, 1000, 10000);
        sk_bloom_free(g);
    }
    unlink(p);
    free(dump);
    sk_bloom_free(f);
}

/* The layers a filter will have are known before it has them: sk_bloom_plan
 * from the options, sk_bloom_get_layer from the filter, and growth adds
 * exactly the planned bytes of bit array. */
static void test_planned_layers(void **state)
{
    (void)state;
    sk_bloom *f = new_filter(1000, 0.01, SK_BLOOM_BLOCKED);
    sk_bloom_layer l;
    assert_int_equal(sk_bloom_get_layer(f, 1, &l), SK_EFULL);
    sk_bloom_free(f);
    f = new_explicit(1000, 3, SK_BLOOM_CLASSIC);
    assert_int_equal(sk_bloom_get_layer(f, 1, &l), SK_EFULL);
    assert_int_equal(sk_bloom_get_layer(f, 0, &l), SK_OK);
    assert_int_equal(l.bits, 1000);
    assert_int_equal(l.hashes, 3);
    sk_bloom_free(f);
    for (int lay = 0; lay < 3; lay++) {
        sk_bloom_options o = {.capacity = 1000, .fp_rate = 0.01, .expansion = 3,
                              .layout = (sk_bloom_layout)lay};
        assert_int_equal(sk_bloom_create(&f, &o), SK_OK);
        sk_bloom_layout layout = info_of(f).layout;
        uint64_t m;
        unsigned k;
        assert_int_equal(sk_bloom_size_for(3000, 0.0025, &layout, &m, &k), SK_OK);
        assert_int_equal(sk_bloom_plan(&o, 1, &l), SK_OK);
        assert_int_equal(l.bits, m);
        assert_int_equal(l.hashes, k);
        assert_int_equal(l.capacity, 3000);
        assert_true(l.fp_rate == 0.0025);
        uint64_t key = 0;
        for (unsigned grown = 1; grown <= 4; grown++) {
            sk_bloom_layer next, planned;
            assert_int_equal(sk_bloom_get_layer(f, grown, &next), SK_OK);
            assert_int_equal(sk_bloom_plan(&o, grown, &planned), SK_OK);
            assert_int_equal(next.bits, planned.bits);
            assert_int_equal(next.capacity, planned.capacity);
            sk_bloom_info before = info_of(f);
            while (info_of(f).layers == before.layers)
                assert_true(add_key(f, key++) >= 0);
            assert_int_equal(info_of(f).array_bytes - before.array_bytes, next.bytes);
            assert_true(info_of(f).memory - before.memory >= next.bytes);
            assert_int_equal(sk_bloom_get_layer(f, grown, &l), SK_OK);
            assert_int_equal(l.bits, next.bits);
            assert_int_equal(l.count, 1);
        }
        sk_bloom_free(f);
    }
}

/* ---- damaged files --------------------------------------------------------- */

static int is_one_of(int rc, int a, int b)
{
    return rc == a || rc == b;
}

/* Every shorter prefix of a saved file is refused as truncated (or, for the
 * empty file, as not a filter), never a crash. */
static void test_every_truncation(void **state)
{
    (void)state;
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

/* The expected status for a header or layer table whose byte `off` has been
 * damaged: the magic, the version, and otherwise a checksum or field error. */
static int damage_ok(size_t off, int rc)
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

static void test_damaged_header_and_table(void **state)
{
    (void)state;
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
    (void)state;
    sk_bloom *f = new_scalable(100, 0.01, 2, SK_BLOOM_BLOCKED);
    add_range(f, 0, 250);
    assert_int_equal(info_of(f).layers, 2);
    char p[PATH_MAX];
    path_of(p, "fields.bloom");
    save_ok(f, p);
    size_t len;
    uint8_t *orig = read_whole(p, &len);
    unlink(p);
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
    (void)state;
    sk_bloom *f = new_scalable(200, 0.01, 2, SK_BLOOM_CLASSIC);
    add_range(f, 0, 1000);
    unsigned layers = info_of(f).layers;
    assert_true(layers >= 3);
    char p[PATH_MAX];
    path_of(p, "array.bloom");
    save_ok(f, p);
    size_t len;
    uint8_t *bytes = read_whole(p, &len);
    unlink(p);
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
    (void)state;
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
    (void)state;
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
    (void)state;
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

/* The dumps 0.1.0 wrote (tests/fixtures/v0.1) read back and answer every
 * probe exactly as the files it wrote of the same filters, whose answers
 * tests/cli/test_compat.py checks against what 0.1.0 itself gave. */
static void test_dumps_of_the_previous_release(void **state)
{
    (void)state;
    static const char *const names[] = {"bloom_blocked", "bloom_scalable"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s.dump", SKETCH_FIXTURES, names[n]);
        size_t len;
        uint8_t *dump = read_whole(path, &len);
        sk_bloom *from_dump = NULL, *from_file = NULL;
        assert_int_equal(sk_bloom_deserialize(&from_dump, dump, len, NULL), SK_OK);
        snprintf(path, sizeof path, "%s/%s.bloom", SKETCH_FIXTURES, names[n]);
        assert_int_equal(sk_bloom_open(&from_file, path, SK_BLOOM_VERIFY, NULL), SK_OK);
        assert_same_info(from_dump, from_file);
        char item[32];
        for (int i = 0; i < 1000; i++) {
            int k = snprintf(item, sizeof item, "item-%d", i);
            assert_int_equal(sk_bloom_contains(from_dump, item, (size_t)k), 1);
        }
        int positives = 0;
        for (int i = 0; i < 10000; i++) {
            int k = snprintf(item, sizeof item, "probe-%d", i);
            int a = sk_bloom_contains(from_dump, item, (size_t)k);
            assert_int_equal(a, sk_bloom_contains(from_file, item, (size_t)k));
            positives += a;
        }
        assert_true(positives > 0 && positives < 200); /* about 1% */
        sk_bloom_free(from_dump);
        sk_bloom_free(from_file);
        free(dump);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_for_classic_is_textbook),
        cmocka_unit_test(test_size_for_is_minimal),
        cmocka_unit_test(test_size_for_blocked_needs_more_bits),
        cmocka_unit_test(test_size_for_auto),
        cmocka_unit_test(test_size_for_rejects_bad_arguments),
        cmocka_unit_test(test_new_rejects_bad_arguments),
        cmocka_unit_test(test_new_explicit),
        cmocka_unit_test(test_new_scalable),
        cmocka_unit_test(test_scalable_rate_range),
        cmocka_unit_test(test_add_reports_changes),
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_scalable_stops_at_its_budget),
        cmocka_unit_test(test_fixed_refuses_when_full),
        cmocka_unit_test(test_add_unlimited_passes_the_budget),
        cmocka_unit_test(test_small_filter_is_one_allocation),
        cmocka_unit_test(test_scalable_grows_to_thousands_of_layers),
        cmocka_unit_test(test_scalable_stops_with_efull),
        cmocka_unit_test(test_small_filters_meet_their_rate),
        cmocka_unit_test(test_batch_matches_single),
        cmocka_unit_test(test_calls_by_hash_are_calls_by_item),
        cmocka_unit_test(test_hash_u64_meets_the_rate),
        cmocka_unit_test(test_union_and_intersection),
        cmocka_unit_test(test_intersection_of_scalable_filters),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_expected_fp_rate),
        cmocka_unit_test(test_estimate_items),
        cmocka_unit_test(test_save_open_round_trip),
        cmocka_unit_test(test_save_keeps_mode_and_replaces),
        cmocka_unit_test(test_opened_filter_changes_stay_private),
        cmocka_unit_test(test_opened_filter_is_its_own),
        cmocka_unit_test(test_filters_above_2_to_32_bits),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_restore_rejects_bad_headers),
        cmocka_unit_test(test_planned_layers),
        cmocka_unit_test(test_dumps_of_the_previous_release),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_damaged_header_and_table),
        cmocka_unit_test(test_bad_fields_with_valid_checksum),
        cmocka_unit_test(test_damaged_bit_array),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_save_errors),
        cmocka_unit_test(test_random_files_never_crash),
        cmocka_unit_test(test_size_for_auto_null_outputs),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
