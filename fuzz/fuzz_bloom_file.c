/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_bloom_file.c: sk_bloom_open on a file holding the input.
 *
 * The first input byte is a control byte: bit 0 makes the header checksum
 * right, bit 1 the arrays' checksums too, bit 2 opens with SK_BLOOM_VERIFY,
 * bit 3 with SK_BLOOM_IN_PLACE. A filter that opens must answer queries,
 * take adds (in its private mapping, or in the file in place, where a
 * damaged chunk may refuse them), and give a dump that restores to an
 * identical dump; in place, a sync must commit them, and the file then
 * open again with every item whose add succeeded.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "fuzz_temp.h"
#include "sketch.h"

static void check_dump(const sk_bloom *f)
{
    uint64_t size = sk_bloom_dump_size(f);
    size_t head = sk_bloom_dump_header_size(f);
    FUZZ_CHECK(head >= 88 && head <= size);
    if (size > (8u << 20))
        return;
    uint8_t *dump = malloc((size_t)size), *again = malloc((size_t)size);
    FUZZ_CHECK(dump != NULL && again != NULL);
    FUZZ_CHECK(sk_bloom_dump_read(f, 0, dump, (size_t)size) == SK_OK);
    FUZZ_CHECK(sk_bloom_dump_read(f, size, dump, 1) != SK_OK);
    sk_bloom *r;
    size_t header_len;
    FUZZ_CHECK(sk_bloom_restore_begin(&r, dump, (size_t)size, &header_len, NULL, 0) == SK_OK);
    FUZZ_CHECK(header_len == head);
    FUZZ_CHECK(sk_bloom_restore_chunk(r, head, dump + head, (size_t)size - head) == SK_OK);
    FUZZ_CHECK(sk_bloom_restore_finish(r) == SK_OK);
    FUZZ_CHECK(sk_bloom_dump_size(r) == size);
    FUZZ_CHECK(sk_bloom_dump_read(r, 0, again, (size_t)size) == SK_OK);
    FUZZ_CHECK(memcmp(dump, again, (size_t)size) == 0);
    sk_bloom_free(r);
    free(dump);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *path = fuzz_temp_file("filter.bloom");
    uint8_t control = data[0];
    uint8_t *buf = malloc(size);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data + 1, size - 1);
    size--;
    if (control & 2)
        fuzz_fix_bloom_dump_checksums(buf, size);
    else if (control & 1)
        fuzz_fix_bloom_checksum(buf, size);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, buf, size) == (ssize_t)size);
    close(fd);
    free(buf);

    sk_bloom *f = (sk_bloom *)(uintptr_t)1;
    unsigned flags = ((control & 4) ? SK_BLOOM_VERIFY : 0) | ((control & 8) ? SK_BLOOM_IN_PLACE : 0);
    int rc = sk_bloom_open(&f, path, flags, NULL);
    if (rc != SK_OK) {
        FUZZ_CHECK(f == NULL && rc < 0);
        return 0;
    }
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    FUZZ_CHECK(info.layers >= 1 && info.memory > info.array_bytes);
    FUZZ_CHECK(info.hashes >= 1 && info.hashes <= SK_BLOOM_MAX_HASHES);
    FUZZ_CHECK(info.layout == SK_BLOOM_BLOCKED || info.layout == SK_BLOOM_CLASSIC ||
               info.layout == SK_BLOOM_SPLIT);
    (void)sk_bloom_expected_fp_rate(f, info.count);
    (void)sk_bloom_estimate_items(f);
    check_dump(f);

    const void *items[8];
    size_t lens[8];
    uint8_t found[8];
    char names[8][8];
    for (int i = 0; i < 8; i++) {
        snprintf(names[i], sizeof names[i], "item%d", i);
        items[i] = names[i];
        lens[i] = strlen(names[i]);
        (void)sk_bloom_contains(f, names[i], lens[i]);
    }
    sk_bloom_contains_batch(f, items, lens, 8, found);
    /* Adds go to the private mapping, or to the file; a scalable filter may
     * grow, within a budget that refuses large layers. */
    sk_bloom_set_max_memory(f, info.memory + (16u << 20));
    int in_file[8] = {0};
    for (int i = 0; i < 8; i++) {
        rc = sk_bloom_add(f, names[i], lens[i]);
        FUZZ_CHECK(rc >= 0 || rc == SK_EBUDGET || rc == SK_EFULL || rc == SK_ENOMEM ||
                   ((flags & SK_BLOOM_IN_PLACE) && rc == SK_ECHECKSUM));
        if (rc >= 0)
            FUZZ_CHECK(sk_bloom_contains(f, names[i], lens[i]) == 1);
        in_file[i] = rc >= 0;
    }
    if (flags & SK_BLOOM_IN_PLACE) {
        rc = sk_bloom_sync(f);
        /* A filter that grew is written whole, after a check of every chunk. */
        FUZZ_CHECK(rc == SK_OK || rc == SK_ECHECKSUM || rc == SK_ENOMEM);
        sk_bloom_free(f);
        if (rc != SK_OK)
            return 0;
        FUZZ_CHECK(sk_bloom_open(&f, path, 0, NULL) == SK_OK);
        for (int i = 0; i < 8; i++)
            if (in_file[i])
                FUZZ_CHECK(sk_bloom_contains(f, names[i], lens[i]) == 1);
    }
    sk_bloom_free(f);
    return 0;
}
