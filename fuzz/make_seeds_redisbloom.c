/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * make_seeds_redisbloom.c: seeds of RedisBloom's types in the module: the
 * fields each type's rdb_save writes (module_rdb_redisbloom), of values
 * the module's commands made and of RedisBloom's own Bloom filter made by
 * the library, one of them half restored; and RedisBloom's BF.SCANDUMP
 * pieces as BF.LOADCHUNK records (module_loadchunk).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "make_seeds.h"
#include "module_harness.h"
#include "sketch.h"

static void run(const char *line)
{
    const char *argv[24];
    size_t lens[24];
    char *copy = malloc(strlen(line) + 1);
    if (copy == NULL)
        die("malloc");
    strcpy(copy, line);
    int argc = 0;
    for (char *t = strtok(copy, " "); t != NULL && argc < 24; t = strtok(NULL, " "))
        argv[argc] = t, lens[argc] = strlen(t), argc++;
    harness_command(argc, argv, lens);
    free(copy);
}

/* Writes the fields that type `which` saves of value as a seed whose
 * control byte picks that type. */
static void save_seed(int which, void *value, const char *name)
{
    struct harness_io *io = harness_io_writer();
    harness_type(which)->rdb_save(HARNESS_IO(io), value);
    size_t len;
    const uint8_t *bytes = harness_io_bytes(io, &len);
    const uint8_t control = (uint8_t)(which - HARNESS_REDISBLOOM_FIRST);
    seed("module_rdb_redisbloom", name, &control, 1, bytes, len);
    harness_io_free(io);
}

static sk_sbchain *chain_of(unsigned items)
{
    sk_sbchain *c;
    if (sk_sbchain_new(&c, 20, 0.01) != SK_OK)
        die("sk_sbchain_new");
    char item[16];
    for (unsigned i = 0; i < items; i++) {
        int n = snprintf(item, sizeof item, "i%u", i);
        if (sk_sbchain_add(c, item, (size_t)n) < 0)
            die("sk_sbchain_add");
    }
    return c;
}

/* The chain's BF.LOADCHUNK records: header at iterator 1, then each piece
 * continuing the last (fuzz_module_loadchunk.c's record form). */
static void loadchunk_seed(const sk_sbchain *c, size_t max, const char *name)
{
    size_t header_len = sk_sbchain_dump_header_size(c);
    uint8_t *rec = malloc(header_len + 4096);
    if (rec == NULL)
        die("malloc");
    size_t n = 0;
    rec[n++] = 16; /* control: RedisBloom's Bloom filter records */
    rec[n++] = 0, rec[n++] = (uint8_t)header_len, rec[n++] = (uint8_t)(header_len >> 8);
    sk_sbchain_dump_header(c, rec + n);
    n += header_len;
    uint64_t iterator = 1;
    const void *piece;
    size_t len;
    while (sk_sbchain_dump_piece(c, &iterator, max, &piece, &len) == 1 &&
           n + len + 3 < header_len + 4096) {
        rec[n++] = 0, rec[n++] = (uint8_t)len, rec[n++] = (uint8_t)(len >> 8);
        memcpy(rec + n, piece, len);
        n += len;
    }
    seed("module_loadchunk", name, rec, n, "", 0);
    free(rec);
}

void redisbloom_seeds(void)
{
    run("CMS.INITBYDIM cm 50 4");
    run("CMS.INCRBY cm a 3 b 5");
    run("TOPK.RESERVE tk 3 8 2 0.9");
    run("TOPK.ADD tk a b a c d a e a b");
    run("CF.RESERVE cf 8 EXPANSION 2");
    run("CF.INSERT cf ITEMS a b c d e f g h i j k l");
    run("CF.DEL cf a");
    run("TDIGEST.CREATE td COMPRESSION 5");
    run("TDIGEST.ADD td 1 2 2 3 5 8 13 21 34 55 89 144 233 377 610 987");
    static const struct {
        int own, theirs;
        const char *key;
    } values[] = {{2, 7, "cm"}, {3, 8, "tk"}, {4, 9, "cf"}, {5, 10, "td"}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        void *v = harness_value(values[i].own, values[i].key);
        if (v == NULL)
            die(values[i].key);
        save_seed(values[i].theirs, v, values[i].key);
    }
    harness_flush();

    sk_sbchain *c = chain_of(150);
    save_seed(HARNESS_REDISBLOOM_FIRST, c, "bf-chain");
    loadchunk_seed(c, 64, "chain-records");
    /* half restored: its header and one piece */
    size_t header_len = sk_sbchain_dump_header_size(c);
    uint8_t *header = malloc(header_len);
    sk_sbchain *partial;
    uint64_t iterator = 1;
    const void *piece;
    size_t len;
    if (header == NULL)
        die("malloc");
    sk_sbchain_dump_header(c, header);
    if (sk_sbchain_restore_begin(&partial, header, header_len, 0, NULL) != SK_OK ||
        sk_sbchain_dump_piece(c, &iterator, 16, &piece, &len) != 1 ||
        sk_sbchain_restore_piece(partial, iterator, piece, len) != SK_OK)
        die("partial restore");
    save_seed(HARNESS_REDISBLOOM_FIRST, partial, "bf-chain-restoring");
    sk_sbchain_free(partial);
    free(header);
    sk_sbchain_free(c);
    c = chain_of(3);
    save_seed(HARNESS_REDISBLOOM_FIRST, c, "bf-chain-small");
    sk_sbchain_free(c);
}
