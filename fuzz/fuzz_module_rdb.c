/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_rdb.c: the module's rdb_load callbacks (module/bf_type.c,
 * module/hll_type.c, module/cms_type.c, module/topk_type.c, module/cf_type.c,
 * module/td_type.c) on any RDB or RESTORE payload, through the module
 * harness, which hands them the input as the stream of LoadUnsigned and
 * LoadStringBuffer values (module_harness.h has its encoding).
 *
 * Input: a control byte (bit 7: the t-digest type, else bit 6: the Cuckoo
 * filter type, else bit 5: the
 * top-k type, else bit 4: the count-min type, else bit 0: the Bloom type,
 * else the HyperLogLog type; bit 1: an encoding version the module
 * does not know; bit 2: make the checksum of the first string buffer
 * right; bit 3: encoding version 0 rather than the type's own), then the
 * stream. A load
 * either fails with the IO error set or NULL, or gives a value that saves,
 * loads, copies and rewrites to the same bytes.
 */
#include "fuzz_module_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    harness_init();
    unsigned control = data[0];
    int which = control & 128 ? 5
                : control & 64 ? 4
                : control & 32 ? 3
                : control & 16 ? 2
                : control & 1  ? 0
                               : 1;
    uint8_t *stream = malloc(size);
    FUZZ_CHECK(stream != NULL);
    memcpy(stream, data + 1, size - 1);
    size--;
    if ((control & 4) && size >= 4) {
        size_t n = sk_load_le32(stream);
        if (n <= size - 4) {
            if (which == 0)
                fuzz_fix_bloom_checksum(stream + 4, n);
            else if (which == 1)
                fuzz_fix_hll_checksum(stream + 4, n);
            else if (which == 2)
                fuzz_fix_cms_checksum(stream + 4, n);
            else if (which == 3)
                fuzz_fix_topk_checksum(stream + 4, n);
            else if (which == 4)
                fuzz_fix_cuckoo_checksum(stream + 4, n);
            else
                fuzz_fix_tdigest_checksum(stream + 4, n);
        }
    }
    int encver = (control & 2) ? harness_encver(which) + 1
                 : (control & 8) ? 0
                                 : harness_encver(which);
    module_load_and_check(which, stream, size, encver, (control & 2) != 0);
    free(stream);
    return 0;
}
