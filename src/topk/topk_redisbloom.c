/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topk_redisbloom.c: a top-k sketch as RedisBloom 2.x keeps a TopK-TYPE
 * value in an RDB file or a DUMP payload, read into an sk_topk and written
 * back (sketch/redisbloom.h, docs/redisbloom-rdb.md).
 *
 * The fields, encver 0 (the only one RedisBloom 2.x wrote):
 *
 *     unsigned  k         entries of the heap
 *     unsigned  width     buckets per row
 *     unsigned  depth     rows
 *     double    decay
 *     string    buckets   width x depth Bucket structs, row by row
 *     string    heap      k HeapBucket structs, in heap order
 *     string    item      k of them, one per heap entry: its item and a
 *                         NUL, or "" with its NUL (length 1) for none
 *
 * The structs are RedisBloom's memory as an x86-64 (or any LP64
 * little-endian) build lays it out:
 *
 *     Bucket      0 fp u32, 4 count u32                         8 bytes
 *     HeapBucket  0 fp u32, 4 itemlen u32, 8 item pointer,
 *                 16 count u32, 20 padding                      24 bytes
 *
 * The pointer is the saving process's address, meaningless elsewhere:
 * read past, written as zeros, as is the padding. An entry's item length
 * is its itemlen, not the string's: RedisBloom compares itemlen bytes.
 *
 * Two quirks of RedisBloom's are kept. An empty item ("") is saved as the
 * 1-byte string that also means "no item"; its entry is told apart by its
 * fingerprint, the hash of "" (a never-used entry is all zeros). And
 * RedisBloom writes an item only up to its first NUL (strlen): such an
 * item's bytes are lost, so its entry is refused; here an item is written
 * whole, itemlen bytes and the NUL, which RedisBloom reads as it should.
 *
 * The random draws of decays are not saved by RedisBloom: a loaded sketch
 * starts its generator afresh, as a new one does.
 */
#include <string.h>

#include "common/murmur2.h"
#include "sketch/redisbloom.h"
#include "topk_internal.h"
#include "common/rdb_fields.h"

#define FIELD_K 0 /* the order of the unsigned fields */
#define FIELD_WIDTH 1
#define FIELD_DEPTH 2
#define UNSIGNED_FIELDS 3

#define RB_BUCKET_SIZE 8
#define RB_BUCKET_OFF_FP 0
#define RB_BUCKET_OFF_COUNT 4

#define RB_HEAP_SIZE 24
#define RB_HEAP_OFF_FP 0
#define RB_HEAP_OFF_ITEMLEN 4
#define RB_HEAP_OFF_POINTER 8 /* 8 bytes of no meaning here */
#define RB_HEAP_OFF_COUNT 16  /* then 4 bytes of padding */

/* The fingerprint of the empty item, which tells its entry from an unused
 * one (fingerprint 0) when both are saved as "". */
static uint32_t empty_fp(void)
{
    return sk_murmur2("", 0, SK__TOPK_FP_SEED);
}

static int read_buckets(sk_topk *t, const sk_rdb_reader *r)
{
    const void *data;
    size_t len;
    int rc = r->load_string(r->ctx, &data, &len);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    size_t n = (size_t)t->width * t->depth;
    if (len / RB_BUCKET_SIZE != n || len % RB_BUCKET_SIZE != 0 || data == NULL)
        return SK_ECORRUPT;
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++, p += RB_BUCKET_SIZE)
        t->buckets[i] = (struct sk__topk_bucket){sk_load_le32(p + RB_BUCKET_OFF_FP),
                                                 sk_load_le32(p + RB_BUCKET_OFF_COUNT)};
    return SK_OK;
}

/* The heap's structs into t->heap, items still to come: each entry's fp,
 * count and the length its item must have (SK_TOPK_NO_ITEM for none).
 * *item_bytes receives what the items will take. */
static int read_heap(sk_topk *t, const sk_rdb_reader *r, uint64_t *item_bytes)
{
    const void *data;
    size_t len;
    int rc = r->load_string(r->ctx, &data, &len);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    if (len / RB_HEAP_SIZE != t->k || len % RB_HEAP_SIZE != 0 || data == NULL)
        return SK_ECORRUPT;
    const uint8_t *p = data;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < t->k; i++, p += RB_HEAP_SIZE) {
        uint32_t fp = sk_load_le32(p + RB_HEAP_OFF_FP);
        uint32_t itemlen = sk_load_le32(p + RB_HEAP_OFF_ITEMLEN);
        uint32_t count = sk_load_le32(p + RB_HEAP_OFF_COUNT);
        if (itemlen == SK_TOPK_NO_ITEM) /* the library's mark, never an item's length */
            return SK_ECORRUPT;
        if (itemlen == 0 && fp != empty_fp()) {
            /* Never used: RedisBloom's heap starts zeroed, and an entry
             * once taken always holds an item. */
            if (fp != 0 || count != 0)
                return SK_ECORRUPT;
            t->heap[i] = (struct sk__topk_entry){.len = SK_TOPK_NO_ITEM};
            continue;
        }
        t->heap[i] = (struct sk__topk_entry){fp, count, itemlen, NULL};
        bytes += itemlen ? itemlen : 1; /* as sk__topk_item_copy counts it */
    }
    *item_bytes = bytes;
    return SK_OK;
}

/* The k item strings, each checked against its entry. */
static int read_items(sk_topk *t, const sk_rdb_reader *r)
{
    for (uint32_t i = 0; i < t->k; i++) {
        struct sk__topk_entry *e = &t->heap[i];
        const void *data;
        size_t len;
        int rc = r->load_string(r->ctx, &data, &len);
        if (rc != SK_OK)
            return sk__rdb_status(rc);
        const uint8_t *s = data;
        if (e->len == SK_TOPK_NO_ITEM) {
            if (len != 1 || s == NULL || s[0] != 0)
                return SK_ECORRUPT;
            continue;
        }
        /* The item, its NUL, and the fingerprint that queries find it by. */
        if (s == NULL || len == 0 || len - 1 != e->len || s[e->len] != 0 ||
            sk_murmur2(s, e->len, SK__TOPK_FP_SEED) != e->fp)
            return SK_ECORRUPT;
        e->item = sk__topk_item_copy(t, s, e->len);
        if (e->item == NULL) {
            e->len = SK_TOPK_NO_ITEM; /* nothing for sk_topk_free to release */
            return SK_ENOMEM;
        }
    }
    return SK_OK;
}

/* Entries whose item never came (a load that failed half way) made
 * empty, so that sk_topk_free sees a consistent heap. */
static void drop_pending(sk_topk *t)
{
    for (uint32_t i = 0; i < t->k; i++)
        if (t->heap[i].item == NULL)
            t->heap[i] = (struct sk__topk_entry){.len = SK_TOPK_NO_ITEM};
}

int sk_topk_load_redisbloom(sk_topk **out, const sk_rdb_reader *r, int encver,
                            uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (r == NULL)
        return SK_EINVAL;
    if (encver != SK_REDISBLOOM_TOPK_ENCVER)
        return SK_EVERSION;
    uint64_t field[UNSIGNED_FIELDS];
    int rc = sk__rdb_load_unsigneds(r, field, UNSIGNED_FIELDS);
    if (rc != SK_OK)
        return rc;
    double decay;
    rc = r->load_double(r->ctx, &decay);
    if (rc != SK_OK)
        return sk__rdb_status(rc);
    uint64_t k = field[FIELD_K], width = field[FIELD_WIDTH], depth = field[FIELD_DEPTH];
    /* RedisBloom keeps the three in 32 bits and refuses zeros; its
     * TOPK.RESERVE takes decays in (0, 1] (NaN fails the test too). */
    if (k == 0 || width == 0 || depth == 0 || k > UINT32_MAX || width > UINT32_MAX ||
        depth > UINT32_MAX || !(decay > 0 && decay <= 1))
        return SK_ECORRUPT;
    if (k > SK_TOPK_MAX_K || width * depth > SK_TOPK_MAX_BUCKETS)
        return SK_ETOOLARGE;
    /* The buckets and the heap, within the budget, before their strings
     * come: each string lives only until the reader's next call. */
    sk_topk *t;
    rc = sk__topk_alloc(&t, (uint32_t)k, (uint32_t)width, (uint32_t)depth, decay, max_memory,
                        allocator);
    if (rc != SK_OK)
        return rc == SK_EINVAL ? SK_ECORRUPT : rc;
    uint64_t item_bytes = 0;
    rc = read_buckets(t, r);
    if (rc == SK_OK)
        rc = read_heap(t, r, &item_bytes);
    if (rc == SK_OK && max_memory != 0) {
        /* The items too, from the lengths the heap gives, before any is
         * copied. */
        sk_topk_options o = {.k = t->k, .width = t->width, .depth = t->depth,
                             .decay = t->decay, .allocator = allocator};
        uint64_t fixed = sk_topk_create_memory(&o);
        if (fixed == 0 || item_bytes > max_memory || fixed > max_memory - item_bytes)
            rc = SK_EBUDGET;
    }
    if (rc == SK_OK)
        rc = read_items(t, r);
    if (rc != SK_OK) {
        drop_pending(t);
        sk_topk_free(t);
        return rc;
    }
    *out = t;
    return SK_OK;
}

int sk_topk_save_redisbloom(const sk_topk *t, const sk_rdb_writer *w)
{
    if (t == NULL || w == NULL)
        return SK_EINVAL;
    /* One block for the heap's structs and, after them, room for the
     * longest item and its NUL (items are kept without one), taken before
     * the first field is written, so that a failure writes nothing. */
    size_t heap_bytes = (size_t)t->k * RB_HEAP_SIZE;
    size_t longest = 0;
    for (uint32_t i = 0; i < t->k; i++)
        if (t->heap[i].item != NULL && t->heap[i].len > longest)
            longest = t->heap[i].len;
    size_t bucket_count = (size_t)t->width * t->depth;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    size_t bucket_bytes = bucket_count * RB_BUCKET_SIZE; /* converted below */
#else
    size_t bucket_bytes = 0; /* the buckets are RedisBloom's bytes already */
#endif
    if (longest + 1 > SIZE_MAX - heap_bytes - bucket_bytes)
        return SK_ENOMEM;
    size_t block_bytes = heap_bytes + longest + 1 + bucket_bytes;
    uint8_t *block = sk__alloc(&t->alloc, block_bytes);
    if (block == NULL)
        return SK_ENOMEM;
    uint8_t *heap = block, *item = block + heap_bytes, *buckets = item + longest + 1;
    memset(heap, 0, heap_bytes); /* pointers and padding: zeros */
    for (uint32_t i = 0; i < t->k; i++) {
        const struct sk__topk_entry *e = &t->heap[i];
        if (e->item == NULL)
            continue; /* all zeros, as RedisBloom's unused entries */
        uint8_t *p = heap + (size_t)i * RB_HEAP_SIZE;
        sk_store_le32(p + RB_HEAP_OFF_FP, e->fp);
        sk_store_le32(p + RB_HEAP_OFF_ITEMLEN, e->len);
        sk_store_le32(p + RB_HEAP_OFF_COUNT, e->count);
    }
    const void *bucket_data = t->buckets;
    if (bucket_bytes != 0) {
        for (size_t i = 0; i < bucket_count; i++) {
            sk_store_le32(buckets + i * RB_BUCKET_SIZE + RB_BUCKET_OFF_FP, t->buckets[i].fp);
            sk_store_le32(buckets + i * RB_BUCKET_SIZE + RB_BUCKET_OFF_COUNT,
                          t->buckets[i].count);
        }
        bucket_data = buckets;
    }
    w->save_unsigned(w->ctx, t->k);
    w->save_unsigned(w->ctx, t->width);
    w->save_unsigned(w->ctx, t->depth);
    w->save_double(w->ctx, t->decay);
    w->save_string(w->ctx, bucket_data, bucket_count * RB_BUCKET_SIZE);
    w->save_string(w->ctx, heap, heap_bytes);
    for (uint32_t i = 0; i < t->k; i++) {
        const struct sk__topk_entry *e = &t->heap[i];
        size_t len = e->item != NULL ? e->len : 0;
        if (len > 0)
            memcpy(item, e->item, len);
        item[len] = 0;
        w->save_string(w->ctx, item, len + 1);
    }
    sk__free(&t->alloc, block, block_bytes);
    return SK_OK;
}
