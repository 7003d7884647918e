/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bloom_type.c: the type bloom, a Bloom filter of fixed size, and its
 * functions: text and binary input and output, bloom_contains and its
 * operator @>, bloom_union, bloom_info, and the aggregates bloom_agg(value,
 * capacity, rate) and bloom_union_agg(bloom).
 *
 * A value of type bloom is a varlena holding the filter as sk_bloom_serialize
 * writes it (the dump form of docs/bloom-format.md: the header, the layer
 * table with an XXH3-64 of each bit array, then the arrays), in the same
 * \x hex literal as hll. Items are the bytes hll_agg hashes
 * (pg_sketch_item_bytes), each added and looked up by libsketch.
 *
 * Sizes. A varlena holds at most 1 GB, so a filter's dump must fit in
 * BLOOM_MAX_BYTES: bloom_agg works its size out from the capacity and rate
 * (sk_bloom_plan, which allocates nothing) and refuses a larger one before
 * anything is allocated, since the library zeroes a new bit array whole.
 *
 * Counts. A filter made here (bloom_agg, bloom_union_agg, bloom_union)
 * counts its items from its bits, not from its adds, so that every plan of
 * a query makes the same bytes (value_counted_from_bits).
 */
#include "pg_sketch.h"

#include "access/detoast.h"
#include "funcapi.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

/* The bytes a value can hold (a varlena's at most), and what a filter's
 * header and layer table may take beyond its bit array. */
#define BLOOM_MAX_BYTES ((size_t)(MaxAllocSize - VARHDRSZ))
#define BLOOM_HEADER_ALLOWANCE ((uint64_t)4096)

/* The filter that a stored value holds, in cxt (data_corrupted if it does
 * not deserialize: no input function made it). */
static sk_bloom *filter_from_value(const struct varlena *value, MemoryContext cxt)
{
    sk_allocator allocator = pg_sketch_allocator(cxt);
    sk_bloom *f;
    int status = sk_bloom_deserialize(&f, VARDATA_ANY(value), VARSIZE_ANY_EXHDR(value),
                                      &allocator);
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_DATA_CORRUPTED, "stored bloom value is not a filter");
    return f;
}

static struct varlena *filter_to_value(const sk_bloom *f)
{
    uint64_t size;
    sk_bloom_serialized_size(f, &size);
    if (size > BLOOM_MAX_BYTES)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("a filter of %llu bytes does not fit in a bloom value",
                               (unsigned long long)size),
                        errdetail("A value holds at most %zu bytes.", BLOOM_MAX_BYTES)));
    struct varlena *value = palloc(VARHDRSZ + (size_t)size);
    size_t len;
    int status = sk_bloom_serialize(f, VARDATA(value), (size_t)size, &len);
    pg_sketch_check(status, "cannot serialize the filter");
    SET_VARSIZE(value, VARHDRSZ + len);
    return value;
}

/* Checks that bytes[0..len) are a filter, as the library reads it:
 * invalid_text_representation for a literal (not NULL),
 * invalid_binary_representation otherwise. */
static void check_filter(const char *bytes, size_t len, const char *literal)
{
    sk_allocator allocator = pg_sketch_allocator(CurrentMemoryContext);
    sk_bloom *f;
    int status = sk_bloom_deserialize(&f, bytes, len, &allocator);
    if (status == SK_OK) {
        sk_bloom_free(f);
        return;
    }
    if (status == SK_ENOMEM)
        pg_sketch_error(status, 0, "reading a filter");
    if (literal != NULL)
        pg_sketch_bad_literal("bloom", literal, sk_strerror(status), NULL);
    ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                    errmsg("invalid binary bloom value"), errdetail("%s", sk_strerror(status))));
}

PG_FUNCTION_INFO_V1(bloom_in);
Datum bloom_in(PG_FUNCTION_ARGS)
{
    PG_RETURN_POINTER(
        pg_sketch_value_in(PG_GETARG_CSTRING(0), "bloom", BLOOM_MAX_BYTES, check_filter));
}

PG_FUNCTION_INFO_V1(bloom_out);
Datum bloom_out(PG_FUNCTION_ARGS)
{
    PG_RETURN_CSTRING(pg_sketch_hex_out(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0))));
}

PG_FUNCTION_INFO_V1(bloom_recv);
Datum bloom_recv(PG_FUNCTION_ARGS)
{
    PG_RETURN_POINTER(pg_sketch_value_recv((StringInfo)PG_GETARG_POINTER(0), "bloom",
                                           BLOOM_MAX_BYTES, check_filter));
}

PG_FUNCTION_INFO_V1(bloom_send);
Datum bloom_send(PG_FUNCTION_ARGS)
{
    PG_RETURN_BYTEA_P(pg_sketch_value_send(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0))));
}

/* bloom_contains(filter, value) and filter @> value: false if the value is
 * certainly not in the filter, true if it may be.
 *
 * The filter is deserialized once per distinct filter argument, not per
 * call: `WHERE bloom_contains((SELECT f FROM ...), x)` passes the same value
 * on every row, and a deserialization reads and checks the whole filter. The
 * last one is kept in the function's fn_extra, and is used again only for
 * a value of exactly the bytes it was read from, which a damaged value (one
 * that alone would be data_corrupted) never has:
 *  - a constant argument: nothing to compare, it is one value for as long
 *    as the expression (a parameter is not: PL/pgSQL evaluates one
 *    expression with its variables' changing values as parameters);
 *  - a value stored out of line: its toast pointer, which names one stored
 *    value (toast values are never changed in place, and the one we read
 *    stays while this query's snapshot does);
 *  - a value compressed in line: its compressed bytes (a few kB at most:
 *    TOAST moves larger ones out of line);
 *  - a plain value: all its bytes. Its header is not enough: it holds the
 *    XXH3-64 of every bit array, but damaged bits no longer match theirs.
 *    The header is kept, and the bit arrays are compared with the filter's
 *    own, which are the value's bytes as they were read: no second copy of
 *    a large value, and a comparison costs a fraction of a deserialization
 *    (for a filter of 12 MB in memory, 1.3 ms a row, a quarter of reading
 *    it again).
 */
#define COMPARE_CHUNK 65536

typedef struct filter_cache {
    pg_sketch_item item; /* of the value argument */
    MemoryContext cxt;   /* the filter and its key; reset for the next one */
    sk_bloom *filter;    /* NULL until the first call */
    bool constant;       /* the argument is a Const */
    bool plain;          /* which key */
    size_t size;         /* plain: the value's size */
    size_t key_len;
    char *key;           /* the toast pointer, the compressed value, or the header */
    char chunk[COMPARE_CHUNK]; /* the filter's bytes, compared a piece at a time */
} filter_cache;

static bool first_arg_is_const(FmgrInfo *flinfo)
{
    Node *expr = flinfo->fn_expr;
    List *args;
    if (expr != NULL && IsA(expr, FuncExpr))
        args = ((FuncExpr *)expr)->args;
    else if (expr != NULL && IsA(expr, OpExpr))
        args = ((OpExpr *)expr)->args;
    else
        return false;
    return args != NIL && IsA(linitial(args), Const);
}

/* Whether a plain value holds exactly the bytes that c->filter was read
 * from (c->plain). */
static bool same_plain_value(filter_cache *c, const struct varlena *value)
{
    const char *data = VARDATA_ANY(value);
    size_t size = VARSIZE_ANY_EXHDR(value);
    if (size != c->size || memcmp(data, c->key, c->key_len) != 0)
        return false;
    for (size_t at = c->key_len; at < size; at += COMPARE_CHUNK) {
        size_t len = Min((size_t)COMPARE_CHUNK, size - at);
        if (sk_bloom_dump_read(c->filter, at, c->chunk, len) != SK_OK ||
            memcmp(c->chunk, data + at, len) != 0)
            return false;
    }
    return true;
}

static const sk_bloom *cached_filter(FunctionCallInfo fcinfo)
{
    filter_cache *c = fcinfo->flinfo->fn_extra;
    if (c == NULL) {
        c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof *c);
        /* AllocSetContextCreate without its macro, whose check that the
         * name is a constant is a GNU statement expression (-Wpedantic). */
        c->cxt = AllocSetContextCreateInternal(fcinfo->flinfo->fn_mcxt,
                                               "bloom_contains filter", ALLOCSET_DEFAULT_SIZES);
        c->constant = first_arg_is_const(fcinfo->flinfo);
        fcinfo->flinfo->fn_extra = c;
    }
    if (c->filter != NULL && c->constant)
        return c->filter;
    struct varlena *raw = (struct varlena *)DatumGetPointer(PG_GETARG_DATUM(0));
    bool by_raw = VARATT_IS_EXTERNAL_ONDISK(raw) || VARATT_IS_COMPRESSED(raw);
    struct varlena *value = NULL;
    if (by_raw) {
        if (c->filter != NULL && !c->plain && VARSIZE_ANY(raw) == c->key_len &&
            memcmp(raw, c->key, c->key_len) == 0)
            return c->filter;
    } else {
        value = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0)); /* indirect or expanded */
        if (c->filter != NULL && c->plain && same_plain_value(c, value))
            return c->filter;
    }
    /* Another filter: forget the last one first, so that an ERROR while
     * this one is read leaves no filter behind under a stale key. */
    MemoryContextReset(c->cxt);
    c->filter = NULL;
    if (value == NULL)
        value = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
    sk_bloom *f = filter_from_value(value, c->cxt);
    if (by_raw) {
        c->key_len = VARSIZE_ANY(raw);
        c->key = MemoryContextAlloc(c->cxt, c->key_len);
        memcpy(c->key, raw, c->key_len);
    } else {
        c->size = VARSIZE_ANY_EXHDR(value);
        c->key_len = Min(c->size, sk_bloom_dump_header_size(f));
        c->key = MemoryContextAlloc(c->cxt, c->key_len);
        memcpy(c->key, VARDATA_ANY(value), c->key_len);
    }
    c->plain = !by_raw;
    c->filter = f;
    return f;
}

PG_FUNCTION_INFO_V1(bloom_contains);
Datum bloom_contains(PG_FUNCTION_ARGS)
{
    const sk_bloom *f = cached_filter(fcinfo);
    filter_cache *c = fcinfo->flinfo->fn_extra;
    const char *data;
    size_t len;
    void *to_free;
    pg_sketch_item_bytes(fcinfo, 1, &c->item, &data, &len, &to_free);
    bool found = sk_bloom_contains(f, data, len) == 1;
    if (to_free != NULL)
        pfree(to_free);
    PG_RETURN_BOOL(found);
}

static const char *layout_name(sk_bloom_layout layout)
{
    switch (layout) {
    case SK_BLOOM_BLOCKED:
        return "blocked";
    case SK_BLOOM_CLASSIC:
        return "classic";
    case SK_BLOOM_SPLIT:
        return "split";
    default:
        return "auto"; /* never a filter's: a choice made at creation */
    }
}

/* The rates as bloom_info prints them: %g would show two rates that differ
 * past its sixth digit as one. */
static pg_attribute_noreturn() void different_shapes(const sk_bloom_info *a,
                                                    const sk_bloom_info *b)
{
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("cannot combine Bloom filters of different shapes"),
             errdetail("A filter for %llu items at rate %s (%s, %llu bits, %u hashes) and one "
                       "for %llu at %s (%s, %llu bits, %u hashes).",
                       (unsigned long long)a->capacity, float8out_internal(a->fp_rate),
                       layout_name(a->layout), (unsigned long long)a->bits, a->hashes,
                       (unsigned long long)b->capacity, float8out_internal(b->fp_rate),
                       layout_name(b->layout), (unsigned long long)b->bits, b->hashes),
             errhint("Filters combine only when made with the same capacity and rate.")));
}

/* Merges src into dst: the same shape, capacity and rate, or an ERROR.
 * sk_bloom_merge needs only the same bits and hashes, which a few
 * capacities and rates share (blocked filters round their bits up to 512),
 * and keeps dst's capacity and rate: the union of two such filters would
 * depend on the order of its arguments. */
static void merge_filters(sk_bloom *dst, const sk_bloom *src)
{
    sk_bloom_info a, b;
    sk_bloom_get_info(dst, &a);
    sk_bloom_get_info(src, &b);
    int status = a.capacity == b.capacity && a.fp_rate == b.fp_rate ? sk_bloom_merge(dst, src)
                                                                    : SK_EINCOMPAT;
    if (status == SK_EINCOMPAT)
        different_shapes(&a, &b);
    pg_sketch_check(status, "cannot merge the filters");
}

/* Whether every one of the first `bits` bits of the array at `array` is set. */
static bool all_set(const unsigned char *array, uint64_t bits)
{
    for (uint64_t i = 0; i < bits / 8; i++)
        if (array[i] != 0xff)
            return false;
    unsigned mask = (1u << (bits % 8)) - 1;
    return mask == 0 || (array[bits / 8] & mask) == mask;
}

/* f as a new value, with its count estimated from its bits (as
 * sk_bloom_merge counts a union) rather than the adds that set a bit: those
 * depend on the order of the adds, and the union of a parallel plan's
 * partial filters cannot know them. So every filter made in SQL (bloom_agg,
 * bloom_union_agg, bloom_union) is the same bytes whatever the plan or the
 * order of the arguments. f keeps its bits and gets that count (its union
 * with itself). A layer whose every bit is set has no estimate, and the
 * library then keeps max(capacity, count), which depends on the count
 * again: such a filter is counted through an empty copy, whose count of 0
 * makes it count its capacity. */
static struct varlena *value_counted_from_bits(sk_bloom *f)
{
    int status = sk_bloom_merge(f, f);
    pg_sketch_check(status, "cannot count the filter");
    struct varlena *value = filter_to_value(f);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    if (info.layers != 1 || info.count < info.capacity ||
        !all_set((const unsigned char *)VARDATA(value) + sk_bloom_dump_header_size(f),
                 info.bits))
        return value;
    sk_bloom *empty = NULL;
    status = sk_bloom_copy(&empty, f);
    if (status == SK_OK && (status = sk_bloom_clear(empty)) == SK_OK)
        status = sk_bloom_merge(empty, f);
    if (status != SK_OK) {
        sk_bloom_free(empty);
        pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot count the filter");
    }
    pfree(value);
    value = filter_to_value(empty);
    sk_bloom_free(empty);
    return value;
}

PG_FUNCTION_INFO_V1(bloom_union);
Datum bloom_union(PG_FUNCTION_ARGS)
{
    sk_bloom *a = filter_from_value(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0)),
                                    CurrentMemoryContext);
    sk_bloom *b = filter_from_value(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(1)),
                                    CurrentMemoryContext);
    merge_filters(a, b);
    struct varlena *value = value_counted_from_bits(a);
    sk_bloom_free(a);
    sk_bloom_free(b);
    PG_RETURN_POINTER(value);
}

/* bloom_info(filter, OUT layout text, OUT bits bigint, OUT hashes integer,
 * OUT capacity bigint, OUT fp_rate float8, OUT count bigint, OUT bytes
 * bigint, OUT expected_fp_rate float8, OUT estimated_items bigint): the
 * shape, the rate asked for, the count the filter holds (of one made in
 * SQL, estimated from its bits: value_counted_from_bits), the value's size,
 * the false-positive rate at that count, and the distinct items estimated
 * from the bits set. */
#define INFO_COLUMNS 9
PG_FUNCTION_INFO_V1(bloom_info);
Datum bloom_info(PG_FUNCTION_ARGS)
{
    TupleDesc desc = pg_sketch_result_row(fcinfo);
    sk_bloom *f = filter_from_value(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0)),
                                    CurrentMemoryContext);
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    uint64_t bytes;
    sk_bloom_serialized_size(f, &bytes);
    Datum values[INFO_COLUMNS] = {
        PointerGetDatum(cstring_to_text(layout_name(info.layout))),
        Int64GetDatum(pg_sketch_int64(info.bits)),
        Int32GetDatum((int32)info.hashes),
        Int64GetDatum(pg_sketch_int64(info.capacity)),
        Float8GetDatum(info.fp_rate),
        Int64GetDatum(pg_sketch_int64(info.count)),
        Int64GetDatum(pg_sketch_int64(bytes)),
        Float8GetDatum(sk_bloom_expected_fp_rate(f, info.count)),
        Int64GetDatum(pg_sketch_int64(sk_bloom_estimate_items(f)))};
    bool nulls[INFO_COLUMNS] = {false};
    sk_bloom_free(f);
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* ---- aggregates ----
 *
 * The transition state of bloom_agg and bloom_union_agg: a filter in the
 * aggregate's memory context, and (bloom_agg) the capacity and rate it was
 * made with, which every row of the group must repeat. */
typedef struct bloom_state {
    sk_bloom *filter;
    int64 capacity;
    float8 rate;
} bloom_state;

/* A new filter for `capacity` items at false-positive rate `rate`, in cxt,
 * of the layout libsketch picks (SK_BLOOM_AUTO), after checking that it
 * fits in a value. */
static bloom_state *new_state(MemoryContext cxt, int64 capacity, float8 rate)
{
    if (capacity < 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("capacity %lld is out of range", (long long)capacity),
                        errhint("A filter holds at least 1 item.")));
    if (!(rate >= SK_BLOOM_MIN_FP_RATE && rate <= SK_BLOOM_MAX_FP_RATE))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("false-positive rate %g is out of range", rate),
                        errhint("A rate lies in %g..%g.", SK_BLOOM_MIN_FP_RATE,
                                SK_BLOOM_MAX_FP_RATE)));
    sk_allocator allocator = pg_sketch_allocator(cxt);
    sk_bloom_options opts = {.capacity = (uint64_t)capacity, .fp_rate = rate,
                             .layout = SK_BLOOM_AUTO, .allocator = &allocator};
    sk_bloom_layer layer;
    int status = sk_bloom_plan(&opts, 0, &layer);
    if (status == SK_OK && layer.bytes + BLOOM_HEADER_ALLOWANCE > BLOOM_MAX_BYTES)
        status = SK_ETOOLARGE;
    if (status == SK_ETOOLARGE || status == SK_EFULL)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a filter for %lld items at rate %g is too large",
                               (long long)capacity, rate),
                        errdetail("A bloom value holds at most %zu bytes.", BLOOM_MAX_BYTES)));
    if (status != SK_OK)
        pg_sketch_error(status, ERRCODE_INVALID_PARAMETER_VALUE, "cannot create the filter");
    bloom_state *state = MemoryContextAlloc(cxt, sizeof *state);
    status = sk_bloom_create(&state->filter, &opts);
    pg_sketch_check(status, "cannot create the filter");
    state->capacity = capacity;
    state->rate = rate;
    return state;
}

/* A state holding f itself (read from a value, or deserialized). */
static bloom_state *state_of(MemoryContext cxt, sk_bloom *f)
{
    sk_bloom_info info;
    sk_bloom_get_info(f, &info);
    bloom_state *state = MemoryContextAlloc(cxt, sizeof *state);
    *state = (bloom_state){f, pg_sketch_int64(info.capacity), info.fp_rate};
    return state;
}

/* Merges src into *state, first making *state a copy of src in cxt if
 * there is none: a copy through the dump form, since src's memory may be
 * shorter-lived than the aggregate (sk_bloom_copy would keep its context). */
static void merge_into(MemoryContext cxt, bloom_state **state, const sk_bloom *src)
{
    if (*state != NULL) {
        merge_filters((*state)->filter, src);
        return;
    }
    struct varlena *dump = filter_to_value(src);
    *state = state_of(cxt, filter_from_value(dump, cxt));
    pfree(dump);
}

/* bloom_agg_trans(state, value, capacity, rate): NULL values are skipped;
 * the filter exists from the group's first row on. */
PG_FUNCTION_INFO_V1(bloom_agg_trans);
Datum bloom_agg_trans(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = pg_sketch_aggregate_context(fcinfo, "bloom_agg_trans");
    bloom_state *state = PG_GETARG_STATE_OR_NULL(0);
    if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("bloom_agg's capacity and rate must not be NULL")));
    int64 capacity = PG_GETARG_INT64(2);
    float8 rate = PG_GETARG_FLOAT8(3);
    if (state == NULL)
        state = new_state(cxt, capacity, rate);
    else if (state->capacity != capacity || state->rate != rate)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("bloom_agg's capacity and rate changed within a group"),
                        errdetail("A filter of %lld items at rate %g, then %lld at %g.",
                                  (long long)state->capacity, state->rate,
                                  (long long)capacity, rate)));
    if (!PG_ARGISNULL(1)) {
        const char *data;
        size_t len;
        void *to_free;
        pg_sketch_item_bytes(fcinfo, 1, pg_sketch_item_of(fcinfo), &data, &len, &to_free);
        int status = sk_bloom_add(state->filter, data, len);
        if (to_free != NULL)
            pfree(to_free);
        if (status < 0)
            pg_sketch_error(status, ERRCODE_INTERNAL_ERROR, "cannot add to the filter");
    }
    PG_RETURN_POINTER(state);
}

/* bloom_union_agg_trans(state, filter): NULL filters are skipped; the
 * others must all have one shape. */
PG_FUNCTION_INFO_V1(bloom_union_agg_trans);
Datum bloom_union_agg_trans(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = pg_sketch_aggregate_context(fcinfo, "bloom_union_agg_trans");
    bloom_state *state = PG_GETARG_STATE_OR_NULL(0);
    if (!PG_ARGISNULL(1)) {
        struct varlena *value = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(1));
        if (state == NULL) {
            state = state_of(cxt, filter_from_value(value, cxt));
        } else {
            sk_bloom *f = filter_from_value(value, CurrentMemoryContext);
            merge_filters(state->filter, f);
            sk_bloom_free(f);
        }
    }
    PG_RETURN_STATE_OR_NULL(state);
}

/* The second state may live in a shorter context (a deserialized one
 * does): merged into the first, never kept. */
PG_FUNCTION_INFO_V1(bloom_agg_combine);
Datum bloom_agg_combine(PG_FUNCTION_ARGS)
{
    MemoryContext cxt = pg_sketch_aggregate_context(fcinfo, "bloom_agg_combine");
    bloom_state *state = PG_GETARG_STATE_OR_NULL(0);
    if (!PG_ARGISNULL(1))
        merge_into(cxt, &state, ((const bloom_state *)PG_GETARG_POINTER(1))->filter);
    PG_RETURN_STATE_OR_NULL(state);
}

PG_FUNCTION_INFO_V1(bloom_agg_serialize);
Datum bloom_agg_serialize(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "bloom_agg_serialize");
    PG_RETURN_BYTEA_P(
        (bytea *)filter_to_value(((const bloom_state *)PG_GETARG_POINTER(0))->filter));
}

PG_FUNCTION_INFO_V1(bloom_agg_deserialize);
Datum bloom_agg_deserialize(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "bloom_agg_deserialize");
    sk_bloom *f = filter_from_value(PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0)),
                                    CurrentMemoryContext);
    PG_RETURN_POINTER(state_of(CurrentMemoryContext, f));
}

/* The state as a bloom value, counted from its bits. FINALFUNC_MODIFY is
 * READ_ONLY (the default, which a window function needs) although the
 * state's count is rewritten: nothing reads it but this function, which
 * rewrites it from the bits on every call, so that the rows added after a
 * call (a window's frame) and a second call (two aggregates sharing the
 * state) see what they would have without it. */
PG_FUNCTION_INFO_V1(bloom_agg_final);
Datum bloom_agg_final(PG_FUNCTION_ARGS)
{
    (void)pg_sketch_aggregate_context(fcinfo, "bloom_agg_final");
    PG_RETURN_POINTER(value_counted_from_bits(((bloom_state *)PG_GETARG_POINTER(0))->filter));
}
