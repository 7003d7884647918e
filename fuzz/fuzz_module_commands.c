/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_commands.c: any sequence of BF.*, HLL.*, CMS.*, TOPK.*, CF.*,
 * TDIGEST.*, ABF.* and WHLL.* commands with any arguments, through the
 * module's own command functions in the module harness; SET stores a plain
 * string (as a native PF key would be), DEL removes a key.
 *
 * Input: commands, each a byte choosing the command, a byte giving the
 * argument count (0..15 after the name), then per argument a byte: below
 * 0xc0 one of the tokens below, else (b & 0x3f) raw bytes of the input, or
 * for 0xff a 2-byte length and that many bytes. Afterwards every key's
 * value must save, load, copy and rewrite to the same bytes.
 */
#include "fuzz_module_common.h"

static const char *const command_names[] = {
    "BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS",
    "BF.CARD", "BF.INFO", "BF.SCANDUMP", "BF.LOADCHUNK", "HLL.RESERVE", "HLL.ADD",
    "HLL.COUNT", "HLL.ESTIMATE", "HLL.MERGE", "HLL.INFO", "HLL.EXPORT", "HLL.IMPORT",
    "SET", "DEL", "BF.DEBUG", "CMS.INITBYDIM", "CMS.INITBYPROB", "CMS.INCRBY", "CMS.QUERY",
    "CMS.MERGE", "CMS.INFO", "CMS.EXPORT", "CMS.IMPORT", "TOPK.RESERVE", "TOPK.ADD",
    "TOPK.INCRBY", "TOPK.QUERY", "TOPK.COUNT", "TOPK.LIST", "TOPK.INFO", "TOPK.EXPORT",
    "TOPK.IMPORT", "CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX",
    "CF.EXISTS", "CF.MEXISTS", "CF.COUNT", "CF.DEL", "CF.COMPACT", "CF.SCANDUMP",
    "CF.LOADCHUNK", "CF.INFO", "CF.DEBUG", "CF.EXPORT", "CF.IMPORT", "TDIGEST.CREATE",
    "TDIGEST.ADD", "TDIGEST.RESET", "TDIGEST.MERGE", "TDIGEST.MIN", "TDIGEST.MAX",
    "TDIGEST.QUANTILE", "TDIGEST.CDF", "TDIGEST.RANK", "TDIGEST.REVRANK", "TDIGEST.BYRANK",
    "TDIGEST.BYREVRANK", "TDIGEST.TRIMMED_MEAN", "TDIGEST.INFO", "TDIGEST.COMPRESS",
    "TDIGEST.EXPORT", "TDIGEST.IMPORT",
    "ABF.RESERVE", "ABF.ADD", "ABF.MADD", "ABF.ADDAT", "ABF.EXISTS", "ABF.MEXISTS",
    "ABF.EXISTSAT", "ABF.INFO", "ABF.EXPORT", "ABF.IMPORT",
    "WHLL.RESERVE", "WHLL.ADD", "WHLL.ADDAT", "WHLL.COUNT", "WHLL.MERGE", "WHLL.INFO",
    "WHLL.EXPORT", "WHLL.IMPORT",
};
#define COMMANDS (sizeof command_names / sizeof command_names[0])

static const char *const tokens[] = {
    "k1", "k2", "k3", "0", "1", "2", "3", "4", "14", "18", "19", "-1", "100", "1000",
    "1000000", "1024", "1025", "0.01", "0.001", "0.5", "0.9", "1", "1e-15", "1e-300",
    "nan", "inf", "-inf", "1e308", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "CAPACITY", "ERROR", "EXPANSION", "NOCREATE", "NONSCALING",
    "ITEMS", "FILTERS", "SIZE", "EXPANSION", "capacity", "items", "", "a", "b", "c",
    "HYLL", "SKHL", "SKBF", "89", "137", "4097", "WEIGHTS", "SKCM", "4294967295",
    "4294967296", "WITHCOUNT", "SKTK", "100000", "100001", "BUCKETSIZE", "MAXITERATIONS",
    "SKCF", "255", "32768", "65535", "COMPRESSION", "OVERRIDE", "SKTD", "357913939", "0.999",
    "1.7976931348623157e308", "-1.7976931348623157e308",
    "WINDOW", "GENERATIONS", "SKETCH", "1700000000000", "64", "65",
    "RESOLUTION", "PRECISION", "TIME", "SKWH", "86400000", "4611686018427387904", "16777216",
    "1699999000000",
};
#define TOKENS (sizeof tokens / sizeof tokens[0])
#define MAX_ARGS 16

static const char *const keys[] = {"k1", "k2", "k3"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    harness_init();
    struct fuzz_reader r = {data, size};
    int commands_run = 0;
    while (r.left > 0 && commands_run++ < 64) {
        const char *argv[MAX_ARGS + 1];
        size_t lens[MAX_ARGS + 1];
        unsigned which = (unsigned)fuzz_take(&r, 1) % COMMANDS;
        int argc = 1 + (int)(fuzz_take(&r, 1) % MAX_ARGS);
        argv[0] = command_names[which];
        lens[0] = strlen(argv[0]);
        for (int i = 1; i < argc; i++) {
            unsigned sel = (unsigned)fuzz_take(&r, 1);
            if (sel < 0xc0) {
                argv[i] = tokens[sel % TOKENS];
                lens[i] = strlen(argv[i]);
            } else {
                size_t want = sel == 0xff ? (size_t)fuzz_take(&r, 2) : (sel & 0x3f);
                argv[i] = (const char *)fuzz_bytes(&r, want, &lens[i]);
            }
        }
        if (strcmp(argv[0], "SET") == 0) {
            if (argc == 3)
                harness_set_string(argv[1], lens[1], argv[2], lens[2]);
        } else if (strcmp(argv[0], "DEL") == 0) {
            if (argc == 2)
                harness_delete(argv[1], lens[1]);
        } else {
            FUZZ_CHECK(harness_command(argc, argv, lens) >= 0);
        }
    }
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (int type = 0; type < HARNESS_TYPES; type++) {
            void *value = harness_value(type, keys[k]);
            if (value != NULL)
                module_check_value(type, value);
        }
    harness_flush();
    return 0;
}
