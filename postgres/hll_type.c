/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hll_type.c: the type hll and its functions on single values: text and
 * binary input and output, count and estimate with bounds, union,
 * precision, fold, comparison, and the Redis HyperLogLog string both ways.
 * The aggregates are in hll_agg.c.
 *
 * Text form: \x followed by the sketch's native bytes in hexadecimal, two
 * digits a byte (the output writes lower case, the input takes either), as
 * bytea prints in its hex format: `sketch hll` files and hll values are the
 * same bytes, so `xxd -p` of a file, prefixed with \x, is a literal. The
 * binary form (send and receive) is the bytes themselves. Both inputs give
 * the bytes to sk_hll_deserialize, which checks everything (magic, version,
 * precision, length, checksum, every register), and refuse what it
 * refuses: a value of type hll is always a sketch.
 */
#include "pg_sketch.h"

#include "funcapi.h"

/* Bounds at 2 standard errors, index 1 of sk_hll_estimate's and
 * sk_hll_part's lower and upper (1, 2 and 3 sd). */
#define BOUNDS_2SD 1

/* Checks bytes[0..len) with the library: a sketch in the native format, or
 * an ERROR saying what the library found wrong: invalid_text_representation
 * for a literal (not NULL), invalid_binary_representation otherwise. */
static void check_native(const char *bytes, size_t len, const char *literal)
{
    sk_allocator allocator = pg_sketch_allocator(CurrentMemoryContext);
    sk_hll *h;
    sk_hll_format format;
    int status = sk_hll_deserialize(&h, bytes, len, &format, &allocator);
    if (status == SK_ENOMEM)
        pg_sketch_error(status, 0, "reading a sketch");
    if (status == SK_OK) {
        sk_hll_free(h);
        if (format == SK_HLL_NATIVE)
            return;
    }
    const char *detail = status == SK_OK
        ? "These are the bytes of a Redis HyperLogLog string, not of a sketch."
        : sk_strerror(status);
    const char *hint = status == SK_OK ? "Read it with hll_from_redis(bytea)." : NULL;
    if (literal != NULL)
        pg_sketch_bad_literal("hll", literal, detail, hint);
    ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                    errmsg("invalid binary hll value"), errdetail("%s", detail),
                    hint != NULL ? errhint("%s", hint) : 0));
}

/* h as a new hll value; h is freed. */
static struct varlena *value_of(sk_hll *h)
{
    struct varlena *value = pg_hll_to_value(h);
    sk_hll_free(h);
    return value;
}

PG_FUNCTION_INFO_V1(hll_in);
Datum hll_in(PG_FUNCTION_ARGS)
{
    PG_RETURN_POINTER(pg_sketch_value_in(PG_GETARG_CSTRING(0), "hll",
                                         SK_HLL_MAX_SERIALIZED_SIZE, check_native));
}

PG_FUNCTION_INFO_V1(hll_out);
Datum hll_out(PG_FUNCTION_ARGS)
{
    PG_RETURN_CSTRING(pg_sketch_hex_out(PG_GETARG_HLL_P(0)));
}

PG_FUNCTION_INFO_V1(hll_recv);
Datum hll_recv(PG_FUNCTION_ARGS)
{
    PG_RETURN_POINTER(pg_sketch_value_recv((StringInfo)PG_GETARG_POINTER(0), "hll",
                                           SK_HLL_MAX_SERIALIZED_SIZE, check_native));
}

PG_FUNCTION_INFO_V1(hll_send);
Datum hll_send(PG_FUNCTION_ARGS)
{
    PG_RETURN_BYTEA_P(pg_sketch_value_send(PG_GETARG_HLL_P(0)));
}

PG_FUNCTION_INFO_V1(hll_count);
Datum hll_count(PG_FUNCTION_ARGS)
{
    sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    int64 count = pg_sketch_int64(sk_hll_count(h));
    sk_hll_free(h);
    PG_RETURN_INT64(count);
}

/* hll_estimate(hll, OUT count bigint, OUT standard_error float8,
 * OUT lower float8, OUT upper float8): the standard error relative to the
 * count (as `sketch count --json` reports it), the bounds at 2 sd. */
#define ESTIMATE_COLUMNS 4
PG_FUNCTION_INFO_V1(hll_estimate);
Datum hll_estimate(PG_FUNCTION_ARGS)
{
    TupleDesc desc = pg_sketch_result_row(fcinfo);
    sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    sk_hll_free(h);
    Datum values[ESTIMATE_COLUMNS] = {
        Int64GetDatum(pg_sketch_int64(e.count)), Float8GetDatum(e.relative_error),
        Float8GetDatum(e.lower[BOUNDS_2SD]), Float8GetDatum(e.upper[BOUNDS_2SD])};
    bool nulls[ESTIMATE_COLUMNS] = {false};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* The union of both, at the smaller precision when they differ (the other
 * folded to it exactly, as sk_hll_merge does). Also the operator ||. */
PG_FUNCTION_INFO_V1(hll_union);
Datum hll_union(PG_FUNCTION_ARGS)
{
    sk_hll *a = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    sk_hll *b = pg_hll_from_value(PG_GETARG_HLL_P(1), CurrentMemoryContext);
    pg_sketch_check(sk_hll_merge(a, b), "cannot merge the sketches");
    sk_hll_free(b);
    PG_RETURN_POINTER(value_of(a));
}

PG_FUNCTION_INFO_V1(hll_precision);
Datum hll_precision(PG_FUNCTION_ARGS)
{
    sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    unsigned p = sk_hll_precision(h);
    sk_hll_free(h);
    PG_RETURN_INT32((int32)p);
}

/* The sketch at a lower precision: exactly the sketch the same items give
 * at that precision. */
PG_FUNCTION_INFO_V1(hll_fold);
Datum hll_fold(PG_FUNCTION_ARGS)
{
    unsigned p = pg_sketch_precision_arg(PG_GETARG_INT32(1));
    sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    if (p > sk_hll_precision(h))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("cannot fold a sketch of precision %u to precision %u",
                               sk_hll_precision(h), p),
                        errdetail("Folding lowers the precision; the registers a higher "
                                  "one needs were never kept.")));
    pg_sketch_check(sk_hll_fold(h, p), "cannot fold the sketch");
    PG_RETURN_POINTER(value_of(h));
}

/* hll_compare(a, b): sk_hll_compare's joint estimate (docs/hll-compare.md)
 * as OUT parameters: the precision compared at, then an estimate and its
 * standard error (in the estimate's own unit) for each of |A u B|, |A n B|,
 * |A \ B|, |B \ A|, the Jaccard index and |A n B| / |A|. */
#define COMPARE_PARTS 6
#define COMPARE_COLUMNS (1 + 2 * COMPARE_PARTS)
PG_FUNCTION_INFO_V1(hll_compare);
Datum hll_compare(PG_FUNCTION_ARGS)
{
    TupleDesc desc = pg_sketch_result_row(fcinfo);
    sk_hll *a = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    sk_hll *b = pg_hll_from_value(PG_GETARG_HLL_P(1), CurrentMemoryContext);
    sk_hll_comparison c;
    pg_sketch_check(sk_hll_compare(a, b, &c), "cannot compare the sketches");
    sk_hll_free(a);
    sk_hll_free(b);
    const sk_hll_part *parts[COMPARE_PARTS] = {&c.either, &c.both, &c.a_only,
                                               &c.b_only, &c.jaccard, &c.retained};
    Datum values[COMPARE_COLUMNS];
    bool nulls[COMPARE_COLUMNS] = {false};
    values[0] = Int32GetDatum((int32)c.precision);
    for (int i = 0; i < COMPARE_PARTS; i++) {
        values[1 + 2 * i] = Float8GetDatum(parts[i]->estimate);
        values[2 + 2 * i] = Float8GetDatum(parts[i]->standard_error);
    }
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* The string Redis keeps under a HyperLogLog key, to SET there: Redis's
 * precision is 14, so a sketch above it is folded to 14 (what PFADD of the
 * same items gives), and one below it has no Redis form. */
PG_FUNCTION_INFO_V1(hll_to_redis);
Datum hll_to_redis(PG_FUNCTION_ARGS)
{
    sk_hll *h = pg_hll_from_value(PG_GETARG_HLL_P(0), CurrentMemoryContext);
    uint64_t size;
    size_t len;
    if (sk_hll_serialized_size(h, SK_HLL_REDIS, &size) != SK_OK)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("a sketch of precision %u has no Redis form",
                               sk_hll_precision(h)),
                        errdetail("Redis's HyperLogLog has precision %d; a sketch can be "
                                  "folded down to it, never raised.",
                                  SK_HLL_REDIS_PRECISION)));
    bytea *out = palloc(VARHDRSZ + size);
    pg_sketch_check(sk_hll_serialize(h, SK_HLL_REDIS, VARDATA(out), size, &len),
                    "cannot write the Redis string");
    SET_VARSIZE(out, VARHDRSZ + len);
    sk_hll_free(h);
    PG_RETURN_BYTEA_P(out);
}

/* A Redis HyperLogLog string (what GET of a PF key returns) as a sketch of
 * precision 14, checked by the library as Redis's own PFCOUNT would. */
PG_FUNCTION_INFO_V1(hll_from_redis);
Datum hll_from_redis(PG_FUNCTION_ARGS)
{
    bytea *in = PG_GETARG_BYTEA_PP(0);
    sk_allocator allocator = pg_sketch_allocator(CurrentMemoryContext);
    sk_hll *h;
    sk_hll_format format;
    int status = sk_hll_deserialize(&h, VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), &format,
                                    &allocator);
    if (status == SK_ENOMEM)
        pg_sketch_error(status, 0, "reading a Redis string");
    if (status != SK_OK || format != SK_HLL_REDIS) {
        if (status == SK_OK)
            sk_hll_free(h);
        ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                        errmsg("not a Redis HyperLogLog string"),
                        errdetail("%s", status == SK_OK
                                            ? "These are the bytes of a sketch in libsketch's "
                                              "own format; cast their \\x text to hll instead."
                                            : sk_strerror(status))));
    }
    PG_RETURN_POINTER(value_of(h));
}
