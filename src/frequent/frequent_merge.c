/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frequent_merge.c: the merge of two frequent-items summaries (the rule
 * and why it keeps the guarantee are in frequent.c): every item of either
 * gets the sum of its bounds in both, a summary's threshold standing in
 * for the upper bound of an item it does not keep; the m heaviest stay.
 *
 * The result is built as a new summary and swapped in, so that a failed
 * allocation leaves dst as it was, and dst may be src.
 */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frequent_internal.h"

struct candidate {
    sk_frequent_entry e;
    uint64_t hash;
};

static int compare_candidates(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    return sk__frequent_order(&a->e, &b->e);
}

int sk_frequent_merge(sk_frequent *dst, const sk_frequent *src)
{
    if (dst == NULL || src == NULL)
        return SK_EINVAL;
    if (dst->m != src->m)
        return SK_EINCOMPAT;
    if (dst->total > UINT64_MAX - src->total)
        return SK_EINVAL;
    size_t n = (size_t)dst->items + src->items;
    struct candidate *all = sk__alloc(&dst->alloc, (n > 0 ? n : 1) * sizeof *all);
    if (all == NULL)
        return SK_ENOMEM;
    size_t k = 0;
    for (uint32_t i = 0; i < dst->items; i++) {
        struct candidate c = {sk__frequent_entry(dst, i), dst->counters[i].hash};
        int64_t j = sk__frequent_find(src, c.hash, c.e.item, c.e.len);
        if (j >= 0) {
            sk_frequent_entry other = sk__frequent_entry(src, (uint32_t)j);
            c.e.upper += other.upper;
            c.e.lower += other.lower;
        } else {
            c.e.upper += src->threshold;
        }
        all[k++] = c;
    }
    for (uint32_t i = 0; i < src->items; i++) {
        struct candidate c = {sk__frequent_entry(src, i), src->counters[i].hash};
        if (sk__frequent_find(dst, c.hash, c.e.item, c.e.len) >= 0)
            continue;
        c.e.upper += dst->threshold;
        all[k++] = c;
    }
    uint64_t threshold = dst->threshold + src->threshold;
    if (k > dst->m) {
        qsort(all, k, sizeof *all, compare_candidates);
        /* What is dropped was seen at most as often as its upper bound. */
        if (all[dst->m].e.upper > threshold)
            threshold = all[dst->m].e.upper;
        k = dst->m;
    }

    sk_frequent *t;
    int rc = sk_frequent_create(&t, &(sk_frequent_options){.counters = dst->m,
                                                           .allocator = &dst->alloc});
    if (rc == SK_OK)
        rc = sk__frequent_reserve(t, (uint32_t)k);
    for (size_t i = 0; rc == SK_OK && i < k; i++)
        rc = sk__frequent_append(t, all[i].e.item, all[i].e.len, all[i].hash, all[i].e.upper,
                                 all[i].e.upper - all[i].e.lower);
    sk__free(&dst->alloc, all, (n > 0 ? n : 1) * sizeof *all);
    if (rc != SK_OK) {
        sk_frequent_free(t);
        return rc;
    }
    t->total = dst->total + src->total;
    t->threshold = threshold;
    struct sk_frequent old = *dst;
    *dst = *t;
    *t = old;
    sk_frequent_free(t);
    return SK_OK;
}
