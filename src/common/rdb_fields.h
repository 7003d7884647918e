/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdb_fields.h: what the readers of RedisBloom's RDB values share (each
 * family's *_redisbloom.c, sketch/redisbloom.h): a reader's status as the
 * library's, and a run of unsigned fields read at once. Internal.
 */
#ifndef SKETCH_COMMON_RDB_FIELDS_H
#define SKETCH_COMMON_RDB_FIELDS_H

#include <stdint.h>

#include "sketch/redisbloom.h"

/* A reader's status as a load returns it: a positive one, which the
 * caller's reader should not give, would read as success. */
static inline int sk__rdb_status(int rc)
{
    return rc > 0 ? SK_ECORRUPT : rc;
}

/* Reads n unsigned fields into out: SK_OK or the reader's status. */
static inline int sk__rdb_load_unsigneds(const sk_rdb_reader *r, uint64_t *out, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = r->load_unsigned(r->ctx, &out[i]);
        if (rc != SK_OK)
            return sk__rdb_status(rc);
    }
    return SK_OK;
}

#endif
