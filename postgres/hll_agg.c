/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_agg.c: the aggregates that build sketches: hll_agg(value [, precision])
 * over the values of any type, and hll_union_agg(hll), the union of sketches.
 *
 * Both keep one transition state (type internal, in the aggregate's memory
 * context): an sk_hll, and the hashes of the last rows, not yet added to it.
 * A GROUP BY builds a sketch a group, and a group's 16 KB of registers has
 * seldom stayed in cache since its last row; PENDING hashes added together
 * by sk_hll_add_hash_batch overlap those misses instead of waiting out one a
 * row. Every function that reads a state adds its pending hashes first.
 *
 * The aggregates share their final, combine, serialize and deserialize
 * functions, which make them parallel: workers build partial sketches, send
 * them to the leader in the native format, and the leader merges them.
 * Since a union of sketches is the sketch of the union, the parallel result
 * is the serial one, register for register.
 *
 * What hll_agg hashes (docs/postgres.md): for text, varchar, char(n) and
 * bytea (and domains over them), the bytes of the value itself; for every
 * other type, the bytes of its text output, as the type's output function
 * writes it (what psql and COPY print). So hll_agg(x::text) and
 * `sketch count` of the same lines, or Redis's PFADD of the same strings,
 * agree register for register.
 */
#include "pg_sketch.h"

/* Hashes a state holds before it adds them: enough to overlap the misses
 * of a cold sketch (sk_hll_add_hash_batch prefetches 8 ahead), and as many as
 * make the state 256 bytes, one of palloc's sizes (32 would round it up to
 * 512, in each of maybe millions of groups). */
#define PENDING 30

typedef struct hll_state {
    sk_hll *sketch;
    uint32 pending;
    uint64 hashes[PENDING];
} hll_state;

StaticAssertDecl(sizeof(hll_state) == 256, "hll_state is one of palloc's sizes");

/* A state in cxt holding sketch, with no hashes pending. */
static hll_state *state_of(MemoryContext cxt, sk_hll *sketch)
{
    hll_state *state = MemoryContextAlloc(cxt, sizeof *state);
    state->sketch = sketch;
    state->pending = 0;
    return state;
}

/* An empty transition state, for the whole aggregate to live in cxt. */
static hll_state *new_state(MemoryContext cxt, unsigned precision)
{
    sk_allocator allocator = pg_sketch_allocator(cxt);
    sk_hll *sketch;
    sk_hll_options opts = {.precision = precision, .allocator = &allocator};
    int status = sk_hll_create(&sketch, &opts);
    pg_sketch_check(status, "cannot create a sketch");
    return state_of(cxt, sketch);
}

/* The state's sketch, with its pending hashes added. */
static sk_hll *sketch_of(hll_state *state)
{
    if (state->pending > 0) {
        int status = sk_hll_add_hash_batch(state->sketch, state->hashes, state->pending);
        if (status < 0)
            pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot add to the sketch");
        state->pending = 0;
    }
    return state->sketch;
}

/* Merges src into *state, creating *state first (at src's precision) when
 * there is none yet. */
static void merge_into(MemoryContext cxt, hll_state **state, const sk_hll *src)
{
    if (*state == NULL)
        *state = new_state(cxt, sk_hll_precision(src));
    int status = sk_hll_merge(sketch_of(*state), src);
    pg_sketch_check(status, "cannot merge the sketches");
}

/* hll_agg_trans(state, value [, precision]). The state exists from the
 * group's first row on, so that a group of NULLs gives an empty sketch (a
 * count of 0) at the precision asked for; NULL values are skipped. The
 * precision must be the same on every row: a sketch has one. */
PG_FUNCTION_INFO_V1(hll_agg_trans);
Datum hll_agg_trans(PG_FUNCTION_ARGS)
{
    hll_state *state = PG_GETARG_STATE_OR_NULL(0);
    unsigned precision = SK_HLL_DEFAULT_PRECISION;
    if (PG_NARGS() > 2) {
        if (PG_ARGISNULL(2))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("hll_agg's precision must not be NULL")));
        precision = pg_sketch_precision_arg(PG_GETARG_INT32(2));
    }
    /* A state exists only in an aggregate's call (no SQL value is of type
     * internal), so the context is checked when the state is made, not on
     * every row. */
    if (state == NULL)
        state = new_state(pg_sketch_aggregate_context(fcinfo, "hll_agg_trans"), precision);
    else if (PG_NARGS() > 2 && sk_hll_precision(state->sketch) != precision)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("hll_agg's precision changed from %u to %u within a group",
                               sk_hll_precision(state->sketch), precision)));
    if (!PG_ARGISNULL(1)) {
        const char *data;
        size_t len;
        void *to_free;
        pg_sketch_item_bytes(fcinfo, 1, pg_sketch_item_of(fcinfo), &data, &len, &to_free);
        state->hashes[state->pending++] = sk_hll_hash(data, len);
        if (to_free != NULL)
            pfree(to_free);
        if (state->pending == PENDING)
            (void)sketch_of(state);
    }
    PG_RETURN_POINTER(state);
}

/* hll_union_agg_trans(state, hll): NULL sketches are skipped; the state
 * starts at the first sketch's precision, and a sketch of a lower one
 * folds the state down to it (sk_hll_merge). */
PG_FUNCTION_INFO_V1(hll_union_agg_trans);
Datum hll_union_agg_trans(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = pg_sketch_aggregate_context(fcinfo, "hll_union_agg_trans");
    hll_state *state = PG_GETARG_STATE_OR_NULL(0);
    if (!PG_ARGISNULL(1)) {
        sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(1), CurrentMemoryContext);
        merge_into(cxt, &state, h);
        sk_hll_free(h);
    }
    PG_RETURN_STATE_OR_NULL(state);
}

/* Combines two partial states. The second one may live in a shorter
 * context than the aggregate's (a deserialized one does), so it is merged
 * into the first, never kept. */
PG_FUNCTION_INFO_V1(hll_agg_combine);
Datum hll_agg_combine(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = pg_sketch_aggregate_context(fcinfo, "hll_agg_combine");
    hll_state *state = PG_GETARG_STATE_OR_NULL(0);
    if (!PG_ARGISNULL(1))
        merge_into(cxt, &state, sketch_of((hll_state *)PG_GETARG_POINTER(1)));
    PG_RETURN_STATE_OR_NULL(state);
}

/* A partial state as bytea for the leader: the native format. */
PG_FUNCTION_INFO_V1(hll_agg_serialize);
Datum hll_agg_serialize(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "hll_agg_serialize");
    PG_RETURN_BYTEA_P((bytea *)pg_hll_to_value(sketch_of((hll_state *)PG_GETARG_POINTER(0))));
}

PG_FUNCTION_INFO_V1(hll_agg_deserialize);
Datum hll_agg_deserialize(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "hll_agg_deserialize");
    PG_RETURN_POINTER(state_of(CurrentMemoryContext,
                               pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext)));
}

/* The state as an hll value. Its sketch stays the same (FINALFUNC_MODIFY =
 * READ_ONLY), so that a window or a shared state can finish it again: adding
 * the pending hashes changes where they are kept, not what the state is. */
PG_FUNCTION_INFO_V1(hll_agg_final);
Datum hll_agg_final(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "hll_agg_final");
    PG_RETURN_POINTER(pg_hll_to_value(sketch_of((hll_state *)PG_GETARG_POINTER(0))));
}
