/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds_families.c: the seeds of the fuzz targets of the count-min
 * sketch, top-k, the Cuckoo filter and the t-digest (make_seeds.c writes
 * them with the rest), from real sketches of the library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "make_seeds.h"
#include "sketch.h"

/* Top-k sketches: empty, with collisions, and wide; the checksum control
 * bit clear, so the seeds are as written. */
void topk_seeds(void)
{
    static const struct {
        const char *name;
        uint32_t k, width, depth;
        unsigned adds;
    } shapes[] = {{"empty", 3, 4, 2, 0}, {"collisions", 5, 8, 3, 400}, {"wide", 4, 64, 2, 60}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sk_topk *t;
        sk_topk_options o = {.k = shapes[s].k, .width = shapes[s].width,
                             .depth = shapes[s].depth};
        if (sk_topk_create(&t, &o) != SK_OK)
            die("sk_topk_create");
        for (unsigned i = 0; i < shapes[s].adds; i++) {
            char item[32];
            snprintf(item, sizeof item, "item-%u", (i * i) % 23);
            sk_topk_add(t, item, strlen(item), 1 + i % 4, NULL, NULL);
        }
        uint64_t cap = 0;
        size_t len = 0;
        uint8_t *buf = sk_topk_serialized_size(t, &cap) == SK_OK ? malloc(cap) : NULL;
        if (buf == NULL || sk_topk_serialize(t, buf, cap, &len) != SK_OK)
            die("sk_topk_serialize");
        const uint8_t control = 0;
        seed("topk", shapes[s].name, &control, 1, buf + 4, len - 4); /* the target puts the magic */
        free(buf);
        sk_topk_free(t);
    }
}

/* Cuckoo filters in both of the target's forms, serialized and as
 * CF.SCANDUMP's header and pieces; and the same pieces for CF.LOADCHUNK. */
void cuckoo_seeds(void)
{
    static const struct {
        const char *name;
        uint64_t capacity;
        uint32_t bucket_size, expansion;
        unsigned adds;
    } shapes[] = {{"empty", 16, 2, 1, 0}, {"grown", 32, 4, 2, 300}, {"full", 8, 1, 0, 40}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sk_cuckoo *c;
        sk_cuckoo_options o = {.capacity = shapes[s].capacity,
                               .bucket_size = shapes[s].bucket_size,
                               .expansion = shapes[s].expansion};
        if (sk_cuckoo_create(&c, &o) != SK_OK)
            die("sk_cuckoo_create");
        for (unsigned i = 0; i < shapes[s].adds; i++) {
            char item[32];
            snprintf(item, sizeof item, "item-%u", i);
            sk_cuckoo_add(c, item, strlen(item));
        }
        uint64_t cap = 0;
        size_t len = 0;
        uint8_t *buf = sk_cuckoo_serialized_size(c, &cap) == SK_OK ? malloc(cap + 64) : NULL;
        if (buf == NULL || sk_cuckoo_serialize(c, buf, cap, &len) != SK_OK)
            die("sk_cuckoo_serialize");
        uint8_t control = 0;
        seed("cuckoo", shapes[s].name, &control, 1, buf + 4, len - 4); /* the target puts the magic */
        /* header, then the slots as one record or two */
        size_t at = 0;
        buf[at++] = 2;
        sk_cuckoo_dump_header(c, buf + at);
        at += SK_CUCKOO_DUMP_HEADER_SIZE;
        uint64_t it = 1;
        const void *piece;
        size_t n;
        while (sk_cuckoo_dump_piece(c, &it, 1 + (size_t)cap / 2, &piece, &n) == 1) {
            buf[at++] = 0;
            buf[at++] = (uint8_t)n;
            buf[at++] = (uint8_t)(n >> 8);
            memcpy(buf + at, piece, n);
            at += n;
        }
        char name[64];
        snprintf(name, sizeof name, "%s-restore", shapes[s].name);
        seed("cuckoo", name, buf, at, "", 0);
        /* CF.LOADCHUNK's records: the same, the header as a record of its own */
        uint8_t head[4] = {8, 0, SK_CUCKOO_DUMP_HEADER_SIZE, 0};
        seed("module_loadchunk", name, head, sizeof head, buf + 1, at - 1);
        free(buf);
        sk_cuckoo_free(c);
    }
}

/* Count-min sketches: empty, with a few items, saturated, and a single
 * counter. */
void cms_seeds(void)
{
    static const struct {
        const char *name;
        uint32_t width, depth;
        unsigned items;
        uint64_t count;
    } shapes[] = {{"empty", 8, 2, 0, 0},
                  {"items", 50, 4, 200, 3},
                  {"saturated", 5, 3, 10, UINT64_MAX},
                  {"one-counter", 1, 1, 1, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sk_cms *c;
        if (sk_cms_new(&c, shapes[s].width, shapes[s].depth) != SK_OK)
            die("sk_cms_new");
        for (unsigned i = 0; i < shapes[s].items; i++) {
            char item[32];
            snprintf(item, sizeof item, "item-%u", i % 37);
            sk_cms_add(c, item, strlen(item), shapes[s].count, NULL);
        }
        uint64_t cap;
        size_t len = 0;
        uint8_t *buf = sk_cms_serialized_size(c, &cap) == SK_OK ? malloc(cap) : NULL;
        if (buf == NULL || sk_cms_serialize(c, buf, cap, &len) != SK_OK)
            die("sk_cms_serialize");
        const uint8_t control = 0;
        seed("cms", shapes[s].name, &control, 1, buf + 4, len - 4); /* the target puts the magic */
        free(buf);
        sk_cms_free(c);
    }
}


/* t-digests: empty, with a buffer, compressed, one lone value, and values
 * near +-DBL_MAX whose centroids overflow to infinities. */
void tdigest_seeds(void)
{
    static const struct {
        const char *name;
        uint32_t compression;
        unsigned adds;
        int compress, extremes;
    } shapes[] = {{"empty", 100, 0, 0, 0},    {"buffered", 10, 50, 0, 0},
                  {"compressed", 10, 200, 1, 0}, {"lone", 100, 1, 1, 0},
                  {"extremes", 5, 30, 1, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        sk_tdigest *t;
        if (sk_tdigest_new(&t, shapes[s].compression) != SK_OK)
            die("sk_tdigest_new");
        for (unsigned i = 0; i < shapes[s].adds; i++) {
            double v = shapes[s].extremes ? (i % 2 ? 1.7e308 : -1.7e308) : (double)(i * 7 % 31);
            sk_tdigest_add(t, v, 1 + i % 3);
        }
        if (shapes[s].compress)
            sk_tdigest_compress(t);
        uint64_t cap = 0;
        size_t len = 0;
        uint8_t *buf = sk_tdigest_serialized_size(t, &cap) == SK_OK ? malloc(cap) : NULL;
        if (buf == NULL || sk_tdigest_serialize(t, buf, cap, &len) != SK_OK)
            die("sk_tdigest_serialize");
        const uint8_t control = 0;
        seed("tdigest", shapes[s].name, &control, 1, buf + 4, len - 4); /* the target puts the magic */
        free(buf);
        sk_tdigest_free(t);
    }
}
