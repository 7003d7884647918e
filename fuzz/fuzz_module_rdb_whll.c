/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_module_rdb_whll.c: the rdb_load callback of the module's
 * sliding-window HyperLogLog type (module/whll_type.c), and so the library's
 * reader of the serialized form (src/window_hll/window_hll_format.c), on any
 * RDB or RESTORE payload, through the module harness, which hands it the
 * input as the stream of LoadStringBuffer values (module_harness.h has its
 * encoding).
 *
 * Input: a control byte (bit 0: an encoding version the module does not
 * know, which must be refused; bit 1: make the checksum of the first string
 * buffer right, so that the reader's other checks are reached), then the
 * stream. A load either fails with the IO error set or NULL, or gives a
 * value that saves, loads, copies and rewrites (WHLL.IMPORT) to the same
 * bytes.
 */
#include "fuzz_module_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    harness_init();
    unsigned control = data[0];
    uint8_t *stream = malloc(size);
    FUZZ_CHECK(stream != NULL);
    memcpy(stream, data + 1, size - 1);
    size--;
    if ((control & 2) && size >= 4) {
        size_t n = sk_load_le32(stream);
        if (n <= size - 4)
            fuzz_fix_window_hll_checksum(stream + 4, n);
    }
    int unknown = (control & 1) != 0;
    int encver = harness_encver(HARNESS_WHLL) + unknown;
    module_load_and_check(HARNESS_WHLL, stream, size, encver, unknown);
    free(stream);
    return 0;
}
