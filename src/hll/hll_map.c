/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map.c: HyperLogLog sketches by key (sketch/hll_map.h): the groups'
 * records, the arena they live in and the table that finds them by key, and
 * the calls on groups one at a time. The record layout and the map are in
 * hll_map_internal.h; a batch of adds is hll_map_batch.c's pipeline, and
 * files of maps are hll_map_file.c's.
 *
 * Most groups of real data are small: a page seen by three visitors, a
 * source that touched two ports. So a group holds its registers as a small
 * register set (hll_internal.h) inline in its record until a register would
 * be one too many, and only then becomes a sketch (a sketch "one of many",
 * which the register code turns dense sooner than a sketch of its own). A
 * set holds exactly the registers sk_hll_add would set, so a small group's
 * estimate is the estimator's on those registers.
 *
 * Memory per small group: its record (32 bytes and the key, rounded to 8),
 * 8 bytes of `records` and 8 to 16 of table (11.4 on average), about 60
 * bytes plus the key.
 */
#include <stddef.h>
#include <string.h>

#include "hll_map_internal.h"
#include "common/murmur64a.h"

/* Arena chunks start small, for maps of a few groups, and double up to a
 * size that malloc takes from mmap, so that freeing a large map gives its
 * memory back to the system. */
#define FIRST_CHUNK ((size_t)4 << 10)
#define MAX_CHUNK ((size_t)4 << 20)
#define FIRST_TABLE 64
#define FIRST_RECORDS 64

/* ---- records ------------------------------------------------------------ */

/* Turns a record's small register set into a sketch; SK_ENOMEM leaves it. */
static int promote(const sk_hll_map *m, uint8_t *r)
{
    sk_hll *h;
    int rc = sk__hll_small_to_sketch(&h, r + REC_OFF_BODY, r[REC_OFF_STATE], m->precision,
                                     &m->alloc);
    if (rc != SK_OK)
        return rc;
    memcpy(r + REC_OFF_BODY, &h, sizeof h);
    r[REC_OFF_STATE] = PROMOTED;
    return SK_OK;
}

int sk__hll_map_set(const sk_hll_map *m, uint8_t *r, uint32_t idx, unsigned value)
{
    if (!rec_promoted(r)) {
        int rc = sk__hll_small_set(r + REC_OFF_BODY, r + REC_OFF_STATE, idx, value);
        if (rc != SK__HLL_SMALL_FULL)
            return rc;
        rc = promote(m, r);
        if (rc != SK_OK)
            return rc;
    }
    return sk__hll_set_for(rec_sketch(r), idx, value, SK__HLL_ONE_OF_MANY);
}

/* Merges sketch h, of the map's precision, into record r. */
static int merge_into(const sk_hll_map *m, uint8_t *r, const sk_hll *h)
{
    if (!rec_promoted(r)) {
        if (sk__hll_small_merge(r + REC_OFF_BODY, r + REC_OFF_STATE, h) == SK_OK)
            return SK_OK;
        int rc = promote(m, r);
        if (rc != SK_OK)
            return rc;
    }
    return sk_hll_merge(rec_sketch(r), h);
}

/* ---- the arena and the table --------------------------------------------- */

static uint8_t *arena_take(sk_hll_map *m, size_t bytes)
{
    if (bytes > m->free_left) {
        size_t chunk = m->chunks == NULL ? FIRST_CHUNK
                       : m->chunks->size * 2 > MAX_CHUNK ? MAX_CHUNK
                                                         : m->chunks->size * 2;
        size_t size = sizeof(struct chunk) + (bytes > chunk ? bytes : chunk);
        struct chunk *c = sk__alloc(&m->alloc, size);
        if (c == NULL)
            return NULL;
        c->next = m->chunks;
        c->size = size;
        m->chunks = c;
        m->free_at = (uint8_t *)(c + 1);
        m->free_left = size - sizeof *c;
        m->arena_bytes += size;
    }
    uint8_t *p = m->free_at;
    m->free_at += bytes;
    m->free_left -= bytes;
    return p;
}

/* The slot of key: its group's, or the empty one where it would go. */
static struct slot *probe(const sk_hll_map *m, const void *key, size_t len, uint64_t hash)
{
    uint32_t mask = m->table_cap - 1, tag = (uint32_t)(hash >> 32);
    for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
        struct slot *s = &m->table[i];
        if (s->group == 0)
            return s;
        if (s->tag != tag)
            continue;
        const uint8_t *r = m->records[s->group - 1];
        if (rec_key_len(r) == len && memcmp(r + REC_OFF_KEY, key, len) == 0)
            return s;
    }
}

static int grow_table(sk_hll_map *m)
{
    uint32_t cap = m->table_cap ? m->table_cap * 2 : FIRST_TABLE;
    struct slot *table = sk__zalloc(&m->alloc, (size_t)cap * sizeof *table);
    if (table == NULL)
        return SK_ENOMEM;
    struct slot *old = m->table;
    uint32_t old_cap = m->table_cap;
    m->table = table;
    m->table_cap = cap;
    for (uint32_t g = 0; g < m->size; g++) {
        const uint8_t *r = m->records[g];
        uint64_t hash = key_hash(r + REC_OFF_KEY, rec_key_len(r));
        struct slot *s = probe(m, r + REC_OFF_KEY, rec_key_len(r), hash);
        s->group = g + 1;
        s->tag = (uint32_t)(hash >> 32);
    }
    if (old != NULL)
        sk__free(&m->alloc, old, (size_t)old_cap * sizeof *old);
    return SK_OK;
}

static int grow_records(sk_hll_map *m)
{
    uint32_t cap = m->records_cap ? m->records_cap * 2 : FIRST_RECORDS;
    uint8_t **records = sk__alloc(&m->alloc, (size_t)cap * sizeof *records);
    if (records == NULL)
        return SK_ENOMEM;
    if (m->records != NULL) {
        memcpy(records, m->records, (size_t)m->size * sizeof *records);
        sk__free(&m->alloc, m->records, (size_t)m->records_cap * sizeof *records);
    }
    m->records = records;
    m->records_cap = cap;
    return SK_OK;
}

uint8_t *sk__hll_map_group(sk_hll_map *m, const void *key, size_t len, uint64_t hash, int *rc)
{
    if (len > SK_HLL_MAP_MAX_KEY) {
        *rc = SK_EINVAL;
        return NULL;
    }
    struct slot *s = probe(m, key, len, hash);
    if (s->group != 0)
        return m->records[s->group - 1];
    if (m->size >= SK_HLL_MAP_MAX_GROUPS) {
        *rc = SK_EFULL;
        return NULL;
    }
    /* Everything that can fail comes before the group is in. */
    *rc = SK_ENOMEM;
    if (m->size == m->records_cap && grow_records(m) != SK_OK)
        return NULL;
    if ((uint64_t)(m->size + 1) * 10 > (uint64_t)m->table_cap * 7) {
        if (grow_table(m) != SK_OK)
            return NULL;
        s = probe(m, key, len, hash);
    }
    uint8_t *r = arena_take(m, (REC_OFF_KEY + len + 7) & ~(size_t)7);
    if (r == NULL)
        return NULL;
    uint32_t key_len = (uint32_t)len;
    memcpy(r + REC_OFF_KEY_LEN, &key_len, sizeof key_len);
    r[REC_OFF_STATE] = 0;
    memcpy(r + REC_OFF_KEY, key, len);
    m->records[m->size] = r;
    s->group = ++m->size;
    s->tag = (uint32_t)(hash >> 32);
    return r;
}

static uint8_t *group_of(sk_hll_map *m, const void *key, size_t len, int *rc)
{
    return sk__hll_map_group(m, key, len, key_hash(key, len), rc);
}

/* ---- the API ------------------------------------------------------------- */

_Static_assert(offsetof(sk_hll_map, precision) == 0, "a map starts with its precision");

int sk__hll_map_create(sk_hll_map **out, unsigned precision, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    int rc;
    sk_hll_map *m = sk__hll_new_object(sizeof *m, offsetof(sk_hll_map, alloc), precision,
                                       allocator, &rc);
    *out = m;
    if (m != NULL && grow_table(m) != SK_OK) {
        sk__free(&m->alloc, m, sizeof *m);
        *out = NULL;
        rc = SK_ENOMEM;
    }
    return rc;
}

int sk_hll_map_create(sk_hll_map **out, const sk_hll_map_options *opts)
{
    return sk__hll_map_create(out, sk__hll_asked_precision(opts), opts != NULL ? opts->allocator : NULL);
}

int sk_hll_map_new(sk_hll_map **out, unsigned precision)
{
    return sk__hll_map_create(out, precision, NULL);
}

/* Everything m holds but the map object itself. */
static void release_groups(sk_hll_map *m)
{
    for (uint32_t g = 0; g < m->size; g++)
        if (rec_promoted(m->records[g]))
            sk_hll_free(rec_sketch(m->records[g]));
    for (struct chunk *c = m->chunks, *next; c != NULL; c = next) {
        next = c->next;
        sk__free(&m->alloc, c, c->size);
    }
    if (m->records != NULL)
        sk__free(&m->alloc, m->records, (size_t)m->records_cap * sizeof *m->records);
    sk__free(&m->alloc, m->table, (size_t)m->table_cap * sizeof *m->table);
}

void sk_hll_map_free(sk_hll_map *m)
{
    if (m == NULL)
        return;
    release_groups(m);
    sk_allocator a = m->alloc;
    sk__free(&a, m, sizeof *m);
}

int sk_hll_map_copy(sk_hll_map **out, const sk_hll_map *src)
{
    if (out == NULL || src == NULL)
        return SK_EINVAL;
    int rc = sk__hll_map_create(out, src->precision, &src->alloc);
    /* Merged into an empty map, src's groups come in its own order with
     * its registers: an equal map. */
    if (rc == SK_OK && (rc = sk_hll_map_merge(*out, src)) != SK_OK) {
        sk_hll_map_free(*out);
        *out = NULL;
    }
    return rc;
}

int sk_hll_map_clear(sk_hll_map *m)
{
    if (m == NULL)
        return SK_EINVAL;
    /* The empty table comes first, so that a failure leaves m as it was. */
    sk_hll_map *empty;
    int rc = sk__hll_map_create(&empty, m->precision, &m->alloc);
    if (rc != SK_OK)
        return rc;
    release_groups(m);
    *m = *empty;
    sk__free(&m->alloc, empty, sizeof *empty);
    return SK_OK;
}

int sk_hll_map_add_hash(sk_hll_map *m, const void *key, size_t key_len, uint64_t hash)
{
    if (m == NULL || (key == NULL && key_len != 0))
        return SK_EINVAL;
    int rc;
    uint8_t *r = group_of(m, key, key_len, &rc);
    if (r == NULL)
        return rc;
    uint32_t idx;
    unsigned value;
    sk__hll_register_of(hash, m->precision, &idx, &value);
    return sk__hll_map_set(m, r, idx, value);
}

int sk_hll_map_add(sk_hll_map *m, const void *key, size_t key_len, const void *item,
                   size_t item_len)
{
    if (item == NULL && item_len != 0)
        return SK_EINVAL;
    return sk_hll_map_add_hash(m, key, key_len, sk_murmur64a(item, item_len, SK_REDIS_HLL_SEED));
}

int sk_hll_map_merge_sketch(sk_hll_map *m, const void *key, size_t key_len, const sk_hll *h)
{
    if (m == NULL || h == NULL || (key == NULL && key_len != 0))
        return SK_EINVAL;
    if (sk_hll_precision(h) < m->precision)
        return SK_EINCOMPAT;
    sk_hll *folded;
    if (sk__hll_folded(h, m->precision, &folded) != SK_OK)
        return SK_ENOMEM;
    int rc;
    uint8_t *r = group_of(m, key, key_len, &rc);
    rc = r == NULL ? rc : merge_into(m, r, folded != NULL ? folded : h);
    sk_hll_free(folded);
    return rc;
}

int sk_hll_map_merge(sk_hll_map *dst, const sk_hll_map *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    if (dst == src) /* the union of a map with itself is itself */
        return SK_OK;
    if (dst->precision != src->precision)
        return SK_EINCOMPAT;
    for (uint32_t g = 0; g < src->size; g++) {
        const uint8_t *s = src->records[g];
        int rc;
        uint8_t *r = group_of(dst, s + REC_OFF_KEY, rec_key_len(s), &rc);
        if (r == NULL)
            return rc;
        if (rec_promoted(s)) {
            rc = merge_into(dst, r, rec_sketch(s));
        } else {
            rc = SK_OK;
            for (unsigned i = 0; i < s[REC_OFF_STATE] && rc >= 0; i++) {
                uint32_t e = sk__hll_small_entry(s + REC_OFF_BODY, i);
                rc = sk__hll_map_set(dst, r, sk__hll_entry_index(e), sk__hll_entry_value(e));
            }
        }
        if (rc < 0)
            return rc;
    }
    return SK_OK;
}

size_t sk_hll_map_size(const sk_hll_map *m)
{
    return m->size;
}


const uint8_t *sk__hll_map_key(const sk_hll_map *m, size_t index, size_t *len)
{
    const uint8_t *r = m->records[index];
    *len = rec_key_len(r);
    return r + REC_OFF_KEY;
}

int sk_hll_map_get(const sk_hll_map *m, size_t index, sk_hll_map_entry *out)
{
    if (m == NULL || out == NULL || index >= m->size)
        return SK_EINVAL;
    const uint8_t *r = m->records[index];
    out->key = sk__hll_map_key(m, index, &out->key_len);
    if (rec_promoted(r))
        sk_hll_estimate_with_bounds(rec_sketch(r), &out->estimate);
    else
        sk__hll_small_estimate(r + REC_OFF_BODY, r[REC_OFF_STATE], m->precision,
                               &out->estimate);
    return SK_OK;
}

int64_t sk_hll_map_find(const sk_hll_map *m, const void *key, size_t key_len)
{
    if (m == NULL || (key == NULL && key_len != 0) || key_len > SK_HLL_MAP_MAX_KEY)
        return -1;
    const struct slot *s = probe(m, key, key_len, key_hash(key, key_len));
    return (int64_t)s->group - 1;
}

int sk_hll_map_sketch(const sk_hll_map *m, size_t index, sk_hll **out)
{
    if (m == NULL || out == NULL || index >= m->size)
        return SK_EINVAL;
    *out = NULL;
    const uint8_t *r = m->records[index];
    if (rec_promoted(r))
        return sk_hll_copy(out, rec_sketch(r));
    return sk__hll_small_to_sketch(out, r + REC_OFF_BODY, r[REC_OFF_STATE], m->precision,
                                   &m->alloc);
}

void sk_hll_map_get_info(const sk_hll_map *m, sk_hll_map_info *info)
{
    size_t bytes = sizeof *m + m->arena_bytes + (size_t)m->records_cap * sizeof *m->records +
                   (size_t)m->table_cap * sizeof *m->table;
    for (uint32_t g = 0; g < m->size; g++) {
        if (rec_promoted(m->records[g])) {
            sk_hll_info sketch;
            sk_hll_get_info(rec_sketch(m->records[g]), &sketch);
            bytes += sketch.memory;
        }
    }
    info->precision = m->precision;
    info->groups = m->size;
    info->memory = bytes;
}

const sk_allocator *sk__hll_map_allocator(const sk_hll_map *m)
{
    return &m->alloc;
}
