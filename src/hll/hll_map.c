/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_map.c: HyperLogLog sketches by key (sketch/hll_map.h).
 *
 * Most groups of real data are small: a page seen by three visitors, a
 * source that touched two ports. So a group does not start as a sketch. It
 * starts as a record of its own in an arena, holding up to INLINE_MAX
 * registers inline, as the sparse sketch holds them (index << 8 | value);
 * the register that would be the next one past INLINE_MAX turns the group
 * into a real sk_hll, which is sparse itself until it grows, and the record
 * then holds its pointer. Registers are exactly those sk_hll_add would set,
 * so a small group's estimate is the estimator's on those registers, read
 * through a sketch header laid over them.
 *
 * Layout
 * ------
 * A record, 8-byte aligned in the arena (chunks that are never freed
 * before the map, so records never move):
 *
 *     offset  size  field
 *          0     4  key length
 *          4     1  inline registers in use, 0..INLINE_MAX, or PROMOTED
 *          8    24  INLINE_MAX registers, or the sk_hll pointer
 *         32     n  the key
 *
 * Groups are numbered in the order their keys first came; `records` holds
 * each group's record. The table is open addressing with linear probing,
 * a power of two of slots of (group number + 1, high 32 bits of the key's
 * hash), so a probe compares keys only when those 32 bits agree; it grows
 * at 70% load, rehashing every key (XXH3-64, seed 0).
 *
 * Memory per small group: its record (32 bytes and the key, rounded to 8),
 * 8 bytes of `records` and 8 to 16 of table (11.4 on average), about 60
 * bytes plus the key.
 */
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hll_internal.h"
#include "common/murmur64a.h"
#include "sketch/hll_map.h"

#define INLINE_MAX 6
#define PROMOTED 0xff

#define REC_OFF_KEY_LEN 0
#define REC_OFF_STATE 4
#define REC_OFF_BODY 8
#define REC_OFF_KEY 32
_Static_assert(REC_OFF_KEY - REC_OFF_BODY == INLINE_MAX * sizeof(uint32_t),
               "the body holds the inline registers");
_Static_assert(REC_OFF_KEY - REC_OFF_BODY >= sizeof(sk_hll *), "or a pointer");

/* A group's sketch turns dense at this many registers, or at the sketch's
 * own m/8 if that is fewer: an insert into a sorted sparse array moves half
 * of it, and with the sketch's 2048 at p = 14 a map's many mid-size groups
 * spent 15% of the time moving entries (a profile of 40M rows in 1,000
 * groups; 5% at 512). */
#define MAP_SPARSE_MAX 512

/* Arena chunks start small, for maps of a few groups, and double up to a
 * size that malloc takes from mmap, so that freeing a large map gives its
 * memory back to the system. */
#define FIRST_CHUNK ((size_t)4 << 10)
#define MAX_CHUNK ((size_t)4 << 20)
#define FIRST_TABLE 64
#define FIRST_RECORDS 64

struct slot {
    uint32_t group; /* + 1; 0: empty */
    uint32_t tag;
};

struct chunk {
    struct chunk *next;
    size_t size; /* of this allocation */
};

struct sk_hll_map {
    unsigned precision;
    uint32_t size;
    uint32_t records_cap;
    uint8_t **records;
    struct slot *table;
    uint32_t table_cap; /* a power of two */
    struct chunk *chunks;
    uint8_t *free_at; /* in the newest chunk */
    size_t free_left;
    size_t arena_bytes;
    sk_allocator alloc;
};

/* ---- records ------------------------------------------------------------ */

static uint32_t rec_key_len(const uint8_t *r)
{
    uint32_t len;
    memcpy(&len, r + REC_OFF_KEY_LEN, sizeof len);
    return len;
}

static sk_hll *rec_sketch(const uint8_t *r)
{
    sk_hll *h;
    memcpy(&h, r + REC_OFF_BODY, sizeof h);
    return h;
}

static uint32_t rec_inline(const uint8_t *r, unsigned i)
{
    uint32_t v;
    memcpy(&v, r + REC_OFF_BODY + i * sizeof v, sizeof v);
    return v;
}

static void rec_set_inline(uint8_t *r, unsigned i, uint32_t v)
{
    memcpy(r + REC_OFF_BODY + i * sizeof v, &v, sizeof v);
}

/* A new sketch of a record's inline registers, or NULL. */
static sk_hll *sketch_of_inline(const sk_hll_map *m, const uint8_t *r)
{
    sk_hll *h;
    if (sk_hll_create(&h, m->precision, &m->alloc) != SK_OK)
        return NULL;
    for (unsigned i = 0; i < r[REC_OFF_STATE]; i++) {
        uint32_t e = rec_inline(r, i);
        if (sk__hll_set(h, e >> 8, e & 0xff) < 0) {
            sk_hll_free(h);
            return NULL;
        }
    }
    return h;
}

/* Turns a record's inline registers into a sketch; SK_ENOMEM leaves it. */
static int promote(const sk_hll_map *m, uint8_t *r)
{
    sk_hll *h = sketch_of_inline(m, r);
    if (h == NULL)
        return SK_ENOMEM;
    memcpy(r + REC_OFF_BODY, &h, sizeof h);
    r[REC_OFF_STATE] = PROMOTED;
    return SK_OK;
}

/* Register idx of the group to max(register, value): 1 if it changed. */
static int rec_set(const sk_hll_map *m, uint8_t *r, uint32_t idx, unsigned value)
{
    unsigned n = r[REC_OFF_STATE];
    if (n != PROMOTED) {
        for (unsigned i = 0; i < n; i++) {
            uint32_t e = rec_inline(r, i);
            if (e >> 8 != idx)
                continue;
            if ((e & 0xff) >= value)
                return 0;
            rec_set_inline(r, i, idx << 8 | value);
            return 1;
        }
        if (n < INLINE_MAX) {
            rec_set_inline(r, n, idx << 8 | value);
            r[REC_OFF_STATE] = (uint8_t)(n + 1);
            return 1;
        }
        int rc = promote(m, r);
        if (rc != SK_OK)
            return rc;
    }
    sk_hll *h = rec_sketch(r);
    if (h->registers == NULL && h->sparse_len >= MAP_SPARSE_MAX) {
        int rc = sk__hll_make_dense(h);
        if (rc != SK_OK)
            return rc;
    }
    return sk__hll_set(h, idx, value);
}

/* A sketch header over a record's inline registers, for the estimator. */
static void inline_view(const sk_hll_map *m, const uint8_t *r, sk_hll *view,
                        uint32_t regs[INLINE_MAX])
{
    memset(view, 0, sizeof *view);
    view->precision = m->precision;
    view->sparse = regs;
    view->sparse_len = view->sparse_cap = r[REC_OFF_STATE];
    for (unsigned i = 0; i < view->sparse_len; i++)
        regs[i] = rec_inline(r, i);
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

static uint64_t key_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
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

/* The record of key's group, new and empty if it had none; NULL with *rc. */
static uint8_t *group_of_hashed(sk_hll_map *m, const void *key, size_t len, uint64_t hash,
                                int *rc)
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
    return group_of_hashed(m, key, len, key_hash(key, len), rc);
}

/* ---- the API ------------------------------------------------------------- */

int sk_hll_map_create(sk_hll_map **out, unsigned precision, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (precision < SK_HLL_MIN_PRECISION || precision > SK_HLL_MAX_PRECISION)
        return SK_EINVAL;
    sk_allocator a;
    sk__allocator_init(&a, allocator);
    sk_hll_map *m = sk__zalloc(&a, sizeof *m);
    if (m == NULL)
        return SK_ENOMEM;
    m->precision = precision;
    m->alloc = a;
    if (grow_table(m) != SK_OK) {
        sk__free(&a, m, sizeof *m);
        return SK_ENOMEM;
    }
    *out = m;
    return SK_OK;
}

void sk_hll_map_free(sk_hll_map *m)
{
    if (m == NULL)
        return;
    for (uint32_t g = 0; g < m->size; g++)
        if (m->records[g][REC_OFF_STATE] == PROMOTED)
            sk_hll_free(rec_sketch(m->records[g]));
    for (struct chunk *c = m->chunks, *next; c != NULL; c = next) {
        next = c->next;
        sk__free(&m->alloc, c, c->size);
    }
    if (m->records != NULL)
        sk__free(&m->alloc, m->records, (size_t)m->records_cap * sizeof *m->records);
    sk__free(&m->alloc, m->table, (size_t)m->table_cap * sizeof *m->table);
    sk_allocator a = m->alloc;
    sk__free(&a, m, sizeof *m);
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
    return rec_set(m, r, idx, value);
}

int sk_hll_map_add(sk_hll_map *m, const void *key, size_t key_len, const void *item,
                   size_t item_len)
{
    if (item == NULL && item_len != 0)
        return SK_EINVAL;
    return sk_hll_map_add_hash(m, key, key_len, sk_murmur64a(item, item_len, SK_REDIS_HLL_SEED));
}

/* A batch is a pipeline: an item's key is hashed and its table slot
 * prefetched (stage 0), then, DEPTH items later at each step, its group's
 * `records` entry (1), its record (2), its sketch's header (3, where the
 * group is found or made and the item hashed), its register's line (4),
 * and two steps after that its register is set (5). A group of a large map
 * costs four dependent misses and its register one more, each hidden behind
 * the work on the items in between. */
#define DEPTH 8
#define LAST (6 * DEPTH) /* stage 5; the register's line gets two steps */
#define RING 64          /* a power of two past LAST */
_Static_assert(RING > LAST && (RING & (RING - 1)) == 0, "the ring holds every stage");
/* At most this many groups, the records stay in the caches and stages 1
 * and 2 are skipped: they would prefetch lines already there. */
#define DEEP_GROUPS 32768

struct in_flight {
    uint64_t key_hash;
    uint64_t hash; /* of the item */
    uint8_t *record;
};

/* GCC finds a function whose only effect is a prefetch free of side
 * effects, and deletes the calls: the helpers are inlined before that. */
#define PREFETCHER static inline __attribute__((always_inline)) void

/* Stages 1 and 2 are the probe's first steps as prefetches; a group that
 * is not in its home slot is found by the probe itself, with a miss. */
static inline const struct slot *home_slot(const sk_hll_map *m, uint64_t key_hash)
{
    return &m->table[(uint32_t)key_hash & (m->table_cap - 1)];
}

/* The group (+ 1) in the key's home slot if its tag is the key's, else 0. */
static inline uint32_t home_group(const sk_hll_map *m, uint64_t key_hash)
{
    const struct slot *s = home_slot(m, key_hash);
    return s->tag == (uint32_t)(key_hash >> 32) ? s->group : 0;
}

PREFETCHER prefetch_entry(const sk_hll_map *m, uint64_t kh)
{
    uint32_t g = home_group(m, kh);
    if (g != 0)
        __builtin_prefetch(&m->records[g - 1], 0);
}

PREFETCHER prefetch_record(const sk_hll_map *m, uint64_t kh, size_t key_len)
{
    uint32_t g = home_group(m, kh);
    if (g != 0) {
        const uint8_t *r = m->records[g - 1];
        __builtin_prefetch(r, 1);
        __builtin_prefetch(r + REC_OFF_KEY + key_len, 0);
    }
}

/* Stage 4: the register's line, or the sparse entries around the place
 * where a search for it starts (hll.c's sparse_lower_bound). */
PREFETCHER prefetch_register(const sk_hll_map *m, const uint8_t *r, uint64_t hash)
{
    if (r[REC_OFF_STATE] != PROMOTED)
        return;
    const sk_hll *h = rec_sketch(r);
    uint32_t idx = (uint32_t)(hash & (sk__hll_registers(m->precision) - 1));
    if (h->registers != NULL)
        __builtin_prefetch(h->registers + idx, 1);
    else if (h->sparse != NULL)
        __builtin_prefetch(h->sparse + (((uint64_t)idx * h->sparse_len) >> m->precision), 1);
}

int sk_hll_map_add_batch(sk_hll_map *m, const void *const *keys, const size_t *key_lens,
                         const void *const *items, const size_t *item_lens, size_t n)
{
    if (m == NULL || (n != 0 && (keys == NULL || key_lens == NULL || items == NULL ||
                                 item_lens == NULL)))
        return SK_EINVAL;
    struct in_flight ring[RING];
    unsigned p = m->precision;
    int deep = m->size > DEEP_GROUPS;
    for (size_t i = 0; i < n + LAST; i++) {
        size_t j;
        /* Stage 5: the register is set. */
        if (i >= LAST) {
            j = i - LAST;
            uint32_t idx;
            unsigned value;
            sk__hll_register_of(ring[j % RING].hash, p, &idx, &value);
            int rc = rec_set(m, ring[j % RING].record, idx, value);
            if (rc < 0)
                return rc;
        }
        if (i >= 4 * DEPTH && (j = i - 4 * DEPTH) < n)
            prefetch_register(m, ring[j % RING].record, ring[j % RING].hash);
        /* Stage 3: the group is found (or made), the item hashed. */
        if (i >= 3 * DEPTH && (j = i - 3 * DEPTH) < n) {
            if (keys[j] == NULL && key_lens[j] != 0)
                return SK_EINVAL;
            int rc;
            uint8_t *r = group_of_hashed(m, keys[j], key_lens[j], ring[j % RING].key_hash, &rc);
            if (r == NULL)
                return rc;
            ring[j % RING].record = r;
            ring[j % RING].hash = sk_murmur64a(items[j], item_lens[j], SK_REDIS_HLL_SEED);
            if (r[REC_OFF_STATE] == PROMOTED)
                __builtin_prefetch(rec_sketch(r), 0);
        }
        if (deep && i >= 2 * DEPTH && (j = i - 2 * DEPTH) < n)
            prefetch_record(m, ring[j % RING].key_hash, key_lens[j]);
        if (deep && i >= DEPTH && (j = i - DEPTH) < n)
            prefetch_entry(m, ring[j % RING].key_hash);
        /* Stage 0: the key is hashed, its home slot prefetched. */
        if (i < n) {
            uint64_t kh = key_hash(keys[i], key_lens[i]);
            ring[i % RING].key_hash = kh;
            __builtin_prefetch(home_slot(m, kh), 0);
        }
    }
    return SK_OK;
}

/* Merges sketch h, of the map's precision, into record r. */
static int merge_into(const sk_hll_map *m, uint8_t *r, const sk_hll *h)
{
    if (r[REC_OFF_STATE] != PROMOTED && h->registers == NULL &&
        h->sparse_len + r[REC_OFF_STATE] <= INLINE_MAX) {
        for (uint32_t i = 0; i < h->sparse_len; i++)
            rec_set(m, r, h->sparse[i] >> 8, h->sparse[i] & 0xff); /* cannot fail inline */
        return SK_OK;
    }
    if (r[REC_OFF_STATE] != PROMOTED) {
        int rc = promote(m, r);
        if (rc != SK_OK)
            return rc;
    }
    return sk_hll_merge(rec_sketch(r), h);
}

int sk_hll_map_merge_sketch(sk_hll_map *m, const void *key, size_t key_len, const sk_hll *h)
{
    if (m == NULL || h == NULL || (key == NULL && key_len != 0))
        return SK_EINVAL;
    if (h->precision < m->precision)
        return SK_EINCOMPAT;
    sk_hll *folded = NULL;
    if (h->precision > m->precision) {
        if (sk_hll_copy(&folded, h) != SK_OK || sk_hll_fold(folded, m->precision) != SK_OK) {
            sk_hll_free(folded);
            return SK_ENOMEM;
        }
        h = folded;
    }
    int rc;
    uint8_t *r = group_of(m, key, key_len, &rc);
    rc = r == NULL ? rc : merge_into(m, r, h);
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
        if (s[REC_OFF_STATE] == PROMOTED) {
            rc = merge_into(dst, r, rec_sketch(s));
        } else {
            rc = SK_OK;
            for (unsigned i = 0; i < s[REC_OFF_STATE] && rc >= 0; i++) {
                uint32_t e = rec_inline(s, i);
                rc = rec_set(dst, r, e >> 8, e & 0xff);
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

unsigned sk_hll_map_precision(const sk_hll_map *m)
{
    return m->precision;
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
    if (r[REC_OFF_STATE] == PROMOTED) {
        sk_hll_estimate_with_bounds(rec_sketch(r), &out->estimate);
    } else {
        sk_hll view;
        uint32_t regs[INLINE_MAX];
        inline_view(m, r, &view, regs);
        sk_hll_estimate_with_bounds(&view, &out->estimate);
    }
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
    if (r[REC_OFF_STATE] == PROMOTED)
        return sk_hll_copy(out, rec_sketch(r));
    *out = sketch_of_inline(m, r);
    return *out != NULL ? SK_OK : SK_ENOMEM;
}

size_t sk_hll_map_memory(const sk_hll_map *m)
{
    size_t bytes = sizeof *m + m->arena_bytes + (size_t)m->records_cap * sizeof *m->records +
                   (size_t)m->table_cap * sizeof *m->table;
    for (uint32_t g = 0; g < m->size; g++) {
        if (m->records[g][REC_OFF_STATE] == PROMOTED) {
            sk_hll_info info;
            sk_hll_get_info(rec_sketch(m->records[g]), &info);
            bytes += info.memory;
        }
    }
    return bytes;
}

const sk_allocator *sk__hll_map_allocator(const sk_hll_map *m)
{
    return &m->alloc;
}
