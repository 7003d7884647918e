/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdigest_redisbloom.c: a t-digest as RedisBloom 2.x keeps a TDIS-TYPE
 * value in an RDB file or a DUMP payload, read into an sk_tdigest and
 * written back (sketch/redisbloom.h, docs/redisbloom-rdb.md).
 *
 * The fields, encver 0 (the only one RedisBloom 2.x wrote), after
 * RedisBloom has compressed the digest:
 *
 *     double  compression
 *     double  min, max             DBL_MAX and -DBL_MAX while empty
 *     signed  cap                  6 x compression + 10
 *     signed  merged_nodes         centroids, at most cap
 *     signed  unmerged_nodes       buffered values (see below)
 *     signed  total_compressions
 *     double  merged_weight, unmerged_weight   integers
 *     double  mean      x merged_nodes, sorted
 *     double  weight    x merged_nodes, integers >= 1
 *
 * A compression merges the buffer, except a lone value of weight 1, which
 * RedisBloom leaves there (reads of it answer NaN): then unmerged_nodes is
 * 1, unmerged_weight 1, and RedisBloom writes its count but not the value,
 * which is min (= max). It is read back from there; any other buffer is
 * refused, since RedisBloom never saves one.
 *
 * Weights are 64-bit integers that RedisBloom saves as doubles: exact up
 * to 2^53, which is where merged_weight must equal the centroids' sum; past
 * it both went through doubles and may differ by their rounding.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "sketch/redisbloom.h"
#include "tdigest_internal.h"
#include "common/rdb_fields.h"

#define TWO_TO_63 9223372036854775808.0
#define EXACT_WEIGHTS (UINT64_C(1) << 53) /* doubles hold every integer below */
#define ROUNDING_SHIFT 20 /* past it, merged_weight within 2^-20 of the sum */

/* The header's fields, in their order: doubles (D_) and signed (S_). */
enum { D_COMPRESSION, D_MIN, D_MAX, D_MERGED_WEIGHT, D_UNMERGED_WEIGHT, DOUBLES };
enum { S_CAP, S_MERGED, S_UNMERGED, S_COMPRESSIONS, SIGNEDS };

struct header {
    double d[DOUBLES];
    int64_t s[SIGNEDS];
};

static int read_header(const sk_rdb_reader *r, struct header *h)
{
    int rc = SK_OK;
    for (int i = D_COMPRESSION; i <= D_MAX && rc == SK_OK; i++)
        rc = r->load_double(r->ctx, &h->d[i]);
    for (int i = 0; i < SIGNEDS && rc == SK_OK; i++)
        rc = r->load_signed(r->ctx, &h->s[i]);
    for (int i = D_MERGED_WEIGHT; i < DOUBLES && rc == SK_OK; i++)
        rc = r->load_double(r->ctx, &h->d[i]);
    return sk__rdb_status(rc);
}

/* A weight saved as a double: an integer in [0, 2^63), and not -0, which
 * no integer converts to. */
static int weight_of(double d, int64_t *out)
{
    if (!(d >= 0 && d < TWO_TO_63) || d != floor(d) || signbit(d))
        return 0;
    *out = (int64_t)d;
    return 1;
}

/* The header against itself and the family's limits; the compression and
 * the nodes' counts and weights receive what it says. */
static int check_header(const struct header *h, uint32_t *compression, uint32_t *merged,
                        uint32_t *unmerged, int64_t *merged_weight, int64_t *unmerged_weight)
{
    double c = h->d[D_COMPRESSION];
    /* RedisBloom's TDIGEST.CREATE takes an integer compression. */
    if (!(c >= 1 && c <= SK_TDIGEST_MAX_COMPRESSION) || c != floor(c))
        return SK_ECORRUPT;
    *compression = (uint32_t)c;
    int64_t cap = 6 * (int64_t)*compression + 10;
    if (h->s[S_CAP] != cap || h->s[S_MERGED] < 0 || h->s[S_MERGED] > cap ||
        h->s[S_COMPRESSIONS] < 0 || !weight_of(h->d[D_MERGED_WEIGHT], merged_weight) ||
        !weight_of(h->d[D_UNMERGED_WEIGHT], unmerged_weight) ||
        h->d[D_MERGED_WEIGHT] + h->d[D_UNMERGED_WEIGHT] >= TWO_TO_63)
        return SK_ECORRUPT;
    *merged = (uint32_t)h->s[S_MERGED];
    if ((*merged == 0) != (*merged_weight == 0))
        return SK_ECORRUPT;
    /* A compressed buffer: empty, or the lone value of weight 1 alone. */
    int lone = h->s[S_UNMERGED] == 1 && *unmerged_weight == 1 && *merged == 0;
    if (!lone && (h->s[S_UNMERGED] != 0 || *unmerged_weight != 0))
        return SK_ECORRUPT;
    *unmerged = lone ? 1 : 0;
    double min = h->d[D_MIN], max = h->d[D_MAX];
    if (*merged + *unmerged == 0)
        return min == DBL_MAX && max == -DBL_MAX ? SK_OK : SK_ECORRUPT;
    if (!isfinite(min) || !isfinite(max) || !(min <= max) || (lone && min != max))
        return SK_ECORRUPT;
    return SK_OK;
}

/* The centroids' means, then their weights, into t. */
static int read_nodes(sk_tdigest *t, const sk_rdb_reader *r, uint32_t merged,
                      int64_t merged_weight)
{
    double last = -INFINITY;
    for (uint32_t i = 0; i < merged; i++) {
        int rc = r->load_double(r->ctx, &t->mean[i]);
        if (rc != SK_OK)
            return sk__rdb_status(rc);
        /* Sorted, as a compression leaves them. A centroid of values near
         * +-DBL_MAX may overflow to NaN (tdigest_format.c), which has no
         * place in the order and is passed over. */
        double m = t->mean[i];
        if (isnan(m))
            continue;
        if (m < last)
            return SK_ECORRUPT;
        last = m;
    }
    uint64_t sum = 0;
    for (uint32_t i = 0; i < merged; i++) {
        double d;
        int rc = r->load_double(r->ctx, &d);
        if (rc != SK_OK)
            return sk__rdb_status(rc);
        int64_t w;
        if (!weight_of(d, &w) || w == 0 || (uint64_t)w > (uint64_t)INT64_MAX - sum)
            return SK_ECORRUPT;
        t->weight[i] = w;
        sum += (uint64_t)w;
    }
    uint64_t total = (uint64_t)merged_weight;
    uint64_t diff = sum > total ? sum - total : total - sum;
    uint64_t slack = total < EXACT_WEIGHTS && sum < EXACT_WEIGHTS ? 0 : total >> ROUNDING_SHIFT;
    return diff <= slack ? SK_OK : SK_ECORRUPT;
}

int sk_tdigest_load_redisbloom(sk_tdigest **out, const sk_rdb_reader *r, int encver,
                               uint64_t max_memory, const sk_allocator *allocator)
{
    if (out == NULL)
        return SK_EINVAL;
    *out = NULL;
    if (r == NULL)
        return SK_EINVAL;
    if (encver != SK_REDISBLOOM_TDIGEST_ENCVER)
        return SK_EVERSION;
    struct header h;
    int rc = read_header(r, &h);
    if (rc != SK_OK)
        return rc;
    uint32_t compression, merged, unmerged;
    int64_t merged_weight, unmerged_weight;
    rc = check_header(&h, &compression, &merged, &unmerged, &merged_weight, &unmerged_weight);
    if (rc != SK_OK)
        return rc;
    if (max_memory != 0) {
        /* As sk_tdigest_create holds a new digest to it: full. */
        sk_tdigest_options o = {.compression = compression, .allocator = allocator};
        uint64_t memory = sk_tdigest_create_memory(&o);
        if (memory == 0 || memory > max_memory)
            return SK_EBUDGET;
    }
    /* Room for the nodes the header counts, which the reader's fields
     * hold: a merged count of at most cap, checked above. */
    sk_tdigest *t;
    if ((rc = sk__tdigest_alloc(&t, compression, allocator)) != SK_OK)
        return rc;
    rc = sk__tdigest_reserve(t, merged + unmerged);
    if (rc == SK_OK)
        rc = read_nodes(t, r, merged, merged_weight);
    if (rc != SK_OK) {
        sk_tdigest_free(t);
        return rc;
    }
    if (unmerged == 1) {
        t->mean[0] = h.d[D_MIN]; /* the lone value, which RedisBloom did not write */
        t->weight[0] = 1;
    }
    t->merged = merged;
    t->unmerged = unmerged;
    t->merged_weight = merged_weight;
    t->unmerged_weight = unmerged_weight;
    t->total_compressions = h.s[S_COMPRESSIONS];
    t->min = h.d[D_MIN];
    t->max = h.d[D_MAX];
    *out = t;
    return SK_OK;
}

int sk_tdigest_save_redisbloom(const sk_tdigest *t, const sk_rdb_writer *w)
{
    if (t == NULL || w == NULL)
        return SK_EINVAL;
    /* RedisBloom compresses the live digest; a copy is compressed here,
     * so that a save changes nothing. */
    sk_tdigest *copy;
    const sk_tdigest *v;
    int rc = sk__tdigest_view(t, &copy, &v);
    if (rc != SK_OK)
        return rc;
    w->save_double(w->ctx, (double)v->compression);
    w->save_double(w->ctx, v->min);
    w->save_double(w->ctx, v->max);
    w->save_signed(w->ctx, v->cap);
    w->save_signed(w->ctx, v->merged);
    w->save_signed(w->ctx, v->unmerged);
    w->save_signed(w->ctx, v->total_compressions);
    w->save_double(w->ctx, (double)v->merged_weight);
    w->save_double(w->ctx, (double)v->unmerged_weight);
    for (uint32_t i = 0; i < v->merged; i++)
        w->save_double(w->ctx, v->mean[i]);
    for (uint32_t i = 0; i < v->merged; i++)
        w->save_double(w->ctx, (double)v->weight[i]);
    sk_tdigest_free(copy);
    return SK_OK;
}
