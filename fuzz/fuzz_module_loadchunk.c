/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_loadchunk.c: BF.LOADCHUNK and CF.LOADCHUNK commands of any
 * iterators and bytes, through the module's own commands
 * (module/bf_dump.c, module/cf_dump.c) in the module harness.
 *
 * Input: a control byte; bit 3 picks CF.LOADCHUNK, else bit 4 RedisBloom's
 * Bloom filter dumps (header at iterator 1). With bit 1 clear, records
 * follow, each a flag byte (bit 0: an iterator of its own, 8 bytes, else
 * the one that continues the previous piece; a Cuckoo filter's or
 * RedisBloom's header, first, continues with 1), a 2-byte length and the
 * piece. With bit 1 set the rest is one dump (of a Bloom filter: the array
 * checksums made right with bit 2, the header's with bit 0) sent in pieces
 * of the size the first two bytes give. Whatever filter the key ends up holding
 * must answer queries, dump, and save, load, copy and rewrite to the same
 * bytes.
 */
#include "fuzz_module_common.h"

static const char *command = "BF.LOADCHUNK";

static int loadchunk(const char *key, uint64_t iterator, const uint8_t *piece, size_t len)
{
    char it[24];
    snprintf(it, sizeof it, "%llu", (unsigned long long)iterator);
    const char *argv[] = {command, key, it, (const char *)piece};
    size_t lens[] = {12, strlen(key), strlen(it), len};
    return harness_command(4, argv, lens);
}

/* RedisBloom's BF.SCANDUMP header: 20 bytes, then 53 per link. */
#define CHAIN_HEADER 20
#define CHAIN_LINK 53
#define CHAIN_OFF_LINKS 8

static void exercise(int type)
{
    if (harness_value(type, "k") == NULL)
        return;
    static const char *bf[][3] = {{"BF.ADD", "k", "x"}, {"BF.EXISTS", "k", "x"},
                                  {"BF.MADD", "k", "y"}, {"BF.INFO", "k", NULL},
                                  {"BF.CARD", "k", NULL}, {"BF.SCANDUMP", "k", "0"}};
    static const char *cf[][3] = {{"CF.ADD", "k", "x"}, {"CF.EXISTS", "k", "x"},
                                  {"CF.DEL", "k", "x"}, {"CF.INFO", "k", NULL},
                                  {"CF.COMPACT", "k", NULL}, {"CF.SCANDUMP", "k", "1"}};
    const char *(*cmds)[3] = type == 0 || type == HARNESS_REDISBLOOM_FIRST ? bf : cf;
    for (size_t i = 0; i < sizeof bf / sizeof bf[0]; i++) {
        int argc = cmds[i][2] ? 3 : 2;
        size_t lens[3] = {strlen(cmds[i][0]), 1, cmds[i][2] ? 1 : 0};
        harness_command(argc, cmds[i], lens);
    }
    void *f = harness_value(type, "k");
    if (f != NULL)
        module_check_value(type, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_init();
    struct fuzz_reader r = {data, size};
    unsigned control = (unsigned)fuzz_take(&r, 1);
    int cuckoo = (control & 8) != 0;
    int chain = !cuckoo && (control & 16) != 0;
    command = cuckoo ? "CF.LOADCHUNK" : "BF.LOADCHUNK";
    if (control & 2) {
        size_t piece = (size_t)fuzz_take(&r, 2) + 1, len;
        const uint8_t *p = fuzz_bytes(&r, r.left, &len);
        uint8_t *dump = malloc(len ? len : 1);
        FUZZ_CHECK(dump != NULL);
        if (len > 0)
            memcpy(dump, p, len);
        if (!cuckoo && (control & 4))
            fuzz_fix_bloom_dump_checksums(dump, len);
        else if (!cuckoo && (control & 1))
            fuzz_fix_bloom_checksum(dump, len);
        size_t head = cuckoo ? SK_CUCKOO_DUMP_SIZE
                      : chain && len >= CHAIN_HEADER
                          ? CHAIN_HEADER + (size_t)(sk_load_le32(dump + CHAIN_OFF_LINKS) & 127) * CHAIN_LINK
                      : chain ? len
                      : len >= SK_BF_HEADER_SIZE
                          ? SK_BF_HEADER_SIZE + (size_t)(sk_load_le32(dump + SK_BF_OFF_LAYERS) & 127) * SK_BF_LAYER_SIZE
                          : len;
        if (head > len)
            head = len;
        /* a Cuckoo filter's pieces, and RedisBloom's Bloom filter's, count
         * from the end of its header */
        size_t base = cuckoo || chain ? head : 0;
        int failed = loadchunk("k", cuckoo || chain ? 1 : head + 1, dump, head);
        for (size_t at = head; !failed && at < len; at += piece) {
            size_t n = len - at < piece ? len - at : piece;
            failed = loadchunk("k", at - base + n + 1, dump + at, n);
        }
        free(dump);
    } else {
        uint64_t offset = 0;
        int header = cuckoo || chain;
        while (r.left > 0) {
            unsigned flags = (unsigned)fuzz_take(&r, 1);
            uint64_t iterator = (flags & 1) ? fuzz_take(&r, 8) : 0;
            size_t n;
            const uint8_t *piece = fuzz_bytes(&r, (size_t)fuzz_take(&r, 2), &n);
            if (!(flags & 1))
                iterator = header ? 1 : offset + n + 1;
            if (loadchunk("k", iterator, piece, n) == 0)
                offset = iterator == 1 && (cuckoo || chain) ? 0 : iterator - 1;
            header = 0;
        }
    }
    exercise(cuckoo ? 4 : 0);
    exercise(cuckoo ? 9 : HARNESS_REDISBLOOM_FIRST);
    harness_flush();
    return 0;
}
