/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_registers.c: how a HyperLogLog holds its registers, and the one place
 * that decides when it turns from sparse to dense.
 *
 * Sparse: while few registers are nonzero the sketch keeps a sorted array of
 * 32-bit entries (index << 8 | value), so a sketch of 10 items is a few dozen
 * bytes. An insert is a search and a memmove. Dense: one byte per register
 * (16 KB at p = 14), so that an add is a single load and store (the inline
 * sk__hll_set_for of hll_internal.h), a merge a loop the compiler
 * vectorizes and the histogram a byte scan. Serialized forms pack registers
 * to 6 bits; the packing is here too, shared by both formats.
 *
 * The small register sets of hll_internal.h, the few registers a map's small
 * group keeps inline before it needs a sketch, are sparse entries as well,
 * and merging a sketch into one is here; hll.c makes them sketches and
 * estimates them. Every byte comes from the sketch's allocator (alloc.h).
 * This file calls no other file of src/hll.
 */
#include <string.h>

#include "hll_internal.h"

/* When a sparse sketch turns dense: when a new entry would make it longer
 * than this. A sketch of its own turns dense at m/8 entries (at most 4096),
 * where the memmove of an insert would start to cost more than the 2^p bytes
 * it saves. A map of sketches by key turns its groups' sketches dense at 512
 * entries, or at m/8 if that is fewer: an insert into a sorted array moves
 * half of it, and with 2048 at p = 14 a map's many mid-size groups spent 15%
 * of the time moving entries (a profile of 40M rows in 1,000 groups; 5% at
 * 512). */
static uint32_t sparse_limit(unsigned precision, enum sk__hll_use use)
{
    uint32_t limit = sk__hll_registers(precision) / 8;
    uint32_t most = use == SK__HLL_ONE_OF_MANY ? 512 : 4096;
    return limit < most ? limit : most;
}

static uint32_t sparse_index(const sk_hll *h, uint32_t pos)
{
    return sk__hll_entry_index(h->sparse[pos]);
}

/* Index of the first sparse entry whose register index is >= idx.
 * Registers are set at the indices of uniform hashes, so idx's place among
 * sparse_len of them is near sparse_len * idx / m (within a few times
 * sqrt(sparse_len)): a search that gallops out from there reads the one or
 * two cache lines around it, where a binary search would read log2 of the
 * array's lines, each a miss in a cold sketch. sk__hll_prefetch_register
 * prefetches where it starts. */
static uint32_t sparse_lower_bound(const sk_hll *h, uint32_t idx)
{
    uint32_t len = h->sparse_len;
    if (len == 0)
        return 0;
    uint32_t at = (uint32_t)(((uint64_t)idx * len) >> h->precision), lo, hi, step = 1;
    if (sparse_index(h, at) < idx) {
        /* The answer is past `at`, at or before at + step. */
        while (at + step < len && sparse_index(h, at + step) < idx) {
            at += step;
            step *= 2;
        }
        lo = at + 1;
        hi = at + step < len ? at + step : len;
    } else {
        /* The answer is at or before `at`, after at - step. */
        while (at >= step && sparse_index(h, at - step) >= idx) {
            at -= step;
            step *= 2;
        }
        lo = at >= step ? at - step + 1 : 0;
        hi = at;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sparse_index(h, mid) < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

unsigned sk__hll_get(const sk_hll *h, uint32_t idx)
{
    if (h->registers != NULL)
        return h->registers[idx];
    uint32_t pos = sparse_lower_bound(h, idx);
    if (pos < h->sparse_len && sparse_index(h, pos) == idx)
        return sk__hll_entry_value(h->sparse[pos]);
    return 0;
}

void sk__hll_release_registers(sk_hll *h)
{
    sk__free(&h->alloc, h->registers, sk__hll_registers(h->precision));
    sk__free(&h->alloc, h->sparse, (size_t)h->sparse_cap * sizeof *h->sparse);
    h->registers = NULL;
    h->sparse = NULL;
    h->sparse_len = h->sparse_cap = 0;
}

/* Writes the sparse entries of h into zeroed registers. */
static void scatter_sparse(const sk_hll *h, uint8_t *registers)
{
    for (uint32_t i = 0; i < h->sparse_len; i++)
        registers[sk__hll_entry_index(h->sparse[i])] = (uint8_t)sk__hll_entry_value(h->sparse[i]);
}

const uint8_t *sk__hll_registers_of(const sk_hll *h, uint8_t *buf)
{
    if (h->registers != NULL)
        return h->registers;
    memset(buf, 0, sk__hll_registers(h->precision));
    scatter_sparse(h, buf);
    return buf;
}

int sk__hll_make_dense(sk_hll *h)
{
    if (h->registers != NULL)
        return SK_OK;
    uint8_t *registers = sk__zalloc(&h->alloc, sk__hll_registers(h->precision));
    if (registers == NULL)
        return SK_ENOMEM;
    scatter_sparse(h, registers);
    sk__hll_release_registers(h);
    h->registers = registers;
    return SK_OK;
}

__attribute__((noinline, cold)) int sk__hll_sparse_set(sk_hll *h, uint32_t idx,
                                                        unsigned value, enum sk__hll_use use)
{
    uint32_t pos = sparse_lower_bound(h, idx);
    if (pos < h->sparse_len && sparse_index(h, pos) == idx) {
        if (sk__hll_entry_value(h->sparse[pos]) >= value)
            return 0;
        h->sparse[pos] = sk__hll_entry(idx, value);
        return 1;
    }
    uint32_t limit = sparse_limit(h->precision, use);
    if (h->sparse_len >= limit) {
        int rc = sk__hll_make_dense(h);
        if (rc != SK_OK)
            return rc;
        h->registers[idx] = (uint8_t)value;
        return 1;
    }
    if (h->sparse_len == h->sparse_cap) {
        uint32_t cap = h->sparse_cap ? h->sparse_cap * 2 : 4;
        if (cap > limit)
            cap = limit;
        uint32_t *grown = sk__alloc(&h->alloc, cap * sizeof *grown);
        if (grown == NULL)
            return SK_ENOMEM;
        if (h->sparse_len > 0)
            memcpy(grown, h->sparse, h->sparse_len * sizeof *grown);
        sk__free(&h->alloc, h->sparse, (size_t)h->sparse_cap * sizeof *grown);
        h->sparse = grown;
        h->sparse_cap = cap;
    }
    memmove(h->sparse + pos + 1, h->sparse + pos,
            (h->sparse_len - pos) * sizeof *h->sparse);
    h->sparse[pos] = sk__hll_entry(idx, value);
    h->sparse_len++;
    return 1;
}

int sk__hll_small_merge(uint8_t *set, uint8_t *n, const sk_hll *h)
{
    if (h->registers != NULL || h->sparse_len + *n > SK__HLL_SMALL_MAX)
        return SK__HLL_SMALL_FULL;
    for (uint32_t i = 0; i < h->sparse_len; i++) /* cannot be full */
        sk__hll_small_set(set, n, sk__hll_entry_index(h->sparse[i]),
                          sk__hll_entry_value(h->sparse[i]));
    return SK_OK;
}

/* ---- 6-bit packing, shared by both formats ----------------------------------- */

void sk__hll_pack6(const sk_hll *h, uint8_t *out)
{
    uint32_t m = sk__hll_registers(h->precision);
    memset(out, 0, sk__hll_dense_size(h->precision));
    if (h->registers == NULL) {
        for (uint32_t i = 0; i < h->sparse_len; i++) {
            uint32_t idx = sk__hll_entry_index(h->sparse[i]);
            unsigned value = sk__hll_entry_value(h->sparse[i]);
            size_t bit = (size_t)idx * 6;
            out[bit / 8] |= (uint8_t)(value << (bit % 8));
            if (bit % 8 > 2)
                out[bit / 8 + 1] |= (uint8_t)(value >> (8 - bit % 8));
        }
        return;
    }
    /* Four registers fill exactly three bytes. */
    for (uint32_t i = 0; i < m; i += 4) {
        const uint8_t *r = h->registers + i;
        uint8_t *o = out + i / 4 * 3;
        o[0] = (uint8_t)(r[0] | r[1] << 6);
        o[1] = (uint8_t)(r[1] >> 2 | r[2] << 4);
        o[2] = (uint8_t)(r[2] >> 4 | r[3] << 2);
    }
}

void sk__hll_unpack6(const uint8_t *in, uint32_t m, uint8_t *registers)
{
    for (uint32_t i = 0; i < m; i += 4) {
        const uint8_t *b = in + i / 4 * 3;
        registers[i] = b[0] & 63;
        registers[i + 1] = (uint8_t)((b[0] >> 6 | b[1] << 2) & 63);
        registers[i + 2] = (uint8_t)((b[1] >> 4 | b[2] << 4) & 63);
        registers[i + 3] = b[2] >> 2;
    }
}

int sk__hll_read_packed(sk_hll *h, const uint8_t *packed)
{
    int rc = sk__hll_make_dense(h);
    if (rc != SK_OK)
        return rc;
    uint32_t m = sk__hll_registers(h->precision);
    sk__hll_unpack6(packed, m, h->registers);
    for (uint32_t i = 0; i < m; i++)
        if (h->registers[i] > sk__hll_max_rank(h->precision))
            return SK_ECORRUPT;
    return SK_OK;
}
