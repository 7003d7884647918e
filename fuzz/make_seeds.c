/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds.c: writes the seed corpora of the fuzz targets, from real
 * sketches and filters that the library and the module make, plus edge
 * cases: make_seeds DIR writes DIR/<target>/<name> (fuzz/corpus).
 *
 * Each seed is in its target's input layout (see the comment at the top of
 * each fuzz_*.c): usually a control byte of 0, then the bytes. The seeds
 * of the count-min, top-k, Cuckoo and t-digest targets are in
 * make_seeds_families.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "make_seeds.h"
#include "module_harness.h"
#include "sketch.h"

static const char *root;

void die(const char *what)
{
    fprintf(stderr, "make_seeds: %s: %s\n", what, strerror(errno));
    exit(1);
}

void seed(const char *target, const char *name, const void *prefix, size_t plen,
                 const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(prefix, 1, plen, f) != plen ||
        (len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        die(path);
}

static uint8_t *serialize(const sk_hll *h, sk_hll_format format, size_t *len)
{
    uint64_t cap;
    uint8_t *buf = sk_hll_serialized_size(h, format, &cap) == SK_OK ? malloc(cap) : NULL;
    if (buf == NULL || sk_hll_serialize(h, format, buf, cap, len) != SK_OK)
        die("serialize");
    return buf;
}

static sk_hll *hll_of(unsigned p, unsigned items)
{
    sk_hll *h;
    if (sk_hll_new(&h, p) != SK_OK)
        die("sk_hll_new");
    for (unsigned i = 0; i < items; i++) {
        char item[32];
        snprintf(item, sizeof item, "item-%u", i);
        sk_hll_add(h, item, strlen(item));
    }
    return h;
}

static void group_seeds(void)
{
    static const struct {
        unsigned p, groups, items;
        const char *name;
    } shapes[] = {{14, 0, 0, "p14-empty"}, {14, 3, 5, "p14-inline"}, {12, 4, 300, "p12-sparse"},
                  {4, 2, 2000, "p4-dense"}};
    const uint8_t control0 = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        sk_hll_map *m;
        if (sk_hll_map_new(&m, shapes[i].p) != SK_OK)
            die("sk_hll_map_new");
        for (unsigned g = 0; g < shapes[i].groups; g++)
            for (unsigned j = 0; j < shapes[i].items * (g + 1); j++)
                sk_hll_map_add(m, &g, 1 + g % 2, &j, sizeof j);
        uint64_t size;
        size_t len = 0;
        if (sk_hll_map_serialized_size(m, &size) != SK_OK)
            die("sk_hll_map_serialized_size");
        uint8_t *b = malloc((size_t)size);
        if (b == NULL || sk_hll_map_serialize(m, b, (size_t)size, &len) != SK_OK)
            die("sk_hll_map_serialize");
        seed("hll_groups", shapes[i].name, &control0, 1, b + 4, len - 4);
        free(b);
        sk_hll_map_free(m);
    }
}

static void hll_seeds(void)
{
    static const struct {
        unsigned p, items;
        const char *name;
    } shapes[] = {{14, 0, "p14-empty"}, {14, 10, "p14-sparse"}, {14, 20000, "p14-dense"},
                  {4, 3, "p4-sparse"}, {4, 1000, "p4-dense"}, {18, 50, "p18-sparse"},
                  {16, 100000, "p16-dense"}, {15, 300, "p15-sparse"}};
    const uint8_t control0 = 0, control1 = 1;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        sk_hll *h = hll_of(shapes[i].p, shapes[i].items);
        size_t len;
        uint8_t *b = serialize(h, SK_HLL_NATIVE, &len);
        seed("hll_native", shapes[i].name, &control0, 1, b + 4, len - 4);
        free(b);
        if (shapes[i].p >= 14) {
            b = serialize(h, SK_HLL_REDIS, &len);
            seed("hll_redis", shapes[i].name, &control0, 1, b + 4, len - 4);
            free(b);
        }
        sk_hll_free(h);
    }
    /* Edge cases: a header alone, a checksum left to the fixer, a sparse
     * string of one XZERO run cut short, a register beyond the limit. */
    static const uint8_t native_header[] = {1, 1, 14, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    seed("hll_native", "edge-header-only", &control1, 1, native_header, sizeof native_header);
    static const uint8_t native_entry[] = {1, 1, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0, 0, 0};
    seed("hll_native", "edge-one-entry-max", &control1, 1, native_entry, sizeof native_entry);
    static const uint8_t redis_sparse[] = {1, 0, 0, 0, 0, 0, 0, 0x80, 0x7f, 0xff};
    seed("hll_redis", "edge-xzero-full", &control0, 1, redis_sparse, sizeof redis_sparse);
    static const uint8_t redis_cut[] = {1, 0, 0, 0, 0, 0, 0, 0x80, 0x7f};
    seed("hll_redis", "edge-xzero-cut", &control0, 1, redis_cut, sizeof redis_cut);
    static const uint8_t redis_val[] = {1, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x7f, 0xfe};
    seed("hll_redis", "edge-val-overrun", &control0, 1, redis_val, sizeof redis_val);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die(path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
        die(path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static sk_bloom *filter(int kind)
{
    sk_bloom *f = NULL;
    int rc;
    if (kind == 0)
        rc = sk_bloom_new(&f, 100, 0.01, SK_BLOOM_BLOCKED);
    else if (kind == 1)
        rc = sk_bloom_new(&f, 60, 0.001, SK_BLOOM_CLASSIC);
    else if (kind == 3)
        rc = sk_bloom_new(&f, 100, 0.01, SK_BLOOM_SPLIT);
    else
        rc = sk_bloom_create(&f, &(sk_bloom_options){.capacity = 20, .fp_rate = 0.01, .expansion = 2, .layout = SK_BLOOM_AUTO});
    if (rc != SK_OK)
        die("sk_bloom_new");
    for (unsigned i = 0; i < (kind == 2 ? 100u : 50u); i++) {
        char item[32];
        snprintf(item, sizeof item, "item-%u", i);
        if (sk_bloom_add(f, item, strlen(item)) < 0)
            die("sk_bloom_add");
    }
    return f;
}

static const char *const filter_names[] = {"blocked", "classic", "scalable", "split"};

static uint8_t *dump_of(const sk_bloom *f, size_t *len)
{
    *len = (size_t)sk_bloom_dump_size(f);
    uint8_t *dump = malloc(*len);
    if (dump == NULL || sk_bloom_dump_read(f, 0, dump, *len) != SK_OK)
        die("dump");
    return dump;
}

static void bloom_seeds(void)
{
    char dir[] = "/tmp/sketch-seeds-XXXXXX";
    if (mkdtemp(dir) == NULL)
        die("mkdtemp");
    char path[64];
    snprintf(path, sizeof path, "%s/f.bloom", dir);
    for (int kind = 0; kind < 4; kind++) {
        sk_bloom *f = filter(kind);
        if (sk_bloom_save(f, path) != SK_OK)
            die("sk_bloom_save");
        size_t len;
        uint8_t *file = read_file(path, &len);
        const uint8_t file_control[] = {0}, verify[] = {4}, in_place[] = {8};
        seed("bloom_file", filter_names[kind], file_control, 1, file, len);
        char name[64];
        snprintf(name, sizeof name, "%s-in-place", filter_names[kind]);
        seed("bloom_file", name, in_place, 1, file, len);
        snprintf(name, sizeof name, "%s-verify", filter_names[kind]);
        seed("bloom_file", name, verify, 1, file, len);
        free(file);
        uint8_t *dump = dump_of(f, &len);
        const uint8_t restore_control[] = {0, 99, 0}; /* pieces of 100 bytes */
        seed("bloom_restore", filter_names[kind], restore_control, 3, dump, len);
        free(dump);
        sk_bloom_free(f);
    }
    unlink(path);
    rmdir(dir);
}

/* Module seeds: values saved through the module's own rdb_save, pieces of
 * BF.SCANDUMP, and command sequences. */
static void cmd(int argc, const char **argv)
{
    size_t lens[16];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    harness_command(argc, argv, lens);
}

static void module_seeds(void)
{
    harness_init();
    const char *reserve[] = {"BF.RESERVE", "bf", "0.01", "50", "EXPANSION", "2"};
    cmd(6, reserve);
    for (int i = 0; i < 200; i++) {
        char item[16];
        snprintf(item, sizeof item, "i%d", i);
        const char *add[] = {"BF.ADD", "bf", item};
        cmd(3, add);
    }
    const char *nonscaling[] = {"BF.RESERVE", "fixed", "0.0001", "30", "NONSCALING"};
    cmd(5, nonscaling);
    const char *hres[] = {"HLL.RESERVE", "h4", "4"};
    cmd(3, hres);
    const char *hadd[] = {"HLL.ADD", "h14", "a", "b", "c"};
    cmd(5, hadd);
    const char *hadd4[] = {"HLL.ADD", "h4", "a", "b", "c"};
    cmd(5, hadd4);
    const char *cinit[] = {"CMS.INITBYDIM", "cm", "50", "4"};
    cmd(4, cinit);
    const char *cincr[] = {"CMS.INCRBY", "cm", "a", "3", "b", "5"};
    cmd(6, cincr);
    const char *tres[] = {"TOPK.RESERVE", "tk", "3", "8", "2", "0.9"};
    cmd(6, tres);
    const char *tadd[] = {"TOPK.ADD", "tk", "a", "b", "a", "c", "d", "a"};
    cmd(8, tadd);
    const char *cres[] = {"CF.RESERVE", "cf", "8", "EXPANSION", "2"};
    cmd(5, cres);
    const char *cins[] = {"CF.INSERT", "cf", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h",
                          "i", "j", "k", "l"};
    cmd(15, cins);
    const char *cdel[] = {"CF.DEL", "cf", "a"};
    cmd(3, cdel);
    const char *tdc[] = {"TDIGEST.CREATE", "td", "COMPRESSION", "5"};
    cmd(4, tdc);
    const char *tda[] = {"TDIGEST.ADD", "td", "1", "2", "2", "3", "5", "8", "13", "21", "34",
                         "55", "89", "144", "233", "377"};
    cmd(16, tda);
    for (int i = 0; i < 3; i++)
        cmd(16, tda);

    static const struct {
        int type;
        const char *key;
    } values[] = {{0, "bf"}, {0, "fixed"}, {1, "h4"}, {1, "h14"}, {2, "cm"}, {3, "tk"},
                  {4, "cf"}, {5, "td"}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        void *v = harness_value(values[i].type, values[i].key);
        if (v == NULL)
            die(values[i].key);
        struct harness_io *io = harness_io_writer();
        harness_type(values[i].type)->rdb_save(HARNESS_IO(io), v);
        size_t len;
        const uint8_t *bytes = harness_io_bytes(io, &len);
        static const uint8_t controls[] = {1, 0, 16, 32, 64, 128};
        const uint8_t control = controls[values[i].type];
        seed("module_rdb", values[i].key, &control, 1, bytes, len);
        harness_io_free(io);
    }

    /* A filter whose BF.LOADCHUNK restore has not finished: its header and
     * the first half of its arrays. */
    {
        sk_bloom *f = filter(2);
        size_t len, header_len;
        uint8_t *dump = dump_of(f, &len);
        sk_bloom *partial;
        if (sk_bloom_restore_begin(&partial, dump, len, &header_len, NULL, 0) != SK_OK ||
            sk_bloom_restore_chunk(partial, header_len, dump + header_len,
                                   (len - header_len) / 2) != SK_OK)
            die("partial restore");
        struct harness_io *io = harness_io_writer();
        harness_type(0)->rdb_save(HARNESS_IO(io), partial);
        size_t saved_len;
        const uint8_t *bytes = harness_io_bytes(io, &saved_len);
        const uint8_t control = 1;
        seed("module_rdb", "restoring", &control, 1, bytes, saved_len);
        harness_io_free(io);
        sk_bloom_free(partial);
        sk_bloom_free(f);
        free(dump);
    }

    /* BF.LOADCHUNK records, as BF.SCANDUMP cuts the dump. */
    for (int kind = 0; kind < 3; kind++) {
        sk_bloom *f = filter(kind);
        size_t len;
        uint8_t *dump = dump_of(f, &len);
        size_t head = sk_bloom_dump_header_size(f);
        size_t rec_len = 0;
        uint8_t *rec = malloc(len + 64);
        if (rec == NULL)
            die("malloc");
        rec[rec_len++] = 0; /* control: records */
        size_t cuts[] = {0, head, head + (len - head) / 2, len};
        for (int c = 0; c < 3; c++) {
            size_t n = cuts[c + 1] - cuts[c];
            rec[rec_len++] = 0;
            rec[rec_len++] = (uint8_t)n;
            rec[rec_len++] = (uint8_t)(n >> 8);
            memcpy(rec + rec_len, dump + cuts[c], n);
            rec_len += n;
        }
        char name[64];
        snprintf(name, sizeof name, "%s-records", filter_names[kind]);
        seed("module_loadchunk", name, rec, rec_len, "", 0);
        const uint8_t dump_control[] = {2, 0xff, 0x01}; /* pieces of 512 bytes */
        snprintf(name, sizeof name, "%s-dump", filter_names[kind]);
        seed("module_loadchunk", name, dump_control, 3, dump, len);
        free(rec);
        free(dump);
        sk_bloom_free(f);
    }

    /* Command sequences: command index, argument count, tokens (indexes
     * into the token table of fuzz_module_commands.c) or raw bytes. */
    static const uint8_t reserve_add[] = {0, 3, 0, 17, 12,  1, 2, 0, 43,  2, 4, 0, 43, 44, 45,
                                          4, 2, 0, 43,  5, 3, 0, 43, 46,  6, 1, 0,  7, 2, 0, 38,
                                          8, 2, 0, 3};
    seed("module_commands", "bf-reserve-add", reserve_add, sizeof reserve_add, "", 0);
    static const uint8_t insert[] = {3, 11, 1, 31, 12, 32, 17, 33, 5, 35, 36, 43, 44,
                                     3, 5, 1, 34, 36, 45, 46};
    seed("module_commands", "bf-insert", insert, sizeof insert, "", 0);
    static const uint8_t hll[] = {10, 2, 0, 7,  11, 4, 0, 43, 44, 45,  11, 2, 1, 43,
                                  12, 2, 0, 1,  13, 3, 0, 1, 2,  14, 3, 2, 0, 1,
                                  15, 1, 2,  16, 1, 2};
    seed("module_commands", "hll-commands", hll, sizeof hll, "", 0);
    /* SET k1 <Redis HyperLogLog string>, then the HLL commands read it. */
    sk_hll *h = hll_of(14, 30);
    size_t len;
    uint8_t *b = serialize(h, SK_HLL_REDIS, &len);
    uint8_t *seq = malloc(len + 64);
    size_t n = 0;
    seq[n++] = 18, seq[n++] = 2, seq[n++] = 0, seq[n++] = 0xff;
    seq[n++] = (uint8_t)len, seq[n++] = (uint8_t)(len >> 8);
    memcpy(seq + n, b, len);
    n += len;
    static const uint8_t tail[] = {12, 2, 0, 1,  14, 2, 1, 0,  17, 2, 2, 0,  16, 1, 1};
    memcpy(seq + n, tail, sizeof tail);
    n += sizeof tail;
    seed("module_commands", "pf-string", seq, n, "", 0);
    /* HLL.IMPORT of the same string. */
    n = 0;
    seq[n++] = 17, seq[n++] = 2, seq[n++] = 2, seq[n++] = 0xff;
    seq[n++] = (uint8_t)len, seq[n++] = (uint8_t)(len >> 8);
    memcpy(seq + n, b, len);
    n += len;
    seed("module_commands", "hll-import", seq, n, "", 0);
    free(seq);
    free(b);
    sk_hll_free(h);
    /* CMS.INITBYDIM k1 100 4, CMS.INITBYPROB k2 0.01 0.01, CMS.INCRBY k1 a 3 b 2,
     * CMS.QUERY k1 a b, CMS.INITBYDIM k3 100 4, CMS.MERGE k3 2 k1 k1 WEIGHTS 2 3,
     * CMS.INFO k3, CMS.EXPORT k3, CMS.INCRBY k3 a 4294967295 */
    static const uint8_t cms[] = {21, 3, 0, 12, 7,  22, 3, 1, 17, 17,  23, 5, 0, 43, 6, 44, 5,
                                  24, 3, 0, 43, 44,  21, 3, 2, 12, 7,
                                  25, 7, 2, 5, 0, 0, 52, 5, 6,  26, 1, 2,  27, 1, 2,
                                  23, 3, 2, 43, 54};
    seed("module_commands", "cms-commands", cms, sizeof cms, "", 0);
    /* TDIGEST.CREATE, ADD, reads between adds, MERGE, INFO, COMPRESS */
    static const uint8_t td[] = {54, 3, 0, 66, 12,  55, 8, 0, 4, 5, 6, 7, 12, 13, 19,
                                 60, 3, 0, 19, 20,  55, 5, 0, 8, 9, 10, 11,  61, 2, 0, 4,
                                 62, 2, 0, 5,  64, 2, 0, 4,  66, 3, 0, 17, 20,
                                 57, 5, 1, 4, 0, 66, 6,  67, 1, 1,  68, 1, 0,  63, 2, 0, 6,
                                 65, 2, 0, 3,  58, 1, 1};
    seed("module_commands", "tdigest-commands", td, sizeof td, "", 0);
    /* CMS.IMPORT k2 <a serialized sketch>, then CMS.QUERY k2 a */
    sk_cms *c;
    uint64_t cap = 0;
    if (sk_cms_new(&c, 10, 2) != SK_OK || sk_cms_add(c, "a", 1, 7, NULL) != SK_OK ||
        sk_cms_serialized_size(c, &cap) != SK_OK)
        die("sk_cms");
    uint8_t import[16 + 256] = {28, 2, 1, 0xff, (uint8_t)cap, (uint8_t)(cap >> 8)};
    if (cap > 256 || sk_cms_serialize(c, import + 6, cap, &len) != SK_OK)
        die("sk_cms_serialize");
    const uint8_t query[] = {24, 2, 1, 43};
    memcpy(import + 6 + len, query, sizeof query);
    seed("module_commands", "cms-import", import, 6 + len + sizeof query, "", 0);
    sk_cms_free(c);
    /* TOPK.RESERVE k1 3 100 2 0.5, TOPK.ADD k1 a b a c, TOPK.INCRBY k1 a 4 b 100000,
     * TOPK.LIST k1 WITHCOUNT, TOPK.QUERY k1 a, TOPK.COUNT k1 b, TOPK.INFO k1,
     * TOPK.EXPORT k1 */
    static const uint8_t topk[] = {29, 5, 0, 6, 12, 5, 19,  30, 5, 0, 43, 44, 43, 45,
                                   31, 5, 0, 43, 7, 44, 58,  34, 2, 0, 56,  32, 2, 0, 43,
                                   33, 2, 0, 44,  35, 1, 0,  36, 1, 0};
    seed("module_commands", "topk-commands", topk, sizeof topk, "", 0);
    /* CF.RESERVE k1 100 BUCKETSIZE 4 EXPANSION 2, CF.INSERT k1 ITEMS a b c, CF.ADD k1 a,
     * CF.ADDNX k1 b, CF.INSERTNX k2 CAPACITY 1000 ITEMS a b, CF.MEXISTS k1 a b c,
     * CF.COUNT k1 a, CF.DEL k1 a, CF.COMPACT k1, CF.SCANDUMP k1 0, CF.SCANDUMP k1 1,
     * CF.INFO k1, CF.DEBUG k1, CF.EXPORT k1 */
    static const uint8_t cf[] = {38, 6, 0, 12, 60, 7, 33, 5,  41, 5, 0, 36, 43, 44, 45,
                                 39, 2, 0, 43,  40, 2, 0, 44,  42, 6, 1, 31, 13, 36, 43, 44,
                                 44, 4, 0, 43, 44, 45,  45, 2, 0, 43,  46, 2, 0, 43,  47, 1, 0,
                                 48, 2, 0, 3,  48, 2, 0, 4,  50, 1, 0,  51, 1, 0,  52, 1, 0};
    seed("module_commands", "cf-commands", cf, sizeof cf, "", 0);
    /* ABF.RESERVE k1 0.01 100 WINDOW 1000 GENERATIONS 4, ABF.ADDAT k1
     * 1700000000000 a b c, ABF.MADD k1 a b, ABF.ADD k2 a, ABF.EXISTS k1 a,
     * ABF.MEXISTS k1 a b c, ABF.EXISTSAT k1 1000000 a b, ABF.INFO k1,
     * ABF.EXPORT k1, ABF.ADDAT k1 0 a, ABF.RESERVE k3 0.001 4 GENERATIONS 2,
     * ABF.MADD k3 a b c a b c */
    static const uint8_t abf[] = {71, 7, 0, 17, 12, 73, 13, 74, 7,  74, 5, 0, 76, 43, 44, 45,
                                  73, 3, 0, 43, 44,  72, 2, 1, 43,  75, 2, 0, 43,
                                  76, 4, 0, 43, 44, 45,  77, 4, 0, 14, 43, 44,  78, 1, 0,
                                  79, 1, 0,  74, 3, 0, 3, 43,  71, 5, 2, 18, 7, 74, 5,
                                  73, 7, 2, 43, 44, 45, 43, 44, 45};
    seed("module_commands", "abf-commands", abf, sizeof abf, "", 0);
    /* ABF.IMPORT k1 <a serialized filter of a time window>, ABF.EXISTSAT
     * k1 1700000000000 a */
    sk_aging_bloom *ab;
    sk_aging_bloom_options abo = {.capacity = 20, .fp_rate = 0.01, .window = 1000};
    if (sk_aging_bloom_create(&ab, &abo) != SK_OK || sk_aging_bloom_add(ab, "a", 1, 5) < 0 ||
        sk_aging_bloom_add(ab, "b", 1, 900) < 0 ||
        sk_aging_bloom_serialized_size(ab, &cap) != SK_OK)
        die("sk_aging_bloom");
    uint8_t *abf_import = malloc(cap + 16);
    if (abf_import == NULL || cap > 0xffff)
        die("malloc");
    memcpy(abf_import, (const uint8_t[]){80, 2, 0, 0xff, (uint8_t)cap, (uint8_t)(cap >> 8)}, 6);
    if (sk_aging_bloom_serialize(ab, abf_import + 6, cap, &len) != SK_OK)
        die("sk_aging_bloom_serialize");
    memcpy(abf_import + 6 + len, (const uint8_t[]){77, 3, 0, 76, 43}, 5);
    seed("module_commands", "abf-import", abf_import, 6 + len + 5, "", 0);
    free(abf_import);
    sk_aging_bloom_free(ab);
    harness_flush();
}

static void lines_seeds(void)
{
    static const struct {
        const char *name;
        const char *text;
        size_t len;
    } texts[] = {
        {"plain", "alpha\nbeta\ngamma\nalpha\n", 23},
        {"no-final-newline", "one\ntwo\nthree", 13},
        {"empty-lines", "\n\n\nx\n\n", 6},
        {"nul-and-cr", "a\0b\r\nc\r\n\0\n", 11},
        {"long-line", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\nshort\n",
         135},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        for (uint8_t control = 0; control < 4; control += 3) {
            char name[64];
            snprintf(name, sizeof name, "%s-%u", texts[i].name, control);
            seed("lines", name, &control, 1, texts[i].text, texts[i].len);
        }
    /* A line length limit (control bit 5, the limit 8 or 3 in bits 6-7):
     * none of plain's lines is longer than 8, long-line's first is, and
     * the last line of no-final-newline is longer than 3. */
    static const struct {
        size_t text;
        uint8_t limit;
    } limited[] = {{0, 32 | 2 << 6}, {4, 32 | 2 << 6}, {1, 32 | 1 << 6}};
    for (size_t i = 0; i < sizeof limited / sizeof limited[0]; i++)
        for (uint8_t threads = 0; threads < 4; threads += 3) {
            uint8_t control = limited[i].limit | threads;
            char name[64];
            snprintf(name, sizeof name, "%s-limit-%u", texts[limited[i].text].name, control);
            seed("lines", name, &control, 1, texts[limited[i].text].text,
                 texts[limited[i].text].len);
        }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0755) != 0 && errno != EEXIST)
        die(root);
    hll_seeds();
    group_seeds();
    bloom_seeds();
    cms_seeds();
    topk_seeds();
    cuckoo_seeds();
    tdigest_seeds();
    window_hll_seeds();
    module_seeds();
    whll_module_seeds();
    redisbloom_seeds();
    lines_seeds();
    return 0;
}
