/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aging_bloom_format.c: an aging Bloom filter as one byte string and back,
 * and in files, in the layout src/common/format.h gives (SK_AB_*) and
 * docs/aging-bloom.md explains: a 64-byte header with the parameters, the
 * newest epoch and an XXH3-64 of everything, then each generation as a
 * length and a Bloom filter dump.
 *
 * The reader trusts nothing: the parameters must size a filter as creation
 * would, the newest epoch and index must agree with each other and with the
 * adds, and every generation must have exactly the shape the parameters
 * give it, hold no more than its share (count window) and be empty where
 * the ring has not reached yet. A file is written by streaming the
 * generations' dumps twice, once into the checksum and once into the file,
 * so that saving a large filter takes no second copy of it.
 */
#include <errno.h>
#include <string.h>

/* XXH3_state_t: the checksum runs over the header and then the records. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "aging_bloom_internal.h"
#include "common/atomic_file.h"
#include "common/format.h"

static int layout_code(sk_bloom_layout layout)
{
    return layout == SK_BLOOM_CLASSIC ? SK_BF_LAYOUT_CLASSIC
           : layout == SK_BLOOM_SPLIT ? SK_BF_LAYOUT_SPLIT
                                      : SK_BF_LAYOUT_BLOCKED;
}

int sk_aging_bloom_serialized_size(const sk_aging_bloom *f, uint64_t *size)
{
    if (f == NULL || size == NULL)
        return SK_EINVAL;
    uint64_t total = SK_AB_HEADER_SIZE;
    for (unsigned i = 0; i < f->size.generations; i++)
        total += SK_AB_GEN_OFF_DUMP + sk_bloom_dump_size(f->gen[i]);
    *size = total;
    return SK_OK;
}

static void encode_header(const sk_aging_bloom *f, uint8_t *out)
{
    memset(out, 0, SK_AB_HEADER_SIZE);
    memcpy(out + SK_AB_OFF_MAGIC, SK_AB_MAGIC, 4);
    out[SK_AB_OFF_VERSION] = SK_AB_VERSION;
    out[SK_AB_OFF_LAYOUT] = (uint8_t)layout_code(f->size.layout);
    out[SK_AB_OFF_GENERATIONS] = (uint8_t)f->size.generations;
    out[SK_AB_OFF_NEWEST_INDEX] = (uint8_t)f->newest_index;
    sk_store_le64(out + SK_AB_OFF_CAPACITY, f->size.capacity);
    sk_store_le_double(out + SK_AB_OFF_FP_RATE, f->size.fp_rate);
    sk_store_le64(out + SK_AB_OFF_WINDOW, f->size.window);
    sk_store_le64(out + SK_AB_OFF_SPAN, f->size.span);
    sk_store_le64(out + SK_AB_OFF_NEWEST_EPOCH, f->newest);
    sk_store_le64(out + SK_AB_OFF_ADDS, f->adds);
}

/* XXH3-64 of the header's first SK_AB_OFF_CHECKSUM bytes and the body. */
static uint64_t checksum(const uint8_t *header, const uint8_t *body, size_t body_len)
{
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_AB_OFF_CHECKSUM);
    XXH3_64bits_update(&state, body, body_len);
    return XXH3_64bits_digest(&state);
}

int sk_aging_bloom_serialize(const sk_aging_bloom *f, void *buf, size_t cap, size_t *len)
{
    if (f == NULL || (buf == NULL && cap > 0))
        return SK_EINVAL;
    uint64_t size;
    sk_aging_bloom_serialized_size(f, &size);
    if (size > cap)
        return SK_ENOSPACE;
    uint8_t *out = buf;
    encode_header(f, out);
    size_t at = SK_AB_HEADER_SIZE;
    for (unsigned i = 0; i < f->size.generations; i++) {
        size_t dump;
        int rc = sk_bloom_serialize(f->gen[i], out + at + SK_AB_GEN_OFF_DUMP,
                                    cap - at - SK_AB_GEN_OFF_DUMP, &dump);
        if (rc != SK_OK)
            return rc;
        sk_store_le64(out + at + SK_AB_GEN_OFF_LENGTH, dump);
        at += SK_AB_GEN_OFF_DUMP + dump;
    }
    sk_store_le64(out + SK_AB_OFF_CHECKSUM,
                  checksum(out, out + SK_AB_HEADER_SIZE, at - SK_AB_HEADER_SIZE));
    if (len != NULL)
        *len = at;
    return SK_OK;
}

/* ---- reading ------------------------------------------------------------ */

/* The header's fields checked against each other: the sizing they imply,
 * or SK_ECORRUPT. */
static int decode_header(const uint8_t *in, struct sk__ab_sizing *s, uint64_t *newest,
                         uint64_t *adds, unsigned *index)
{
    uint8_t code = in[SK_AB_OFF_LAYOUT];
    sk_bloom_layout layout = code == SK_BF_LAYOUT_BLOCKED   ? SK_BLOOM_BLOCKED
                             : code == SK_BF_LAYOUT_CLASSIC ? SK_BLOOM_CLASSIC
                             : code == SK_BF_LAYOUT_SPLIT   ? SK_BLOOM_SPLIT
                                                            : SK_BLOOM_AUTO;
    unsigned g = in[SK_AB_OFF_GENERATIONS];
    double rate = sk_load_le_double(in + SK_AB_OFF_FP_RATE);
    /* 0 would take the defaults, which the writer has already resolved. */
    if (layout == SK_BLOOM_AUTO || g == 0 || rate == 0 ||
        sk__ab_size(sk_load_le64(in + SK_AB_OFF_CAPACITY), rate, g,
                    sk_load_le64(in + SK_AB_OFF_WINDOW), layout, s) != SK_OK ||
        s->layout != layout || s->span != sk_load_le64(in + SK_AB_OFF_SPAN))
        return SK_ECORRUPT;
    *newest = sk_load_le64(in + SK_AB_OFF_NEWEST_EPOCH);
    *adds = sk_load_le64(in + SK_AB_OFF_ADDS);
    *index = in[SK_AB_OFF_NEWEST_INDEX];
    if (*index != *newest % g)
        return SK_ECORRUPT;
    if (s->window == 0)
        return *newest == (*adds == 0 ? 0 : (*adds - 1) / s->span) ? SK_OK : SK_ECORRUPT;
    /* The newest epoch's start is a time: it must fit one. */
    return *adds == 0 && *newest <= UINT64_MAX / s->span ? SK_OK : SK_ECORRUPT;
}

/* The layers the sizing plans, each sized once for all the generations
 * (sizing searches the exact rate formula, the costly part of a read). */
#define PLANNED_LAYERS 64
struct plan {
    sk_bloom_options opts;
    unsigned planned;
    sk_bloom_layer layers[PLANNED_LAYERS];
};

static int planned_layer(struct plan *p, unsigned i, sk_bloom_layer *out)
{
    if (i >= PLANNED_LAYERS)
        return sk_bloom_plan(&p->opts, i, out);
    for (; p->planned <= i; p->planned++) {
        int rc = sk_bloom_plan(&p->opts, p->planned, &p->layers[p->planned]);
        if (rc != SK_OK)
            return rc;
    }
    *out = p->layers[i];
    return SK_OK;
}

/* Whether generation g has exactly the shape the sizing gives: its layout,
 * rate, expansion, and every layer as planned. */
static int generation_fits(const struct sk__ab_sizing *s, struct plan *p, const sk_bloom *g)
{
    sk_bloom_info info;
    sk_bloom_get_info(g, &info);
    if (info.layout != s->layout || info.fp_rate != s->gen_rate ||
        info.expansion != p->opts.expansion)
        return 0;
    for (unsigned i = 0; i < info.layers; i++) {
        sk_bloom_layer have, want;
        if (sk_bloom_get_layer(g, i, &have) != SK_OK || planned_layer(p, i, &want) != SK_OK ||
            have.bits != want.bits || have.hashes != want.hashes ||
            have.capacity != want.capacity)
            return 0;
    }
    return 1;
}

/* Generation i of f, just read, checked: its shape; what it holds, by its
 * count of adds that set a bit: with a count window no more than the adds
 * its epoch took, and nothing at all in a generation whose epoch the ring
 * has not reached (E < g - 1). */
static int check_generation(const sk_aging_bloom *f, struct plan *p, unsigned i)
{
    const struct sk__ab_sizing *s = &f->size;
    if (!generation_fits(s, p, f->gen[i]))
        return SK_ECORRUPT;
    sk_bloom_info info;
    sk_bloom_get_info(f->gen[i], &info);
    unsigned g = s->generations;
    uint64_t age = (f->newest_index + g - i) % g; /* epochs behind the newest */
    if (age > f->newest)
        return info.count == 0 && info.layers == 1 ? SK_OK : SK_ECORRUPT;
    if (s->window != 0)
        return SK_OK;
    uint64_t took = age == 0 ? f->in_newest : s->share;
    return info.count <= took ? SK_OK : SK_ECORRUPT;
}

/* The g records after the header: each generation read and checked. */
static int read_generations(sk_aging_bloom *f, const uint8_t *p, const uint8_t *end)
{
    struct plan plan = {.opts = sk__ab_generation_options(&f->size, NULL)};
    for (unsigned i = 0; i < f->size.generations; i++) {
        uint64_t dump = sk_load_le64(p + SK_AB_GEN_OFF_LENGTH);
        p += SK_AB_GEN_OFF_DUMP;
        int rc = sk_bloom_deserialize(&f->gen[i], p, (size_t)dump, &f->alloc);
        /* The checksum held, so the bytes are as written: a dump that does
         * not read is one the writer could not have made. */
        if (rc != SK_OK)
            return rc == SK_ENOMEM ? rc : SK_ECORRUPT;
        rc = check_generation(f, &plan, i);
        if (rc != SK_OK)
            return rc;
        p += dump;
    }
    return p == end ? SK_OK : SK_ECORRUPT;
}

int sk_aging_bloom_deserialize(sk_aging_bloom **out, const void *buf, size_t len,
                               const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (buf == NULL && len > 0)
        return SK_EINVAL;
    const uint8_t *in = buf;
    if (len < 4 || memcmp(in + SK_AB_OFF_MAGIC, SK_AB_MAGIC, 4) != 0)
        return SK_EFORMAT;
    if (len < SK_AB_HEADER_SIZE)
        return SK_ETRUNCATED;
    if (in[SK_AB_OFF_VERSION] != SK_AB_VERSION)
        return SK_EVERSION;
    /* The records' lengths must account for every byte before the
     * checksum is worth computing, or anything allocated. */
    unsigned g = in[SK_AB_OFF_GENERATIONS];
    if (g < SK_AGING_BLOOM_MIN_GENERATIONS || g > SK_AGING_BLOOM_MAX_GENERATIONS)
        return SK_ECORRUPT;
    size_t at = SK_AB_HEADER_SIZE;
    for (unsigned i = 0; i < g; i++) {
        if (len - at < SK_AB_GEN_OFF_DUMP)
            return SK_ETRUNCATED;
        uint64_t dump = sk_load_le64(in + at + SK_AB_GEN_OFF_LENGTH);
        at += SK_AB_GEN_OFF_DUMP;
        if (dump > len - at)
            return SK_ETRUNCATED;
        at += (size_t)dump;
    }
    if (at != len)
        return SK_ETRUNCATED;
    if (checksum(in, in + SK_AB_HEADER_SIZE, len - SK_AB_HEADER_SIZE) !=
        sk_load_le64(in + SK_AB_OFF_CHECKSUM))
        return SK_ECHECKSUM;
    struct sk__ab_sizing s;
    uint64_t newest, adds;
    unsigned index;
    int rc = decode_header(in, &s, &newest, &adds, &index);
    if (rc != SK_OK)
        return rc;
    sk_aging_bloom *f = sk__ab_alloc_record(&s, allocator);
    if (f == NULL)
        return SK_ENOMEM;
    f->newest = newest;
    f->adds = adds;
    f->in_newest = s.window == 0 ? adds - newest * s.share : 0;
    f->newest_index = index;
    /* What the generations hold is known only by their bits: each is
     * emptied when its turn comes. */
    f->dirty = s.generations == 64 ? UINT64_MAX : (UINT64_C(1) << s.generations) - 1;
    rc = read_generations(f, in + SK_AB_HEADER_SIZE, in + len);
    if (rc != SK_OK) {
        sk__ab_free_record(f);
        return rc;
    }
    *out = f;
    return SK_OK;
}

/* ---- files -------------------------------------------------------------- */

/* Bytes of a dump read at a time when saving; a dump's header must fit at
 * once, and does for any chain the limits allow. */
#define SAVE_CHUNK ((size_t)1 << 16)

typedef int (*sink_fn)(void *ctx, const void *data, size_t len);

struct saver {
    const sk_aging_bloom *f;
    uint8_t *buf; /* SAVE_CHUNK bytes */
    size_t cap;
};

/* Passes the records, length and dump, to sink, a chunk at a time. */
static int emit_records(const struct saver *sv, sink_fn sink, void *ctx)
{
    for (unsigned i = 0; i < sv->f->size.generations; i++) {
        const sk_bloom *gen = sv->f->gen[i];
        uint64_t size = sk_bloom_dump_size(gen);
        uint8_t length[SK_AB_GEN_OFF_DUMP];
        sk_store_le64(length + SK_AB_GEN_OFF_LENGTH, size);
        int rc = sink(ctx, length, sizeof length);
        for (uint64_t at = 0; rc == SK_OK && at < size;) {
            size_t n = size - at < sv->cap ? (size_t)(size - at) : sv->cap;
            rc = sk_bloom_dump_read(gen, at, sv->buf, n);
            if (rc == SK_OK)
                rc = sink(ctx, sv->buf, n);
            at += n;
        }
        if (rc != SK_OK)
            return rc;
    }
    return SK_OK;
}

static int hash_sink(void *ctx, const void *data, size_t len)
{
    XXH3_64bits_update(ctx, data, len);
    return SK_OK;
}

static int file_sink(void *ctx, const void *data, size_t len)
{
    return sk__write_all(*(const int *)ctx, data, len);
}

static int write_filter(int fd, const void *ctx)
{
    const struct saver *sv = ctx;
    uint8_t header[SK_AB_HEADER_SIZE];
    encode_header(sv->f, header);
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, SK_AB_OFF_CHECKSUM);
    int rc = emit_records(sv, hash_sink, &state);
    if (rc != SK_OK)
        return rc;
    sk_store_le64(header + SK_AB_OFF_CHECKSUM, XXH3_64bits_digest(&state));
    rc = sk__write_all(fd, header, sizeof header);
    return rc != SK_OK ? rc : emit_records(sv, file_sink, &fd);
}

int sk_aging_bloom_save(const sk_aging_bloom *f, const char *path)
{
    if (f == NULL || path == NULL)
        return SK_EINVAL;
    struct saver sv = {f, NULL, SAVE_CHUNK};
    for (unsigned i = 0; i < f->size.generations; i++)
        if (sk_bloom_dump_header_size(f->gen[i]) > sv.cap)
            sv.cap = sk_bloom_dump_header_size(f->gen[i]);
    sv.buf = sk__alloc(&f->alloc, sv.cap);
    if (sv.buf == NULL)
        return SK_ENOMEM;
    int rc = sk__atomic_write(path, write_filter, &sv);
    int saved_errno = errno;
    sk__free(&f->alloc, sv.buf, sv.cap);
    errno = saved_errno;
    return rc;
}

static int parse_filter(void *out, const uint8_t *bytes, size_t len, const sk_allocator *a,
                        void *ctx)
{
    (void)ctx;
    return sk_aging_bloom_deserialize(out, bytes, len, a);
}

int sk_aging_bloom_open(sk_aging_bloom **out, const char *path, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    return sk__open_file(path, SIZE_MAX, allocator, parse_filter, out, NULL);
}
