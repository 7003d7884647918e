/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bloom_dump.c: unit tests of dumps, the packed form of a filter that
 * sk_bloom_dump_read gives in pieces and sk_bloom_restore_begin,
 * sk_bloom_restore_chunk and sk_bloom_restore_finish rebuild a filter
 * from, with cmocka; and of the dumps of the previous release
 * (tests/fixtures/v0.1).
 *
 * Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end.
 */
#define _GNU_SOURCE
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
    size_t len;
    uint8_t *file = saved_bytes(f, &len);
    assert_int_equal(sk_bloom_restore_begin(&g, file, len, &header_len, NULL, 0), SK_ECORRUPT);
    free(file);
    /* A dump in a file: sk_bloom_open reads it as the same filter, or
     * refuses it cleanly. */
    char p[PATH_MAX];
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

/* The dumps 0.1.0 wrote (tests/fixtures/v0.1) read back and answer every
 * probe exactly as the files it wrote of the same filters, whose answers
 * tests/cli/test_compat.py checks against what 0.1.0 itself gave. */
static void test_dumps_of_the_previous_release(void **state)
{
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
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_restore_rejects_bad_headers),
        cmocka_unit_test(test_dumps_of_the_previous_release),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
