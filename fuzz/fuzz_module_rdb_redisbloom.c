/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_rdb_redisbloom.c: the rdb_load callbacks of RedisBloom's
 * types in the module (module/bf_chain.c and the second types of
 * module/blob_type.c), and so the library's readers of RedisBloom's fields
 * (src/<family>/<family>_redisbloom.c), on any RDB or RESTORE payload, through the
 * module harness, which hands them the input as the stream of Load* values
 * (module_harness.h has its encoding).
 *
 * Input: a control byte (bits 0-2 modulo 5: MBbloom--, CMSk-TYPE,
 * TopK-TYPE, MBbloomCF, TDIS-TYPE; bit 3: an encoding version past the
 * type's; else bit 4: the version bits 5-7 give, so that RedisBloom's older
 * encodings are read too), then the stream. A load either fails with the
 * IO error set or NULL, or gives a value that saves, loads, copies and
 * rewrites to the same bytes.
 */
#include "fuzz_module_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    harness_init();
    unsigned control = data[0];
    int which = HARNESS_REDISBLOOM_FIRST + (int)(control & 7) % 5;
    int encver = (control & 8)    ? harness_encver(which) + 1
                 : (control & 16) ? (int)(control >> 5)
                                  : harness_encver(which);
    module_load_and_check(which, data + 1, size - 1, encver, (control & 8) != 0);
    return 0;
}
