/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_bloom_restore.c: a filter rebuilt from a dump in pieces
 * (sk_bloom_restore_begin, _chunk, _finish), as the Redis module does for
 * RDB loads and BF.LOADCHUNK.
 *
 * Input: a control byte (bit 0: make the header checksum right; bit 1: the
 * arrays' checksums too; bit 2: shift one piece by a byte), two bytes of
 * piece size, then the dump. Whatever restores completely must dump back to
 * exactly the input bytes.
 */
#include "fuzz_util.h"
#include "sketch.h"

#define MAX_MEMORY (32u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_reader r = {data, size};
    unsigned control = (unsigned)fuzz_take(&r, 1);
    size_t piece = (size_t)fuzz_take(&r, 2) + 1;
    size_t len = r.left;
    uint8_t *dump = malloc(len ? len : 1);
    FUZZ_CHECK(dump != NULL);
    if (len > 0)
        memcpy(dump, r.p, len);
    if (control & 2)
        fuzz_fix_bloom_dump_checksums(dump, len);
    else if (control & 1)
        fuzz_fix_bloom_checksum(dump, len);

    sk_bloom *f = (sk_bloom *)(uintptr_t)1;
    size_t head = 0;
    int rc = sk_bloom_restore_begin(&f, dump, len, &head, NULL, 0);
    if (rc != SK_OK) {
        FUZZ_CHECK(f == NULL);
        free(dump);
        return 0;
    }
    FUZZ_CHECK(head >= 88 && head <= len);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    if (info.memory > MAX_MEMORY) {
        sk_bloom_free(f);
        free(dump);
        return 0;
    }
    uint64_t total = sk_bloom_dump_size(f);
    FUZZ_CHECK(total >= head);
    int whole = 1;
    size_t at = head;
    int shifted = 0;
    while (at < len) {
        size_t n = len - at < piece ? len - at : piece;
        uint64_t offset = at;
        if ((control & 4) && !shifted && at > head) {
            offset = at - 1; /* a piece put where it does not belong */
            shifted = 1;
        }
        rc = sk_bloom_restore_chunk(f, offset, dump + at, n);
        if (offset + n > total || offset < head)
            FUZZ_CHECK(rc != SK_OK);
        if (rc != SK_OK) {
            whole = 0;
            break;
        }
        at += n;
    }
    /* Pieces outside the arrays are refused. */
    FUZZ_CHECK(sk_bloom_restore_chunk(f, total, dump, 1) != SK_OK);
    FUZZ_CHECK(sk_bloom_restore_chunk(f, 0, dump, 1) != SK_OK);
    rc = sk_bloom_restore_finish(f);
    if (whole && !shifted && len == total && rc == SK_OK) {
        uint8_t *again = malloc(len);
        FUZZ_CHECK(again != NULL);
        FUZZ_CHECK(sk_bloom_dump_read(f, 0, again, len) == SK_OK);
        FUZZ_CHECK(memcmp(again, dump, len) == 0);
        free(again);
        /* Growth is tried within a budget, which refuses large layers. */
        sk_bloom_set_max_memory(f, info.memory + (16u << 20));
        for (unsigned i = 0; i < 16; i++) {
            int added = sk_bloom_add(f, &i, sizeof i);
            if (added >= 0)
                FUZZ_CHECK(sk_bloom_contains(f, &i, sizeof i) == 1);
        }
    }
    if ((control & 2) && whole && !shifted && len == total)
        FUZZ_CHECK(rc == SK_OK);
    sk_bloom_free(f);
    free(dump);
    return 0;
}
