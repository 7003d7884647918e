/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_batch.c: many items or hashes added to one sketch at once
 * (sk_hll_add_batch, sk_hll_add_hash_batch).
 *
 * Adding one hash to a dense sketch is a load and a store of one random
 * register byte. When the sketch is one of many being built at once (one per
 * group of a GROUP BY), its 2^p bytes are seldom still in cache, and a lone
 * add waits out a miss that nothing else overlaps. Given its hashes in a
 * batch, the loop below asks for the register of the hash AHEAD places on
 * before it updates this one, so that up to AHEAD misses are in flight at a
 * time instead of one. The registers that result are those of adding each
 * hash in turn: a register's final value is the maximum of what it was given,
 * whatever the order.
 *
 * While the sketch is sparse its entries are one small sorted array, already
 * in cache after the first hash, and the hashes go one at a time through the
 * sparse insert of hll.c (which also turns the sketch dense when the array is
 * full, from where the prefetching loop takes over).
 */
#include "hll_internal.h"

/* Prefetch distance, in hashes: enough outstanding misses to cover a memory
 * latency at a few nanoseconds of work a hash, and fewer than the L1 miss
 * buffers of current cores. */
#define AHEAD 8

/* Items are hashed this many at a time into a buffer on the stack, enough
 * for the prefetch distance to pay and small enough to stay in L1. */
#define HASH_RUN 64

int sk_hll_add_hash_batch(sk_hll *h, const uint64_t *hashes, size_t n)
{
    if (h == NULL || (hashes == NULL && n != 0))
        return SK_EINVAL;
    unsigned p = h->precision;
    int changed = 0;
    size_t i = 0;
    for (; i < n && h->registers == NULL; i++) {
        uint32_t idx;
        unsigned value;
        sk__hll_register_of(hashes[i], p, &idx, &value);
        int rc = sk__hll_set(h, idx, value);
        if (rc < 0)
            return rc;
        changed |= rc;
    }
    uint8_t *registers = h->registers;
    uint32_t mask = sk__hll_registers(p) - 1;
    for (; i < n; i++) {
        if (i + AHEAD < n)
            __builtin_prefetch(&registers[hashes[i + AHEAD] & mask], 1);
        uint32_t idx;
        unsigned value;
        sk__hll_register_of(hashes[i], p, &idx, &value);
        if (registers[idx] < value) {
            registers[idx] = (uint8_t)value;
            changed = 1;
        }
    }
    return changed;
}

int sk_hll_add_batch(sk_hll *h, const void *const *items, const size_t *lens, size_t n)
{
    if (h == NULL || (n != 0 && (items == NULL || lens == NULL)))
        return SK_EINVAL;
    uint64_t hashes[HASH_RUN];
    int changed = 0;
    for (size_t done = 0; done < n;) {
        size_t run = n - done < HASH_RUN ? n - done : HASH_RUN;
        for (size_t i = 0; i < run; i++)
            hashes[i] = sk_hll_hash(items[done + i], lens[done + i]);
        int rc = sk_hll_add_hash_batch(h, hashes, run);
        if (rc < 0)
            return rc;
        changed |= rc;
        done += run;
    }
    return changed;
}
