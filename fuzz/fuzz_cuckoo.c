/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_cuckoo.c: the Cuckoo filter's two readers: sk_cuckoo_deserialize on
 * "SKCF" + any bytes, and a CF.LOADCHUNK restore, sk_cuckoo_restore_begin
 * and sk_cuckoo_restore_piece, on any header and pieces.
 *
 * Input: a control byte. Bit 1 clear: the rest follows the magic, the
 * checksum made right with bit 0. Bit 1 set: 38 bytes of header, then
 * records, each a flag byte (bit 0: an iterator of its own, 8 bytes, else
 * the one that continues the previous piece), a 2-byte length and the
 * piece. Whatever filter comes out must behave: serialize back to the bytes
 * it was read from (a deserialized one), keep what it is given (an item
 * added is found until it is deleted), dump, and copy.
 */
#include "fuzz_util.h"
#include "sketch.h"

#define RESTORE_BUDGET (4u << 20) /* a header may ask for 2^56 buckets */

static uint8_t *bytes_of(const sk_cuckoo *c, size_t *len)
{
    uint64_t size;
    FUZZ_CHECK(sk_cuckoo_serialized_size(c, &size) == SK_OK);
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL);
    FUZZ_CHECK(sk_cuckoo_serialize(c, buf, size, len) == SK_OK && *len == size);
    return buf;
}

static void behave(sk_cuckoo *c)
{
    size_t len, len2;
    uint8_t *bytes = bytes_of(c, &len);
    sk_cuckoo *copy;
    FUZZ_CHECK(sk_cuckoo_copy(&copy, c) == SK_OK);
    uint8_t *again = bytes_of(copy, &len2);
    FUZZ_CHECK(len2 == len && memcmp(again, bytes, len) == 0);
    free(again);
    free(bytes);
    sk_cuckoo_info info;
    sk_cuckoo_get_info(copy, &info);
    if (sk_cuckoo_restoring(copy)) {
        FUZZ_CHECK(sk_cuckoo_add(copy, "x", 1) == SK_EINCOMPAT);
        sk_cuckoo_free(copy);
        return;
    }
    uint8_t header[SK_CUCKOO_DUMP_HEADER_SIZE];
    sk_cuckoo_dump_header(copy, header);
    uint64_t it = 1;
    const void *piece;
    size_t n, total = 0;
    while (sk_cuckoo_dump_piece(copy, &it, 4096, &piece, &n) == 1)
        total += n;
    FUZZ_CHECK(total == info.slots);
    sk_cuckoo_set_max_memory(copy, RESTORE_BUDGET);
    for (unsigned i = 0; i < 40; i++) {
        char item[8] = {'i', (char)('a' + i % 26), (char)('a' + i / 26)};
        int rc = sk_cuckoo_add(copy, item, 3);
        FUZZ_CHECK(rc == 1 || rc == SK_EFULL || rc == SK_ETOOLARGE || rc == SK_EBUDGET ||
                   rc == SK_ENOMEM);
        if (rc == 1) {
            FUZZ_CHECK(sk_cuckoo_contains(copy, item, 3) == 1);
            FUZZ_CHECK(sk_cuckoo_count(copy, item, 3) >= 1);
        }
    }
    for (unsigned i = 0; i < 40; i += 3)
        sk_cuckoo_delete(copy, (char[]){'i', (char)('a' + i % 26), (char)('a' + i / 26)}, 3);
    sk_cuckoo_compact(copy);
    sk_cuckoo_free(copy);
}

static void deserialize(const uint8_t *data, size_t size, int fix)
{
    size_t len;
    uint8_t *buf = fuzz_framed(SK_CUCKOO_MAGIC, data, size,
                               fix ? fuzz_fix_cuckoo_checksum : NULL, &len);
    sk_cuckoo *c;
    if (sk_cuckoo_deserialize(&c, buf, len, NULL) == SK_OK) {
        size_t len2;
        uint8_t *again = bytes_of(c, &len2);
        FUZZ_CHECK(len2 == len && memcmp(again, buf, len) == 0);
        free(again);
        behave(c);
        sk_cuckoo_free(c);
    }
    free(buf);
}

static void restore(struct fuzz_reader *r)
{
    size_t n;
    const uint8_t *header = fuzz_bytes(r, SK_CUCKOO_DUMP_HEADER_SIZE, &n);
    sk_cuckoo *c;
    if (sk_cuckoo_restore_begin(&c, header, n, RESTORE_BUDGET, NULL) != SK_OK)
        return;
    FUZZ_CHECK(sk_cuckoo_restoring(c));
    uint64_t offset = 0;
    while (r->left > 0) {
        unsigned flags = (unsigned)fuzz_take(r, 1);
        uint64_t iterator = (flags & 1) ? fuzz_take(r, 8) : 0;
        const uint8_t *piece = fuzz_bytes(r, (size_t)fuzz_take(r, 2), &n);
        if (!(flags & 1))
            iterator = offset + n + 1;
        if (sk_cuckoo_restore_piece(c, iterator, piece, n) == SK_OK)
            offset = iterator - 1;
    }
    behave(c);
    sk_cuckoo_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 2) {
        struct fuzz_reader r = {data + 1, size - 1};
        restore(&r);
    } else {
        deserialize(data + 1, size - 1, data[0] & 1);
    }
    return 0;
}
