/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_loadchunk.c: BF.LOADCHUNK commands of any iterators and
 * bytes, through the module's own command (module/bf_dump.c) in the
 * module harness.
 *
 * Input: a control byte. With bit 1 clear, records follow, each a flag byte
 * (bit 0: an iterator of its own, 8 bytes, else the one that continues the
 * previous piece), a 2-byte length and the piece. With bit 1 set the rest
 * is one dump (the array checksums made right with bit 2, the header's with
 * bit 0) sent in pieces of the size the first two bytes give. Whatever
 * filter the key ends up holding must answer queries, dump with
 * BF.SCANDUMP, and save, load, copy and rewrite to the same bytes.
 */
#include "fuzz_module_common.h"

static int loadchunk(const char *key, uint64_t iterator, const uint8_t *piece, size_t len)
{
    char it[24];
    snprintf(it, sizeof it, "%llu", (unsigned long long)iterator);
    const char *argv[] = {"BF.LOADCHUNK", key, it, (const char *)piece};
    size_t lens[] = {12, strlen(key), strlen(it), len};
    return harness_command(4, argv, lens);
}

static void exercise(void)
{
    void *f = harness_value(0, "k");
    if (f == NULL)
        return;
    const char *cmds[][3] = {{"BF.ADD", "k", "x"}, {"BF.EXISTS", "k", "x"},
                             {"BF.MADD", "k", "y"}, {"BF.INFO", "k", NULL},
                             {"BF.CARD", "k", NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int argc = cmds[i][2] ? 3 : 2;
        size_t lens[3] = {strlen(cmds[i][0]), 1, cmds[i][2] ? 1 : 0};
        harness_command(argc, cmds[i], lens);
    }
    f = harness_value(0, "k");
    if (f != NULL)
        module_check_value(0, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_init();
    struct fuzz_reader r = {data, size};
    unsigned control = (unsigned)fuzz_take(&r, 1);
    if (control & 2) {
        size_t piece = (size_t)fuzz_take(&r, 2) + 1, len;
        const uint8_t *p = fuzz_bytes(&r, r.left, &len);
        uint8_t *dump = malloc(len ? len : 1);
        FUZZ_CHECK(dump != NULL);
        if (len > 0)
            memcpy(dump, p, len);
        if (control & 4)
            fuzz_fix_bloom_dump_checksums(dump, len);
        else if (control & 1)
            fuzz_fix_bloom_checksum(dump, len);
        size_t head = len >= SK_BF_HEADER_SIZE
                          ? SK_BF_HEADER_SIZE + (size_t)(sk_load_le32(dump + SK_BF_OFF_LAYERS) & 127) * SK_BF_LAYER_SIZE
                          : len;
        if (head > len)
            head = len;
        int failed = loadchunk("k", head + 1, dump, head);
        for (size_t at = head; !failed && at < len; at += piece) {
            size_t n = len - at < piece ? len - at : piece;
            failed = loadchunk("k", at + n + 1, dump + at, n);
        }
        free(dump);
    } else {
        uint64_t offset = 0;
        while (r.left > 0) {
            unsigned flags = (unsigned)fuzz_take(&r, 1);
            uint64_t iterator = (flags & 1) ? fuzz_take(&r, 8) : 0;
            size_t n;
            const uint8_t *piece = fuzz_bytes(&r, (size_t)fuzz_take(&r, 2), &n);
            if (!(flags & 1))
                iterator = offset + n + 1;
            if (loadchunk("k", iterator, piece, n) == 0)
                offset = iterator - 1;
        }
    }
    exercise();
    harness_flush();
    return 0;
}
