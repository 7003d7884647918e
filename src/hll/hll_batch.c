/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_batch.c: many hashes added to one sketch at once (sk_hll_add_hashes).
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

int sk_hll_add_hashes(sk_hll *h, const uint64_t *hashes, size_t n)
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
